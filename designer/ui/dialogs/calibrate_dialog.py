"""File > Calibrate from nccl-tests...: the fit `designer calibrate` makes, shown before it is applied.

The dialog lists per link class the fitted efficiency, its uncertainty and the value before, then
every measured row with its error before and after. Apply is offered only for an accepted fit
(no value outside its range, no row worse); the window applies it as one undo step.
"""
from __future__ import annotations

from PySide6.QtWidgets import (
    QAbstractItemView, QDialog, QDialogButtonBox, QHeaderView, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout,
)

from ...core.analysis.calibrate import CalibrationResult


def _table(headers: list[str], rows: list[list[str]]) -> QTableWidget:
    table = QTableWidget(len(rows), len(headers))
    table.setHorizontalHeaderLabels(headers)
    table.setEditTriggers(QAbstractItemView.NoEditTriggers)
    table.verticalHeader().setVisible(False)
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            table.setItem(r, c, QTableWidgetItem(text))
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
    return table


class CalibrationDialog(QDialog):
    def __init__(self, parent, result: CalibrationResult):
        super().__init__(parent)
        refused = result.refusals
        if not result.accepted and result.partial is not None and result.partial.accepted:
            result = result.partial  # what can be fitted size range by size range, the rows it misses named
        self.fit = result  # (QDialog.result() is the dialog's answer: not this)
        self.setWindowTitle("Calibrate from nccl-tests")
        layout = QVBoxLayout(self)
        if result.accepted and not refused:
            verdict = "The fit improves or keeps every measured row. Apply writes these values into the " \
                      "design's calibration (one undo step)."
        elif result.accepted:
            verdict = ("One set of values cannot fit every row (" + "; ".join(refused[:2]) + "). Shown: the values "
                       "fitted size range by size range; Apply writes them (one undo step); the notes name the "
                       "rows they do not explain.")
        else:
            verdict = "Refused, nothing will change:\n" + "\n".join(f"- {r}" for r in result.refusals)
        self.verdict = QLabel(verdict)
        self.verdict.setWordWrap(True)
        layout.addWidget(self.verdict)
        self.constants = _table(
            ["Link class", "Constant", "Before", "Fitted", "±"],
            [[c.link_class, c.name, f"{c.before:.4f}", f"{c.value:.4f}",
              f"{c.uncertainty:.4f}" if c.uncertainty is not None else "n/a"] for c in result.constants])
        layout.addWidget(self.constants)
        self.rows = _table(
            ["Row", "Collective", "Size (B)", "Measured (us)", "Before (us)", "Error before", "After (us)",
             "Error after"],
            [[f.where, f.run.op, str(f.size_bytes), f"{f.measured_us:.2f}", f"{f.before_us:.2f}",
              f"{f.error_before:+.1%}", f"{f.after_us:.2f}", f"{f.error_after:+.1%}"] for f in result.rows])
        layout.addWidget(self.rows, 1)
        for note in result.notes:
            layout.addWidget(QLabel(note))
        buttons = QDialogButtonBox(QDialogButtonBox.Cancel)
        self.apply_button = buttons.addButton("Apply", QDialogButtonBox.AcceptRole)
        self.apply_button.setEnabled(result.accepted)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(900, 560)
