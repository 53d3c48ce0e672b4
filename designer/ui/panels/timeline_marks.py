"""What the Timeline marks on its plot: the selected bar, the bar a selected wait waited on, the rows
of the device it waited for, and the selected device's rows."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor

from .timeline_items import OutlineBox
from .timeline_layout import RowLayout, bar_box

SELECTION = QColor("#111827")
RELATED = QColor("#f59e0b")
HIGHLIGHT = QColor(250, 204, 21, 70)
DEVICE_FILL = QColor(37, 99, 235, 40)
DEVICE_EDGE = QColor("#1d4ed8")


class TimelineMarks:
    """The items that mark a selection on `plot`, and which rows they cover."""

    def __init__(self, plot: pg.PlotItem):
        self.plot = plot
        self.selection_box = self._box(SELECTION, 2.0)
        self.related_box = self._box(RELATED, 2.5)
        self.highlight_items: list[pg.LinearRegionItem] = []  # the rows of the device a wait waited for
        self.device_items: list[pg.LinearRegionItem] = []  # the selected device's rows

    def _box(self, color: QColor, width: float) -> OutlineBox:
        box = OutlineBox(color, width)
        self.plot.addItem(box, ignoreBounds=True)
        return box

    def _rows_region(self, rows: list[int], z: float, brush, pen) -> pg.LinearRegionItem:
        region = pg.LinearRegionItem(values=(rows[0] - 0.5, rows[-1] + 0.5), orientation="horizontal",
                                     movable=False, brush=brush, pen=pen)
        region.setZValue(z)
        self.plot.addItem(region, ignoreBounds=True)
        return region

    def clear_event(self) -> None:
        for item in self.highlight_items:
            self.plot.removeItem(item)
        self.highlight_items = []
        self.selection_box.setVisible(False)
        self.related_box.setVisible(False)

    def mark_event(self, layout: RowLayout, event, waited_rows: list[int]) -> None:
        """Outline `event`'s bar; shade the rows of the device it waited for."""
        self.clear_event()
        self.outline(self.selection_box, layout, event)
        if waited_rows:
            self.highlight_items.append(self._rows_region(waited_rows, -10, pg.mkBrush(HIGHLIGHT), pg.mkPen(None)))

    def outline(self, box: OutlineBox, layout: RowLayout, event) -> None:
        rect = bar_box(layout, event)
        if rect is not None:
            box.set_rect(QRectF(*rect))
        box.setVisible(rect is not None)

    def mark_device(self, rows: list[int]) -> None:
        """Outline a device's rows (none: no mark)."""
        for item in self.device_items:
            self.plot.removeItem(item)
        self.device_items = []
        if rows:
            self.device_items.append(self._rows_region(rows, -9, pg.mkBrush(DEVICE_FILL),
                                                       pg.mkPen(DEVICE_EDGE, width=2)))
