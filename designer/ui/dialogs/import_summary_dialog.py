"""The summary an import shows before it changes anything: what the file held (switches, hosts,
GPUs, tiers and their oversubscription, the job), what was inferred or guessed, and the warnings;
the same figures `designer import` prints."""
from __future__ import annotations

import re

from PySide6.QtWidgets import (
    QComboBox, QDialog, QDialogButtonBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QListWidget, QPushButton,
    QSpinBox, QVBoxLayout, QWidget,
)


class ImportSummaryDialog(QDialog):
    """`summary`: core.io.importers.formats.ImportSummary; `accept_text`: the button that takes it;
    `other_text`: a second way to take it (a launch script as a new job); `choice` says which."""

    def __init__(self, parent: QWidget | None, title: str, summary, accept_text: str, other_text: str | None = None,
                 servers: tuple[str, int | None, str | None] | None = None):
        """`servers`: (accelerator, GPUs per server or None: one per HCA port, the GPU servers' name
        pattern or None) a fabric was read with; the dialog then offers them, and Read Again (`choice`
        "again", `options()`)."""
        super().__init__(parent)
        self.setWindowTitle(title)
        self.summary = summary
        self.choice = None  # "accept", "other" or "again", once taken
        self.gpu_combo = self.gpus_spin = self.compute_edit = self.compute_error = None
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
        if servers is not None:
            self._server_options(layout, *servers)
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

    def _server_options(self, layout, gpu: str, per_server: int | None, compute: str | None = None) -> None:
        """The file holds no GPUs: the accelerator and GPUs per server to read it with, and which hosts
        are GPU servers (by default those with the most common HCA count and no service-like name)."""
        from ...core.model.catalog import default_catalog

        row = QHBoxLayout()
        row.addWidget(QLabel("GPU servers hold:"))
        self.gpus_spin = QSpinBox()
        self.gpus_spin.setRange(0, 72)
        self.gpus_spin.setSpecialValueText("one per HCA port")
        self.gpus_spin.setValue(per_server or 0)
        row.addWidget(self.gpus_spin)
        row.addWidget(QLabel("x"))
        self.gpu_combo = QComboBox()
        self.gpu_combo.addItems(default_catalog().names("accelerators"))
        self.gpu_combo.setCurrentText(gpu)
        row.addWidget(self.gpu_combo, 1)
        again = QPushButton("Read Again")
        again.setToolTip("Read the file again with these GPUs (the file does not say which GPUs its servers hold)")
        again.clicked.connect(self._read_again)
        row.addWidget(again)
        layout.addLayout(row)
        names = QHBoxLayout()
        names.addWidget(QLabel("GPU servers are the hosts named:"))
        self.compute_edit = QLineEdit(compute or "")
        self.compute_edit.setPlaceholderText("by HCA count and name (a regular expression, e.g. ^gpu[0-9]+)")
        self.compute_edit.setToolTip("A Python regular expression; hosts whose name it matches are GPU servers, "
                                     "the others storage, login or service hosts (as designer import --compute)")
        names.addWidget(self.compute_edit, 1)
        layout.addLayout(names)
        self.compute_error = QLabel()
        self.compute_error.setStyleSheet("color: #c62828")
        self.compute_error.hide()
        layout.addWidget(self.compute_error)

    def _read_again(self) -> None:
        """Read Again, once the name pattern is a regular expression (else say why, here)."""
        pattern = self.compute_edit.text().strip()
        try:
            re.compile(pattern)
        except re.error as exc:
            self.compute_error.setText(f"GPU servers' names: {pattern!r} is not a regular expression ({exc})")
            self.compute_error.show()
            return
        self._take("again")

    def options(self) -> dict:
        """gpu=, gpus_per_node= and compute= for a fabric importer, as set in the dialog."""
        return {"gpu": self.gpu_combo.currentText(), "gpus_per_node": self.gpus_spin.value() or None,
                "compute": self.compute_edit.text().strip() or None}

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
