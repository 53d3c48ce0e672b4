"""Benchmark: one evaluation of the job Calculon's paper costs, against Calculon's own CPU time.

    .venv/bin/python benchmarks/bench_calculon.py [--repeat N]

GPT-3 175B on 1,024 A100 (resources/examples/a100-1024gpu-rail-infiniband.yaml: TP 8, PP 8,
interleaved with 3 virtual stages, GBS 1536). Calculon (github.com/calculon-ai/calculon) costs one
plan in 3.0-3.7 ms of CPU on this machine; it has no network topology: a system is a
few bandwidth and latency numbers per tier. CPU time (time.process_time), median of N:

- cold: a new Engine and every module memo cleared: reads the fabric of 1,024 GPUs and 1,200+
  cables into arrays (Calculon does no such work), then costs the plan;
- new plan: the fabric, its hardware and the engine constants kept (they follow the design, not
  the plan), every memo of plans cleared (placement, groups, schedules, layer phases, stage
  parameters): what each plan of a search or each Job-panel edit costs first time;
- new plan, no detail: the same with Engine(detail=False), as a plan search costs a plan (no
  per-link loads, bottlenecks or timeline: what Calculon does not compute either);
- again: the same plan on the same design (everything reused);
- link change: one NIC cable's bandwidth halved, then costed again.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_engine import clear_caches  # noqa: E402
from designer.core.engine import constants  # noqa: E402
from designer.core.engine.evaluate import Engine  # noqa: E402
from designer.core.io import load_document  # noqa: E402

EXAMPLE = ROOT / "resources/examples/a100-1024gpu-rail-infiniband.yaml"


def cpu_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return statistics.median(times) * 1e3


def forget_plans(engine: Engine) -> None:
    """What an engine knows of plans, not of the design: the fabric, the hardware read from its
    servers and the engine constants of its calibration stay (no plan changes them: a search's
    plans and a Job-panel edit read them from the engine's memos)."""
    hardware = list(engine.cache.hardware)
    design_constants = list(constants._ENGINE_CONSTANTS)
    clear_caches()
    constants._ENGINE_CONSTANTS[:] = design_constants
    engine.cache.groups.clear()
    engine.cache.clear()
    engine.cache.hardware[:] = hardware


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=21)
    args = ap.parse_args(argv)
    doc = load_document(EXAMPLE)
    Engine().evaluate(doc)  # imports and first-call work out of the figures

    def cold():
        clear_caches()
        Engine().evaluate(doc)

    engine = Engine()
    step_s = engine.evaluate(doc).step_time_s

    def new_plan():
        forget_plans(engine)
        engine.evaluate(doc)

    nic = next(l for l in doc.links if l.a.split(":")[0] in {n.id for n in doc.nodes})
    flips = []

    def link_change():
        flips.append(1)
        doc.update(nic.id, bandwidth_gbps=nic.bandwidth_gbps / 2 if len(flips) % 2 else nic.bandwidth_gbps * 2)
        engine.evaluate(doc)

    lean = Engine(detail=False)
    lean.evaluate(doc)

    def new_plan_lean():
        forget_plans(lean)
        lean.evaluate(doc)

    figures = {"cold_cpu_ms": cpu_ms(cold, args.repeat), "new_plan_cpu_ms": cpu_ms(new_plan, args.repeat),
               "new_plan_no_detail_cpu_ms": cpu_ms(new_plan_lean, args.repeat)}
    engine.evaluate(doc)
    figures["again_cpu_ms"] = cpu_ms(lambda: engine.evaluate(doc), args.repeat)
    figures["link_change_cpu_ms"] = cpu_ms(link_change, args.repeat)
    print("  ".join(f"{k} {v:.2f}" for k, v in figures.items()) + f"  (step {step_s:.2f} s; Calculon 3.0-3.7 ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
