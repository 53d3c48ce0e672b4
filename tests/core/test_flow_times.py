"""A flow's time is its slowest resource's, folded as each resource's times are made
(flows.Slowest), which is what an argmax over the stacked times gives."""
import numpy as np

from designer.core.engine.flows import Slowest


def test_the_slowest_resource_is_the_first_of_the_largest_times_nan_and_infinity_the_largest():
    rng = np.random.default_rng(3)
    n = 4000
    times = [rng.integers(0, 4, n) / 4.0 for _ in range(6)]  # many equal times
    times[2][::7] = np.nan
    times[4][::11] = np.inf
    times[5][::13] = np.nan
    stacked = np.nan_to_num(np.stack(times), nan=np.inf, posinf=np.inf)
    slowest = Slowest()
    for t in times:
        slowest.add(t.copy())
    expected = np.argmax(stacked, axis=0)
    assert slowest.count == 6
    assert np.array_equal(slowest.code, expected)
    assert np.array_equal(slowest.time, stacked[expected, np.arange(n)])
