"""Plan search on the 1,024-GPU example (GPT-3 175B on A100, 3-tier rail-optimized HDR).

Target: a space of at least 10,000 candidate plans on a 1,024-GPU
cluster searched within 10 s on this machine. Prints the space's counts, how many plans the
engine costed, and the wall time, for local pools of 1 and 2 processes.

    .venv/bin/python benchmarks/bench_search.py            # the table above
    .venv/bin/python benchmarks/bench_search.py --rate     # plans per CPU-second, one process, 3 runs
    .venv/bin/python benchmarks/bench_search.py --worker-memory FILE
                                                           # a 2-worker search's largest worker peak RSS

Targets: at least 500 plans per CPU-second at 1,024 GPUs; at most 300 MB per search
worker at 16,384 GPUs (a pool worker holds the design, read from the text it is sent once, and
the engine's caches of placements, groups and schedules).
"""
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this tree's package, not an installed one

from designer.core.analysis.search import search
from designer.core.io import load_document

EXAMPLE = Path(__file__).resolve().parents[1] / "resources" / "examples" / "a100-1024gpu-rail-infiniband.yaml"


def main() -> None:
    doc = load_document(EXAMPLE)
    print(f"plan search, {doc.num_gpus()} GPUs, {EXAMPLE.name}")
    for workers in (2, 1):
        for top in (10, 1):
            t0 = time.perf_counter()
            r = search(doc, top=top, workers=workers)
            wall = time.perf_counter() - t0
            c = r.counts
            rate = r.evaluated / wall
            print(f"  workers {workers}, top {top:2}: {wall:5.1f} s wall | space {c.total:,} plans: "
                  f"{c.invalid:,} impossible, {c.no_memory:,} out of memory, {c.dominated:,} dominated, "
                  f"{c.candidates:,} candidates; {r.evaluated:,} costed ({rate:,.0f}/s), "
                  f"{r.cut_by_bound:,} cut by the bound; best {r.top[0]['step_time_s']:.3f} s "
                  f"(file's plan {r.current['step_time_s']:.3f} s)")


def rate(runs: int = 3) -> None:
    """Plans costed per CPU-second of this process (the search in it: workers=1): the first search
    of a fresh process (every memo cold, as a new pool worker's), then again (memos warm)."""
    doc = load_document(EXAMPLE)
    for run in range(runs + 1):
        t0 = time.process_time()
        r = search(doc, top=10, workers=1)
        cpu = time.process_time() - t0
        print(json.dumps({"gpus": doc.num_gpus(), "run": "first" if run == 0 else "again", "costed": r.evaluated,
                          "cpu_s": round(cpu, 3), "plans_per_cpu_s": round(r.evaluated / cpu)}), flush=True)


def worker_memory(path: str) -> None:
    """A search of FILE with a pool of 2 worker processes: the largest worker's peak resident memory
    (the pool is shut down when search returns; RUSAGE_CHILDREN then holds its largest child's)."""
    code = ("import resource, sys, time; sys.path.insert(0, %r)\n"
            "from designer.core.analysis.search import search\n"
            "from designer.core.io import load_document\n"
            "t = time.perf_counter(); r = search(load_document(%r), top=10, workers=2)\n"
            "print(r.evaluated, round(time.perf_counter() - t, 1),"
            " resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024,"
            " resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)")
    out = subprocess.run([sys.executable, "-c", code % (str(Path(__file__).resolve().parents[1]), path)],
                         capture_output=True, text=True, check=True).stdout.split()
    print(json.dumps({"file": path, "costed": int(out[0]), "wall_s": float(out[1]),
                      "worker_peak_rss_mb": int(out[2]), "parent_peak_rss_mb": int(out[3])}))


if __name__ == "__main__":
    if "--rate" in sys.argv:
        rate()
    elif "--worker-memory" in sys.argv:
        worker_memory(sys.argv[sys.argv.index("--worker-memory") + 1])
    else:
        main()
