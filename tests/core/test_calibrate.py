"""`designer calibrate`: nccl-tests logs in, the engine's link efficiencies fitted, refused when wrong.

The synthetic logs are what Designer itself predicts with known efficiencies, printed in nccl-tests'
exact text format (tests/core/nccl_log_writer.py); the fit must find those efficiencies again.
"""
import copy
import json
from pathlib import Path

import pytest

from designer.core.analysis.calibrate import calibrate
from designer.core.engine.nccl import as_nccl_tests_json, nccl_run
from designer.core.generate import generate_fat_tree
from designer.core.io import load_document, save_document
from designer.core.io.importers.nccl_tests_log import parse_nccl_tests
from designer.core.problems import DesignerError
from tests.conftest import run_cli
from tests.core.nccl_log_writer import synthetic_log

DATA = Path(__file__).parents[1] / "data" / "nccl-tests"
TRUTH = {"nvlink_efficiency": 0.74, "nvlink_ll128_efficiency": 0.61, "nvls_efficiency": 0.52,
         "infiniband_nic_efficiency": 0.87}


@pytest.fixture(scope="module")
def design():
    return generate_fat_tree(nodes=4, gpu="H100", name="calib")


def runs_of(doc, truth, cases):
    runs = []
    for i, (op, n) in enumerate(cases):
        runs += parse_nccl_tests(synthetic_log(doc, op, n, truth, min_bytes=8, max_bytes=1 << 30), f"log{i}.txt")
    return runs


CASES = [("all_gather", 8), ("all_reduce", 8), ("all_gather", 32), ("reduce_scatter", 16)]


def test_recovers_the_efficiencies_the_logs_were_made_with(design):
    runs = runs_of(design, TRUTH, CASES)
    result = calibrate(design, runs)
    assert result.accepted, result.refusals
    fitted = {c.name: c.value for c in result.constants}
    for name, value in TRUTH.items():
        assert fitted[name] == pytest.approx(value, abs=0.005), (name, fitted)
    classes = {c.name: c.link_class for c in result.constants}
    assert classes["nvlink_efficiency"] == "NVLink" and classes["infiniband_nic_efficiency"] == "NIC"
    # every measured row at least as close as before, and the bandwidth-bound ones now within 1 %
    for row in result.rows:
        assert abs(row.error_after) <= abs(row.error_before) + 1e-3, row.where
        if row.size_bytes >= 1 << 26:
            assert abs(row.error_after) < 0.01, (row.where, row.error_after)
    assert any(abs(r.error_before) > 0.05 for r in result.rows)  # the defaults were off: a real fit happened
    assert all(c.uncertainty is not None and c.uncertainty < 0.01 for c in result.constants)


def test_a_constant_the_logs_cannot_see_is_left_alone(design):
    runs = runs_of(design, TRUTH, [("all_gather", 8)])  # inside one server: the NICs carry nothing
    result = calibrate(design, runs)
    assert "infiniband_nic_efficiency" not in {c.name for c in result.constants}
    assert "infiniband_nic_efficiency" not in result.calibration


def test_refuses_a_value_outside_the_physical_range(design, tmp_path):
    # measured 25 % faster than a NIC at its full line rate could carry: only an efficiency > 1 fits
    runs = runs_of(design, {"infiniband_nic_efficiency": 1.0}, [("all_gather", 32)])
    for row in runs[0].rows:
        row.time_us *= 0.8
    result = calibrate(design, runs)
    assert not result.accepted
    assert any("infiniband_nic_efficiency" in r and "outside its physical range" in r for r in result.refusals)


def test_refuses_a_fit_that_makes_a_measured_row_worse(design):
    # two runs of the same collective that disagree: the default fits the first, the second pulls away
    # (its NVLink slower in every protocol: NCCL's choice of protocol follows the Simple rate)
    good = runs_of(design, {"nvlink_efficiency": 0.82}, [("all_gather", 8)])
    bad = runs_of(design, {"nvlink_efficiency": 0.45, "nvlink_ll128_efficiency": 0.38,
                           "nvlink_ll_efficiency": 0.16}, [("all_gather", 8)])
    for run in bad:
        run.file = "slow.txt"
    result = calibrate(design, good + bad)
    assert not result.accepted
    worse = [r for r in result.refusals if "would get worse" in r]
    assert worse and all(r.startswith("log0.txt:") for r in worse), result.refusals


