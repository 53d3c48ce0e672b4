"""File > Compare With...: the open design (A) beside another file (B).

The dialog shows the figures of both in two columns with the differences (B - A and %, coloured
green where B is better for the buyer and red where it is worse; memory is neither), the
per-run figures first (goodput; cost per run and time to train with a token budget); its
headline is red, and says the comparison does not hold, when a side does not fit in memory
or fits only without the memory headroom. Both step-time breakdowns as one plot:
two stacked columns on one seconds scale (BreakdownPairChart, drawn with QPainter so that it
exports to PNG and SVG with Qt alone). The other file is loaded and evaluated, and the cost of
both estimated, on a thread of its own (a CallWorker); the dialog says so until it is done.
A is the evaluation the Breakdown panel shows. Export writes the table and the plot as one
picture (.png at 2x, .svg, .pdf).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import (
    QAbstractItemView, QDialog, QDialogButtonBox, QFileDialog, QHBoxLayout, QHeaderView, QLabel, QPushButton,
    QSizePolicy, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget,
)

from ..panels.plot_style import (
    CATEGORY_NAMES, FASTER, MUTED, SLOWER, TEXT, WAIT_CATEGORIES, category_color, hatch_brush, light,
)
from ..work.latest_worker import CallWorker, error_text

EXPORT_FILTER = "PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"


# ---- the work off the UI thread -------------------------------------------------------------------

def compare_with(doc_a, result_a, label_a: str, path_b: str):
    """Evaluate B exactly as `designer evaluate B` does and compare it with A (a Comparison)."""
    from ...cli import evaluate_file
    from ...cli.compare import evaluate_named
    from ...core.analysis.compare import column_labels, compare_designs

    doc_b, result_b = evaluate_named(path_b, evaluate_file)
    column_a, column_b = column_labels(label_a, path_b)  # paths when the names are alike
    return compare_designs(doc_a, result_a, doc_b, result_b, column_a, column_b)


# ---- the plot ----------------------------------------------------------------------------------------

def nice_step(span: float, ticks: int = 5) -> float:
    """A round tick spacing (1, 2 or 5 x 10^k) giving about `ticks` ticks over `span`."""
    if span <= 0:
        return 1.0
    raw = span / ticks
    base = 10 ** math.floor(math.log10(raw))
    return next(m * base for m in (1, 2, 5, 10) if m * base >= raw)


@dataclass(frozen=True)
class _ChartFrame:
    """Where a chart is drawn: its fonts, the plot (axis and columns) and the seconds scale."""

    font: QFont
    bold: QFont
    fm: QFontMetricsF
    line: float  # the height of a line of text
    plot: QRectF  # the axis labels and the columns
    area: QRectF  # the columns: 0 s at its bottom, top_value at its top
    top_value: float
    step: float  # between two ticks
    axis_w: float

    def y_of(self, v: float) -> float:
        return self.area.bottom() - v / self.top_value * self.area.height()


@dataclass(frozen=True)
class _LegendTable:
    """The legend's rows (category key, comparison row, name) and its column widths."""

    rows: list
    name_w: float
    num_w: float

    @property
    def width(self) -> float:
        return 18 + self.name_w + 12 + 2 * (self.num_w + 10)


