"""Benchmark: engine time of `evaluate` on generated clusters (a script, not a test).

    .venv/bin/python benchmarks/bench_engine.py [--repeat N]

GPT-3 175B, TP 8, PP 8 interleaved (12 chunks per stage), DP the rest, on rail-optimized
InfiniBand fat-trees of 1,024, 16,384 and 131,072 H100 GPUs. Targets: 20 ms, 100 ms, 1 s;
re-evaluation after one link's bandwidth changes: 5 ms at 1,024 GPUs. "first" is a new
Engine on a freshly loaded file (it builds the fabric); "again" re-evaluates the same
document; "link change" halves one NIC cable and re-evaluates. "first" clears the engine's
module-level memos (schedule structures, parameter counts) before each run.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from designer.core.engine.evaluate import Engine  # noqa: E402
from designer.core.generate import generate_fat_tree  # noqa: E402
from designer.core.io.overrides import apply_overrides  # noqa: E402

CASES = [(1024, 128, 64), (16384, 2048, 64), (131072, 16384, 128)]
JOB = ["workload.preset=gpt3-175b", "parallelism.tensor_model_parallel_size=8",
       "parallelism.pipeline_model_parallel_size=8", "parallelism.virtual_pipeline_model_parallel_size=12",
       "parallelism.pipeline_schedule=interleaved", "parallelism.sequence_parallel=true",
       "parallelism.use_distributed_optimizer=true", "parallelism.overlap_grad_reduce=true",
       "parallelism.overlap_param_gather=true", "parallelism.recompute_granularity=selective"]


def clear_caches(schedule_shapes: bool = True) -> None:
    """Forget every memo the engine keeps between evaluations, so that "first" is cold.
    `schedule_shapes=False`: the pipeline schedules' structures (op orders and dependencies, a pure
    function of the schedule, PP, micro-batches and VP) stay."""
    from designer.core.engine import memory, schedule

    shape_memos = ((schedule, "_structure_of"), (schedule, "_orders_of")) if schedule_shapes else ()
    for module, name in ((schedule, "_STRUCTURES"), (schedule, "_ORDERS"), (memory, "_SHAPES")):
        getattr(module, name, {}).clear()  # the module-level memos of older trees, where they exist
    for module, name in (*shape_memos, (memory, "_stage_parameters")):
        getattr(getattr(module, name, None), "cache_clear", lambda: None)()
    from designer.core.engine import constants
    from designer.core.engine.stages import dp, layout
    for module, name in ((dp, "_STAGE_PARAMS"), (constants, "_ENGINE_CONSTANTS"), (layout, "_STAGE_LAYERS")):
        getattr(module, name, []).clear()
    getattr(getattr(layout, "_kept_stage_layers", None), "cache_clear", lambda: None)()
    try:  # a tree from before the document owned its parsed link ends: a module memo
        from designer.core.model import endpoints
    except ImportError:  # a tree from before it
        return
    getattr(endpoints, "_memo", []).clear()


def timed(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times), result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    print(f"{'GPUs':>8} {'DP':>5} {'micro':>6} {'first ms':>9} {'again ms':>9} {'link change ms':>15} {'step s':>8} {'MFU':>6}")
    for gpus, nodes, radix in CASES:
        doc = generate_fat_tree(nodes=nodes, gpu="H100", switch_radix=radix)
        dp = gpus // 64
        apply_overrides(doc, JOB + [f"workload.global_batch_size={max(1536, 16 * dp)}"])
        def cold():
            clear_caches()
            if hasattr(doc, "link_ends"):  # the design's links' ends, parsed once (model/endpoints.py)
                doc.link_ends = type(doc.link_ends)()
            return Engine().evaluate(doc)

        first = min(timed(cold, 1)[0] for _ in range(max(1, args.repeat // 2)))
        engine = Engine()
        engine.evaluate(doc)
        again, _, result = timed(lambda: engine.evaluate(doc), args.repeat)
        nic = doc.links[0]
        changes = []

        def change_and_evaluate():
            value = nic.bandwidth_gbps / 2 if len(changes) % 2 == 0 else nic.bandwidth_gbps * 2
            changes.append(value)
            doc.update(nic.id, bandwidth_gbps=value)
            return engine.evaluate(doc)

        link, _, _ = timed(change_and_evaluate, args.repeat)
        print(f"{gpus:>8,} {dp:>5} {result.plan['num_microbatches']:>6} {first * 1e3:>9.1f} {again * 1e3:>9.1f} "
              f"{link * 1e3:>15.1f} {result.step_time_s:>8.3f} {result.mfu:>6.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
