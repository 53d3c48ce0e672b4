"""The flow of results from the engine's worker to the window: an edit's check and evaluation off
the UI thread, the status bar's step time and problems, and the panels that show the result (the
Breakdown at once; the link heat, the Timeline's events and a selected link's load once the step
time is painted, each only when it can be seen)."""
from __future__ import annotations

from operator import attrgetter

from PySide6.QtCore import QObject, Qt, QTimer

from ..common.gpu_count import GpuCount
from ..panels.breakdown import ShownBefore

PROBLEM_TEXT_PX = 340  # the first problem's message in the status bar, elided to this width
TOOLTIP_PROBLEMS = 30  # problems listed in the status bar's tooltip (the popup lists them all)
STATUS_REASON_PX = 360  # the "not evaluated" reason in the status bar (whole in its tooltip)
LINK_LOAD_DELAY_MS = 150  # a selected link's load (big designs): asked once the user has not edited at once


def _changes_link_words(change) -> bool:
    """Whether a change can alter how a link's load is worded: its links, or the ids and tiers of the
    servers and switches they join (a box placed on the canvas cannot)."""
    if change.collection == "links":
        return True
    return change.collection in ("nodes", "switches") and (change.action != "changed"
                                                           or change.field in ("id", "tier"))


class ResultFlow(QObject):
    """The window's results: `result` (the newest Evaluation, None while the design cannot be
    evaluated), `previous_result`, `problems`, `stale_reason`; window.resultChanged follows each."""

    def __init__(self, window, engine_slowdown_s: float = 0.0):
        super().__init__(window)
        from ..work.worker import EvaluationWorker

        self.window = window
        self.qdoc = window.qdoc
        self.closed = False
        self.result = None
        self.previous_result = None
        self.evaluating = False
        self.problems: list = []
        self._memory = None  # the last result's memory verdict as a problem, when it does not fit
        self.stale_reason: str | None = None  # why the panels show an older result (None: they are current)
        self._stale_details = ""
        self.worker = EvaluationWorker(engine_slowdown_s)  # not a Qt child: its thread may outlive the window
        self.worker.checked.connect(self.on_checked)
        self.worker.evaluated.connect(self.on_evaluated)
        self.worker.timelineReady.connect(self.on_timeline)
        self.worker.linkLoadReady.connect(self.on_link_load)
        self._replaced_at = 0  # worker requests up to this number were for the design before the last replace
        self._revision_of: dict[int, int] = {}  # worker request -> the document revision it evaluates
        self._link_load_pending = False  # a selected link's load being made off the UI thread
        self._link_load_timer = QTimer(self, singleShot=True, interval=LINK_LOAD_DELAY_MS,
                                       timeout=self._link_load_due)
        self._timeline_pending = False  # the step time of a result is shown, its timeline not yet
        self._timeline_requested = None  # the result whose timeline the worker was asked for
        self._heat_of = None  # the result the canvas's link heat shows
        # Live recompute: a snapshot (copy-on-write: cheap) goes to the worker 16 ms after the last
        # edit, one frame, so that a burst of edits (a key held down) sends one request, not many.
        self.check_timer = QTimer(self, singleShot=True, interval=16, timeout=self.after_edit)
        # the window's kept GPU count: the status bar, the Inspector, the Job panel and the Jobs panel read it
        self.gpus = GpuCount()

    def connect(self) -> None:
        """Follow the document, the canvas and the Timeline's dock (once the window has them all)."""
        w = self.window
        self.qdoc.changed.connect(lambda _c: self.check_timer.start())
        self.qdoc.replaced.connect(lambda: self.check_timer.start(0))  # after the first paint
        w.scene.built.connect(lambda: self.check_timer.start(0))  # a big design's boxes are all made
        self.qdoc.replaced.connect(self.on_replaced)
        w.resultChanged.connect(self.show_panels)  # the breakdown now; timeline and heat when ready
        # a selected link's load: prepared by the worker once the step time is painted (not competing
        # with the Breakdown for the interpreter), shown when it is done
        w.resultChanged.connect(self.link_load_later)
        w.timeline_dock.visibilityChanged.connect(self.timeline_shown)
        w.inspector.load_later = self.link_load_soon  # a big design's link load: off the UI thread

    @property
    def busy(self) -> bool:
        """A check, an evaluation, a timeline or a link load is on its way, or the Breakdown is not all
        drawn (settle() waits for it)."""
        return (self.check_timer.isActive() or self.evaluating or self._timeline_pending or self._link_load_pending
                or self.window.breakdown_panel.drawing)

    def close(self) -> None:
        """The window closes: no late results."""
        self.closed = True
        self.worker.stop()

    def after_edit(self) -> None:
        doc = self.qdoc.doc
        # what is shown only (doc.counts also sums every link's cables: 0.1 s a call at 131k GPUs)
        self.window.counts_label.setText(f"{len(doc.racks)} racks   {len(doc.nodes)} servers   {self.gpus.of(doc)} GPUs   "
                                  f"{len(doc.switches)} switches   {len(doc.links)} links")
        if self.window.scene.build.running:  # the engine's thread would slow the canvas's slices (they share the GIL)
            self.window.result_label.setText("evaluating once the canvas is drawn...")
            return  # scene.built starts it
        self.evaluate()

    def on_checked(self, number: int, problems) -> None:
        if self.closed or number != self.worker.latest or number <= self._replaced_at:
            return
        self.problems = problems
        self.window.job_panel.show_problems(problems)
        self._show_problems()

    def _show_problems(self) -> None:
        """The status bar's button and its popup: the design's problems and, when the last result does
        not fit with the memory headroom, that too (never "no problems" beside "does not fit")."""
        from ...core.problems import count_text, first_error

        problems = self.problems + ([self._memory] if self._memory is not None else [])
        errors = "error" in map(attrgetter("severity"), problems)  # (searched in C: thousands at 131k GPUs)
        count = count_text(problems)
        first = first_error(problems)
        if first is None:
            self.window.problems_button.setText(count)
        else:  # the count and the first message, elided to a status-bar width; the whole list in the tooltip
            metrics = self.window.problems_button.fontMetrics()
            self.window.problems_button.setText(f"{count}: " + metrics.elidedText(first.message, Qt.ElideRight,
                                                                          PROBLEM_TEXT_PX).replace("&", "&&"))
        button = self.window.problems_button
        colour = "color: #b91c1c" if errors else "color: #b45309" if problems else "color: #047857"
        if button.styleSheet() != colour:  # (a style sheet set re-polishes the button, even the same one)
            button.setStyleSheet(colour)
        shown = problems[:TOOLTIP_PROBLEMS]
        tip = "\n".join([count + (" (click for the list)" if problems else "")] + [p.format() for p in shown]
                        + ([f"... and {len(problems) - len(shown)} more"] if len(problems) > len(shown) else []))
        if button.toolTip() != tip:
            button.setToolTip(tip)
        self.window.problems_popup.set_problems(problems)

    def on_replaced(self) -> None:
        """Another design (open, new, generate, or the undo of one): its results start afresh.

        The last result belongs to the design before: it is neither shown as stale nor compared with."""
        self._replaced_at = self.worker.latest
        self.result = self.previous_result = None
        self._memory = None
        self.stale_reason = None
        self._timeline_pending = False
        self._timeline_requested = None
        self.window.link_loads.forget()  # the links of the design before, read for its loads
        self.window.breakdown_panel.forget("evaluating...")
        self.window.timeline_panel.forget("evaluating...")

    def evaluate(self) -> None:
        """Hand a snapshot to the worker; the window never waits for it."""
        self.evaluating = True
        self.window.result_label.setText("evaluating...")
        snapshot = self.qdoc.doc.snapshot()
        number = self.worker.submit(snapshot)
        self._revision_of = {number: snapshot.revision}  # only the newest request's result is shown

    def on_evaluated(self, number: int, result, error, seconds: float) -> None:
        if self.closed or number != self.worker.latest or number <= self._replaced_at:
            return  # a newer edit superseded it, or it was for the design before the last replace
        self.evaluating = False
        if result is not None:
            # the result before, as its step and categories (ShownBefore), not the result and its arrays
            self.previous_result = ShownBefore.of(self.result) or self.previous_result
            self.result = result
            self.stale_reason = None
        else:
            if self.result is not None:  # the last valid result: what the next one is compared with
                self.previous_result = ShownBefore.of(self.result)
            self.result = None  # exports and the heat map need a current result
            self.stale_reason = None if error in (None, "no job") else self._stale_reason(error)
            self._stale_details = error or ""
        if error:
            if error == "no job":
                self.window.result_label.setText("no job")
            elif any(p.severity == "error" for p in self.problems):  # the problems button names them
                self.window.result_label.setText("not evaluated (the design has errors)")
            else:  # the engine's reason, elided at a word's end by Qt, never cut mid-word
                self.window.result_label.setText(self.window.result_label.fontMetrics().elidedText(
                    "not evaluated: " + (self.stale_reason or ""), Qt.ElideRight, STATUS_REASON_PX))
            self.window.result_label.setToolTip(self.stale_reason or error)  # whole, however long
        else:
            fits = "" if result.fits_with_headroom else ("   fits only without the memory headroom"
                                                         if result.fits_in_memory else "   does not fit in memory")
            self.window.result_label.setText(f"step {result.step_time_s:.2f} s   MFU {result.mfu:.1%}   "
                                      f"{result.model_tflops_per_gpu:.0f} TFLOP/s/GPU" + fits)
            self.window.result_label.setToolTip(f"evaluated in {seconds * 1000:.0f} ms off the UI thread")
        memory = memory_problem(result) if result is not None else None
        if memory != self._memory:
            self._memory = memory
            self._show_problems()
        self.window.resultChanged.emit(self.result)

    def _stale_reason(self, error: str) -> str:
        """Why there is no new result, in one sentence: the first error of the design, else the engine's."""
        from ...core.problems import first_error

        first = first_error([p for p in self.problems if p.severity == "error"])
        if first is not None:
            more = sum(p.severity == "error" for p in self.problems) - 1
            return first.message + (f" (and {more} more error{'s' if more > 1 else ''})" if more > 0 else "")
        return error.splitlines()[0]  # the engine's first problem, whole (its message and fix)

    def on_timeline(self, number: int, result, data) -> None:
        """The events of the result whose step time is shown: the timeline follows it."""
        if self.closed or result is not self.shown_result():
            return  # a newer result (or none, or another job's) is shown meanwhile
        self._timeline_pending = False
        self.window.timeline_panel.show_result(result, data)
        self.window.timeline_panel.revision = self.window.breakdown_panel.revision

    def _show_link_load(self) -> None:
        if not self.closed:
            self.window.inspector.show_result(self.result, now=True)

    def _wants_link_load(self) -> bool:
        """A view words link loads: the Inspector a selected link's, or the link heat's tooltips a bundle's
        busiest cable's (prepared by the worker, so that a first tooltip reads no link on this thread)."""
        return self.window.inspector.shows_one_link() or self.window.act_heat.isChecked()

    def link_load_later(self, _result) -> None:
        self._link_load_pending = self._wants_link_load()  # (settle() waits for it)
        if self.window.inspector.shows_one_link():
            self.window.inspector.mark_updating()
        QTimer.singleShot(0, self, lambda: self.closed or self._request_link_load(self.result))

    def link_load_soon(self, _result) -> None:
        """A link just selected on a big design: its load is asked of the worker a moment later. A
        user who selects a cable and types its new speed at once gets the edit's own result's load
        instead, and the worker's ~0.1 s (131k GPUs) no longer runs beside the window's commit and
        repaint of the edit (it held the window 118-150 ms)."""
        self._link_load_pending = True
        self._link_load_timer.start()

    def _link_load_due(self) -> None:
        if self.closed:
            return
        if self.evaluating or self.check_timer.isActive():
            self._link_load_pending = False  # an edit's result is coming: resultChanged asks for its load
            return
        self._request_link_load(self.result)

    def _request_link_load(self, result) -> None:
        """A new result (or a link selected, for a big design): the selected link's load with it,
        prepared by the worker off the UI thread (the links' tiers and cables read once per design, ~0.15 s
        at 131k GPUs, then carried across cables' speed edits); the Inspector shows what it showed until
        it comes."""
        if result is None or not self._wants_link_load() or not getattr(result, "link_load", None):
            self._link_load_pending = False
            QTimer.singleShot(0, self, self._show_link_load)  # nothing to word, or no link loads: cheap
            return
        self._link_load_pending = True
        self.worker.build_link_load(self.worker.latest, result, self.qdoc.doc.snapshot(),
                                    self.window.link_loads.groups)

    def on_link_load(self, _number: int, result, analysis) -> None:
        if self.closed or result is not self.result:
            return  # a newer result is shown: its own load is on its way
        doc = self.qdoc.doc
        if analysis is not None:
            changes = doc.changes_since(analysis.doc.revision) if analysis.doc.lineage is doc.lineage else None
            if changes is None or any(_changes_link_words(c) for c in changes):  # edited since it was asked
                if self.evaluating or self.check_timer.isActive():
                    self._link_load_pending = False  # the edit's own result asks again
                else:
                    self.worker.build_link_load(self.worker.latest, result, doc.snapshot(), self.window.link_loads.groups)
                return
            self.window.link_loads.take(result, doc, analysis)  # the canvas may have placed boxes since: the same words
        self._link_load_pending = False
        self.window.inspector.show_result(result, now=True)  # (analysis None: it failed; worded here)

    def _timeline_seen(self) -> bool:
        """The Timeline can be seen: its dock is open and it is not a tab behind another."""
        return self.window.timeline_panel.isVisible()

    def _details_later(self) -> None:
        """After the step time is on screen: the link heat (when on) and the timeline (when seen)."""
        if self.closed or self.result is None:
            return
        if self.window.act_heat.isChecked() and self._heat_of is not self.result:
            self._heat_of = self.result
            self.window.scene.heat.show(self.result)
        self._request_timeline()

    def timeline_shown(self, _visible: bool) -> None:
        """The Timeline's dock was opened, closed or its tab raised: the events of the result shown, if it
        can be seen now and lacks them (the signal's flag is not reliable for tabbed docks: asked anew)."""
        if self._timeline_seen():
            self._request_timeline()

    def _request_timeline(self) -> None:
        """The events of the result shown, built by the worker, if the Timeline can be seen and does
        not show them yet; a hidden Timeline costs nothing (it asks when it is shown)."""
        result = self.shown_result()
        if result is not None and self.window.timeline_panel.result is result:  # shown already (a job picked again)
            self._timeline_pending = False
            self.window.timeline_panel.updating.hide()
            return
        if result is None or not self._timeline_seen():
            if self._timeline_requested is not result or result is None:
                self._timeline_pending = False  # nothing on its way
            if result is not None and self.window.timeline_panel.result not in (None, result):
                # A hidden Timeline lets go of an older result and its events (tens of MB at 131k
                # GPUs); opened again, it asks for the shown result's.
                self.window.timeline_panel.clear("working out the events of the result shown...")
                self._timeline_requested = None
            return
        self._timeline_pending = True
        if self._timeline_requested is not result:
            self._timeline_requested = result
            self.worker.build_timeline(self.worker.latest, result)

    def shown_result(self):
        """What the Breakdown and Timeline show: the Jobs panel's current job's result on the shared
        fabric (result.jobs), the first job's being the result itself."""
        result = self.result
        jobs = getattr(result, "jobs", None) or []
        index = self.window.jobs_panel.current if hasattr(self.window, "jobs_panel") else 0
        return jobs[index].result if 0 < index < len(jobs) else result

    def shown_job_name(self) -> str | None:
        """The name of the job the panels show, when the design has several (None: one job)."""
        jobs = self.qdoc.doc.spec.jobs
        if not jobs or len(jobs) < 2:
            return None
        index = self.window.jobs_panel.current if hasattr(self.window, "jobs_panel") else 0
        return jobs[max(0, min(index, len(jobs) - 1))].name

    def show_job(self, index: int) -> None:
        """The Jobs panel's current job changed: the Job panel edits it, the Breakdown and Timeline show it."""
        self.window.job_panel.set_job_index(index)
        self.window.advisor_slot.set_job(index)  # its analyses, search and Apply are of this job
        if self.result is not None:
            self.window.breakdown_panel.forget()  # another job: not a difference to the one shown before
            self.show_panels(self.result)

    def show_panels(self, result) -> None:
        if result is not None:
            self.window.breakdown_panel.show_result(self.shown_result(), job=self.shown_job_name(), in_turns=True)
            self.window.breakdown_panel.revision = self._revision_of.get(self.worker.latest)
            self._timeline_pending = self._timeline_seen()  # (settle() waits for it)
            self.window.timeline_panel.mark_updating()
            # once the step time is painted (a zero-length timer came before that paint, and the timeline's
            # worker then competed with the Breakdown's drawing for the interpreter)
            self.window.breakdown_panel.when_painted(self._details_later)
            return
        self._timeline_pending = False
        self.window.timeline_panel.updating.hide()
        self._heat_of = None
        self.window.scene.heat.show(None)
        if self.stale_reason:  # keep the last valid result, marked, so the user can still compare
            details = ("\n".join(p.format() for p in self.problems if p.severity == "error")
                       or self._stale_details or self.stale_reason)
            self.window.breakdown_panel.mark_stale(self.stale_reason, details)
            self.window.timeline_panel.mark_stale(self.stale_reason, details)
            return
        reason = self.window.result_label.text() or "no job"
        self.window.breakdown_panel.clear(reason)
        self.window.timeline_panel.clear(reason)

    def set_heat_by_phase(self, on: bool) -> None:
        """View > Heat by Busiest Phase: a cable's colour is its busiest phase, else its share of the step."""
        from ..canvas import heat as link_heat
        from ..canvas.heat_menu import HEAT_BY_PHASE_SETTING

        self.window.scene.heat.set_mode(link_heat.PHASE if on else link_heat.STEP)
        self.window.settings.setValue(HEAT_BY_PHASE_SETTING, bool(on))

    def toggle_heat(self, on: bool) -> None:
        """View > Link Heat."""
        self._heat_of = self.result if on else None
        self.window.scene.heat.show(self._heat_of)
        self.window.view.set_heat(on)
        self.window.settings.setValue("view/link_heat", on)
        if on and self.result is not None and not self.window.link_loads.ready(self.result, self.qdoc.doc):
            self._request_link_load(self.result)  # for its tooltips


def memory_problem(result):
    """The result's memory verdict as a problem of the status bar's list (None when the plan fits
    with the memory headroom): a plan one would not run is a warning, as the Breakdown shows it."""
    from ...core.problems import Problem

    if result.fits_with_headroom:
        return None
    total = result.memory_gib_per_gpu.get("total", 0.0)
    hbm = result.memory_limit_gib
    what = ("does not fit in the GPU's memory" if not result.fits_in_memory
            else f"fits only without the memory headroom (limit {hbm:.1f} GiB)")
    return Problem(f"{total:.1f} GiB per GPU {what}", "memory", severity="warning",
                   fix=result.memory_reason or "recompute activations, shard the optimizer, or use more TP or PP")
