"""The window's docks where the user left them: sizes, places, tabs and which are open, saved when
the window closes (QMainWindow.saveState into the window's QSettings) and restored when it opens.

Without a saved layout (the first run, or a layout of another version) the window starts with
one that fits the work at 1600x1000: the bottom docks tall enough for the Advisor's table to
show several rows, the Inspector wide enough for a part's name ("A100-SXM4-80GB").

`designer-gui --screenshot` neither restores nor saves (MainWindow(remember_layout=False)): its
picture is a first run's. Restored once the window is shown and its tabs are made (advisor.tabify_behind calls
`LayoutMemory.restore_or_first`): a dock state applied earlier would be undone by that tabify. The first
layout is kept then, for View > Reset Layout.
"""
from __future__ import annotations

from PySide6.QtCore import QByteArray, Qt

LAYOUT_KEY = "window/docks"
LAYOUT_VERSION = 1  # bump when the docks change so much that an old layout would mislead
BOTTOM_SHARE = 0.36  # of the window's height for the Breakdown | Timeline/Advisor row
BOTTOM_MIN_PX = 300
INSPECTOR_PX = 310  # a label column and a field that holds "A100-SXM4-80GB" whole


def save_layout(window) -> None:
    if not window.remember_layout:  # a screenshot run leaves the user's layout alone
        return
    window.settings.setValue(LAYOUT_KEY, window.saveState(LAYOUT_VERSION))


def restore_layout(window) -> bool:
    """True when a saved layout of this version was applied."""
    if not window.remember_layout:
        return False
    state = window.settings.value(LAYOUT_KEY)
    if not isinstance(state, (QByteArray, bytes)) or not state:
        return False
    return bool(window.restoreState(QByteArray(state), LAYOUT_VERSION))


def first_layout(window) -> None:
    """The layout of a first run, for the window's size now."""
    bottom = max(BOTTOM_MIN_PX, round(window.height() * BOTTOM_SHARE))
    window.resizeDocks([window.breakdown_dock], [bottom], Qt.Vertical)
    window.resizeDocks([window.inspector_dock], [INSPECTOR_PX], Qt.Horizontal)


class LayoutMemory:
    """The window's dock layouts: the one a first run gets (kept when the window is first laid out,
    before the user's is restored) and View > Reset Layout, which brings it back."""

    def __init__(self, window):
        self.window = window
        self.first_state = None

    def restore_or_first(self) -> None:
        """Once shown and tabbed: keep the first layout, then apply the user's saved one if any."""
        first_layout(self.window)
        self.first_state = self.window.saveState(LAYOUT_VERSION)
        restore_layout(self.window)

    def reset(self) -> None:
        """View > Reset Layout: every dock back where a first run puts it, at the window's size now."""
        w = self.window
        if self.first_state is not None:
            w.restoreState(self.first_state, LAYOUT_VERSION)
        first_layout(w)
        w.tell("layout reset: the docks as a first run places them")
