"""The timeline's graphics items: the bars of one kind of event (KindBars, drawn from arrays in one
call), the stage bands behind the rows, the selection box; the colours and names of the kinds.
The panel (timeline.py) and its whole-job picture (timeline_export.py) draw with them."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPen

from .plot_style import CATEGORY_COLORS, Swatch, category_color, fit_legend, hatch_brush, light

try:  # pyqtgraph's contiguous QRectF array: drawRects without building 50k Python objects
    from pyqtgraph.Qt.internals import PrimitiveArray
except ImportError:  # pragma: no cover - older pyqtgraph
    PrimitiveArray = None

OUTLINE_PIXELS = 3.0  # waits at least this wide get an outline
FAINT_LEVELS = 8  # opacity steps of bars thinner than a pixel
MIN_WAIT_PIXELS = 1.0  # waits are drawn at least this wide (other bars: their true width, antialiased)
BAND = QColor("#f3f4f6")

KIND_COLORS: dict[str, str] = {
    "forward": CATEGORY_COLORS["compute"],
    "backward": "#1e3a8a",
    "wgrad": "#0891b2",
    "recompute": CATEGORY_COLORS["recompute"],
    "optimizer": CATEGORY_COLORS["optimizer"],
    "bubble": CATEGORY_COLORS["bubble"],
    "imbalance_wait": CATEGORY_COLORS["imbalance_wait"],
    **{k: CATEGORY_COLORS[k] for k in ("tp_comm", "cp_comm", "ep_comm", "pp_comm", "dp_comm")},
    **{k + "_hidden": CATEGORY_COLORS[k] for k in ("tp_comm", "cp_comm", "ep_comm", "pp_comm", "dp_comm")},
}
KIND_NAMES = {"forward": "forward", "backward": "backward", "wgrad": "weight grad", "recompute": "recompute",
              "optimizer": "optimizer", "bubble": "bubble (wait)", "imbalance_wait": "imbalance wait",
              "pp_comm": "PP comm / wait"}


def kind_color(kind: str) -> QColor:
    return QColor(KIND_COLORS[kind]) if kind in KIND_COLORS else category_color(kind)


def kind_name(kind: str) -> str:
    if kind in KIND_NAMES:
        return KIND_NAMES[kind]
    if kind.endswith("_hidden"):
        return kind[:-len("_hidden")].replace("_comm", "").upper() + " overlapped"
    return kind.replace("_comm", "").upper() + " comm" if kind.endswith("_comm") else kind


def fmt_bytes(n: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n:.0f} B"


class _Rects:
    """A reusable array of QRectF for QPainter.drawRects."""

    def __init__(self):
        self._array = PrimitiveArray(QRectF, 4) if PrimitiveArray is not None else None

    def draw(self, painter: QPainter, x0, y0, w, h) -> None:
        n = len(x0)
        if n == 0:
            return
        if self._array is None:
            painter.drawRects([QRectF(*v) for v in zip(x0, y0, w, h)])
            return
        self._array.resize(n)
        memory = self._array.ndarray()
        memory[:, 0] = x0
        memory[:, 1] = y0
        memory[:, 2] = w
        memory[:, 3] = h
        painter.drawRects(*self._array.drawargs())


def narrow_cells(x0, y0, h, w, scale: float):
    """Bars thinner than a pixel, one per pixel cell (a column of one bar row): (x0, y0, height, faint
    level). The bars of a cell add up (capped at a full pixel), so a whole step zoomed out draws at most
    a few thousand rects, not its 70k bars (~40 ms a paint at 1,024 GPUs on a long pipeline)."""
    column = np.floor(x0 * scale).astype(np.int64)
    lanes, lane = np.unique(y0 + 1j * h, return_inverse=True)  # (top, height) of a bar row
    lane = lane.reshape(-1)
    key = lane * (int(column.max() - column.min()) + 1) + (column - column.min())
    cells, cell = np.unique(key, return_inverse=True)
    cover = np.bincount(cell.reshape(-1), weights=w * scale, minlength=len(cells))
    first = np.zeros(len(cells), dtype=np.int64)
    first[cell.reshape(-1)[::-1]] = np.arange(len(key))[::-1]  # a bar of each cell: its lane
    levels = np.clip(np.ceil(cover * FAINT_LEVELS), 1, FAINT_LEVELS).astype(np.int64)
    top = lanes[lane[first]]
    return column[first] / scale, top.real, top.imag, levels


class KindBars(pg.GraphicsObject):
    """Every bar of one event kind: numpy arrays, one drawRects per paint (bars in view only)."""

    def __init__(self, kind: str, x0: np.ndarray, x1: np.ndarray, y0: np.ndarray, y1: np.ndarray,
                 waits: np.ndarray, color: QColor):
        super().__init__()
        self.kind = kind
        self.color = QColor(color)
        self.hidden = kind.endswith("_hidden")
        self.opts = {"antialias": True}  # read by pyqtgraph's legend samples
        self._fill = QBrush(light(self.color, 120) if self.hidden else self.color)
        alpha = self._fill.color().alpha()
        self._faint = [QBrush(light(self.color, max(1, round(alpha * level / FAINT_LEVELS))))
                       for level in range(1, FAINT_LEVELS + 1)]
        self._wait_fill = QBrush(light(self.color, 90))
        self._hatch = hatch_brush(self.color)
        self._outline = QPen(self.color.darker(160), 1.0)
        self._outline.setCosmetic(True)
        self._rects = _Rects()
        self._set(x0, x1, y0, y1, waits)

    def set_bars(self, x0: np.ndarray, x1: np.ndarray, y0: np.ndarray, y1: np.ndarray, waits: np.ndarray) -> None:
        """The bars of the next result, in the same item: its legend entry stays (rebuilding the
        legend's labels was half of a timeline's ~25 ms on the window's thread per edit)."""
        self.prepareGeometryChange()
        self._set(x0, x1, y0, y1, waits)
        self.informViewBoundsChanged()
        self.update()

    def _set(self, x0, x1, y0, y1, waits) -> None:
        self.x0 = np.asarray(x0, dtype=float)
        self.width = np.asarray(x1, dtype=float) - self.x0
        self.y0 = np.asarray(y0, dtype=float)
        self.height = np.asarray(y1, dtype=float) - self.y0
        self.waits = np.asarray(waits, dtype=bool)
        if len(self.x0):
            self._bounds = QRectF(float(self.x0.min()), float(self.y0.min()),
                                  float((self.x0 + self.width).max() - self.x0.min()),
                                  float((self.y0 + self.height).max() - self.y0.min()))
        else:
            self._bounds = QRectF()

    def __len__(self) -> int:
        return len(self.x0)

    def boundingRect(self) -> QRectF:
        return QRectF(self._bounds)

    def dataBounds(self, ax, frac=1.0, orthoRange=None):
        if self._bounds.isNull():
            return None, None
        if ax == 0:
            return self._bounds.left(), self._bounds.right()
        return self._bounds.top(), self._bounds.bottom()

    def paint(self, p: QPainter, *args) -> None:
        if not len(self.x0):
            return
        x0, x1 = self.x0, self.x0 + self.width
        y0, y1 = self.y0, self.y0 + self.height
        waits = self.waits
        view = self.viewRect()
        if view is not None:
            left, right, top, bottom = view.left(), view.right(), view.top(), view.bottom()
            mask = (x1 >= left) & (x0 <= right) & (y1 >= top) & (y0 <= bottom)
            if not mask.any():
                return
            # clipped to the view here: SVG output does not honour the view box's clipping
            x0, x1 = np.maximum(x0[mask], left), np.minimum(x1[mask], right)
            y0, y1 = np.maximum(y0[mask], top), np.minimum(y1[mask], bottom)
            waits = waits[mask]
        w, h = x1 - x0, y1 - y0
        p.setRenderHint(QPainter.Antialiasing, True)  # bars narrower than a pixel show as faint colour
        p.setPen(Qt.NoPen)
        scale = abs(p.worldTransform().m11())  # device pixels per second
        solid = ~waits
        wide = solid & (w * scale >= 1.0)
        narrow = solid & ~wide
        if wide.any():
            p.setBrush(self._fill)
            self._rects.draw(p, x0[wide], y0[wide], w[wide], h[wide])
        if narrow.any() and scale > 0:
            # a bar thinner than a pixel: one pixel, as opaque as the part of it the bar covers (at
            # least 1/8), so busy lanes look as busy as they are and a lone tiny bar stays visible
            nx0, ny0, nh, levels = narrow_cells(x0[narrow], y0[narrow], h[narrow], w[narrow], scale)
            one = 1.0 / scale
            for level in np.unique(levels):
                sel = levels == level
                p.setBrush(self._faint[level - 1])
                self._rects.draw(p, nx0[sel], ny0[sel], np.full(int(sel.sum()), one), nh[sel])
        if waits.any():
            x0, y0, w, h = x0[waits], y0[waits], w[waits], h[waits]
            if scale > 0:
                w = np.maximum(w, MIN_WAIT_PIXELS / scale)  # a wait never vanishes when zoomed out
            p.setBrush(self._wait_fill)
            self._rects.draw(p, x0, y0, w, h)
            p.setRenderHint(QPainter.Antialiasing, False)  # an antialiased hatch costs ~10 ms on a long wait
            p.setBrush(self._hatch)
            self._rects.draw(p, x0, y0, w, h)
            p.setRenderHint(QPainter.Antialiasing, True)
            outlined = w * scale >= OUTLINE_PIXELS
            if outlined.any():
                p.setPen(self._outline)
                p.setBrush(Qt.NoBrush)
                self._rects.draw(p, x0[outlined], y0[outlined], w[outlined], h[outlined])


class OutlineBox(pg.GraphicsObject):
    """An outline around one bar (selection), clipped to the view."""

    def __init__(self, color: QColor, width: float):
        super().__init__()
        self.pen = QPen(color, width)
        self.pen.setCosmetic(True)
        self.rect = QRectF()
        self.setZValue(50)
        self.setVisible(False)

    def set_rect(self, rect: QRectF) -> None:
        self.prepareGeometryChange()
        self.rect = QRectF(rect)
        self.update()

    def boundingRect(self) -> QRectF:
        px, py = self.pixelVectors()
        dx = 4 * px.length() if px is not None else 0.0
        dy = 4 * py.length() if py is not None else 0.0
        return self.rect.adjusted(-dx, -dy, dx, dy)

    def dataBounds(self, ax, frac=1.0, orthoRange=None):
        return None, None

    def paint(self, p: QPainter, *args) -> None:
        view = self.viewRect()
        rect = self.rect if view is None else self.rect.intersected(view)
        if rect.isEmpty() and not (rect.width() == 0 and rect.height() > 0):
            return
        p.setPen(self.pen)
        p.setBrush(Qt.NoBrush)
        p.drawRect(rect)


class RowBands(pg.GraphicsObject):
    """Alternate shading of the device row groups and a line between devices."""

    def __init__(self):
        super().__init__()
        self.groups: list[tuple[float, float]] = []  # (first row - 0.5, last row + 0.5) per device
        self._bounds = QRectF()
        self.setZValue(-20)

    def set_groups(self, groups: list[tuple[float, float]], x0: float, x1: float) -> None:
        self.prepareGeometryChange()
        self.groups = groups
        if groups:
            self._bounds = QRectF(x0, groups[0][0], max(x1 - x0, 1e-12), groups[-1][1] - groups[0][0])
        else:
            self._bounds = QRectF()
        self.update()

    def boundingRect(self) -> QRectF:
        return QRectF(self._bounds)

    def dataBounds(self, ax, frac=1.0, orthoRange=None):
        return None, None  # never drives auto-range

    def paint(self, p: QPainter, *args) -> None:
        view = self.viewRect()
        if view is None or not self.groups:
            return
        left, right = view.left(), view.right()
        p.setPen(Qt.NoPen)
        p.setBrush(BAND)
        for i, (top, bottom) in enumerate(self.groups):
            if i % 2 == 1:
                p.drawRect(QRectF(left, top, right - left, bottom - top))
        pen = QPen(QColor("#d1d5db"), 1.0)
        pen.setCosmetic(True)
        p.setPen(pen)
        for top, _ in self.groups[1:]:
            p.drawLine(QPointF(left, top), QPointF(right, top))


class BarItemsOnPlot:
    """One KindBars per kind of event on a plot, each with its legend entry; the same items take new
    bars while the kinds stay the same (no items made or removed as a result follows another)."""

    def __init__(self, plot: pg.PlotItem, legend):
        self.plot, self.legend = plot, legend
        self.items: dict[str, KindBars] = {}

    def show(self, bars, legend_width: float) -> None:
        """`bars`: timeline_layout.PlacedBars."""
        kinds = bars.kinds_drawn()
        if kinds == list(self.items):
            for k in kinds:
                self.items[k].set_bars(*bars.of_kind(k))
            return
        self.clear()
        for k in kinds:
            item = KindBars(k, *bars.of_kind(k), kind_color(k))
            item.setZValue(5 if item.hidden else 0)
            self.plot.addItem(item)
            self.items[k] = item
            self.legend.addItem(Swatch(item, item.color, hatched=k in ("bubble", "imbalance_wait"), thin=item.hidden),
                                kind_name(k))
        fit_legend(self.legend, legend_width)

    def clear(self) -> None:
        for item in self.items.values():
            self.plot.removeItem(item)
        self.items = {}
        self.legend.clear()

    def count(self) -> int:
        return sum(len(item) for item in self.items.values())
