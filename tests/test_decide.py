"""`designer decide`: the same job on several designs, each at its best plan, per run, side by side."""
import json

import pytest

from tests.conftest import run_cli

SCENARIO = """apiVersion: designer/v1
kind: Scenario
metadata: {name: llama3-8b}
spec:
  workload: {preset: llama3-8b, global_batch_size: 64}
"""


# The searches of two 16-GPU designs are small: in this process they take a third of the time a pool of
# worker processes takes to start and hand them back (the pool's own tests are the search's)
ONE_PROCESS = ("--workers", "1")


@pytest.fixture(scope="module")
def designs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("decide")
    a, b, job = tmp / "h100.yaml", tmp / "gb200.yaml", tmp / "job.yaml"
    code, _, err = run_cli("generate", "fat-tree", "-o", a, "--nodes", "2", "--gpu", "H100")
    assert code == 0, err
    code, _, err = run_cli("generate", "fat-tree", "-o", b, "--nodes", "4", "--gpu", "GB200", "--gpus-per-node", "4",
                           "--nics-per-node", "4", "--nic-gbps", "800", "--nvlink-domain-gpus", "16")
    assert code == 0, err
    job.write_text(SCENARIO)
    return a, b, job


@pytest.fixture(scope="module")
def decision(designs, tmp_path_factory):
    a, b, job = designs
    report = tmp_path_factory.mktemp("report") / "decision.pdf"
    code, out, err = run_cli("decide", a, b, "--scenario", job, "--tokens", "100B", "--json", "--report", report,
                             *ONE_PROCESS)
    assert code == 0, err
    return json.loads(out), report


def test_each_design_gets_its_best_plan_that_fits_with_headroom(decision):
    data, _ = decision
    assert data["tokens"] == 1e11 and len(data["designs"]) == 2
    for d in data["designs"]:
        assert "error" not in d, d
        assert d["fits_with_headroom"] and d["memory_gib"] <= d["memory_limit_gib"]
        assert d["plan"] and d["plans_costed"] > 0
        low, high = d["step_time_range_s"]
        assert low < d["step_time_s"] < high and d["error_class"]


def test_per_run_figures_follow_from_the_step_and_the_goodput(decision):
    data, _ = decision
    for d in data["designs"]:
        run = d["run"]
        assert run["ideal_hours"] == pytest.approx(1e11 / d["tokens_per_s"] / 3600)
        assert run["hours"] == pytest.approx(run["ideal_hours"] / d["goodput"]["goodput"])
        lo, hi = d["usd_range"]
        assert lo < run["usd"] < hi
        assert d["goodput"]["interruptions_per_day"] > 0


def test_the_verdict_names_the_cheaper_design(decision):
    data, _ = decision
    cheaper = min(data["designs"], key=lambda d: d["run"]["usd"])
    assert data["verdict"].startswith(cheaper["name"])
    assert ("within the model's error" in data["verdict"]) == data["within_error"]


def test_the_report_is_written(decision):
    _, report = decision
    pdf = report.read_bytes()
    assert pdf.startswith(b"%PDF") and len(pdf) > 2000


def test_the_table_shows_both_designs_side_by_side(designs):
    a, b, job = designs
    code, out, err = run_cli("decide", a, b, "--scenario", job, "--tokens", "100B",
                             "--set", "workload.global_batch_size=32", *ONE_PROCESS)
    assert code == 0, err
    for label in ("time to train (days)", "cost per run", "goodput", "80 % range", "MFU", "memory"):
        assert label in out
    assert "fat-tree-2x8-h100" in out and "fat-tree-4x4-gb200" in out


def test_bad_input_names_the_flag_or_the_file(designs, tmp_path):
    a, b, job = designs
    code, _, err = run_cli("decide", a, b, "--scenario", job, "--tokens", "lots")
    assert code == 65 and "--tokens" in err
    code, _, err = run_cli("decide", a, "--scenario", job, "--tokens", "1T")
    assert code == 65 and "two designs" in err
    code, _, err = run_cli("decide", a, tmp_path / "missing.yaml", "--scenario", job, "--tokens", "1T")
    assert code != 0 and "missing.yaml" in err and "Traceback" not in err
