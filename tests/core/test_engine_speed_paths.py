"""The engine's fast paths give the answers of the plain ones.

- every schedule, zero-bubble and DualPipe included, runs a fixed op order per stage: its ends
  equal a plain reference simulation of that order on random stage times;
- an engine that evaluated a design answers as a fresh one after the cluster or calibration changed;
- the link endpoints parsed into integer arrays equal the endpoint strings;
- the float path of alike collective groups and the NCCL latency skip change no number;
- a plan search's pool sends the design once per worker, not with every chunk;
- an engine without detail keeps less memory, and every engine no more groups than its budget.
"""
from __future__ import annotations

import gc
import random
import tracemalloc

import numpy as np
import pytest

from designer.core.analysis import sweep
from designer.core.analysis.space import Point
from designer.core.engine import schedule as S
from designer.core.engine.evaluate import Engine
from designer.core.io import dumps_document, load_document, loads_document
from designer.core.model.elements import split_endpoint
from designer.core.model.endpoints import LinkEnds
from tests.conftest import EXAMPLES
from tests.core.test_engine_link_edit import differences

SCHEDULES = ["1f1b", "interleaved", "zb-h1", "dualpipe", "gpipe"]


def reference_simulation(schedule, p, m, v, times, p2p_s, orders):
    """Each stage runs its fixed op order; an op starts when its stage is free and the op it
    waits for has ended (plus the transfer when that op ran on another stage). Swept until done,
    written for clarity, not speed."""
    zb = schedule in ("zb-h1", "dualpipe")
    v = v if schedule == "interleaved" else 1
    end: dict[tuple, float] = {}

    def waits_for(kind, s, i, c):
        if kind == S.F:
            if s > 0:
                return (S.F, s - 1, i, c), p2p_s
            return ((S.F, p - 1, i, c - 1), p2p_s) if c > 0 else (None, 0.0)
        if kind == S.B:
            if s < p - 1:
                return (S.B, s + 1, i, c), p2p_s
            return ((S.B, 0, i, c + 1), p2p_s) if c < v - 1 else ((S.F, s, i, c), 0.0)
        return (S.B, s, i, c), 0.0

    def duration(s, kind, c):
        t = times[s]
        if kind == S.F:
            return t.fwd[c]
        if kind == S.B:
            return t.bwd[c] - (t.wgrad[c] if zb else 0.0)
        return t.wgrad[c]

    free, done = [0.0] * p, [0] * p
    while any(done[s] < len(orders[s]) for s in range(p)):
        progressed = False
        for s in range(p):
            while done[s] < len(orders[s]):
                kind, i, c = orders[s][done[s]]
                dep, transfer = waits_for(kind, s, i, c)
                if dep is not None and dep not in end:
                    break
                start = free[s] if dep is None else max(free[s], end[dep] + transfer)
                free[s] = start + duration(s, kind, c)
                end[(kind, s, i, c)] = free[s]
                done[s] += 1
                progressed = True
        assert progressed, "deadlock"
    last_b = [[max([0.0] + [end[(k, s, i, c)] for k, i, c in orders[s] if k != S.F and c == chunk])
               for chunk in range(v)] for s in range(p)]
    busy = [sum(duration(s, k, c) for k, _, c in orders[s]) for s in range(p)]
    return free, last_b, [[end[(k, s, i, c)] for k, i, c in orders[s]] for s in range(p)], busy


def expected_order(schedule, p, m, v):
    """Each stage's op order as `op_order` gives it; zero-bubble ones: None (checked as complete)."""
    if schedule in ("zb-h1", "dualpipe"):
        return None
    return [S.op_order(schedule, p, s, m, v) for s in range(p)]


def assert_simulated_as_the_reference(schedule, p, m, v, times, p2p):
    fast = S.simulate(schedule, p, m, v, times, p2p)
    orders = [list(fast.order[s]) for s in range(p)]
    expected = expected_order(schedule, p, m, v)
    if expected is None:  # every forward, input and weight gradient of every micro-batch once per stage
        every = sorted((k, i, 0) for k in (S.F, S.B, S.W) for i in range(m))
        assert all(sorted(order) == every for order in orders)
    else:
        assert orders == expected
    stage_end, last_b, ends, busy = reference_simulation(schedule, p, m, v, times, p2p, orders)
    assert fast.stage_end == stage_end  # exactly: the same sums in the same order
    assert fast.last_backward_end == last_b
    assert [list(e) for e in fast.ends] == ends
    assert fast.stage_busy == busy
    return fast


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_fast_schedule_equals_the_plain_simulation_on_random_stage_times(schedule):
    rng = random.Random(schedule)
    for _ in range(12):
        p = rng.choice([2, 3, 4, 8])
        v = rng.choice([2, 3]) if schedule == "interleaved" else 1
        m = p * rng.choice([1, 2, 3, 5])
        assert_simulated_as_the_reference(schedule, p, m, v, _random_times(rng, p, v), rng.choice([0.0, 0.01, 0.4]))


