"""The undo command that applies one piece of advice to the design (one undo step).

A job edit (commands.SetJob) when only the workload or the plan changes, otherwise the changed
design as a whole (commands.ReplaceDocument); in a design with several jobs the advice was costed
on one job alone, and applies to that job (job_commands.SetJobs) or, for hardware, to the design
with its jobs kept."""
from __future__ import annotations

import copy


def advice_command(qdoc, advice, job_name: str | None, text: str):
    """The undo command that applies `advice` to the open design (`job_name`: the job it was costed
    on, in a design with several jobs; None otherwise)."""
    from ..document.commands import ReplaceDocument, SetJob

    doc = advice.document
    if job_name and qdoc.doc.spec.jobs:
        return _job_edit(qdoc, advice, job_name, text)
    if advice.job_only:
        return SetJob(qdoc, workload=doc.spec.workload, parallelism=doc.spec.parallelism, text=text)
    return ReplaceDocument(qdoc, doc, text=text)


def _job_edit(qdoc, advice, job_name: str, text: str):
    """Advice costed on job `job_name` alone, applied to that job of a design with several jobs: its
    plan and workload for a job edit, else the changed hardware with the design's jobs kept."""
    from ..document.commands import ReplaceDocument
    from ..document.job_commands import SetJobs

    doc = advice.document
    jobs = copy.deepcopy(qdoc.doc.spec.jobs)
    if advice.job_only:
        for job in jobs:
            if job.name == job_name:
                job.workload = copy.deepcopy(doc.spec.workload)
                job.parallelism = copy.deepcopy(doc.spec.parallelism)
        return SetJobs(qdoc, jobs, text)
    changed = doc.copy()
    changed.spec.workload, changed.spec.parallelism, changed.spec.jobs = None, None, jobs
    return ReplaceDocument(qdoc, changed, text=text)
