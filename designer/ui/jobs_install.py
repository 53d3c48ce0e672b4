"""Several jobs in the window: the Jobs dock, the jobs' colours on the canvas, Mark Down / Up.

The Jobs panel's current job is the one the Job panel edits and the Breakdown and Timeline show
(window.results.shown_result); the canvas frames each server in its job's colour after every evaluation.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt


def install_jobs(window) -> None:
    from .canvas.job_colors import CanvasJobMarks
    from .jobs_panel import JobsPanel
    from .mark_down import follow_selection

    doc_of = window.qdoc

    def selected_servers() -> list[str]:
        return [i for i in window.scene.selected_ids() if doc_of.doc.find("nodes", i) is not None]

    window.jobs_panel = JobsPanel(window.qdoc, selected_servers)
    window.jobs_dock = window._dock(window.jobs_panel, "Jobs", Qt.LeftDockWidgetArea)
    window.tabifyDockWidget(window.job_dock, window.jobs_dock)
    _add_to_view_menu(window, window.jobs_dock.toggleViewAction())
    window.job_marks = CanvasJobMarks(window.scene, window.view)
    follow_selection(window)

    panel = window.jobs_panel
    panel.message.connect(window.tell)
    panel.shownJobChanged.connect(window.results.show_job)
    panel.editWorkloadRequested.connect(lambda: (window.job_dock.show(), window.job_dock.raise_()))
    window.resultChanged.connect(panel.show_result)
    window.resultChanged.connect(window.job_marks.set_result)
    window.qdoc.replaced.connect(lambda: _raise_when_several(window))
    panel.shownJobChanged.connect(lambda _i: _title_docks(window))
    window.resultChanged.connect(lambda _r: _title_docks(window))
    window._job_legend_follower = _LegendFollower(window.view, window.job_marks.legend)


class _LegendFollower(QObject):
    """Keeps the jobs' legend in the view's corner when the view is resized."""

    def __init__(self, view, legend):
        super().__init__(view)
        self.legend = legend
        view.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Resize:
            self.legend.place()
        return False


def _add_to_view_menu(window, action) -> None:
    """View > Jobs, after View > Job (the menu lists the docks made before it was built)."""
    for top in window.menuBar().actions():
        menu = top.menu()
        if menu is not None and top.text().replace("&", "") == "View":
            actions = menu.actions()
            job = window.job_dock.toggleViewAction()
            after = actions[actions.index(job) + 1] if job in actions[:-1] else None
            menu.insertAction(after, action) if after is not None else menu.addAction(action)
            return


def _title_docks(window) -> None:
    """"Breakdown: job B" and "Timeline: job B" while the design has several jobs (which one they show)."""
    jobs = window.qdoc.doc.spec.jobs
    name = jobs[min(window.jobs_panel.current, len(jobs) - 1)].name if len(jobs) > 1 else None
    for dock, title in ((window.breakdown_dock, "Breakdown"), (window.timeline_dock, "Timeline")):
        dock.setWindowTitle(f"{title}: {name}" if name else title)


def _raise_when_several(window) -> None:
    """A design with several jobs opens with the Jobs panel in front."""
    if window.qdoc.doc.spec.jobs and len(window.qdoc.doc.spec.jobs) > 1:
        window.jobs_dock.raise_()
