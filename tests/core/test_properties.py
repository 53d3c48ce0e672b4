"""Properties of the cost engine on random valid designs (hypothesis).

Two wrong directions were found on random designs and are impossible now:
- a slowed server or GPU made a zero-bubble (ZB-H1 / DualPipe) step faster: the schedule chose
  where each weight-gradient pass goes while timing the real durations, so a slower stage
  could move a W into a better gap. The op order is now fixed before any timing
  (schedule._zero_bubble_orders), which makes every end time monotone in every duration.
- a more oversubscribed fabric looked faster: the generator puts more servers on each leaf at
  4:1 than at 2:1 (fewer switch hops), a different network. On the same servers-to-leaves
  wiring, less up-link capacity is never faster; that is the property kept here.
"""
from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from designer.core.engine.evaluate import Engine
from designer.core.engine.schedule import StageTimes, simulate
from designer.core.generate.fat_tree import FatTreeError, generate_fat_tree
from designer.core.model.job import Parallelism, Workload
from designer.core.problems import DesignerError

SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
SCHEDULES = ("1f1b", "gpipe", "interleaved", "zb-h1", "dualpipe")


# ---- the pipeline schedule alone: a longer op never shortens the step ------------------------------
# Scheduling anomalies need uneven stages and a small change, which shrinking-minded strategies
# rarely draw: a seeded sweep of random pipelines finds the old greedy ZB-H1's within ~1,000 cases.

def random_pipeline(rng: random.Random, schedule: str):
    p = rng.randint(2, 6)
    v = rng.randint(2, 3) if schedule == "interleaved" else 1
    m = p * rng.randint(1, 4) if schedule == "interleaved" else rng.randint(1, 24)
    times = []
    for _ in range(p):
        bwd = [rng.uniform(0.2, 6.0) for _ in range(v)]
        times.append(StageTimes([rng.uniform(0.1, 3.0) for _ in range(v)], bwd, [b * rng.uniform(0, 0.5) for b in bwd]))
    return p, m, v, times, rng.choice([0.0, 0.01, 0.3])


def slower(times: list[StageTimes], stage: int, factor: float) -> list[StageTimes]:
    out = list(times)
    t = times[stage]
    out[stage] = StageTimes([x * factor for x in t.fwd], [x * factor for x in t.bwd], [x * factor for x in t.wgrad])
    return out


def step_of(schedule, p, m, v, times, p2p) -> float:
    return max(simulate(schedule, p, m, v, times, p2p).stage_end)


@pytest.mark.parametrize("schedule, cases", [("zb-h1", 3000), ("dualpipe", 300), ("1f1b", 300), ("gpipe", 300),
                                             ("interleaved", 300)])
def test_a_slower_stage_never_finishes_the_step_sooner(schedule, cases):
    rng = random.Random(11)
    for _ in range(cases):
        p, m, v, times, p2p = random_pipeline(rng, schedule)
        stage = rng.randrange(p)
        factor = rng.choice([rng.uniform(1.0, 1.05), rng.uniform(1.0, 2.0)])
        before = step_of(schedule, p, m, v, times, p2p)
        after = step_of(schedule, p, m, v, slower(times, stage, factor), p2p)
        assert after >= before * (1 - 1e-12), (schedule, p, m, v, p2p, stage, factor, times)


# ---- whole designs from the fat-tree generator ------------------------------------------------------

