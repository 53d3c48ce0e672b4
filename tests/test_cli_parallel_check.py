"""`designer evaluate` as a program: the check beside the evaluation (designer/cli/parallel_check.py),
and one BLAS thread. Each runs the command the way a user does, in a fresh process; the fork is
forced for the small examples (a large design or a free core decide it otherwise)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import EXAMPLES, ROOT

EXAMPLE = EXAMPLES / "h100-64gpu-infiniband.yaml"
# The command as a program, with the check's process id written to a file and the fork forced (FORK=1)
# or refused (FORK=0).
PROGRAM = """
import os, sys
import designer.cli as cli, designer.cli.job as job, designer.cli.parallel_check as parallel
checked = job.check_errors
def recording(doc):
    with open(os.environ["CHECK_PIDS"], "a") as fh:
        fh.write(f"{os.getpid()}\\n")
    return checked(doc)
job.check_errors = recording
parallel.forks = lambda doc: os.environ["FORK"] == "1"
with open(os.environ["CHECK_PIDS"], "a") as fh:
    fh.write(f"main {os.getpid()}\\n")
sys.exit(cli.main())
"""

needs_fork = pytest.mark.skipif(not hasattr(os, "fork") or not sys.platform.startswith("linux"),
                                reason="the check runs beside the evaluation only where the system forks")


def _run(tmp_path, design, fork: bool):
    pids = tmp_path / f"pids-{int(fork)}.txt"
    pids.unlink(missing_ok=True)
    env = dict(os.environ, CHECK_PIDS=str(pids), FORK="1" if fork else "0")
    done = subprocess.run([sys.executable, "-c", PROGRAM, "evaluate", str(design), "--json"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    lines = pids.read_text().split()
    main_pid = lines[lines.index("main") + 1]
    check_pids = [p for p in lines if p not in ("main", main_pid)]
    return done, main_pid, check_pids


def _without_timing(text: str) -> dict:
    out = json.loads(text)
    out.pop("engine_time_s", None)
    return out


@needs_fork
def test_a_sound_design_is_checked_in_another_process_and_prints_the_same(tmp_path):
    together, main_pid, check_pids = _run(tmp_path, EXAMPLE, fork=True)
    assert together.returncode == 0, together.stderr
    assert check_pids and main_pid not in check_pids  # checked by the child, not again here
    alone, _, alone_pids = _run(tmp_path, EXAMPLE, fork=False)
    assert alone.returncode == 0 and alone_pids == []  # checked here (the recording names no other process)
    assert _without_timing(together.stdout) == _without_timing(alone.stdout)
    assert together.stderr == alone.stderr


@needs_fork
def test_a_design_the_check_refuses_is_refused_as_before(tmp_path):
    bad = tmp_path / "dangling.yaml"
    text = EXAMPLE.read_text()
    first_link = next(line for line in text.splitlines() if '"b": "leaf' in line)
    bad.write_text(text.replace(first_link, first_link.replace('"b": "leaf', '"b": "nowhere', 1), 1))
    together, main_pid, check_pids = _run(tmp_path, bad, fork=True)
    alone, _, _ = _run(tmp_path, bad, fork=False)
    assert check_pids and main_pid not in check_pids
    assert together.returncode == alone.returncode == 65
    assert together.stdout == alone.stdout == ""
    assert together.stderr == alone.stderr and "does not exist (dangling)" in together.stderr
    assert "Traceback" not in together.stderr


def test_numpy_starts_one_blas_thread_as_a_program(tmp_path):
    """No command multiplies large matrices; a BLAS thread per core cost 40-60 ms of every start."""
    program = ("import os, sys\nfrom designer.cli import main\ncode = main()\nimport numpy\n"
               "print(os.environ.get('OPENBLAS_NUM_THREADS'), len(os.listdir('/proc/self/task')))\n")
    if not os.path.isdir("/proc/self/task"):
        pytest.skip("counts threads in /proc")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    done = subprocess.run([sys.executable, "-c", program, "schema"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    value, threads = done.stdout.split()[-2:]
    assert value == "1" and threads == "1"
    kept = subprocess.run([sys.executable, "-c", program, "schema"], cwd=ROOT,
                          env=dict(env, OPENBLAS_NUM_THREADS="2"), capture_output=True, text=True, timeout=120)
    assert kept.stdout.split()[-2] == "2"  # the user's own setting stays


@needs_fork
def test_the_evaluation_of_a_refused_design_is_cut_short(tmp_path):
    """The child's errors interrupt an evaluation that would run on (here: 60 s of spinning)."""
    bad = tmp_path / "dangling.yaml"
    bad.write_text(EXAMPLE.read_text().replace('"b": "leaf0:p0"', '"b": "nowhere:p0"', 1))
    program = ("import sys, time\nimport designer.cli.parallel_check as parallel\n"
               "parallel.forks = lambda doc: True\nimport designer.core.engine.evaluate as ev\n"
               "def spin(self, doc):\n    end = time.time() + 60\n    while time.time() < end:\n        sum(range(100))\n"
               "ev.Engine.evaluate = spin\nfrom designer.cli import main\nsys.exit(main())\n")
    done = subprocess.run([sys.executable, "-c", program, "evaluate", str(bad), "--json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=50)
    assert done.returncode == 65 and done.stdout == ""
    assert "link l0 ends at 'nowhere', which does not exist (dangling)" in done.stderr
