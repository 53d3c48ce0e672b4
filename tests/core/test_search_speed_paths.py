"""The plan search's fast paths give the answers of the plain ones, float for float (
a search of at least 500 plans per CPU-second at 1,024 GPUs).

- the breakdown adds up the critical stage's ops on arrays: the same running sums as adding
  each op's share (and its wait for the activation transfer) one after the other, and picks
  its stage and straggler pattern as np.argmax and np.argmin would (NaN included);
- the schedule's last backward per chunk, read off the end when ends only grow, and by max()
  when a duration is negative or not a number;
- a cluster with no straggler has one straggler pattern without sorting the replicas;
- a document's recent changes are read from the end of its change log.
"""
from __future__ import annotations

import math
import random

import numpy as np
import pytest

from designer.core.engine import schedule as S
from designer.core.engine.evaluate import Engine
from designer.core.engine.stages.breakdown import first_largest, first_smallest
from designer.core.engine.stages.layout import replica_slowdowns, straggler_patterns
from designer.core.io import load_document
from tests.conftest import EXAMPLES
from tests.core.test_engine_speed_paths import SCHEDULES, reference_simulation


def _random_times(rng, p, v, low=0.0):
    times = []
    for _ in range(p):
        bwd = [rng.uniform(0.2, 4.0) for _ in range(v)]
        times.append(S.StageTimes([rng.uniform(low, 3.0) for _ in range(v)], bwd,
                                  [b * rng.uniform(0.0, 0.5) for b in bwd]))
    return times


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_stage_sums_equal_adding_each_op_in_turn(schedule):
    rng = random.Random("sums-" + schedule)
    for _ in range(8):
        p = rng.choice([2, 3, 4, 8])
        v = rng.choice([2, 3]) if schedule == "interleaved" else 1
        m = p * rng.choice([1, 2, 3])
        r = S.simulate(schedule, p, m, v, _random_times(rng, p, v), rng.choice([0.0, 0.013, 0.4]))
        per_code = np.array([[rng.uniform(-1.0, 1.0) * 10 ** rng.randint(-9, 3) for _ in range(3 * r.chunks)]
                             for _ in range(4)])
        for s in range(p):
            ops = r.stage_ops(s)
            waits = 0.0
            for op in ops:
                waits += op.wait_pp
            assert r.stage_transfer_wait_s(s) == waits
            plain = [0.0] * len(per_code)
            for op in ops:
                for j, row in enumerate(per_code):
                    plain[j] += float(row[op.kind * r.chunks + op.chunk])
            assert r.stage_op_sums(s, per_code).tolist() == plain


def test_the_breakdown_picks_the_stage_and_pattern_numpy_would():
    rng = random.Random("argmax")
    for _ in range(300):
        values = [rng.choice([0.0, -0.0, 1.0, -1.0, 2.5, math.nan, math.inf, -math.inf])
                  for _ in range(rng.randint(1, 9))]
        assert first_largest(values) == int(np.argmax(values)), values
        assert first_smallest(values) == int(np.argmin(values)), values


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_last_backward_with_negative_or_missing_durations_equals_the_plain_simulation(schedule):
    rng = random.Random("unordered-" + schedule)
    for trial in range(6):
        p = rng.choice([2, 3, 4])
        v = rng.choice([2, 3]) if schedule == "interleaved" else 1
        m = p * rng.choice([1, 2])
        times = _random_times(rng, p, v, low=-2.0)  # some forwards take "negative" time: ends may shrink
        if trial == 0:
            times[0].fwd[0] = math.nan
        r = S.simulate(schedule, p, m, v, times, 0.05)
        orders = [list(r.order[s]) for s in range(p)]
        stage_end, last_b, ends, _ = reference_simulation(schedule, p, m, v, times, 0.05, orders)
        same = [[a == b or (math.isnan(a) and math.isnan(b)) for a, b in zip(x, y)] for x, y in
                zip(r.last_backward_end, last_b)]
        assert all(map(all, same))
        assert repr(r.ends) == repr(ends) and repr(r.stage_end) == repr(stage_end)


def test_one_straggler_pattern_without_stragglers_and_the_sorted_ones_with():
    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    engine = Engine(detail=False)
    engine.evaluate(doc)
    placement = next(iter(engine.cache.placements.values()))
    n = placement.plan.num_gpus
    for slow in (np.ones(n), np.full(n, 1.25), np.where(np.arange(n) == 9, 1.5, 1.0),
                 np.where(np.arange(n) == 0, math.nan, 1.0)):
        patterns, of_replica = straggler_patterns(placement, slow)
        want, want_of = np.unique(replica_slowdowns(placement, slow), axis=0, return_inverse=True)
        assert patterns.dtype == want.dtype and of_replica.dtype == want_of.dtype
        np.testing.assert_array_equal(patterns, want)
        np.testing.assert_array_equal(of_replica, want_of.reshape(-1))


def test_recent_changes_come_from_the_end_of_the_log():
    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    start = doc.revision
    for i in range(doc.CHANGE_LOG_LIMIT + 40):  # past the log's limit: its start is cut
        doc.replace_job(doc.spec.workload, doc.spec.parallelism)
    oldest = doc.change_log[0][0]
    for revision in range(oldest - 1, doc.revision + 1):
        assert doc.changes_since(revision) == [c for r, c in doc.change_log if r > revision]
    assert doc.changes_since(start) is None  # no longer in the log
    assert doc.changes_since(doc.revision) == []
