"""Work that waits for a widget's next paint: a change too big for one frame shows in parts, each part
painted in a turn of the event loop of its own before the next is made.

A zero-length timer is not enough: Qt paints a window at its next update request, a few ms after the
change asked for it, and a zero-length timer started by the change fires before that."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QTimer

LATEST_MS = 250  # the part waits at most this long (a widget of no size is never painted)


class NextPaint(QObject):
    """`then(callback)`: the callback at the turn of the event loop after `widget`'s next paint, or at
    the next turn when the widget cannot be seen (no paint is coming). One callback waits at a time: a
    newer one replaces it."""

    def __init__(self, widget):
        super().__init__(widget)
        self._widget = widget
        self._callback = None
        self._watching = False
        self._due = QTimer(self, singleShot=True, timeout=self._run)

    @property
    def pending(self) -> bool:
        return self._callback is not None

    def then(self, callback) -> None:
        self._callback = callback
        if self._widget.isVisible():
            self._watch(True)
            self._due.start(LATEST_MS)
        else:
            self._watch(False)
            self._due.start(0)

    def cancel(self) -> None:
        """The waiting callback is not called."""
        self._watch(False)
        self._callback = None
        self._due.stop()

    def _watch(self, on: bool) -> None:
        if on != self._watching:
            (self._widget.installEventFilter if on else self._widget.removeEventFilter)(self)
            self._watching = on

    def eventFilter(self, watched, event) -> bool:
        # a paint (the filter sees it before the widget paints: the callback a turn later), or a hide
        # (no paint is coming)
        if event.type() in (QEvent.Paint, QEvent.Hide):
            self._watch(False)
            self._due.start(0)
        return False

    def _run(self) -> None:
        callback = self._callback
        self.cancel()
        if callback is not None:
            callback()
