"""The Timeline's widgets: the plot (a title, a legend, and the rows under a time axis, in a
graphics widget; the wheel and right-drag zoom time only), its scroll bar over the rows, the
"updating" note, and the tool bar."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QHBoxLayout, QLabel, QScrollBar, QToolButton, QWidget

from .plot_style import TEXT, FlexibleLabel, make_legend, style_axis
from .timeline_arrows import TimelineArrows
from .timeline_items import RowBands


class TimeViewBox(pg.ViewBox):
    """Wheel and right-drag zoom time only; left-drag pans time and rows."""

    def wheelEvent(self, ev, axis=None):
        super().wheelEvent(ev, axis=0)

    def mouseDragEvent(self, ev, axis=None):
        if ev.button() == Qt.RightButton:
            axis = 0
        super().mouseDragEvent(ev, axis=axis)


class TimelinePlot:
    """The graphics widget and its items: title, legend, plot, view box, stage bands, arrows; the
    scroll bar beside it and the note over it."""

    def __init__(self):
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("w")
        ci = self.graphics.ci
        ci.setContentsMargins(6, 4, 14, 4)
        ci.setSpacing(2)
        self.title = FlexibleLabel("", color=TEXT, size="10pt", justify="left")
        ci.addItem(self.title, row=0, col=0)
        self.legend = make_legend(9)
        ci.addItem(self.legend, row=1, col=0)
        # no context menu: its Export... would offer pyqtgraph's SVG exporter (crashes on 6.12); made
        # without it, the menu's widgets are never built
        self.vb = TimeViewBox(enableMenu=False)
        self.plot = pg.PlotItem(viewBox=self.vb, enableMenu=False)
        ci.addItem(self.plot, row=2, col=0)
        ci.layout.setRowStretchFactor(2, 10)
        self.plot.hideButtons()
        self.vb.invertY(True)
        self.vb.setMouseEnabled(x=True, y=True)
        self.vb.disableAutoRange()
        self.plot.setLabel("bottom", "time", units="s")
        for name in ("left", "bottom"):
            style_axis(self.plot.getAxis(name), 8.5)
        self.plot.getAxis("left").setStyle(tickLength=0)
        self.plot.showGrid(x=True, y=False, alpha=0.18)
        self.bands = RowBands()
        self.plot.addItem(self.bands)
        self.arrows = TimelineArrows()
        self.plot.addItem(self.arrows, ignoreBounds=True)
        self.scrollbar = QScrollBar(Qt.Vertical)
        self.scrollbar.setObjectName("rows")
        # The step time is shown first; until this revision's events come, the timeline says so, on
        # top of the plot (opaque, in its corner): showing it moves nothing, so the 70k bars are not redrawn
        self.updating = QLabel("updating to the newest result...", self.graphics)
        self.updating.setObjectName("updating")
        self.updating.setStyleSheet("color: #6b7280; background: #ffffff; padding: 2px 6px")
        self.updating.setAutoFillBackground(True)
        self.updating.adjustSize()
        self.updating.hide()


def tool_bar(owner: QWidget, entries) -> tuple[QWidget, list[QAction]]:
    """A row of text buttons for (text, tip, slot, checkable, checked) entries: their actions are
    added to `owner` (tests trigger them)."""
    bar = QWidget()
    row = QHBoxLayout(bar)
    row.setContentsMargins(4, 2, 4, 2)
    row.setSpacing(4)
    actions = []
    for text, tip, slot, checkable, checked in entries:
        act = QAction(text, owner)
        act.setToolTip(tip)
        act.setCheckable(checkable)
        act.setChecked(checked)
        (act.toggled if checkable else act.triggered).connect(slot)
        owner.addAction(act)
        button = QToolButton()
        button.setDefaultAction(act)
        button.setToolButtonStyle(Qt.ToolButtonTextOnly)
        row.addWidget(button)
        actions.append(act)
    row.addStretch(1)
    return bar, actions
