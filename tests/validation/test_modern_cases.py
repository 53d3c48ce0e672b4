"""Every case of tests/validation/data/published-cases-modern.yaml (2024-26: GB200/GB300 NVL72,
B200/B300, H100/H200, MI355X; FP8, MXFP8, MoE, long context) through the public CLI, exactly as
the file gives them (tests/validation/cases.py).

The engine issue's targets are median <= 6 % and worst normal-tolerance case <= 12 %, and the
nccl-tests cases within 15 % median including the GB200 tray curve and the multi-rack GB200 points.
All three are met (median 5.6 %; gpt-oss and the long-context runs are still predicted far too
fast, see docs/engine-2026.md). These tests hold them so that no change makes it worse: every
case runs (none refused), median <= 6 %, normal-tolerance median <= 4 % and worst <= 12 %.
One calibration per accelerator and fabric kind lives in the catalog; nothing per case.
"""
import statistics

import pytest

from tests.conftest import run_cli
from tests.validation.cases import MODERN_CASES_FILE, load_cases, run_case


@pytest.fixture(scope="module")
def modern_results(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("modern")
    return [(case, run_case(case, tmp, run_cli)) for case in load_cases(MODERN_CASES_FILE)["training"]]


def _errors(results, tolerance=None):
    return {case["id"]: r["step_time_s"] / case["step_time_s"] - 1 for case, r in results
            if tolerance is None or case.get("tolerance", "normal") == tolerance}


def test_every_modern_case_runs_and_its_breakdown_adds_up(modern_results):
    assert len(modern_results) == 34
    for case, r in modern_results:
        assert abs(sum(r["breakdown_s"].values()) - r["step_time_s"]) <= 1e-9 * r["step_time_s"], case["id"]
        assert all(v >= 0 for v in r["breakdown_s"].values()), case["id"]


# Runs whose recipe sets something the case does not carry as an input, and which the memory model
# therefore cannot see: they must fit the GPU, and may exceed only the headroom.
FITS_WITHOUT_HEADROOM: set[str] = set()


def test_every_modern_case_fits_with_its_headroom(modern_results):
    """A configuration that ran must fit: within the GPU's HBM less the memory headroom (10 %)."""
    for case, r in modern_results:
        assert r["fits_in_memory"], (case["id"], r.get("memory_reason"))
        if case["id"] not in FITS_WITHOUT_HEADROOM:
            assert r["fits_with_headroom"], (case["id"], r.get("memory_reason"))


def test_modern_step_time_accuracy_holds(modern_results):
    errors = _errors(modern_results)
    table = "\n".join(f"{k:42} {v:+.1%}" for k, v in errors.items())
    assert statistics.median(abs(e) for e in errors.values()) <= 0.06, table
    normal = _errors(modern_results, "normal")
    assert statistics.median(abs(e) for e in normal.values()) <= 0.04, table
    assert max(abs(e) for e in normal.values()) <= 0.12, table


def test_fp8_recipes_the_runs_use_are_costed_not_just_accepted(modern_results):
    for case, r in modern_results:
        unmodelled = " ".join(w for w in r["warnings"] if w.startswith("accepted, not modelled"))
        for key in ("fp8_recipe", "fp8_param_gather", "overlap_moe_expert_parallel_comm"):
            assert key not in unmodelled, (case["id"], unmodelled)


def test_modern_nccl_cases_within_15_percent_median(tmp_path):
    """Bus bandwidth from 1 MB (time below) of every nccl-tests case, exactly as the file gives it."""
    import json

    from tests.validation.cases import generate_args, nccl_errors

    per_case = {}
    for case in load_cases(MODERN_CASES_FILE)["collectives"]:
        path = tmp_path / f"{case['id']}.yaml"
        code, _, err = run_cli(*generate_args(case["cluster"], path))
        assert code == 0, err
        col = case["collective"]
        code, out, err = run_cli("nccl", path, "--op", col["op"], "--num-gpus", str(col["num_gpus"]),
                                 "--algo", col.get("algo", "auto"), "--min-bytes", "8", "--max-bytes", "16G", "--json")
        assert code == 0, (case["id"], err)
        rows = {r["size_bytes"]: r for r in json.loads(out)["designer_rows"]}
        per_case[case["id"]] = statistics.median(nccl_errors(case, rows))
    assert statistics.median(per_case.values()) <= 0.15, per_case
    for gb200 in ("AZURE-GB200-TRAY-AR-4", "NCCL1801-GB200-3RACK-AR-12", "NCCL1801-GB200-3RACK-AR-24"):
        assert per_case[gb200] <= 0.15, per_case
