"""The Advisor's plan search: the "Search plans" button, its worker, its state and the "Best plans" page.

Only the button starts a search (it takes seconds); an edit stops a running one (its result would
be stale) and marks the plans shown stale until the button is pressed again. A plan of the list is
applied as one job edit (commands.SetJob, or SetJobs for one job of several)."""
from __future__ import annotations

from PySide6.QtWidgets import QPushButton

from ..common.action_guard import guarded
from ..common.wait import process_events_until
from .analysis_state import AnalysisState, Answer
from .best_plans import SEARCH_HINT, BestPlansPage
from .megatron_copy import install_copy_megatron
from .plan_search import SearchWorker
from .scaling_plot import count_text

SEARCH_TOP = 10  # plans listed
SEARCH_NOTES = {  # why a search ended without a result: the page's message, the status line
    "stopped": ("Search stopped.", "plan search stopped"),
    "changed": ("The search was stopped: the design changed while it ran.",
                "plan search stopped: the design changed"),
}
SEARCH_TIP = ("Walk every plan of this cluster (TP, PP, CP, EP, schedule, micro-batch, recompute, ZeRO, overlaps, "
              "rank order) and list the fastest that fit (a few seconds; press again to stop)")


class PlanSearchPart:
    """Asks the search worker, shows its answers on the "Best plans" page and applies a plan.

    The panel gives the revision, the job analysed, the status line and the tabs; this part owns
    the search's state (AnalysisState), its worker, its button and its page."""

    def __init__(self, panel):
        self.panel = panel
        self.state = AnalysisState("search")
        self.options = None  # a SpaceOptions to search a smaller space (tests); None: the whole space
        self.costed = 0  # plans costed so far by the running search
        self.note = ""  # why the last search ended without a result: "", "stopped" or "changed"
        self.last_applied: str | None = None  # the label of the plan applied, until searched again
        self.worker = SearchWorker()  # not a Qt child: its thread may outlive the window
        self.worker.progressed.connect(self.on_progress)
        self.worker.searched.connect(self.on_searched)
        self.button = QPushButton("Search plans")
        self.button.setObjectName("search")
        self.button.setToolTip(SEARCH_TIP)
        self.button.clicked.connect(guarded(panel, "Plan search", self.toggle))
        self.page = BestPlansPage(self.apply_plan)
        self.copy_megatron = install_copy_megatron(self.page.table, self.megatron_line, panel._say)

    # ---- state ----
    @property
    def result(self):
        return self.state.result

    def stale(self, revision: int) -> bool:
        return self.state.stale(revision)

    def status_text(self) -> str:
        """As short as the status line next to the busy bar wants it."""
        if self.costed:
            return f"searching plans: {self.costed:,} costed..."
        return f"searching plans on {count_text(self.panel.qdoc.doc.num_gpus())} GPUs..."

    def _progress_text(self) -> str:
        gpus = count_text(self.panel.qdoc.doc.num_gpus())
        if self.costed:
            return f"Searching plans on {gpus} GPUs: costed {self.costed:,} plans..."
        return f"Searching plans on {gpus} GPUs: enumerating the space..."

    def ended_text(self) -> str | None:
        """The status line once the search is over: how it ended (None: nothing to say)."""
        if self.note:
            return SEARCH_NOTES[self.note][1]
        if self.state.current(self.panel.revision) is not None:
            return f"{self.result.evaluated:,} plans costed in {self.result.elapsed_s:.1f} s"
        return None

    def stale_text(self, revision: int) -> str | None:
        """The banner over plans searched for an older design: stale after any edit until searched
        again (never automatically); None when they are current."""
        if not self.stale(revision):
            self.last_applied = None
            return None
        then = f"Applied \u201c{self.last_applied}\u201d (Edit > Undo takes it back). " \
            if self.last_applied else "The design changed since this search. "
        if self.state.busy:
            return then + "Searching again..."
        return then + "Press Search plans for the best plans of the design as it is now."

    # ---- requests ----
    def start(self) -> None:
        """Search the plans of the design as it is now (a running search is superseded)."""
        panel = self.panel
        if panel._closed:
            return
        request = self.state.start()
        self.costed = 0
        self.note = ""
        self.worker.submit(request, panel.revision, panel.qdoc.doc.snapshot(), SEARCH_TOP, self.options,
                           panel.job_name())
        panel.tabs.setCurrentWidget(self.page)
        self.refresh()

    def toggle(self) -> None:
        if self.state.busy:
            self.stop()
        else:
            self.start()

    def stop(self) -> None:
        """Stop the running search (what was shown before stays)."""
        if self.state.busy:
            self.cancel("stopped")
            self.panel._update_stale()

    def wait(self, timeout_s: float = 120.0) -> bool:
        """Process events until the running search is in (scripts, screenshots)."""
        return process_events_until(lambda: not self.state.busy, timeout_s)

    def cancel(self, why: str) -> None:
        self.worker.cancel()
        self.state.cancel()
        self.note = why
        self.refresh()

    def shutdown(self) -> None:
        self.worker.stop()  # a running search stops at its next progress call
        self.state.cancel()

    def refresh(self) -> None:
        """The button, the busy bar, the status line and the page's message follow the search."""
        panel, searching = self.panel, self.state.busy
        self.button.setText("Stop search" if searching else "Search plans")
        self.button.setToolTip("Stop the plan search" if searching else SEARCH_TIP)
        if self.result is None:
            if searching:
                self.page.show_message(self._progress_text() + "\n\nThe fastest plans that fit in "
                                       "memory will be listed here.")
            elif self.state.error is None:
                note = SEARCH_NOTES.get(self.note, ("", ""))[0]
                self.page.show_message((note + "\n\n" if note else "") + SEARCH_HINT)
        panel._show_busy()
        panel._finish_status()
        if not searching and not panel.running:  # the status line says how the search ended
            text = self.ended_text()
            if text is not None:
                panel._say(text)

    # ---- answers ----
    def on_progress(self, request: int, costed: int) -> None:
        panel = self.panel
        if panel._closed or request != self.state.request or not self.state.busy:
            return
        self.costed = costed
        if not panel.running:
            panel._say(self.status_text())
        if self.result is None and self.state.error is None:
            self.refresh()

    def on_searched(self, request: int, revision: int, result, error, seconds: float) -> None:
        panel = self.panel
        if panel._closed:
            return
        answer = self.state.receive(request, revision, panel.revision, result, error)
        if answer is Answer.SUPERSEDED:
            return  # superseded, stopped
        if answer is Answer.OUTDATED:  # the design changed while it ran: dropped
            self.note = "changed"
            self.refresh()
            panel._update_stale()
            return
        self.note = ""
        if answer is Answer.ERROR:
            self.page.show_error(error)
            panel.tabs.setTabText(1, "Best plans")
        else:
            self.page.show_result(result, stale=False)
            panel.tabs.setTabText(1, f"Best plans ({len(result.top)})")
        self.refresh()
        panel._update_stale()
        if not error:
            panel.searched.emit()

    # ---- plans ----
    def rows(self) -> list[dict]:
        """The best plans in table order (the search's rows: point, step_time_s, mfu, ...)."""
        return list(self.page.rows)

    def megatron_line(self, row: int) -> str | None:
        """The Megatron-LM line of a search-table row's plan (the file's own plan below the best)."""
        from ...core.export.megatron_args import plan_line
        from ...core.model.catalog import default_catalog

        result, rows, doc = self.result, self.page.rows, self.panel.qdoc.doc
        if result is None or doc.spec.workload is None:
            return None
        current = result.current if result.current is not None and "error" not in result.current else None
        point = rows[row]["point"] if row < len(rows) else current["point"] if current else None
        return None if point is None else plan_line(doc, point, default_catalog().presets()).one_line()

    def apply_plan(self, row: dict) -> bool:
        """Apply a plan of the search as one undo step (a job edit); False, and why in the status line,
        when it cannot be."""
        panel = self.panel
        if panel._closed or row is None or self.result is None:
            return False
        if self.stale(panel.revision) or self.state.revision != panel.revision:
            panel._say("the design changed since this search: search again first")
            return False
        current = self.result.current
        if current is not None and row["point"] == current["point"]:
            panel._say("this is the file's plan already")
            return False
        point = row["point"]
        command = self._plan_command(point)
        if command is None:
            panel._say("the design has no workload")
            return False
        label = point.label()
        self.last_applied = label
        panel._last_applied = f"Search: {label}"
        panel.qdoc.push(command)  # the document changes: the window re-evaluates, these plans go stale
        panel._update_stale()
        panel.planApplied.emit(label)
        return True

    def _plan_command(self, point):
        """The undo command that gives the design (or the searched job of several) the plan `point`;
        None when the design has no workload."""
        from ..document.commands import SetJob

        qdoc = self.panel.qdoc
        doc, label = qdoc.doc, point.label()
        if doc.spec.jobs:  # several jobs: the plan is the searched job's
            import copy

            from ..document.job_commands import SetJobs

            jobs = copy.deepcopy(list(doc.spec.jobs))
            job = next(j for j in jobs if j.name == self.panel.job_name())
            job.workload, job.parallelism = point.workload(job.workload), point.parallelism(job.parallelism)
            return SetJobs(qdoc, jobs, f"Search: {label} ({job.name})")
        if doc.spec.workload is None:
            return None
        return SetJob(qdoc, workload=point.workload(doc.spec.workload),
                      parallelism=point.parallelism(doc.spec.parallelism), text=f"Search: {label}")
