"""Benchmark: generate+save and load+validate large fat-trees (a script, not a test).

    make bench        (or .venv/bin/python benchmarks/bench_foundation.py [--repeat N])

Targets: 16,384 GPUs (2,048 servers, radix 64, 3 tiers) generate + save under 2 s and
load + validate under 1 s; 131,072 GPUs (16,384 servers, radix 128) are measured too.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from designer.core.generate import generate_fat_tree  # noqa: E402
from designer.core.io import load_document, save_document  # noqa: E402
from designer.core.design_check import check_document  # noqa: E402

CASES = [
    ("16,384 GPUs", dict(nodes=2048, gpu="H100", switch_radix=64)),
    ("131,072 GPUs", dict(nodes=16384, gpu="H100", switch_radix=128)),
]


def _best(fn, repeat: int):
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def run(repeat: int) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, kw in CASES:
            t_gen, doc = _best(lambda: generate_fat_tree(**kw), repeat)
            path = Path(tmp) / f"fat-tree-{kw['nodes']}.yaml"
            t_save, _ = _best(lambda: save_document(doc, path), repeat)
            size_mb = os.path.getsize(path) / 1e6
            t_load, loaded = _best(lambda: load_document(path), repeat)
            assert loaded == doc, "load(save(doc)) differs from doc"
            t_check, problems = _best(lambda: check_document(loaded), repeat)
            assert not problems, problems[:3]
            c = doc.counts()
            rows.append(dict(label=label, radix=kw["switch_radix"], tiers=len({s.tier for s in doc.switches}),
                             switches=c["switches"], links=c["links"], cables=c["cables"], racks=c["racks"],
                             generate=t_gen, save=t_save, load=t_load, check=t_check, size_mb=size_mb))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per step; the best time is shown")
    args = ap.parse_args(argv)
    rows = run(args.repeat)
    head = (f"{'cluster':>13} {'radix':>5} {'tiers':>5} {'switches':>8} {'links':>8} {'cables':>8} {'racks':>6} "
            f"{'generate s':>10} {'save s':>7} {'gen+save':>8} {'load s':>7} {'check s':>7} {'load+chk':>8} {'file MB':>7}")
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['label']:>13} {r['radix']:>5} {r['tiers']:>5} {r['switches']:>8,} {r['links']:>8,} "
              f"{r['cables']:>8,} {r['racks']:>6,} {r['generate']:>10.3f} {r['save']:>7.3f} "
              f"{r['generate'] + r['save']:>8.3f} {r['load']:>7.3f} {r['check']:>7.3f} {r['load'] + r['check']:>8.3f} "
              f"{r['size_mb']:>7.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
