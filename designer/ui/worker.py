"""The engine off the UI thread: one long-lived worker, the newest request wins.

The UI hands over a snapshot of the document (designer.core Document.snapshot: cheap, and
it keeps the document's lineage and change log, so the worker's Engine re-rates links or
reuses the placement instead of starting over). Results come back as Qt signals, which Qt
delivers on the UI thread; a result for an older request than the newest is dropped.
"""
from __future__ import annotations

import threading
import time

from PySide6.QtCore import QObject, Signal

from ..core.gc_pause import collector_paused
from ..core.problems import DesignerError
from .malloc_arenas import give_back_free_memory
from .panels.timeline_data import timeline_data  # here, not in the thread: no import race


def emit_guarded(signal, *args) -> bool:
    """Deliver to the UI thread; False when the window (and the worker's Qt side) is gone."""
    try:
        signal.emit(*args)
        return True
    except RuntimeError:  # "Signal source has been deleted": the window closed meanwhile
        return False


def error_text(exc: Exception) -> str:
    """What a worker shows for a failed job: the problems of bad input, else an internal error."""
    if isinstance(exc, DesignerError):
        return str(exc)
    return f"internal error: {type(exc).__name__}: {exc}"


class EvaluationWorker(QObject):
    checked = Signal(int, object)  # request, list[Problem]
    evaluated = Signal(int, object, object, float)  # request, Evaluation or None, error text or None, seconds
    # request, Evaluation whose timeline (events, their columns and arrows) is built: asked for by the
    # window after the step time is on screen, and only while the Timeline is visible (build_timeline)
    timelineReady = Signal(int, object)
    # request, Evaluation, its LinkLoad (classes made): a selected link's load, asked for by the window
    # once the step time is shown (build_link_load); ~30 ms of CPU at 16k GPUs, 0.3 s at 131k
    linkLoadReady = Signal(int, object, object)

    def __init__(self, slowdown_s: float = 0.0, parent=None):
        super().__init__(parent)
        import sys

        # The engine is Python: hand the GIL back to the UI thread every 2 ms (default 5 ms).
        sys.setswitchinterval(min(sys.getswitchinterval(), 0.002))
        self._lock = threading.Condition()
        self._pending = None  # (number, snapshot)
        self._stop = False
        self.latest = 0
        self.busy = False
        self.slowdown_s = slowdown_s  # tests: a slow engine, to prove the UI stays responsive
        self._thread = threading.Thread(target=self._run, name="designer-engine", daemon=True)
        self._thread.start()
        # The timeline's events (72k on a long interleaved pipeline: ~450 ms with their arrows) in a thread
        # of their own, so that the next edit's evaluation never waits for them. Newest wins.
        self._events_lock = threading.Condition()
        self._events_pending = None  # (number, Evaluation)
        self._links_pending = None  # (number, Evaluation, document snapshot): before the timeline's events
        self._events_thread = threading.Thread(target=self._run_events, name="designer-timeline", daemon=True)
        self._events_thread.start()

    def submit(self, snapshot) -> int:
        with self._lock:
            self.latest += 1
            self._pending = (self.latest, snapshot)
            self._lock.notify()
            return self.latest

    def stop(self) -> None:
        with self._lock:
            self._stop = True
            self._lock.notify()
        with self._events_lock:
            self._events_lock.notify()

    def _run_events(self) -> None:
        while True:
            with self._events_lock:
                while self._events_pending is None and self._links_pending is None and not self._stop:
                    self._events_lock.wait()
                if self._stop:
                    return
                links, self._links_pending = self._links_pending, None
                if links is None:
                    (number, result), self._events_pending = self._events_pending, None
            # Each job's request goes before the thread waits again: a local that outlived it kept
            # that result and its document snapshot (~40 MB at 131k GPUs) until the next request.
            if links is not None:
                delivered = self._link_load(*links)
                del links
            else:
                delivered = self._timeline(number, result)
                del result
            if not delivered:
                return

    def _timeline(self, number: int, result) -> bool:
        if self._superseded(number):
            return True
        try:
            with collector_paused():  # 73k acyclic objects: see gc_pause.py
                timeline_data(result)  # events, columns and arrows: built here, not on the UI thread
        except Exception:  # noqa: BLE001 - the breakdown stands; the timeline says it has none
            result._events = []
        delivered = self._emit(self.timelineReady, number, result)
        del result
        give_back_free_memory()
        return delivered

    def _run(self) -> None:
        from ..core.engine.evaluate import WINDOW_GROUP_BUDGET, Engine
        from ..core.design_check import DesignChecker

        engine = Engine(group_budget=WINDOW_GROUP_BUDGET)  # a few plans' groups: memory stays bounded
        self.engine = engine
        checker = DesignChecker()  # rechecks only what an edit can change (the full check on save)
        self.checker = checker
        while True:
            with self._lock:
                while self._pending is None and not self._stop:
                    self._lock.wait()
                if self._stop:
                    return
                number, doc = self._pending
                self._pending = None
            started = time.perf_counter()
            with collector_paused():
                problems = checker.check(doc)
            if not self._emit(self.checked, number, problems):
                return
            result, error = None, None
            if doc.spec.workload is None and not doc.spec.jobs:
                error = "no job"
            elif any(p.severity == "error" for p in problems):
                error = "fix the errors to evaluate"
            else:
                try:
                    if self.slowdown_s:
                        time.sleep(self.slowdown_s)
                    with collector_paused():
                        result = engine.evaluate(doc)
                except Exception as exc:  # noqa: BLE001 - shown to the user, never a crash
                    error = error_text(exc)
            del doc  # copy-on-write: while a snapshot lives, each edited element is copied for it
            if not self._emit(self.evaluated, number, result, error, time.perf_counter() - started):
                return
            del result
            give_back_free_memory()  # the evaluation's temporaries: the window's memory again

    def build_timeline(self, number: int, result) -> None:
        """Build the timeline of request `number`'s result off the UI thread; timelineReady follows.
        The window asks once the step time is shown and the Timeline is visible, so a hidden Timeline
        costs nothing and the events never compete with the step time's way to the screen for the GIL."""
        with self._events_lock:
            self._events_pending = (number, result)
            self._events_lock.notify()

    def build_link_load(self, number: int, result, snapshot) -> None:
        """The link loads of request `number`'s result, their classes made, off the UI thread (the
        Inspector then words one link of them at once); linkLoadReady follows. Newest wins."""
        with self._events_lock:
            self._links_pending = (number, result, snapshot)
            self._events_lock.notify()

    def _link_load(self, number: int, result, snapshot) -> bool:
        if self._superseded(number):
            return True
        from ..core.analysis.link_load import LinkLoad

        try:
            with collector_paused():
                analysis = LinkLoad(result, snapshot)
                analysis.classes()
                analysis.index_of("")  # the id -> index table
        except Exception:  # noqa: BLE001 - None: the window words the link on its own thread instead
            analysis = None
        delivered = self._emit(self.linkLoadReady, number, result, analysis)
        del analysis, result
        give_back_free_memory()
        return delivered

    def _superseded(self, number: int) -> bool:
        with self._lock:
            return number != self.latest

    _emit = staticmethod(emit_guarded)
