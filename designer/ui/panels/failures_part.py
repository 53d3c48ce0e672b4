"""The Advisor's "What if it fails" and "Job moves" tabs: their states, their worker, their pages.

`FailuresPart(panel)` adds two tabs to the Advisor's tab widget and keeps, as the panel's other
analyses do, one AnalysisState per analysis (analysis_state.py) against the panel's revision:
- "What if it fails" runs only on its button (seconds: every switch, a server of each job and a
  cable of each kind marked down in turn, designer.core.analysis.failures.rank_failures), with a
  progress bar and Cancel; an edit stops a running one (its answer would be stale) and marks the
  table shown stale until it is run again;
- "Job moves" (only for a design of two jobs or more) runs with every analysis of the panel
  (Analyse, Auto) and lists the placement moves that pay (job_moves).
Selecting a failure's row asks, through `panel.elementsRequested`, for its elements on the canvas.
"""
from __future__ import annotations

from PySide6.QtCore import QObject

from ..common.action_guard import guarded
from .analysis_state import AnalysisState, Answer
from .failures_page import FAILURES_HINT, GROUP_ROLE, MOVES_HINT, FailuresPage, MovesPage
from .failures_worker import FailuresWorker

FAILURES_TAB, MOVES_TAB = "What if it fails", "Job moves"


def several_jobs(doc) -> bool:
    return len(doc.spec.jobs or []) >= 2


def select_elements(window, ids: list[str]) -> None:
    """Select `ids` on the canvas and show the first, as a problem's jump does (window.jump_to)."""
    if not ids:
        return
    window.jump_to(ids[0])  # selects and centres it (a link not drawn: the end of it that is)
    if len(ids) > 1:
        window.scene.select_ids(ids)


