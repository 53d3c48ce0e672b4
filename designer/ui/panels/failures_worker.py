"""The Advisor's "What if it fails" and "Job moves" off the UI thread.

`FailuresWorker` (a LatestWorker) runs designer.core.analysis.failures (`rank_failures`, `job_moves`)
on snapshots of the document; of each kind only the newest request waits, "failures" (asked for
with a button) before "moves" (with every analysis of a design of several jobs). Both take seconds
on a large fabric, so both can be cancelled: `rank_failures`'s progress callback returns False,
and every evaluation goes through `_Watched`, an engine that raises Cancelled before costing a
design nobody waits for (job_moves has no progress callback).
"""
from __future__ import annotations

import time

from PySide6.QtCore import Signal

from ..work.latest_worker import Cancelled, LatestWorker, error_text

KINDS = ("failures", "moves")  # in the order they run
PROGRESS_EVERY_S = 0.1  # at most ten progress signals a second


class _Watched:
    """An Engine that stops the analysis (raises Cancelled) once `wanted()` is False, and counts
    its evaluations (`counted(n)` before each: job_moves' progress)."""

    def __init__(self, engine, wanted, counted=None):
        self._engine, self._wanted, self._counted = engine, wanted, counted
        self.evaluations = 0

    def evaluate(self, *args, **kwargs):
        if not self._wanted() or (self._counted is not None and self._counted(self.evaluations) is False):
            raise Cancelled
        self.evaluations += 1
        return self._engine.evaluate(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._engine, name)


class FailuresWorker(LatestWorker):
    """`rank_failures` + `group_failures` ("failures") and `job_moves` ("moves") off the UI thread.
    No Qt parent: it may outlive the window."""

    kinds = KINDS
    thread_name = "designer-failures"
    progressed = Signal(str, int, int, int)  # kind, request, done, total
    finished = Signal(str, int, int, object, object, float)  # kind, request, revision, result, error, seconds

    def prepare(self) -> None:
        from ...core.engine.evaluate import Engine

        self.engine = Engine()

    def work(self, kind: str, request: int, revision: int, doc) -> str:
        from ...core.analysis.failure_groups import group_failures
        from ...core.analysis.failures import job_moves, rank_failures
        from ...core.model.jobs import PLACEMENT_POLICIES

        started = time.perf_counter()
        last = [0.0]

        def wanted() -> bool:
            return self.wanted(kind, request)

        def progress(done: int, total: int) -> bool:
            if not wanted():
                return False  # rank_failures stops before the next failure
            now = time.perf_counter()
            if now - last[0] >= PROGRESS_EVERY_S:
                last[0] = now
                if not self.emit(self.progressed, kind, request, done, total):
                    return False
            return True

        result, error = None, None
        if kind == "moves":  # job_moves costs the design, then each job by every other policy (at most)
            evaluations = 1 + len(doc.spec.jobs or []) * len(PLACEMENT_POLICIES)
            watched = _Watched(self.engine, wanted, lambda n: progress(n, evaluations))
        else:
            watched = _Watched(self.engine, wanted)
        try:
            if kind == "failures":
                ranked = rank_failures(doc, watched, progress=progress)
                result = {"ranked": ranked, "groups": group_failures(ranked)}
            else:
                result = job_moves(doc, watched)
        except Cancelled:
            raise
        except Exception as exc:  # noqa: BLE001 - shown in the panel, never a crash
            error = error_text(exc)
        self.check(kind, request)  # stopped by progress: a partial list nobody waits for
        self.emit(self.finished, kind, request, revision, result, error, time.perf_counter() - started)
        return "error" if error else "done"
