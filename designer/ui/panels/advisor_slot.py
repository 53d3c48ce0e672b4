"""The Advisor dock's contents, the panel made the first time the user brings the dock up.

The Advisor (advisor.py) sits in a tab behind the Timeline and stays idle until raised, yet its tables,
curve, tabs and workers took a tenth of a new window's making. `AdvisorSlot` stands in the dock until
the dock is first raised (View > Advisor, its tab) or something asks for the panel (`panel()`); it
answers the panel's sizes, so the docks are laid out as with the panel, and keeps the job the panel
is to analyse (the Jobs panel's current job) meanwhile.
"""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QDockWidget, QVBoxLayout, QWidget

PANEL_SIZE = QSize(640, 300)  # the Advisor's preferred size: a few rows of its table beside the curve
PANEL_MIN_SIZE = QSize(360, 220)


class AdvisorSlot(QWidget):
    """Holds the Advisor panel in its dock; makes it with `make_panel()` when first needed."""

    def __init__(self, make_panel: Callable[[], QWidget]):
        super().__init__()
        self._make_panel = make_panel
        self._panel = None
        self._job_index = 0
        self._closed = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)

    def sizeHint(self) -> QSize:
        return PANEL_SIZE

    def minimumSizeHint(self) -> QSize:
        return PANEL_MIN_SIZE

    def follow(self, dock: QDockWidget) -> None:
        """Make the panel when `dock` (holding this slot) is first brought up."""
        dock.visibilityChanged.connect(self._on_dock_visibility)

    def _on_dock_visibility(self, visible: bool) -> None:
        if visible:
            self.panel()

    def panel(self):
        """The Advisor panel, made now if it was not yet."""
        if self._panel is None:
            panel = self._make_panel()
            panel.set_job(self._job_index)
            self.layout().addWidget(panel)
            panel.show()  # shown with the dock, as a panel made with it is
            if self._closed:  # the window closed before: a panel that never asks
                panel.shutdown()
            self._panel = panel
        return self._panel

    def set_job(self, index: int) -> None:
        """The Jobs panel's current job: the one the Advisor analyses (advisor.AdvisorPanel.set_job)."""
        self._job_index = index
        if self._panel is not None:
            self._panel.set_job(index)

    def shutdown(self) -> None:
        """The window closes: the panel, if made, stops (advisor.AdvisorPanel.shutdown)."""
        self._closed = True
        if self._panel is not None:
            self._panel.shutdown()
