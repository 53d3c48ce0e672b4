"""The Advisor's "Changes" page: what limits the step (a summary, the critical resource, the causes
with their share of the step) and every candidate change ranked by its speed-up, each with its
Apply button (or, instead of all that, the message of why there is nothing to show yet).

The panel (advisor.py) owns the analysis and what applying a change does; this page only shows a
report, keeps which advice each table row holds and hands a row's advice back to `apply`.
"""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QLabel, QSizePolicy, QStackedLayout, QVBoxLayout, QWidget

from ...core.analysis.texts import evaluate_command
from .cause_bar import CauseBar, cause_color, cause_tip, note_text, short_cause
from .megatron_copy import install_copy_megatron
from .plot_style import AXIS, DOES_NOT_FIT, FASTER, MUTED, SLOWER
from .results_table import GROUP_BG, NOFIT_BG, STALE_STYLE, Item, apply_button, results_table
from .results_table import capital as _capital, escape as _escape

NO_GAIN = 0.01  # as designer.core.analysis.whatif: below 1% a change buys nothing
ADVICE_CATEGORY_NAMES = {"hardware": "hardware", "parallelism": "parallelism", "software": "software setting",
                         "scale": "another GPU count"}
COLUMNS = ("", "Change", "Step (s)", "Speed-up", "MFU", "Tokens/$", "Note")
COL_APPLY, COL_TITLE, COL_STEP, COL_SPEEDUP, COL_MFU, COL_COST, COL_NOTE = range(len(COLUMNS))
ADVICE_ROLE = Qt.UserRole + 1
FIRST_MESSAGE = ("Analyse ranks changes of the hardware, the plan and the software settings by their predicted "
                 "speed-up, and shows where more GPUs stop paying.")


