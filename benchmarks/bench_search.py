"""Plan search on the 1,024-GPU example (GPT-3 175B on A100, 3-tier rail-optimized HDR).

Target (the advisor issue): a space of at least 10,000 candidate plans on a 1,024-GPU
cluster searched within 10 s on this machine. Prints the space's counts, how many plans the
engine costed, and the wall time, for local pools of 1 and 2 processes.
"""
import time
from pathlib import Path

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


if __name__ == "__main__":
    main()
