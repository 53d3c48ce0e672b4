"""The Advisor's "What if it fails" and "Job moves" off the UI thread.

`FailuresWorker` runs designer.core.analysis.failures (`rank_failures`, `job_moves`) on snapshots
of the document on one long-lived daemon thread; of each kind only the newest request waits,
"failures" (asked for with a button) before "moves" (with every analysis of a design of several
jobs). Both take seconds on a large fabric, so both can be cancelled: `rank_failures`'s progress
callback returns False, and every evaluation goes through `_Watched`, an engine that raises before
costing a design nobody waits for (job_moves has no progress callback). Emits are guarded, as
AdvisorWorker's, so the thread may outlive the window.
"""
from __future__ import annotations

import threading
import time

from PySide6.QtCore import QObject, Signal

from ..worker import emit_guarded, error_text

KINDS = ("failures", "moves")  # in the order they run
PROGRESS_EVERY_S = 0.1  # at most ten progress signals a second


class _Cancelled(Exception):
    """Raised by `_Watched.evaluate` to unwind an analysis nobody waits for."""


class _Watched:
    """An Engine that stops the analysis (raises _Cancelled) once `wanted()` is False, and counts
    its evaluations (`counted(n)` before each: job_moves' progress)."""

    def __init__(self, engine, wanted, counted=None):
        self._engine, self._wanted, self._counted = engine, wanted, counted
        self.evaluations = 0

    def evaluate(self, *args, **kwargs):
        if not self._wanted() or (self._counted is not None and self._counted(self.evaluations) is False):
            raise _Cancelled
        self.evaluations += 1
        return self._engine.evaluate(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._engine, name)


class FailuresWorker(QObject):
    """`rank_failures` + `group_failures` ("failures") and `job_moves` ("moves") off the UI thread.
    No Qt parent: it may outlive the window."""

    progressed = Signal(str, int, int, int)  # kind, request, done, total
    finished = Signal(str, int, int, object, object, float)  # kind, request, revision, result, error, seconds

    def __init__(self):
        super().__init__()
        self._lock = threading.Condition()
        self._pending: dict[str, tuple] = {}
        self._wanted: dict[str, int] = {}  # kind -> the request still waited for (absent: none)
        self._stop = False
        self._thread: threading.Thread | None = None
        self.running: str | None = None  # the kind being computed now (tests, status)
        self.outcome: dict[str, str] = {}  # kind -> how its last run ended: "done", "error", "cancelled" (tests)

    def submit(self, kind: str, request: int, revision: int, snapshot) -> None:
        with self._lock:
            if self._stop:
                return
            self._pending[kind] = (request, revision, snapshot)
            self._wanted[kind] = request  # an older one of this kind stops at its next evaluation
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="designer-failures", daemon=True)
                self._thread.start()
            self._lock.notify()

    def cancel(self, kind: str) -> None:
        """Nobody waits for `kind` any more: its pending request is dropped, the running one stops."""
        with self._lock:
            self._pending.pop(kind, None)
            self._wanted.pop(kind, None)

    def stop(self) -> None:
        with self._lock:
            self._stop = True
            self._pending.clear()
            self._wanted.clear()
            self._lock.notify()

    @property
    def idle(self) -> bool:
        """Nothing running, nothing pending (tests)."""
        with self._lock:
            return self.running is None and not self._pending

    def _run(self) -> None:
        from ...core.analysis.failure_groups import group_failures
        from ...core.analysis.failures import job_moves, rank_failures
        from ...core.engine.evaluate import Engine
        from ...core.model.jobs import PLACEMENT_POLICIES

        engine = Engine()
        while True:
            with self._lock:
                while not self._pending and not self._stop:
                    self._lock.wait()
                if self._stop:
                    return
                kind = next(k for k in KINDS if k in self._pending)
                request, revision, doc = self._pending.pop(kind)
                self.running = kind
            started = time.perf_counter()
            last = [0.0]
            gone = [False]

            def wanted(kind=kind, request=request) -> bool:
                return not self._stop and not gone[0] and self._wanted.get(kind) == request

            def progress(done: int, total: int) -> bool:
                if not wanted():
                    return False  # rank_failures stops before the next failure
                now = time.perf_counter()
                if now - last[0] >= PROGRESS_EVERY_S:
                    last[0] = now
                    if not self._emit(self.progressed, kind, request, done, total):
                        gone[0] = True
                        return False
                return True

            result, error, cancelled = None, None, False
            if kind == "moves":  # job_moves costs the design, then each job by every other policy (at most)
                evaluations = 1 + len(doc.spec.jobs or []) * len(PLACEMENT_POLICIES)
                watched = _Watched(engine, wanted, lambda n: progress(n, evaluations))
            else:
                watched = _Watched(engine, wanted)
            try:
                if kind == "failures":
                    ranked = rank_failures(doc, watched, progress=progress)
                    result = {"ranked": ranked, "groups": group_failures(ranked)}
                else:
                    result = job_moves(doc, watched)
                cancelled = not wanted()  # stopped by progress: a partial list nobody waits for
            except _Cancelled:
                cancelled = True
            except Exception as exc:  # noqa: BLE001 - shown in the panel, never a crash
                error = error_text(exc)
            self.running = None
            if self._stop or gone[0]:
                return
            self.outcome[kind] = "cancelled" if cancelled else "error" if error else "done"
            if cancelled:
                continue  # a newer request may be pending
            if not self._emit(self.finished, kind, request, revision, result, error, time.perf_counter() - started):
                return

    _emit = staticmethod(emit_guarded)
