"""The engine off the UI thread: the newest request wins.

The UI hands over a snapshot of the document (designer.core Document.snapshot: cheap, and
it keeps the document's lineage and change log, so the worker's Engine re-rates links or
reuses the placement instead of starting over). Results come back as Qt signals, which Qt
delivers on the UI thread; a result for an older request than the newest is dropped.

Two LatestWorkers: the check and the evaluation on one thread, and what the window asks of a
result once its step time is on screen (a selected link's load, the timeline's events) on a
second, so that the next edit's evaluation never waits for them.
"""
from __future__ import annotations

import time

from PySide6.QtCore import Signal

from ...core.gc_pause import collector_paused
from .latest_worker import LatestWorker, error_text
from .malloc_arenas import give_back_free_memory
from ..panels.timeline_data import timeline_data, timeline_data_of  # here, not in the thread: no import race


class EvaluationWorker(LatestWorker):
    """The design check and the evaluation ("evaluate") of the newest snapshot; its
    `result_worker` builds the timeline and link loads of results."""

    kinds = ("evaluate",)
    thread_name = "designer-engine"
    checked = Signal(int, object)  # request, list[Problem]
    evaluated = Signal(int, object, object, float)  # request, Evaluation or None, error text or None, seconds
    # request, Evaluation whose timeline (events, their columns and arrows) is built: asked for by the
    # window after the step time is on screen, and only while the Timeline is visible (build_timeline)
    timelineReady = Signal(int, object, object)  # number, result, its TimelineData
    # request, Evaluation, its LinkLoad (prepared): a selected link's load, asked for by the window once
    # the step time is shown (build_link_load); the links' tiers and cables are read once per design
    # (~0.15 s at 131k GPUs) and carried across cables' speed edits (a few ms)
    linkLoadReady = Signal(int, object, object)

    def __init__(self, slowdown_s: float = 0.0, parent=None):
        super().__init__(parent)
        self.latest = 0  # the newest request's number
        self.slowdown_s = slowdown_s  # tests: a slow engine, to prove the UI stays responsive
        self.result_worker = _ResultWorker(self)
        self.start()
        self.result_worker.start()

    def submit(self, snapshot) -> int:
        self.latest += 1
        super().submit("evaluate", self.latest, snapshot)
        return self.latest

    def stop(self) -> None:
        super().stop()
        self.result_worker.stop()

    def build_timeline(self, number: int, result) -> None:
        """Build the timeline of request `number`'s result off the UI thread; timelineReady follows.
        The window asks once the step time is shown and the Timeline is visible, so a hidden Timeline
        costs nothing and the events never compete with the step time's way to the screen for the GIL."""
        self.result_worker.submit("timeline", number, result)

    def build_link_load(self, number: int, result, snapshot, groups=None) -> None:
        """The link loads of request `number`'s result, prepared off the UI thread (the Inspector then
        words one link of them at once), carrying `groups` (the links' tiers and cables of an earlier
        revision: LinkGroups) forward; linkLoadReady follows. Newest wins."""
        self.result_worker.submit("links", number, result, snapshot, groups)

    def prepare(self) -> None:
        from ...core.engine.evaluate import WINDOW_GROUP_BUDGET, Engine
        from ...core.live_check import DesignChecker

        self.engine = Engine(group_budget=WINDOW_GROUP_BUDGET)  # a few plans' groups: memory stays bounded
        self.checker = DesignChecker()  # rechecks only what an edit can change (the full check on save)

    def work(self, kind: str, number: int, doc) -> None:
        started = time.perf_counter()
        self.engine.let_go_of_reshaped(doc)  # a fabric rebuilt after the check: not held through it
        with collector_paused():
            problems = self.checker.check(doc)
        if not self.emit(self.checked, number, problems):
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
                    result = self.engine.evaluate(doc)
            except Exception as exc:  # noqa: BLE001 - shown to the user, never a crash
                error = error_text(exc)
        del doc  # copy-on-write: while a snapshot lives, each edited element is copied for it
        if not self.emit(self.evaluated, number, result, error, time.perf_counter() - started):
            return
        del result
        give_back_free_memory()  # the evaluation's temporaries: the window's memory again


class _ResultWorker(LatestWorker):
    """What the window asks of an evaluated result: the link loads ("links", first) and the timeline's
    events (72k on a long interleaved pipeline: ~450 ms with their arrows). A request for a result
    that is no longer the newest is skipped."""

    kinds = ("links", "timeline")
    thread_name = "designer-timeline"

    def __init__(self, evaluation: EvaluationWorker):
        super().__init__()
        self._evaluation = evaluation

    def work(self, kind: str, number: int, result, snapshot=None, groups=None) -> None:
        if number != self._evaluation.latest:
            return
        if kind == "links":
            self._link_load(number, result, snapshot, groups)
        else:
            self._timeline(number, result)

    def _timeline(self, number: int, result) -> None:
        try:
            with collector_paused():  # 73k acyclic objects: see gc_pause.py
                data = timeline_data(result)  # events, columns and arrows: built here, not on the UI thread
        except Exception:  # noqa: BLE001 - the breakdown stands; the timeline says it has none
            data = timeline_data_of([], result.devices)
        self.emit(self._evaluation.timelineReady, number, result, data)
        del result, data
        give_back_free_memory()

    def _link_load(self, number: int, result, snapshot, groups) -> None:
        from ...core.analysis.link_load import LinkLoad

        try:
            with collector_paused():
                analysis = LinkLoad(result, snapshot, groups)
                analysis.prepare()  # one link's class is then found alone, not by grouping every link
        except Exception:  # noqa: BLE001 - None: the window words the link on its own thread instead
            analysis = None
        self.emit(self._evaluation.linkLoadReady, number, result, analysis)
        del analysis, result
        give_back_free_memory()
