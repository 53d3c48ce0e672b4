"""The logical fabric view: the design as a wiring diagram (tiers top to bottom, pods and rails
framed, NVLink domains as one block, parallel cables as one line with their count and capacity,
each tier's oversubscription at the left).

It draws `designer.core.model.logical_layout` and follows the document: every change (undo and
redo too) rebuilds it shortly after, while it is shown. It owns no selection of its own: a click
asks for the elements to be selected (`selectIds`) and the window answers with the shared
selection (`show_selection`), so the rack canvas, the Inspector and this view always agree.

Boxes and lines scale with the zoom; their text is drawn at screen size (the names stay readable
at any zoom and are left out where they do not fit).
"""
from __future__ import annotations

import math
import re

import numpy as np
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene, QGraphicsView, QToolTip

from ...core.model.logical_layout import PLURAL, LogicalLayout, build_logical_layout, format_gbps
from ..canvas import heat as link_heat
from ..canvas.style import heat_color
from . import style

LEFT_PX = 195.0  # screen room at the left for the tier names and ratios
REBUILD_DELAY_MS = 40  # a burst of edits rebuilds once
ZOOM_MIN, ZOOM_MAX = 0.02, 40.0
PICK_PX = 6.0  # how near a click must be to a cable bundle to pick it
DOCUMENT_COLLECTIONS = {"racks", "nodes", "switches", "links"}


def _font(size_pt: float = style.FONT_PT, bold: bool = False) -> QFont:
    font = QFont()
    font.setPointSizeF(size_pt)
    font.setBold(bold)
    return font


def _short_name(label: str) -> str | None:
    """'pod 3' -> '3', 'spine12' -> '12', 'node0 .. node31' -> '0-31'; None without a number."""
    numbers = re.findall(r"\d+", label)
    if " .. " in label:
        return f"{numbers[0]}-{numbers[-1]}" if len(numbers) >= 2 else None
    end = re.search(r"(\d+)$", label)
    return end.group(1) if end else None


def _device_text(painter: QPainter, rect: QRectF, lines: list[tuple[str, QFont, QColor]], widest: str = "") -> None:
    """Lines of text centred in `rect` (item coordinates), drawn at screen size; each line
    elided to the box's width, and the lines that do not fit its height left out. A smaller font
    when the first line, or `widest` (the longest name of the row: one font for a whole row), would be cut."""
    device = painter.worldTransform().mapRect(rect)
    if device.width() < 12 or device.height() < 12:
        return
    painter.save()
    painter.resetTransform()
    room = device.width() - 8
    first = QFontMetricsF(lines[0][1])
    small = max(first.horizontalAdvance(lines[0][0]), first.horizontalAdvance(widest)) > room
    short = _short_name(lines[0][0])
    tiny = _font(max(lines[0][1].pointSizeF() - 2, 6.5))
    if small and short and QFontMetricsF(tiny).horizontalAdvance(widest) > room:
        # not even the small font holds the row's names: their numbers tell the boxes apart
        lines = [(short, lines[0][1], lines[0][2])]
        small, room = False, device.width() - 2
    heights = [QFontMetricsF(f).height() for _, f, _ in lines]
    shown = []
    total = 0.0
    for line, h in zip(lines, heights):
        if total + h > device.height() - 2:
            break
        shown.append((line, h))
        total += h
    y = device.center().y() - total / 2
    for (text, font, color), h in shown:
        if small:  # a smaller font before cutting the name
            font = _font(max(font.pointSizeF() - 2, 6.5), bold=False)
        text = QFontMetricsF(font).elidedText(text, Qt.ElideRight, room)
        if text and text != "…":
            painter.setFont(font)
            painter.setPen(color)
            painter.drawText(QRectF(device.center().x() - room / 2, y, room, h), Qt.AlignCenter, text)
        y += h
    painter.restore()


