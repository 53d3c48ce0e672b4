"""Undoable edits of a design's jobs (spec.jobs): add, remove, rename, placement, workload and plan.

Every edit hands the whole new list to Document.set_jobs, so undo is the old list back. A file
without spec.jobs (one job in spec.workload + spec.parallelism) becomes a list of jobs in the same
step that adds the second job: the single job moves into jobs[0] and spec.workload/parallelism are
emptied (with spec.jobs they play no part), and undo puts them back.
"""
from __future__ import annotations

import copy

from PySide6.QtGui import QUndoCommand

from ...core.model.jobs import JobPlacement, JobSpec

_KEEP = object()


class SetJobs(QUndoCommand):
    """spec.jobs := `jobs` (and, when converting a single-job file, spec.workload/parallelism := None).

    `merge`: a key; consecutive edits with the same key (a spin box stepped) are one undo step."""

    MERGE_ID = 1501

    def __init__(self, qdoc, jobs: list[JobSpec], text: str, single: bool = False, merge: str | None = None):
        super().__init__(text)
        self.qdoc = qdoc
        spec = qdoc.doc.spec
        self.new_jobs = copy.deepcopy(list(jobs))
        self.old_jobs = copy.deepcopy(list(spec.jobs))
        self.old_single = (copy.deepcopy(spec.workload), copy.deepcopy(spec.parallelism))
        self.single = single  # the file's single job becomes jobs[0]: empty workload + parallelism
        self.merge = merge

    def id(self) -> int:
        return self.MERGE_ID if self.merge else -1

    def mergeWith(self, other) -> bool:
        if not self.merge or other.merge != self.merge or other.single or self.single:
            return False
        self.new_jobs = other.new_jobs
        return True

    def redo(self) -> None:
        doc = self.qdoc.doc
        with doc.batch():
            if self.single:
                doc.replace_job(None, None)
            doc.set_jobs(copy.deepcopy(self.new_jobs))

    def undo(self) -> None:
        doc = self.qdoc.doc
        with doc.batch():
            doc.set_jobs(copy.deepcopy(self.old_jobs))
            if self.single:
                doc.replace_job(*copy.deepcopy(self.old_single))


def current_jobs(doc, gpus_in_use: int | None = None) -> list[JobSpec]:
    """The design's jobs as a list to edit (copies). A file without spec.jobs gives its one job,
    named after the design, asking for the GPUs it uses now (`gpus_in_use`: the last result's, or
    the design's count)."""
    if doc.spec.jobs:
        return copy.deepcopy(list(doc.spec.jobs))
    from ...core.model import Parallelism

    par = copy.deepcopy(doc.spec.parallelism) or Parallelism()
    gpus = par.num_gpus or gpus_in_use or doc.num_gpus() or None
    return [JobSpec(name=doc.metadata.name or "job", workload=copy.deepcopy(doc.spec.workload), parallelism=par,
                    placement=JobPlacement(gpus=gpus))]


def unique_name(names, base: str = "job") -> str:
    taken = set(names)
    n = len(taken) + 1
    while f"{base} {n}" in taken:
        n += 1
    return f"{base} {n}"
