"""The cost engine: formulas against hand-computed values, and properties a user relies on."""
import dataclasses

import pytest

from designer.core.engine import flops as F
from designer.core.engine.collectives import CollectiveModel
from designer.core.engine.constants import engine_constants
from designer.core.engine.evaluate import Engine
from designer.core.engine.fabric import build_fabric
from designer.core.engine.schedule import StageTimes, ideal_bubble_s, simulate
from designer.core.generate import generate_fat_tree
from designer.core.io.overrides import apply_overrides
from designer.core.model import Document, Link, Node, Parallelism, Rack, Switch, Workload, default_catalog
from designer.core.model.document import ClusterSpec

import numpy as np


def test_gpt3_175b_flops_per_token_by_hand():
    w = default_catalog().presets()["gpt3-175b"].values
    m = F.ModelShape.of(Workload(**{**w}))
    L, h, s, V = 96, 12288, 2048, 51200
    # 6 x (2-FLOP MACs): QKV h x 3h, output h x h, causal core q x s, MLP 2 x h x 4h, logits h x V
    attention = h * 3 * h + h * h + h * s
    mlp = 2 * h * 4 * h
    by_hand = 6 * L * (attention + mlp) + 6 * h * V
    assert F.model_flops_per_token(m) == pytest.approx(by_hand, rel=1e-12)
    assert by_hand / 1e12 == pytest.approx(1.0619, abs=1e-3)  # TFLOP per token
    # the classic 72 B s L h^2 (1 + s/(6h) + V/(12 L h)) counts non-causal attention: 2 q s more per layer
    classic = 72 * L * h * h * (1 + s / (6 * h) + V / (12 * L * h))
    assert classic - by_hand == pytest.approx(6 * L * h * s, rel=1e-9)


def two_node_doc(gbps=100.0):
    nodes = [Node(id=f"n{i}", accelerator="A100", accelerator_count=1, nic_count=1, nic_gbps=gbps, rack="r",
                  slot=4 * i) for i in range(2)]
    switch = Switch(id="sw", fabric="infiniband", tier="leaf", radix=8, port_gbps=gbps, rack="r", slot=20)
    links = [Link(id=f"l{i}", a=f"n{i}:nic0", b=f"sw:p{i}", kind="infiniband", bandwidth_gbps=gbps) for i in range(2)]
    return Document(ClusterSpec(racks=[Rack(id="r")], nodes=nodes, switches=[switch], links=links))


def test_ring_all_reduce_on_two_nodes_by_hand():
    doc = two_node_doc(100.0)
    k = engine_constants({})
    fabric = build_fabric(doc, default_catalog(), k)
    model = CollectiveModel(fabric, np.array([[0, 1]]), k, nvls=False)
    size = 1 << 30
    cost = model.cost("all_reduce", size, "ring")
    link_Bps = 100e9 / 8 * k.infiniband_nic_efficiency
    bus_bytes = 2 * (2 - 1) / 2 * size  # each rank sends 2(n-1)/n of the buffer
    assert cost.bandwidth_s == pytest.approx(bus_bytes / link_Bps, rel=1e-9)
    # latency: NCCL ring Simple, 2(n-1) = 2 steps, both across the network (+ the switch hop)
    assert 5e-6 < cost.latency_s < 200e-6
    assert cost.time_s == pytest.approx(cost.latency_s + cost.bandwidth_s)
    # busbw of the ring equals the NIC's achievable rate for large messages
    busbw = size / cost.time_s * 2 * (2 - 1) / 2
    assert busbw == pytest.approx(link_Bps, rel=0.01)


@pytest.mark.parametrize("schedule, v", [("1f1b", 1), ("interleaved", 2), ("interleaved", 4)])
def test_bubble_fraction_read_off_the_timeline(schedule, v):
    p, m = 4, 16
    f, b = 1.0, 2.0
    times = [StageTimes([f / v] * v, [b / v] * v, [0.0] * v) for _ in range(p)]
    r = simulate(schedule, p, m, v, times, 0.0)
    ideal = m * (f + b)
    bubble = max(r.stage_end) - ideal
    assert bubble / ideal == pytest.approx((p - 1) / (v * m), rel=1e-9)
    assert bubble == pytest.approx(ideal_bubble_s(schedule, p, m, v, f, b, 0.0), rel=1e-9)