class BreakdownPairChart(QWidget):
    """Both breakdowns as one plot: a stacked column per design on one seconds axis, the step time
    above each, and a legend giving each category's seconds in A and B."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.comparison = None
        self.setMinimumSize(420, 320)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)

    def sizeHint(self) -> QSize:
        return QSize(640, 480)

    def set_comparison(self, comparison) -> None:
        self.comparison = comparison
        self.update()

    def paintEvent(self, _event) -> None:
        painter = QPainter(self)
        painter.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing)
        painter.fillRect(self.rect(), Qt.white)
        self.paint(painter, QRectF(self.rect()))
        painter.end()

    def paint(self, p: QPainter, box: QRectF) -> None:
        """Title, seconds grid, the two columns, the step difference under them, the legend."""
        c = self.comparison
        if c is None:
            return
        font = QFont(self.font())
        font.setPointSizeF(9.5)
        p.setFont(font)
        fm = QFontMetricsF(font)
        bold = QFont(font)
        bold.setBold(True)
        legend = self._legend_table(c, fm)
        self._draw_title(p, box, font, bold, fm.height())
        frame = self._frame(c, box, font, bold, fm, legend.width)
        if frame is None:  # too small to draw a plot in
            return
        self._draw_grid(p, frame)
        for i, side in enumerate((c.a, c.b)):
            self._draw_column(p, frame, i, side)
        self._draw_step_difference(p, frame, c)
        self._draw_legend(p, box, frame, legend)

    @staticmethod
    def _legend_table(c, fm: QFontMetricsF) -> _LegendTable:
        parts, _ = c.shown(c.breakdown)
        rows = [(r.key.split(".", 1)[1], r) for r in parts]
        names = [CATEGORY_NAMES.get(k, k) for k, _ in rows]
        name_w = max([fm.horizontalAdvance(n) for n in names] + [fm.horizontalAdvance("category")])
        num_w = max([fm.horizontalAdvance(f"{v:.3f}") for _, r in rows for v in (r.a, r.b)]
                    + [fm.horizontalAdvance("B s")])
        return _LegendTable([(key, r, name) for (key, r), name in zip(rows, names)], name_w, num_w)

    @staticmethod
    def _draw_title(p: QPainter, box: QRectF, font: QFont, bold: QFont, line: float) -> None:
        p.setFont(bold)
        p.setPen(QColor(TEXT))
        title = "Step-time breakdown, side by side (critical path, one scale)"
        p.drawText(QRectF(box.left() + 8, box.top() + 6, box.width() - 16, line), Qt.AlignLeft, title)
        p.setFont(font)

    @staticmethod
    def _frame(c, box: QRectF, font: QFont, bold: QFont, fm: QFontMetricsF, legend_w: float) -> _ChartFrame | None:
        """The plot left of the legend, its seconds scale rounded up past the longer step."""
        line = fm.height()
        plot = QRectF(box.left() + 8, box.top() + 6 + line * 2.2, box.width() - 16 - legend_w - 16,
                      box.height() - 6 - line * 2.2 - line * 2.6)
        if plot.width() < 160 or plot.height() < 80:
            return None
        longest = max(c.a.step_time_s, c.b.step_time_s) or 1.0
        step = nice_step(longest)
        top_value = math.ceil(longest * 1.08 / step) * step
        axis_w = fm.horizontalAdvance(f"{top_value:g} s") + 10
        area = QRectF(plot.left() + axis_w, plot.top(), plot.width() - axis_w, plot.height())
        return _ChartFrame(font, bold, fm, line, plot, area, top_value, step, axis_w)

    @staticmethod
    def _draw_grid(p: QPainter, f: _ChartFrame) -> None:
        """A line and a label per tick of seconds, and the axis under the columns."""
        p.setPen(QPen(QColor("#e5e7eb"), 1))
        v = 0.0
        while v <= f.top_value + 1e-9:
            y = f.y_of(v)
            p.setPen(QPen(QColor("#e5e7eb"), 1))
            p.drawLine(QPointF(f.area.left(), y), QPointF(f.area.right(), y))
            p.setPen(QColor(MUTED))
            p.drawText(QRectF(f.plot.left(), y - f.line / 2, f.axis_w - 6, f.line), Qt.AlignRight | Qt.AlignVCenter,
                       f"{v:g} s")
            v += f.step
        p.setPen(QPen(QColor("#4b5563"), 1))
        p.drawLine(QPointF(f.area.left(), f.area.bottom()), QPointF(f.area.right(), f.area.bottom()))

    @staticmethod
    def _column_geometry(f: _ChartFrame) -> tuple[float, float]:
        col_w = min(f.area.width() / 4.2, 150.0)
        return col_w, (f.area.width() - 2 * col_w) / 3

    def _draw_column(self, p: QPainter, f: _ChartFrame, i: int, side) -> None:
        """Side `i` (A or B): its categories stacked, labelled where tall enough, the step time on
        top and the side's name under it."""
        col_w, gap = self._column_geometry(f)
        x = f.area.left() + gap + i * (col_w + gap)
        y = f.area.bottom()
        for key, value in side.breakdown_s.items():
            if value <= 0:
                continue
            h = value / f.top_value * f.area.height()
            rect = QRectF(x, y - h, col_w, h)
            color = category_color(key)
            if key in WAIT_CATEGORIES:
                p.fillRect(rect, light(color))
                p.fillRect(rect, hatch_brush(color))
            else:
                p.fillRect(rect, color)
            if h >= f.line * 1.1:
                share = value / side.step_time_s if side.step_time_s else 0.0
                label = f"{CATEGORY_NAMES.get(key, key)} {value:.3f} s ({share:.0%})"
                if f.fm.horizontalAdvance(label) > col_w - 6:
                    label = f"{value:.3f} s"
                p.setPen(QColor("white") if color.lightnessF() < 0.6 else QColor(TEXT))
                p.drawText(rect, Qt.AlignCenter, label)
            y -= h
        p.setPen(QColor(TEXT))
        p.setFont(f.bold)
        p.drawText(QRectF(x - gap / 2, y - f.line * 1.3, col_w + gap, f.line), Qt.AlignCenter,
                   f"{side.step_time_s:.3f} s")
        p.setFont(f.font)
        label = f.fm.elidedText(f"{'AB'[i]}: {side.label}", Qt.ElideMiddle, col_w + gap - 8)
        p.drawText(QRectF(x - gap / 2, f.area.bottom() + 4, col_w + gap, f.line), Qt.AlignCenter, label)

    @staticmethod
    def _draw_step_difference(p: QPainter, f: _ChartFrame, c) -> None:
        """B - A of the step time under the columns, green when B is faster, red when slower."""
        step_row = c.row("step_time_s")
        color = {"better": FASTER, "worse": SLOWER}.get(step_row.verdict, TEXT)
        p.setPen(QColor(color))
        diff = "no difference" if c.identical else f"B - A: {step_row.text_delta} s ({step_row.text_pct})"
        p.drawText(QRectF(f.area.left(), f.area.bottom() + 4 + f.line * 1.2, f.area.width(), f.line),
                   Qt.AlignCenter, diff)

    @staticmethod
    def _draw_legend(p: QPainter, box: QRectF, f: _ChartFrame, legend: _LegendTable) -> None:
        """Colour, category, A s, B s; B's figure coloured by its verdict."""
        line, name_w, num_w = f.line, legend.name_w, legend.num_w
        lx = box.right() - 8 - legend.width
        ly = f.plot.top()
        p.setFont(f.bold)
        p.setPen(QColor(MUTED))
        p.drawText(QRectF(lx + 18, ly, name_w, line), Qt.AlignLeft | Qt.AlignVCenter, "category")
        for j, head in enumerate(("A s", "B s")):
            p.drawText(QRectF(lx + 18 + name_w + 12 + j * (num_w + 10), ly, num_w, line),
                       Qt.AlignRight | Qt.AlignVCenter, head)
        p.setFont(f.font)
        ly += line * 1.4
        for key, r, name in legend.rows:
            color = category_color(key)
            swatch = QRectF(lx, ly + line / 2 - 6, 12, 12)
            if key in WAIT_CATEGORIES:
                p.fillRect(swatch, light(color))
                p.fillRect(swatch, hatch_brush(color))
            else:
                p.fillRect(swatch, color)
            p.setPen(QColor(TEXT))
            p.drawText(QRectF(lx + 18, ly, name_w, line), Qt.AlignLeft | Qt.AlignVCenter, name)
            for j, value in enumerate((r.a, r.b)):
                if j == 1 and r.verdict:
                    p.setPen(QColor(FASTER if r.verdict == "better" else SLOWER))
                p.drawText(QRectF(lx + 18 + name_w + 12 + j * (num_w + 10), ly, num_w, line),
                           Qt.AlignRight | Qt.AlignVCenter, f"{value:.3f}")
            ly += line * 1.35


