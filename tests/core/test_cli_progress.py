"""Long CLI work reports progress on stderr when stderr is a terminal, and is quiet otherwise.

The terminal is a real pseudo-terminal (os.openpty): the CLI runs in-process with stderr on its
slave end, and a thread drains the master end as a terminal would.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
import threading

import pytest

from designer.cli import main
from tests.conftest import EXAMPLES, SMALL, run_cli

EXAMPLE = EXAMPLES / "h100-64gpu-infiniband.yaml"


def run_on_terminal(*args: str) -> tuple[int, str, str]:
    """(exit code, stdout, what the terminal showed on stderr)."""
    master, slave = os.openpty()
    shown = bytearray()

    def drain():
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the slave end closed
                return
            if not chunk:
                return
            shown.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    out = io.StringIO()
    terminal = os.fdopen(slave, "w", encoding="utf-8", buffering=1)
    try:
        assert terminal.isatty()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(terminal):
            code = main([str(a) for a in args])
    finally:
        terminal.close()
        reader.join(5)
        os.close(master)
    return code, out.getvalue(), shown.decode("utf-8", "replace")


def commands(tmp_path):
    small = tmp_path / "small.yaml"
    small.write_text(SMALL)
    return {
        "advise": ["advise", EXAMPLE, "--no-scale"],
        "scale": ["scale", EXAMPLE, "--gpus", "64,128"],
        # one server's 8 GPUs and a small batch: a real search of a few hundred plans, ~1 s
        "search": ["search", small, "--workers", "1", "--top", "1", "--set", "parallelism.num_gpus=8",
                   "--set", "workload.global_batch_size=8"],
        "generate": ["generate", "fat-tree", "-o", tmp_path / "gen.yaml", "--nodes", "4", "--gpu", "H100"],
        "validate": ["validate", EXAMPLE],
    }


# the search's progress takes seconds: a slow test
COMMANDS = ["advise", "scale", pytest.param("search", marks=pytest.mark.slow), "generate", "validate"]


@pytest.mark.parametrize("command", COMMANDS)
def test_progress_on_a_terminal(tmp_path, command):
    code, out, shown = run_on_terminal(*commands(tmp_path)[command])
    assert code == 0, shown
    assert f"\r{command}: " in shown  # the progress line, redrawn in place
    # the line is erased at the end: what the command prints after it starts clean
    last = shown.rsplit(f"{command}: ", 1)[1]
    erased = re.search(r"\r +\r", last)
    assert erased is not None
    assert not re.search(r"\(\d+ s\)", last[erased.end():])


def test_advise_counts_the_changes_on_a_terminal(tmp_path):
    code, _, shown = run_on_terminal(*commands(tmp_path)["advise"])
    assert code == 0
    assert "advise: loading" in shown and "advise: evaluating the step on 64 GPUs" in shown
    assert " changes costed (" in shown


@pytest.mark.parametrize("command", COMMANDS)
def test_quiet_when_stderr_is_not_a_terminal(tmp_path, command):
    code, out, err = run_cli(*commands(tmp_path)[command])
    assert code == 0, err
    assert "\r" not in err and f"{command}: " not in err
    assert "costed" not in err and "loading" not in err


def test_the_same_output_with_and_without_a_terminal(tmp_path):
    args = commands(tmp_path)["scale"] + ["--json"]
    _, out_terminal, _ = run_on_terminal(*args)
    _, out_pipe, _ = run_cli(*args)
    terminal, pipe = json.loads(out_terminal), json.loads(out_pipe)
    for report in (terminal, pipe):
        report.pop("elapsed_s", None)
    assert terminal == pipe and pipe["rows"]
