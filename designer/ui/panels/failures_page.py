"""The Advisor's "What if it fails" page and "Job moves" page: they only draw.

`FailuresPage` has the run button, Cancel, a progress bar, the stale banner and the table of the
failure groups (designer.core.analysis.failure_groups): lost share of the GPUs per step, the
element(s), what their loss does, costliest first; or a message instead. `MovesPage` lists the
placement moves that pay (designer.core.analysis.failures.job_moves), one text row each.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QHBoxLayout, QHeaderView, QLabel, QProgressBar, QPushButton, QStackedLayout, QTableWidget,
    QVBoxLayout, QWidget,
)

from ...core.analysis.texts import evaluate_command
from .plot_style import DOES_NOT_FIT, MUTED, SLOWER
from .results_table import STALE_STYLE, Item, plain_table

FAILURE_COLUMNS = ("Lost share", "Element(s)", "What it does")
FCOL_SHARE, FCOL_ELEMENTS, FCOL_EFFECT = range(len(FAILURE_COLUMNS))
GROUP_ROLE = Qt.UserRole + 2  # the row's index in the groups shown
RUN_TEXT = "What if it fails"
FAILURES_HINT = ("What if it fails marks each switch, one server of each job and one cable of each kind of "
                 "switch-to-switch link down in turn, costs every job again, and ranks the failures by the "
                 "share of the GPUs' work they lose per step: the fabric's weak points before you buy it. "
                 "It takes a few seconds, so it runs only when you press the button.")
MOVES_HINT = ("With several jobs on the fabric, the Advisor places each job by every other policy (the others "
              "keep their servers) and lists the moves that make the jobs faster on the whole.")
MESSAGE_STYLE = f"color: {MUTED}; font-size: 11pt"


def _table(name: str, columns: tuple, stretch_col: int) -> QTableWidget:
    table = plain_table(name, columns)
    header = table.horizontalHeader()
    header.setHighlightSections(False)
    for col in range(len(columns)):
        header.setSectionResizeMode(col, QHeaderView.ResizeToContents)
    header.setSectionResizeMode(stretch_col, QHeaderView.Stretch)
    return table


def _message(name: str, text: str) -> QLabel:
    label = QLabel(text)
    label.setObjectName(name)
    label.setTextFormat(Qt.PlainText)  # problems may hold "<"
    label.setAlignment(Qt.AlignCenter)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextSelectableByMouse)
    label.setStyleSheet(MESSAGE_STYLE)
    return label


def _banner(name: str) -> QLabel:
    banner = QLabel()
    banner.setObjectName(name)
    banner.setTextFormat(Qt.PlainText)
    banner.setWordWrap(True)
    banner.setStyleSheet(STALE_STYLE)
    banner.hide()
    return banner


def group_tip(group) -> str:
    """Each member's id, the jobs it stops (and the engine's why) or slows, the CLI that reproduces it."""
    first = group.members[0]
    lines = [group.text, f"{group.lost_gpu_share:.1%} of the GPUs' work per step lost "
                         "(a stopped job counts all its GPUs, a slower one the share of its step it loses)"]
    if len(group.members) > 1:
        lines.append("each of: " + ", ".join(group.elements))
    if first.reason:
        lines.append("why: " + first.reason)
    slow = [f"  {job} {s:+.1%}" for job, s in sorted(first.slowdown.items(), key=lambda kv: -kv[1])
            if job not in first.stopped]
    if slow:
        lines.append("the jobs it does not stop:")
        lines += slow
    lines.append("CLI: " + evaluate_command([group.set_argument()]))
    lines.append("Select the row: the element(s) on the canvas")
    return "\n".join(lines)


class FailuresPage(QWidget):
    """The run button, Cancel and progress, the stale banner, the failures table (or a message)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.groups: list = []  # table row -> FailureGroup
        self.run_button = QPushButton(RUN_TEXT)
        self.run_button.setObjectName("failures_run")
        self.run_button.setToolTip("Mark each part down in turn and rank what its loss costs the jobs "
                                   "(off the UI thread)")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("failures_cancel")
        self.cancel_button.setToolTip("Stop trying failures (what was shown before stays)")
        self.cancel_button.hide()
        self.progress = QProgressBar()
        self.progress.setObjectName("failures_progress")
        self.progress.setFixedWidth(160)
        self.progress.setFormat("%v of %m")
        self.progress.hide()
        self.summary = QLabel("")
        self.summary.setObjectName("failures_summary")
        self.summary.setTextFormat(Qt.PlainText)
        self.summary.setStyleSheet(f"color: {MUTED}")
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 2, 0, 0)
        bar.setSpacing(6)
        bar.addWidget(self.run_button)
        bar.addWidget(self.cancel_button)
        bar.addWidget(self.progress)
        bar.addWidget(self.summary, 1)
        self.banner = _banner("failures_stale")
        self.table = _table("failures", FAILURE_COLUMNS, FCOL_EFFECT)
        for col, tip in ((FCOL_SHARE, "share of the GPUs' work lost per step when this part is down: a job it "
                                      "stops counts all its GPUs, a job it slows the share of its step it loses"),
                         (FCOL_ELEMENTS, "the part marked down (alike parts with the same effect: one row)"),
                         (FCOL_EFFECT, "the jobs it stops, or how much slower each job's step gets")):
            self.table.horizontalHeaderItem(col).setToolTip(tip)
        self.message = _message("failures_message", FAILURES_HINT)
        content = QWidget()
        body = QVBoxLayout(content)
        body.setContentsMargins(0, 0, 0, 0)
        body.addWidget(self.table)
        holder = QWidget()
        self.stack = QStackedLayout(holder)
        self.stack.addWidget(self.message)
        self.stack.addWidget(content)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(3)
        outer.addLayout(bar)
        outer.addWidget(self.banner)
        outer.addWidget(holder, 1)

    def set_running(self, running: bool, done: int = 0, total: int = 0) -> None:
        self.run_button.setEnabled(not running)
        self.cancel_button.setVisible(running)
        self.progress.setVisible(running)
        if running:
            self.progress.setRange(0, total)  # 0 of 0: indeterminate until the first count
            self.progress.setValue(done)

    def show_message(self, text: str, error: bool = False) -> None:
        self.message.setText(text)
        self.message.setStyleSheet(f"color: {DOES_NOT_FIT}; font-size: 10pt" if error else MESSAGE_STYLE)
        if error or not self.groups:
            self.table.setRowCount(0)
            self.groups = []
            self.stack.setCurrentWidget(self.message)

    def set_stale(self, text: str | None) -> None:
        self.banner.setText(text or "")
        self.banner.setVisible(bool(text))

    def show_groups(self, groups: list, tried: int, seconds: float) -> None:
        self.groups = list(groups)
        table = self.table
        table.setUpdatesEnabled(False)
        table.clearSelection()
        table.setRowCount(len(groups))
        right = Qt.AlignRight | Qt.AlignVCenter
        for row, group in enumerate(groups):
            elements = group.elements
            if len(elements) == 1:
                who = f"{group.kind} {elements[0]}"
            else:
                plural = group.kind + ("es" if group.kind.endswith("switch") else "s")
                who = f"{len(elements)} {plural}: {', '.join(elements[:3])}{' ...' if len(elements) > 3 else ''}"
            cells = {FCOL_SHARE: Item(f"{group.lost_gpu_share:.1%}", right),
                     FCOL_ELEMENTS: Item(who),
                     FCOL_EFFECT: Item(("each: " if len(elements) > 1 else "") + group.effect)}
            tip = group_tip(group)
            for col, item in cells.items():
                item.setData(GROUP_ROLE, row)
                item.setToolTip(tip)
                table.setItem(row, col, item)
            if group.stopped:
                cells[FCOL_EFFECT].setForeground(QBrush(QColor(DOES_NOT_FIT)))
            elif group.lost_gpu_share >= 0.01:
                cells[FCOL_EFFECT].setForeground(QBrush(QColor(SLOWER)))
            else:
                for item in cells.values():
                    item.setForeground(QBrush(QColor(MUTED)))
        table.setUpdatesEnabled(True)
        self.summary.setText(f"{tried} failures tried in {seconds:.1f} s, {len(groups)} kinds of effect, "
                             "costliest first")
        self.stack.setCurrentIndex(1)


