"""The pieces every Advisor results table is drawn with: read-only cells, a table of 24 px rows with
an Apply column, the Apply button, and the colours of stale banners and group rows."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView, QHBoxLayout, QHeaderView, QTableWidget, QTableWidgetItem, QToolButton, QWidget,
)

from ..common.action_guard import guarded

STALE_BG = "#fef3c7"
STALE_FG = "#92400e"
NOFIT_BG = "#fef2f2"
GROUP_BG = "#f3f4f6"
STALE_STYLE = f"background: {STALE_BG}; color: {STALE_FG}; padding: 2px 6px; border-radius: 3px"
MIN_ROWS_SHOWN = 4  # a docked table keeps room for a few rows, not one squeezed line


class Item(QTableWidgetItem):
    """A read-only, selectable cell."""

    def __init__(self, text: str, align=Qt.AlignLeft | Qt.AlignVCenter):
        super().__init__(text)
        self.setTextAlignment(align)
        self.setFlags(Qt.ItemIsEnabled | Qt.ItemIsSelectable)


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def capital(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def plain_table(name: str, columns: tuple) -> QTableWidget:
    """A read-only table of whole-row selection, rows of 24 px, no grid, cells cut with an ellipsis."""
    table = QTableWidget(0, len(columns))
    table.setObjectName(name)
    table.setHorizontalHeaderLabels(columns)
    table.verticalHeader().hide()
    table.verticalHeader().setDefaultSectionSize(24)
    table.setSelectionBehavior(QAbstractItemView.SelectRows)
    table.setSelectionMode(QAbstractItemView.SingleSelection)
    table.setEditTriggers(QAbstractItemView.NoEditTriggers)
    table.setWordWrap(False)
    table.setTextElideMode(Qt.ElideRight)
    table.setShowGrid(False)
    return table


def results_table(name: str, columns: tuple, apply_col: int, stretch_col: int) -> QTableWidget:
    """A results table as the panel draws them: a plain table with an Apply column."""
    table = plain_table(name, columns)
    table.setAlternatingRowColors(False)
    table.setHorizontalScrollMode(QAbstractItemView.ScrollPerPixel)
    table.setVerticalScrollMode(QAbstractItemView.ScrollPerPixel)
    header = table.horizontalHeader()
    header.setHighlightSections(False)
    header.setMinimumSectionSize(40)
    for col in range(len(columns)):
        header.setSectionResizeMode(col, QHeaderView.ResizeToContents)
    header.setSectionResizeMode(stretch_col, QHeaderView.Stretch)
    header.setSectionResizeMode(apply_col, QHeaderView.Fixed)  # not widened by the group rows' text
    header.resizeSection(apply_col, 58)
    # the header and a few rows stay visible however the dock is squeezed (a scroll shows the rest)
    table.setMinimumHeight(header.sizeHint().height() + MIN_ROWS_SHOWN * 24 + 2 * table.frameWidth())
    return table


def apply_button(name: str, tip: str, slot, enabled: bool) -> QWidget:
    """The Apply button of a row (a failure of `slot` shows a message box)."""
    holder = QWidget()
    lay = QHBoxLayout(holder)
    lay.setContentsMargins(4, 1, 4, 1)
    button = QToolButton()
    button.setText("Apply")
    button.setObjectName(name)
    button.setToolTip(tip)
    button.setFixedHeight(20)
    button.clicked.connect(guarded(button, "Apply", slot))
    lay.addWidget(button)
    holder.setEnabled(enabled)
    return holder


def plan_cell_text(label: str) -> str:
    """A plan's label as its cell shows it: it may wrap after a comma only ("dist-opt" and "TP2 PP1"
    stay whole)."""
    return ", ".join(part.replace(" ", "\u00a0").replace("-", "\u2011") for part in label.split(", "))