class BlockItem(QGraphicsItem):
    """A switch, a server, an NVLink domain or a group of them."""

    def __init__(self, layout: LogicalLayout, index: int, widest: str = ""):
        super().__init__()
        self.index = index
        self.widest = widest  # the row's longest name
        self.block = block = layout.blocks[index]
        self.selected = False
        self.rect = QRectF(0, 0, block.width, block.height)
        self.setPos(block.x, block.y)
        self.setZValue(2)
        members = len(block.members)
        tip = [f"<b>{block.label}</b>", block.detail.replace("\n", "<br>")]
        if block.kind == "group":
            tip.append(f"{members:,} elements; click selects them all (on the rack canvas too)")
        self.setToolTip("<br>".join(tip))

    def boundingRect(self) -> QRectF:
        return self.rect.adjusted(-6, -6, 6, 6)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        block = self.block
        domain = block.kind == "domain"
        fill = style.DOMAIN_FILL if domain else style.BLOCK_FILL[block.tier]
        edge = style.DOMAIN_EDGE if domain else style.BLOCK_EDGE[block.tier]
        if block.kind == "group":  # a stack of cards: several elements stand behind this box
            behind = QPen(edge, 1)
            behind.setCosmetic(True)
            painter.setPen(behind)
            painter.setBrush(QBrush(fill.darker(104)))
            scale = painter.worldTransform()
            dx = 4 / max(abs(scale.m11()), 1e-6)
            dy = 4 / max(abs(scale.m22()), 1e-6)
            painter.drawRect(self.rect.translated(dx, -dy))
        pen = QPen(style.SELECTION if self.selected else edge, 3 if self.selected else (2 if domain else 1))
        pen.setCosmetic(True)
        painter.setPen(pen)
        painter.setBrush(QBrush(fill))
        painter.drawRect(self.rect)
        lines = [(block.label, _font(bold=True), style.TEXT)]
        lines += [(text, _font(style.FONT_PT - 1), style.MUTED) for text in block.detail.split("\n")]
        _device_text(painter, self.rect, lines, self.widest)


class BandItem(QGraphicsItem):
    """A pod's frame behind its rows, or a rail's bracket around its leaves."""

    def __init__(self, band):
        super().__init__()
        self.band = band
        self.rect = QRectF(0, 0, band.width, band.height)
        self.setPos(band.x, band.y)
        self.setZValue(0 if band.kind == "pod" else 1.6)  # a rail's name above the lines

    def boundingRect(self) -> QRectF:
        return self.rect

    def paint(self, painter: QPainter, option, widget=None) -> None:
        pod = self.band.kind == "pod"
        pen = QPen(style.POD_EDGE if pod else style.RAIL_EDGE, 1, Qt.SolidLine if pod else Qt.DashLine)
        pen.setCosmetic(True)
        painter.setPen(pen)
        painter.setBrush(QBrush(style.POD_FILL) if pod else Qt.NoBrush)
        painter.drawRect(self.rect)
        device = painter.worldTransform().mapRect(self.rect)
        font = _font(style.FONT_PT - 1, bold=pod)
        metrics = QFontMetricsF(font)
        if device.width() < metrics.horizontalAdvance(self.band.label) + 6:
            return
        painter.save()
        painter.resetTransform()
        painter.setFont(font)
        painter.setPen(style.POD_TEXT if pod else style.RAIL_TEXT)
        if pod:  # top left, inside the frame
            painter.drawText(QPointF(device.left() + 4, device.top() + metrics.ascent() + 2), self.band.label)
        else:  # under the rail's leaves
            painter.drawText(QRectF(device.left(), device.bottom() - metrics.height() - 1, device.width(),
                                    metrics.height()), Qt.AlignCenter, self.band.label)
        painter.restore()


