"""The engine's fast paths give the answers of the plain ones.

- every schedule, zero-bubble and DualPipe included, runs the hot loop of `simulate` on a fixed
  op order: it equals a plain reference simulation of that order on random stage times;
- `Engine.hardware` is cached, and the cache goes when the cluster or the calibration changes;
- the link endpoints parsed into integer arrays equal the endpoint strings;
- a plan search's pool sends the design once per worker, not with every chunk;
- an engine without detail keeps no per-link arrays in its cached collective costs.
"""
from __future__ import annotations

import random

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

SCHEDULES = ["1f1b", "interleaved", "zb-h1", "dualpipe", "gpipe"]


def reference_simulation(schedule, p, m, v, times, p2p_s):
    """Each stage runs its fixed op order; an op starts when its stage is free and the op it
    waits for has ended (plus the transfer when that op ran on another stage). Swept until done,
    written for clarity, not speed."""
    zb = schedule in ("zb-h1", "dualpipe")
    v = v if schedule == "interleaved" else 1
    orders = S._orders(schedule, p, m, v)
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
    return free, last_b, [[end[(k, s, i, c)] for k, i, c in orders[s]] for s in range(p)]


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_fast_schedule_equals_the_plain_simulation_on_random_stage_times(schedule):
    rng = random.Random(schedule)
    for _ in range(12):
        p = rng.choice([2, 3, 4, 8])
        v = rng.choice([2, 3]) if schedule == "interleaved" else 1
        m = p * rng.choice([1, 2, 3, 5])
        times = []
        for _s in range(p):
            bwd = [rng.uniform(0.2, 4.0) for _ in range(v)]
            times.append(S.StageTimes([rng.uniform(0.1, 3.0) for _ in range(v)], bwd,
                                      [b * rng.uniform(0.0, 0.5) for b in bwd]))
        p2p = rng.choice([0.0, 0.01, 0.4])
        fast = S.simulate(schedule, p, m, v, times, p2p)
        stage_end, last_b, ends = reference_simulation(schedule, p, m, v, times, p2p)
        assert fast.stage_end == stage_end  # exactly: the same sums in the same order
        assert fast.last_backward_end == last_b
        assert fast.ends == ends
        v_ = v if schedule == "interleaved" else 1
        zb = schedule in ("zb-h1", "dualpipe")
        busy = [sum(times[s].fwd[c] if k == S.F else times[s].bwd[c] - (times[s].wgrad[c] if zb else 0.0)
                    if k == S.B else times[s].wgrad[c] for k, _, c in S._orders(schedule, p, m, v_)[s])
                for s in range(p)]
        assert fast.stage_busy == busy


def _random_times(rng, p, v):
    times = []
    for _s in range(p):
        bwd = [rng.uniform(0.2, 4.0) for _ in range(v)]
        times.append(S.StageTimes([rng.uniform(0.1, 3.0) for _ in range(v)], bwd,
                                  [b * rng.uniform(0.0, 0.5) for b in bwd]))
    return times


def test_orders_of_all_stages_at_once_equal_op_order_per_stage():
    for schedule in ("1f1b", "interleaved", "gpipe"):
        for p in (1, 2, 3, 4, 8, 16):
            for m in sorted({1, 2, 3, 5, 8, 12, 32, p, 2 * p}):
                for v in ((2, 3, 4) if schedule == "interleaved" else (1,)):
                    if schedule == "interleaved" and m % p:
                        continue  # a plan error (plan.py): micro-batches in groups of p
                    S._orders_of.cache_clear()
                    orders = S._orders(schedule, p, m, v)
                    expected = [S.op_order(schedule, p, s, m, v) for s in range(p)]
                    assert len(orders) == p and [orders[s] for s in range(p)] == expected
                    assert orders == expected and orders[-1] == expected[-1]


