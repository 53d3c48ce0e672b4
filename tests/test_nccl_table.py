"""`designer nccl` prints what nccl-tests prints: read back with nccl-tests' own column rules
(the printf formats of NVIDIA/nccl-tests src/util.cu) and its count rules (src/<op>.cu)."""
import ctypes
import ctypes.util
import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

from designer.core.engine.nccl import float_str
from tests.conftest import EXAMPLES, run_cli

ROOT = Path(__file__).resolve().parents[1]
H100_64 = EXAMPLES / "h100-64gpu-infiniband.yaml"
OPS = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "all_to_all")
BINARY = {"all_reduce": "all_reduce_perf", "all_gather": "all_gather_perf", "reduce_scatter": "reduce_scatter_perf",
          "broadcast": "broadcast_perf", "reduce": "reduce_perf", "all_to_all": "alltoall_perf",
          "send_recv": "sendrecv_perf"}

# writeBenchmarkLinePreamble: "%12li  %12li  %8s  %6s  %6s"; writeBenchmarkLineBody twice,
# without validation: "  %7s  %6s  %6s    N/A". (name, width, separator before it)
COLUMNS = [("size", 12, ""), ("count", 12, "  "), ("type", 8, "  "), ("redop", 6, "  "), ("root", 6, "  ")]
for _place in ("oop", "ip"):
    COLUMNS += [(f"{_place}_time", 7, "  "), (f"{_place}_algbw", 6, "  "), (f"{_place}_busbw", 6, "  "),
                (f"{_place}_wrong", 3, "    ")]
ROW_LENGTH = sum(width + len(sep) for _, width, sep in COLUMNS)


def parse_row(line: str) -> dict:
    """One result line cut at nccl-tests' fixed widths; every field right-aligned in its column."""
    assert len(line) == ROW_LENGTH, (len(line), line)
    out, at = {}, 0
    for name, width, sep in COLUMNS:
        assert line[at:at + len(sep)] == sep, (name, line)
        at += len(sep)
        cell = line[at:at + width]
        at += width
        assert cell.strip() and cell == cell.strip().rjust(width), (name, cell, line)
        out[name] = cell.strip()
    return out


def result_lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line and not line.startswith("#")]


