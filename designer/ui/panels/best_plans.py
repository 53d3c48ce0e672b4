"""The Advisor's "Best plans" page: the fastest plans of the plan search that fit, each applied with
one click, the verdict and how the space was cut down (in the words `designer search` prints,
designer.core.analysis.texts), or a message while there is no result.

`BestPlansPage(apply_plan)` only draws: `show_result(result, stale)` fills it, `show_message`
and `show_error` replace it with a sentence, `set_stale(text)` shows or hides the banner and
enables the Apply buttons. Applying a plan is the panel's `apply_plan(row)`.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QLabel, QSizePolicy, QStackedLayout, QVBoxLayout, QWidget

from ...core.analysis.texts import search_counts_text
from .plot_style import AXIS, DOES_NOT_FIT, FASTER, MUTED, SLOWER
from .plan_search import row_tip, speedup_of
from .results_table import GROUP_BG, STALE_STYLE, Item, apply_button, capital, escape, plan_cell_text, results_table

NO_GAIN = 0.01  # as designer.core.analysis.whatif: below 1% a plan buys nothing
PLAN_COLUMNS = ("", "Plan", "Step (s)", "Speed-up", "MFU", "GiB/GPU")
PCOL_APPLY, PCOL_PLAN, PCOL_STEP, PCOL_SPEEDUP, PCOL_MFU, PCOL_MEMORY = range(len(PLAN_COLUMNS))
SEARCH_HINT = ("Search plans walks every plan of this cluster (TP, PP, CP, EP, schedule, micro-batch, recompute, "
               "ZeRO, overlaps, rank order) and lists the fastest that fit in memory, each applied with one click. "
               "It takes a few seconds, so it runs only when you press Search plans.")
MESSAGE_STYLE = f"color: {MUTED}; font-size: 11pt"


def _rich_label(name: str) -> QLabel:
    label = QLabel("")
    label.setObjectName(name)
    label.setTextFormat(Qt.RichText)
    label.setWordWrap(True)
    label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
    return label


class BestPlansPage(QWidget):
    """The verdict, the counts, the stale banner and the plans table (or a message instead)."""

    def __init__(self, apply_plan, parent: QWidget | None = None):
        super().__init__(parent)
        self._apply_plan = apply_plan
        self.rows: list[dict] = []  # table row -> search row (the file's own plan below is not one)
        self.verdict = _rich_label("search_verdict")
        self.counts = _rich_label("search_counts")
        self.banner = QLabel()
        self.banner.setObjectName("search_stale")
        self.banner.setTextFormat(Qt.PlainText)
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet(STALE_STYLE)
        self.banner.hide()
        self.table = results_table("plans", PLAN_COLUMNS, PCOL_APPLY, PCOL_PLAN)
        for col, tip in ((PCOL_PLAN, "the plan: parallelism, micro-batch, schedule, recompute, sequence "
                                     "parallelism, optimizer sharding (hover a row for where its step goes)"),
                         (PCOL_STEP, "predicted step time with this plan"),
                         (PCOL_SPEEDUP, "the file's step / this plan's step - 1: +10% is 10% more steps per hour"),
                         (PCOL_MFU, "model FLOPs utilisation with this plan"),
                         (PCOL_MEMORY, "memory per GPU with this plan (GiB)")):
            self.table.horizontalHeaderItem(col).setToolTip(tip)
        self.table.cellDoubleClicked.connect(self._on_double_clicked)
        # a plan too long for its column wraps onto a second line: two plans that differ only at
        # the end of their label (the rank order) must not look the same
        self.table.setWordWrap(True)
        self.table.verticalHeader().setMinimumSectionSize(24)
        self._rows_timer = QTimer(self, singleShot=True, interval=0, timeout=self.fit_rows)
        self.table.horizontalHeader().sectionResized.connect(lambda *_: self._rows_timer.start())
        content = QWidget()
        body = QVBoxLayout(content)
        body.setContentsMargins(0, 0, 0, 0)
        body.setSpacing(3)
        body.addWidget(self.verdict)
        body.addWidget(self.counts)
        body.addWidget(self.banner)
        body.addWidget(self.table, 1)
        self.message = QLabel(SEARCH_HINT)
        self.message.setObjectName("search_message")
        self.message.setTextFormat(Qt.PlainText)
        self.message.setAlignment(Qt.AlignCenter)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.message.setStyleSheet(MESSAGE_STYLE)
        self.stack = QStackedLayout(self)
        self.stack.addWidget(self.message)
        self.stack.addWidget(content)

    # ---- instead of plans: a sentence ----
    def show_message(self, text: str) -> None:
        """A hint or the progress, while no plans are shown."""
        self.message.setText(text)
        self.message.setStyleSheet(MESSAGE_STYLE)

    def show_error(self, error: str) -> None:
        self.table.setRowCount(0)
        self.rows = []
        self.message.setText("Cannot search plans for this design:\n\n" + error)
        self.message.setStyleSheet(f"color: {DOES_NOT_FIT}; font-size: 10pt")
        self.stack.setCurrentWidget(self.message)

    # ---- the plans ----
    def show_result(self, result, stale: bool) -> None:
        current = result.current
        verdict = capital(result.verdict)
        gain = speedup_of(result.top[0], current) if result.top else None
        color = FASTER if gain is not None and gain >= NO_GAIN else (DOES_NOT_FIT if not result.top else AXIS)
        self.verdict.setText(f"<b style='color:{color}'>{escape(verdict)}</b>")
        self.verdict.setToolTip(verdict)
        counts = escape(search_counts_text(result, with_runner=False))  # the tooltip names the runner
        now = ""
        if current and "error" not in current:
            now = (f" &nbsp;\u00b7&nbsp; now {current['step_time_s']:.3f} s, MFU {current['mfu'] * 100:.1f}%"
                   + ("" if current["fits_in_memory"] else ", does not fit"))
        warnings = "".join(f"<br><span style='color:{DOES_NOT_FIT}'>{escape(w)}</span>" for w in result.warnings)
        self.counts.setText(f"<span style='color:{MUTED}'>{counts}{now}</span>{warnings}")
        self.counts.setToolTip(f"searched in {result.runner}: {result.evaluated:,} plans costed by the "
                               "engine, the rest counted without being costed")
        self._fill(result, stale)
        self.stack.setCurrentIndex(1)

    def set_stale(self, text: str | None) -> None:
        """`text`: why the plans shown are stale (their Apply buttons off); None: they are current."""
        if text:
            self.banner.setText(text)
        self.banner.setVisible(bool(text))
        for row in range(len(self.rows)):
            widget = self.table.cellWidget(row, PCOL_APPLY)
            if widget is not None:
                widget.setEnabled(not text)

    def _fill(self, result, stale: bool) -> None:
        table = self.table
        right = Qt.AlignRight | Qt.AlignVCenter
        current = result.current
        current_point = current["point"] if current else None
        table.setUpdatesEnabled(False)
        table.setRowCount(0)
        listed = any(r["point"] == current_point for r in result.top)
        reference = current is not None and "error" not in current and not listed
        table.setRowCount(len(result.top) + reference)
        self.rows = list(result.top)
        for row, r in enumerate(result.top):
            point = r["point"]
            is_current = point == current_point
            gain = speedup_of(r, current)
            cells = {PCOL_PLAN: Item(plan_cell_text(point.label() + (" (the file's plan)" if is_current else ""))),
                     PCOL_STEP: Item(f"{r['step_time_s']:.3f}", right),
                     PCOL_SPEEDUP: Item("\u2013" if gain is None else f"{gain * 100:+.1f}%", right),
                     PCOL_MFU: Item(f"{r['mfu'] * 100:.1f}%", right),
                     PCOL_MEMORY: Item(f"{r['memory_gib']:.1f}", right)}
            tip = row_tip(r, current, is_current)
            for col, item in cells.items():
                item.setToolTip(tip)
                if is_current:
                    font = QFont(item.font())
                    font.setBold(True)
                    item.setFont(font)
                table.setItem(row, col, item)
            if gain is not None:
                color = FASTER if gain >= NO_GAIN else SLOWER if gain <= -NO_GAIN else MUTED
                cells[PCOL_SPEEDUP].setForeground(QBrush(QColor(color)))
            if is_current:
                table.setItem(row, PCOL_APPLY, Item(""))
            else:
                table.setCellWidget(row, PCOL_APPLY, apply_button(
                    f"apply-plan:{row}", tip, lambda _=False, r=r: self._apply_plan(r), not stale))
        if reference:  # the file's own plan, to compare with, below the best
            self._reference_row(len(result.top), current)
        table.setUpdatesEnabled(True)
        self.fit_rows()

    def _reference_row(self, row: int, current: dict) -> None:
        right = Qt.AlignRight | Qt.AlignVCenter
        fits = current["fits_in_memory"]
        cells = {PCOL_APPLY: Item("now"),
                 PCOL_PLAN: Item(plan_cell_text(current["point"].label() + ("" if fits else " (does not fit)"))),
                 PCOL_STEP: Item(f"{current['step_time_s']:.3f}", right), PCOL_SPEEDUP: Item("", right),
                 PCOL_MFU: Item(f"{current['mfu'] * 100:.1f}%", right),
                 PCOL_MEMORY: Item(f"{current['memory_gib']:.1f}", right)}
        cells[PCOL_APPLY].setTextAlignment(Qt.AlignCenter)
        tip = row_tip(current, current, True)
        for col, item in cells.items():
            item.setToolTip(tip)
            item.setForeground(QBrush(QColor(DOES_NOT_FIT if not fits and col == PCOL_MEMORY else MUTED)))
            item.setBackground(QBrush(QColor(GROUP_BG)))
            font = QFont(item.font())
            font.setItalic(True)
            item.setFont(font)
            self.table.setItem(row, col, item)

    def fit_rows(self) -> None:
        table = self.table
        table.resizeRowsToContents()
        rows = table.verticalHeader()
        for row in range(table.rowCount()):
            if rows.sectionSize(row) > 24:  # two lines: some air between the rows
                rows.resizeSection(row, rows.sectionSize(row) + 6)

    def _on_double_clicked(self, row: int, _col: int) -> None:
        if 0 <= row < len(self.rows):
            self._apply_plan(self.rows[row])