def test_zero_bubble_schedule_has_a_smaller_bubble_than_1f1b():
    p, m = 4, 16
    times = [StageTimes([1.0], [2.0], [0.9]) for _ in range(p)]
    one = max(simulate("1f1b", p, m, 1, times, 0.0).stage_end)
    zb = max(simulate("zb-h1", p, m, 1, times, 0.0).stage_end)
    assert zb < one and zb >= m * 3.0


def job(doc, *settings):
    apply_overrides(doc, list(settings))
    return doc


GPT = ["workload.preset=gpt3-175b", "workload.global_batch_size=512", "parallelism.tensor_model_parallel_size=8",
       "parallelism.pipeline_model_parallel_size=8", "parallelism.use_distributed_optimizer=true",
       "parallelism.sequence_parallel=true", "parallelism.recompute_granularity=selective"]


@pytest.fixture(scope="module")
def cluster():
    return generate_fat_tree(nodes=32, gpu="H100", switch_radix=16)  # 256 GPUs, 2 tiers


def fresh(doc):
    return Engine().evaluate(doc)


def test_engine_matches_bubble_closed_form(cluster):
    doc = job(cluster.copy(), *GPT)
    r = fresh(doc)
    stage = r.stages[0]
    assert r.breakdown_s["bubble"] > 0
    # (p-1) (F + B) per micro-batch of a stage, the first-order bubble of 1F1B
    expected = 7 * (stage["forward_s"] + stage["backward_s"])
    assert r.breakdown_s["bubble"] == pytest.approx(expected, rel=0.15)


def test_more_bandwidth_is_never_slower(cluster):
    base = fresh(job(cluster.copy(), *GPT, "parallelism.pipeline_model_parallel_size=1",
                     "parallelism.tensor_model_parallel_size=8", "workload.preset=llama3-8b",
                     "parallelism.use_distributed_optimizer=false"))
    faster_doc = job(cluster.copy(), *GPT, "parallelism.pipeline_model_parallel_size=1",
                     "parallelism.tensor_model_parallel_size=8", "workload.preset=llama3-8b",
                     "parallelism.use_distributed_optimizer=false")
    for link in faster_doc.links:
        link.bandwidth_gbps *= 2
    for s in faster_doc.switches:
        s.port_gbps *= 2
    for n in faster_doc.nodes:
        n.nic_gbps *= 2
    faster = fresh(faster_doc)
    assert faster.step_time_s <= base.step_time_s
    assert faster.breakdown_s["dp_comm"] < base.breakdown_s["dp_comm"]


MOE_ACROSS_LEAVES = ["workload.preset=mixtral-8x7b", "workload.global_batch_size=256",
                     "parallelism.tensor_model_parallel_size=1", "parallelism.expert_model_parallel_size=8",
                     "parallelism.rank_order=tp-cp-dp-ep-pp",  # EP groups span servers under different leaves
                     "parallelism.use_distributed_optimizer=true", "parallelism.recompute_granularity=full"]


def test_more_oversubscription_is_never_faster():
    times, ep = [], []
    for ratio in (1.0, 2.0, 4.0):
        doc = generate_fat_tree(nodes=32, gpu="H100", switch_radix=16, oversubscription=ratio)
        r = fresh(job(doc, *MOE_ACROSS_LEAVES))
        times.append(r.step_time_s)
        ep.append(r.breakdown_s["ep_comm"])
    assert times[0] <= times[1] <= times[2]
    assert ep[2] > ep[0] and times[2] > times[0]


def test_ring_collectives_barely_feel_oversubscription():
    """NCCL rings cross a leaf boundary once per leaf: a DP ring is almost immune to 2:1."""
    times = []
    for ratio in (1.0, 2.0):
        doc = generate_fat_tree(nodes=32, gpu="H100", switch_radix=16, oversubscription=ratio)
        times.append(fresh(job(doc, "workload.preset=llama3-8b", "workload.global_batch_size=256",
                               "parallelism.use_distributed_optimizer=true",
                               "parallelism.recompute_granularity=full")).step_time_s)
    assert times[1] == pytest.approx(times[0], rel=0.02)


def test_more_microbatches_shrink_the_bubble(cluster):
    fractions = []
    for gbs in (64, 128, 512):
        r = fresh(job(cluster.copy(), *GPT, f"workload.global_batch_size={gbs}"))
        fractions.append(r.breakdown_s["bubble"] / r.step_time_s)
    assert fractions[0] > fractions[1] > fractions[2]