class BundleLayer(QGraphicsItem):
    """Every bundle as one line (one item: hundreds of lines paint faster together), with its
    "32 x 400G = 12.8T" where the label fits without covering another."""

    def __init__(self, layout: LogicalLayout):
        super().__init__()
        self.layout = layout
        self.selected: set[int] = set()
        # link heat (as on the rack canvas): per bundle its busiest cable's heat 0..1 and that cable
        # (a position in doc.links); None: heat off
        self.heat: np.ndarray | None = None
        self.busiest: np.ndarray | None = None
        blocks = layout.blocks
        n = len(layout.bundles)
        self.a = np.zeros((n, 2))
        self.b = np.zeros((n, 2))
        for k, bundle in enumerate(layout.bundles):
            up, low = blocks[bundle.upper], blocks[bundle.lower]
            if up.tier == low.tier:  # within a row: side to side
                self.a[k] = up.center
                self.b[k] = low.center
            else:
                self.a[k] = (up.x + up.width / 2, up.y + up.height)
                self.b[k] = (low.x + low.width / 2, low.y)
        widest = max((b.capacity_gbps for b in layout.bundles), default=1.0)
        self.widths = [0.8 + 2.2 * math.log1p(b.capacity_gbps) / math.log1p(widest) for b in layout.bundles]
        # bundles per gap between two rows: a crowded gap gets one summary instead of a label per line
        gaps: dict[tuple[str, str], int] = {}
        for bundle in layout.bundles:
            key = (blocks[bundle.upper].tier, blocks[bundle.lower].tier)
            gaps[key] = gaps.get(key, 0) + 1
        # a gap whose lines all carry the same figures says them once, in the column at the left
        texts: dict[tuple[str, str], set[str]] = {}
        for bundle in layout.bundles:
            texts.setdefault((blocks[bundle.upper].tier, blocks[bundle.lower].tier), set()).add(bundle.label)
        self.gap_label = {key: next(iter(t)) for key, t in texts.items() if len(t) == 1}
        self.labelled = [gaps[key] <= style.LABEL_LIMIT_PER_GAP and key not in self.gap_label
                         for key in ((blocks[b.upper].tier, blocks[b.lower].tier) for b in layout.bundles)]
        self._colors = {kind: style.lighter(style.LINK_COLOR.get(kind, style.MUTED))
                        for kind in {b.kind for b in layout.bundles}}
        self.setZValue(1.5)
        if n:
            lo = np.minimum(self.a.min(axis=0), self.b.min(axis=0))
            hi = np.maximum(self.a.max(axis=0), self.b.max(axis=0))
            self._bounds = QRectF(QPointF(*lo), QPointF(*hi)).adjusted(-10, -10, 10, 10)
        else:
            self._bounds = QRectF()

    def boundingRect(self) -> QRectF:
        return self._bounds

    def paint(self, painter: QPainter, option, widget=None) -> None:
        layout = self.layout
        # one drawLine each: drawLines with a wide antialiased pen strokes the lines as one outline (10x slower)
        for k in sorted(range(len(layout.bundles)), key=lambda k: k in self.selected):  # selected on top
            bundle = layout.bundles[k]
            chosen = k in self.selected
            color = style.SELECTION if chosen else self._colors[bundle.kind]
            if self.heat is not None and not chosen and self.busiest[k] >= 0:
                color = heat_color(round(float(self.heat[k]) * 10) / 10)  # the canvas's ten steps
            pen = QPen(color, self.widths[k] + (2.5 if chosen else 0))
            pen.setCosmetic(True)
            if bundle.kind == "ethernet":
                pen.setStyle(Qt.DashLine)
            painter.setPen(pen)
            painter.drawLine(QPointF(*self.a[k]), QPointF(*self.b[k]))
        self._paint_labels(painter)

    def set_heat(self, values: np.ndarray | None) -> None:
        """Each bundle takes the heat of its busiest cable (values: per link in doc.links order)."""
        if values is None:
            self.heat = self.busiest = None
        else:
            n = len(self.layout.bundles)
            self.heat, self.busiest = np.zeros(n), np.full(n, -1, dtype=np.int64)
            for k, bundle in enumerate(self.layout.bundles):
                rows = np.asarray(bundle.link_rows, dtype=np.int64)
                rows = rows[rows < len(values)]
                if len(rows):
                    top = int(rows[np.argmax(values[rows])])
                    self.heat[k], self.busiest[k] = float(values[top]), top
        self.update()

    def _paint_labels(self, painter: QPainter) -> None:
        """Greedy: the largest bundles first, each at the first spot along its line that covers
        no label placed before it; a bundle without room shows its figures in its tooltip."""
        transform = painter.worldTransform()
        font = _font(style.FONT_PT - 1)
        metrics = QFontMetricsF(font)
        placed: list[QRectF] = []
        order = sorted((k for k in range(len(self.layout.bundles)) if self.labelled[k]),
                       key=lambda k: -self.layout.bundles[k].capacity_gbps)
        texts = []
        for k in order:
            text = self.layout.bundles[k].label
            w, h = metrics.horizontalAdvance(text) + 6, metrics.height() + 2
            a = transform.map(QPointF(*self.a[k]))
            b = transform.map(QPointF(*self.b[k]))
            for t in (0.5, 0.68, 0.32, 0.8, 0.2):
                p = a + (b - a) * t
                rect = QRectF(p.x() - w / 2, p.y() - h / 2, w, h)
                if not any(rect.intersects(r) for r in placed):
                    placed.append(rect)
                    texts.append((rect, text, k in self.selected))
                    break
        painter.save()
        painter.resetTransform()
        painter.setFont(font)
        for rect, text, chosen in texts:
            painter.setPen(Qt.NoPen)
            painter.setBrush(QColor(255, 255, 255, 225))
            painter.drawRect(rect)
            painter.setPen(style.SELECTION if chosen else style.TEXT)
            painter.drawText(rect, Qt.AlignCenter, text)
        painter.restore()

    def nearest(self, scene_pos: QPointF, transform) -> int | None:
        """The bundle whose line passes within PICK_PX screen pixels of the point, or None."""
        if not len(self.a):
            return None
        m = np.array([[transform.m11(), transform.m21()], [transform.m12(), transform.m22()]])
        a = self.a @ m.T
        b = self.b @ m.T
        p = np.array([scene_pos.x(), scene_pos.y()]) @ m.T
        ab = b - a
        length2 = np.maximum((ab ** 2).sum(axis=1), 1e-9)
        t = np.clip(((p - a) * ab).sum(axis=1) / length2, 0.0, 1.0)
        distance = np.hypot(*(a + ab * t[:, None] - p).T)
        k = int(np.argmin(distance))
        return k if distance[k] <= PICK_PX else None


