"""A schedule's edge cases on every shape: no micro-batches, and stages that start at different
times. (That the closed forms of 1F1B, interleaved and GPipe simulate as the schedule's rule, op by op,
is test_engine_speed_paths' reference comparison on the same shapes.)"""
from __future__ import annotations

import random


from designer.core.engine import schedule as S


def _shapes():
    for schedule in ("1f1b", "interleaved", "gpipe"):
        for p in (1, 2, 3, 4, 5, 8, 16):
            for m in sorted({1, 2, 3, 4, 6, 8, 12, 32, p, 2 * p, 3 * p}):
                for v in ((2, 3, 5) if schedule == "interleaved" else (1,)):
                    if schedule == "interleaved" and m % p:
                        continue  # a plan error (plan.py): micro-batches in groups of p
                    yield schedule, p, m, v


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
