"""`designer advise FILE` on a design of several jobs: the placement moves that pay and the top
failure groups (designer.core.analysis.failures, failure_groups), after the per-job advice."""
from __future__ import annotations

TOP_FAILURE_GROUPS = 5


def jobs_section(doc, engine, progress=None) -> dict | None:
    """{"job_moves": [JobMove], "failure_groups": [FailureGroup], "tried": N} for a design of two jobs
    or more (the design with all its jobs: job.load_job keeps it as args.jobs_design), else None."""
    from ..core.analysis.failure_groups import group_failures
    from ..core.analysis.failures import job_moves, rank_failures

    if doc is None or len(doc.spec.jobs or []) < 2:
        return None
    if progress is not None:
        progress.phase("placing each job by every other policy")
    moves = job_moves(doc, engine)
    if progress is not None:
        progress.phase("failing each part in turn")
    ranked = rank_failures(doc, engine, progress=progress.counter("failures costed") if progress else None)
    return {"job_moves": moves, "failure_groups": group_failures(ranked), "tried": len(ranked)}


def jobs_json(section: dict) -> dict:
    """The keys `job_moves` and `failures` (the top failure groups) added to advise's --json."""
    return {"job_moves": [m.as_json() for m in section["job_moves"]],
            "failures": [g.as_json() for g in section["failure_groups"][:TOP_FAILURE_GROUPS]]}


def jobs_text(section: dict) -> str:
    moves, groups = section["job_moves"], section["failure_groups"]
    lines = ["", "  placement moves that pay (the other jobs keep their servers)"]
    lines += [f"    {m.text}" for m in moves[:5]] or \
        ["    none: placing any one job by another policy makes the jobs no faster on the whole"]
    top = groups[:TOP_FAILURE_GROUPS]
    lines += ["", f"  what if one part fails: the {len(top)} costliest of {section['tried']} tried "
                  "(lost share of the GPUs per step; designer failures FILE lists them all)"]
    lines += [f"    {g.lost_gpu_share:>7.1%}  {g.text}" for g in top]
    return "\n".join(lines)