class FailuresPart(QObject):
    def __init__(self, panel):
        super().__init__(panel)
        self.panel = panel
        self.failures_state = AnalysisState("failures")
        self.moves_state = AnalysisState("moves")
        self.note = ""  # why the last run ended without a result: "", "stopped" or "changed"
        self.tried, self._total = 0, 0  # failures costed so far by the running run, of how many
        self.worker = FailuresWorker()  # not a Qt child: its thread may outlive the window
        self.worker.progressed.connect(self._on_progress)
        self.worker.finished.connect(self._on_finished)
        self.page = FailuresPage()
        self.moves_page = MovesPage()
        self.page.run_button.clicked.connect(guarded(panel, "What if it fails", self.run_failures))
        self.page.cancel_button.clicked.connect(guarded(panel, "Cancel", self.cancel_failures))
        self.page.table.itemSelectionChanged.connect(self._on_row_selected)
        tabs = panel.tabs
        tabs.addTab(self.moves_page, MOVES_TAB)
        tabs.addTab(self.page, FAILURES_TAB)
        tabs.setTabToolTip(tabs.indexOf(self.moves_page), "Placement moves of one job that make the jobs faster")
        tabs.setTabToolTip(tabs.indexOf(self.page), "The single failures of the fabric ranked by what they "
                                                    "cost the jobs (press What if it fails)")
        self._follow_jobs()

    # ---- state ----
    @property
    def running(self) -> bool:
        return self.failures_state.busy

    @property
    def groups(self) -> list:
        return list(self.page.groups)

    @property
    def moves(self) -> list:
        return list(self.moves_page.moves)

    def _follow_jobs(self) -> None:
        """The Job moves tab only for a design of several jobs."""
        tabs = self.panel.tabs
        tabs.setTabVisible(tabs.indexOf(self.moves_page), several_jobs(self.panel.qdoc.doc))

    # ---- requests ----
    def run_failures(self) -> None:
        """Rank the single failures of the design as it is now (a running run is superseded)."""
        if self.panel._closed:
            return
        self.note, self.tried, self._total = "", 0, 0
        request = self.failures_state.start()
        self.worker.submit("failures", request, self.panel.revision, self.panel.qdoc.doc.snapshot())
        self.panel.tabs.setCurrentWidget(self.page)
        self._failures_changed()

    def cancel_failures(self, why: str = "stopped") -> None:
        if not self.failures_state.busy:
            return
        self.worker.cancel("failures")
        self.failures_state.cancel()
        self.note = why
        self._failures_changed()

    def analyse_moves(self) -> None:
        """With every analysis of the panel: the job moves of a design of several jobs."""
        if self.panel._closed:
            return
        self._follow_jobs()
        if not several_jobs(self.panel.qdoc.doc):
            self.worker.cancel("moves")
            self.moves_state.cancel()
            return
        request = self.moves_state.start()
        self.worker.submit("moves", request, self.panel.revision, self.panel.qdoc.doc.snapshot())
        self._moves_changed()

    def document_changed(self) -> None:
        """An edit: a running analysis stops (its answer would be stale), what is shown is marked stale."""
        self._follow_jobs()
        if self.failures_state.busy:
            self.cancel_failures("changed")
        if self.moves_state.busy:  # the next analysis costs them again, for the design as it is now
            self.worker.cancel("moves")
            self.moves_state.cancel()
            if not self.moves_page.moves:
                self.moves_page.show_message(MOVES_HINT)
        self._update_stale()

    def shutdown(self) -> None:
        self.worker.stop()
        self.failures_state.cancel()
        self.moves_state.cancel()

    # ---- showing ----
    def _failures_changed(self) -> None:
        busy = self.failures_state.busy
        self.page.set_running(busy, self.tried, self._total)
        if not busy and self.note:
            ended = {"stopped": "Stopped: no failure ranked.",
                     "changed": "Stopped: the design changed while it ran."}[self.note]
            self.page.summary.setText(ended)
            if not self.page.groups:
                self.page.show_message(ended + "\n\n" + FAILURES_HINT)
        elif busy:
            gpus = f"{self.panel.qdoc.doc.num_gpus():,} GPUs"
            self.page.summary.setText(f"failing each part in turn on {gpus}...")
            if not self.page.groups:
                self.page.show_message(f"Marking each part down in turn and costing the jobs on {gpus}...\n\n"
                                       "The failures will be listed here, costliest first.")
        self._update_stale()

    def _moves_changed(self) -> None:
        if self.moves_state.busy and not self.moves_page.moves:
            self.moves_page.show_message("placing each job by every other policy...")
        self._update_stale()

    def _update_stale(self) -> None:
        revision = self.panel.revision
        text = None
        if self.failures_state.stale(revision):
            text = "The design changed since these failures were ranked. " + \
                ("Ranking again..." if self.failures_state.busy else
                 "Press What if it fails for the design as it is now.")
        self.page.set_stale(text)
        moves_text = None
        if self.moves_state.stale(revision):
            moves_text = "The design changed since these moves were costed. " + \
                ("Costing again..." if self.moves_state.busy else "Analyse for the design as it is now.")
        self.moves_page.set_stale(moves_text)

    def _on_row_selected(self) -> None:
        rows = {i.data(GROUP_ROLE) for i in self.page.table.selectedItems()}
        rows.discard(None)
        if len(rows) == 1:
            group = self.page.groups[rows.pop()]
            self.panel.elementsRequested.emit(list(group.elements))

    # ---- answers ----
    def _on_progress(self, kind: str, request: int, done: int, total: int) -> None:
        if kind == "moves":
            if request == self.moves_state.request and self.moves_state.busy and not self.moves_page.moves:
                self.moves_page.show_message(f"Placing each job by every other policy: {done} of at most {total} "
                                             "placements costed...")
            return
        if request != self.failures_state.request or not self.failures_state.busy:
            return
        self.tried, self._total = done, total
        self.page.set_running(True, done, total)

    def _on_finished(self, kind: str, request: int, revision: int, result, error, seconds: float) -> None:
        if self.panel._closed:
            return
        state = self.failures_state if kind == "failures" else self.moves_state
        answer = state.receive(request, revision, self.panel.revision, result, error)
        if answer is Answer.SUPERSEDED:
            return
        if kind == "failures":
            if answer is Answer.OUTDATED:
                self.note = "changed"
            elif answer is Answer.ERROR:
                self.note = ""
                self.page.show_message("Cannot rank the failures of this design:\n\n" + error, error=True)
                self.page.summary.setText("")
            else:
                self.note = ""
                self.page.show_groups(result["groups"], len(result["ranked"]), seconds)
            self._set_tab_text(self.page, FAILURES_TAB, len(self.page.groups))
            self._failures_changed()
            if answer is Answer.RESULT:
                self.panel.failuresShown.emit()
        else:
            if answer is Answer.ERROR:
                self.moves_page.show_message("Cannot cost the job moves of this design:\n\n" + error, error=True)
            elif answer is Answer.RESULT:
                self.moves_page.show_moves(result)
            self._set_tab_text(self.moves_page, MOVES_TAB, len(self.moves_page.moves))
            self._moves_changed()
            if answer is Answer.RESULT:
                self.panel.movesShown.emit()

    def _set_tab_text(self, page, title: str, count: int) -> None:
        tabs = self.panel.tabs
        tabs.setTabText(tabs.indexOf(page), f"{title} ({count})" if count else title)

