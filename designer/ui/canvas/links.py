"""All cables of the canvas in one item, drawn from numpy arrays.

A 16k-GPU fabric has ~37,000 cable bundles; as Qt items they cost 30 ms a repaint even when
hidden (the scene index walks them) and seconds to show or hide. Here one item paints only
the bundles inside the exposed rectangle, grouped by pen, with a single drawLines call per
group, and falls back to rack-to-rack aggregates when too many would be on screen. Hit
tests (hover, click) are a vectorised point-to-segment distance.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from PySide6.QtCore import QLineF, QPointF, QRectF
from PySide6.QtGui import QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem

from . import style
from .bundle_table import KINDS, Bundle, BundleTable
from .cable_labels import draw_labels, keep_out_rects, label_font, place_labels
from .line_extent import LineExtent

REACH_PX = 8  # how far a cable's paint reaches past its line on screen: the widest pen and its edge
DENSE_LINES = 300  # more cables than this on screen: drawn without antialiasing


def bundle_kinds(bundles: list[Bundle]) -> np.ndarray:
    """Each bundle's kind as its row in KINDS (what the pens are picked by); an unknown kind draws as the first."""
    return np.array([KINDS.index(bd.kind) if bd.kind in KINDS else 0 for bd in bundles], np.int8)


def aggregate_pen_rows(heat: np.ndarray) -> np.ndarray:
    """Per rack-to-rack line under the heat, the line whose kind and speed set its pen: the first
    of its heat bucket in the whole design (the same pen wherever a picture of it is cut)."""
    if not len(heat):
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(heat, kind="stable")
    sorted_heat = heat[order]
    starts = np.flatnonzero(np.r_[True, sorted_heat[1:] != sorted_heat[:-1]])
    first_of_group = order[starts]
    group_index = np.searchsorted(sorted_heat[starts], heat)
    return first_of_group[group_index]


@dataclass
class _Lines:
    a: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    b: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    kind: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int8))
    gbps: np.ndarray = field(default_factory=lambda: np.zeros(0))
    _boxes: tuple | None = None  # (x0, x1, y0, y1) per line, kept between paints (boxes())
    _length: float | None = None  # all lines' length together (total_length())

    def total_length(self) -> float:
        """The lines' length together, in scene units (the level of detail's cable spacing)."""
        if self._length is None:
            d = self.b - self.a
            self._length = float(np.nansum(np.sqrt(d[:, 0] ** 2 + d[:, 1] ** 2))) if len(d) else 0.0
        return self._length

    def boxes(self) -> tuple:
        """Each line's bounding box as four arrays: made once, not at every paint (295k lines at 131k
        GPUs: ~10 ms a paint); a line moved (set_ends) forgets them."""
        if self._boxes is None:
            a, b = self.a, self.b
            self._boxes = (np.minimum(a[:, 0], b[:, 0]), np.maximum(a[:, 0], b[:, 0]),
                           np.minimum(a[:, 1], b[:, 1]), np.maximum(a[:, 1], b[:, 1]))
        return self._boxes


