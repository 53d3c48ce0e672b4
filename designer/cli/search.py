"""`designer search FILE`: the fastest plans that fit, searched exhaustively with pruning."""
from __future__ import annotations

import json
import sys

from ..core.problems import EXIT_OK
from .common import EPILOG, err, gpu_list, positive_int
from .job import add_job_arguments, load_job


def register(subparsers) -> None:
    p = subparsers.add_parser("search", help="the fastest plans that fit, searched exhaustively with pruning",
                              epilog=EPILOG)
    add_job_arguments(p)
    p.add_argument("--top", type=positive_int, default=10, help="plans to list (default 10)")
    p.add_argument("--workers", type=positive_int, default=None, help="local processes (default: one per core)")
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT", default=None,
                   help="run the sweep on this Dask scheduler (needs designer[dask])")
    p.add_argument("--json", action="store_true", help="top plans, counts of the space, timing")
    p.add_argument("--megatron", action="store_true",
                   help="print each plan's Megatron-LM arguments (--json always has them as megatron_args)")
    p.add_argument("--nvlink-domain-gpus", type=gpu_list, default=None, metavar="4,72",
                   help="also search these NVLink domain sizes (GPUs, whole servers, up to the part's largest)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..core.analysis.search import search
    from .progress import Progress

    with Progress("search") as reporter:
        doc = load_job(args, plan_may_be_wrong=True, progress=reporter)
        reporter.phase("enumerating plans and their lower bounds")
        progress = reporter.counter("plans costed (the lower bound may stop it sooner)")
        if args.nvlink_domain_gpus:  # the domain size as one more dimension (search_domains.py)
            from ..core.analysis.search_domains import search_domain_sizes

            result = search_domain_sizes(doc, args.nvlink_domain_gpus, top=args.top, workers=args.workers,
                                         scheduler=args.scheduler, progress=progress)
        else:
            result = search(doc, top=args.top, workers=args.workers, scheduler=args.scheduler, progress=progress)
    for w in result.warnings:
        err(f"warning: {w}")
    if args.json:
        from .megatron import add_megatron_args

        data = result.as_json()
        add_megatron_args(doc, result, data)  # each plan's Megatron-LM arguments, ready to copy
        json.dump(data, sys.stdout, indent=2)
        print()
        return EXIT_OK
    from ..core.analysis.texts import search_counts_text, set_arguments

    lines = [f"{doc.metadata.name}: {search_counts_text(result)}",  # the Advisor's Best plans page says the same
             f"  {result.verdict}", "", "  rank  step s     MFU  mem GiB  plan"]
    for i, r in enumerate(result.top, 1):
        others = r.get("same_time_orders", [])
        also = f"  [the same with order {', '.join(others)}]" if others else ""
        domain = f"NVL{r['nvlink_domain_gpus']} " if "nvlink_domain_gpus" in r else ""
        lines.append(f"  {i:4} {r['step_time_s']:7.3f} {r['mfu']:7.1%} {r['memory_gib']:8.1f}  "
                     f"{domain}{r['point'].label()}{also}")
        if args.megatron:
            from .megatron import plan_megatron_args

            lines.append(f"       megatron: {plan_megatron_args(doc, r['point'])}")
    if result.top:
        b = result.top[0]["breakdown_s"]
        lines += ["", "  best plan's breakdown: " + ", ".join(f"{k} {v:.3f}" for k, v in b.items() if v > 0),
                  "  apply it: " + set_arguments(result.top[0]["point"].settings())]
        if "nvlink_domain_gpus" in result.top[0]:
            lines.append(f"  on NVLink domains of {result.top[0]['nvlink_domain_gpus']} GPUs "
                         f"(designer generate fat-tree ... --nvlink-domain-gpus {result.top[0]['nvlink_domain_gpus']})")
    print("\n".join(lines))
    return EXIT_OK
