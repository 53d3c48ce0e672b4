"""The canvas view: zoom to the cursor, pan, fit, grid, rubber-band selection, drops from
the palette and the tool that owns the mouse while it is on (the link tool, canvas/link_tool.py)."""
from __future__ import annotations

import math

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QPainter, QPen
from PySide6.QtWidgets import QGraphicsView

from . import style

MIME_PART = "application/x-designer-part"
ZOOM_MIN, ZOOM_MAX = 0.005, 12.0


EMPTY_HINT = ("An empty design. Drag a rack, server or switch from Parts onto the canvas, or start from "
              "File > Open Example or Tools > Generate Fat-Tree (Ctrl+G).")


class CanvasView(QGraphicsView):
    zoomChanged = Signal(float)
    partDropped = Signal(str, QPointF)  # part description, scene position
    linkRequested = Signal(str, str, str)  # device a, device b, kind

    def __init__(self, scene, parent=None):
        super().__init__(scene, parent)
        self.setRenderHint(QPainter.Antialiasing, True)
        self.setViewportUpdateMode(QGraphicsView.SmartViewportUpdate)
        self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.AnchorViewCenter)
        self.setDragMode(QGraphicsView.RubberBandDrag)
        self.setRubberBandSelectionMode(Qt.IntersectsItemShape)
        self.setOptimizationFlags(QGraphicsView.DontSavePainterState)
        self.setCacheMode(QGraphicsView.CacheBackground)
        self.setAcceptDrops(True)
        self.show_grid = True
        # A tool that owns the mouse while it is on (the link tool); it gets events first.
        self.interaction = None
        self._pan_from: QPointF | None = None
        self._drag_mode_before_space = None
        scene.aboutToRebuild.connect(self.cancel_interaction)  # its items are about to go
        self._band_rect = None  # the rubber band's last rectangle, for a far-out selection
        self.rubberBandChanged.connect(self._rubber_band_changed)
        from .legend import CanvasLegend

        self.legend = CanvasLegend(self)  # what the colours mean (heat: View > Link Heat)
        self._lod_timer = QTimer(self, singleShot=True, interval=150, timeout=self._scrolled)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.legend.place()

    def set_heat(self, on: bool) -> None:
        """Link heat on or off in the legend (the scene colours the cables: scene.heat.show)."""
        self.legend.set_heat(on)

    # ---- interactions (tools) ----
    def set_interaction(self, interaction) -> None:
        """Hand the mouse to `interaction` (ending the one before) and start it."""
        self.cancel_interaction()
        self.interaction = interaction
        interaction.ended.connect(lambda _cancelled, i=interaction: self._interaction_ended(i))
        interaction.start()

    def cancel_interaction(self) -> None:
        if self.interaction is not None:
            self.interaction.cancel()

    def _interaction_ended(self, interaction) -> None:
        if self.interaction is interaction:
            self.interaction = None

    @property
    def link_kind(self) -> str | None:
        """The kind of cable the link tool draws, or None when it is off."""
        return getattr(self.interaction, "kind", None)

    # ---- zoom ----
    def scale_factor(self) -> float:
        return self.transform().m11()

    def zoom_by(self, factor: float, anchor: QPointF | None = None) -> None:
        current = self.scale_factor()
        factor = max(ZOOM_MIN / current, min(ZOOM_MAX / current, factor))
        if anchor is not None:
            old = self.mapToScene(anchor.toPoint())
        self.scale(factor, factor)
        if anchor is not None:
            new = self.mapToScene(anchor.toPoint())
            delta = new - old
            self.translate(delta.x(), delta.y())
        self._zoomed()

    def fit(self) -> None:
        scene = self.scene()
        rect = scene.layout_rect()
        if rect.isEmpty():
            rect = QRectF(0, 0, 800, 500)
        self.fitInView(rect.adjusted(-40, -40, 40, 40), Qt.KeepAspectRatio)
        self._zoomed()

    def zoom_to(self, scale: float | None, item=None) -> None:
        """The canvas at `scale` (None: fit all), centred on `item` or on the layout (a screenshot's
        --zoom and --center)."""
        self.fit()
        if scale is not None:
            self.zoom_by(scale / self.scale_factor())
        self.centerOn(item.sceneBoundingRect().center() if item is not None
                      else self.scene().layout_rect().center())
        self._zoomed()

    def center_on_item(self, item) -> None:
        rect = item.sceneBoundingRect()
        if self.scale_factor() < 0.6:
            self.fitInView(rect.adjusted(-300, -200, 300, 200), Qt.KeepAspectRatio)
        self.centerOn(rect.center())
        self._zoomed()

    def visible_fraction(self) -> float:
        layout = self.scene().layout_rect() if not getattr(self, "_layout_rect", None) else self._layout_rect
        shown = self.mapToScene(self.viewport().rect()).boundingRect().intersected(layout)
        area = layout.width() * layout.height()
        return (shown.width() * shown.height() / area) if area > 0 else 1.0

    def visible_rect(self) -> QRectF:
        return self.mapToScene(self.viewport().rect()).boundingRect()

    def scrollContentsBy(self, dx: int, dy: int) -> None:
        super().scrollContentsBy(dx, dy)
        timer = getattr(self, "_lod_timer", None)  # (scrolled while it is made)
        if timer is not None and not timer.isActive():
            timer.start()  # cables or bundles by the density of the place scrolled to, once settled

    def _scrolled(self) -> None:
        scene = self.scene()
        if scene is not None:
            scene.detail.apply(self.scale_factor(), self.visible_fraction(), self.visible_rect())

    def _zoomed(self) -> None:
        self._layout_rect = self.scene().layout_rect()
        self.scene().detail.apply(self.scale_factor(), self.visible_fraction(), self.visible_rect())
        self.resetCachedContent()
        self.zoomChanged.emit(self.scale_factor())

    def wheelEvent(self, event) -> None:
        steps = event.angleDelta().y() / 120.0
        if steps:
            self.zoom_by(math.pow(1.18, steps), event.position())
        event.accept()

    # ---- an empty design ----
    def empty_hint(self) -> str | None:
        """What the empty canvas says (File > New): how to start; None while the design has anything."""
        scene = self.scene()
        if scene is None or scene.racks or scene.devices:
            return None
        return EMPTY_HINT

    def drawForeground(self, painter, rect) -> None:
        super().drawForeground(painter, rect)
        text = self.empty_hint()
        if text is None:
            return
        painter.save()
        painter.resetTransform()  # in the viewport's pixels, centred, at any zoom
        box = self.viewport().rect().adjusted(40, 40, -40, -40)
        painter.setPen(style.MUTED)
        painter.drawText(box, Qt.AlignCenter | Qt.TextWordWrap, text)
        painter.restore()

    # ---- grid ----
    def drawBackground(self, painter, rect) -> None:
        painter.fillRect(rect, style.BACKGROUND)
        self._draw_grid(painter, rect)
        self.scene().draw_rack_fills(painter, rect)

    def _draw_grid(self, painter, rect) -> None:
        if not self.show_grid or self.scale_factor() < style.LOD_GRID:
            return
        grid = style.GRID_PX * (4 if self.scale_factor() < 1 else 1)
        left = math.floor(rect.left() / grid) * grid
        top = math.floor(rect.top() / grid) * grid
        pen = QPen(style.GRID)
        pen.setCosmetic(True)
        painter.setPen(pen)
        lines = []
        x = left
        while x < rect.right():
            lines.append(QLineF(x, rect.top(), x, rect.bottom()))
            x += grid
        y = top
        while y < rect.bottom():
            lines.append(QLineF(rect.left(), y, rect.right(), y))
            y += grid
        painter.drawLines(lines)

    def set_grid(self, on: bool) -> None:
        self.show_grid = on
        self.resetCachedContent()
        self.viewport().update()

    def _rubber_band_changed(self, rect, start, end) -> None:
        """Zoomed far out the racks are transparent (canvas/box_layer.py) and Qt's own rubber band finds
        none of them: on release, what the band covered is selected as Qt would have."""
        if not rect.isNull():  # (the signal's scene points lag a move behind its rectangle)
            self._band_rect = self.mapToScene(rect).boundingRect()
            return
        band, self._band_rect = self._band_rect, None
        scene = self.scene()
        if band is not None and scene.detail.far:
            from PySide6.QtWidgets import QApplication

            scene.gestures.select_in_rect(band, add=bool(QApplication.keyboardModifiers() & Qt.ControlModifier))

    # ---- pan with the middle button or space-drag; tools ----
    def _tool_wants(self, event) -> bool:
        """Whether the active tool takes this event (not while space-panning)."""
        return self.interaction is not None and self.dragMode() != QGraphicsView.ScrollHandDrag

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.MiddleButton:
            self._pan_from = event.position()
            self.viewport().setCursor(Qt.ClosedHandCursor)
            event.accept()
            return
        if self._tool_wants(event) and self.interaction.mousePressEvent(event):
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:
        if self._pan_from is not None:
            delta = event.position() - self._pan_from
            self._pan_from = event.position()
            self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() - int(delta.x()))
            self.verticalScrollBar().setValue(self.verticalScrollBar().value() - int(delta.y()))
            event.accept()
            return
        if self._tool_wants(event) and self.interaction.mouseMoveEvent(event):
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        if self._pan_from is not None and event.button() == Qt.MiddleButton:
            self._pan_from = None
            if self.interaction is not None:
                self.viewport().setCursor(Qt.CrossCursor)
            else:
                self.viewport().unsetCursor()
            event.accept()
            return
        if self._tool_wants(event) and self.interaction.mouseReleaseEvent(event):
            return
        super().mouseReleaseEvent(event)

    def keyPressEvent(self, event) -> None:
        if self.interaction is not None and self.interaction.keyPressEvent(event):
            return
        if event.key() == Qt.Key_Space and not event.isAutoRepeat() and self._drag_mode_before_space is None:
            self._drag_mode_before_space = self.dragMode()
            self.setDragMode(QGraphicsView.ScrollHandDrag)
        super().keyPressEvent(event)

    def keyReleaseEvent(self, event) -> None:
        if event.key() == Qt.Key_Space and not event.isAutoRepeat() and self._drag_mode_before_space is not None:
            # back to what it was: NoDrag under a tool, rubber-band selection otherwise
            mode, self._drag_mode_before_space = self._drag_mode_before_space, None
            self.setDragMode(mode)
        super().keyReleaseEvent(event)

    # ---- drops from the palette ----
    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasFormat(MIME_PART):
            event.acceptProposedAction()
        else:
            super().dragEnterEvent(event)

    def dragMoveEvent(self, event) -> None:
        if event.mimeData().hasFormat(MIME_PART):
            event.acceptProposedAction()
        else:
            super().dragMoveEvent(event)

    def dropEvent(self, event) -> None:
        if event.mimeData().hasFormat(MIME_PART):
            part = bytes(event.mimeData().data(MIME_PART)).decode()
            self.partDropped.emit(part, self.mapToScene(event.position().toPoint()))
            event.acceptProposedAction()
        else:
            super().dropEvent(event)
