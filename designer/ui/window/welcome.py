"""The first-run hint: a slim banner above the canvas naming three things to try.

Shown when the app starts without a file (it then opens the built-in example). Closing it
hides it for good (QSettings `welcome/dismissed`); `--screenshot` without a file always shows it,
so the picture is what a first run looks like.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QDockWidget, QFrame, QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

DISMISSED_KEY = "welcome/dismissed"

HINT = ("<b>Welcome!</b> Try: select a cable and edit its bandwidth (<a href='dock:Inspector'>Inspector</a>)"
        " &nbsp;·&nbsp; change TP (<a href='dock:Job'>Job panel</a>)"
        " &nbsp;·&nbsp; read the waits (<a href='dock:Timeline'>Timeline</a>)"
        " &nbsp;·&nbsp; your own: <a href='act:new'>File &gt; New</a>, File &gt; Open Example,"
        " <a href='act:generate'>Generate</a>")

STYLE = """
#welcome-banner { background: #eff6ff; border-bottom: 1px solid #bfdbfe; }
#welcome-banner QLabel { color: #1e3a8a; }
#welcome-banner QToolButton { color: #1e3a8a; border: none; padding: 0 4px; font-size: 14px; }
#welcome-banner QToolButton:hover { background: #dbeafe; border-radius: 3px; }
"""


class WelcomeBanner(QFrame):
    dismissed = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("welcome-banner")
        self.setStyleSheet(STYLE)
        row = QHBoxLayout(self)
        row.setContentsMargins(10, 5, 4, 5)
        row.setSpacing(6)
        self.label = QLabel(HINT)
        self.label.setWordWrap(True)  # one line on a usual window; two rather than clipped on a narrow one
        self.label.setTextFormat(Qt.RichText)
        self.label.setTextInteractionFlags(Qt.LinksAccessibleByMouse)
        self.label.setToolTip("Click a panel's name to bring it forward")
        self.close_button = QToolButton()
        self.close_button.setText("\u2715")
        self.close_button.setToolTip("Hide this hint (Help > Quick Guide has more)")
        self.close_button.setAccessibleName("Close the hint")
        self.close_button.clicked.connect(self.dismiss)
        row.addWidget(self.label, 1)
        row.addWidget(self.close_button, 0, Qt.AlignTop)

    def text(self) -> str:
        """The hint as plain text."""
        from PySide6.QtGui import QTextDocument

        doc = QTextDocument()
        doc.setHtml(self.label.text())
        return doc.toPlainText()

    def dismiss(self) -> None:
        self.hide()
        self.dismissed.emit()


def show_welcome(window, force: bool = False) -> WelcomeBanner | None:
    """Put the hint above the window's canvas, unless it was dismissed before (or `force`)."""
    if not force and window.settings.value(DISMISSED_KEY, False, type=bool):
        return None
    banner = WelcomeBanner()
    banner.label.linkActivated.connect(lambda href: _follow_link(window, href))
    if not force:
        banner.dismissed.connect(lambda: window.settings.setValue(DISMISSED_KEY, True))
    # Wrap whatever the central widget is (the canvas view) with the banner on top.
    central = window.takeCentralWidget()
    holder = QWidget()
    holder.setObjectName("canvas-with-welcome")
    column = QVBoxLayout(holder)
    column.setContentsMargins(0, 0, 0, 0)
    column.setSpacing(0)
    column.addWidget(banner)
    if central is not None:
        column.addWidget(central, 1)
    window.setCentralWidget(holder)
    return banner


def _follow_link(window, href: str) -> None:
    kind, _, name = href.partition(":")
    if kind == "act":  # a menu command: File > New, Tools > Generate Fat-Tree
        getattr(window, f"act_{name}").trigger()
        return
    dock = window.findChild(QDockWidget, name)
    if dock is not None:
        dock.show()
        dock.raise_()