def _random_times(rng, p, v):
    times = []
    for _s in range(p):
        bwd = [rng.uniform(0.2, 4.0) for _ in range(v)]
        times.append(S.StageTimes([rng.uniform(0.1, 3.0) for _ in range(v)], bwd,
                                  [b * rng.uniform(0.0, 0.5) for b in bwd]))
    return times


def test_the_order_a_schedule_ran_is_op_order_per_stage():
    for schedule in ("1f1b", "interleaved", "gpipe"):
        for p in (1, 2, 3, 4, 8, 16):
            for m in sorted({1, 2, 3, 5, 8, 12, 32, p, 2 * p}):
                for v in ((2, 3, 4) if schedule == "interleaved" else (1,)):
                    if schedule == "interleaved" and m % p:
                        continue  # a plan error (plan.py): micro-batches in groups of p
                    times = [S.StageTimes([1.0] * v, [2.0] * v, [0.0] * v) for _ in range(p)]
                    order = S.simulate(schedule, p, m, v, times, 0.0).order
                    expected = [S.op_order(schedule, p, s, m, v) for s in range(p)]
                    assert len(order) == p and [order[s] for s in range(p)] == expected
                    assert order == expected and order[-1] == expected[-1]


def test_every_shape_simulates_as_the_plain_reference():
    """1F1B, interleaved and GPipe on every shape tried, warm-ups cut short by few micro-batches
    included, and a few large ones."""
    rng = random.Random(7)
    for schedule in ("1f1b", "interleaved", "gpipe"):
        for p in (1, 2, 3, 4, 5, 8, 16):
            for m in sorted({1, 2, 3, 4, 6, 8, 12, 16, 32, p, 2 * p, 3 * p}):
                for v in ((2, 3, 5) if schedule == "interleaved" else (1,)):
                    if schedule == "interleaved" and (m % p or p == 1):
                        continue  # (one stage: the reference charges a transfer from it to itself)
                    assert_simulated_as_the_reference(schedule, p, m, v, _random_times(rng, p, v),
                                                      rng.choice([0.0, 0.01, 0.4]))
    for p, m, v in ((32, 64, 2), (16, 128, 3)):
        assert_simulated_as_the_reference("interleaved", p, m, v, _random_times(rng, p, v), 0.01)


def evaluations_of_the_examples() -> list:
    return [Engine().evaluate(load_document(path)) for path in sorted(EXAMPLES.glob("*.yaml"))]


def test_uniform_classes_cost_as_the_arrays_do(monkeypatch):
    """A class whose groups take the same time is costed on one group's floats: every example
    evaluates to the same numbers (events included) as when every class is costed on its arrays."""
    from designer.core.engine.collectives import CollectiveModel

    rows = []
    alike = CollectiveModel.uniform_classes
    monkeypatch.setattr(CollectiveModel, "uniform_classes", lambda self, *a: rows.append(alike(self, *a)) or rows[-1])
    fast = evaluations_of_the_examples()
    monkeypatch.setattr(CollectiveModel, "uniform_classes", lambda self, *a: [None] * len(self.shape.classes))
    plain = evaluations_of_the_examples()
    for a, b in zip(fast, plain, strict=True):
        assert differences(a, b) == [] and differences(a.events, b.events) == []
    assert any(row is not None for classes in rows for row in classes)  # the float path ran


def test_zero_bubble_and_dualpipe_run_one_order():
    times = [S.StageTimes([1.0], [2.5], [0.8]) for _ in range(4)]
    a = S.simulate("zb-h1", 4, 12, 1, times, 0.05)
    b = S.simulate("dualpipe", 4, 12, 1, times, 0.05)
    assert a.stage_end == b.stage_end and a.order == b.order and a.ends == b.ends


def test_a_shape_simulated_again_after_many_others_answers_as_the_first_time():
    rng = random.Random(5)
    times = _random_times(rng, 2, 1)
    first = assert_simulated_as_the_reference("1f1b", 2, 2, 1, times, 0.01)
    for m in range(3, 3 + S.MEMO_ENTRIES + 5):  # more shapes than the schedule keeps
        S.simulate("1f1b", 2, m, 1, times, 0.01)
    again = assert_simulated_as_the_reference("1f1b", 2, 2, 1, times, 0.01)
    assert (again.stage_end, again.ends, again.order) == (first.stage_end, first.ends, first.order)


