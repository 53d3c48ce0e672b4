"""An impossible plan suggests values that were tried and work, that a person would pick, per field."""
import dataclasses
import re

import pytest

from designer.core.io import load_document
from designer.core.design_check import check_document
from designer.core.model import check_job
from designer.core.model.job import Parallelism, Workload
from tests.conftest import EXAMPLES

GPT3_1024 = EXAMPLES / "a100-1024gpu-rail-infiniband.yaml"  # gpt3-175b, TP 8 x PP 8 (interleaved) on 1024 GPUs


@pytest.fixture(scope="module")
def fabric_1024():
    return load_document(GPT3_1024)


def errors(doc):
    return [p for p in check_document(doc) if p.severity == "error"]


def numbers_in(text):
    """The values offered, not the counts in parentheses ("(8 of the 1032 GPUs stay idle)")."""
    return [int(n) for n in re.findall(r"\b\d+\b", re.sub(r"\(.*?\)", "", text))]


def test_one_server_more_suggests_keeping_the_job_on_1024_gpus(fabric_1024):
    doc = fabric_1024.copy()
    doc.add(dataclasses.replace(doc.nodes[0], id="extra", rack=None, slot=None))  # the user adds a server
    assert doc.num_gpus() == 1032
    # the new server is not cabled yet: that is said too, apart from the plan's problem
    problem = next(p for p in errors(doc) if "does not divide" in p.message)
    assert "does not divide the 1032 GPUs" in problem.message
    assert any("extra: GPU 0's NIC nic0 is not cabled" in p.message for p in errors(doc))
    assert problem.fix.startswith("TP × PP × CP must divide 1032: set num_gpus to 1024"), problem.fix
    assert "43" not in problem.fix and "86" not in problem.fix
    # the suggestion works: applied, the design is valid again
    doc.set_job(parallelism=dataclasses.replace(doc.spec.parallelism, num_gpus=1024))
    assert errors(doc) == []


def test_1032_gpus_never_suggests_a_prime(fabric_1024):
    """The 1,032-GPU case: every number offered is a size people use, and each one was tried."""
    from designer.core.model.suggestions import is_plausible

    for tp in (3, 4, 5, 6, 8):
        par = dataclasses.replace(fabric_1024.spec.parallelism, tensor_model_parallel_size=tp)
        _, problems = check_job(fabric_1024.spec.workload, par, 1032)
        for p in problems:
            if p.fix and ":" in p.fix:
                offered = numbers_in(p.fix.split(":", 1)[1])
                assert all(is_plausible(n) for n in offered), p.fix
                assert 43 not in offered and 86 not in offered, p.fix


def test_tp_that_does_not_divide_names_the_field_and_nearest_valid_values_first(fabric_1024):
    par = dataclasses.replace(fabric_1024.spec.parallelism, tensor_model_parallel_size=3)
    _, problems = check_job(fabric_1024.spec.workload, par, 1024)
    p = next(p for p in problems if "does not divide the 1024 GPUs" in p.message)
    assert p.fix == "TP × PP × CP must divide 1024: TP 4 or 2"
    for tp in (4, 2):  # each suggested TP is a valid plan (with sequence parallelism, 96 heads, PP 8)
        plan, left = check_job(fabric_1024.spec.workload, dataclasses.replace(par, tensor_model_parallel_size=tp), 1024)
        assert plan is not None and left == []


def test_tp_not_dividing_the_heads_suggests_values_that_also_divide_the_gpus():
    workload = Workload(preset="llama3-8b", num_attention_heads=12, num_query_groups=12)
    _, problems = check_job(workload, Parallelism(tensor_model_parallel_size=8), 16)
    p = next(p for p in problems if "attention heads" in p.message)
    assert p.fix == "TP must divide the 12 heads: TP 4 or 2"  # 6 and 12 divide the heads, not the 16 GPUs


def test_batch_suggestion_respects_the_interleaved_schedule(fabric_1024):
    workload = dataclasses.replace(fabric_1024.spec.workload, global_batch_size=1000)
    _, problems = check_job(workload, fabric_1024.spec.parallelism, 1024)
    (p,) = problems
    # 1008 divides by DP 16 but gives 63 micro-batches, not a multiple of PP 8: not offered
    assert p.fix.endswith("global_batch_size 1024 or 896"), p.fix


def test_no_suggestion_without_a_value_that_works_keeps_the_rule():
    _, problems = check_job(Workload(preset="llama3-8b"), Parallelism(tensor_model_parallel_size=3), 7)
    p = next(p for p in problems if "does not divide the 7 GPUs" in p.message)
    assert p.fix and "must divide 7" in p.fix


def test_ranking_prefers_plausible_and_near():
    from designer.core.model.suggestions import is_plausible, ranked

    assert ranked(3, [1, 2, 4, 8, 43]) == [4, 2, 8, 1]
    assert ranked(64, [43, 86, 24, 129]) == [24]
    assert not is_plausible(43) and is_plausible(96) and is_plausible(1024)


def test_a_batch_that_no_longer_divides_after_adding_a_server_suggests_num_gpus():
    """64 GPUs, DP 32, batch 512: one more 8-GPU server makes DP 36, and 512 does not divide by 36."""
    workload = Workload(preset="llama3-8b", global_batch_size=512, micro_batch_size=1)
    _, problems = check_job(workload, Parallelism(tensor_model_parallel_size=2), 72)
    (p,) = problems
    assert "does not divide by micro_batch_size x DP = 1 x 36" in p.message
    assert ": set num_gpus to 64 (8 of the 72 GPUs stay idle); or global_batch_size" in p.fix, p.fix
    plan, left = check_job(workload, Parallelism(tensor_model_parallel_size=2, num_gpus=64), 72)
    assert plan is not None and left == []
