"""The Advisor: what limits the step, which changes would buy the most, and where more GPUs stop paying.

`AdvisorPanel(qdoc)` shows, for the open design,
- the attribution of the step (designer.core.analysis.attribution via whatif.advise): a one-line
  summary, the critical resource, and the causes with their share of the step (a thin stacked bar
  and a list);
- every candidate change of the hardware, the plan and the software settings, costed by the
  engine and ranked by predicted speed-up (whatif.advise), each applicable with one click (or a
  double-click on its row) as ONE undo step: a job edit (commands.SetJob) when only the workload
  or the plan changes, otherwise the changed design as a whole (commands.ReplaceDocument);
- the scaling curve (scaling.scale): tokens/s against the GPU count, the linear ideal, strong or
  weak scaling, and the verdict ("more GPUs stop paying at ...");
- on "Search plans" only (it takes seconds), the plan search (analysis.search, in this process,
  see plan_search.py) in a "Best plans" tab: the fastest plans of the whole space that fit, their
  speed-up against the file's plan, the verdict and how the space was cut down, each plan
  applied as one job edit (commands.SetJob).

The parts: each analysis's request, busy flag, result, error and revision are one AnalysisState
(analysis_state.py); the plan search with its button, worker and page (advisor_search.py), the
right column of buttons, status and curve (advisor_controls.py), the undo command that applies a
change (advisor_apply.py), the worker (advisor_worker.py), the causes bar (cause_bar.py), the scaling
curve (scaling_plot.py), the best-plans page (best_plans.py) and the "Job moves" and "What if it
fails" tabs (failures_part.py, failures_page.py, failures_worker.py) are modules of their own; the texts
the CLI prints too come from designer.core.analysis.texts. A new analysis adds a state and a part.

The analysis runs off the UI thread (AdvisorWorker: one long-lived daemon thread, the newest
request of each kind wins, emits guarded so it may outlive the window) on snapshots of the
document. Every edit bumps the panel's revision: a result computed for an older revision is
dropped, what is shown is marked stale (its Apply buttons disabled, since applying it would
undo the edits made since) and, while the panel is shown and Auto is on, analysed again after
a short pause. A search is never started by an edit: an edit stops a running search (its
result would be stale) and marks the plans shown stale until Search plans is pressed again.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer, Signal
from PySide6.QtWidgets import QDockWidget, QHBoxLayout, QSplitter, QTabWidget, QVBoxLayout, QWidget

from ..common.wait import process_events_until
from .advisor_changes import ChangesPage
from .advisor_apply import advice_command
from .advisor_controls import ControlColumn
from .advisor_search import PlanSearchPart
from .advisor_slot import PANEL_MIN_SIZE, PANEL_SIZE
from .advisor_worker import AdvisorWorker
from .analysis_state import AnalysisState, Answer
from .scaling_plot import count_text

AUTO_DELAY_MS = 700  # pause after the last edit before an automatic re-analysis


class _Split(QSplitter):
    """Table | curve: the curve gets `right` pixels the first time there is room, the table the rest
    (later the user's drag decides)."""

    def __init__(self, right: int = 300):
        super().__init__(Qt.Horizontal)
        self.right = right
        self._placed = False

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if not self._placed and self.width() > 2 * self.right:
            self._placed = True
            self.setSizes([self.width() - self.right - self.handleWidth(), self.right])


class AdvisorPanel(QWidget):
    """Attribution, ranked what-if changes (one click applies one), the scaling curve and the plan search.

    Each analysis keeps its request, busy flag, result, error and revision in one AnalysisState
    (analysis_state.py); the scaling curve (scaling_plot.py) and the best plans (best_plans.py)
    are widgets of their own. The panel asks, routes the answers and marks what is stale."""

    applied = Signal(str)  # the id of the advice applied
    analysed = Signal()  # a fresh advice report is shown
    scalingShown = Signal()  # a fresh scaling report is shown
    searched = Signal()  # a fresh plan search is shown
    planApplied = Signal(str)  # the label of the plan applied
    elementsRequested = Signal(list)  # ids to select on the canvas (a failure's row, failures_part.py)
    failuresShown = Signal()  # a fresh "What if it fails" ranking is shown
    movesShown = Signal()  # fresh job moves are shown

    def __init__(self, qdoc, parent: QWidget | None = None, slowdown_s: float = 0.0):
        super().__init__(parent)
        self.qdoc = qdoc
        self.revision = 0  # bumped by every change of the document
        self.job_index = 0  # with several jobs: the one analysed (the Jobs panel's current job)
        self.advice_state = AnalysisState("advise")
        self.scale_state = AnalysisState("scale")
        self._dock = None  # the QDockWidget holding the panel, once shown
        self._closed = False
        self._last_applied: str | None = None
        self.worker = AdvisorWorker(slowdown_s)  # not a Qt child: its thread may outlive the window
        self.worker.advised.connect(self._on_advised)
        self.worker.scaled.connect(self._on_scaled)
        # the plan search: only on the button, its own thread (an analysis need not wait for it)
        self.plan_search = PlanSearchPart(self)
        self._auto_timer = QTimer(self, singleShot=True, interval=AUTO_DELAY_MS, timeout=self._auto_analyse)
        qdoc.changed.connect(self._on_changed)
        qdoc.replaced.connect(self._on_replaced)
        self._build()
        from ..common.wheel_guard import guard_wheel

        guard_wheel(self)  # scrolling past the scaling mode never switches it

    # ---- layout ----
    def _build(self) -> None:
        self.changes = ChangesPage(self.qdoc, self.apply, self._say)
        left = self.changes
        # the right column: the buttons, the status, the scaling curve and its verdict (advisor_controls.py)
        right = self.controls = ControlColumn(self, self.analyse, self.run_scale, AUTO_DELAY_MS)

        # the tabs: the ranked changes (with the attribution) and the best plans of the search
        self.tabs = QTabWidget()
        self.tabs.setObjectName("advisor_tabs")
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(left, "Changes")
        self.tabs.addTab(self.plan_search.page, "Best plans")  # the best plans of the search (best_plans.py)
        self.tabs.setTabToolTip(0, "What limits the step and every candidate change, ranked (Analyse)")
        self.tabs.setTabToolTip(1, "The fastest plans of the whole space that fit in memory (Search plans)")
        from .failures_part import FailuresPart

        self.failures_part = FailuresPart(self)  # the "Job moves" and "What if it fails" tabs
        corner = QWidget()
        corner_lay = QHBoxLayout(corner)
        corner_lay.setContentsMargins(0, 0, 4, 2)
        corner_lay.addWidget(self.plan_search.button)
        self.tabs.setCornerWidget(corner, Qt.TopRightCorner)

        self.splitter = _Split(300)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.tabs)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 0)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(8, 4, 8, 4)
        outer.addWidget(self.splitter)

    def sizeHint(self) -> QSize:
        return PANEL_SIZE  # (the slot that holds the dock's place before the panel is made answers the same)

    def minimumSizeHint(self) -> QSize:
        return PANEL_MIN_SIZE

    # ---- state ----
    @property
    def stale(self) -> bool:
        """What is shown was computed for an older version of the design."""
        return self.advice_state.stale(self.revision)

    @property
    def running(self) -> bool:
        return self.advice_state.busy or self.scale_state.busy

    def wait_done(self, timeout_s: float = 60.0) -> bool:
        """Process events until the analysis and the scaling curve are in (scripts, screenshots)."""
        advice = self.advice_state
        return process_events_until(
            lambda: not self.running and (advice.result is not None or advice.error is not None), timeout_s)

    def shutdown(self) -> None:
        """The window closes: no more requests, no late results (a running analysis is dropped)."""
        self._closed = True
        self._auto_timer.stop()
        self.worker.stop()
        self.plan_search.shutdown()
        self.failures_part.shutdown()
        self.controls.busy.hide()

    def set_job(self, index: int) -> None:
        """The Jobs panel's current job: the one the analyses, the search and Apply are of."""
        if index != self.job_index:
            self.job_index = index
            self._document_changed()  # the advice shown is of another job now: stale, analysed again

    def job_name(self) -> str | None:
        """The name of the job analysed (None: the design has one job)."""
        jobs = self.qdoc.doc.spec.jobs
        return jobs[max(0, min(self.job_index, len(jobs) - 1))].name if jobs else None

    def _on_changed(self, _changes) -> None:
        self._document_changed()

    def _on_replaced(self) -> None:
        self._document_changed()

    def _document_changed(self) -> None:
        if self._closed:
            return
        self.revision += 1
        self.failures_part.document_changed()
        if self.plan_search.state.busy:  # its result would be stale: stop it, free the CPU for the analysis
            self.plan_search.cancel("changed")
        self._update_stale()
        if self.controls.auto_check.isChecked() and self.shown:
            self._auto_timer.start()

    @property
    def shown(self) -> bool:
        """On screen: a dock behind another tab stays "visible" to Qt, moved out of the window."""
        return self.isVisible() and not self.visibleRegion().isEmpty()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._dock is None:  # a tab switch does not show or hide the panel: the dock tells
            parent = self.parentWidget()
            while parent is not None and not isinstance(parent, QDockWidget):
                parent = parent.parentWidget()
            if parent is not None:
                self._dock = parent
                parent.visibilityChanged.connect(self._on_dock_visibility)
        self._auto_start(150)

    def _on_dock_visibility(self, visible: bool) -> None:
        if visible:
            self._auto_start(150)  # raised: analyse what has not been analysed yet
        self._update_stale()

    def _auto_start(self, delay_ms: int) -> None:
        if self._closed or not self.controls.auto_check.isChecked() or self.advice_state.busy:
            return
        if not self.advice_state.settled(self.revision):
            self._auto_timer.start(delay_ms)

    def _auto_analyse(self) -> None:
        if not self._closed and self.shown and self.controls.auto_check.isChecked():
            self.analyse()

    # ---- requests ----
    def analyse(self) -> None:
        """Advice and the scaling curve for the design as it is now (newest request wins)."""
        if self._closed:
            return
        self._auto_timer.stop()
        snapshot, mode = self.qdoc.doc.snapshot(), self.controls.mode_combo.currentText()
        for state in (self.advice_state, self.scale_state):
            self.worker.submit(state.name, state.start(), self.revision, snapshot, mode, self.job_name())
        self._show_busy()

    def run_scale(self) -> None:
        if self._closed:
            return
        self.worker.submit("scale", self.scale_state.start(), self.revision, self.qdoc.doc.snapshot(),
                           self.controls.mode_combo.currentText(), self.job_name())
        self._show_busy()

    def _show_busy(self) -> None:
        running, searching = self.running, self.plan_search.state.busy
        self.controls.busy.setVisible(running or searching)
        if not running and searching:
            self.controls.status_label.setText(self.plan_search.status_text())
        if running:
            what = "analysing" if self.advice_state.busy else f"scaling ({self.controls.mode_combo.currentText()})"
            self.controls.status_label.setText(f"{what} {count_text(self.qdoc.doc.num_gpus())} GPUs...")
            if self.advice_state.result is None and self.advice_state.error is None:
                self.changes.show_analysing()

    # ---- answers ----
    def _on_advised(self, request: int, revision: int, report, error, seconds: float) -> None:
        if self._closed:
            return
        answer = self.advice_state.receive(request, revision, self.revision, report, error)
        if answer is Answer.SUPERSEDED:
            return  # a newer request is on its way
        if answer is Answer.OUTDATED:  # the design changed while it ran: dropped
            self._show_busy()
            self._finish_status()
            self._update_stale()
            if self.controls.auto_check.isChecked() and self.shown and not self._auto_timer.isActive():
                self._auto_timer.start()
            return
        if answer is Answer.ERROR:
            self.changes.show_error(error)
            self.tabs.setTabText(0, "Changes")
        else:
            self.changes.show_report(report, can_apply=not self.stale)
            self.tabs.setTabText(0, f"Changes ({len(report['ranked'])})")
        self.failures_part.analyse_moves()  # several jobs: then the moves that pay (one heavy analysis at a time)
        self._show_busy()
        self._finish_status()
        self._update_stale()
        if not error:
            self.analysed.emit()

    def _on_scaled(self, request: int, revision: int, report, error, seconds: float) -> None:
        if self._closed:
            return
        answer = self.scale_state.receive(request, revision, self.revision, report, error)
        if answer is Answer.SUPERSEDED:
            return
        self._show_busy()
        if answer is Answer.OUTDATED:
            self._finish_status()
            return
        if answer is Answer.ERROR:
            self.controls.scaling_view.show_error(error)
        else:
            self.controls.scaling_view.show_report(report)
        self._finish_status()
        self._update_stale()
        if not error:
            self.scalingShown.emit()

    def _finish_status(self) -> None:
        if self.running:
            return
        if self.plan_search.state.busy:
            self.controls.status_label.setText(self.plan_search.status_text())
            return
        if self.advice_state.result is not None:
            n = len(self.advice_state.result["ranked"])
            job = self.advice_state.result.get("job_name")
            self.controls.status_label.setText(f"{n} changes costed on {count_text(self.qdoc.doc.num_gpus())} GPUs "
                                      f"in {self.advice_state.result.get('elapsed_s', 0.0):.2f} s"
                                      + (f" for job {job} alone" if job else ""))
        elif self.advice_state.error:
            self.controls.status_label.setText("the design cannot be analysed")
        else:
            self.controls.status_label.setText("")

    def _update_stale(self) -> None:
        stale = self.stale or self.scale_state.stale(self.revision)
        if stale:
            then = f"Applied \u201c{self._last_applied}\u201d (Edit > Undo takes it back). " if self._last_applied \
                else "The design changed since this analysis. "
            if self.advice_state.busy or self._auto_timer.isActive():
                text = then + "Analysing again..."
            elif self.controls.auto_check.isChecked() and self.shown:
                text = then + "Analysing again shortly..."
            else:
                text = then + "Press Analyse for advice on the design as it is now."
        else:
            text = None
            self._last_applied = None
        self.changes.set_stale(text, can_apply=not self.stale)
        self.plan_search.page.set_stale(self.plan_search.stale_text(self.revision))

    # ---- "Copy as Megatron arguments" (megatron_copy.py) -----------------------------------
    def _say(self, text: str) -> None:
        self.controls.status_label.setText(text)

    def apply(self, advice) -> bool:
        """Apply one change as one undo step; False (and why, in the status line) when it cannot be."""
        if self._closed or advice is None:
            return False
        if advice.error or advice.document is None:
            self.controls.status_label.setText(f"{advice.title}: not applicable ({advice.error})")
            return False
        if self.stale or self.advice_state.revision != self.revision:
            self.controls.status_label.setText("the design changed since this analysis: analyse again first")
            return False
        job_name = self.advice_state.result.get("job_name") if isinstance(self.advice_state.result, dict) else None
        self._last_applied = advice.title
        # the document changes: the window re-evaluates, this advice goes stale
        self.qdoc.push(advice_command(self.qdoc, advice, job_name, f"Advisor: {advice.title}"))
        self._update_stale()
        self.applied.emit(advice.id)
        return True


class _TabifyOnShow(QObject):
    """Tabify two docks once their window has been shown (see tabify_behind)."""

    def __init__(self, window, front, dock, then=None):
        super().__init__(window)
        self.front, self.dock, self.then = front, dock, then
        window.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Show:
            watched.removeEventFilter(self)
            QTimer.singleShot(0, self._tabify)
        return False

    def _tabify(self) -> None:
        try:
            window = self.parent()
            window.tabifyDockWidget(self.front, self.dock)
            self.dock.show()
            self.front.raise_()
            if self.then is not None:  # e.g. the saved layout, which this tabify would undo
                self.then()
            self.deleteLater()
        except RuntimeError:  # the window went before the timer fired
            pass


def tabify_behind(window, front, dock, then=None) -> None:
    """Put `dock` in a tab behind `front` (docks of a QMainWindow), `front` staying in front.

    Done right after the window is first shown: Qt 6.11, tabifying a second tab group before,
    makes a spare tab bar that stays visible over the other docks and narrows the side docks.
    Until then the dock is hidden (and its panel idle). `then()` is called right after."""
    dock.hide()
    _TabifyOnShow(window, front, dock, then)
