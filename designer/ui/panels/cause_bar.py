"""The Advisor's attribution: the step as one thin stacked bar of its causes, and the texts of a cause
and of an advice note as short as the panel wants them (tooltips keep them whole)."""
from __future__ import annotations

import re

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from .plot_style import category_color


def cause_color(cause: dict) -> QColor:
    color = category_color(cause.get("kind", ""))
    if "(latency)" in cause.get("cause", ""):
        color = color.lighter(135)
    return color


class CauseBar(QWidget):
    """The step as one thin stacked bar, a segment per cause (hover: what it is)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.causes: list[dict] = []
        self.setFixedHeight(12)
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)

    def set_causes(self, causes: list[dict]) -> None:
        self.causes = [c for c in causes if c.get("share", 0) > 0]
        self.update()

    def _segments(self) -> list[tuple[QRectF, dict]]:
        total = sum(c["share"] for c in self.causes) or 1.0
        width = self.width() - 1
        x, out = 0.0, []
        for c in self.causes:
            w = c["share"] / max(total, 1.0) * width
            out.append((QRectF(x, 0, w, self.height() - 1), c))
            x += w
        return out

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.Antialiasing, False)
        p.fillRect(QRectF(0, 0, self.width() - 1, self.height() - 1), QColor("#f3f4f6"))
        for rect, c in self._segments():
            p.fillRect(rect, cause_color(c))
        p.setPen(QPen(QColor("#d1d5db")))
        p.setBrush(Qt.NoBrush)
        p.drawRect(QRectF(0, 0, self.width() - 1, self.height() - 1))
        p.end()

    def cause_at(self, x: float) -> dict | None:
        for rect, c in self._segments():
            if rect.left() <= x < rect.right():
                return c
        return None

    def mouseMoveEvent(self, event) -> None:
        c = self.cause_at(event.position().x())
        if c is None:
            QToolTip.hideText()
        else:
            QToolTip.showText(event.globalPosition().toPoint(), cause_tip(c), self)


def short_cause(c: dict) -> str:
    """The cause without a long aside: "recompute (optional: the plan fits without it)" -> "recompute"
    (the tooltip keeps it); "tp_comm over NVLink (bandwidth)" stays as it is."""
    return re.sub(r"\s*\([^)]{16,}\)", "", c.get("cause", "")).strip() or c.get("cause", "")


def note_text(note: str) -> str:
    """A note as short as a table cell wants it (the row's tooltip keeps it whole): no speed-up
    (its column shows it), no aside in parentheses, no long explanation after a colon.
    "+0.4%, not the bottleneck (compute-bound; ...)" -> "not the bottleneck";
    "does not fit: 88.1 GiB per GPU" -> "needs 88.1 GiB/GPU"."""
    text = re.sub(r"^[+-]?\d+(\.\d+)?%,\s*", "", note.strip())
    text = re.sub(r"\s*\([^()]*(\([^()]*\)[^()]*)*\)\s*$", "", text)
    head, sep, tail = text.partition(": ")
    if sep and len(tail) > 24:
        text = head
    if text.startswith("does not fit: "):  # its group and the red row say so
        text = "needs " + text[len("does not fit: "):]
    return text.replace(" per GPU", "/GPU")


def cause_tip(c: dict) -> str:
    text = f"{c['cause']}: {c['seconds']:.3f} s, {c['share']:.1%} of the step"
    if c.get("detail"):
        text += f"\n{c['detail']}"
    return text