@st.composite
def designs(draw):
    nodes = draw(st.sampled_from([2, 3, 4, 6, 8, 12]))
    fabric = dict(nodes=nodes, gpu=draw(st.sampled_from(["H100", "A100"])), gpus_per_node=8,
                  nics_per_node=draw(st.sampled_from([1, 2, 4, 8])),
                  fabric=draw(st.sampled_from(["infiniband", "ethernet"])),
                  tiers=draw(st.sampled_from([None, 2, 3])), switch_radix=draw(st.sampled_from([8, 16, 32])),
                  rail_optimized=draw(st.booleans()))
    gpus = nodes * 8
    tp = draw(st.sampled_from([1, 2, 4, 8]))
    pp = draw(st.sampled_from([1, 2, 4]))
    schedule = draw(st.sampled_from(SCHEDULES)) if pp > 1 else "1f1b"
    assume(gpus % (tp * pp) == 0)
    dp = gpus // (tp * pp)
    mbs = draw(st.sampled_from([1, 2]))
    job = dict(
        workload=Workload(preset=draw(st.sampled_from(["gpt3-1.3b", "llama2-7b"])), micro_batch_size=mbs,
                          global_batch_size=dp * mbs * pp * draw(st.sampled_from([1, 2, 4]))),
        parallelism=Parallelism(
            tensor_model_parallel_size=tp, pipeline_model_parallel_size=pp, pipeline_schedule=schedule,
            virtual_pipeline_model_parallel_size=2 if schedule == "interleaved" else None,
            use_distributed_optimizer=draw(st.booleans()), overlap_grad_reduce=draw(st.booleans()),
            sequence_parallel=tp > 1 and draw(st.booleans()),
            recompute_granularity=draw(st.sampled_from(["none", "selective", "full"]))))
    return fabric, job


def build(fabric: dict, job: dict, oversubscription: float):
    try:
        doc = generate_fat_tree(oversubscription=oversubscription, **fabric)
    except FatTreeError:
        assume(False)
    doc.set_job(**job)
    return doc


def step(doc) -> float:
    try:
        return Engine().evaluate(doc).step_time_s
    except DesignerError:
        assume(False)


def wiring(doc) -> dict:
    """Which leaf each NIC is cabled to, and the switch tiers: the part of a fabric the
    oversubscription must not change for the comparison to be fair."""
    tiers = {s.id: s.tier for s in doc.switches}
    nic_leaf = {}
    for link in doc.links:
        ends = (link.a, link.b)
        on_switch = [e.split(":")[0] in tiers for e in ends]
        if on_switch == [False, True]:
            nic_leaf[link.a] = link.b.split(":")[0]
        elif on_switch == [True, False]:
            nic_leaf[link.b] = link.a.split(":")[0]
    return {"nics": nic_leaf, "tiers": sorted(tiers.values())}


@pytest.mark.slow
@SETTINGS
@given(designs())
def test_more_oversubscription_on_the_same_wiring_is_never_faster(design):
    fabric, job = design
    two, four = build(fabric, job, 2), build(fabric, job, 4)
    assume(wiring(two) == wiring(four))
    assert step(four) >= step(two) * (1 - 1e-12)


@pytest.mark.slow
@SETTINGS
@given(designs(), st.sampled_from([1.5, 2.0, 4.0]))
def test_slower_up_links_are_never_faster(design, factor):
    fabric, job = design
    doc = build(fabric, job, 1)
    before = step(doc)
    switches = {s.id for s in doc.switches}
    for link in list(doc.links):
        if link.a.split(":")[0] in switches and link.b.split(":")[0] in switches:
            doc.update(link.id, slowdown=factor)
    assert step(doc) >= before * (1 - 1e-12)


@pytest.mark.slow
@SETTINGS
@given(designs(), st.integers(0, 63), st.sampled_from([1.01, 1.1, 1.5, 2.0]), st.booleans())
def test_a_slowed_server_or_gpu_never_makes_the_step_faster(design, which, factor, whole_server):
    fabric, job = design
    doc = build(fabric, job, 2)
    before = step(doc)
    node = doc.nodes[which % len(doc.nodes)]
    if whole_server:
        doc.update(node.id, slowdown=factor)
    else:
        slow = [1.0] * node.accelerator_count
        slow[which % node.accelerator_count] = factor
        doc.update(node.id, gpu_slowdown=slow)
    assert step(doc) >= before * (1 - 1e-12)
