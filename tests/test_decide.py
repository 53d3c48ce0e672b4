"""`designer decide`: the same job on several designs, each at its best plan, per run, side by side."""
import io
import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT, run_cli

SCENARIO = """apiVersion: designer/v1
kind: Scenario
metadata: {name: llama3-8b}
spec:
  workload: {preset: llama3-8b, global_batch_size: 64}
"""


# The searches of two 16-GPU designs are small: in this process they take a third of the time a pool of
# worker processes takes to start and hand them back (the pool's own tests are the search's)
ONE_PROCESS = ("--workers", "1")
# calibrations a user sets on the command line: the report says them among its assumptions
CALIBRATED = ("--set", "calibration.reliability.restart_s=900", "--set", "calibration.rank_speed_screened_share=0.01")


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
    # long sequences: the best plan on H100 has TP communication an NVLink upgrade would shorten (an Advisor change);
    # two calibrations set, which the report's assumptions must show as in force
    code, out, err = run_cli("decide", a, b, "--scenario", job, "--tokens", "100B", "--json", "--report", report,
                             "--set", "workload.seq_length=16384", *CALIBRATED, *ONE_PROCESS)
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


def pdf_text_and_pictures(pdf: bytes) -> tuple[str, int]:
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(pdf))
    text = "\n".join(page.extract_text() for page in reader.pages)
    return " ".join(text.split()), sum(len(page.images) for page in reader.pages)


def test_the_report_gives_each_design_its_pictures_plan_changes_and_assumptions(decision):
    data, report = decision
    text, pictures = pdf_text_and_pictures(report.read_bytes())
    names = [d["name"] for d in data["designs"]]
    assert pictures == 2 * len(names)  # each design's racks and cables and its logical fabric view
    assert "design review" not in text  # every page's header names the report a decision
    for d in data["designs"]:
        assert f"Design: {d['name']}" in text
        assert f"Best plan as Megatron-LM arguments ({d['plan']})" in text
        assert "changes" in d  # the Advisor was asked for each design's plan
        for change in d["changes"]:
            assert change["title"] in text and f"{change['speedup']:+.1%}" in text
    assert any(d["changes"] for d in data["designs"])
    assert text.count("--num-layers 32 --hidden-size 4096") == len(names)  # designer export megatron's line
    assert "What would change the decision: the Advisor's best changes" in text
    for assumption in ("memory_headroom", "plans held to", "Prices and power", "unit price", "gpu_failures_per_mh",
                       "rank_speed_cv", "Sinha", "rank_speed_screened_share"):
        assert assumption in text, assumption


@pytest.mark.slow  # a new interpreter's decide: in this process, tests/core/test_report.py writes a report without Qt
def test_the_report_without_qt_says_why_it_has_no_pictures(designs, tmp_path):
    a, b, job = designs
    report = tmp_path / "no-qt.pdf"
    script = ("import sys; sys.modules['PySide6'] = None; from designer.cli import main; "
              f"sys.exit(main(['decide', {str(a)!r}, {str(b)!r}, '--scenario', {str(job)!r}, '--tokens', '100B', "
              f"'--report', {str(report)!r}]))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("warning: the report has no pictures: Qt could not start") == 1
    assert f"wrote {report}" in done.stderr
    text, pictures = pdf_text_and_pictures(report.read_bytes())
    assert pictures == 0
    assert text.count("Picture of the racks and cables and the logical fabric view not included") == 2
    assert "Best plan as Megatron-LM arguments" in text


def test_the_reports_assumptions_are_those_in_force(decision):
    _, report = decision  # decided with the CALIBRATED settings
    text, _ = pdf_text_and_pictures(report.read_bytes())
    assert "restart_s 900 " in text and "rank_speed_screened_share 0.01 " in text


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