class LogicalView(QGraphicsView):
    selectIds = Signal(list)  # the elements a click picked (the window selects them everywhere)
    deleteRequested = Signal()  # the Delete key here: the window deletes the shared selection
    showRequested = Signal(str)  # a double click: show this element on the rack canvas

    def __init__(self, qdoc, parent=None):
        super().__init__(parent)
        self.qdoc = qdoc
        self.setScene(QGraphicsScene(self))
        self.scene().setBackgroundBrush(style.BACKGROUND)
        self.setRenderHint(QPainter.Antialiasing, True)
        self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        self.setDragMode(QGraphicsView.ScrollHandDrag)
        self.setFocusPolicy(Qt.StrongFocus)
        self.layout_model: LogicalLayout | None = None
        self.block_items: list[BlockItem] = []
        self.bundle_layer: BundleLayer | None = None
        self.selected_ids: list[str] = []
        self._stale = True
        self._fitted = True  # the view follows fit-all until the user zooms
        self.heat_values: np.ndarray | None = None  # per link: the rack canvas's heat (None: off)
        self.heat_mode = link_heat.STEP
        self.heat_result = None
        self._timer = QTimer(self, singleShot=True, interval=REBUILD_DELAY_MS, timeout=self.rebuild)
        qdoc.changed.connect(self._on_changed)
        qdoc.replaced.connect(self._on_replaced)

    # ---- following the document ----
    def _on_changed(self, changes) -> None:
        if any(c.collection in DOCUMENT_COLLECTIONS for c in changes):
            self._schedule()

    def _on_replaced(self) -> None:
        self._fitted = True
        self._schedule()

    def _schedule(self) -> None:
        self._stale = True
        if self.isVisible():
            self._timer.start()

    def is_stale(self) -> bool:
        """Whether the picture lags the document: an edit's rebuild waits for its short delay, or,
        while the view is closed, for the view to show again."""
        return self._stale

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._stale:
            self.rebuild()

    def rebuild(self) -> None:
        """Lay the design out again (16,384 GPUs: ~0.1 s) and redraw it."""
        self._timer.stop()
        self._stale = False
        layout = build_logical_layout(self.qdoc.doc)
        self.layout_model = layout
        scene = self.scene()
        scene.clear()
        self.block_items = []
        for band in layout.bands:
            scene.addItem(BandItem(band))
        self.bundle_layer = BundleLayer(layout)
        self.bundle_layer.set_heat(self._heat_for(layout))
        scene.addItem(self.bundle_layer)
        widest: dict[str, str] = {}
        for b in layout.blocks:
            if len(b.label) > len(widest.get(b.tier, "")):
                widest[b.tier] = b.label
        for i in range(len(layout.blocks)):
            item = BlockItem(layout, i, widest[layout.blocks[i].tier])
            scene.addItem(item)
            self.block_items.append(item)
        self._content = QRectF(0, -28, max(layout.width, 1.0), max(layout.height, 1.0) + 40)
        self.show_selection(self.selected_ids)
        if self._fitted:
            self.fit()
        else:
            self._set_scene_rect(self.transform().m11(), self.transform().m22())

    # ---- link heat ----
    def show_heat(self, values, mode: str = link_heat.STEP, result=None) -> None:
        """The rack canvas's link heat on the bundles (values per link in doc.links order; None: off)."""
        self.heat_values, self.heat_mode, self.heat_result = values, mode, result
        if self.bundle_layer is not None and self.layout_model is not None:
            self.bundle_layer.set_heat(self._heat_for(self.layout_model))
        self.viewport().update()

    def _heat_for(self, layout: LogicalLayout) -> np.ndarray | None:
        values = self.heat_values
        if values is None or len(layout.link_ids) != len(values):  # the design changed since: wait for its heat
            return None
        return np.asarray(values, dtype=float)

    def bundle_heat(self, k: int) -> float | None:
        """The heat a bundle is drawn with (its busiest cable's), or None."""
        layer = self.bundle_layer
        if layer is None or layer.heat is None or layer.busiest[k] < 0:
            return None
        return float(layer.heat[k])

    # ---- view ----
    def _set_scene_rect(self, sx: float, sy: float) -> None:
        c = self._content
        self.setSceneRect(c.adjusted(-LEFT_PX / max(sx, 1e-6), -8 / max(sy, 1e-6), 16 / max(sx, 1e-6),
                                     8 / max(sy, 1e-6)))

    def fit(self) -> None:
        """The whole fabric in the view, stretched to fill it (the text keeps its size), with the
        tier names and ratios in a column at the left."""
        self._fitted = True
        if self.layout_model is None:
            return
        c = self._content
        # 8 px to spare each way: an exact fit shows scroll bars, which shrink the view (and so on)
        w = max(self.viewport().width() - LEFT_PX - 24, 50)
        h = max(self.viewport().height() - 24, 50)
        sx, sy = w / c.width(), h / c.height()
        sy = min(sy, 5 * sx)  # a small design is not stretched into tall thin boxes
        sx = min(sx, 3 * sy)
        self._set_scene_rect(sx, sy)
        self.resetTransform()
        self.scale(sx, sy)
        self.centerOn(self.sceneRect().center())

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self._fitted and self.layout_model is not None:
            self.fit()

    def wheelEvent(self, event) -> None:
        steps = event.angleDelta().y() / 120.0
        if not steps:
            return
        factor = 1.2 ** steps
        current = self.transform().m11()
        if not ZOOM_MIN <= current * factor <= ZOOM_MAX:
            return
        self._fitted = False
        self.scale(factor, factor)
        event.accept()

    @staticmethod
    def _left_text(painter: QPainter, y: float, height: float, text: str) -> None:
        """One line of the left column, cut with an ellipsis when longer than the column."""
        room = LEFT_PX - 16
        text = QFontMetricsF(painter.font()).elidedText(text, Qt.ElideRight, room)
        painter.drawText(QRectF(8, y, room, height), Qt.AlignLeft | Qt.AlignVCenter, text)

    def drawForeground(self, painter: QPainter, rect: QRectF) -> None:
        """Tier names and each tier's oversubscription, pinned at the left of the view."""
        layout = self.layout_model
        if layout is None:
            return
        painter.save()
        painter.resetTransform()
        if not layout.blocks:
            painter.setFont(_font())
            painter.setPen(style.MUTED)
            painter.drawText(QRectF(self.viewport().rect()), Qt.AlignCenter | Qt.TextWordWrap,
                             "No servers or switches yet: add them from Parts, or Tools > Generate Fat-Tree")
            painter.restore()
            return
        title, body = _font(style.FONT_PT, bold=True), _font(style.FONT_PT - 1)
        th, bh = QFontMetricsF(title).height(), QFontMetricsF(body).height()
        painter.fillRect(QRectF(0, 0, LEFT_PX - 6, self.viewport().height()), QColor(251, 251, 252, 235))
        to_view = self.viewportTransform()
        for k, tier in enumerate(layout.tiers):
            blocks = [b for b in layout.blocks if b.tier == tier]
            top = to_view.map(QPointF(0, layout.tier_y[tier])).y()
            bottom = to_view.map(QPointF(0, layout.tier_y[tier] + blocks[0].height)).y()
            middle = (top + bottom) / 2
            painter.setFont(title)
            painter.setPen(style.TEXT)
            self._left_text(painter, middle - th, th, PLURAL[tier].capitalize())
            painter.setFont(body)
            painter.setPen(style.MUTED)
            self._left_text(painter, middle, bh, _tier_summary(tier, blocks, layout.aggregated.get(tier, False)))
            ratio = layout.ratios.get(tier)
            if ratio is not None and k > 0:  # in the gap above the row: this tier's down:up
                above = layout.tiers[k - 1]
                gap_top = to_view.map(QPointF(0, layout.tier_y[above] + _row_height(layout, above))).y()
                gap = (gap_top + top) / 2
                over = ratio.ratio is None or ratio.ratio > 1.001
                painter.setFont(_font(style.FONT_PT, bold=True))
                painter.setPen(style.RATIO_OVER if over else style.RATIO_OK)
                self._left_text(painter, gap - th, th, ratio.label)
                painter.setFont(body)
                painter.setPen(style.MUTED)
                self._left_text(painter, gap, bh, f"{format_gbps(ratio.down_gbps)} down, "
                                                  f"{format_gbps(ratio.up_gbps)} up")
            if k > 0 and self.bundle_layer is not None:
                above = layout.tiers[k - 1]
                each = self.bundle_layer.gap_label.get((above, tier))
                if each is not None:
                    gap_top = to_view.map(QPointF(0, layout.tier_y[above] + _row_height(layout, above))).y()
                    gap = (gap_top + top) / 2 + (bh if ratio is not None else -bh / 2)
                    painter.setFont(body)
                    painter.setPen(style.TEXT)
                    self._left_text(painter, gap, bh, f"each {each}")
        if self.bundle_layer is not None and self.bundle_layer.heat is not None:  # which heat the lines show
            painter.setFont(_font(style.FONT_PT - 1, bold=True))
            painter.setPen(style.TEXT)
            self._left_text(painter, 4, bh, link_heat.CAPTION[self.heat_mode].capitalize())
        painter.restore()

    # ---- selection ----
    def show_selection(self, ids) -> None:
        """Highlight the blocks and bundles holding any of these elements (the shared selection)."""
        self.selected_ids = list(ids)
        layout = self.layout_model
        if layout is None:
            return
        chosen = layout.blocks_for(self.selected_ids)
        rest = [i for i in self.selected_ids if i not in layout.block_of and i not in layout.blocks_of_rack]
        for item in self.block_items:
            if item.selected != (item.index in chosen):
                item.selected = item.index in chosen
                item.update()
        if self.bundle_layer is not None:
            self.bundle_layer.selected = layout.bundles_for(rest) if rest else set()
            self.bundle_layer.update()

    def selected_blocks(self) -> list[int]:
        return [item.index for item in self.block_items if item.selected]

    def selected_bundles(self) -> list[int]:
        return sorted(self.bundle_layer.selected) if self.bundle_layer is not None else []

    def ids_at(self, view_pos) -> list[str] | None:
        """The elements under a point of the view: a block's members, a bundle's links; None: nothing."""
        scene_pos = self.mapToScene(view_pos)
        for item in self.items(view_pos):
            if isinstance(item, BlockItem):
                return list(item.block.members)
        if self.bundle_layer is not None:
            k = self.bundle_layer.nearest(scene_pos, self.viewportTransform())
            if k is not None:
                return self.layout_model.bundle_link_ids(self.layout_model.bundles[k])
        return None

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.LeftButton and self.layout_model is not None:
            ids = self.ids_at(event.position().toPoint())
            add = bool(event.modifiers() & (Qt.ControlModifier | Qt.ShiftModifier))
            if ids is not None or not add:
                picked = (self.selected_ids + [i for i in ids if i not in set(self.selected_ids)]
                          if add and ids else ids or [])
                self.selectIds.emit(picked)
        super().mousePressEvent(event)

    def mouseDoubleClickEvent(self, event) -> None:
        ids = self.ids_at(event.position().toPoint()) if event.button() == Qt.LeftButton else None
        if ids:
            self.showRequested.emit(ids[0])
            event.accept()
            return
        super().mouseDoubleClickEvent(event)

    def keyPressEvent(self, event) -> None:
        if event.key() in (Qt.Key_Delete, Qt.Key_Backspace):
            self.deleteRequested.emit()
            event.accept()
            return
        if event.key() == Qt.Key_F:
            self.fit()
            return
        super().keyPressEvent(event)

    def viewportEvent(self, event) -> bool:
        if event.type() == QEvent.ToolTip and self.bundle_layer is not None and self.layout_model is not None:
            pos = event.pos()
            if not any(isinstance(i, BlockItem) for i in self.items(pos)):
                k = self.bundle_layer.nearest(self.mapToScene(pos), self.viewportTransform())
                if k is not None:
                    tip = _bundle_tip(self.layout_model, k)
                    layer = self.bundle_layer
                    if layer.heat is not None and layer.busiest[k] >= 0 and self.heat_result is not None:
                        tip += "<br>busiest cable: " + link_heat.describe(self.heat_result, self.heat_mode,
                                                                          int(layer.busiest[k]))
                    QToolTip.showText(event.globalPos(), tip, self.viewport())
                    return True
        return super().viewportEvent(event)


def _row_height(layout: LogicalLayout, tier: str) -> float:
    return next(b.height for b in layout.blocks if b.tier == tier)


def _tier_summary(tier: str, blocks, aggregated: bool) -> str:
    members = sum(len(b.members) for b in blocks)
    if tier == "compute":
        gpus = sum(b.gpus for b in blocks)
        text = f"{gpus:,} GPUs"
    else:
        text = f"{members:,} switch{'es' if members != 1 else ''}"
    if aggregated:
        text += " in one block" if len(blocks) == 1 else f" in {len(blocks)} groups"
    return text


def _bundle_tip(layout: LogicalLayout, k: int) -> str:
    bundle = layout.bundles[k]
    up, low = layout.blocks[bundle.upper], layout.blocks[bundle.lower]
    links = len(bundle.link_rows)
    return (f"<b>{bundle.label}</b><br>{up.label} - {low.label}<br>{bundle.kind}, {links:,} link"
            f"{'s' if links != 1 else ''} in the design; click selects them")
