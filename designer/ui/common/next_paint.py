"""Work that waits for a widget's next paint: a change too big for one frame shows in parts, each part
painted in a turn of the event loop of its own before the next is made.

A zero-length timer is not enough: Qt paints a window at its next update request, a few ms after the
change asked for it, and a zero-length timer started by the change fires before that."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QTimer

LATEST_MS = 250  # the part waits at most this long (a widget of no size is never painted)


class NextPaint(QObject):
    """`then(callback)`: the callback at the turn of the event loop after `widget`'s next paint, at
    once when the widget cannot be seen (no paint is coming). One callback waits at a time: a newer
    one replaces it."""

    def __init__(self, widget):
        super().__init__(widget)
        self._widget = widget
        self._callback = None
        self._latest = QTimer(self, singleShot=True, interval=LATEST_MS, timeout=self._run)

    @property
    def pending(self) -> bool:
        return self._callback is not None

    def then(self, callback) -> None:
        if not self._widget.isVisible():
            self.cancel()
            callback()
            return
        if self._callback is None:
            self._widget.installEventFilter(self)
        self._callback = callback
        self._latest.start()

    def cancel(self) -> None:
        """The waiting callback is not called."""
        if self._callback is not None:
            self._widget.removeEventFilter(self)
        self._callback = None
        self._latest.stop()

    def eventFilter(self, watched, event) -> bool:
        kind = event.type()
        if kind == QEvent.Paint:  # (the filter sees it before the paint: the callback a turn later)
            self._widget.removeEventFilter(self)
            self._latest.start(0)
        elif kind == QEvent.Hide:  # no paint is coming
            self._run()
        return False

    def _run(self) -> None:
        callback = self._callback
        self.cancel()
        if callback is not None:
            callback()
