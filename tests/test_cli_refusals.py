"""Out-of-range flags, hostile --set values and odd inputs: each is refused with a message that names
the flag or FILE:LINE:COLUMN and the fix, never a traceback, and nothing out of range is written."""
import contextlib
import io
import json
import os

import pytest

from designer.cli import main
from tests.conftest import EXAMPLES

EXAMPLE = EXAMPLES / "h100-64gpu-infiniband.yaml"


def cli(*args):
    """(exit code, stdout, stderr) of the CLI in-process, argparse's own exits included."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("size", ["1e400", "inf", "nan"])
def test_a_size_that_is_no_number_of_bytes_is_a_usage_error_not_a_traceback(size):
    code, _, err = cli("nccl", EXAMPLE, "--op", "all_reduce", "--max-bytes", size)
    assert code == 2
    assert "--max-bytes" in err and "Traceback" not in err and "OverflowError" not in err


def test_a_size_beyond_the_gpus_memory_is_reduced_as_nccl_tests_does():
    code, out, _ = cli("nccl", EXAMPLE, "--op", "all_reduce", "--min-bytes", "1G", "--max-bytes", "2T")
    assert code == 0 and "# Reducing maxBytes to" in out


@pytest.mark.parametrize("flag, value", [("--usd-per-kwh", "1e308"), ("--usd-per-kwh", "inf"),
                                         ("--usd-per-kwh", "-1"), ("--years", "1e-300"), ("--years", "nan")])
def test_cost_refuses_prices_and_periods_that_make_infinite_dollars(flag, value):
    code, out, err = cli("cost", EXAMPLE, flag, value, "--json")
    assert code == 2 and flag in err and out == ""


def test_cost_json_is_finite_at_the_edge_of_the_ranges():
    code, out, _ = cli("cost", EXAMPLE, "--usd-per-kwh", "10", "--years", "0.1", "--json")
    assert code == 0
    json.loads(out, parse_constant=lambda name: pytest.fail(f"{name} in the JSON"))


def test_a_python_tag_in_a_set_value_is_bad_input_like_in_a_file():
    code, _, err = cli("evaluate", EXAMPLE, "--set",
                       'workload.global_batch_size=!!python/object/apply:os.system ["echo hi"]')
    assert code == 65
    assert "--set workload.global_batch_size" in err and "not allowed" in err and "internal error" not in err


@pytest.mark.parametrize("gbps", ["200000", "0.05"])
def test_generate_refuses_a_nic_speed_the_format_cannot_hold_and_writes_nothing(tmp_path, gbps):
    out = tmp_path / "big.yaml"
    code, _, err = cli("generate", "fat-tree", "-o", out, "--nodes", "8", "--gpu", "H100", "--nic-gbps", gbps)
    assert code == 65 and "NIC speed must be between" in err and "--nic-gbps" in err
    assert not out.exists()


def test_generate_at_the_fastest_speed_allowed_writes_a_design_that_validates(tmp_path):
    out = tmp_path / "fast.yaml"
    assert cli("generate", "fat-tree", "-o", out, "--nodes", "2", "--gpu", "H100", "--nic-gbps", "100000")[0] == 0
    assert cli("validate", out)[0] == 0


def test_a_control_character_is_placed_at_its_line_and_column(tmp_path):
    text = EXAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
    line = next(i for i, t in enumerate(text) if '"id":' in t)
    column = text[line].index('"id":') + 1
    text[line] = text[line][:column - 1] + "\x07" + text[line][column - 1:]
    bad = tmp_path / "bell.yaml"
    bad.write_text("".join(text), encoding="utf-8")
    code, _, err = cli("validate", bad)
    assert code == 65
    assert f"{bad}:{line + 1}:{column}: invalid YAML: control character U+0007" in err
    assert "position" not in err


def test_an_nccl_topology_nested_without_end_is_refused_at_its_line(tmp_path):
    deep = tmp_path / "deep.xml"
    deep.write_text('<system version="1">\n' + "<cpu>\n" * 100_000 + "</cpu>\n" * 100_000 + "</system>\n")
    design = tmp_path / "d.yaml"
    design.write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    code, _, err = cli("import", "nccl-topo", deep, "--into", design)
    assert code == 65
    assert f"{deep}:65:" in err and "nested more than 64" in err and "internal error" not in err
    assert design.read_text(encoding="utf-8") == EXAMPLE.read_text(encoding="utf-8")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are a POSIX thing")
def test_a_fifo_given_to_an_importer_is_named_as_what_the_importer_reads(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    code, _, err = cli("import", "ibnetdiscover", fifo, "-o", tmp_path / "out.yaml")
    assert code == 65
    assert "ibnetdiscover output is read only from a file" in err and "design" not in err
    assert not (tmp_path / "out.yaml").exists()
