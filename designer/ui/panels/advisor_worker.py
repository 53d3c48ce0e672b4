"""The Advisor's worker: `advise` (whatif) and `scale` (scaling) off the UI thread, on snapshots of the
document; of each kind only the newest request waits. The plan search has its own (plan_search.py)."""
from __future__ import annotations

import time

from PySide6.QtCore import Signal

from ..work.latest_worker import Cancelled, LatestWorker, error_text


class AdvisorWorker(LatestWorker):
    """`advise` and `scale` off the UI thread. No Qt parent: it may outlive the window; its
    thread starts with the first request and ends at `stop()` (a running analysis finishes and
    is dropped). Of each kind only the newest request waits; "advise" goes before "scale"."""

    kinds = ("advise", "scale")
    thread_name = "designer-advisor"
    advised = Signal(int, int, object, object, float)  # request, revision, report or None, error or None, s
    scaled = Signal(int, int, object, object, float)

    def __init__(self, slowdown_s: float = 0.0):
        super().__init__()
        self.slowdown_s = slowdown_s  # tests: a slow analysis, to close the window while it runs

    def submit(self, kind: str, request: int, revision: int, snapshot, mode: str = "strong",
               job_name: str | None = None) -> bool:
        """`job_name`: with several jobs, the one analysed (alone); None: the first."""
        return super().submit(kind, request, revision, snapshot, mode, job_name)

    def prepare(self) -> None:
        from ...core.engine.evaluate import Engine

        self.engine, self.quick = Engine(), Engine(detail=False)

    def work(self, kind: str, request: int, revision: int, doc, mode: str, job_name: str | None = None) -> None:
        from ...core.analysis.scaling import scale
        from ...core.analysis.whatif import advise

        started = time.perf_counter()
        report, error = None, None
        try:
            deadline = started + self.slowdown_s
            while time.perf_counter() < deadline and not self.stopped:
                time.sleep(0.01)
            if doc.spec.jobs:  # several jobs: the plan-level analyses are of the selected one, alone
                from ...core.model.jobs import job_alone

                doc, job_name = job_alone(doc, job_name)
            else:
                job_name = None
            if kind == "advise":
                report = advise(doc, engine=self.engine)
                report["job_name"] = job_name
            else:
                report = scale(doc, mode=mode, engine=self.quick)
        except Exception as exc:  # noqa: BLE001 - shown in the panel, never a crash
            error = error_text(exc)
        if self.stopped:
            raise Cancelled
        signal = self.advised if kind == "advise" else self.scaled
        self.emit(signal, request, revision, report, error, time.perf_counter() - started)