def same_as_a_fresh_engine(result, doc) -> None:
    fresh = Engine().evaluate(doc)
    assert (result.step_time_s, result.mfu, result.breakdown_s) == (fresh.step_time_s, fresh.mfu, fresh.breakdown_s)


def test_an_engine_that_evaluated_a_design_answers_as_a_fresh_one_after_each_edit():
    """The engine keeps the hardware it read for a cluster: a link's speed, every server's
    accelerator and the calibration changed in turn each give a fresh engine's answer."""
    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    engine = Engine()
    first = engine.evaluate(doc)
    link = doc.links[0]
    doc.update(link.id, bandwidth_gbps=link.bandwidth_gbps / 2)
    same_as_a_fresh_engine(engine.evaluate(doc), doc)
    for node in doc.nodes:
        doc.update(node.id, accelerator="H200")
    after = engine.evaluate(doc)
    assert after.step_time_s != first.step_time_s
    same_as_a_fresh_engine(after, doc)
    doc.set_overrides("calibration", {**doc.spec.calibration, "accelerators": {"H200": {"kernel_gap_fraction": 0.2}}})
    calibrated = engine.evaluate(doc)
    assert calibrated.step_time_s != after.step_time_s
    same_as_a_fresh_engine(calibrated, doc)


def test_endpoint_arrays_equal_the_endpoint_strings():
    doc = load_document(EXAMPLES / "a100-1024gpu-rail-infiniband.yaml")
    node_ids = [n.id for n in doc.nodes]
    switch_ids = [s.id for s in doc.switches]
    odd = ["ghost:nic0", node_ids[0], f"{node_ids[1]}:nicx", f"{node_ids[2]}:p3", f"{switch_ids[0]}:p7",
           f"{node_ids[3]}:nic12", "", ":", f"{switch_ids[1]}"]
    endpoints = [l.a for l in doc.links] + [l.b for l in doc.links] + odd
    ends = LinkEnds().parse(endpoints, node_ids, switch_ids)
    kind, index, port = ends.kind, ends.index, ends.nic
    for e, k, i, pt in zip(endpoints, kind.tolist(), index.tolist(), port.tolist()):
        device, name = split_endpoint(e)
        if device in node_ids:
            assert (k, node_ids[i]) == (1, device)
            number = name[3:] if name and name.startswith("nic") else ""
            assert pt == (int(number) if number.isdigit() else -1)
        elif device in switch_ids:
            assert (k, switch_ids[i], pt) == (2, device, -1)
        else:
            assert (k, i, pt) == (0, -1, -1)


def test_search_pool_sends_the_design_once_per_worker(monkeypatch):
    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    text = dumps_document(doc)
    base = loads_document(text)
    points = [Point(8, 1, 1, 1, 8, 8, "1f1b", 1, mb, "selective", True, 1, True, True, True, "tp-cp-ep-dp-pp")
              for mb in (1, 2)]
    serial = sweep.SerialRunner(text).submit(points).result()
    runner = sweep.PoolRunner(text, workers=1)
    sent = []
    real_submit = runner.pool.submit
    monkeypatch.setattr(runner.pool, "submit", lambda fn, *args: sent.append(args) or real_submit(fn, *args))
    try:
        pooled = runner.submit(points).result()
    finally:
        runner.close()
    assert sent == [(points,)]  # the chunk carries the plans only
    assert [r["step_time_s"] for r in pooled] == [r["step_time_s"] for r in serial]
    assert base.num_gpus() == 64


def memory_kept_by(engine: Engine, doc) -> int:
    """Bytes the engine holds after evaluating `doc` (its result let go)."""
    gc.collect()
    tracemalloc.start()
    try:
        engine.evaluate(doc)
        gc.collect()
        return tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()


def test_engine_without_detail_keeps_no_per_link_arrays():
    """A plan search's engine (no link detail) answers as a detailed one and keeps less: not every
    cable's bytes per collective it costed, nor the flows' routes (hundreds of MB a worker at 16k)."""
    doc = load_document(EXAMPLES / "a100-1024gpu-rail-infiniband.yaml")
    a, b = Engine(detail=False).evaluate(doc), Engine().evaluate(doc)  # (and the modules' memos warm)
    assert a.step_time_s == b.step_time_s and a.breakdown_s == b.breakdown_s
    quick, full = Engine(detail=False), Engine()
    assert memory_kept_by(quick, doc) < 0.85 * memory_kept_by(full, doc)  # ~0.75 measured


