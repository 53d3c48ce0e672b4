"""Which of the Timeline's rows are in view: every row after Fit all, else as many as are legible
(MIN_ROW_PIXELS) from a top row the scroll bar moves; the row labels thin out when rows are dense."""
from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtGui import QFont, QFontMetricsF
from PySide6.QtWidgets import QScrollBar

from .timeline_layout import RowLayout, row_ticks

DEFAULT_VISIBLE_ROWS = 48  # at most this many rows in view at first; the others by panning
MIN_ROW_PIXELS = 9.0  # a smaller view shows fewer rows rather than squashing them
SCROLL_STEPS = 10  # scroll bar units per row


class RowsInView:
    """The view box's row range, the scroll bar and the row labels, kept in step."""

    def __init__(self, vb: pg.ViewBox, plot: pg.PlotItem, scrollbar: QScrollBar):
        self.vb, self.plot, self.scrollbar = vb, plot, scrollbar
        self.layout = RowLayout()
        self.selected_device: int | None = None  # always labelled
        # every row in view (the lanes fitted to the dock), kept on resize, until the user scrolls
        self.fitting_all = True
        self._syncing_scroll = False
        scrollbar.valueChanged.connect(self._on_scrolled)
        vb.sigYRangeChanged.connect(self.follow)

    @property
    def count(self) -> int:
        return len(self.layout.rows)

    def visible_rows(self) -> int:
        height = self.vb.height()
        fit = int(height / MIN_ROW_PIXELS) if height > 0 else DEFAULT_VISIBLE_ROWS
        return max(1, min(self.count, DEFAULT_VISIBLE_ROWS, max(3, fit)))

    def frame(self, step: float, pad: float) -> None:
        """A new layout over a step of `step` seconds (and `pad` either side): every row labelled, the
        view's limits; every row in view after Fit all, else the legible ones from the top."""
        labels = self.layout.axis_labels
        axis = self.plot.getAxis("left")
        axis.setTicks([[(float(r), label) for r, label in enumerate(labels)]])
        metrics = QFontMetricsF(axis.style["tickFont"] or QFont())
        axis.setWidth(int(max((metrics.horizontalAdvance(t) for t in labels), default=40) + 14))
        rows = max(self.count, 1)
        self.vb.setLimits(xMin=-pad, xMax=step + pad, minXRange=step * 1e-6, yMin=-0.6, yMax=rows - 0.4,
                          maxYRange=rows + 0.2)
        span = rows if self.fitting_all else self.visible_rows()
        self.vb.setRange(xRange=(-pad / 2, step + pad / 2), yRange=(-0.5, span - 0.5), padding=0)
        self.follow()

    def show_all(self) -> None:
        self.vb.setYRange(-0.5, self.count - 0.5, padding=0)

    def keep_legible(self) -> None:
        """After a resize: as many rows as fit at MIN_ROW_PIXELS, from the same top row."""
        span = self.visible_rows()
        top = self.vb.viewRange()[1][0]
        top = min(max(top, -0.5), self.count - 0.5 - span)
        self.vb.setYRange(top, top + span, padding=0)

    def follow(self, *args) -> None:
        """The scroll bar and the row labels follow the rows in view (labels thinned when dense)."""
        if not self.count:
            self.plot.getAxis("left").setTicks([[]])
            return
        top, bottom = self.vb.viewRange()[1]
        span = max(bottom - top, 1e-9)
        self._syncing_scroll = True
        try:
            hidden = max(0.0, self.count - span)
            self.scrollbar.setRange(0, int(round(hidden * SCROLL_STEPS)))
            self.scrollbar.setPageStep(max(1, int(round(span * SCROLL_STEPS))))
            self.scrollbar.setSingleStep(SCROLL_STEPS)
            self.scrollbar.setValue(int(round((top + 0.5) * SCROLL_STEPS)))
            self.scrollbar.setVisible(hidden > 0.05)
        finally:
            self._syncing_scroll = False
        height = self.vb.height()
        pixels = height / span if height > 0 else MIN_ROW_PIXELS
        ticks = row_ticks(self.layout, pixels, self.selected_device)
        self.plot.getAxis("left").setTicks([[(float(r), label) for r, label in ticks]])

    def _on_scrolled(self, value: int) -> None:
        if self._syncing_scroll or not self.count:
            return
        self.fitting_all = False
        top, bottom = self.vb.viewRange()[1]
        start = value / SCROLL_STEPS - 0.5
        self.vb.setYRange(start, start + (bottom - top), padding=0)

    def bring_into_view(self, rows: list[int]) -> None:
        """Centre `rows` unless they are in view already, zooming in when rows are too thin to read."""
        top, bottom = self.vb.viewRange()[1]
        span = bottom - top
        height = self.vb.height()
        if height > 0 and height / max(span, 1e-9) < MIN_ROW_PIXELS:  # rows too thin to read: zoom in
            span = max(self.visible_rows(), len(rows))
            top, bottom = math.inf, -math.inf
        if rows[0] - 0.5 < top or rows[-1] + 0.5 > bottom:  # centre it, within the rows
            centre = (rows[0] + rows[-1]) / 2
            start = min(max(centre - span / 2, -0.5), max(-0.5, self.count - 0.5 - span))
            self.fitting_all = False
            self.vb.setYRange(start, start + span, padding=0)
