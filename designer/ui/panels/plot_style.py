"""The look every panel's plots share: category and text colours, legend swatches, axis style, the
banner over a result that is no longer current, and how seconds are written."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPen
from PySide6.QtWidgets import QGraphicsItem, QLabel, QSizePolicy

# One colour per breakdown category, shared by every panel (the timeline derives its kinds' colours).
CATEGORY_COLORS: dict[str, str] = {
    "compute": "#2563eb",  # blue
    "recompute": "#93c5fd",  # light blue
    "tp_comm": "#7e22ce",  # purple
    "cp_comm": "#a78bfa",  # violet
    "ep_comm": "#ec4899",  # pink
    "pp_comm": "#0d9488",  # teal
    "dp_comm": "#f97316",  # orange
    "bubble": "#9ca3af",  # grey
    "imbalance_wait": "#dc2626",  # red
    "optimizer": "#16a34a",  # green
}
CATEGORY_NAMES: dict[str, str] = {
    "compute": "compute", "recompute": "recompute", "tp_comm": "TP comm", "cp_comm": "CP comm",
    "ep_comm": "EP comm", "pp_comm": "PP comm", "dp_comm": "DP comm", "bubble": "bubble",
    "imbalance_wait": "imbalance wait", "optimizer": "optimizer",
}
COMM_CATEGORIES = ("tp_comm", "cp_comm", "ep_comm", "pp_comm", "dp_comm")
# Waiting categories are drawn hatched, here and on the timeline.
WAIT_CATEGORIES = ("bubble", "imbalance_wait")

TEXT = "#1f2937"
MUTED = "#6b7280"
AXIS = "#4b5563"
FITS = "#374151"
DOES_NOT_FIT = "#dc2626"
FASTER = "#15803d"
SLOWER = "#b91c1c"
FALLBACK_COLORS = ("#64748b", "#0891b2", "#be185d", "#a16207", "#4d7c0f", "#7c2d12")
# The banner over a result that is no longer the design's (amber: a warning, not a failure).
STALE_STYLE = ("QLabel { background: #fef3c7; color: #78350f; border: 1px solid #f59e0b; border-radius: 3px; "
               "padding: 3px 6px; }")


def stale_banner() -> QLabel:
    """A wrapped label that shows its whole text; its tooltip holds every problem."""
    banner = QLabel()
    banner.setObjectName("stale")
    banner.setWordWrap(True)
    banner.setTextFormat(Qt.PlainText)
    banner.setStyleSheet(STALE_STYLE)
    banner.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)  # wraps to the panel, never widens it
    banner.hide()
    return banner


def stale_text(reason: str) -> str:
    return f"showing the last valid result: {reason}"


def category_color(key: str) -> QColor:
    """The category's colour; an unknown category gets a stable fallback."""
    if key in CATEGORY_COLORS:
        return QColor(CATEGORY_COLORS[key])
    return QColor(FALLBACK_COLORS[sum(map(ord, key)) % len(FALLBACK_COLORS)])


def hatch_brush(color: QColor) -> QBrush:
    """Diagonal hatching in a darker shade of `color` (drawn over a light fill of it)."""
    return QBrush(QColor(color).darker(150), Qt.BDiagPattern)


def light(color: QColor, alpha: int = 110) -> QColor:
    c = QColor(color)
    c.setAlpha(alpha)
    return c


def style_axis(axis: pg.AxisItem, size_pt: float = 9.0) -> None:
    axis.setPen(pg.mkPen(AXIS))
    axis.setTextPen(pg.mkPen(TEXT))
    font = QFont()
    font.setPointSizeF(size_pt)
    axis.setStyle(tickFont=font)
    axis.label.setFont(font)


class Swatch(pg.ItemSample):
    """A legend sample: a filled square in the item's colour, hatched for waits."""

    def __init__(self, item, color: QColor, hatched: bool = False, thin: bool = False):
        super().__init__(item)
        self._color = QColor(color)
        self._hatched = hatched
        self._thin = thin
        self.setFixedHeight(16)  # legend rows a little tighter than pyqtgraph's 20 px

    def boundingRect(self):
        return QRectF(0, 0, 20, 16)

    def paint(self, p, *args):
        if not self.item.isVisible():
            p.setPen(pg.mkPen("#9ca3af"))
            p.setBrush(Qt.NoBrush)
            p.drawRect(QRectF(3, 2, 14, 12))
            return
        rect = QRectF(3, 9, 14, 5) if self._thin else QRectF(3, 2, 14, 12)
        p.setPen(Qt.NoPen)
        p.setBrush(light(self._color, 120) if (self._hatched or self._thin) else self._color)
        p.drawRect(rect)
        if self._hatched:
            p.setBrush(hatch_brush(self._color))
            p.drawRect(rect)
            pen = QPen(self._color.darker(140), 1)
            pen.setCosmetic(True)
            p.setPen(pen)
            p.setBrush(Qt.NoBrush)
            p.drawRect(rect)

    def mouseClickEvent(self, event):  # the legend only explains; it does not hide bars here
        event.accept()


class FlexibleLabel(pg.LabelItem):
    """A LabelItem that never makes its layout wider than the view (long text is cut at the edge)."""

    def updateMin(self):
        super().updateMin()
        self.setMinimumWidth(0)


def make_legend(columns: int) -> pg.LegendItem:
    """A legend laid out in rows (it sits in its own layout cell, never over the data)."""
    legend = pg.LegendItem(colCount=columns, labelTextColor=TEXT, labelTextSize="9pt", horSpacing=4, frame=False)
    legend.layout.setContentsMargins(4, 0, 4, 0)
    # pyqtgraph keeps a legend at screen size over a view; in a layout cell it must scale with an export
    legend.setFlag(QGraphicsItem.ItemIgnoresTransformations, False)
    return legend


def fit_legend(legend: pg.LegendItem, width: float) -> None:
    """As many columns as fit in `width` pixels (entries fill the rows left to right)."""
    entries = [(sample.boundingRect().width(), label.item.boundingRect().width()) for sample, label in legend.items]
    if not entries:
        return
    gap_in, gap_out = 4.0, 20.0
    columns = 1
    for n in range(len(entries), 0, -1):
        widths = [0.0] * n
        for i, (a, b) in enumerate(entries):
            widths[i % n] = max(widths[i % n], a + gap_in + b + gap_out)
        if sum(widths) + 8 <= width:
            columns = n
            break
    legend.setColumnCount(columns)
    for c in range(2 * columns):
        legend.layout.setColumnSpacing(c, gap_in if c % 2 == 0 else gap_out)


def seconds_text(s: float) -> str:
    if abs(s) >= 10:
        return f"{s:.1f} s"
    if abs(s) >= 0.1:
        return f"{s:.2f} s"
    return f"{s * 1e3:.1f} ms"


def delta_text(d: float) -> str:
    """A signed change: "+0.40 s", "-3.2 ms"."""
    if abs(d) >= 0.00995:
        return f"{d:+.2f} s"
    return f"{d * 1e3:+.1f} ms"