# ---- the dialog ----------------------------------------------------------------------------------

class CompareDialog(QDialog):
    """Not modal: the design stays editable beside it (the comparison is of the moment it was asked)."""

    def __init__(self, parent, doc_a, result_a, label_a: str, path_b: str):
        super().__init__(parent)
        self.setObjectName("compare")
        self.path_b = path_b
        self.comparison = None
        self.error: str | None = None
        self.setWindowTitle(f"Compare: {Path(label_a).name} with {Path(path_b).name}")

        self.content = QWidget()  # what Export draws: the header, the table and the plot
        self.content.setAutoFillBackground(True)
        pal = self.content.palette()
        pal.setColor(self.content.backgroundRole(), QColor("white"))
        self.content.setPalette(pal)
        self.heading = QLabel()
        self.heading.setTextFormat(Qt.PlainText)
        self.heading.setWordWrap(True)
        self.summary = QLabel(f"evaluating {Path(path_b).name} (off the UI thread)...")
        self.summary.setObjectName("summary")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.PlainText)
        font = self.summary.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.1)
        self.summary.setFont(font)
        self.notes = QLabel()
        self.notes.setWordWrap(True)
        self.notes.setTextFormat(Qt.PlainText)
        self.notes.setStyleSheet(f"color: {MUTED};")
        self.table = QTableWidget(0, 5)
        self.table.setHorizontalHeaderLabels(["figure", "A", "B", "B - A", "%"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.ContiguousSelection)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.table.setWordWrap(True)
        self.table.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Expanding)
        self.table.horizontalHeader().sectionResized.connect(self._fit_table_height)
        self.chart = BreakdownPairChart()

        left = QVBoxLayout()
        left.addWidget(self.table, 1)  # grows up to its rows' height (_fit_table_height) ...
        left.addWidget(self.notes)
        left.addStretch(0)  # ... and the rest of the height stays empty below the notes
        body = QHBoxLayout()
        body.addLayout(left, 11)
        body.addWidget(self.chart, 10)
        inner = QVBoxLayout(self.content)
        inner.addWidget(self.heading)
        inner.addWidget(self.summary)
        inner.addLayout(body, 1)

        self.export_button = QPushButton("Export...")
        self.export_button.setToolTip("The table and the plot as one picture: PNG (2x), SVG or PDF")
        self.export_button.setEnabled(False)
        self.export_button.clicked.connect(lambda: self.export())
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.addButton(self.export_button, QDialogButtonBox.ActionRole)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.content, 1)
        layout.addWidget(buttons)

        # no Qt parent: the thread may outlive the dialog (its result is then dropped)
        self.worker = CallWorker("designer-compare")
        self.worker.done.connect(self._on_done)
        self.worker.call(lambda: compare_with(doc_a, result_a, label_a, path_b))

    def sizeHint(self) -> QSize:
        return QSize(1280, 720)

    # -- result --
    def _on_done(self, comparison, exc) -> None:
        if exc is not None:
            self.error = error_text(exc)
            self.summary.setText(f"cannot compare with {self.path_b}:\n{self.error}")
            self.summary.setStyleSheet(f"color: {SLOWER};")
            return
        self.show_comparison(comparison)

    def show_comparison(self, c) -> None:
        self.comparison = c
        self.heading.setText(f"A: {c.a.label}  ({c.a.name}, {c.a.num_gpus:,} GPUs)      "
                             f"B: {c.b.label}  ({c.b.name}, {c.b.num_gpus:,} GPUs)      differences are B - A")
        self.summary.setText(c.summary())
        # red when a side does not fit (or only without the memory headroom): the headline does not
        # hold; otherwise green when B is better for the buyer (cost per run first, not memory)
        headline = c.headline
        self.summary.setStyleSheet(f"color: {FASTER if headline == 'better' else SLOWER if headline in ('worse', 'invalid') else TEXT};")
        self.table.setHorizontalHeaderLabels(["figure", f"A: {c.a.label}", f"B: {c.b.label}", "B - A", "%"])
        rows, _ = c.shown(c.rows)
        parts, zero = c.shown(c.breakdown)
        self.table.setRowCount(0)
        for r in rows:
            self._add_row(r, r.label)
        self._add_heading("breakdown (critical path, s)")
        for r in parts:
            self._add_row(r, "   " + CATEGORY_NAMES.get(r.label, r.label))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeToContents)
        for col in (1, 2):
            header.setSectionResizeMode(col, QHeaderView.Stretch)
        for col in (3, 4):
            header.setSectionResizeMode(col, QHeaderView.ResizeToContents)
        self._fit_table_height()
        notes = list(c.notes)
        if zero:
            notes.append("zero in both: " + ", ".join(CATEGORY_NAMES.get(r.label, r.label) for r in zero))
        self.notes.setText("\n".join(notes))
        self.chart.set_comparison(c)
        self.export_button.setEnabled(True)

    def _fit_table_height(self, *_args) -> None:
        """As tall as its rows (no empty box below them); the notes follow right under it. Again
        whenever a column changes width, as wrapped cells then change height."""
        self.table.resizeRowsToContents()
        rows = sum(self.table.rowHeight(i) for i in range(self.table.rowCount()))
        self.table.setMaximumHeight(rows + self.table.horizontalHeader().height() + 2 * self.table.frameWidth() + 2)

    def _add_row(self, r, label: str) -> None:
        i = self.table.rowCount()
        self.table.insertRow(i)
        color = {"better": QColor(FASTER), "worse": QColor(SLOWER)}.get(r.verdict)
        for col, text in enumerate((label, r.text_a, r.text_b, r.text_delta, r.text_pct)):
            item = QTableWidgetItem(text)
            item.setTextAlignment((Qt.AlignLeft if col == 0 else Qt.AlignRight) | Qt.AlignVCenter)
            if col >= 3 and color is not None:
                item.setForeground(QBrush(color))
            if r.key == "fits_in_memory" and col in (1, 2) and text != "fits":  # this side's figures do not hold
                item.setForeground(QBrush(QColor(SLOWER)))
            if col == 0:
                item.setToolTip(r.key)
            self.table.setItem(i, col, item)

    def _add_heading(self, text: str) -> None:
        i = self.table.rowCount()
        self.table.insertRow(i)
        item = QTableWidgetItem(text)
        font = item.font()
        font.setBold(True)
        item.setFont(font)
        item.setBackground(QBrush(QColor("#f3f4f6")))
        self.table.setItem(i, 0, item)
        self.table.setSpan(i, 0, 1, 5)

    # -- export --
    def export(self, path: str | None = None) -> str | None:
        if self.comparison is None:
            return None
        if path is None:
            start = f"{Path(self.comparison.a.label).stem}-vs-{Path(self.comparison.b.label).stem}.png"
            path, _ = QFileDialog.getSaveFileName(self, "Export comparison", start, EXPORT_FILTER)
            if not path:
                return None
        from ..panels.plot_export import export_plot

        try:
            export_plot(self.content, path)
        except (OSError, ValueError) as exc:
            self.notes.setText(f"cannot export: {exc}")
            return None
        parent = self.parent()
        if parent is not None and hasattr(parent, "tell"):
            parent.tell(f"exported {path}")
        return path
