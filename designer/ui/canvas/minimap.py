"""The overview: the whole design in miniature, the visible part framed; click or drag to go there.

The picture is rendered once per edit (debounced) at overview detail, so panning a 16k-GPU
canvas only redraws a small image and a rectangle.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QImage, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem, QWidget

from . import style
from .links import DENSE_LINES

# Above this many racks, servers and switches the overview draws racks and rack-to-rack lines itself:
# scene.render of 26k boxes (131k GPUs) costs 0.2-0.7 s on the window's thread, the outline ~0.1 s.
OUTLINE_ITEMS = 10_000
# Around a changed line, the pixels redrawn: its pen's width and antialiased edge
CHANGE_PAD_PX = 6


class Minimap(QWidget):
    def __init__(self, view, qdoc, parent=None):
        super().__init__(parent)
        self.view = view
        self.image: QImage | None = None
        self.source = QRectF()
        self.setMinimumSize(160, 110)
        self.setCursor(Qt.PointingHandCursor)
        self.setToolTip("Overview: click or drag to move the view")
        self._timer = QTimer(self, singleShot=True, interval=400, timeout=self.render_overview)
        qdoc.changed.connect(self._on_changed)
        qdoc.replaced.connect(lambda: self._timer.start(50))
        # a staged build's last items: drawn at once, before the engine's thread starts on the design
        # (the window's check timer, started after this one: sharing the GIL with it, 50 ms became 0.45 s)
        view.scene().built.connect(lambda: self._timer.start(0))
        self._drawn: _Drawn | None = None  # what a big design's picture shows, to redraw only what changes
        self.heat_drawn = None  # the link heat (the link layer's per-bundle buckets) the picture shows
        view.scene().heatChanged.connect(self._on_heat)
        view.horizontalScrollBar().valueChanged.connect(self.update)
        view.verticalScrollBar().valueChanged.connect(self.update)
        view.zoomChanged.connect(lambda _s: self.update())

    def _on_changed(self, changes) -> None:
        # A cable's speed, latency or note does not show at overview detail: no 100 ms-plus redraw of a
        # 16k-GPU design on every such edit (its kind, colour, does)
        # nor does the job's model or plan (a TP edit redrew 131k GPUs' overview: 0.1-0.15 s stalls)
        if any(c.collection not in ("links", "workload", "parallelism")
               or (c.collection == "links" and (c.action != "changed" or c.field in ("kind", "a", "b", "id")))
               for c in changes):
            self._timer.start()

    def _on_heat(self) -> None:
        # the rack-to-rack lines coloured by the heat shown, as on the canvas; a heat cleared that was
        # never drawn (a result that failed its check, heat off) costs no redraw
        if self.view.scene().link_layer.heat is not self.heat_drawn:
            self._timer.start()

    def sizeHint(self) -> QSize:
        return QSize(260, 170)

    def render_overview(self) -> None:
        scene = self.view.scene()
        if scene.build.running:
            return  # its items are still coming: drawn once they are all there (scene.built)
        self.source = scene.layout_rect().adjusted(-20, -20, 20, 20)  # the design itself, not the margin
        if self.source.isEmpty() or self.width() < 10:
            self.image = self._drawn = None
            self.update()
            return
        size = self.size() * self.devicePixelRatioF()
        layer = scene.link_layer
        saved = layer.show_individual
        if scene.cables.aggregates_stale:
            scene.cables.rebuild_aggregates()
        self.heat_drawn = layer.heat
        scale, offset = self._transform()
        ratio = self.devicePixelRatioF()
        target = QRectF(offset.x() * ratio, offset.y() * ratio, self.source.width() * scale * ratio,
                        self.source.height() * scale * ratio)  # the same placement the frame uses
        outline = len(scene.racks) + len(scene.devices) > OUTLINE_ITEMS
        if outline:
            drawn = _Drawn(QRectF(self.source), size, ratio, list(scene.rack_rects.rects()), overview_marks(layer))
            if self.image is not None and self._drawn is not None and self._drawn.same_frame(drawn):
                self._redraw_where_changed(scene, target, drawn)
                return
            self._drawn = drawn
        else:
            self._drawn = None
        image = QImage(size, QImage.Format_ARGB32_Premultiplied)
        image.fill(style.BACKGROUND)
        layer.show_individual = False  # overview detail, whatever the main view shows
        painter = QPainter(image)
        painter.setRenderHint(QPainter.Antialiasing)
        if outline:
            self._render_outline(painter, scene, target, self.source)
        else:
            # the lines drawn now, not from the cache the canvas keeps of them far out (scene_detail.py): Qt
            # marks a changed item's cache stale once for every view, and the canvas's repaint after a heat
            # or kind change clears that mark before this picture is drawn
            cache = layer.cacheMode()
            layer.setCacheMode(QGraphicsItem.NoCache)
            scene.render(painter, target, self.source, Qt.IgnoreAspectRatio)
            layer.setCacheMode(cache)
        painter.end()
        layer.show_individual = saved
        self.image = image
        self.update()

    def _render_outline(self, painter: QPainter, scene, target: QRectF, part: QRectF) -> None:
        """A big design at overview detail without its 26k boxes (0.3-0.4 s of scene.render at 131k GPUs,
        each a pixel or less here): rack fills and outlines, and the rack-to-rack lines that meet `part`
        (of the scene), drawn as in the whole picture."""
        source = self.source
        painter.save()
        painter.translate(target.left(), target.top())
        painter.scale(target.width() / source.width(), target.height() / source.height())
        painter.translate(-source.left(), -source.top())
        scene.draw_rack_fills(painter, part)
        painter.setPen(style.edge_pen(style.RACK_EDGE))
        painter.setBrush(Qt.NoBrush)
        painter.drawRects(scene.rack_rects.meeting(part))  # kept until racks change
        layer = scene.link_layer
        whole = len(layer.visible_rows(source, layer.aggregates)) > DENSE_LINES
        layer.paint_rect(painter, part, dense=whole)
        painter.restore()

    def _redraw_where_changed(self, scene, target: QRectF, drawn: "_Drawn") -> None:
        """The picture kept, redrawn only where a rack-to-rack line changed (a cable deleted or
        restored, a bundle's heat): an edit costs in proportion to what it changed, not the design."""
        before, after = self._drawn.marks, drawn.marks
        if len(before) == len(after):
            changed = np.flatnonzero((before != after).any(axis=1))
            boxes = np.concatenate([before[changed, :4], after[changed, :4]])
        else:  # a rack-to-rack line came or went: the lines that are not in both
            old = {tuple(row) for row in before.tolist()}
            new = {tuple(row) for row in after.tolist()}
            boxes = np.array([row[:4] for row in old ^ new], float).reshape(-1, 4)
        self._drawn = drawn
        if not len(boxes):
            return
        scale_x = target.width() / self.source.width()
        scale_y = target.height() / self.source.height()
        pixels = np.column_stack([(np.minimum(boxes[:, 0], boxes[:, 2]) - self.source.left()) * scale_x,
                                  (np.minimum(boxes[:, 1], boxes[:, 3]) - self.source.top()) * scale_y,
                                  (np.maximum(boxes[:, 0], boxes[:, 2]) - self.source.left()) * scale_x,
                                  (np.maximum(boxes[:, 1], boxes[:, 3]) - self.source.top()) * scale_y])
        pixels[:, :2] += (target.left() - CHANGE_PAD_PX, target.top() - CHANGE_PAD_PX)
        pixels[:, 2:] += (target.left() + CHANGE_PAD_PX, target.top() + CHANGE_PAD_PX)
        left, top = np.floor(pixels[:, :2].min(axis=0))
        right, bottom = np.ceil(pixels[:, 2:].max(axis=0))
        clip = QRectF(left, top, right - left, bottom - top).intersected(QRectF(self.image.rect()))
        if clip.isEmpty():
            return
        part = QRectF((clip.left() - target.left()) / scale_x + self.source.left(),
                      (clip.top() - target.top()) / scale_y + self.source.top(),
                      clip.width() / scale_x, clip.height() / scale_y)
        layer = scene.link_layer
        saved = layer.show_individual
        layer.show_individual = False
        painter = QPainter(self.image)
        painter.setRenderHint(QPainter.Antialiasing)
        painter.setClipRect(clip)
        painter.fillRect(clip, style.BACKGROUND)
        self._render_outline(painter, scene, target, part)
        painter.end()
        layer.show_individual = saved
        self.update()

    def resizeEvent(self, event) -> None:
        self._timer.start(100)
        super().resizeEvent(event)

    def _transform(self):
        """(scale, offset) mapping scene coordinates into the widget, keeping the aspect ratio."""
        if self.source.isEmpty():
            return 1.0, QPointF()
        scale = min(self.width() / self.source.width(), self.height() / self.source.height())
        used_w, used_h = self.source.width() * scale, self.source.height() * scale
        offset = QPointF((self.width() - used_w) / 2, (self.height() - used_h) / 2)
        return scale, offset

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), style.BACKGROUND)
        if self.image is not None:
            if self.image.size() != self.size() * self.devicePixelRatioF():
                self._timer.start(50)  # resized since it was drawn
            painter.drawImage(QRectF(self.rect()), self.image)
        if not self.source.isEmpty():
            scale, offset = self._transform()
            shown = self.view.mapToScene(self.view.viewport().rect()).boundingRect()
            r = QRectF((shown.left() - self.source.left()) * scale + offset.x(),
                       (shown.top() - self.source.top()) * scale + offset.y(),
                       shown.width() * scale, shown.height() * scale)
            painter.setPen(QPen(style.SELECTION, 1.5))
            painter.setBrush(QColor(37, 99, 235, 30))
            painter.drawRect(r.intersected(QRectF(self.rect()).adjusted(1, 1, -1, -1)))
        painter.setPen(QPen(style.GRID))
        painter.setBrush(Qt.NoBrush)
        painter.drawRect(self.rect().adjusted(0, 0, -1, -1))
        painter.end()

    def _go(self, pos) -> None:
        if self.source.isEmpty():
            return
        scale, offset = self._transform()
        self.view.centerOn(QPointF((pos.x() - offset.x()) / scale + self.source.left(),
                                   (pos.y() - offset.y()) / scale + self.source.top()))
        self.update()

    def mousePressEvent(self, event) -> None:
        self._go(event.position())

    def mouseMoveEvent(self, event) -> None:
        if event.buttons() & Qt.LeftButton:
            self._go(event.position())