def test_cli_writes_the_calibration_and_names_the_logs(design, tmp_path):
    path = tmp_path / "c.yaml"
    save_document(design, path)
    logs = []
    for op, n in CASES:
        log = tmp_path / f"{op}_perf_{n}.txt"
        log.write_text(synthetic_log(design, op, n, TRUTH, max_bytes=1 << 30))
        logs.append(log)
    out = tmp_path / "calibrated.yaml"
    code, stdout, stderr = run_cli("calibrate", path, *logs, "-o", out)
    assert code == 0, stderr
    assert "NVLink" in stdout and "nvlink_efficiency" in stdout and "NIC" in stdout
    assert f"{logs[0]}:" in stdout  # each row named FILE:LINE with its before/after error
    doc = load_document(out)
    assert doc.spec.calibration["infiniband_nic_efficiency"] == pytest.approx(0.87, abs=0.005)
    assert "designer calibrate from all_gather_perf_8.txt" in doc.metadata.description
    # and the calibrated file now predicts the logs: nccl with it equals the "measured" table
    run = nccl_run(doc, "all_gather", num_gpus=32, min_bytes=1 << 30, max_bytes=1 << 30)
    truth_doc = copy.deepcopy(design)
    truth_doc.spec.calibration = dict(TRUTH)
    expected = nccl_run(truth_doc, "all_gather", num_gpus=32, min_bytes=1 << 30, max_bytes=1 << 30)
    assert run.rows[0].time_us == pytest.approx(expected.rows[0].time_us, rel=0.005)


def test_cli_refusal_leaves_the_target_untouched(design, tmp_path):
    path = tmp_path / "c.yaml"
    save_document(design, path)
    log = tmp_path / "all_gather_perf.txt"
    text = synthetic_log(design, "all_gather", 32, {"infiniband_nic_efficiency": 1.0}, min_bytes=1 << 24)
    rows = [line for line in text.splitlines() if line.strip() and line.strip()[0].isdigit()]
    for line in rows:  # every time 30 % shorter: faster than the line rate
        parts = line.split()
        faster = line.replace(f" {parts[5]} ", f" {float(parts[5]) * 0.7:.1f} ", 1)
        text = text.replace(line, faster)
    log.write_text(text)
    out = tmp_path / "out.yaml"
    out.write_text("keep me\n")
    code, _, stderr = run_cli("calibrate", path, log, "-o", out)
    assert code == 1
    assert "refused" in stderr and "infiniband_nic_efficiency" in stderr
    assert out.read_text() == "keep me\n"


def test_json_output_reads_like_the_text(design):
    run = nccl_run(design, "all_reduce", num_gpus=16, min_bytes=1 << 20, max_bytes=1 << 28)
    data = as_nccl_tests_json(run)
    parsed = parse_nccl_tests(json.dumps(data, indent=2), "out.json")[0]
    text = parse_nccl_tests(synthetic_log(design, "all_reduce", 16, None, 1 << 20, 1 << 28), "out.txt")[0]
    assert parsed.op == "all_reduce" and parsed.hosts == text.hosts and parsed.devices == text.devices
    assert [r.size_bytes for r in parsed.rows] == [r.size_bytes for r in text.rows]
    assert [r.time_us for r in parsed.rows] == pytest.approx([r.time_us for r in text.rows], rel=0.01)


def test_real_public_logs_parse():
    a3 = parse_nccl_tests((DATA / "a3mega-h100-2node-all_reduce.txt").read_text(), "a3.txt")
    assert len(a3) == 1 and a3[0].op == "all_reduce"  # from the pasted command line
    run = a3[0]
    assert run.num_gpus == 16 and run.host_order() == ["ztan-mig-235z", "ztan-mig-gq73"]
    assert run.devices == list(range(8)) * 2 and run.device_names[0] == "NVIDIA H100 80GB HBM3"
    assert len(run.rows) == 31 and run.rows[0].size_bytes == 8 and run.rows[-1].size_bytes == 8589934592
    assert run.rows[-1].time_us == pytest.approx((47535 + 47743) / 2)
    assert run.rows[-1].busbw_gbps == pytest.approx((338.82 + 337.35) / 2)
    h200 = parse_nccl_tests((DATA / "h200-2node-all_reduce.txt").read_text(), "h200.txt")[0]
    assert h200.op == "all_reduce" and h200.num_gpus == 16 and len(h200.rows) == 3
    assert h200.rows[0].line == 26 and h200.rows[0].time_us == pytest.approx((4389.5 + 4331.1) / 2)