def test_a_straggler_never_speeds_up_the_step_and_others_wait(cluster):
    base_doc = job(cluster.copy(), *GPT)
    base = fresh(base_doc)
    slow_doc = job(cluster.copy(), *GPT, "nodes[node5].slowdown=1.3")
    slow = fresh(slow_doc)
    assert slow.step_time_s > base.step_time_s
    assert slow.breakdown_s["imbalance_wait"] > base.breakdown_s["imbalance_wait"]
    waits = [e for e in slow.events if e.kind == "imbalance_wait"]
    assert waits  # the others' waits are in the timeline


def test_a_half_speed_nic_shows_up(cluster):
    doc = job(cluster.copy(), *GPT, "parallelism.pipeline_model_parallel_size=1", "workload.preset=llama3-8b",
              "parallelism.use_distributed_optimizer=false")
    base = fresh(doc)
    nic = next(l for l in doc.links if l.a.startswith("node3:"))
    doc.update(nic.id, slowdown=2.0)
    slow = fresh(doc)
    assert slow.step_time_s > base.step_time_s
    assert any("node3" in b["resource"] for b in slow.bottlenecks)


def test_incremental_reevaluation_reuses_and_agrees(cluster):
    doc = job(cluster.copy(), *GPT)
    engine = Engine()
    engine.evaluate(doc)
    link = doc.links[0]
    doc.update(link.id, bandwidth_gbps=link.bandwidth_gbps / 4)
    again = engine.evaluate(doc)
    assert engine.reused and "re-rated" in engine.reused[0]
    assert again.step_time_s == pytest.approx(fresh(doc).step_time_s, rel=1e-12)
    doc.set_job(parallelism=dataclasses.replace(doc.spec.parallelism, tensor_model_parallel_size=4))
    third = engine.evaluate(doc)
    assert third.step_time_s == pytest.approx(fresh(doc).step_time_s, rel=1e-12)


def test_a_fabric_an_edit_reshaped_is_let_go_before_it_is_built_again(cluster):
    """The window's worker checks a design before evaluating it: after a cable is deleted the engine lets
    go of the fabric it will build again, so the check's temporaries are not held beside it; a cable's
    new speed keeps it (re-rated in place). Either way the next result is a fresh engine's."""
    doc = job(cluster.copy(), *GPT)
    engine = Engine()
    engine.evaluate(doc)
    link = doc.links[0]
    doc.update(link.id, bandwidth_gbps=link.bandwidth_gbps / 2)
    engine.let_go_of_reshaped(doc)
    again = engine.evaluate(doc)
    assert engine.reused and "re-rated" in engine.reused[0]
    assert again.step_time_s == pytest.approx(fresh(doc).step_time_s, rel=1e-12)
    switches = {s.id for s in doc.switches}
    spine = next(l for l in doc.links if {l.a.split(":")[0], l.b.split(":")[0]} <= switches)
    doc.remove(spine.id)
    engine.let_go_of_reshaped(doc)
    after = engine.evaluate(doc)
    assert not any("re-rated" in r for r in engine.reused)
    assert after.step_time_s == pytest.approx(fresh(doc).step_time_s, rel=1e-12)


def test_ethernet_and_infiniband_differ_where_they_do(cluster):
    results = {}
    for fabric in ("infiniband", "ethernet"):
        doc = generate_fat_tree(nodes=32, gpu="H100", switch_radix=16, fabric=fabric, oversubscription=2)
        results[fabric] = fresh(job(doc, *MOE_ACROSS_LEAVES))
    # RoCE: lower NIC efficiency and ECMP hash collisions on the up-links; IB: adaptive routing
    assert results["ethernet"].breakdown_s["ep_comm"] > results["infiniband"].breakdown_s["ep_comm"]
    assert results["ethernet"].step_time_s > results["infiniband"].step_time_s


def test_pcie_server_without_gpudirect_is_slower():
    def doc_for(scale_up, gdr):
        d = generate_fat_tree(nodes=4, gpu="H100", switch_radix=16)
        for n in d.nodes:
            n.scale_up = scale_up
            n.scale_up_gbps = 512.0 if scale_up == "pcie" else None
            n.gpudirect_rdma = gdr
        return job(d, "workload.preset=llama3-8b", "workload.global_batch_size=64",
                   "parallelism.tensor_model_parallel_size=2", "parallelism.use_distributed_optimizer=true",
                   "parallelism.recompute_granularity=full")
    nv = fresh(doc_for("nvswitch", True)).step_time_s
    pcie = fresh(doc_for("pcie", True)).step_time_s
    bounce = fresh(doc_for("pcie", False)).step_time_s
    assert nv < pcie < bounce


