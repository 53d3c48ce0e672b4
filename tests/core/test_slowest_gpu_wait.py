"""The wait for the slowest GPU: the expected maximum of N GPUs' speeds (it grows with the ranks
a step synchronises), a burn-in screen that cuts it (an Advisor change with its price), and its
own bar in the timeline, never inside a communication bar."""
import json
import math
from statistics import NormalDist

import pytest

from designer.core.engine.constants import engine_constants
from designer.core.engine.stages.dp import slowest_of
from tests.conftest import EXAMPLES, run_cli

H100 = EXAMPLES / "h100-64gpu-infiniband.yaml"
A100 = EXAMPLES / "a100-1024gpu-rail-infiniband.yaml"


def evaluate(path, *sets):
    args = ["evaluate", path, "--json"]
    for s in sets:
        args += ["--set", s]
    code, out, err = run_cli(*args)
    assert code == 0, err
    return json.loads(out)


def test_the_slowest_of_n_grows_with_n_and_stops_at_the_screens_cut():
    grows = [slowest_of(n) for n in (8, 64, 1024, 16384)]
    assert grows == sorted(grows) and grows[-1] == math.sqrt(2 * math.log(16384))
    cut = NormalDist().inv_cdf(0.98)
    assert [slowest_of(n, 0.02) for n in (1024, 16384)] == [cut, cut]
    assert slowest_of(8, 0.02) == slowest_of(8)  # a few GPUs are below the cut anyway


def test_a_burn_in_screen_shortens_the_wait_and_only_the_wait():
    base = evaluate(A100)
    screened = evaluate(A100, "calibration.rank_speed_screened_share=0.02")
    k = engine_constants({})
    n = base["num_gpus"]
    assert base["slowest_rank_wait_s"] > 0
    # the wait scales from sqrt(2 ln N) standard deviations to the screen's cut
    ratio = NormalDist().inv_cdf(0.98) / math.sqrt(2 * math.log(n))
    assert screened["slowest_rank_wait_s"] == pytest.approx(base["slowest_rank_wait_s"] * ratio, rel=1e-9)
    saved = base["slowest_rank_wait_s"] - screened["slowest_rank_wait_s"]
    assert base["step_time_s"] - screened["step_time_s"] == pytest.approx(saved, rel=1e-9)
    assert k.rank_speed_screened_share == 0.0  # by default no screen: the numbers stay


def test_the_advisor_offers_the_screen_priced_with_its_spare_servers():
    code, out, err = run_cli("advise", A100, "--json")
    assert code == 0, err
    screen = next(a for a in json.loads(out)["ranked"] if a["id"] == "screen-slowest")
    assert screen["speedup"] > 0.02 and screen["set"] == ["calibration.rank_speed_screened_share=0.02"]
    assert screen["spare_share"] > 0 and screen["capex_change"] > 0  # the pool is paid for
    assert screen["tokens_per_usd_change"] < screen["speedup"]


def test_the_wait_is_its_own_bar_in_the_timeline():
    from designer.core.engine.evaluate import Engine
    from designer.core.io.files import load_document

    result = Engine().evaluate(load_document(H100))
    device = 0
    waits = [e for e in result.events if e.device == device and e.kind == "imbalance_wait"
             and "slowest of" in e.label]
    assert len(waits) == 1
    wait = waits[0]
    assert wait.end_s - wait.start_s == pytest.approx(result.slowest_rank_wait_s, rel=1e-9)
    comm = [e for e in result.events if e.device == device and e.kind.endswith("_comm")]
    assert all(e.end_s <= wait.start_s + 1e-12 or e.start_s >= wait.end_s - 1e-12 for e in comm)
    assert max(e.end_s for e in result.events if e.device == device) == pytest.approx(result.step_time_s, rel=1e-12)
