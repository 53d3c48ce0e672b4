"""benchmarks/bench_live.py tells at which stage of a session (open, link edits, TP edits, deletes and
undos) the window's peak memory was reached: the peak so far is read at each rest."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_peak_memory_is_read_at_each_stage_of_the_session():
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_live.py"), "--one", "a100-1k",
                          "--reps", "1"], capture_output=True, text=True, cwd=ROOT, timeout=300,
                         env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert out.returncode == 0, out.stderr
    row = json.loads(out.stdout.strip().splitlines()[-1])
    stages = [row["peak_rss_mb_after_open"], row["peak_rss_mb_after_link_edits"],
              row["peak_rss_mb_after_tp_edits"], row["peak_rss_mb"]]
    assert stages == sorted(stages)  # a peak so far never falls
    assert row["peak_rss_mb_after_open"] >= row["rss_mb_after_open"] > 0
    assert row["peak_rss_mb_after_tp_edits"] >= row["rss_mb_after_tp_edits"]