class _Drawn:
    """What a picture of a big design shows: where (the scene part, the image's size), the racks and
    each rack-to-rack line as drawn (overview_marks)."""

    def __init__(self, source: QRectF, size: QSize, ratio: float, racks: list, marks: np.ndarray):
        self.source, self.size, self.ratio, self.racks, self.marks = source, size, ratio, racks, marks

    def same_frame(self, other: "_Drawn") -> bool:
        """The same placement and racks: only lines may differ."""
        return (self.source == other.source and self.size == other.size and self.ratio == other.ratio
                and self.racks == other.racks)


def overview_marks(layer) -> np.ndarray:
    """What the overview detail draws of each rack-to-rack line, one row each: its ends, heat
    bucket (-2: no heat shown), its pen's kind and speed, its own kind and speed, and whether it
    is selected. Two pictures whose rows are equal look the same; the rows that differ say where
    they differ (the redraw after an edit)."""
    lines = layer.aggregates
    n = len(lines.a)
    marks = np.zeros((n, 9), float)
    marks[:, 0:2], marks[:, 2:4] = lines.a, lines.b
    shown = layer.shown_aggregate_pens()
    heat, pen_rows = shown if shown is not None else (None, np.arange(n))
    marks[:, 4] = heat if heat is not None else -2
    marks[:, 5], marks[:, 6] = lines.kind[pen_rows], lines.gbps[pen_rows]
    marks[:, 7], marks[:, 8] = lines.kind, lines.gbps
    selected = layer.selected_aggregates()
    if selected:
        marks[sorted(selected), 4] += 100  # drawn again on top, in the selection's pen
    return marks
