"""The link tool: draw a cable by pressing on one device and releasing on another.

One object owns everything the tool changes while it is on, as orange-canvas-core's
`UserInteraction` does: the kind of cable, the view's drag mode and cursor, the palette
button's checked state and the rubber line of a cable being drawn. `start()` takes them over;
`cancel()` (Esc, another tool, a press on empty canvas, a new document) and `finish()` (its
button turned off) give every one of them back, once. A cable is requested only for a press
and a release on two devices while the tool is on, always with the tool's own kind.
"""
from __future__ import annotations

from PySide6.QtCore import QLineF, QObject, Qt, Signal
from PySide6.QtWidgets import QGraphicsLineItem, QGraphicsView

from ...core.model.elements import LINK_KINDS
from . import style
from .items import ID_ROLE


class LinkTool(QObject):
    ended = Signal(bool)  # True when cancelled (Esc, empty space, ...), False when finished

    def __init__(self, view, kind: str, button=None):
        super().__init__(view)
        if kind not in LINK_KINDS:
            raise ValueError(f"no link tool for kind {kind!r}: one of {', '.join(LINK_KINDS)}")
        self.view = view
        self.kind = kind
        self.button = button  # the palette's checkable button of this tool, if any
        self.active = False
        self._saved_drag_mode = None
        self._from: str | None = None
        self._line: QGraphicsLineItem | None = None

    # ---- life cycle -------------------------------------------------------------------
    def start(self) -> None:
        if self.active:
            return
        self.active = True
        self._saved_drag_mode = self.view.dragMode()
        self.view.setDragMode(QGraphicsView.NoDrag)  # a press draws a cable, not a selection band
        self.view.viewport().setCursor(Qt.CrossCursor)
        self._set_button(True)
        self.view.setFocus(Qt.OtherFocusReason)  # so that Esc reaches the canvas

    def cancel(self) -> None:
        """Stop without drawing the cable in progress; everything as before `start()`."""
        self._end(cancelled=True)

    def finish(self) -> None:
        """Stop (its button turned off); a cable half drawn is dropped."""
        self._end(cancelled=False)

    def drawing(self) -> bool:
        return self._line is not None

    def _end(self, cancelled: bool) -> None:
        if not self.active:
            return
        self.active = False
        self._drop_line()
        if self._saved_drag_mode is not None:
            self.view.setDragMode(self._saved_drag_mode)
        self.view.viewport().unsetCursor()
        self._set_button(False)
        self.ended.emit(cancelled)

    def _set_button(self, on: bool) -> None:
        if self.button is not None and self.button.isChecked() != on:
            self.button.blockSignals(True)  # the palette must not report back what we are doing
            self.button.setChecked(on)
            self.button.blockSignals(False)

    def _drop_line(self) -> None:
        line, self._line, self._from = self._line, None, None
        if line is not None and line.scene() is not None:
            line.scene().removeItem(line)

    # ---- events from the view (True: handled, the view does nothing more) ---------------
    def mousePressEvent(self, event) -> bool:
        if not self.active or event.button() != Qt.LeftButton:
            return False
        scene = self.view.scene()
        item = scene.gestures.item_at(self.view.mapToScene(event.position().toPoint()))
        if item is None:  # a press on empty canvas ends the tool, as Esc does
            self.cancel()
            event.accept()
            return True
        self._drop_line()
        self._from = item.data(ID_ROLE)
        start = item.sceneBoundingRect().center()
        self._line = QGraphicsLineItem(QLineF(start, start))
        self._line.setPen(style.link_pen(self.kind, 400))
        self._line.setZValue(10)
        scene.addItem(self._line)
        event.accept()
        return True

    def mouseMoveEvent(self, event) -> bool:
        if self._line is None:
            return False
        line = self._line.line()
        line.setP2(self.view.mapToScene(event.position().toPoint()))
        self._line.setLine(line)
        event.accept()
        return True

    def mouseReleaseEvent(self, event) -> bool:
        if self._line is None or event.button() != Qt.LeftButton:
            return False
        start = self._from
        self._drop_line()
        target = self.view.scene().gestures.item_at(self.view.mapToScene(event.position().toPoint()))
        if target is not None and start:
            self.view.linkRequested.emit(start, target.data(ID_ROLE), self.kind)
        event.accept()
        return True

    def keyPressEvent(self, event) -> bool:
        if event.key() == Qt.Key_Escape:
            self.cancel()
            event.accept()
            return True
        return False
