"""Benchmark: `designer evaluate FILE --json` end to end, and where its time goes (a script, not a test).

    .venv/bin/python benchmarks/bench_cli.py FILE [FILE ...] [--reps N]
    .venv/bin/python benchmarks/bench_cli.py --generate [--dir FOLDER] [--reps N]

--generate makes the two large designs (a 3-tier fat-tree by `designer generate fat-tree` with a
GPT-3 175B job, TP 8 PP 8 interleaved v12): 2,048 x 8 H100 (16,384 GPUs, radix 64) and 16,384 x 8 H100
(131,072 GPUs, radix 128), cached in FOLDER (default: the system's temporary folder /bench-cli).

Each file prints one JSON line:
  wall_s         the whole command in a fresh process (start, imports, load, check, evaluate, print),
                 the best of --reps runs (the machine is shared: the best is the least disturbed)
  cpu_s          user + system CPU seconds of the command, the best of the runs (less disturbed by
                 other work than the wall time on a busy machine)
  max_rss_mb     the peak resident memory of the fastest run
  phases_ms      in --reps more fresh processes, the command's steps each timed (best of the runs):
                 python (the interpreter's own start, measured apart), imports, read (the file's text),
                 parse (YAML to plain data, each part of a one-line section built into its elements as it
                 is read, the links' fields kept, as the command reads), build (the rest to the element
                 classes and the Document), check, evaluate, link_classes, json (as_json + dumps)
  load_avg       the 1-minute load average before the runs (2 cores shared: above ~1 the figures are high)
The children compile modules into a cache of their own (see child_env), as an installed package has
them. Targets: wall_s <= 0.2 at 1,024 GPUs, <= 0.4 at 16,384 and <= 2 at 131,072.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = "import sys; from designer.cli import main; sys.exit(main())"
# (file stem, servers, switch radix, global batch)
GENERATED = (("gpt3-16384", 2048, 64, 4096), ("gpt3-131072", 16384, 128, 32768))

# Run in a fresh interpreter: the steps of cmd_evaluate, each timed (perf_counter, wall).
PHASES = r"""
import json, sys, time
t0 = time.perf_counter()
from designer.cli import build_parser
from designer.core.gc_pause import collector_paused
from designer.core.io import files
from designer.core.io.files import LinkFieldsKept
from designer.core.io.schema import build_document
from designer.core.io import yaml_source
from designer.core.model.document import Document
from designer.core.design_check import check_document
from designer.core.engine.evaluate import Engine
from designer.core.analysis.link_load import classes_json
t1 = time.perf_counter()
with collector_paused():
    text = files.read_text(sys.argv[1]); t2 = time.perf_counter()
    reader = LinkFieldsKept()  # as load_document(keep_link_fields=True)
    data = yaml_source.parse_fast(text, reader, reader.lines); t3 = time.perf_counter()
    kind, meta, spec, problems = build_document(data)
    doc = Document(spec, meta, link_fields=reader.fields); t4 = time.perf_counter()
    with doc.held_still():  # as the command: each link field read once, by whichever step asks first
        errors = [p for p in check_document(doc) if p.severity == "error"]; t5 = time.perf_counter()
        result = Engine().evaluate(doc); t6 = time.perf_counter()
        classes = classes_json(result, doc); t7 = time.perf_counter()
        out = result.as_json(events=False); out["link_classes"] = classes
        text_out = json.dumps(out, indent=2); t8 = time.perf_counter()
assert data is not None and not problems and not errors, "the file must load on the fast path and be valid"
ms = lambda a, b: round(1e3 * (b - a), 1)
print(json.dumps({"imports": ms(t0, t1), "read": ms(t1, t2), "parse": ms(t2, t3), "build": ms(t3, t4),
                  "check": ms(t4, t5), "evaluate": ms(t5, t6), "link_classes": ms(t6, t7), "json": ms(t7, t8)}))
"""


def child_env() -> dict[str, str]:
    """The children's environment: compiled modules cached as an installed package has them (in a
    folder of our own, not the source tree), also where PYTHONDONTWRITEBYTECODE is set: else every
    module edited since its last compile is compiled again at each start, which no user pays."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "bench-cli-pycache")
    return env


def timed_run(argv: list[str]) -> tuple[float, float, float, bytes]:
    """(wall seconds, peak RSS in MB, CPU seconds, stdout) of one child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=child_env())
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv[-3:])}: exit {proc.returncode}")
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime, out


def bench(path: Path, reps: int) -> dict:
    timed_run([sys.executable, "-c", PHASES.split("t1 = ")[0]])  # compiles the modules into the cache
    load = os.getloadavg()[0]
    runs = [timed_run([sys.executable, "-c", CLI, "evaluate", str(path), "--json"]) for _ in range(reps)]
    wall, rss, _, out = min(runs)
    cpu = min(run[2] for run in runs)
    doc = json.loads(out)
    python_ms = min(timed_run([sys.executable, "-c", "pass"])[0] for _ in range(reps)) * 1e3
    phases: dict[str, float] = {}
    for _ in range(reps):
        one = json.loads(timed_run([sys.executable, "-c", PHASES, str(path)])[3])
        phases = {k: min(v, phases.get(k, v)) for k, v in one.items()}
    return {"file": str(path), "gpus": doc["num_gpus"], "wall_s": round(wall, 3), "cpu_s": round(cpu, 3),
            "max_rss_mb": round(rss),
            "phases_ms": {"python": round(python_ms, 1), **phases}, "load_avg": round(load, 2)}


# Adds the GPT-3 job to a generated fabric (in a child process: the parent stays small, so that the
# peak RSS of the runs it starts, which Linux counts from before their exec, is their own).
ADD_JOB = r"""
import sys
from designer.core.io import load_document, save_document
from designer.core.model.job import Parallelism, Workload

doc = load_document(sys.argv[1])
doc.set_job(Workload(preset="gpt3-175b", global_batch_size=int(sys.argv[3])),
            Parallelism(tensor_model_parallel_size=8, pipeline_model_parallel_size=8,
                        virtual_pipeline_model_parallel_size=12, pipeline_schedule="interleaved",
                        sequence_parallel=True, recompute_granularity="selective", use_distributed_optimizer=True,
                        overlap_grad_reduce=True, overlap_param_gather=True))
save_document(doc, sys.argv[2])
"""


def generate(folder: Path) -> list[Path]:
    """The 16k and 131k designs, made once by the CLI and kept in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for stem, servers, radix, gbs in GENERATED:
        path = folder / f"{stem}.yaml"
        paths.append(path)
        if path.exists():
            continue
        raw = folder / f"{stem}.fabric.yaml"
        subprocess.run([sys.executable, "-c", CLI, "generate", "fat-tree", "-o", str(raw), "--nodes", str(servers),
                        "--gpu", "H100", "--switch-radix", str(radix)], check=True, cwd=ROOT)
        subprocess.run([sys.executable, "-c", ADD_JOB, str(raw), str(path), str(gbs)], check=True, cwd=ROOT)
        raw.unlink()
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--generate", action="store_true", help="make the 16k and 131k designs")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "bench-cli")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    files = list(args.files) + (generate(args.dir) if args.generate else [])
    if not files:
        parser.error("give design files, or --generate")
    for path in files:
        print(json.dumps(bench(path, args.reps)), flush=True)


if __name__ == "__main__":
    main()
