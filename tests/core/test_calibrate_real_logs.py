"""`designer calibrate` on logs as users bring them: launcher-tagged lines, classic logs that do
not name their binary, Designer's own `designer nccl` output, and real logs one set of values
cannot fit (tests/data/nccl-tests/README.md names each file's source)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from designer.core.analysis.calibrate import calibrate
from designer.core.generate import generate_fat_tree
from designer.core.io import load_document, save_document
from designer.core.io.importers.nccl_tests_log import parse_nccl_tests
from designer.core.problems import DesignerError
from tests.conftest import run_cli
from tests.core.nccl_log_writer import synthetic_log

DATA = Path(__file__).parents[1] / "data" / "nccl-tests"


def test_srun_l_log_without_its_binary_is_read_as_all_reduce():
    # `srun -l` tags every line " 0: "; the log names no binary: the rows say all_reduce
    run, = parse_nccl_tests((DATA / "h100-2node-srun-l-all_reduce.txt").read_text(), "log.txt")
    assert run.op == "all_reduce" and run.num_gpus == 16
    assert run.host_order() == ["node005", "node007"] and len(run.rows) == 11
    assert run.rows[0].size_bytes == 8388608 and run.rows[0].time_us == pytest.approx((215.3 + 180.0) / 2)
    assert run.rows[0].line == 24


def test_mpirun_tag_output_on_two_gpus_asks_which_collective(tmp_path):
    # `mpirun --tag-output` ("[1,0]<stdout>:"), 2 ranks: all_reduce and sendrecv print the same rows
    log = DATA / "t4-efa-2node-mpirun-tag-output.txt"
    with pytest.raises(DesignerError) as caught:
        parse_nccl_tests(log.read_text(), str(log))
    problem = caught.value.problems[0]
    assert "all_reduce and send_recv" in problem.message and "--op" in problem.fix
    assert problem.line == 3
    run, = parse_nccl_tests(log.read_text(), str(log), op="all_reduce")
    assert run.num_gpus == 2 and len(run.rows) == 31 and run.rows[-1].time_us == pytest.approx(344717.5)
    design = tmp_path / "c.yaml"
    save_document(generate_fat_tree(nodes=2, gpu="H100", name="t4"), design)
    code, _, stderr = run_cli("calibrate", design, log)
    assert code == 65 and f"{log}:3:" in stderr and "pass --op all_reduce" in stderr


@pytest.mark.parametrize("op, n, expected", [
    ("all_reduce", 16, ["all_reduce"]), ("reduce_scatter", 16, ["reduce_scatter"]),
    ("broadcast", 16, ["broadcast"]), ("reduce", 16, ["reduce"]), ("send_recv", 2, ["all_reduce", "send_recv"]),
    ("all_gather", 16, ["all_gather", "all_to_all"]), ("all_to_all", 16, ["all_gather", "all_to_all"]),
])
def test_each_binarys_rows_are_recognised(op, n, expected):
    from designer.core.io.importers.nccl_tests_log import infer_op

    doc = generate_fat_tree(nodes=2, gpu="H100", name="sig")
    text = synthetic_log(doc, op, n, None, min_bytes=1 << 10, max_bytes=1 << 26)
    bare = "\n".join(line for line in text.splitlines() if "Collective test" not in line
                     and "designer nccl" not in line)
    if len(expected) == 1:
        run, = parse_nccl_tests(bare, "log.txt")
        assert run.op == op
    else:
        with pytest.raises(DesignerError, match="which collective"):
            parse_nccl_tests(bare, "log.txt")
        run, = parse_nccl_tests(bare, "log.txt", op=op)
    assert infer_op(run) == expected


def test_designers_own_nccl_output_calibrates(tmp_path):
    doc = generate_fat_tree(nodes=2, gpu="H100", name="own")
    doc.spec.calibration = {"infiniband_nic_efficiency": 0.8}
    measured = tmp_path / "measured.yaml"
    save_document(doc, measured)
    code, table, stderr = run_cli("nccl", measured, "--op", "all_reduce", "--min-bytes", "1M", "--max-bytes", "1G")
    assert code == 0, stderr
    log = tmp_path / "predicted.txt"
    log.write_text(table)
    design = tmp_path / "c.yaml"
    save_document(generate_fat_tree(nodes=2, gpu="H100", name="own"), design)
    out = tmp_path / "out.yaml"
    code, stdout, stderr = run_cli("calibrate", design, log, "-o", out)
    assert code == 0, stderr
    # the calibrated design prints the table it was calibrated on (which constants carry it is the
    # fit's: between two servers NCCL's tree runs partly at NVLink's rate, so the NIC's share is not alone)
    code, again, stderr = run_cli("nccl", out, "--op", "all_reduce", "--min-bytes", "1M", "--max-bytes", "1G")
    assert code == 0, stderr
    for want, got in zip(table.splitlines(), again.splitlines()):
        if want.strip() and not want.startswith("#"):
            w, g = float(want.split()[-2]), float(got.split()[-2])  # in-place busbw
            assert g == pytest.approx(w, rel=0.02), (want, got)


def test_a_refused_fit_writes_the_size_range_fit_and_names_the_rows_it_misses(tmp_path):
    # A3 Mega (8 x 200G per server) all_reduce on 2 servers: the small sizes take ~125 us where the
    # defaults say 31 us, the large ones run faster than one NIC efficiency <= 1 allows
    design = tmp_path / "c.yaml"
    save_document(generate_fat_tree(nodes=2, gpu="H100", fabric="ethernet", nic_gbps=200, name="a3"), design)
    log = DATA / "a3mega-h100-2node-all_reduce.txt"
    out = tmp_path / "out.yaml"
    code, stdout, stderr = run_cli("calibrate", design, log, "-o", out)
    assert code == 0, stderr
    assert "designer calibrate: refused: " in stderr  # one set of values cannot fit every row
    assert "size range by size range" in stderr and "do not explain" in stderr
    assert f"{log}:62" in stderr  # the 8 GiB row, named
    calibration = load_document(out).spec.calibration
    assert 0.5 < calibration.get("ethernet_nic_efficiency", 0.9) <= 1.0  # a physical NIC share, if fitted
    assert 30 < calibration["net_overhead_us"] < 150
    assert run_cli("validate", out)[0] == 0
    result = calibrate(load_document(design), parse_nccl_tests(log.read_text(), str(log)))
    small = [r for r in result.partial.rows if r.size_bytes <= 8192]
    assert all(abs(r.error_before) > 0.7 and abs(r.error_after) < 0.1 for r in small)


def test_a_two_node_log_says_which_classes_it_cannot_inform():
    doc = generate_fat_tree(nodes=2, gpu="H100", nic_gbps=400, name="h100")
    runs = parse_nccl_tests((DATA / "h100-2node-srun-l-all_reduce.txt").read_text(), "log.txt")
    result = calibrate(doc, runs)
    assert "NIC" in {c.link_class for c in result.constants}
    assert any("cannot inform the" in n and "PCIe" in n for n in result.notes)


def test_a_log_whose_nics_ran_at_a_fifth_of_their_rate_is_not_fitted_to_odd_efficiencies(tmp_path):
    """The two-node H100 log of nccl-tests#290 runs at 155 GB/s bus bandwidth where 8 x 400G NDR give
    about 470 (the thread's maintainer: 46-48 GB/s per NIC); its poster was chasing that slowdown. One
    set of values left its 1-8 GiB rows 54 % too fast (NIC 0.56, NVLS 0.29) and was accepted; now that
    fit is refused, and calibrate says what the rows measured: about 83 Gb/s per NIC."""
    design = tmp_path / "c.yaml"
    save_document(generate_fat_tree(nodes=2, gpu="H100", nic_gbps=400, name="h100"), design)
    log = DATA / "h100-2node-srun-l-all_reduce.txt"
    code, table, stderr = run_cli("calibrate", design, log)
    refused = re.search(r"refused: (\d+) row\(s\) stay more than 25% off after the fit", stderr)
    assert refused and int(refused[1]) >= 4, stderr  # at least the four rows from 1 GiB up
    assert "8 x 400 Gb/s NICs per server" in table and "3.1x slower" in table, table
    rate = float(table.split(" Gb/s per NIC (")[0].rsplit("at ", 1)[1])
    assert 75 < rate < 95, table
    result = calibrate(load_document(design), parse_nccl_tests(log.read_text(), str(log)))
    big = [r for r in result.partial.rows if r.size_bytes >= 1 << 30]
    assert all(r.error_before < -0.6 and abs(r.error_after) < 0.05 for r in big)


def test_a_skypilot_log_tagged_twice_is_read_and_calibrates_with_physical_values(tmp_path):
    """SkyPilot prefixes mpirun's `[1,0]<stdout>:` with its own `(head, rank=0, pid=3808) `; 2 x 8 H200
    (a3-ultragpu-8g, 8 x 400G RoCE). all_gather's rows (redop none) read like alltoall's: --op says which.
    The one set of values would need NVLink LL at ~0.02 and leaves the small rows 27-37 % off: refused;
    the size-range fit keeps a RoCE NIC share near 0.8 and brings 1-8 GiB from -10 % to within 5 %."""
    log = DATA / "h200-a3ultra-2node-skypilot-all_gather.txt"
    with pytest.raises(DesignerError, match="all_gather and all_to_all alike"):
        parse_nccl_tests(log.read_text(), str(log))
    run, = parse_nccl_tests(log.read_text(), str(log), op="all_gather")
    assert run.num_gpus == 16 and run.host_order() == ["nc-d87e1263-head", "nc-d87e1263-worker1"]
    assert len(run.rows) == 24 and run.rows[-1].size_bytes == 8589934592
    doc = generate_fat_tree(nodes=2, gpu="H200", fabric="ethernet", nic_gbps=400, name="a3ultra")
    result = calibrate(doc, [run])
    assert any("stay more than 25% off" in r for r in result.refusals)
    nic = {c.name: c.value for c in result.partial.constants}["ethernet_nic_efficiency"]
    assert 0.7 < nic < 0.9
    big = [r for r in result.partial.rows if r.size_bytes >= 1 << 30]
    assert all(r.error_before < -0.07 and abs(r.error_after) < 0.05 for r in big)


def test_gcps_wrapper_names_the_test_with_dash_t(tmp_path):
    """`run_nccl_tests.sh -t all_gather ...` pasted above the table names the collective (no binary in
    the log, and all_gather's rows alone read like alltoall's)."""
    log = DATA / "h200-a3ultra-2node-gcp-run_nccl_tests-all_gather.txt"
    run, = parse_nccl_tests(log.read_text(), str(log))
    assert run.op == "all_gather" and run.num_gpus == 16 and len(run.rows) == 24
    design = tmp_path / "c.yaml"
    save_document(generate_fat_tree(nodes=2, gpu="H200", fabric="ethernet", nic_gbps=400, name="gcp"), design)
    code, _, stderr = run_cli("calibrate", design, log, "-o", tmp_path / "out.yaml")
    assert code == 0 and "keeping the values fitted size range by size range" in stderr, stderr
    assert run_cli("validate", tmp_path / "out.yaml")[0] == 0
