"""The list of the design's problems that the status bar opens: every message whole.

A QMenu sizes itself to its longest entry and runs off the window's edge; this popup wraps
each message in a list as wide as the window allows and scrolls when it is long. It is a child
of the window (an overlay, not a top-level popup), so it can never leave the window (nor the
screen the window is on). Clicking a problem shows its element on the canvas; Esc, a click
elsewhere or the status-bar button again closes it.
"""
from __future__ import annotations

from itertools import chain, compress, count
from operator import attrgetter, is_not, ne

from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView, QApplication, QFrame, QLabel, QListView, QListWidget, QListWidgetItem, QVBoxLayout,
)

from ...core.problems import count_text

MAX_WIDTH_PX = 760  # wider than this, a line of text is hard to read
MAX_HEIGHT_FRACTION = 0.6  # of the window
MARGIN_PX = 8
ELEMENT_ROLE = Qt.UserRole + 1
SEVERITY_COLORS = {"error": "#b91c1c", "warning": "#92400e"}


class ProblemsPopup(QFrame):
    jumpRequested = Signal(object)  # the element id of the clicked problem (or None)

    def __init__(self, window):
        super().__init__(window)
        self.setObjectName("problems-popup")
        self.setFrameShape(QFrame.StyledPanel)
        self.setAutoFillBackground(True)
        self.setStyleSheet("#problems-popup { background: palette(base); border: 1px solid #9ca3af; }")
        self.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(2)
        self.heading = QLabel()
        self.heading.setWordWrap(True)
        layout.addWidget(self.heading)
        self.list = QListWidget()
        self.list.setWordWrap(True)  # long messages wrap instead of being cut
        self.list.setTextElideMode(Qt.ElideNone)
        self.list.setResizeMode(QListView.Adjust)
        self.list.setUniformItemSizes(False)
        self.list.setVerticalScrollMode(QAbstractItemView.ScrollPerPixel)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.list.setSpacing(2)
        self.list.itemClicked.connect(self._clicked)
        self.list.itemActivated.connect(self._clicked)
        layout.addWidget(self.list)
        self._shown: list = []  # the problems the rows show, in order
        self._keys: list = []  # theirs: what matches a row to a problem of the next check

    def set_problems(self, problems) -> None:
        """The rows follow the list, matched by problem (its severity, element, message and job): only
        the rows of the problems that came or went are made or taken away, and a kept problem whose
        words changed (its place in the file, after an element before it went) is written again in its
        row. An edit that adds one problem to thousands adds one row; the row being read stays put."""
        problems = list(problems)
        self.heading.setText(f"<b>{count_text(problems)}</b>"
                             + (" — click one to show it on the canvas" if problems else ""))
        # the rows of the problems the check kept (the same objects: compared in C, not a Python loop over
        # thousands at 131k GPUs); then, between them, those of a problem made again with the same key
        shown, old_keys = self._shown, self._keys
        first, last = _span(shown, problems, is_not)
        last_before = len(shown) - (len(problems) - last)
        keys = list(map(_key, problems[first:last]))
        head, end = _span(old_keys[first:last_before], keys, ne)
        head, tail = first + head, len(problems) - (first + end)
        if head == tail == 0:
            self.list.clear()
        else:
            for _ in range(len(shown) - head - tail):
                self.list.takeItem(head)
        for row, p in enumerate(problems[head:len(problems) - tail], head):
            item = QListWidgetItem()
            _write(item, p)
            self.list.insertItem(row, item)
        end, end_before = len(problems) - tail, len(shown) - tail
        for row in chain(range(first, head), range(end, last)):  # made again: written again if it changed
            before = shown[row if row < head else row - end + end_before]
            if before != problems[row]:
                _write(self.list.item(row), problems[row])
        keys = old_keys[:first] + keys + old_keys[last_before:]
        self._shown, self._keys = problems, keys

    def texts(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def click(self, row: int) -> None:
        """What a click on the row does (tests, keyboard)."""
        self._clicked(self.list.item(row))

    def _clicked(self, item) -> None:
        if item is None:
            return
        self.hide()
        self.jumpRequested.emit(item.data(ELEMENT_ROLE))

    def popup_above(self, anchor) -> None:
        """Open above `anchor` (the status-bar button), inside the window; again: close."""
        if self.isVisible():
            self.hide()
            return
        self._anchor = anchor
        self.setGeometry(self.placement(anchor))
        self.show()
        self.raise_()
        self.list.setFocus()
        QApplication.instance().installEventFilter(self)

    def hideEvent(self, event) -> None:
        QApplication.instance().removeEventFilter(self)
        super().hideEvent(event)

    def eventFilter(self, watched, event) -> bool:
        kind = event.type()
        if kind == QEvent.KeyPress and event.key() == Qt.Key_Escape:
            self.hide()
            return True
        if kind == QEvent.MouseButtonPress and hasattr(watched, "mapToGlobal"):
            inside = self.rect().contains(self.mapFromGlobal(event.globalPosition().toPoint()))
            if not inside and watched is not getattr(self, "_anchor", None):
                self.hide()  # a click elsewhere closes it (the button's own click toggles it)
        return False

    def placement(self, anchor) -> QRect:
        """Its rectangle in the window's coordinates: above the anchor, right-aligned, inside the window."""
        window = self.parentWidget()
        bounds = window.rect().adjusted(MARGIN_PX, MARGIN_PX, -MARGIN_PX, -MARGIN_PX)
        width = max(240, min(MAX_WIDTH_PX, bounds.width()))
        # the wrapped height of every message at this width (the list's own hints come before its layout)
        text_width = width - 2 * MARGIN_PX - self.list.verticalScrollBar().sizeHint().width() - 8
        metrics = self.list.fontMetrics()
        rows = sum(metrics.boundingRect(QRect(0, 0, text_width, 100_000), Qt.TextWordWrap, text).height()
                   + 2 * self.list.spacing() + 4 for text in self.texts())
        chrome = self.heading.heightForWidth(width - 8) + 24
        height = max(80, min(int(bounds.height() * MAX_HEIGHT_FRACTION), rows + chrome))
        corner = anchor.mapTo(window, QPoint(anchor.width(), 0))  # right edge of the button, its top
        x = min(max(bounds.left(), corner.x() - width), bounds.right() - width + 1)
        y = min(max(bounds.top(), corner.y() - height), bounds.bottom() - height + 1)
        return QRect(x, y, width, height)

    def sizeHint(self) -> QSize:
        return QSize(MAX_WIDTH_PX, 300)


def _span(old: list, new: list, differ) -> tuple[int, int]:
    """(first, end): new[first:end] is where `new` differs from `old` (differ(a, b)), its head and tail
    the same as old's."""
    same = min(len(old), len(new))
    head = next(compress(count(), map(differ, old, new)), same)
    tail = min(next(compress(count(), map(differ, reversed(old), reversed(new))), same), same - head)
    return head, len(new) - tail


_key = attrgetter("severity", "element", "message", "job")  # a row's problem: the same in the next check


def _write(item: QListWidgetItem, problem) -> None:
    text = problem.format()
    item.setText(text)
    item.setToolTip(text)
    item.setForeground(QColor(SEVERITY_COLORS.get(problem.severity, "#1f2937")))
    item.setData(ELEMENT_ROLE, problem.element)