def test_real_log_on_a_matching_design_is_fitted_or_refused_with_reasons(tmp_path):
    doc = generate_fat_tree(nodes=2, gpu="H200", fabric="ethernet", nic_gbps=400, name="h200")
    runs = parse_nccl_tests((DATA / "h200-2node-all_reduce.txt").read_text(), "h200.txt")
    result = calibrate(doc, runs)
    # Two servers' all-reduce runs NVLS_TREE: its bus bandwidth (489 GB/s) is above the 8 NICs' rate and
    # set by the NVLS stage, so the log informs NVLink's NVLS efficiency, and fits it with a physical value
    # (0.684, against 0.6875 from other single-server measurements)
    assert [c.name for c in result.constants] == ["nvls_efficiency"]
    assert result.accepted, result.refusals
    assert result.constants[0].value == pytest.approx(0.6875, abs=0.02)
    for row in result.rows:
        assert row.measured_us > 0 and row.before_us > 0


def test_old_format_without_root_column():
    text = ("# nThread 1 nGpus 2 minBytes 8 maxBytes 128 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n"
            "#\n# Using devices\n"
            "#  Rank  0 Group  0 Pid   1234 on      host1 device  0 [0x07] Tesla V100-SXM2-32GB\n"
            "#  Rank  1 Group  0 Pid   1234 on      host1 device  1 [0x0a] Tesla V100-SXM2-32GB\n"
            "#\n"
            "#                                                     out-of-place                       in-place\n"
            "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
            "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
            "           8             2   float     sum    10.11    0.00    0.00  0e+00    10.04    0.00    0.00  0e+00\n")
    run = parse_nccl_tests(text, "all_reduce_perf.log")[0]
    assert run.op == "all_reduce" and run.num_gpus == 2
    assert run.rows[0].time_us == pytest.approx(10.075)


@pytest.mark.parametrize("mutate, where, words", [
    (lambda t: t.replace(t.splitlines()[-8], t.splitlines()[-8][:40]), -8, "columns"),
    (lambda t: "\n".join(l for l in t.splitlines() if not l.strip()[:1].isdigit()), None, "no nccl-tests result rows"),
    (lambda t: "\n".join(l for l in t.splitlines() if "all_gather_perf" not in l) + "\n", 2, "which collective"),
    (lambda t: "\n".join(l for l in t.splitlines() if "Rank" not in l and "designer nccl" not in l), 2, "Rank"),
])
def test_bad_logs_exit_65_with_file_and_line(design, tmp_path, mutate, where, words):
    text = synthetic_log(design, "all_gather", 8, None, max_bytes=1 << 20)
    bad = mutate(text)
    path = tmp_path / "log.txt"
    path.write_text(bad)
    good = tmp_path / "c.yaml"
    save_document(design, good)
    code, _, stderr = run_cli("calibrate", good, path, "-o", tmp_path / "out.yaml")
    assert code == 65, stderr
    assert words in stderr
    if where is not None:
        line = where if where > 0 else len(text.splitlines()) + 1 + where
        assert f"{path}:{line}:" in stderr
    assert not (tmp_path / "out.yaml").exists()
    with pytest.raises(DesignerError):
        parse_nccl_tests(bad, str(path))


def test_nccl_info_lines_between_rows_and_several_runs_in_one_log(design):
    first = synthetic_log(design, "all_gather", 8, None, max_bytes=1 << 20)
    second = synthetic_log(design, "reduce_scatter", 16, None, max_bytes=1 << 20)
    noisy = []
    for line in first.splitlines():
        noisy.append(line)
        if line.strip()[:1].isdigit():  # NCCL_DEBUG=INFO output from hosts named by their address
            noisy.append("10-0-0-1:345:345 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC")
    runs = parse_nccl_tests("\n".join(noisy) + "\n" + second, "both.log")
    assert [r.op for r in runs] == ["all_gather", "reduce_scatter"]
    assert [r.num_gpus for r in runs] == [8, 16]
    assert len(runs[0].rows) == len(parse_nccl_tests(first, "a.log")[0].rows)
