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
from PySide6.QtGui import QPen
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem

from . import style

KINDS = ("infiniband", "ethernet", "nvlink", "pcie")


@dataclass
class Bundle:
    key: tuple[str, str]
    link_ids: list[str]
    kind: str
    total_gbps: float
    cables: int
    rate: str

    def tooltip(self) -> str:
        return (f"{self.key[0]} - {self.key[1]}: {self.cables} x {self.rate} {style.LINK_LABEL.get(self.kind, '')} "
                f"({self.total_gbps / 1000:g} Tb/s per direction)\nlinks: " + ", ".join(self.link_ids[:8])
                + (" ..." if len(self.link_ids) > 8 else ""))


@dataclass
class _Lines:
    a: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    b: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    kind: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int8))
    gbps: np.ndarray = field(default_factory=lambda: np.zeros(0))


class LinkLayer(QGraphicsItem):
    def __init__(self):
        super().__init__()
        self.setFlag(QGraphicsItem.ItemUsesExtendedStyleOption, True)
        self.setZValue(-1)  # under the racks: cables show in the aisles, not across other boxes
        self.bundles: list[Bundle] = []
        self.index: dict[tuple[str, str], int] = {}
        self.lines = _Lines()
        self.aggregates = _Lines()
        self.aggregate_tips: list[str] = []
        self.selected: set[int] = set()
        self.heat: np.ndarray | None = None  # per bundle: utilisation bucket 0..10 (link heat), or None
        self.marked: set[int] = set()  # bottleneck bundles, outlined
        self.heat_tip = None  # callable(row) -> extra tooltip text (load by traffic kind)
        self.show_individual = True
        self._bounds = QRectF()
        self._pens: dict[tuple, QPen] = {}

    # ---- data ----
    def set_bundles(self, bundles: list[Bundle], a: np.ndarray, b: np.ndarray) -> None:
        self.bundles = bundles
        self.index = {bd.key: i for i, bd in enumerate(bundles)}
        self.lines = _Lines(a.reshape(-1, 2).astype(float), b.reshape(-1, 2).astype(float),
                            np.array([KINDS.index(bd.kind) if bd.kind in KINDS else 0 for bd in bundles], np.int8),
                            np.array([bd.total_gbps for bd in bundles], float))
        self.selected = {i for i in self.selected if i < len(bundles)}
        self._rebound()

    def set_ends(self, row: int, a: QPointF, b: QPointF) -> None:
        self.lines.a[row] = (a.x(), a.y())
        self.lines.b[row] = (b.x(), b.y())
        self.update()

    def set_aggregates(self, a: np.ndarray, b: np.ndarray, kinds: list[str], gbps: list[float], tips: list[str]):
        self.aggregates = _Lines(a.reshape(-1, 2).astype(float), b.reshape(-1, 2).astype(float),
                                 np.array([KINDS.index(k) if k in KINDS else 0 for k in kinds], np.int8),
                                 np.array(gbps, float))
        self.aggregate_tips = tips
        self._rebound()

    def _rebound(self) -> None:
        pts = [arr for arr in (self.lines.a, self.lines.b, self.aggregates.a, self.aggregates.b) if len(arr)]
        self.prepareGeometryChange()
        if pts:
            allp = np.concatenate(pts)
            lo, hi = allp.min(axis=0), allp.max(axis=0)
            self._bounds = QRectF(lo[0] - 4, lo[1] - 4, hi[0] - lo[0] + 8, hi[1] - lo[1] + 8)
        else:
            self._bounds = QRectF()
        self.update()

    def boundingRect(self) -> QRectF:
        return self._bounds

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
        x0 = np.minimum(lines.a[:, 0], lines.b[:, 0])
        x1 = np.maximum(lines.a[:, 0], lines.b[:, 0])
        y0 = np.minimum(lines.a[:, 1], lines.b[:, 1])
        y1 = np.maximum(lines.a[:, 1], lines.b[:, 1])
        return np.flatnonzero((x1 >= rect.left()) & (x0 <= rect.right()) & (y1 >= rect.top()) & (y0 <= rect.bottom()))

    def paint(self, painter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        rect = option.exposedRect
        if self.show_individual:
            lines, rows, aggregate = self.lines, self.visible_rows(rect, self.lines), False
        else:
            lines, rows, aggregate = self.aggregates, self.visible_rows(rect, self.aggregates), True
        if not rows.size:
            return
        heat = self.heat if (self.heat is not None and not aggregate and len(self.heat) == len(self.lines.a)) else None
        gbps = np.nan_to_num(lines.gbps[rows], nan=1.0, posinf=1.0, neginf=1.0)  # a recovered NaN/inf: thin
        width_bucket = np.round(np.log2(np.maximum(gbps, 1.0)) * 2).astype(np.int64)
        if heat is not None:
            groups = heat[rows]
        else:
            groups = lines.kind[rows].astype(np.int64) * 1000 + width_bucket
        ax, ay = lines.a[rows, 0].tolist(), lines.a[rows, 1].tolist()
        bx, by = lines.b[rows, 0].tolist(), lines.b[rows, 1].tolist()
        order = np.argsort(groups, kind="stable")
        group_sorted = groups[order]
        starts = np.flatnonzero(np.r_[True, group_sorted[1:] != group_sorted[:-1]])
        ends = np.r_[starts[1:], len(order)]
        for s, e in zip(starts.tolist(), ends.tolist()):
            members = order[s:e].tolist()
            first = rows[members[0]]
            if heat is not None:
                painter.setPen(style.heat_pen(int(group_sorted[s]), float(lines.gbps[first])))
            else:
                painter.setPen(self._pen(int(lines.kind[first]), float(lines.gbps[first]), aggregate=aggregate))
            painter.drawLines([QLineF(ax[j], ay[j], bx[j], by[j]) for j in members])
        scale = painter.worldTransform().m11()
        if not aggregate and scale >= style.LOD_LINK_LABELS and rows.size <= 400:
            painter.setFont(self._font())
            painter.setPen(style.MUTED)
            for j, r in enumerate(rows.tolist()):
                bundle = self.bundles[r]
                text = f"{bundle.cables}x{bundle.rate.replace(' Gb/s', 'G')}" if bundle.cables > 1 else \
                    bundle.rate.replace(" Gb/s", "G")
                painter.drawText(QPointF((ax[j] + bx[j]) / 2 + 1, (ay[j] + by[j]) / 2 - 1), text)
        if self.marked and not aggregate:
            pen = QPen(style.BOTTLENECK, 4.0)
            pen.setCosmetic(True)
            painter.setPen(pen)
            painter.drawLines([QLineF(*self.lines.a[i], *self.lines.b[i]) for i in self.marked
                               if i < len(self.lines.a)])
        if self.selected and not aggregate:
            chosen = [i for i in self.selected if i < len(self.lines.a)]
            for i in chosen:
                painter.setPen(self._pen(int(self.lines.kind[i]), float(self.lines.gbps[i]) * 4, selected=True))
                painter.drawLine(QLineF(*self.lines.a[i], *self.lines.b[i]))

    def _font(self):
        font = getattr(self, "_label_font", None)
        if font is None:
            font = self._label_font = style.label_font(2.6)
        return font

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