@pytest.mark.parametrize("plans_kept", [4, 12])
def test_an_engine_keeps_the_groups_its_budget_allows_and_answers_as_a_fresh_one(plans_kept):
    """`group_budget` is GPUs x groups kept (at 131k GPUs the window's engine keeps one plan's four):
    on 64 GPUs a budget of 64 x N keeps N groups between evaluations, whatever the plans evaluated."""
    import dataclasses

    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    engine = Engine(group_budget=plans_kept * 64)
    for tp in (8, 4, 2, 8, 1, 4):  # each plan its own four groups
        doc.set_job(parallelism=dataclasses.replace(doc.spec.parallelism, tensor_model_parallel_size=tp))
        result = engine.evaluate(doc)
        assert len(engine.cache.groups) <= plans_kept
        fresh = Engine().evaluate(doc)
        assert result.step_time_s == fresh.step_time_s and result.breakdown_s == fresh.breakdown_s


def test_an_evaluation_never_evicts_its_own_groups(monkeypatch):
    """Three jobs on one fabric (one an MoE: expert groups too) hold more groups than the 131k bound:
    they are all kept, so evaluating the design again builds none (evicting some of them at each
    evaluation would build them again every time); a plan search's calls outside evaluate evict as ever."""
    from designer.core.engine import evaluate as E

    doc = load_document(EXAMPLES / "shared-roce-512gpu-3jobs.yaml")
    engine = Engine(group_budget=1)  # the least bound: LEAST_CACHED (4) groups, whatever the jobs' sizes
    first = engine.evaluate(doc)
    assert len(engine.cache.groups) > 4
    built = []
    real = E.CollectiveModel
    monkeypatch.setattr(E, "CollectiveModel", lambda *a, **k: built.append(a) or real(*a, **k))
    again = engine.evaluate(doc)
    assert built == [] and again.step_time_s == first.step_time_s
    assert engine.cache.groups_in_use is None  # outside an evaluation: the recent ones only, as before


def test_a_link_edit_keeps_the_flows_routes_and_times_them_again(monkeypatch):
    """Loads do not depend on capacity: halving a cable re-times the flows on their kept routes
    (no flow is routed again) and gives the answer of an engine that costs the design afresh."""
    from designer.core.engine import pattern_times

    doc = load_document(EXAMPLES / "a100-1024gpu-rail-infiniband.yaml")
    engine = Engine()
    engine.evaluate(doc)
    routed = []
    real = pattern_times.route_flows
    monkeypatch.setattr(pattern_times, "route_flows", lambda *a: routed.append(1) or real(*a))
    cable = next(link for link in doc.links if link.a.split(":")[0] in {n.id for n in doc.nodes})
    doc.update(cable.id, bandwidth_gbps=cable.bandwidth_gbps / 2)
    edited = engine.evaluate(doc)
    assert routed == []
    fresh = Engine().evaluate(doc)
    assert edited.step_time_s == fresh.step_time_s and edited.breakdown_s == fresh.breakdown_s
    assert np.array_equal(edited.link_utilization_array, fresh.link_utilization_array)


def test_nccl_pairs_skipped_by_their_latency_choose_as_costing_every_pair(monkeypatch):
    """An algorithm and protocol whose latency alone is not below the best estimate so far is not
    costed: every example evaluates to the same numbers as when every pair is."""
    from designer.core.engine import collectives as C
    from designer.core.engine.collective_bandwidth import GroupBandwidth

    def evaluations(skip: bool) -> tuple[list, int]:
        costed = []
        for name in ("times", "alike_times"):  # the arrays' path and the floats' of alike groups
            real = getattr(GroupBandwidth, name)
            monkeypatch.setattr(GroupBandwidth, name,
                                lambda self, *args, real=real: costed.append(1) or real(self, *args))
        monkeypatch.setattr(C, "cannot_win", C.cannot_win if skip else (lambda latency_s, best_s: False))
        results = evaluations_of_the_examples()
        monkeypatch.undo()
        return results, len(costed)

    skipping, costed_skipping = evaluations(True)
    every, costed_every = evaluations(False)
    for a, b in zip(skipping, every, strict=True):
        assert differences(a, b) == [] and differences(a.events, b.events) == []
    assert costed_skipping < costed_every  # pairs were skipped
