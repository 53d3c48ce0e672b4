"""A schedule whose ops may end out of order on a stage (a negative duration, an endless transfer)
still waits for every input as it is, the one on its own stage included."""
from __future__ import annotations

import math
import random

import pytest

from designer.core.engine import schedule as S
from tests.core.test_engine_speed_paths import reference_simulation


@pytest.mark.parametrize("schedule", ["1f1b", "interleaved", "zb-h1", "gpipe"])
@pytest.mark.parametrize("odd", ["endless transfer", "negative backward"])
def test_unordered_times_give_the_plain_simulation(schedule, odd):
    rng = random.Random(f"{schedule} {odd}")
    p, v = 4, (2 if schedule == "interleaved" else 1)
    m = 2 * p
    times = [S.StageTimes([rng.uniform(0.1, 3.0) for _ in range(v)], [rng.uniform(0.2, 4.0) for _ in range(v)],
                          [0.0] * v) for _ in range(p)]
    p2p = math.inf if odd == "endless transfer" else 0.3
    if odd == "negative backward":
        times[-1].bwd[0] = -5.0  # the last stage's backward ends before its own forward
    fast = S.simulate(schedule, p, m, v, times, p2p)
    orders = [list(fast.order[s]) for s in range(p)]
    stage_end, _, ends, _ = reference_simulation(schedule, p, m, v, times, p2p, orders)
    assert fast.stage_end == stage_end
    assert [list(e) for e in fast.ends] == ends
