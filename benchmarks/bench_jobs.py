"""Benchmark: several jobs on one 16,384-GPU fabric (a script, not a test).

    .venv/bin/python benchmarks/bench_jobs.py [--repeat N]

2,048 H100 servers on a rail-optimized 3-tier InfiniBand fat-tree; 1, 4 or 16 jobs of GPT-3 175B
(TP 8, PP 8 interleaved, the rest DP) that share its 16,384 GPUs equally, half of them placed
`spread` (so that they meet on the up-links). Target: 16 jobs in at most 4x the time of
one. `--congested`: the same on RoCE (Ethernet, ECMP) with 2:1 oversubscribed leaves, where the
jobs do slow each other (each job is then costed twice: alone and under the others' traffic).
"first" is a new Engine on the design (it builds the fabric and every job's groups);
"again" re-evaluates the same document; "spine down" marks one spine down and re-evaluates.
Prints one JSON line per case, milliseconds.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from designer.core.engine.evaluate import Engine  # noqa: E402
from designer.core.generate import generate_fat_tree  # noqa: E402
from designer.core.model import Parallelism, Workload  # noqa: E402
from designer.core.model.jobs import JobPlacement, JobSpec  # noqa: E402

PLAN = Parallelism(tensor_model_parallel_size=8, pipeline_model_parallel_size=8,
                   virtual_pipeline_model_parallel_size=12, pipeline_schedule="interleaved", sequence_parallel=True,
                   use_distributed_optimizer=True, overlap_grad_reduce=True, overlap_param_gather=True,
                   recompute_granularity="selective")


def jobs(count: int, gpus: int) -> list[JobSpec]:
    each = gpus // count
    return [JobSpec(f"job{i}", Workload(preset="gpt3-175b", global_batch_size=max(64, each // 8), micro_batch_size=1),
                    PLAN, JobPlacement(policy="spread" if i % 2 else "packed", gpus=each)) for i in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--congested", action="store_true", help="RoCE, 2:1 oversubscribed leaves")
    args = parser.parse_args()
    if args.congested:
        doc = generate_fat_tree(nodes=2048, gpu="H100", nic_gbps=400, fabric="ethernet", switch_radix=64,
                                oversubscription=2.0)
    else:
        doc = generate_fat_tree(nodes=2048, gpu="H100", nic_gbps=400, fabric="infiniband", switch_radix=64)
    spine = next(s.id for s in doc.switches if s.tier == "spine")
    for count in (1, 4, 16):
        doc.set_jobs(jobs(count, doc.num_gpus()))
        first, again, down = [], [], []
        for _ in range(args.repeat):
            engine = Engine()
            t0 = time.perf_counter()
            result = engine.evaluate(doc)
            first.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            engine.evaluate(doc)
            again.append(time.perf_counter() - t0)
            doc.update(spine, state="down")
            t0 = time.perf_counter()
            engine.evaluate(doc)
            down.append(time.perf_counter() - t0)
            doc.update(spine, state="up")
        slow = max(j.slowdown_vs_alone for j in result.jobs)
        print(json.dumps({"gpus": doc.num_gpus(), "fabric": "congested" if args.congested else "non-blocking",
                          "jobs": count, "first_ms": round(statistics.median(first) * 1e3, 1),
                          "again_ms": round(statistics.median(again) * 1e3, 1),
                          "spine_down_ms": round(statistics.median(down) * 1e3, 1),
                          "worst_slowdown": round(slow, 4)}), flush=True)


if __name__ == "__main__":
    main()
