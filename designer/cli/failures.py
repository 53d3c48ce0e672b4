"""`designer failures FILE`: the single failures of the fabric ranked by what they cost the jobs,
and, for a design with several jobs, the placement moves that would pay (core/analysis/failures.py)."""
from __future__ import annotations

import json
import sys

from .common import EPILOG, positive_int
from .job import add_job_arguments, evaluate


def register(subparsers) -> None:
    p = subparsers.add_parser("failures", help="what if one part fails: switches, servers and cables ranked by what "
                                               "their loss costs the jobs, and job moves that pay", epilog=EPILOG)
    add_job_arguments(p)
    p.add_argument("--json", action="store_true", help="failures (element, stopped jobs, slowdowns) and job_moves")
    p.add_argument("--top", type=positive_int, default=15, help="failures to list (default 15)")
    p.set_defaults(func=run)


def failures_text(ranked, moves, doc, top: int) -> str:
    lines = [f"{doc.metadata.name}: what if one part fails ({len(ranked)} tried, costliest first)",
             "", f"  {'lost share of the GPUs per step':34} what it does"]
    from ..core.analysis.failure_groups import group_failures

    rows = group_failures(ranked)  # alike failures (13 leaves that each stop the same jobs) as one row
    for group in rows[:top]:
        lines.append(f"    {group.lost_gpu_share:>8.1%}{'':24} {group.text}")
    if len(rows) > top:
        lines.append(f"    ... {len(rows) - top} more (--top N, or --json)")
    if moves:
        lines += ["", "  placement moves that pay (the other jobs keep their servers)"]
        lines += [f"    {m.text}" for m in moves[:5]]
    return "\n".join(lines)


def run(args) -> int:
    from ..core.analysis.failures import job_moves, rank_failures
    from .progress import Progress

    with Progress("failures") as progress:
        doc, engine, _ = evaluate(args, progress)
        progress.phase("failing each part in turn")
        ranked = rank_failures(doc, engine, progress=progress.counter("failures costed"))
        moves = job_moves(doc, engine) if len(doc.spec.jobs) > 1 else []
    if args.json:
        json.dump({"failures": [f.as_json() for f in ranked], "job_moves": [m.as_json() for m in moves]},
                  sys.stdout, indent=2)
        print()
        return 0
    print(failures_text(ranked, moves, doc, args.top))
    return 0