def test_memory_grows_with_microbatches_in_flight(cluster):
    gpipe = fresh(job(cluster.copy(), *GPT, "parallelism.pipeline_schedule=gpipe"))
    onef = fresh(job(cluster.copy(), *GPT, "parallelism.pipeline_schedule=1f1b"))
    assert gpipe.memory_gib_per_gpu["activations"] > onef.memory_gib_per_gpu["activations"]


def test_zero3_shards_params_and_full_recompute_saves_activations(cluster):
    z0 = fresh(job(cluster.copy(), *GPT, "parallelism.use_distributed_optimizer=false"))
    z3 = fresh(job(cluster.copy(), *GPT, "parallelism.use_distributed_optimizer=false", "parallelism.zero_stage=3"))
    assert z3.memory_gib_per_gpu["params"] < z0.memory_gib_per_gpu["params"]
    assert z3.memory_gib_per_gpu["optimizer"] < z0.memory_gib_per_gpu["optimizer"]
    full = fresh(job(cluster.copy(), *GPT, "parallelism.recompute_granularity=full"))
    assert full.memory_gib_per_gpu["activations"] < z0.memory_gib_per_gpu["activations"]
    assert full.breakdown_s["recompute"] > z0.breakdown_s["recompute"]


def test_moe_model_has_expert_traffic():
    doc = generate_fat_tree(nodes=8, gpu="H100", switch_radix=16)
    job(doc, "workload.preset=mixtral-8x7b", "workload.global_batch_size=64", "parallelism.tensor_model_parallel_size=1",
        "parallelism.expert_model_parallel_size=8", "parallelism.pipeline_model_parallel_size=4",
        "parallelism.use_distributed_optimizer=true", "parallelism.recompute_granularity=full")
    r = fresh(doc)
    assert r.breakdown_s["ep_comm"] > 0 and "ep:all_to_all" in r.collectives


def test_zero3_gathers_every_layer(cluster):
    z1 = fresh(job(cluster.copy(), *GPT, "parallelism.pipeline_model_parallel_size=1", "workload.preset=llama3-8b",
                   "parallelism.tensor_model_parallel_size=1", "workload.global_batch_size=256"))
    z3 = fresh(job(cluster.copy(), *GPT, "parallelism.pipeline_model_parallel_size=1", "workload.preset=llama3-8b",
                   "parallelism.tensor_model_parallel_size=1", "workload.global_batch_size=256",
                   "parallelism.use_distributed_optimizer=false", "parallelism.zero_stage=3"))
    # per-layer gathers move 3x the parameters per micro-batch: more DP traffic, mostly hidden by prefetch
    assert z3.hidden_comm_s["dp_comm"] + z3.breakdown_s["dp_comm"] > z1.hidden_comm_s["dp_comm"] + z1.breakdown_s["dp_comm"]
    assert any(e.kind.startswith("dp_comm") for e in z3.events)


def test_a_degraded_gpu_slows_its_whole_tp_group(cluster):
    base = fresh(job(cluster.copy(), *GPT))
    doc = job(cluster.copy(), *GPT)
    doc.update("node2", gpu_slowdown=[1.0, 1.0, 1.0, 1.4])
    slow = fresh(doc)
    assert slow.step_time_s > base.step_time_s
    assert slow.breakdown_s["imbalance_wait"] > base.breakdown_s["imbalance_wait"]


def test_gpu_slowdown_round_trips(tmp_path):
    from designer.core.io import load_document, save_document
    doc = generate_fat_tree(nodes=2, gpu="H100", switch_radix=16)
    doc.update("node1", gpu_slowdown=[1.0, 1.25])
    save_document(doc, tmp_path / "d.yaml")
    assert load_document(tmp_path / "d.yaml") == doc
    assert '"gpu_slowdown"' not in (tmp_path / "d.yaml").read_text().split("node1")[0]


def test_a_single_server_without_switches():
    from designer.core.io import loads_document
    doc = loads_document("apiVersion: designer/v1\nkind: Cluster\nspec:\n  racks: [{id: r}]\n"
                         "  nodes: [{id: n0, accelerator: H100, nic_count: 0, rack: r, slot: 0}]\n"
                         "  switches: []\n  links: []\n  workload: {preset: llama3-8b, global_batch_size: 16}\n"
                         "  parallelism: {tensor_model_parallel_size: 8}\n")
    r = fresh(doc)
    assert r.num_gpus == 8 and r.breakdown_s["tp_comm"] > 0 and r.breakdown_s["dp_comm"] == 0
