"""A comparison that can be trusted: a side that does not fit invalidates the headline; green means
better for the buyer; per-run figures lead; differences inside the error ranges say so."""
import json

import pytest

from tests.conftest import EXAMPLES, run_cli

EXAMPLE = EXAMPLES / "h100-64gpu-infiniband.yaml"


def _compare(*args):
    code, out, err = run_cli("compare", *args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_memory_is_no_merit_and_per_run_figures_lead(tmp_path):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    for path, nodes in ((a, "4"), (b, "8")):
        code, _, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", nodes, "--gpu", "H100")
        assert code == 0, err
    job = ["--set", "workload.preset=llama3-8b", "--set", "workload.global_batch_size=128",
           "--set", "parallelism.use_distributed_optimizer=true", "--set", "parallelism.recompute_granularity=full"]
    data = _compare(a, b, *job, "--tokens", "1T")
    keys = [r["key"] for r in data["rows"]]
    assert keys[:3] == ["usd_per_run", "days_to_train", "goodput"]
    rows = {r["key"]: r for r in data["rows"]}
    assert rows["memory_gib_per_gpu"]["better"] == ""  # less memory is not better for the buyer
    assert rows["days_to_train"]["verdict"] == "better"  # twice the GPUs: fewer days
    assert data["invalid"] == [] and data["headline"] in ("better", "worse", "")
    assert data["summary"].startswith("B (b.yaml) against A (a.yaml): cost per run")


def test_plans_over_the_headroom_are_named_and_the_headline_is_invalid(tmp_path):
    a = tmp_path / "a.yaml"
    code, _, err = run_cli("generate", "fat-tree", "-o", a, "--nodes", "4", "--gpu", "H100")
    assert code == 0, err
    job = ["--set", "workload.preset=llama3-8b", "--set", "workload.global_batch_size=128"]
    data = _compare(a, a, *job)  # ZeRO-0, no recompute: 173 GiB of an 80 GiB GPU on both sides
    assert data["headline"] == "invalid"
    assert data["summary"].startswith("NOT A VALID COMPARISON: A (a.yaml) does not fit")
    code, out, err = run_cli("compare", a, a, *job)
    assert code == 0 and "NOT A VALID COMPARISON" in out


def test_a_difference_inside_the_error_ranges_says_so(tmp_path):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    for path, gbps in ((a, "400"), (b, "200")):
        code, _, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", "4", "--gpu", "H100", "--nic-gbps", gbps)
        assert code == 0, err
    job = ["--set", "workload.preset=llama3-8b", "--set", "workload.global_batch_size=128",
           "--set", "parallelism.use_distributed_optimizer=true", "--set", "parallelism.recompute_granularity=full"]
    data = _compare(a, b, *job)
    step = next(r for r in data["rows"] if r["key"] == "step_time_s")
    if abs(step["delta_pct"]) < 0.05:
        assert data["within_error"] and "within the model's error" in data["summary"]
        assert data["headline"] == ""
    else:
        pytest.skip(f"the NIC speed moved the step {step['delta_pct']:+.1%}: not inside the ranges")
