"""The closed forms of a 1F1B, interleaved or GPipe schedule (its ops as a grid of stages and
positions) give what the schedule's rule gives op by op, found by op ids."""
from __future__ import annotations

import random

import numpy as np

from designer.core.engine import schedule as S


def _shapes():
    for schedule in ("1f1b", "interleaved", "gpipe"):
        for p in (1, 2, 3, 4, 5, 8, 16):
            for m in sorted({1, 2, 3, 4, 6, 8, 12, 32, p, 2 * p, 3 * p}):
                for v in ((2, 3, 5) if schedule == "interleaved" else (1,)):
                    if schedule == "interleaved" and m % p:
                        continue  # a plan error (plan.py): micro-batches in groups of p
                    yield schedule, p, m, v


def _by_op_id(orders, p, m, v):
    """Per op, stage after stage: the position of the op it waits for (-1: none), whether that is on
    another stage, and per stage and chunk the position of its last backward, by the rule of
    _structure_of worked out on op ids."""
    kind, i, c = orders.arrays
    s = np.repeat(np.arange(p), orders.per_stage)
    oid = S._oid
    f_dep = np.where(s > 0, oid(S.F, s - 1, i, c, p, m, v), np.where(c > 0, oid(S.F, p - 1, i, c - 1, p, m, v), -1))
    b_dep = np.where(s < p - 1, oid(S.B, s + 1, i, c, p, m, v),
                     np.where(c < v - 1, oid(S.B, 0, i, c + 1, p, m, v), oid(S.F, s, i, c, p, m, v)))
    dep = np.where(kind == S.F, f_dep, b_dep)
    crosses = (dep >= 0) & ((dep // (m * v)) % p != s)
    last = S._BackwardPositions(kind, s, c, [orders.per_stage] * p, p, v).last
    return S._positions_of(dep, oid(kind, s, i, c, p, m, v)), crosses, last


def test_grid_inputs_and_last_backwards_follow_the_rule_by_op_id():
    for schedule, p, m, v in _shapes():
        key = S._memo_key(schedule, p, m, v if schedule == "interleaved" else 1)
        orders = S._orders_of(key)
        vv = key[3]
        assert orders.grid is not None
        dep_at, crosses, last = _by_op_id(orders, p, m, vv)
        inputs = S._grid_inputs(orders.grid, p, vv)
        assert inputs is not None, key
        assert np.array_equal(inputs[0], dep_at), key
        assert np.array_equal(inputs[1], crosses), key
        assert S._grid_last_backwards(orders.grid, p, vv) == last, key


def test_a_schedule_of_no_micro_batches_ends_at_its_start():
    for schedule, v in (("1f1b", 1), ("interleaved", 2), ("gpipe", 1)):
        times = [S.StageTimes([1.0] * v, [2.0] * v, [0.0] * v) for _ in range(2)]
        r = S.simulate(schedule, 2, 0, v, times, 0.1)
        assert r.stage_end == [0.0, 0.0] and r.last_backward_end == [[0.0] * v, [0.0] * v]


def test_transfer_waits_from_staggered_starts_equal_adding_each_op_in_turn():
    """Stages that start at different times (start offsets): each op's wait for its input's transfer,
    added op by op, as the stage's sum."""
    rng = random.Random("staggered")
    for schedule, p, m, v in _shapes():
        if p == 1 or m > 12:
            continue
        times = [S.StageTimes([rng.uniform(0.1, 3.0) for _ in range(v)], [rng.uniform(0.2, 4.0) for _ in range(v)],
                              [0.0] * v) for _ in range(p)]
        offsets = [rng.uniform(0.0, 2.0) for _ in range(p)]
        r = S.simulate(schedule, p, m, v, times, rng.choice([0.0, 0.013, 0.4]), offsets)
        for s in range(p):
            waits = 0.0
            for op in r.stage_ops(s):
                waits += op.wait_pp
            assert r.stage_transfer_wait_s(s) == waits, (schedule, p, m, v, s)
