"""Several jobs in the window: the Jobs dock and the jobs' colours on the canvas.

The Jobs panel's current job is the one the Job panel edits and the Breakdown and Timeline show
(window.results.shown_result); the canvas frames each server in its job's colour after every evaluation.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt


class JobsControl:
    """The Jobs dock (`panel`, `dock`) and the jobs' colours on the canvas (`marks`) of `window`."""

    def __init__(self, window):
        from ..canvas.job_colors import CanvasJobMarks
        from .jobs_panel import JobsPanel

        self.window = window
        self.panel = JobsPanel(window.qdoc, self.selected_servers, gpus=window.results.gpus)
        self.dock = window._dock(self.panel, "Jobs", Qt.LeftDockWidgetArea)
        window.tabifyDockWidget(window.job_dock, self.dock)
        self.marks = CanvasJobMarks(window.scene, window.view)
        self._legend_follower = _LegendFollower(window.view, self.marks.legend)

    def selected_servers(self) -> list[str]:
        w = self.window
        return [i for i in w.scene.selected_ids() if w.qdoc.doc.find("nodes", i) is not None]

    def connect(self) -> None:
        """Follow the window's results and document (once its menus and results exist)."""
        w = self.window
        panel = self.panel
        panel.message.connect(w.tell)
        panel.shownJobChanged.connect(w.results.show_job)
        panel.editWorkloadRequested.connect(lambda: (w.job_dock.show(), w.job_dock.raise_()))
        w.resultChanged.connect(panel.show_result)
        w.resultChanged.connect(self.marks.set_result)
        w.qdoc.replaced.connect(self._raise_when_several)
        panel.shownJobChanged.connect(lambda _i: self._title_docks())
        w.resultChanged.connect(lambda _r: self._title_docks())

    def _title_docks(self) -> None:
        """"Breakdown: job B", "Timeline: job B" and "Advisor: job B" while the design has several jobs
        (which one they show)."""
        w = self.window
        name = w.results.shown_job_name()
        for dock, title in ((w.breakdown_dock, "Breakdown"), (w.timeline_dock, "Timeline"),
                            (w.advisor_dock, "Advisor")):
            dock.setWindowTitle(f"{title}: {name}" if name else title)

    def _raise_when_several(self) -> None:
        """A design with several jobs opens with the Jobs panel in front."""
        jobs = self.window.qdoc.doc.spec.jobs
        if jobs and len(jobs) > 1:
            self.dock.raise_()


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
