"""Benchmark: one evaluation of the job Calculon's paper costs, against Calculon's own CPU time.

    .venv/bin/python benchmarks/bench_calculon.py [--repeat N] [--calculon DIR [--calculon-python PY] [--rounds K]]

GPT-3 175B on 1,024 A100 (resources/examples/a100-1024gpu-rail-infiniband.yaml: TP 8, PP 8,
interleaved with 3 virtual stages, GBS 1536). Calculon (github.com/calculon-ai/calculon) costs one
plan in 3.0-3.7 ms of CPU on the machine first measured (--calculon measures it on this one);
it has no network topology: a system is a few bandwidth and latency numbers per tier. CPU time
(time.process_time), median of N:

- cold: a new Engine and every module memo cleared: reads the fabric of 1,024 GPUs and 1,200+
  cables into arrays (Calculon does no such work), then costs the plan;
- new plan: the fabric, its hardware and the engine constants kept (they follow the design, not
  the plan), every memo of plans cleared (placement, groups, schedules, layer phases, stage
  parameters): what each plan of a search or each Job-panel edit costs first time. The pipeline
  schedule's structure (its op orders and dependencies, a function of the schedule, PP, VP and the
  micro-batch count only, shared by every engine of the process) stays, as a search finds it: the
  1,024-GPU example's search ran 1,888 simulations on 75 such structures;
- new plan, new schedule shape: the same with that structure cleared too: what a plan of a shape
  not seen before pays (a Job-panel edit of PP, VP, the micro-batches or the schedule);
- new plan, no detail: the same with Engine(detail=False), as a plan search costs a plan (no
  per-link loads, bottlenecks or timeline: what Calculon does not compute either);
- again: the same plan on the same design (everything reused);
- link change: one NIC cable's bandwidth halved, then costed again.

With --calculon DIR (a checkout of Calculon's source; PY a Python that can import it, psutil
included), Calculon's own CPU per evaluation of the same job is measured on this machine too, in
K rounds alternated with our new plan's: per evaluation it builds Llm, compiles and runs the plan
and reads its stats, as its llm-optimal-execution search does per plan (the system and model
files read once), its logger at INFO as `calculon llm` has it; the figure with
llm-optimal-execution's logger (debug records made) is printed beside it. The job: Calculon's
models/gpt3-175B.json, systems/a100_80g.json and the execution below (selective recompute is its
attn_only; sequence parallelism its rs_ag). Calculon is not a dependency: nothing here imports it.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
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

# The example's job in Calculon's execution format (Llm.Execution's fields, all required).
CALCULON_EXECUTION = {
    "num_procs": 1024, "tensor_par": 8, "pipeline_par": 8, "data_par": 16,
    "tensor_par_net": 0, "pipeline_par_net": 1, "data_par_net": 1,
    "batch_size": 1536, "microbatch_size": 1, "datatype": "float16",
    "fused_activation": True, "attention_type": "multihead", "activation_recompute": "attn_only",
    "pipeline_interleaving": 3, "optimizer_sharding": True,
    "tensor_par_comm_type": "rs_ag", "tensor_par_overlap": "none", "seq_par_ag_redo": False,
    "data_par_overlap": True, "weight_offload": False, "activations_offload": False,
    "optimizer_offload": False, "training": True,
}

# Run in Calculon's own Python: argv is its source folder, the execution JSON and the repeat.
CALCULON_TIMER = """
import json, logging, os, statistics, sys, time
import calculon
from calculon.llm import Llm
src, exe_json, repeat = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
app = Llm.Application(calculon.io.read_json_file(os.path.join(src, 'models/gpt3-175B.json')))
syst = calculon.System(calculon.io.read_json_file(os.path.join(src, 'systems/a100_80g.json')))
def median_ms(logger):
    def once():
        model = Llm(app, logger)
        model.compile(syst, Llm.Execution.from_json(exe_json))
        model.run(syst)
        return model.get_stats_json(False)
    once()
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        once()
        times.append(time.process_time() - t0)
    return statistics.median(times) * 1e3, once()['total_time']