def test_ticks_order_the_ops_with_no_visit_and_give_the_plain_simulation(monkeypatch):
    """1F1B, interleaved and GPipe take their op order from the ticks (the one-by-one visit is
    never needed), on every shape tried, warm-ups cut short by few micro-batches included."""
    def no_visit(*args):
        raise AssertionError("the ticks gave an order that misses a dependency")

    monkeypatch.setattr(S, "_visit_order", no_visit)
    rng = random.Random(7)
    for schedule in ("1f1b", "interleaved", "gpipe"):
        for p in (1, 2, 3, 4, 5, 8):
            for m in sorted({1, 2, 3, 4, 6, 8, 16, p, 2 * p, 3 * p}):
                for v in ((2, 3, 5) if schedule == "interleaved" else (1,)):
                    if schedule == "interleaved" and (m % p or p == 1):
                        continue  # (one stage: the reference charges a transfer from it to itself)
                    S._orders_of.cache_clear()
                    S._structure_of.cache_clear()
                    times = _random_times(rng, p, v)
                    p2p = rng.choice([0.0, 0.01, 0.4])
                    fast = S.simulate(schedule, p, m, v, times, p2p)
                    stage_end, last_b, ends = reference_simulation(schedule, p, m, v, times, p2p)
                    assert (fast.stage_end, fast.last_backward_end, fast.ends) == (stage_end, last_b, ends)
    for p, m, v in ((64, 128, 2), (32, 32, 4), (16, 256, 3)):  # large shapes: the ticks alone
        S._orders_of.cache_clear()
        S._structure_of.cache_clear()
        S._structure_of(("interleaved", p, m, v))
    S._orders_of.cache_clear()
    S._structure_of.cache_clear()


def test_ticks_that_miss_a_dependency_fall_back_to_the_visit(monkeypatch):
    rng = random.Random(3)
    times = _random_times(rng, 4, 2)
    S._orders_of.cache_clear()
    S._structure_of.cache_clear()
    good = S.simulate("interleaved", 4, 8, 2, times, 0.01)
    visits = []
    visit = S._visit_order

    def counted(*args):
        visits.append(1)
        return visit(*args)

    monkeypatch.setattr(S, "_visit_order", counted)
    for bad in (lambda t: -t, lambda t: np.zeros_like(t)):  # against every dependency; ties the stages' own order
        arrays = S._op_arrays
        monkeypatch.setattr(S, "_op_arrays", lambda *a, bad=bad, arrays=arrays: (*arrays(*a)[:3], bad(arrays(*a)[3]),
                                                                               *arrays(*a)[4:]))
        S._orders_of.cache_clear()
        S._structure_of.cache_clear()
        fallen = S.simulate("interleaved", 4, 8, 2, times, 0.01)
        monkeypatch.setattr(S, "_op_arrays", arrays)
        assert fallen.stage_end == good.stage_end and fallen.ends == good.ends
        assert fallen.last_backward_end == good.last_backward_end
    assert len(visits) == 2
    S._orders_of.cache_clear()
    S._structure_of.cache_clear()


def test_uniform_classes_cost_as_the_arrays_do(monkeypatch):
    """A class whose groups take the same time is costed on one group's floats: every collective
    of every example costs the same as with the per-group arrays."""
    from designer.core.engine import collectives as C

    def costs(uniform: bool) -> list:
        seen, rows = [], []
        slowest, alike = C.CollectiveModel._slowest_class, C.CollectiveModel._uniform_classes

        def record(self, *args):
            rows.append(args[-1])
            c = slowest(self, *args)
            seen.append((c.time_s, c.algorithm, c.protocol, c.latency_s, c.bandwidth_s, c.bottleneck,
                         list(c.bottleneck_links), c.utilization, c.classes))
            return c

        monkeypatch.setattr(C.CollectiveModel, "_slowest_class", record)
        if not uniform:
            monkeypatch.setattr(C.CollectiveModel, "_uniform_classes",
                                lambda self, pattern, s, n: [None] * len(self.shape.classes))
        for path in sorted(EXAMPLES.glob("*.yaml")):
            Engine().evaluate(load_document(path))
        monkeypatch.setattr(C.CollectiveModel, "_slowest_class", slowest)
        monkeypatch.setattr(C.CollectiveModel, "_uniform_classes", alike)
        return seen, rows

    fast, rows = costs(True)
    plain, _ = costs(False)
    assert fast == plain and len(fast) > 20
    assert any(row is not None for classes in rows for row in classes)  # the float path ran


