""""Copy as Megatron arguments": a table row's plan as the Megatron-LM line, on the clipboard.

The plan-search table and the Advisor's changes table each get the action in their context menu
(right-click a row). The line is the one `designer export megatron` prints for that plan
(designer/core/export/megatron_args.py), on one line, ready to paste after pretrain_gpt.py.
"""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QTableWidget

from ..common.action_guard import guarded

COPY_TEXT = "Copy as Megatron arguments"


def install_copy_megatron(table: QTableWidget, line_of_row: Callable[[int], str | None],
                          status: Callable[[str], None]) -> QAction:
    """Add the action to `table`'s context menu; `line_of_row(row)` gives the line, or None when
    that row holds no plan (a group heading). `status` says what was copied, or why nothing."""
    action = QAction(COPY_TEXT, table)
    action.setObjectName("copy-megatron")
    action.setToolTip("the selected plan as Megatron-LM command-line arguments (designer export megatron)")

    def copy() -> None:
        row = table.currentRow()
        line = line_of_row(row) if row >= 0 else None
        if not line:
            status("select a plan to copy its Megatron-LM arguments")
            return
        QApplication.clipboard().setText(line)
        status(f"copied {len(line.split(' --'))} Megatron-LM arguments")

    action.triggered.connect(guarded(table, COPY_TEXT, copy))
    table.setContextMenuPolicy(Qt.ActionsContextMenu)
    table.addAction(action)
    return action