class LinkLayer(QGraphicsItem):
    def __init__(self):
        super().__init__()
        self.setFlag(QGraphicsItem.ItemUsesExtendedStyleOption, True)
        self.setZValue(-1)  # under the racks: cables show in the aisles, not across other boxes
        self.bundles: BundleTable = BundleTable.empty()  # read like a list of Bundle
        self.index: dict[tuple[str, str], int] = {}
        self.lines = _Lines()
        self.aggregates = _Lines()
        self.aggregate_tips: list[str] = []
        self.selected: set[int] = set()
        self._aggregate_heat_memo: tuple | None = None  # _aggregate_heat_pens, until heat or lines change
        self.heat: np.ndarray | None = None  # per bundle: utilisation bucket 0..10 (link heat), or None
        self.bundle_aggregate = np.zeros(0, dtype=np.int64)  # per bundle: its rack-to-rack line, or -1
        self.marked: set[int] = set()  # bottleneck bundles, outlined
        self.heat_tip = None  # callable(row) -> extra tooltip text (load by traffic kind)
        self.show_individual = True
        self.label_boxes: list[QRectF] = []  # where the last paint put cable labels (scene rects)
        self._bounds = QRectF()
        self._extent = LineExtent(self.lines.a, self.lines.b)  # the drawn lines' box, kept edit by edit
        self._aggregate_box: tuple | None = None  # the rack-to-rack lines' (left, top, right, bottom)
        self._measured = True  # its bounds count in the scene's measure (measured_apart)
        self._pens: dict[tuple, QPen] = {}
        self._agg_qlines: list | None = None  # _aggregate_qlines
        self._label_font = label_font()

    @property
    def heat(self) -> np.ndarray | None:
        return self._heat

    @heat.setter
    def heat(self, heat: np.ndarray | None) -> None:
        self._heat = heat
        self._aggregate_heat_memo = None

    @property
    def bundle_aggregate(self) -> np.ndarray:
        return self._bundle_aggregate

    @bundle_aggregate.setter
    def bundle_aggregate(self, rows: np.ndarray) -> None:
        self._bundle_aggregate = rows
        self._aggregate_heat_memo = None

    def set_row_aggregate(self, row: int, aggregate: int) -> None:
        """A bundle's rack-to-rack line (-1: none), changed in place."""
        if row < len(self._bundle_aggregate):
            self._bundle_aggregate[row] = aggregate
            self._aggregate_heat_memo = None

    # ---- data ----
    def set_bundles(self, bundles, a: np.ndarray, b: np.ndarray, index: dict | None = None,
                    kinds: np.ndarray | None = None, gbps: np.ndarray | None = None,
                    extent: LineExtent | None = None) -> None:
        """`index`, `kinds`, `gbps`, `extent` (of these very lines): made off the UI thread already
        (scene_plan.py), else made here."""
        self.bundles = bundles
        self.index = index if index is not None else {bd.key: i for i, bd in enumerate(bundles)}
        # (the arrays themselves, no copy: a plan makes them for the layer, which edits them in place)
        self.lines = _Lines(a.reshape(-1, 2).astype(float, copy=False), b.reshape(-1, 2).astype(float, copy=False),
                            kinds if kinds is not None else bundle_kinds(bundles),
                            gbps if gbps is not None else np.array([bd.total_gbps for bd in bundles], float))
        self.selected = {i for i in self.selected if i < len(bundles)}
        self._extent = extent if extent is not None else LineExtent(self.lines.a, self.lines.b)
        self.rebound()

    def drawn_count(self) -> int:
        """How many bundles are drawn: every row but those an edit emptied."""
        return len(self.bundles) - len(self.bundles.empty)

    def empty_row(self, row: int) -> None:
        """A bundle whose last cable went: its row stays, its line nowhere (NaN ends: never in a rect,
        never nearest a point), so that an undo fills the same row again. The bounds follow: they shrink
        when it was on their edge."""
        where = self._drawn_rect(row)
        self.bundles.empty_row(row)
        self._extent.gone(row, self.lines.a, self.lines.b)
        self.lines.a[row] = self.lines.b[row] = np.nan
        self.lines.gbps[row] = 0.0
        self.lines._boxes = self.lines._length = None
        self.selected.discard(row)
        self.marked.discard(row)
        self.rebound(where)

    def fill_row(self, row: int, bundle: Bundle, a: QPointF, b: QPointF) -> None:
        """A row's bundle anew (cables added to or removed from it, or an emptied row filled again)."""
        where = self._drawn_rect(row)
        self.bundles.fill_row(row, bundle)
        self.lines.kind[row] = KINDS.index(bundle.kind) if bundle.kind in KINDS else 0
        self.lines.gbps[row] = bundle.total_gbps
        self.set_ends(row, a, b, paint=self.show_individual)
        self._extent.drawn(row, self.lines.a, self.lines.b)
        self.rebound(where.united(self._drawn_rect(row)))

    def append_row(self, bundle: Bundle, a: QPointF, b: QPointF, aggregate: int) -> int:
        """A bundle between two devices that had none: one more row at the end (`aggregate`: its
        rack-to-rack line, or -1). Returns the row."""
        row = self.bundles.append(bundle)
        lines = self.lines
        self.lines = _Lines(np.concatenate([lines.a, [(a.x(), a.y())]]), np.concatenate([lines.b, [(b.x(), b.y())]]),
                            np.append(lines.kind, KINDS.index(bundle.kind) if bundle.kind in KINDS else 0
                                      ).astype(np.int8), np.append(lines.gbps, bundle.total_gbps))
        if isinstance(self.index, dict):
            self.index[bundle.key] = row
        else:
            self.index.add(bundle.key, row)
        self.bundle_aggregate = np.append(self.bundle_aggregate, aggregate)
        if self.heat is not None:
            self.heat = np.append(self.heat, 0)  # no load known yet: cold until the next evaluation
        self._extent.drawn(row, self.lines.a, self.lines.b)
        self.rebound(self.rows_rect([row]))
        return row

    def set_ends(self, row: int, a: QPointF, b: QPointF, paint: bool = True) -> None:
        """A line's ends moved (a device dragged): the bounds follow at the next rebound(), once for all
        the lines a move takes along (`paint`: its part of the picture painted again)."""
        where = self.rows_rect([row])
        self._extent.gone(row, self.lines.a, self.lines.b)
        self.lines.a[row] = (a.x(), a.y())
        self.lines.b[row] = (b.x(), b.y())
        self.lines._boxes = self.lines._length = None
        self._extent.drawn(row, self.lines.a, self.lines.b)
        where = where.united(self.rows_rect([row]))
        if paint and not where.isNull():
            self.update(where)

    def set_aggregates(self, a: np.ndarray, b: np.ndarray, kinds: np.ndarray, gbps: list[float], tips: list[str],
                       qlines: list | None = None, box: tuple | None = None):
        """`kinds`: each line's row in KINDS. `qlines` (the lines as QLineF) and `box` (theirs, as
        LineExtent.box): made off the UI thread already (scene_plan.py), else made here."""
        self.aggregates = _Lines(a.reshape(-1, 2).astype(float), b.reshape(-1, 2).astype(float),
                                 np.asarray(kinds, np.int8), np.array(gbps, float))
        self.aggregate_tips = tips
        self._aggregate_heat_memo = None
        self._agg_qlines = qlines if qlines is not None and len(qlines) == len(self.aggregates.a) else None
        self._aggregate_box = box if box is not None else LineExtent(self.aggregates.a, self.aggregates.b).box(
            self.aggregates.a, self.aggregates.b)
        self.rebound()

    def rebound(self, changed: QRectF | None = None) -> None:
        """The bounds: the lines drawn (kept by the extent, in proportion to each edit) and the
        rack-to-rack lines, 4 px out (a pen's width); a geometry change (~10 ms of the scene's at 131k
        GPUs) only when they changed. `changed`: the only part to paint again (else all of it)."""
        boxes = [box for box in (self._extent.box(self.lines.a, self.lines.b), self._aggregate_box) if box]
        if boxes:
            left, top = min(b[0] for b in boxes), min(b[1] for b in boxes)
            right, bottom = max(b[2] for b in boxes), max(b[3] for b in boxes)
            bounds = QRectF(left - 4, top - 4, right - left + 8, bottom - top + 8)
        else:
            bounds = QRectF()
        if bounds != self._bounds:
            self.prepareGeometryChange()
            self._bounds = bounds
        if changed is None:
            self.update()
        elif not changed.isNull():
            self.update(changed)  # (a far-out view's cached picture: redrawn there alone)

    def rows_rect(self, rows) -> QRectF:
        """Where these bundles' lines and their rack-to-rack lines are drawn, a wide pen's reach
        around them, in the scene (null where none is drawn)."""
        boxes = []
        rows = [r for r in rows if 0 <= r < len(self.lines.a)]
        if rows:
            boxes.append(np.concatenate([self.lines.a[rows], self.lines.b[rows]]))
            aggregates = [int(self.bundle_aggregate[r]) for r in rows if r < len(self.bundle_aggregate)]
            aggregates = [r for r in aggregates if 0 <= r < len(self.aggregates.a)]
            if aggregates:
                boxes.append(np.concatenate([self.aggregates.a[aggregates], self.aggregates.b[aggregates]]))
        return self.points_rect(np.concatenate(boxes) if boxes else np.zeros((0, 2)))

    def _drawn_rect(self, row: int) -> QRectF:
        """Where a bundle's row shows at this level of detail: its own line, or far out its rack-to-rack
        line when the row's heat or selection colours it (a speed that leaves the line's pen as it was
        draws nothing new: set_aggregate_gbps). A long rack-to-rack line's part of the far-out picture
        is most of the picture: ~70 ms a paint at 131k GPUs."""
        if self.show_individual:
            if not 0 <= row < len(self.lines.a):
                return QRectF()
            return self.points_rect(np.array([self.lines.a[row], self.lines.b[row]]))
        if self.heat is None and row not in self.selected:
            return QRectF()
        line = int(self.bundle_aggregate[row]) if 0 <= row < len(self.bundle_aggregate) else -1
        return self.aggregate_rect(line)

    def set_aggregate_gbps(self, row: int, gbps: float) -> None:
        """A rack-to-rack line's speed: painted again where it is drawn when its pen changes with it (or
        the heat shown, whose pens follow the speed)."""
        old = float(self.aggregates.gbps[row])
        self.aggregates.gbps[row] = gbps
        kind = int(self.aggregates.kind[row])
        if self.heat is not None or self._pen(kind, old, aggregate=True) is not self._pen(kind, gbps, aggregate=True):
            self.update(self.aggregate_rect(row))

    def aggregate_rect(self, row: int) -> QRectF:
        """Where a rack-to-rack line is drawn (as rows_rect)."""
        if not 0 <= row < len(self.aggregates.a):
            return QRectF()
        return self.points_rect(np.array([self.aggregates.a[row], self.aggregates.b[row]]))

    def points_rect(self, points: np.ndarray) -> QRectF:
        points = points[np.isfinite(points).all(axis=1)] if len(points) else points
        if not len(points):
            return QRectF()
        views = self.scene().views() if self.scene() is not None else []
        scale = min((v.transform().m11() for v in views), default=1.0)
        pad = REACH_PX / max(scale, 1e-6)  # the widest pen (a selected cable, the bottleneck halo) and its edge
        left, top = points.min(axis=0)
        right, bottom = points.max(axis=0)
        return QRectF(left - pad, top - pad, right - left + 2 * pad, bottom - top + 2 * pad)

    def boundingRect(self) -> QRectF:
        return self._bounds if self._measured else QRectF()

    def bounds(self) -> QRectF:
        """What the lines cover (boundingRect, also while measured apart)."""
        return QRectF(self._bounds)

    def measured_apart(self, apart: bool) -> None:
        """Apart: the layer adds nothing to a measure of the scene's items (the scene measures the rest
        once, and adds the layer's bounds as they change edit by edit)."""
        if apart == self._measured:
            self.prepareGeometryChange()
            self._measured = not apart

    # ---- drawing ----
    def _pen(self, kind: int, gbps: float, selected: bool = False, aggregate: bool = False) -> QPen:
        if not np.isfinite(gbps):  # NaN or infinity (a recovered design): drawn thin, the checks name it
            gbps = 1.0
        width_key = round(np.log2(max(gbps, 1.0)) * 2) / 2
        key = (kind, width_key, selected, aggregate)
        pen = self._pens.get(key)
        if pen is None:
            pen = style.link_pen(KINDS[kind], 2 ** width_key, selected)
            if aggregate:
                pen.setColor(style.mix(pen.color(), style.BACKGROUND, 0.45))
                pen.setStyle(style.LINK_STYLE["infiniband"])
                pen.setWidthF(min(pen.widthF(), 3.0))
            self._pens[key] = pen
        return pen

    def visible_rows(self, rect: QRectF, lines: _Lines) -> np.ndarray:
        if not len(lines.a):
            return np.zeros(0, dtype=np.int64)
        x0, x1, y0, y1 = lines.boxes()
        left, right, top, bottom = rect.left(), rect.right(), rect.top(), rect.bottom()
        meets = (x1 >= left) & (x0 <= right) & (y1 >= top) & (y0 <= bottom)
        if np.count_nonzero(meets) < 64:
            return np.flatnonzero(meets)
        # Of those whose box meets the rect, the ones that cross it: the rect's corners are not all on one
        # side of the line. Zoomed in, most long cables only pass near the view (a third fewer to draw).
        # A line with both ends in the rect crosses it: only the others are tested (fit-all: none).
        inside = (x0 >= left) & (x1 <= right) & (y0 >= top) & (y1 <= bottom)
        rows = np.flatnonzero(meets & ~inside)
        if len(rows):
            a, d = lines.a[rows], lines.b[rows] - lines.a[rows]
            sides = [d[:, 0] * (cy - a[:, 1]) - d[:, 1] * (cx - a[:, 0])
                     for cx, cy in ((left, top), (right, top), (left, bottom), (right, bottom))]
            low, high = np.minimum.reduce(sides), np.maximum.reduce(sides)
            inside[rows[(low <= 0) & (high >= 0)]] = True
        return np.flatnonzero(inside)

    def paint(self, painter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        self.paint_rect(painter, option.exposedRect)

    def shown_aggregate_pens(self) -> tuple | None:
        """Per rack-to-rack line under the heat shown: its bucket and the line that sets its pen
        (aggregate_pen_rows); None without heat."""
        heat = self.heat if (self.heat is not None and len(self.heat) == len(self.lines.a)) else None
        return self._aggregate_heat_pens(heat) if heat is not None else None

    def selected_aggregates(self) -> set[int]:
        rows_of = self.bundle_aggregate
        return {int(rows_of[i]) for i in self.selected if i < len(rows_of) and rows_of[i] >= 0}

    def paint_rect(self, painter, exposed: QRectF, dense: bool | None = None) -> None:
        """The lines that meet `exposed`. `dense`: draw as a dense view (no antialiasing) whatever
        the count met, as a whole picture of which this is a part would be drawn."""
        pad = 6.0 / max(painter.worldTransform().m11(), 1e-6)  # a wide pen's edge reaches past its line
        rect = exposed.adjusted(-pad, -pad, pad, pad)
        if self.show_individual:
            lines, rows, aggregate = self.lines, self.visible_rows(rect, self.lines), False
        else:
            lines, rows, aggregate = self.aggregates, self.visible_rows(rect, self.aggregates), True
        if not rows.size:
            return
        heat = self.heat if (self.heat is not None and len(self.heat) == len(self.lines.a)) else None
        pen_rows = None
        if heat is not None and aggregate:
            heat, pen_rows = self._aggregate_heat_pens(heat)  # the rack-to-rack lines keep their busiest cable's
        gbps = np.nan_to_num(lines.gbps[rows], nan=1.0, posinf=1.0, neginf=1.0)  # a recovered NaN/inf: thin
        width_bucket = np.round(np.log2(np.maximum(gbps, 1.0)) * 2).astype(np.int64)
        if heat is not None:
            groups = heat[rows]
        else:
            groups = lines.kind[rows].astype(np.int64) * 1000 + width_bucket
        if not aggregate:  # (the rack-to-rack lines are kept as QLineF: _aggregate_qlines)
            ax, ay = lines.a[rows, 0].tolist(), lines.a[rows, 1].tolist()
            bx, by = lines.b[rows, 0].tolist(), lines.b[rows, 1].tolist()
        order = np.argsort(groups, kind="stable")
        # Hundreds of cables on screen: drawn without antialiasing (a thin line then costs a fraction,
        # and in a dense fan the steps do not show); a few, smooth.
        smooth = painter.testRenderHint(QPainter.Antialiasing)
        if dense is None:
            dense = rows.size > DENSE_LINES or self._dense_whole(lines)
        if dense:
            painter.setRenderHint(QPainter.Antialiasing, False)
        if self.marked and not aggregate:  # a halo under the cable: its heat colour stays visible on top
            pen = QPen(style.BOTTLENECK, 6.0)
            pen.setCosmetic(True)
            painter.setPen(pen)
            painter.drawLines([QLineF(*self.lines.a[i], *self.lines.b[i]) for i in self.marked
                               if i < len(self.lines.a)])
        group_sorted = groups[order]
        starts = np.flatnonzero(np.r_[True, group_sorted[1:] != group_sorted[:-1]])
        ends = np.r_[starts[1:], len(order)]
        for s, e in zip(starts.tolist(), ends.tolist()):
            members = order[s:e].tolist()
            first = rows[members[0]] if pen_rows is None else int(pen_rows[rows[members[0]]])
            if heat is not None and group_sorted[s] >= 0:
                pen = style.heat_pen(int(group_sorted[s]), float(lines.gbps[first]))
                if aggregate:
                    pen.setWidthF(min(pen.widthF(), 3.0))
                painter.setPen(pen)
            else:  # no heat, or an aggregate of cables without a load: the kind's pen
                painter.setPen(self._pen(int(lines.kind[first]), float(lines.gbps[first]), aggregate=aggregate))
            if aggregate:  # the same lines at every paint of a zoomed-out view: made once (24k at 131k GPUs)
                made = self._aggregate_qlines()
                painter.drawLines([made[r] for r in rows[order[s:e]].tolist()])
            else:
                painter.drawLines([QLineF(ax[j], ay[j], bx[j], by[j]) for j in members])
        painter.setRenderHint(QPainter.Antialiasing, smooth)
        scale = painter.worldTransform().m11()
        if not aggregate and scale >= style.LOD_LINK_LABELS and rows.size <= style.MAX_LINK_LABELS:
            self._draw_labels(painter, rows, ax, ay, bx, by, rect)
        if self.selected and aggregate:  # a selected cable's rack-to-rack bundle
            chosen = self.selected_aggregates()
            made = self._aggregate_qlines()
            for r in chosen:
                painter.setPen(self._pen(int(lines.kind[r]), float(lines.gbps[r]) * 4, selected=True))
                painter.drawLine(made[r])
        if self.selected and not aggregate:
            chosen = [i for i in self.selected if i < len(self.lines.a)]
            for i in chosen:
                painter.setPen(self._pen(int(self.lines.kind[i]), float(self.lines.gbps[i]) * 4, selected=True))
                painter.drawLine(QLineF(*self.lines.a[i], *self.lines.b[i]))

    def _dense_whole(self, lines: _Lines) -> bool:
        """Whether the cached picture of a far-out view, painted whole, meets more than DENSE_LINES
        lines: a part of it painted again after an edit is drawn as the whole was, not smoother than
        the lines around it. (Painted straight to the view, a part is drawn as a scrolled-in strip is.)"""
        if self.cacheMode() == QGraphicsItem.NoCache:
            return False
        return int(np.isfinite(lines.a[:, 0]).sum()) > DENSE_LINES

    def _aggregate_qlines(self) -> list:
        """Every rack-to-rack line as a QLineF, kept until the lines change (set_aggregates)."""
        if self._agg_qlines is None:
            a, b = self.aggregates.a.tolist(), self.aggregates.b.tolist()
            self._agg_qlines = [QLineF(p[0], p[1], q[0], q[1]) for p, q in zip(a, b)]
        return self._agg_qlines

    def _aggregate_heat_pens(self, heat: np.ndarray) -> tuple:
        """Per rack-to-rack line, the hottest bucket of its bundles (-1: none of them has a load) and the
        line that sets its pen (aggregate_pen_rows: a sort of every line, not redone at every paint of
        the view and the overview); kept until the heat, the bundles' lines or the rack-to-rack lines
        are set again."""
        if self._aggregate_heat_memo is None:
            out = np.full(len(self.aggregates.a), -1, dtype=np.int64)
            rows = self.bundle_aggregate
            if len(rows) == len(heat):
                inside = rows >= 0
                np.maximum.at(out, rows[inside], heat[inside])
            self._aggregate_heat_memo = (out, aggregate_pen_rows(out))
        return self._aggregate_heat_memo

    def _draw_labels(self, painter, rows, ax, ay, bx, by, exposed: QRectF) -> None:
        """Cable labels where they fit (cable_labels.py); their scene rects kept for tests."""
        texts = place_labels(painter.worldTransform(), self._label_font, [self.bundles[r] for r in rows.tolist()],
                             ax, ay, bx, by, exposed, keep_out_rects(self.scene(), exposed))
        self.label_boxes = draw_labels(painter, texts, self._label_font)

    # ---- hit testing ----
    def row_at(self, pos: QPointF, tolerance: float) -> int | None:
        lines = self.lines if self.show_individual else self.aggregates
        if not len(lines.a):
            return None
        p = np.array([pos.x(), pos.y()])
        d = lines.b - lines.a
        length2 = np.maximum((d * d).sum(axis=1), 1e-12)
        t = np.clip(((p - lines.a) * d).sum(axis=1) / length2, 0.0, 1.0)
        nearest = lines.a + d * t[:, None]
        dist = np.sqrt(((nearest - p) ** 2).sum(axis=1))
        dist[np.isnan(dist)] = np.inf  # an emptied row (NaN ends) is nowhere
        i = int(np.argmin(dist))
        return i if dist[i] <= tolerance else None

    def tooltip_at(self, pos: QPointF, tolerance: float) -> str | None:
        row = self.row_at(pos, tolerance)
        if row is None:
            return None
        if self.show_individual:
            extra = self.heat_tip(row) if self.heat_tip is not None else ""
            return self.bundles[row].tooltip() + (f"\n{extra}" if extra else "")
        return self.aggregate_tips[row] if row < len(self.aggregate_tips) else None
