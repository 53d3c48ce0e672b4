"""The summary an import shows before it changes anything: what the file held (switches, hosts,
GPUs, tiers and their oversubscription, the job), what was inferred or guessed, and the warnings;
the same figures `designer import` prints."""
from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog, QDialogButtonBox, QFormLayout, QLabel, QListWidget, QVBoxLayout, QWidget,
)


class ImportSummaryDialog(QDialog):
    """`summary`: core.io.importers.formats.ImportSummary; `accept_text`: the button that takes it;
    `other_text`: a second way to take it (a launch script as a new job); `choice` says which."""

    def __init__(self, parent: QWidget | None, title: str, summary, accept_text: str, other_text: str | None = None):
        super().__init__(parent)
        self.setWindowTitle(title)
        self.summary = summary
        self.choice = None  # "accept" or "other", once taken
        layout = QVBoxLayout(self)
        source = QLabel(f"<b>{summary.source}</b>")
        source.setWordWrap(True)
        layout.addWidget(source)
        self.form = QFormLayout()
        for what, value in summary.rows:
            label = QLabel(value)
            label.setWordWrap(True)
            label.setObjectName(what)
            self.form.addRow(f"{what}:", label)
        layout.addLayout(self.form)
        self.notes = self._list(layout, "Read, inferred and guessed", summary.notes)
        self.warnings = self._list(layout, "Warnings", summary.warnings)
        buttons = QDialogButtonBox(QDialogButtonBox.Cancel)
        self.accept_button = buttons.addButton(accept_text, QDialogButtonBox.AcceptRole)
        self.accept_button.clicked.connect(lambda: self._take("accept"))
        self.other_button = buttons.addButton(other_text, QDialogButtonBox.AcceptRole) if other_text else None
        if self.other_button is not None:
            self.other_button.clicked.connect(lambda: self._take("other"))
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(720, 480)

    def _take(self, choice: str) -> None:
        self.choice = choice
        self.accept()

    @staticmethod
    def _list(layout, title: str, lines: list[str]) -> QListWidget:
        items = QListWidget()
        items.setWordWrap(True)
        items.addItems(lines)
        if lines:
            layout.addWidget(QLabel(f"{title} ({len(lines)}):"))
            layout.addWidget(items)
        else:
            items.hide()
        return items

    def value(self, what: str) -> str:
        """The text shown for one row ("Switches", "Compute GPUs", ...)."""
        return dict(self.summary.rows)[what]
