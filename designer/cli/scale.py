"""`designer scale FILE`: throughput and efficiency against the GPU count (strong or weak scaling)."""
from __future__ import annotations

import json
import sys

from ..core.problems import EXIT_OK
from .common import EPILOG, gpu_list
from .job import add_job_arguments, load_job


def register(subparsers) -> None:
    p = subparsers.add_parser("scale", help="throughput and efficiency against the GPU count", epilog=EPILOG)
    add_job_arguments(p)
    p.add_argument("--gpus", type=gpu_list, default=None, metavar="64,128,...",
                   help="GPU counts (default: powers of two from 1/8 to 8x the job)")
    p.add_argument("--mode", choices=("strong", "weak"), default="strong",
                   help="strong: fixed global batch; weak: fixed batch per replica")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..core.analysis.scaling import scale
    from .progress import Progress

    with Progress("scale") as progress:
        doc = load_job(args, progress=progress)
        progress.phase("costing the cluster sizes")
        report = scale(doc, args.gpus, mode=args.mode, progress=progress.counter("cluster sizes costed"))
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
        return EXIT_OK
    p = report["plan"]
    lines = [f"{doc.metadata.name}: {report['mode']} scaling with TP {p['tp']} PP {p['pp']} CP {p['cp']} "
             f"EP {p['ep']}, {p['schedule']}; DP grows",
             f"  {report['verdict']}", "",
             "    GPUs  servers   step s      tokens/s   per GPU    MFU  efficiency  marginal"]
    for r in report["rows"]:
        if "error" in r:
            lines.append(f"  {r['gpus']:6}  -- {r['error']}")
            continue
        lines.append(f"  {r['gpus']:6} {r['servers']:8} {r['step_time_s']:8.3f} {r['tokens_per_s']:13,.0f} "
                     f"{r['tokens_per_s_per_gpu']:9,.0f} {r['mfu']:6.1%} {r['efficiency']:10.1%} "
                     + (f"{r['marginal_efficiency']:9.1%}" if "marginal_efficiency" in r else "         ")
                     + ("  (generated fabric)" if r["extended_fabric"] else "")
                     + ("" if r["fits_in_memory"] else "  DOES NOT FIT"))
    print("\n".join(lines))
    return EXIT_OK