def nccl_tests_counts(op: str, size: int, nranks: int) -> tuple[int, int]:
    """(printed size, printed count) straight from nccl-tests: count = size / wordSize; split ops
    take base = (count/nranks) & ~(16/eltSize - 1); size printed = max(sendBytes, expectedBytes)."""
    count = size // 4
    if op in ("all_gather", "reduce_scatter", "all_to_all"):
        base = (count // nranks) & ~(16 // 4 - 1)
        return base * nranks * 4, base
    return count * 4, count


def nccl(*args):
    code, out, err = run_cli("nccl", H100_64, *args)
    assert code == 0, err
    return out


@pytest.mark.parametrize("op", OPS)
def test_every_row_reads_back_with_nccl_tests_columns_and_counts(op):
    """8 B to 16 GiB on 16 GPUs (two servers): counts per rank, sizes as nccl-tests aligns them,
    every column at its printf width, times above 10,000 us included."""
    out = nccl("--op", op, "--num-gpus", "16", "--min-bytes", "8", "--max-bytes", "16G")
    rows = [parse_row(line) for line in result_lines(out)]
    requested = [2**k for k in range(3, 35)]
    assert len(rows) == len(requested)
    for want, row in zip(requested, rows):
        size, count = nccl_tests_counts(op, want, 16)
        assert (int(row["size"]), int(row["count"])) == (size, count), (op, want, row)
        assert row["type"] == "float"
        assert row["redop"] == ("sum" if op in ("all_reduce", "reduce_scatter", "reduce") else "none")
        assert row["root"] == ("0" if op in ("broadcast", "reduce") else "-1")
        assert row["oop_wrong"] == row["ip_wrong"] == "N/A"
        assert row["oop_time"] == row["ip_time"]
    big = [r for r in rows if float(r["oop_time"]) >= 10_000]
    assert big, "the sweep reaches times of 10,000 us and more"
    assert f"# Collective test starting: {BINARY[op]}" in out
    assert f"# Collective test concluded: {BINARY[op]}" in out


def test_count_is_per_rank_for_the_ops_that_split():
    """At 1 GiB on 16 GPUs nccl-tests prints count 16777216 for reduce_scatter and alltoall
    (the per-rank count the NCCL call gets), not the 268435456 elements of the whole buffer."""
    for op in ("reduce_scatter", "all_to_all", "all_gather"):
        out = nccl("--op", op, "--num-gpus", "16", "--min-bytes", "1G", "--max-bytes", "1G")
        (row,) = [parse_row(line) for line in result_lines(out)]
        assert (row["size"], row["count"]) == ("1073741824", "16777216"), op


def test_tiny_sizes_on_many_ranks_print_as_nccl_tests_aligns_them():
    """8 B over 16 ranks: nothing per rank for the split ops (size 0, count 0); 1 KiB: 16 floats
    per rank; 300 B is not a power of two and rounds down to the 16-byte multiple per rank."""
    out = nccl("--op", "reduce_scatter", "--num-gpus", "16", "--min-bytes", "8", "--max-bytes", "1K")
    rows = [parse_row(line) for line in result_lines(out)]
    assert [(r["size"], r["count"]) for r in rows] == [("0", "0")] * 5 + [("256", "4"), ("512", "8"), ("1024", "16")]
    assert all(r["oop_algbw"] == "0.00" for r in rows[:5])
    out = nccl("--op", "all_gather", "--num-gpus", "8", "--min-bytes", "300", "--max-bytes", "300")
    (row,) = [parse_row(line) for line in result_lines(out)]
    assert (row["size"], row["count"]) == ("256", "8")  # 75 floats / 8 ranks = 9 -> 8 per rank
    out = nccl("--op", "all_reduce", "--num-gpus", "16", "--min-bytes", "6", "--max-bytes", "6")
    (row,) = [parse_row(line) for line in result_lines(out)]
    assert (row["size"], row["count"]) == ("4", "1")


def test_header_columns_line_up_with_the_rows():
    """The header is "# %10s  %12s  %8s  %6s  %6s  %7s ...": each label ends where its column does."""
    out = nccl("--op", "all_reduce", "--num-gpus", "8", "--min-bytes", "1M", "--max-bytes", "4M")
    lines = out.split("\n")
    header = next(line for line in lines if "size" in line and "count" in line and line.startswith("#"))
    ends, at = {}, 0
    for name, width, sep in COLUMNS:
        at += len(sep) + width
        ends[name] = at
    for label, column in (("size", "size"), ("count", "count"), ("type", "type"), ("redop", "redop"),
                          ("root", "root"), ("time", "oop_time"), ("algbw", "oop_algbw"), ("busbw", "oop_busbw")):
        assert header.index(label) + len(label) == ends[column], label
    assert "Avg bus bandwidth    : " in out and "# Out of bounds values : 0 OK" in out


def _c_get_float_str(value: float, width: int) -> str:
    """nccl-tests' getFloatStr run through the C library's snprintf, line for line."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    buf = ctypes.create_string_buffer(64)
    for fmt in (b"%*.2f", b"%*.1f", b"%*.0f"):
        if libc.snprintf(buf, width + 1, fmt, ctypes.c_int(width), ctypes.c_double(value)) <= width:
            return buf.value.decode()
    libc.snprintf(buf, width + 1, b"%*.1e" if width >= 7 else b"%*.0e", ctypes.c_int(width), ctypes.c_double(value))
    return buf.value.decode()


@pytest.mark.skipif(not ctypes.util.find_library("c"), reason="no C library to run snprintf with")
def test_float_cells_match_nccl_tests_get_float_str():
    values = [0.0, 0.004, 0.005, 1.0, 9.995, 28.48, 999.994, 999.995, 9999.99, 9999.996, 10_000.0, 10_585.04,
              99_999.95, 167_992.3, 999_999.4, 9_999_999.0, 12_345_678.0, 3.2e11, 1e120]
    for value in values:
        for width in (6, 7):
            assert float_str(value, width) == _c_get_float_str(value, width), (value, width)


def test_alltoall_is_alltoall_perf_point_to_point_and_multi_node_nvls_is_nvls_tree():
    out = nccl("--op", "all_to_all", "--num-gpus", "16", "--min-bytes", "1M", "--max-bytes", "1G")
    assert "predicted alltoall_perf " in out and "Collective test starting: alltoall_perf" in out
    chosen = next(line for line in out.split("\n") if "algorithm/protocol chosen" in line)
    assert "p2p/" in chosen and "ring" not in chosen
    out = nccl("--op", "all_reduce", "--num-gpus", "16", "--algo", "nvls", "--min-bytes", "1G", "--max-bytes", "1G")
    chosen = next(line for line in out.split("\n") if "algorithm/protocol chosen" in line)
    assert "nvls_tree/Simple" in chosen
    out = nccl("--op", "all_reduce", "--num-gpus", "8", "--algo", "nvls", "--min-bytes", "1G", "--max-bytes", "1G")
    chosen = next(line for line in out.split("\n") if "algorithm/protocol chosen" in line)
    assert "nvls/Simple" in chosen and "nvls_tree" not in chosen


def test_send_recv_is_a_pair():
    out = nccl("--op", "send_recv", "--num-gpus", "2", "--min-bytes", "1M", "--max-bytes", "2M")
    rows = [parse_row(line) for line in result_lines(out)]
    assert [r["count"] for r in rows] == ["262144", "524288"] and all(r["oop_algbw"] == r["oop_busbw"] for r in rows)
    code, _, err = run_cli("nccl", H100_64, "--op", "send_recv", "--num-gpus", "4")
    assert code == 65 and "--num-gpus 2" in err and "Traceback" not in err


def test_json_has_the_shape_of_nccl_tests_output_file():
    """util.cu with -J out.json: the top-level keys in order, config, results with
    out_of_place/in_place {time, alg_bw, bus_bw, nwrong}; and Designer's rows beside them."""
    data = json.loads(nccl("--op", "reduce_scatter", "--num-gpus", "16", "--min-bytes", "8", "--max-bytes", "16G",
                           "--json"))
    assert list(data) == ["version", "start_time", "args", "env", "nccl_version", "config", "results",
                          "out_of_bounds", "average_bus_bandwidth", "errors", "end_time", "designer_rows"]
    assert data["version"] == 3 and data["args"][0] == "reduce_scatter_perf"
    assert list(data["config"]) == ["nthreads", "ngpus", "minimum_bytes", "maximum_bytes", "step_factor",
                                    "warmup_iters", "iterations", "aggregated_iterations", "validation", "graph",
                                    "blocking_collectives", "per_iter_timing", "per_iter_skip", "parallel_init",
                                    "devices"]
    assert (data["config"]["minimum_bytes"], data["config"]["maximum_bytes"]) == (8, 16 * 2**30)
    devices = data["config"]["devices"]
    assert len(devices) == 16 and list(devices[0]) == ["rank", "group", "pid", "hostname", "device", "device_hex",
                                                        "device_info"]
    assert len({d["hostname"] for d in devices}) == 2 and [d["device"] for d in devices[8:]] == list(range(8))
    results = data["results"]
    assert len(results) == 32
    for r in results:
        assert list(r) == ["size", "count", "type", "redop", "root", "out_of_place", "in_place",
                           "actual_iterations", "experiment_name"]
        assert list(r["out_of_place"]) == ["time", "alg_bw", "bus_bw", "nwrong"] and r["out_of_place"]["nwrong"] is None
        assert r["root"] == "    -1" and r["redop"] == "sum" and r["type"] == "float"
    one_gib = next(r for r in results if r["size"] == 2**30)
    assert one_gib["count"] == 16777216
    assert abs(one_gib["out_of_place"]["bus_bw"] - one_gib["out_of_place"]["alg_bw"] * 15 / 16) < 1e-5
    assert data["out_of_bounds"] == {"count": 0, "okay": "true"}
    assert data["average_bus_bandwidth"]["okay"] == "unchecked"
    # the same numbers as the table, and Designer's rows under their documented key
    table = [parse_row(line) for line in result_lines(nccl("--op", "reduce_scatter", "--num-gpus", "16",
                                                            "--min-bytes", "8", "--max-bytes", "16G"))]
    assert [int(t["count"]) for t in table] == [r["count"] for r in results]
    assert [float_str(r["out_of_place"]["time"], 7).strip() for r in results] == [t["oop_time"] for t in table]
    rows = data["designer_rows"]
    assert [r["size_bytes"] for r in rows] == [r["size"] for r in results]
    assert all({"size_bytes", "time_us", "algbw", "busbw", "algorithm", "protocol"} <= set(r) for r in rows)


def test_readme_nccl_block_is_what_the_command_prints():
    spec = importlib.util.spec_from_file_location("make_docs", ROOT / "docs" / "make_docs.py")
    make_docs = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(ROOT / "docs"))
    old = os.getcwd()
    try:
        spec.loader.exec_module(make_docs)
        os.chdir(ROOT)
        body = make_docs.make_text({"cli-nccl"})["cli-nccl"]
    finally:
        os.chdir(old)
        sys.path.remove(str(ROOT / "docs"))
    readme = (ROOT / "README.md").read_text()
    assert f"<!-- generated:cli-nccl -->\n{body}\n<!-- /generated:cli-nccl -->" in readme, (
        "README block cli-nccl is stale: run python docs/make_docs.py --text")


def test_max_bytes_beyond_gpu_memory_is_reduced_as_nccl_tests_does():
    """common.cu: reserve 1 GiB per 16 GiB (at most 4 GiB), then (maxMem - reserve - 1 GiB) / 2
    without validation; it prints "# Reducing maxBytes to %ld due to memory limitation"."""
    from designer.core.model.catalog import default_catalog

    gib = 2**30
    mem = int(default_catalog().accelerator("H100-SXM5-80GB").hbm_gib * gib)
    limit = (mem - min(-(-mem // (16 * gib)) * gib, 4 * gib) - gib) // 2
    out = nccl("--op", "all_reduce", "--num-gpus", "8", "--min-bytes", "16G", "--max-bytes", "1e30")
    assert f"# Reducing maxBytes to {limit} due to memory limitation" in out
    sizes = [int(parse_row(line)["size"]) for line in result_lines(out)]
    assert sizes == [16 * gib, 32 * gib] and all(s <= limit for s in sizes)
