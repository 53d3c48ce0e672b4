"""The engine's error range on every prediction: classes, widening, the shipped ranges, the CLI."""
import json

import pytest

from benchmarks.error_ranges import build, half, prediction_interval
from designer.core.analysis.error_bars import error_ranges, range_for, run_class
from tests.conftest import run_cli


def test_a_class_with_too_few_runs_widens_to_one_that_has_them():
    data = {"min_runs": 5, "fabrics_measured": ["infiniband"], "classes": {
        "moe/fp8/infiniband/large": {"runs": 2, "low": 0.5, "high": 0.6},
        "moe/fp8/infiniband": {"runs": 4, "low": 0.7, "high": 0.8},
        "dense/fp8/infiniband": {"runs": 30, "low": 0.9, "high": 1.1},
        "moe/fp8": {"runs": 6, "low": 0.9, "high": 1.3},
        "all": {"runs": 40, "low": 0.95, "high": 1.05}}}
    r = range_for(10.0, "moe/fp8/infiniband/large", data)
    assert r.error_class == "moe/fp8" and r.range_s == pytest.approx((9.0, 13.0)) and r.runs == 6
    eth = range_for(10.0, "dense/bf16/ethernet/small", data)
    assert eth.error_class == "all (fallback: no published ethernet run)"
    assert "no published ethernet training run" in eth.note


def test_ethernet_runs_get_their_own_class_where_the_published_runs_allow():
    def data(ethernet_runs):
        return {"min_runs": 5, "classes": {
            "dense/bf16/ethernet/small": {"runs": ethernet_runs, "low": 1.1, "high": 1.4},
            "dense/bf16/ethernet": {"runs": ethernet_runs, "low": 1.1, "high": 1.4},
            "dense/bf16/infiniband": {"runs": 12, "low": 0.95, "high": 1.05},
            "dense/bf16": {"runs": 12 + ethernet_runs, "low": 0.9, "high": 1.2},
            "all": {"runs": 40, "low": 0.9, "high": 1.2}}}
    own = range_for(10.0, "dense/bf16/ethernet/small", data(6))
    assert own.error_class == "dense/bf16/ethernet/small" and own.range_s == pytest.approx((11.0, 14.0))
    assert not own.note
    few = range_for(10.0, "dense/bf16/ethernet/small", data(2))
    assert few.error_class == "dense/bf16 (fallback: only 2 published ethernet runs)"
    assert few.range_s == pytest.approx((9.0, 12.0)) and "only 2 published ethernet training runs" in few.note
    infiniband = range_for(10.0, "dense/bf16/infiniband/small", data(2))
    assert infiniband.error_class == "dense/bf16/infiniband"  # the fabric with runs keeps its own class


def test_an_ethernet_design_says_its_range_fell_back(tmp_path):
    from tests.conftest import EXAMPLES

    roce = EXAMPLES / "h100-roce-2to1-ethernet.yaml"
    code, out, err = run_cli("evaluate", roce, "--json")
    assert code == 0, err
    assert json.loads(out)["error_class"].endswith("(fallback: no published ethernet run)")
    code, out, err = run_cli("evaluate", roce)
    assert code == 0 and "note: no published ethernet training run: the range is that of other fabrics" in out


def test_the_range_is_a_prediction_interval_wider_than_the_runs_it_came_from():
    ratios = [0.95, 1.0, 1.02, 1.05, 0.98]
    low, high = prediction_interval(ratios)
    assert low < min(ratios) and high > max(ratios)
    assert prediction_interval([1.1]) == (1.1, 1.1)


def test_ranges_come_from_one_half_and_are_checked_on_the_other():
    cases = [{"id": f"CASE-{i}", "workload": {"precision": "bf16"},
              "cluster": {"nodes": 4, "gpus_per_node": 8, "fabric": "infiniband"}} for i in range(40)]
    rows = [(c, {"measured_s": 1.0 + 0.01 * (i % 5), "predicted_s": 1.0}) for i, c in enumerate(cases)]
    data = build(rows)
    used = sum(1 for c in cases if half(c["id"]) == "range")
    assert data["classes"]["all"]["runs"] == used
    assert data["check"]["runs"] == len(cases) - used
    assert data["check"]["inside"] >= 0.7 * data["check"]["runs"]


def test_the_shipped_ranges_hold_about_80_percent_of_runs_they_did_not_come_from():
    data = error_ranges()
    assert data["classes"]["all"]["runs"] >= 20
    assert data["check"]["inside"] / data["check"]["runs"] >= 0.7
    assert run_class(True, "mxfp8", "infiniband", 2048) == "moe/fp8/infiniband/large"


def test_evaluate_carries_the_range_and_its_class(tmp_path):
    path = tmp_path / "a.yaml"
    code, _, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", "4", "--gpu", "H100")
    assert code == 0, err
    job = ["--set", "workload.preset=llama3-8b", "--set", "workload.global_batch_size=64",
           "--set", "parallelism.use_distributed_optimizer=true"]
    code, out, err = run_cli("evaluate", path, *job, "--json")
    assert code == 0, err
    r = json.loads(out)
    low, high = r["step_time_range_s"]
    assert low < r["step_time_s"] < high
    assert r["error_class"].startswith("dense/bf16")
    code, out, err = run_cli("evaluate", path, *job)
    assert code == 0 and "80 % range" in out and r["error_class"] in out
