"""Each consistency problem is found, names the element and says how to fix it."""
import dataclasses

import pytest

from designer.core.design_check import check_document
from designer.core.model import Link, Node, Switch
from designer.core.model.job import Parallelism, Workload


def messages(doc):
    return [p for p in check_document(doc)]


def only(doc, words):
    found = [p for p in check_document(doc) if words in p.message]
    assert found, [p.format() for p in check_document(doc)]
    assert all(p.fix for p in found)
    return found[0]


def test_small_design_is_clean(small_doc):
    assert check_document(small_doc) == []


def test_dangling_endpoint(small_doc):
    small_doc.update("l3", b="leaf9:p3")
    p = only(small_doc, "does not exist (dangling)")
    assert p.element == "l3" and p.path == "spec.links[3].b" and "leaf0" in p.fix


def test_more_links_than_ports(small_doc):
    small_doc.update("leaf0", radix=3)
    p = only(small_doc, "only 3 ports")
    assert p.element == "leaf0" and "4 cables" in p.message


def test_port_used_twice(small_doc):
    small_doc.update("l3", b="leaf0:p2")
    p = only(small_doc, "used by links l2 and l3")
    assert p.element == "l3"


def test_port_beyond_radix(small_doc):
    small_doc.update("l3", b="leaf0:p8")
    assert only(small_doc, "past the last port").element == "l3"


def test_unconnected_nic(small_doc):
    small_doc.remove("l3")
    p = only(small_doc, "not connected")
    assert p.element == "n1" and "nic1" in p.message and p.severity == "warning"


def test_anonymous_port_counts_as_connected(small_doc):
    small_doc.update("l3", a="n1", b="leaf0")
    assert check_document(small_doc) == []


def test_node_in_no_rack(small_doc):
    small_doc.update("n1", rack=None)
    p = only(small_doc, "in no rack")
    assert p.element == "n1"


def test_unknown_rack(small_doc):
    small_doc.update("n1", rack="r9")
    assert "did you mean r0" in only(small_doc, "names rack").fix


def test_slot_overlap(small_doc):
    small_doc.update("n1", slot=2)
    assert only(small_doc, "overlaps").element == "n1"


def test_kind_mismatch_infiniband_nic_to_ethernet_switch(small_doc):
    small_doc.update("leaf0", fabric="ethernet")
    p = only(small_doc, "infiniband link l0 is plugged into ethernet switch leaf0")
    assert p.element == "l0" and p.path == "spec.links[0].kind"


def test_kind_mismatch_at_the_nic(small_doc):
    small_doc.update("n0", nic_kind="ethernet")
    assert only(small_doc, "plugged into an ethernet NIC of n0").element == "l0"


def test_duplicate_ids(small_doc):
    small_doc.add(Node(id="n0", accelerator="H100", nic_count=0, rack="r0", slot=8))
    p = only(small_doc, "duplicate id 'n0'")
    assert p.path == "spec.nodes[2].id"


def test_duplicate_id_across_kinds(small_doc):
    small_doc.add(Link(id="leaf0", a="n0", b="n1", kind="nvlink", bandwidth_gbps=3600))
    assert only(small_doc, "duplicate id 'leaf0'")


def test_unknown_accelerator(small_doc):
    small_doc.update("n0", accelerator="H1000")
    assert "H100" in only(small_doc, "unknown accelerator").fix


def plan(doc, **changes):
    par = dataclasses.replace(doc.spec.parallelism, **changes)
    doc.set_job(parallelism=par)


def test_plan_that_does_not_divide_gpus(small_doc):
    plan(small_doc, tensor_model_parallel_size=3)
    problems = check_document(small_doc)
    p = next(p for p in problems if "does not divide the 16 GPUs" in p.message)
    assert p.path == "spec.parallelism.tensor_model_parallel_size" and "TP 4 or 2" in p.fix


def test_tp_not_dividing_heads(small_doc):
    small_doc.set_job(workload=dataclasses.replace(small_doc.spec.workload, num_attention_heads=12, num_query_groups=12))
    plan(small_doc, tensor_model_parallel_size=8)
    p = only(small_doc, "does not divide the 12 attention heads")
    assert "TP 4 or 2" in p.fix  # 6 and 12 divide the heads but not the 16 GPUs


def test_pp_not_dividing_layers(small_doc):
    small_doc.set_job(workload=dataclasses.replace(small_doc.spec.workload, num_layers=30))
    plan(small_doc, tensor_model_parallel_size=4, pipeline_model_parallel_size=4)
    p = only(small_doc, "does not divide the 30 layers")
    assert "PP 2 or 1" in p.fix and p.path.endswith("pipeline_model_parallel_size")


def test_batch_not_divided_by_microbatch_and_dp(small_doc):
    small_doc.set_job(workload=dataclasses.replace(small_doc.spec.workload, global_batch_size=5))
    p = only(small_doc, "does not divide by micro_batch_size x DP")
    assert p.path == "spec.workload.global_batch_size" and "global_batch_size 6 or 4" in p.fix


def test_dp_given_and_wrong(small_doc):
    plan(small_doc, data_parallel_size=4)
    assert "set it to 2" in only(small_doc, "4 given").fix


def test_ep_without_experts(small_doc):
    plan(small_doc, expert_model_parallel_size=2)
    assert only(small_doc, "dense model").path.endswith("expert_model_parallel_size")


def test_interleaved_needs_virtual_stages(small_doc):
    plan(small_doc, tensor_model_parallel_size=2, pipeline_model_parallel_size=4, pipeline_schedule="interleaved")
    assert only(small_doc, "2 or more model chunks")


def test_unknown_preset(small_doc):
    small_doc.set_job(workload=Workload(preset="llama3-7b"))
    assert "llama3-8b" in only(small_doc, "unknown model preset").fix


def test_num_gpus_above_cluster(small_doc):
    plan(small_doc, num_gpus=64)
    assert only(small_doc, "the cluster has 16")


def test_a_design_whose_cables_were_all_deleted_is_checked_without_a_crash():
    from designer.core.io import load_document
    from tests.conftest import EXAMPLES

    doc = load_document(EXAMPLES / "shared-roce-256gpu-2jobs.yaml")
    for link in list(doc.links):
        doc.remove(link.id)
    problems = check_document(doc)  # a job across servers with no cable between them: named, no traceback
    assert problems and all(p.message for p in problems)
