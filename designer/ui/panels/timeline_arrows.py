"""Arrows on the timeline: "waited for" (the bar waited on -> the wait) and pipeline send ->
receive (the send -> the op that received it). The pairs come from core/export/flows.py, the
same ones the Perfetto trace carries as flow events.

Drawn in device pixels (a cosmetic line and a fixed-size head at any zoom). A step holds
thousands of arrows: only those crossing the view are drawn, and only when there are few
enough to read (MAX_ARROWS_IN_VIEW); the selected bar's arrows are always drawn, thicker.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPen, QPolygonF

ARROW_KINDS = ("wait", "pp")
ARROW_COLORS = {"wait": QColor("#b45309"), "pp": QColor("#0f766e")}  # amber-700 / teal-700
ARROW_NAMES = {"wait": "waited for", "pp": "PP send \u2192 receive"}
MAX_ARROWS_IN_VIEW = 160  # more than this in view read as noise: zoom in to see them
HEAD_PIXELS = 7.0


class TimelineArrows(pg.GraphicsObject):
    """Every arrow of the step as numpy arrays; paints the ones in view."""

    def __init__(self):
        super().__init__()
        self.setZValue(40)
        self.enabled = True
        self.clear()

    def clear(self) -> None:
        self.prepareGeometryChange()
        self.kind = np.zeros(0, dtype=np.int64)  # index into ARROW_KINDS
        self.source = np.zeros(0, dtype=np.int64)  # event indices
        self.target = np.zeros(0, dtype=np.int64)
        self.x0 = self.y0 = self.x1 = self.y1 = np.zeros(0)
        self.emphasis: np.ndarray = np.zeros(0, dtype=np.int64)  # arrows of the selected bar
        self.drawn = 0  # arrows drawn in the last paint (tests, the hint)
        self._bounds = QRectF()
        self.update()

    def set_arrows(self, kind, source, target, x0, y0, x1, y1) -> None:
        self.prepareGeometryChange()
        self.kind = np.asarray(kind, dtype=np.int64)
        self.source = np.asarray(source, dtype=np.int64)
        self.target = np.asarray(target, dtype=np.int64)
        self.x0, self.y0 = np.asarray(x0, dtype=float), np.asarray(y0, dtype=float)
        self.x1, self.y1 = np.asarray(x1, dtype=float), np.asarray(y1, dtype=float)
        self.emphasis = np.zeros(0, dtype=np.int64)
        if len(self.kind):
            left, right = min(self.x0.min(), self.x1.min()), max(self.x0.max(), self.x1.max())
            top, bottom = min(self.y0.min(), self.y1.min()), max(self.y0.max(), self.y1.max())
            self._bounds = QRectF(left, top, max(right - left, 1e-12), max(bottom - top, 1e-12))
        else:
            self._bounds = QRectF()
        self.update()

    def join(self, kinds, sources, targets, bars, n_events: int) -> None:
        """Arrows of the (kind, source event, target event) pairs whose both ends are bars shown
        (`bars`: timeline_layout.PlacedBars): from the source's end to the wait's end (the moment it
        stops waiting) or to the receiving op's start."""
        row = np.full(n_events, -1, dtype=np.int64)
        start, end = np.zeros(n_events), np.zeros(n_events)
        row[bars.index], start[bars.index], end[bars.index] = bars.row, bars.start, bars.end
        keep = (row[sources] >= 0) & (row[targets] >= 0)
        kinds, sources, targets = kinds[keep], sources[keep], targets[keep]
        x1 = np.where(kinds == ARROW_KINDS.index("wait"), end[targets], start[targets])
        self.set_arrows(kinds, sources, targets, end[sources], row[sources], x1, row[targets])

    def __len__(self) -> int:
        return len(self.kind)

    def pairs(self, kind: str | None = None) -> list[tuple[int, int]]:
        """(from event, to event) of every arrow, or of one kind ("wait", "pp")."""
        sel = np.ones(len(self.kind), dtype=bool) if kind is None else self.kind == ARROW_KINDS.index(kind)
        return list(zip(self.source[sel].tolist(), self.target[sel].tolist()))

    def emphasize_event(self, index: int | None) -> None:
        """Always draw (thicker) the arrows that start or end at this event."""
        if index is None or not len(self.kind):
            self.emphasis = np.zeros(0, dtype=np.int64)
        else:
            self.emphasis = np.flatnonzero((self.source == index) | (self.target == index))
        self.update()

    def in_view(self) -> np.ndarray:
        """Indices of the arrows crossing the view."""
        view = self.viewRect()
        if view is None or not len(self.kind):
            return np.zeros(0, dtype=np.int64)
        left, right, top, bottom = view.left(), view.right(), view.top(), view.bottom()
        return np.flatnonzero((np.maximum(self.x0, self.x1) >= left) & (np.minimum(self.x0, self.x1) <= right)
                              & (np.maximum(self.y0, self.y1) >= top) & (np.minimum(self.y0, self.y1) <= bottom))

    def boundingRect(self) -> QRectF:
        return QRectF(self._bounds)

    def dataBounds(self, ax, frac=1.0, orthoRange=None):
        return None, None  # never drives auto-range

    def paint(self, p: QPainter, *args) -> None:
        if not len(self.kind):
            self.drawn = 0
            return
        shown = self.in_view() if self.enabled else np.zeros(0, dtype=np.int64)
        if len(shown) > MAX_ARROWS_IN_VIEW:
            shown = np.zeros(0, dtype=np.int64)
        bold = np.asarray(self.emphasis, dtype=np.int64)
        shown = np.setdiff1d(shown, bold)
        self.drawn = len(shown) + len(bold)
        if not self.drawn:
            return
        transform = p.worldTransform()
        p.save()
        p.resetTransform()  # heads and lines in device pixels
        p.setRenderHint(QPainter.Antialiasing, True)
        for indices, width in ((shown, 1.2), (bold, 2.4)):
            for k, name in enumerate(ARROW_KINDS):
                sel = indices[self.kind[indices] == k]
                if not len(sel):
                    continue
                lines, heads = QPainterPath(), QPainterPath()
                for i in sel.tolist():
                    a = transform.map(QPointF(self.x0[i], self.y0[i]))
                    b = transform.map(QPointF(self.x1[i], self.y1[i]))
                    lines.moveTo(a)
                    lines.lineTo(b)
                    heads.addPolygon(_head(a, b, HEAD_PIXELS + width))
                    heads.closeSubpath()
                color = ARROW_COLORS[name]
                pen = QPen(color, width)
                if name == "wait":
                    pen.setStyle(Qt.DashLine)
                p.setPen(pen)
                p.setBrush(Qt.NoBrush)
                p.drawPath(lines)
                p.setPen(Qt.NoPen)
                p.setBrush(color)
                p.drawPath(heads)
        p.restore()


def _head(a: QPointF, b: QPointF, size: float) -> QPolygonF:
    """A filled triangle at b pointing along a -> b."""
    dx, dy = b.x() - a.x(), b.y() - a.y()
    length = math.hypot(dx, dy)
    if length < 1e-9:
        dx, dy, length = 1.0, 0.0, 1.0
    ux, uy = dx / length, dy / length
    back = QPointF(b.x() - ux * size, b.y() - uy * size)
    side = QPointF(-uy * size * 0.45, ux * size * 0.45)
    return QPolygonF([b, back + side, back - side])
