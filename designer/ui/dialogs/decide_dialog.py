"""Tools > Compare Clusters for a Model...: the open design's job on several designs, each at its
best plan, per run (designer/core/analysis/decide.py; `designer decide` on the command line).

The open design and the files added are searched one after another off the UI thread (DecideWorker,
the window's one kind of background worker); the dialog says which design is being searched until
the table comes. Report
(PDF)... writes the decision with report_decide.py.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog, QDialogButtonBox, QFileDialog, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QListWidget, QPushButton,
    QTableWidget, QTableWidgetItem, QVBoxLayout,
)

from ...core.analysis.decide import ANSWER_ROWS
from ..panels.plot_style import MUTED, SLOWER, TEXT
from ..work.latest_worker import LatestWorker, error_text

FILE_FILTER = "Designer files (*.yaml *.yml);;All files (*)"

# the figures the command line's table shows (core/analysis/decide.py), then what the table says below it
ROWS = (*ANSWER_ROWS, ("bottleneck", lambda a: a.bottleneck), ("best plan", lambda a: a.plan))


class DecideWorker(LatestWorker):
    """Searches and prices every design off the UI thread (no Qt parent: it may outlive the dialog);
    a newer Compare replaces one not started yet."""

    kinds = ("decide",)
    thread_name = "designer-decide"
    progress = Signal(str)  # the design being searched
    done = Signal(object, object)  # Decision or None, error text or None

    def start_decision(self, designs: list, tokens: float) -> None:
        self.submit("decide", 0, designs, tokens)

    def work(self, kind: str, request: int, designs, tokens) -> None:
        from ...core.analysis.decide import decide

        try:
            decision = decide(designs, tokens, progress=lambda name: self.emit(self.progress, name))
        except Exception as exc:  # noqa: BLE001 - shown in the dialog, never a crash
            self.emit(self.done, None, error_text(exc))
            return
        self.emit(self.done, decision, None)


class DecideDialog(QDialog):
    """The open design's job on the open design and the files added, side by side per run."""

    def __init__(self, parent, doc, name: str):
        super().__init__(parent)
        self.setWindowTitle("Compare Clusters for a Model")
        self.doc, self.name = doc, name
        self.paths: list[str] = []
        self.decision = None
        self.error = None
        layout = QVBoxLayout(self)
        w = doc.spec.workload
        job = getattr(w, "preset", None) or "the open design's model"
        layout.addWidget(QLabel(f"The job of {name} ({job}, global batch {getattr(w, 'global_batch_size', None) or '?'}) "
                                "on each design, each at the best plan the plan search finds that keeps the "
                                "memory headroom."))
        self.designs = QListWidget()
        self.designs.addItem(f"{name} (open)")
        layout.addWidget(self.designs)
        row = QHBoxLayout()
        self.add_button = QPushButton("Add Design...")
        self.add_button.clicked.connect(lambda: self.add_design())
        row.addWidget(self.add_button)
        row.addWidget(QLabel("tokens:"))
        self.tokens = QLineEdit("15T")
        self.tokens.setToolTip("the token budget of the run: 15T, 800B, 2.5e12")
        row.addWidget(self.tokens)
        self.run_button = QPushButton("Compare")
        self.run_button.clicked.connect(self.run)
        row.addWidget(self.run_button)
        layout.addLayout(row)
        self.status = QLabel("add a design or more, then Compare")
        self.status.setWordWrap(True)
        self.status.setStyleSheet(f"color: {MUTED};")
        layout.addWidget(self.status)
        self.table = QTableWidget(0, 1)
        self.table.setEditTriggers(QTableWidget.NoEditTriggers)
        layout.addWidget(self.table, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        self.report_button = buttons.addButton("Report (PDF)...", QDialogButtonBox.ActionRole)
        self.report_button.setEnabled(False)
        self.report_button.clicked.connect(lambda: self.write_report())
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.worker = DecideWorker()
        self.worker.progress.connect(lambda name: self.status.setText(f"searching the plans of {name}..."))
        self.worker.done.connect(self._on_done)

    def add_design(self, path: str | None = None) -> None:
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self, "Add design", "", FILE_FILTER)
            if not path:
                return
        self.paths.append(path)
        self.designs.addItem(path)

    def run(self) -> None:
        from ...core.analysis.decide import same_job
        from ...core.analysis.run_cost import parse_tokens
        from ...core.io import load_document
        from ...core.problems import DesignerError

        self.error = None
        try:
            tokens = parse_tokens(self.tokens.text(), "tokens")
            if self.doc.spec.workload is None:
                raise DesignerError([])
            designs = [(self.name, self.doc)]
            for path in self.paths:
                other = load_document(path)
                same_job(other, self.doc.spec.workload, self.doc.spec.parallelism)
                designs.append((other.metadata.name or Path(path).stem, other))
            if len(designs) < 2:
                self._show_error("add a design to compare with (Add Design...)")
                return
        except DesignerError as exc:
            self._show_error("; ".join(p.message + (f" ({p.fix})" if p.fix else "") for p in exc.problems)
                             or "the open design has no job: add a workload first")
            return
        self.run_button.setEnabled(False)
        self.status.setStyleSheet(f"color: {MUTED};")
        self.status.setText("searching...")
        self.worker.start_decision(designs, tokens)

    def _show_error(self, text: str) -> None:
        self.error = text
        self.status.setStyleSheet(f"color: {SLOWER};")
        self.status.setText(text)

    def _on_done(self, decision, error) -> None:
        self.run_button.setEnabled(True)
        if error is not None:
            self._show_error(error)
            return
        self.decision, self.error = decision, None
        # amber-free: red when the answer is within the model's error, plain text otherwise
        self.status.setStyleSheet(f"color: {SLOWER if decision.within_error else TEXT}; font-weight: bold;")
        self.status.setText(decision.verdict)
        answers = decision.answers
        self.table.clear()
        self.table.setColumnCount(len(answers))
        self.table.setRowCount(len(ROWS))
        self.table.setHorizontalHeaderLabels([a.name for a in answers])
        self.table.setVerticalHeaderLabels([label for label, _ in ROWS])
        for j, a in enumerate(answers):
            for i, (_label, cell) in enumerate(ROWS):
                text = cell(a) if not a.error else ("no plan fits: " + a.error if i == 0 else "")
                item = QTableWidgetItem(text)
                item.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
                self.table.setItem(i, j, item)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.Stretch)
        self.report_button.setEnabled(True)

    def write_report(self, path: str | None = None) -> str | None:
        if self.decision is None:
            return None
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Report", "decision.pdf", "PDF document (*.pdf)")
            if not path:
                return None
        from ..common.decision_report import write_decision_pdf

        try:
            write_decision_pdf(self.decision, path)  # with each design's pictures and Advisor changes
        except OSError as exc:
            self._show_error(f"cannot write {path}: {exc}")
            return None
        return path


def open_decide_dialog(window) -> DecideDialog | None:
    """Tools > Compare Clusters for a Model...: the dialog on the open design (its job goes on each)."""
    doc = window.qdoc.doc
    if doc.spec.workload is None:
        window.tell("the open design has no job to compare clusters for: add a workload first")
        return None
    dialog = DecideDialog(window, doc.snapshot(), doc.metadata.name or window.qdoc.name)
    dialog.setAttribute(Qt.WA_DeleteOnClose)
    dialog.resize(960, 640)
    dialog.show()
    return dialog
