"""The Advisor's worker: `advise` (whatif) and `scale` (scaling) off the UI thread, on snapshots of the
document; of each kind only the newest request waits. The plan search has its own (plan_search.py)."""
from __future__ import annotations

import threading
import time

from PySide6.QtCore import QObject, Signal

from ..worker import emit_guarded, error_text


class AdvisorWorker(QObject):
    """`advise` and `scale` off the UI thread. No Qt parent: it may outlive the window; its
    thread starts with the first request and ends at `stop()` (a running analysis finishes and
    is dropped). Of each kind only the newest request waits; "advise" goes before "scale"."""

    advised = Signal(int, int, object, object, float)  # request, revision, report or None, error or None, s
    scaled = Signal(int, int, object, object, float)

    def __init__(self, slowdown_s: float = 0.0):
        super().__init__()
        self._lock = threading.Condition()
        self._pending: dict[str, tuple] = {}
        self._stop = False
        self._thread: threading.Thread | None = None
        self.running: str | None = None  # the kind being computed now (tests, status)
        self.slowdown_s = slowdown_s  # tests: a slow analysis, to close the window while it runs

    def submit(self, kind: str, request: int, revision: int, snapshot, mode: str = "strong") -> None:
        with self._lock:
            if self._stop:
                return
            self._pending[kind] = (request, revision, snapshot, mode)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="designer-advisor", daemon=True)
                self._thread.start()
            self._lock.notify()

    def stop(self) -> None:
        with self._lock:
            self._stop = True
            self._pending.clear()
            self._lock.notify()

    @property
    def stopped(self) -> bool:
        return self._stop

    def _run(self) -> None:
        from ...core.analysis.scaling import scale
        from ...core.analysis.whatif import advise
        from ...core.engine.evaluate import Engine

        engine, quick = Engine(), Engine(detail=False)
        while True:
            with self._lock:
                while not self._pending and not self._stop:
                    self._lock.wait()
                if self._stop:
                    return
                kind = "advise" if "advise" in self._pending else "scale"
                request, revision, doc, mode = self._pending.pop(kind)
                self.running = kind
            started = time.perf_counter()
            report, error = None, None
            try:
                deadline = started + self.slowdown_s
                while time.perf_counter() < deadline and not self._stop:
                    time.sleep(0.01)
                job_name = None
                if doc.spec.jobs:  # several jobs: the plan-level analyses are of the first one, alone
                    from ...core.model.jobs import job_alone

                    doc, job_name = job_alone(doc)
                if kind == "advise":
                    report = advise(doc, engine=engine)
                    report["job_name"] = job_name
                else:
                    report = scale(doc, mode=mode, engine=quick)
            except Exception as exc:  # noqa: BLE001 - shown in the panel, never a crash
                error = error_text(exc)
            self.running = None
            if self._stop:
                return
            signal = self.advised if kind == "advise" else self.scaled
            if not self._emit(signal, request, revision, report, error, time.perf_counter() - started):
                return

    _emit = staticmethod(emit_guarded)