# bin/calculon's logger is at INFO (its default verbosity); llm-optimal-execution gives each plan a
# logging.Logger('sub'), level unset, so every debug line of the model makes a record.
llm_ms, step_s = median_ms(logging.Logger('llm', logging.INFO))
search_ms, _ = median_ms(logging.Logger('sub'))
print(json.dumps({'cpu_ms': llm_ms, 'search_cpu_ms': search_ms, 'step_s': step_s}))
"""


def calculon_cpu_ms(source: Path, python: str, repeat: int) -> dict:
    """Calculon's median CPU per evaluation (as `calculon llm` logs, and as its search logs) and its
    step time, run in its own process."""
    env = dict(os.environ, PYTHONPATH=str(source))
    out = subprocess.run([python, "-c", CALCULON_TIMER, str(source), json.dumps(CALCULON_EXECUTION), str(repeat)],
                         env=env, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def cpu_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return statistics.median(times) * 1e3


def forget_plans(engine: Engine, schedule_shapes: bool = False) -> None:
    """What an engine knows of plans, not of the design: the fabric, the hardware read from its
    servers and the engine constants of its calibration stay (no plan changes them: a search's
    plans and a Job-panel edit read them from the engine's memos), and the pipeline schedules'
    structures unless `schedule_shapes`."""
    hardware = list(engine.cache.hardware)
    design_constants = list(constants._ENGINE_CONSTANTS)
    clear_caches(schedule_shapes)
    constants._ENGINE_CONSTANTS[:] = design_constants
    engine.cache.groups.clear()
    engine.cache.clear()
    engine.cache.hardware[:] = hardware


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=21)
    ap.add_argument("--calculon", type=Path, help="a checkout of Calculon's source, to time it on this machine")
    ap.add_argument("--calculon-python", default=sys.executable, help="a Python that can import Calculon")
    ap.add_argument("--rounds", type=int, default=5, help="rounds of ours and Calculon's, alternated")
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

    def new_plan_new_shape():
        forget_plans(engine, schedule_shapes=True)
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

    if args.calculon:
        ours, ours_lean, ours_shape, theirs, theirs_search = [], [], [], [], []
        for _ in range(args.rounds):
            ours.append(cpu_ms(new_plan, args.repeat))
            ours_lean.append(cpu_ms(new_plan_lean, args.repeat))
            ours_shape.append(cpu_ms(new_plan_new_shape, args.repeat))
            calculon = calculon_cpu_ms(args.calculon, args.calculon_python, args.repeat)
            theirs.append(calculon["cpu_ms"])
            theirs_search.append(calculon["search_cpu_ms"])
            print(f"new_plan_cpu_ms {ours[-1]:.2f}  new_plan_no_detail_cpu_ms {ours_lean[-1]:.2f}"
                  f"  new_plan_new_shape_cpu_ms {ours_shape[-1]:.2f}  calculon_cpu_ms {theirs[-1]:.2f}"
                  f"  calculon_search_logger_cpu_ms {theirs_search[-1]:.2f}",
                  flush=True)
        a, b = statistics.median(ours), statistics.median(theirs)
        print(f"median of {args.rounds} rounds: new plan {a:.2f} ms"
              f" ({statistics.median(ours_lean):.2f} ms no detail,"
              f" {statistics.median(ours_shape):.2f} ms of a new schedule shape),"
              f" Calculon {b:.2f} ms ({statistics.median(theirs_search):.2f} ms with its search's logger),"
              f" ratio {a / b:.2f}  (step {step_s:.2f} s; Calculon's {calculon['step_s']:.2f} s)")
        return 0
    figures = {"cold_cpu_ms": cpu_ms(cold, args.repeat), "new_plan_cpu_ms": cpu_ms(new_plan, args.repeat),
               "new_plan_no_detail_cpu_ms": cpu_ms(new_plan_lean, args.repeat),
               "new_plan_new_shape_cpu_ms": cpu_ms(new_plan_new_shape, args.repeat)}
    engine.evaluate(doc)
    figures["again_cpu_ms"] = cpu_ms(lambda: engine.evaluate(doc), args.repeat)
    figures["link_change_cpu_ms"] = cpu_ms(link_change, args.repeat)
    print("  ".join(f"{k} {v:.2f}" for k, v in figures.items()) + f"  (step {step_s:.2f} s; Calculon 3.0-3.7 ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