class MovesPage(QWidget):
    """The placement moves that pay, one row each (or a message), and the stale banner."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.moves: list = []
        self.banner = _banner("moves_stale")
        self.table = _table("job_moves", ("Move",), 0)
        self.table.horizontalHeaderItem(0).setToolTip(
            "the job, its placement now -> the policy tried, and each job's change of step time "
            "(negative: faster); the other jobs keep their servers")
        self.message = _message("moves_message", MOVES_HINT)
        holder = QWidget()
        self.stack = QStackedLayout(holder)
        self.stack.addWidget(self.message)
        self.stack.addWidget(self.table)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 2, 0, 0)
        outer.setSpacing(3)
        outer.addWidget(self.banner)
        outer.addWidget(holder, 1)

    def set_stale(self, text: str | None) -> None:
        self.banner.setText(text or "")
        self.banner.setVisible(bool(text))

    def show_message(self, text: str, error: bool = False) -> None:
        self.moves = []
        self.table.setRowCount(0)
        self.message.setText(text)
        self.message.setStyleSheet(f"color: {DOES_NOT_FIT}; font-size: 10pt" if error else MESSAGE_STYLE)
        self.stack.setCurrentWidget(self.message)

    def show_moves(self, moves: list) -> None:
        if not moves:
            self.show_message("No move pays: placing any one job by another policy (the others keeping their "
                              "servers) makes the jobs no faster on the whole.")
            return
        self.moves = list(moves)
        self.table.setRowCount(len(moves))
        for row, move in enumerate(moves):
            item = Item(move.text)
            item.setToolTip(move.text + "\n" + "\n".join(f"  {job} step {c:+.1%}"
                                                         for job, c in move.step_change.items()))
            self.table.setItem(row, 0, item)
        self.stack.setCurrentWidget(self.table)
