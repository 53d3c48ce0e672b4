"""`designer failures FILE`: the single failures of the fabric ranked by what they cost the jobs,
and, for a design with several jobs, the placement moves that would pay (core/analysis/failures.py)."""
from __future__ import annotations

import json
import sys


def failures_text(ranked, moves, doc, top: int) -> str:
    lines = [f"{doc.metadata.name}: what if one part fails ({len(ranked)} tried, costliest first)",
             "", f"  {'lost share of the GPUs per step':34} what it does"]
    from .core.analysis.failure_groups import group_failures

    rows = group_failures(ranked)  # alike failures (13 leaves that each stop the same jobs) as one row
    for group in rows[:top]:
        lines.append(f"    {group.lost_gpu_share:>8.1%}{'':24} {group.text}")
    if len(rows) > top:
        lines.append(f"    ... {len(rows) - top} more (--top N, or --json)")
    if moves:
        lines += ["", "  placement moves that pay (the other jobs keep their servers)"]
        lines += [f"    {m.text}" for m in moves[:5]]
    return "\n".join(lines)


def run_failures(args, evaluate_args) -> int:
    from .cli_progress import Progress
    from .core.analysis.failures import job_moves, rank_failures

    with Progress("failures") as progress:
        doc, engine, _ = evaluate_args(args, progress)
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
