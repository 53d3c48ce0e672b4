"""The window on the screen whole: its asked size clamped to the screen's available geometry (the
desktop less its panels and docks), so that the status bar at its bottom is never off screen.

Before it shows, a window's frame (the window manager's title bar and borders) is unknown: the size
is clamped to the available geometry first, then, once shown, the frame's own extra is taken off
and the window moved inside (`fit_shown`).
"""
from __future__ import annotations

from PySide6.QtCore import QRect, QSize


def clamped_size(wanted: QSize, available: QRect, frame_extra: QSize = QSize(0, 0)) -> QSize:
    """The largest size up to `wanted` whose frame (the size plus `frame_extra`) fits `available`."""
    return QSize(max(1, min(wanted.width(), available.width() - frame_extra.width())),
                 max(1, min(wanted.height(), available.height() - frame_extra.height())))


def _available(window) -> QRect | None:
    screen = window.screen()
    return screen.availableGeometry() if screen is not None else None


def resize_within_screen(window, width: int, height: int) -> None:
    """`window.resize(width, height)`, clamped to its screen's available geometry."""
    available = _available(window)
    size = QSize(width, height)
    window.resize(size if available is None else clamped_size(size, available))


def fit_shown(window) -> None:
    """A shown window whose frame reaches out of the available geometry: smaller by the frame's
    extra, and moved inside."""
    available = _available(window)
    if available is None or window.isMaximized() or window.isFullScreen():
        return
    frame, inner = window.frameGeometry(), window.geometry()
    extra = QSize(frame.width() - inner.width(), frame.height() - inner.height())
    size = clamped_size(inner.size(), available, extra)
    if size != inner.size():
        window.resize(size)
    frame = window.frameGeometry()
    x = min(max(frame.left(), available.left()), available.right() + 1 - frame.width())
    y = min(max(frame.top(), available.top()), available.bottom() + 1 - frame.height())
    if (x, y) != (frame.left(), frame.top()):
        window.move(max(x, available.left()), max(y, available.top()))