def test_zero_bubble_and_dualpipe_share_one_order_and_one_structure():
    S._orders_of.cache_clear()
    S._structure_of.cache_clear()
    times = [S.StageTimes([1.0], [2.5], [0.8]) for _ in range(4)]
    a = S.simulate("zb-h1", 4, 12, 1, times, 0.05)
    b = S.simulate("dualpipe", 4, 12, 1, times, 0.05)
    assert a.stage_end == b.stage_end and a.order is b.order
    assert S._orders_of.cache_info().currsize == 1 and S._structure_of.cache_info().currsize == 1


def test_memo_keeps_recent_shapes_instead_of_clearing():
    S._orders_of.cache_clear()
    times = [S.StageTimes([1.0], [2.0], [0.0]) for _ in range(2)]
    for m in range(2, 2 + S.MEMO_ENTRIES + 5):
        S.simulate("1f1b", 2, m, 1, times, 0.0)
    assert S._orders_of.cache_info().currsize == S.MEMO_ENTRIES  # bounded
    hits, misses = S._orders_of.cache_info().hits, S._orders_of.cache_info().misses
    S._orders("1f1b", 2, 1 + S.MEMO_ENTRIES + 5, 1)
    assert S._orders_of.cache_info().hits == hits + 1  # the newest is kept
    S._orders("1f1b", 2, 2, 1)
    assert S._orders_of.cache_info().misses == misses + 1  # the oldest went first


def _hw(engine):
    """The cached hardware of the cluster's own fabric (one job on its first GPUs)."""
    return next(hw for fabric, _, _, hw in engine.cache.hardware if fabric is engine._fabric)


def test_hardware_is_cached_and_invalidated_when_the_cluster_changes():
    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    engine = Engine()
    first = engine.evaluate(doc)
    k_hw = _hw(engine)
    assert k_hw.acc.name.startswith("H100")
    # a link's speed re-rates the fabric: the same hardware object is reused
    link = doc.links[0]
    doc.update(link.id, bandwidth_gbps=link.bandwidth_gbps / 2)
    engine.evaluate(doc)
    assert _hw(engine) is k_hw
    # every server's accelerator changes: the fabric is rebuilt and the hardware read again
    for node in doc.nodes:
        doc.update(node.id, accelerator="H200")
    after = engine.evaluate(doc)
    assert _hw(engine) is not k_hw and _hw(engine).acc.name.startswith("H200")
    assert after.step_time_s != first.step_time_s
    fresh = Engine().evaluate(doc)
    assert after.step_time_s == fresh.step_time_s and after.mfu == fresh.mfu
    # the calibration is part of the key
    hw = _hw(engine)
    doc.spec.calibration = {**doc.spec.calibration, "kernel_gap_fraction": 0.2}
    engine.hardware(engine._fabric, 64, doc.spec.calibration)
    assert _hw(engine) is not hw


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


def test_engine_without_detail_keeps_no_per_link_arrays():
    doc = load_document(EXAMPLES / "a100-1024gpu-rail-infiniband.yaml")
    quick, full = Engine(detail=False), Engine()
    a, b = quick.evaluate(doc), full.evaluate(doc)
    assert a.step_time_s == b.step_time_s and a.breakdown_s == b.breakdown_s
    costs = [c for model in quick.cache.groups.values() for c in model._cache.values()]
    assert costs and all(c.link_bytes is None for c in costs)
    assert any(c.link_bytes is not None and c.link_bytes.bytes.size for m in full.cache.groups.values() for c in m._cache.values())
    # nor the flows' loads per NIC, leaf and pod they were made from (only link bytes read them)
    units = [u for model in quick.cache.groups.values() for u in model._unit.values()]
    assert units and all(u[4] is None for u in units)
    assert any(u[4] is not None for m in full.cache.groups.values() for u in m._unit.values())
    # the placements a search keeps: ranks as 32-bit integers (128 of them at 16k GPUs)
    assert all(p.dense_grid.dtype == np.int32 and p.expert_grid.dtype == np.int32 for p in quick.cache.placements.values())