class ChangesPage(QWidget):
    """`apply(advice) -> bool`: make one change (one undo step); `say(text)`: the panel's status line."""

    def __init__(self, qdoc, apply: Callable, say: Callable[[str], None], parent: QWidget | None = None):
        super().__init__(parent)
        self.qdoc = qdoc
        self._apply = apply
        self.rows: list = []  # table row -> Advice (None for group rows)
        self.header_label = _rich_label("header")
        self.cause_bar = CauseBar()
        self.causes_label = _rich_label("causes")
        self.banner = QLabel()
        self.banner.setObjectName("stale")
        self.banner.setTextFormat(Qt.PlainText)
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet(STALE_STYLE)
        self.banner.hide()
        self.table = results_table("advice", COLUMNS, COL_APPLY, COL_NOTE)
        self.copy_change_megatron = install_copy_megatron(self.table, self._change_megatron_line, say)
        for col, tip in ((COL_STEP, "predicted step time with the change"),
                         (COL_SPEEDUP, "current step / new step - 1: +10% is 10% more steps per hour"),
                         (COL_MFU, "model FLOPs utilisation with the change"),
                         (COL_COST, "change of tokens per dollar (capex over 4 years + energy, docs/cost.md); "
                                    "hover a row for the capex and fabric-cost change"),
                         (COL_NOTE, "why it buys little or nothing, or does not fit; hover a row for the details")):
            self.table.horizontalHeaderItem(col).setToolTip(tip)
        self.table.cellDoubleClicked.connect(self._on_double_clicked)
        content = QWidget()
        body = QVBoxLayout(content)
        body.setContentsMargins(0, 0, 0, 0)
        body.setSpacing(3)
        for widget in (self.header_label, self.cause_bar, self.causes_label, self.banner):
            body.addWidget(widget)
        body.addWidget(self.table, 1)
        self.message = QLabel(FIRST_MESSAGE)
        self.message.setObjectName("message")
        self.message.setTextFormat(Qt.PlainText)  # problems may hold "<"
        self.message.setAlignment(Qt.AlignCenter)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.message.setStyleSheet(f"color: {MUTED}; font-size: 11pt")
        self._stack = QStackedLayout(self)
        self._stack.addWidget(self.message)
        self._stack.addWidget(content)

    # ---- what the page shows ----
    def show_analysing(self) -> None:
        """"analysing..." in place of the message (the panel asks only while it has no report nor error)."""
        if self._stack.currentWidget() is self.message:
            self.message.setText("analysing...")
            self.message.setStyleSheet(f"color: {MUTED}; font-size: 11pt")

    def show_error(self, error: str) -> None:
        self.table.setRowCount(0)
        self.rows = []
        self.message.setText("Cannot analyse this design:\n\n" + error)
        self.message.setStyleSheet(f"color: {DOES_NOT_FIT}; font-size: 10pt")
        self._stack.setCurrentWidget(self.message)

    def show_report(self, report: dict, can_apply: bool) -> None:
        why = report["attribution"]
        cur = report["current"]
        plan = cur.get("plan", {})
        dims = "  ".join(f"{k.upper()} {plan[k]}" for k in ("tp", "pp", "cp", "ep", "dp") if k in plan)
        fits = "" if cur.get("fits_in_memory", True) else \
            f" &nbsp;<span style='color:{DOES_NOT_FIT}'><b>does not fit in memory</b></span>"
        self.header_label.setText(
            f"<b>{_escape(_capital(why.get('summary', '')))}</b>"
            f"<br>Critical resource: <b>{_escape(why.get('critical_resource', ''))}</b>" + fits)
        self.header_label.setToolTip(
            f"now: step {cur['step_time_s']:.3f} s, MFU {cur['mfu'] * 100:.1f}%, {cur['tokens_per_s']:,.0f} "
            f"tokens/s, {dims}")
        causes = why.get("causes", [])
        self.cause_bar.set_causes(causes)
        shown = [c for c in causes if c.get("share", 0) >= 0.005]

        def nbsp(text: str) -> str:  # a cause breaks onto the next line as a whole
            return _escape(text).replace(" ", "&nbsp;")

        parts = [f"<span style='color:{cause_color(c).name()}'>&#9632;</span>&nbsp;{nbsp(short_cause(c))}"
                 f"&nbsp;<b>{c['share'] * 100:.1f}%</b>" for c in shown]
        rest = len(causes) - len(shown)
        if rest:
            parts.append(f"<span style='color:{MUTED}'>{nbsp(f'+{rest} below 0.5%')}</span>")
        self.causes_label.setText(" &nbsp;&nbsp; ".join(parts))
        self.causes_label.setToolTip("\n".join(cause_tip(c) for c in causes))
        self._fill_table(report, can_apply)
        self._stack.setCurrentIndex(1)

    def set_stale(self, text: str | None, can_apply: bool) -> None:
        """The banner over a report the design has moved on from (None: current); Apply only on a
        current one (applying a stale change would undo the edits made since)."""
        if text is not None:
            self.banner.setText(text)
        self.banner.setVisible(text is not None)
        for row in range(len(self.rows)):
            widget = self.table.cellWidget(row, COL_APPLY)
            if widget is not None:
                widget.setEnabled(can_apply)

    def advice(self) -> list:
        """The advice in table order (group header rows left out)."""
        return [a for a in self.rows if a is not None]

    def find(self, prefix: str):
        """The first applicable advice whose id starts with `prefix` (None: there is none)."""
        return next((a for a in self.advice() if a.id.startswith(prefix) and not a.error), None)

    def row_of(self, advice) -> int:
        """The table row of `advice`."""
        return self.rows.index(advice)

    # ---- the table ----
    def _fill_table(self, report: dict, can_apply: bool) -> None:
        ranked = report["ranked"]
        same = [a for a in ranked if a.fits_in_memory and a.category != "scale"]
        more = [a for a in ranked if a.fits_in_memory and a.category == "scale"]
        nofit = [a for a in ranked if not a.fits_in_memory]
        na = list(report.get("not_applicable", []))
        groups = [("Same GPUs, fastest first", same), ("Other GPU counts", more), ("Do not fit in memory", nofit),
                  ("Not applicable here", na)]
        table = self.table
        table.setUpdatesEnabled(False)
        table.clearSpans()
        table.setRowCount(0)
        self.rows = []
        table.setRowCount(sum(len(g) + 1 for _, g in groups if g))
        row = 0
        for title, group in groups:
            if not group:
                continue
            hint = ""
            if not row:
                cur = report["current"]
                hint = (f"   \u00b7   now {cur['step_time_s']:.3f} s, MFU {cur['mfu'] * 100:.1f}%"
                        "   \u00b7   Apply: one undo step")
            self._group_row(row, f"{title} ({len(group)}){hint}")
            self.rows.append(None)
            row += 1
            for advice in group:
                self._advice_row(row, advice, group is not na, can_apply)
                self.rows.append(advice)
                row += 1
        table.setUpdatesEnabled(True)

    def _group_row(self, row: int, text: str) -> None:
        item = Item(text)
        item.setFlags(Qt.ItemIsEnabled)
        font = QFont(item.font())
        font.setBold(True)
        item.setFont(font)
        item.setForeground(QBrush(QColor(AXIS)))
        item.setBackground(QBrush(QColor(GROUP_BG)))
        self.table.setItem(row, 0, item)
        self.table.setSpan(row, 0, 1, len(COLUMNS))

    def _advice_row(self, row: int, a, applicable: bool, can_apply: bool) -> None:
        right = Qt.AlignRight | Qt.AlignVCenter
        if applicable:
            cells = {COL_TITLE: Item(a.title), COL_STEP: Item(f"{a.step_time_s:.3f}", right),
                     COL_SPEEDUP: Item(f"{a.speedup * 100:+.1f}%", right),
                     COL_MFU: Item(f"{a.mfu * 100:.1f}%", right), COL_NOTE: Item(note_text(a.note)),
                     COL_COST: Item("\u2013" if a.tokens_per_usd_change is None
                                    else f"{a.tokens_per_usd_change * 100:+.1f}%", right)}
        else:
            cells = {COL_TITLE: Item(a.title), COL_NOTE: Item(note_text(a.error))}
            for col in (COL_STEP, COL_SPEEDUP, COL_MFU, COL_COST):
                cells[col] = Item("\u2013", right)
        faint = not applicable or "not the bottleneck" in a.note
        tip_text = _advice_tip(a, applicable)
        for col, item in cells.items():
            item.setData(ADVICE_ROLE, a.id)
            item.setToolTip(tip_text)
            if faint:
                item.setForeground(QBrush(QColor(MUTED)))
                font = QFont(item.font())
                font.setItalic(True)
                item.setFont(font)
            if applicable and not a.fits_in_memory:
                item.setBackground(QBrush(QColor(NOFIT_BG)))
            self.table.setItem(row, col, item)
        if applicable and not faint:
            if a.speedup >= NO_GAIN:
                cells[COL_SPEEDUP].setForeground(QBrush(QColor(FASTER)))
            elif a.speedup <= -NO_GAIN:
                cells[COL_SPEEDUP].setForeground(QBrush(QColor(SLOWER)))
            else:
                cells[COL_SPEEDUP].setForeground(QBrush(QColor(MUTED)))
        if applicable and not a.fits_in_memory:  # tinted row, the note in red
            cells[COL_NOTE].setForeground(QBrush(QColor(DOES_NOT_FIT)))
        if applicable:
            holder = apply_button(f"apply:{a.id}", tip_text, lambda _=False, a=a: self._apply(a), can_apply)
            self.table.setCellWidget(row, COL_APPLY, holder)
        else:
            self.table.setItem(row, COL_APPLY, Item(""))

    def _on_double_clicked(self, row: int, _col: int) -> None:
        if 0 <= row < len(self.rows) and self.rows[row] is not None and not self.rows[row].error:
            self._apply(self.rows[row])

    def _change_megatron_line(self, row: int) -> str | None:
        """The Megatron-LM line of the job with an Advisor change made (None on a heading row)."""
        from ...core.export.megatron_args import megatron_line
        from ...core.io.overrides import apply_overrides
        from ...core.model.catalog import default_catalog

        advice = self.rows[row] if row < len(self.rows) else None
        if advice is None or getattr(advice, "error", None) or self.qdoc.doc.spec.workload is None:
            return None
        changed = self.qdoc.doc.copy()  # the job after the change's --set assignments
        apply_overrides(changed, list(advice.set or []))
        return megatron_line(changed.spec.workload, changed.spec.parallelism, default_catalog().presets()).one_line()


def _rich_label(name: str) -> QLabel:
    label = QLabel()
    label.setObjectName(name)
    label.setTextFormat(Qt.RichText)
    label.setWordWrap(True)
    label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
    return label


def _advice_tip(a, applicable: bool) -> str:
    tip = [f"{a.title}  ({ADVICE_CATEGORY_NAMES.get(a.category, a.category)})"]
    if a.description:
        tip.append(a.description)
    if a.note or a.error:
        tip.append(a.note or a.error)
    if applicable and a.cost_note:  # "-1.8% speed, -14% fabric cost, +3.0% tokens/$"
        tip.append("cost: " + a.cost_note)
    if applicable:
        tip.append(f"memory per GPU {a.memory_gib:.1f} GiB" + ("" if a.fits_in_memory else ": does not fit"))
    if a.set:
        tip.append("CLI: " + evaluate_command(list(a.set)))
    if applicable:
        tip.append("Double-click or Apply: one undo step" + (" (a job edit)" if a.job_only else " (the whole design)"))
    return "\n".join(tip)
