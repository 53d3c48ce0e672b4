"""Hostile input files: each is refused at load with exit 65 and FILE:LINE:COLUMN (or FILE: reason),
never a traceback, a hang or a blown memory."""
import os
import re
import threading
import time

import pytest

from designer.core.io import files, yaml_source
from tests.conftest import SMALL, run_cli

HEADER = "apiVersion: designer/v1\nkind: Cluster\nmetadata: {name: hostile}\nspec:\n"
# one element per line, as Designer saves: the fast loader's layout
FAST = HEADER + """\
  racks: []
  nodes:
  - {"id": "n0", "accelerator": "H100"}
  switches: []
  links: []
"""
BOMB = """\
    a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
    b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
    c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
    d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
    e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
    f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
    g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
    h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
    i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
"""
LOCATED = re.compile(r"^(?P<file>.+):(?P<line>\d+):(?P<column>\d+): invalid YAML: ", re.M)


def validate(path, timeout_s=60.0):
    """`designer validate PATH` in a thread: (exit code, stderr), or a failure if it hangs."""
    result = {}
    worker = threading.Thread(target=lambda: result.update(out=run_cli("validate", path)), daemon=True)
    start = time.monotonic()
    worker.start()
    worker.join(timeout_s)
    assert not worker.is_alive(), f"designer validate {path} still running after {timeout_s:.0f} s"
    code, _, err = result["out"]
    assert "Traceback" not in err and "internal error" not in err, err
    return code, err, time.monotonic() - start


def located_line(err):
    m = LOCATED.search(err)
    assert m, f"no FILE:LINE:COLUMN in {err!r}"
    return int(m["line"])


@pytest.mark.slow
@pytest.mark.parametrize("style", ["flow", "block", "fast-line"])
def test_ten_thousand_nested_lists_exit_65_with_the_position(tmp_path, style):
    path = tmp_path / "deep.yaml"
    if style == "flow":
        path.write_text(HEADER + "  layout: " + "[" * 10_000 + "]" * 10_000 + "\n")
    elif style == "block":
        path.write_text(HEADER + "  layout:\n" + "".join("  " * (i + 2) + "-\n" for i in range(10_000)))
    else:  # inside an element line, which the fast loader decodes as JSON
        path.write_text(FAST.replace('"H100"}', '"H100", "x": ' + "[" * 10_000 + "]" * 10_000 + "}"))
    code, err, _ = validate(path)
    assert code == 65, err
    assert located_line(err) >= 5
    assert f"nested more than {yaml_source.MAX_DEPTH} levels deep" in err


def test_nesting_just_past_the_bound_is_placed_on_its_line(tmp_path):
    path = tmp_path / "deep.yaml"
    path.write_text(HEADER + "  calibration: {}\n  layout:\n    view: " + "[" * 80 + "]" * 80 + "\n")
    code, err, _ = validate(path)
    assert code == 65 and located_line(err) == 7, err


@pytest.mark.parametrize("layout", ["fast", "block"])
def test_alias_bomb_in_layout_is_refused_quickly(tmp_path, layout):
    path = tmp_path / "bomb.yaml"
    base = FAST if layout == "fast" else HEADER + "  nodes:\n  - id: n0\n    accelerator: H100\n"
    path.write_text(base + "  layout:\n" + BOMB)
    bomb_first_line = base.count("\n") + 2
    code, err, elapsed = validate(path, timeout_s=60)
    assert code == 65, err
    assert "aliases (*name) expand this value" in err and "at most 1,000,000" in err
    assert bomb_first_line <= located_line(err) <= bomb_first_line + 8
    assert elapsed < 30


def test_an_alias_that_contains_itself_is_refused(tmp_path):
    path = tmp_path / "loop.yaml"
    path.write_text(HEADER + "  layout: &a [1, *a]\n")
    code, err, _ = validate(path)
    assert code == 65 and "refers to the value that contains it" in err and located_line(err) == 5


def test_modest_aliases_still_load():
    text = SMALL + "  layout:\n    base: &v {zoom: 1.5}\n    copy: *v\n"
    doc = files.loads_document(text, "aliases.yaml")
    assert doc.spec.layout["copy"] == {"zoom": 1.5}


def test_dev_zero_is_refused_before_reading():
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero on this system")
    code, err, _ = validate("/dev/zero", timeout_s=30)
    assert code == 65 and "/dev/zero: is a device, not a regular file" in err


def test_a_fifo_is_refused_without_blocking(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this system")
    fifo = tmp_path / "design.yaml"
    os.mkfifo(fifo)
    try:
        code, err, _ = validate(fifo, timeout_s=20)
    finally:  # should the old code block in open(), a writer releases it
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK) if _has_reader(fifo) else None
        if fd is not None:
            os.close(fd)
    assert code == 65 and "is a pipe (FIFO), not a regular file" in err


def _has_reader(fifo) -> bool:
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        return True
    except OSError:
        return False


def test_a_file_above_the_size_limit_is_refused_naming_the_limit(tmp_path):
    path = tmp_path / "huge.yaml"
    with open(path, "wb") as fh:  # sparse: no disk space used
        fh.truncate(files.MAX_FILE_BYTES + 1)
    code, err, _ = validate(path)
    assert code == 65 and "the limit is 512 MiB" in err


def test_a_deep_set_value_is_bad_input_not_an_internal_error(tmp_path):
    path = tmp_path / "small.yaml"
    path.write_text(SMALL)
    code, _, err = run_cli("evaluate", path, "--set", "workload.global_batch_size=" + "[" * 5000 + "]" * 5000)
    assert code == 65 and "internal error" not in err, err


@pytest.mark.slow
def test_many_duplicate_ids_are_reported_in_linear_time_and_capped(tmp_path):
    """80k repeated link ids took minutes (a quadratic suggestion per repeat) and listed every one."""
    links = "".join(f'  - {{"id": "l", "a": "n{i % 2}", "b": "n{(i + 1) % 2}", "kind": "nvlink", "bandwidth_gbps": 400}}\n'
                    for i in range(20_000))
    path = tmp_path / "dups.yaml"
    path.write_text(HEADER + "  nodes:\n  - {\"id\": \"n0\", \"accelerator\": \"H100\"}\n"
                    "  - {\"id\": \"n1\", \"accelerator\": \"H100\"}\n  links:\n" + links)
    code, err, elapsed = validate(path, timeout_s=120)
    assert code == 65
    duplicates = [line for line in err.splitlines() if "duplicate id 'l'" in line]
    assert len(duplicates) == 100
    assert "... and 19,899 more duplicate ids (19,999 in all" in err
    suggestions = re.findall(r"rename it, e.g. (\w+)", err)
    assert len(set(suggestions)) == len(suggestions) == 100  # each suggestion is a free id
    assert elapsed < 20, f"{elapsed:.1f} s"