def test_engine_caches_are_bounded_by_gpus_times_entries():
    from designer.core.engine.evaluate import GROUP_BUDGET, PLACEMENT_BUDGET, _cache_limit

    assert _cache_limit(1024, GROUP_BUDGET, 1024) == 1024  # 1k GPUs: as before
    assert _cache_limit(1024, GROUP_BUDGET, 16384) == 256  # 16k: a quarter of the entries
    assert _cache_limit(256, PLACEMENT_BUDGET, 131072) == 16
    assert _cache_limit(1024, GROUP_BUDGET, 1 << 20) == 4  # never fewer than one plan's four (an evaluation keeps its own besides)
    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    engine = Engine(detail=False)
    engine.evaluate(doc)
    fabric, placement = engine._fabric, next(iter(engine.cache.placements.values()))
    import designer.core.engine.evaluate as ev

    limit = _cache_limit(1024, GROUP_BUDGET, fabric.num_gpus)
    engine.cache.groups.clear()  # the next call is a miss for sure
    for i in range(limit + 5):  # distinct keys: the oldest quarter goes when full
        engine.cache.groups[("fake", i)] = None
    engine.groups(fabric, placement, "tp", False, ev.engine_constants(doc.spec.calibration), False)
    assert len(engine.cache.groups) <= limit


def test_the_windows_engine_keeps_one_plans_groups_at_131k_and_answers_as_a_fresh_one():
    import dataclasses

    from designer.core.engine.evaluate import WINDOW_GROUP_BUDGET, _cache_limit

    assert _cache_limit(1024, WINDOW_GROUP_BUDGET, 131072) == 4  # ~40 MB a plan there
    assert _cache_limit(1024, WINDOW_GROUP_BUDGET, 16384) == 32
    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    engine = Engine(group_budget=4 * 64)  # the 131k bound, on 64 GPUs: 4 groups
    for tp in (8, 4, 2, 8, 1, 4):  # each plan its own four groups
        doc.set_job(parallelism=dataclasses.replace(doc.spec.parallelism, tensor_model_parallel_size=tp))
        result = engine.evaluate(doc)
        assert len(engine.cache.groups) <= 4
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
    from designer.core.engine import collectives

    doc = load_document(EXAMPLES / "a100-1024gpu-rail-infiniband.yaml")
    engine = Engine()
    engine.evaluate(doc)
    routed = []
    real = collectives.route_flows
    monkeypatch.setattr(collectives, "route_flows", lambda *a: routed.append(1) or real(*a))
    cable = next(link for link in doc.links if link.a.split(":")[0] in {n.id for n in doc.nodes})
    doc.update(cable.id, bandwidth_gbps=cable.bandwidth_gbps / 2)
    edited = engine.evaluate(doc)
    assert routed == []
    fresh = Engine().evaluate(doc)
    assert edited.step_time_s == fresh.step_time_s and edited.breakdown_s == fresh.breakdown_s
    assert np.array_equal(edited.link_utilization_array, fresh.link_utilization_array)


def test_nccl_pairs_skipped_by_their_latency_choose_as_costing_every_pair(monkeypatch):
    """An algorithm and protocol whose latency alone is not below the best estimate so far is not
    costed: every collective of every example is chosen and costed as when every pair is."""
    from designer.core.engine import collectives as C
    from designer.core.engine.collective_bandwidth import GroupBandwidth

    def costs(skip: bool) -> tuple[list, int]:
        seen, costed = [], []
        times = GroupBandwidth.times

        def counted(self, *args):
            costed.append(1)
            return times(self, *args)

        monkeypatch.setattr(GroupBandwidth, "times", counted)
        monkeypatch.setattr(C, "cannot_win", C.cannot_win if skip else (lambda latency_s, best_s: False))
        for path in sorted(EXAMPLES.glob("*.yaml")):
            engine = Engine()
            engine.evaluate(load_document(path))
            for model in engine.cache.groups.values():
                seen += [(key, c.time_s, c.algorithm, c.protocol, c.latency_s, c.bandwidth_s, c.bottleneck)
                         for key, c in model._cache.items()]
        monkeypatch.undo()
        return seen, len(costed)

    skipping, costed_skipping = costs(True)
    every, costed_every = costs(False)
    assert skipping == every and len(every) > 50
    assert costed_skipping < costed_every  # pairs were skipped
