"""Where one training step goes: a stacked bar of the step, memory per GPU, the change since last time.

`BreakdownPanel.show_result(evaluation)` shows
- headline figures (step time, tokens/s, model TFLOP/s per GPU, MFU, HFU) as labels;
- the step of the critical device as one horizontal stacked bar, one segment per breakdown
  category (CATEGORY_COLORS), seconds and share written on the segments wide enough to hold them;
- memory per GPU as a second stacked bar against the accelerator's HBM (red when it does not fit);
- the difference from the previous result: "+3.1% step time: dp_comm exposed +0.40 s, compute -0.12 s".
`mark_stale(reason)` keeps the last valid result on screen under a banner saying why it is not
current (an invalid edit); `forget(message)` drops it, and the comparison, when another design opens.
`export(path)` writes the plots as PNG/SVG/PDF, or the numbers as CSV.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QRectF, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPen
from PySide6.QtWidgets import QGraphicsItem, QGridLayout, QLabel, QSizePolicy, QStackedLayout, QVBoxLayout, QWidget

from .plot_export import PLOT_FORMATS, export_plot, fmt_float, write_csv

# One colour per breakdown category, shared by every panel (the timeline derives its kinds' colours).
CATEGORY_COLORS: dict[str, str] = {
    "compute": "#2563eb",  # blue
    "recompute": "#93c5fd",  # light blue
    "tp_comm": "#7e22ce",  # purple
    "cp_comm": "#a78bfa",  # violet
    "ep_comm": "#ec4899",  # pink
    "pp_comm": "#0d9488",  # teal
    "dp_comm": "#f97316",  # orange
    "bubble": "#9ca3af",  # grey
    "imbalance_wait": "#dc2626",  # red
    "optimizer": "#16a34a",  # green
}
CATEGORY_NAMES: dict[str, str] = {
    "compute": "compute", "recompute": "recompute", "tp_comm": "TP comm", "cp_comm": "CP comm",
    "ep_comm": "EP comm", "pp_comm": "PP comm", "dp_comm": "DP comm", "bubble": "bubble",
    "imbalance_wait": "imbalance wait", "optimizer": "optimizer",
}
COMM_CATEGORIES = ("tp_comm", "cp_comm", "ep_comm", "pp_comm", "dp_comm")
# Waiting categories are drawn hatched, here and on the timeline.
WAIT_CATEGORIES = ("bubble", "imbalance_wait")

MEMORY_COLORS: dict[str, str] = {
    "params": "#1e3a8a",
    "grads": "#60a5fa",
    "optimizer": "#16a34a",
    "activations": "#f59e0b",
    "temporaries": "#fcd34d",
}
MEMORY_NAMES = {"params": "parameters", "grads": "gradients", "optimizer": "optimizer state",
                "activations": "activations", "temporaries": "temporaries"}

TEXT = "#1f2937"
MUTED = "#6b7280"
AXIS = "#4b5563"
FITS = "#374151"
DOES_NOT_FIT = "#dc2626"
FASTER = "#15803d"
SLOWER = "#b91c1c"
BAR_HEIGHT = 0.62
COMPACT_WIDTH = 760  # a panel narrower or lower than this (pixels) is laid out compactly
COMPACT_HEIGHT = 420
COMPACT_CAPTIONS = {"step": "step", "tokens": "tokens/s", "tflops": "TFLOP/s/GPU", "mfu": "MFU", "hfu": "HFU",
                    "memory": "memory"}
FALLBACK_COLORS = ("#64748b", "#0891b2", "#be185d", "#a16207", "#4d7c0f", "#7c2d12")
# The banner over a result that is no longer the design's (amber: a warning, not a failure).
STALE_STYLE = ("QLabel { background: #fef3c7; color: #78350f; border: 1px solid #f59e0b; border-radius: 3px; "
               "padding: 3px 6px; }")


def stale_banner() -> QLabel:
    """A wrapped label that shows its whole text; its tooltip holds every problem."""
    banner = QLabel()
    banner.setObjectName("stale")
    banner.setWordWrap(True)
    banner.setTextFormat(Qt.PlainText)
    banner.setStyleSheet(STALE_STYLE)
    banner.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)  # wraps to the panel, never widens it
    banner.hide()
    return banner


def stale_text(reason: str) -> str:
    return f"showing the last valid result: {reason}"


def category_color(key: str) -> QColor:
    """The category's colour; an unknown category gets a stable fallback."""
    if key in CATEGORY_COLORS:
        return QColor(CATEGORY_COLORS[key])
    return QColor(FALLBACK_COLORS[sum(map(ord, key)) % len(FALLBACK_COLORS)])


def hatch_brush(color: QColor) -> QBrush:
    """Diagonal hatching in a darker shade of `color` (drawn over a light fill of it)."""
    return QBrush(QColor(color).darker(150), Qt.BDiagPattern)


def light(color: QColor, alpha: int = 110) -> QColor:
    c = QColor(color)
    c.setAlpha(alpha)
    return c


def style_axis(axis: pg.AxisItem, size_pt: float = 9.0) -> None:
    axis.setPen(pg.mkPen(AXIS))
    axis.setTextPen(pg.mkPen(TEXT))
    font = QFont()
    font.setPointSizeF(size_pt)
    axis.setStyle(tickFont=font)
    axis.label.setFont(font)


class Swatch(pg.ItemSample):
    """A legend sample: a filled square in the item's colour, hatched for waits."""

    def __init__(self, item, color: QColor, hatched: bool = False, thin: bool = False):
        super().__init__(item)
        self._color = QColor(color)
        self._hatched = hatched
        self._thin = thin
        self.setFixedHeight(16)  # legend rows a little tighter than pyqtgraph's 20 px

    def boundingRect(self):
        return QRectF(0, 0, 20, 16)

    def paint(self, p, *args):
        if not self.item.isVisible():
            p.setPen(pg.mkPen("#9ca3af"))
            p.setBrush(Qt.NoBrush)
            p.drawRect(QRectF(3, 2, 14, 12))
            return
        rect = QRectF(3, 9, 14, 5) if self._thin else QRectF(3, 2, 14, 12)
        p.setPen(Qt.NoPen)
        p.setBrush(light(self._color, 120) if (self._hatched or self._thin) else self._color)
        p.drawRect(rect)
        if self._hatched:
            p.setBrush(hatch_brush(self._color))
            p.drawRect(rect)
            pen = QPen(self._color.darker(140), 1)
            pen.setCosmetic(True)
            p.setPen(pen)
            p.setBrush(Qt.NoBrush)
            p.drawRect(rect)

    def mouseClickEvent(self, event):  # the legend only explains; it does not hide bars here
        event.accept()


class FlexibleLabel(pg.LabelItem):
    """A LabelItem that never makes its layout wider than the view (long text is cut at the edge)."""

    def updateMin(self):
        super().updateMin()
        self.setMinimumWidth(0)


def make_legend(columns: int) -> pg.LegendItem:
    """A legend laid out in rows (it sits in its own layout cell, never over the data)."""
    legend = pg.LegendItem(colCount=columns, labelTextColor=TEXT, labelTextSize="9pt", horSpacing=4, frame=False)
    legend.layout.setContentsMargins(4, 0, 4, 0)
    # pyqtgraph keeps a legend at screen size over a view; in a layout cell it must scale with an export
    legend.setFlag(QGraphicsItem.ItemIgnoresTransformations, False)
    return legend


def fit_legend(legend: pg.LegendItem, width: float) -> None:
    """As many columns as fit in `width` pixels (entries fill the rows left to right)."""
    entries = [(sample.boundingRect().width(), label.item.boundingRect().width()) for sample, label in legend.items]
    if not entries:
        return
    gap_in, gap_out = 4.0, 20.0
    columns = 1
    for n in range(len(entries), 0, -1):
        widths = [0.0] * n
        for i, (a, b) in enumerate(entries):
            widths[i % n] = max(widths[i % n], a + gap_in + b + gap_out)
        if sum(widths) + 8 <= width:
            columns = n
            break
    legend.setColumnCount(columns)
    for c in range(2 * columns):
        legend.layout.setColumnSpacing(c, gap_in if c % 2 == 0 else gap_out)


def seconds_text(s: float) -> str:
    if abs(s) >= 10:
        return f"{s:.1f} s"
    if abs(s) >= 0.1:
        return f"{s:.2f} s"
    return f"{s * 1e3:.1f} ms"


def delta_text(d: float) -> str:
    """A signed change: "+0.40 s", "-3.2 ms"."""
    if abs(d) >= 0.00995:
        return f"{d:+.2f} s"
    return f"{d * 1e3:+.1f} ms"


@dataclass(frozen=True)
class ShownBefore:
    """What the change line needs of the result shown before: its step and categories, not the result
    itself (its per-link arrays are ~30 MB at 131k GPUs, kept for nothing until the next result)."""

    step_time_s: float
    breakdown_s: dict
    job: str | None = None  # with several jobs: whose result it was (a change is only ever of one job)

    @classmethod
    def of(cls, result, job: str | None = None) -> "ShownBefore | None":
        return None if result is None else cls(float(result.step_time_s), dict(result.breakdown_s), job)


def diff_results(previous, current) -> str:
    """"+3.1% step time: dp_comm exposed +0.40 s, compute -0.12 s" (the two largest category changes)."""
    if previous is None:
        return "first evaluation"
    before, after = previous.step_time_s, current.step_time_s
    pct = (after - before) / before * 100.0 if before > 0 else 0.0
    head = f"{pct:+.1f}% step time"
    keys = list(dict.fromkeys([*current.breakdown_s, *previous.breakdown_s]))
    changes = [(current.breakdown_s.get(k, 0.0) - previous.breakdown_s.get(k, 0.0), k) for k in keys]
    threshold = max(1e-6, 1e-5 * max(before, after))  # below this a change is rounding noise
    changes = sorted((c for c in changes if abs(c[0]) >= threshold), key=lambda c: -abs(c[0]))
    if not changes:
        return head + ": no category changed"
    parts = [f"{k}{' exposed' if k in COMM_CATEGORIES else ''} {delta_text(d)}" for d, k in changes[:2]]
    return head + ": " + ", ".join(parts)


def hbm_of(result) -> float | None:
    """The accelerator's HBM in GiB, from the catalog (None when it is not known)."""
    name = (result.plan or {}).get("accelerator")
    if not name:
        return None
    try:
        from ...core.model import default_catalog

        return float(default_catalog().accelerator(name).hbm_gib)
    except Exception:  # a custom accelerator the catalog does not know: no HBM line
        return None


class _BarPlot(pg.PlotItem):
    """A one-bar plot: no mouse interaction, no menu, no auto-range button."""

    def __init__(self, label: str, units: str):
        super().__init__()
        self.setMenuEnabled(False)
        self.hideButtons()
        self.setMouseEnabled(x=False, y=False)
        self.vb.setMenuEnabled(False)
        self.vb.setDefaultPadding(0.0)
        self.setLabel("bottom", label, units=units)
        for name in ("left", "bottom"):
            style_axis(self.getAxis(name))
        self.getAxis("left").setWidth(86)
        self.getAxis("left").setTicks([[(0.0, "")]])
        self.setYRange(-0.55, 0.55, padding=0)
        self.setMinimumHeight(64)  # the bar keeps its room; a legend is cut first


class BreakdownPanel(QWidget):
    """The step breakdown of one evaluation and how it changed since the previous one."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.result = None
        self.previous = None
        self.job: str | None = None  # with several jobs: whose result is shown
        self.revision: int | None = None  # the document revision of the result shown (set by the window)
        self.hbm_gib: float | None = None
        self._diff = "first evaluation"
        self._segments: dict[str, tuple[float, float]] = {}  # category -> (x0, width) seconds
        self._memory_segments: dict[str, tuple[float, float]] = {}
        self._labels: list[tuple[pg.TextItem, list[str], float, pg.PlotItem]] = []
        # what is drawn, so that a result of the same categories only moves it (_move_segments)
        self._step_shape = self._memory_shape = None
        self._step_items: list[list[pg.BarGraphItem]] = []
        self._memory_items: list[list[pg.BarGraphItem]] = []
        self._memory_outline = self._memory_total = None
        self._legend_texts: dict[int, list[tuple[str, str]]] = {}  # per legend: (with value, name only)
        self._compact = False

        self.headline: dict[str, QLabel] = {}
        # headline figures in a grid that takes fewer columns when the panel is narrow (docked)
        self._headline_box = QWidget()
        self._headline_grid = QGridLayout(self._headline_box)
        self._headline_grid.setContentsMargins(0, 0, 0, 0)
        self._headline_grid.setHorizontalSpacing(28)
        self._headline_grid.setVerticalSpacing(2)
        self._headline_columns = 0
        # its width follows the panel (the grid reflows), so it never forces a docked panel wider
        self._headline_box.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        for key, caption in (("step", "step time"), ("tokens", "tokens/s"), ("tflops", "model TFLOP/s per GPU"),
                             ("mfu", "MFU"), ("hfu", "HFU"), ("memory", "memory per GPU")):
            label = QLabel()
            label.setTextFormat(Qt.RichText)
            label.setObjectName(f"headline_{key}")
            label.setProperty("caption", caption)
            self.headline[key] = label
        self._reflow_headline(len(self.headline))
        self.diff_label = QLabel("first evaluation")
        self.diff_label.setObjectName("diff")
        self.diff_label.setWordWrap(True)
        # What the engine says it approximates or what the plan does badly (a TP group past its
        # NVLink domain): beside the figures it qualifies, amber as a warning, not a failure
        self.warnings_label = QLabel()
        self.warnings_label.setObjectName("warnings")
        self.warnings_label.setWordWrap(True)
        self.warnings_label.setTextFormat(Qt.PlainText)
        self.warnings_label.setStyleSheet(STALE_STYLE)
        self.warnings_label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.warnings_label.hide()
        self.hidden_label = QLabel()
        self.hidden_label.setObjectName("hidden_comm")
        self.hidden_label.setStyleSheet(f"color: {MUTED}")
        self.hidden_label.setWordWrap(True)

        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("w")
        self.graphics.setMinimumHeight(160)
        self.graphics.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        ci = self.graphics.ci
        ci.setContentsMargins(6, 4, 14, 4)
        ci.setSpacing(2)
        self.title = FlexibleLabel("", color=TEXT, size="10pt", justify="left")
        ci.addItem(self.title, row=0, col=0)
        self.step_plot = _BarPlot("step time", "s")
        ci.addItem(self.step_plot, row=1, col=0)
        self.step_legend = make_legend(10)
        ci.addItem(self.step_legend, row=2, col=0)
        self.memory_plot = _BarPlot("memory per GPU", "GiB")
        self.memory_plot.getAxis("bottom").enableAutoSIPrefix(False)
        ci.addItem(self.memory_plot, row=3, col=0)
        self.memory_legend = make_legend(6)
        ci.addItem(self.memory_legend, row=4, col=0)
        ci.layout.setRowStretchFactor(1, 3)
        ci.layout.setRowStretchFactor(3, 2)
        self.hbm_line: pg.InfiniteLine | None = None
        self.graphics.installEventFilter(self)  # legends take as many columns as the width allows
        for plot in (self.step_plot, self.memory_plot):
            plot.vb.sigResized.connect(self._place_labels)
            plot.vb.sigXRangeChanged.connect(self._place_labels)
        self.graphics.scene().sigMouseMoved.connect(self._on_mouse_moved)

        content = QWidget()
        column = QVBoxLayout(content)
        column.setContentsMargins(8, 6, 8, 4)
        column.setSpacing(4)
        self.stale_banner = stale_banner()
        column.addWidget(self.stale_banner)
        column.addWidget(self._headline_box)
        column.addWidget(self.diff_label)
        column.addWidget(self.warnings_label)
        column.addWidget(self.hidden_label)
        column.addWidget(self.graphics, 1)
        self.message = QLabel("no result yet")
        self.message.setObjectName("message")
        self.message.setAlignment(Qt.AlignCenter)
        self.message.setWordWrap(True)
        self.message.setStyleSheet(f"color: {MUTED}; font-size: 12pt")
        self._stack = QStackedLayout(self)
        self._stack.addWidget(self.message)
        self._stack.addWidget(content)
        self._stack.setCurrentWidget(self.message)

    # The panel's size never depends on the figures shown: a new result must not re-layout the
    # window around it (a docked panel that grows on every evaluation would resize the canvas).
    def sizeHint(self) -> QSize:
        return QSize(640, 340)

    def minimumSizeHint(self) -> QSize:
        return QSize(280, 240)

    def hasHeightForWidth(self) -> bool:
        return False

    def eventFilter(self, watched, event) -> bool:
        if watched is self.graphics and event.type() == QEvent.Resize:
            self._fit_legends(event.size())
        return super().eventFilter(watched, event)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._update_density()

    def _reflow_headline_for(self, width: int) -> None:
        widest = max(label.sizeHint().width() for label in self.headline.values()) + \
            self._headline_grid.horizontalSpacing()
        self._reflow_headline(max(1, min(len(self.headline), (width - 16) // max(widest, 1))))

    def _reflow_headline(self, columns: int) -> None:
        if columns == self._headline_columns:
            return
        self._headline_columns = columns
        grid = self._headline_grid
        for label in self.headline.values():
            grid.removeWidget(label)
        for c in range(grid.columnCount()):
            grid.setColumnStretch(c, 0)
        for i, label in enumerate(self.headline.values()):
            grid.addWidget(label, i // columns, i % columns, Qt.AlignLeft | Qt.AlignTop)
        grid.setColumnStretch(columns, 1)  # the figures stay packed to the left

    def _fit_legends(self, size: QSize | None = None) -> None:
        size = self.graphics.size() if size is None else size
        for legend in (self.step_legend, self.memory_legend):
            fit_legend(legend, size.width() - 30)

    def _update_density(self) -> None:
        """A small panel (docked) gets one-line headline figures, no plot title, legends without
        values and no overlap line, so the bars keep their room."""
        compact = self.width() < COMPACT_WIDTH or self.height() < COMPACT_HEIGHT
        if compact != self._compact:
            self._compact = compact
            self.title.setVisible(not compact)
            self.title.setMaximumHeight(0 if compact else 10_000)
            self.hidden_label.setVisible(not compact)
            # the memory legend and the axis titles go: segment labels and tooltips name the parts
            self.memory_legend.setVisible(not compact)
            self.memory_legend.setMaximumHeight(0 if compact else 10_000)
            for plot in (self.step_plot, self.memory_plot):
                plot.showLabel("bottom", not compact)
            for legend in (self.step_legend, self.memory_legend):
                for (_, label), (text, short) in zip(legend.items, self._legend_texts.get(id(legend), [])):
                    label.setText(short if compact else text)
            self._headline_grid.setHorizontalSpacing(16 if compact else 28)
            self._render_headline()
            self._headline_columns = 0  # the figures' widths changed
        self._reflow_headline_for(self.width())

    # ---- public -----------------------------------------------------------------------------

    def show_result(self, result, hbm_gib: float | None = None, job: str | None = None) -> None:
        """Show `result` (an Evaluation; `job`: whose, with several jobs); the difference is taken from
        the result of the same job shown before, never another job's."""
        if result is None:
            self.clear("no result")
            return
        before = ShownBefore.of(self.result, self.job)
        self.previous = before if before is not None and before.job == job else None
        self.result, self.job = result, job
        self.memory_plot.setLabel("bottom", f"memory per GPU: job {job}" if job else "memory per GPU", units="GiB")
        self.stale_banner.hide()
        self.hbm_gib = hbm_gib if hbm_gib is not None else hbm_of(result)
        self._diff = diff_results(self.previous, result)
        self._show_headline(result)
        self._show_diff()
        self._show_warnings(result)
        self._show_hidden(result)
        self._draw_step(result)
        self._draw_memory(result)
        self._stack.setCurrentIndex(1)
        self._update_density()
        self._fit_legends()
        self._place_labels()

    def clear(self, message: str = "no result") -> None:
        """Show `message` instead of a result (the last result is kept for the next difference)."""
        self.message.setText(message)
        self.stale_banner.hide()
        self._stack.setCurrentWidget(self.message)

    def mark_stale(self, reason: str, details: str = "") -> bool:
        """Keep the last valid result on screen under a banner with the reason it is not current.

        False (and `reason` shown instead) when there is no result to keep."""
        if self.result is None:
            self.clear(reason)
            return False
        self.stale_banner.setText(stale_text(reason))
        self.stale_banner.setToolTip(details or reason)
        self.stale_banner.show()
        self._stack.setCurrentIndex(1)
        return True

    def is_stale(self) -> bool:
        return self.result is not None and not self.stale_banner.isHidden()

    def forget(self, message: str = "no result") -> None:
        """Another design: no result, nothing to compare the next one with."""
        self.result = self.previous = self.job = None
        self._diff = "first evaluation"
        self.clear(message)

    def diff_text(self) -> str:
        return self._diff

    def segments(self) -> dict[str, tuple[float, float]]:
        """Drawn step segments: category -> (start, width) in seconds."""
        return dict(self._segments)

    def memory_segments(self) -> dict[str, tuple[float, float]]:
        return dict(self._memory_segments)

    def export(self, path: str | os.PathLike) -> Path:
        """.png / .svg / .pdf: the plots; .csv: category,seconds,share,gib_per_gpu.

        CSV rows: one per breakdown category (seconds and share of the step), "step_time",
        then "memory:<part>" rows (GiB per GPU, share of the total) and "memory:hbm".
        """
        target = Path(path)
        if self.result is None:
            raise ValueError("nothing to export: no result is shown")
        if target.suffix.lower() == ".csv":
            return write_csv(target, ("category", "seconds", "share", "gib_per_gpu"), self._csv_rows())
        if target.suffix.lower() not in PLOT_FORMATS:
            raise ValueError(f"cannot export to {target.name!r}: unknown extension {target.suffix or '(none)'!r}; "
                             f"use one of {', '.join(PLOT_FORMATS + ('.csv',))}")
        return export_plot(self.graphics, target)

    # ---- drawing ----------------------------------------------------------------------------

    def _show_headline(self, r) -> None:
        mem = r.memory_gib_per_gpu.get("total", 0.0)
        self._headline_values = {
            "step": f"{r.step_time_s:.3f} s",
            "tokens": f"{r.tokens_per_s:,.0f}",
            "tflops": f"{r.model_tflops_per_gpu:.1f}",
            "mfu": f"{r.mfu:.1%}",
            "hfu": f"{r.hfu:.1%}",
            "memory": f"{mem:.1f}" + (f" / {self.hbm_gib:.1f} GiB" if self.hbm_gib else " GiB"),
        }
        self._headline_fits = r.fits_in_memory
        self._render_headline()

    def _render_headline(self) -> None:
        """Caption above a large figure; in a small panel, caption and figure on one line."""
        values = getattr(self, "_headline_values", None)
        if not values:
            return
        for key, label in self.headline.items():
            caption = label.property("caption")
            fits = key != "memory" or self._headline_fits
            color = TEXT if fits else DOES_NOT_FIT
            suffix = "" if fits else " (does not fit)"
            if self._compact:
                label.setText(f"<span style='color:{MUTED}'>{COMPACT_CAPTIONS.get(key, caption)}</span> "
                              f"<span style='color:{color}; font-weight:600'>{values[key]}</span>"
                              f"<span style='color:{DOES_NOT_FIT}'>{suffix}</span>")
            else:
                label.setText(f"<span style='color:{MUTED}; font-size:9pt'>{caption}</span><br>"
                              f"<span style='color:{color}; font-size:15pt; font-weight:600'>{values[key]}</span>"
                              f"<span style='color:{DOES_NOT_FIT}; font-size:9pt'>{suffix}</span>")
            label.setToolTip(f"{caption}: {values[key]}{suffix}")

    def _show_diff(self) -> None:
        text = self._diff
        of = f" of job {self.job}" if self.job else ""
        if self.previous is None:
            self.diff_label.setText(f"<span style='color:{MUTED}'>change: first evaluation{of}</span>")
            return
        delta = self.result.step_time_s - self.previous.step_time_s
        color = SLOWER if delta > 0 else FASTER if delta < 0 else MUTED
        self.diff_label.setText(f"<span style='color:{MUTED}'>change since the previous evaluation{of} "
                                f"({self.previous.step_time_s:.3f} s):</span> "
                                f"<span style='color:{color}; font-weight:600'>{text}</span>")

    def _show_warnings(self, r) -> None:
        warnings = list(getattr(r, "warnings", None) or [])
        self.warnings_label.setText("\n".join(f"warning: {w}" for w in warnings))
        self.warnings_label.setVisible(bool(warnings))

    def _show_hidden(self, r) -> None:
        parts = [f"{CATEGORY_NAMES.get(k, k)} {seconds_text(v)}" for k, v in r.hidden_comm_s.items() if v > 0]
        self.hidden_label.setText("overlapped with compute (not in the step): " + ", ".join(parts)
                                  if parts else "no communication is overlapped with compute")
        self.diff_label.setToolTip(self.hidden_label.text())

    def _clear_plot(self, plot: pg.PlotItem, legend: pg.LegendItem) -> None:
        plot.clear()
        legend.clear()
        self._legend_texts[id(legend)] = []
        self._labels = [entry for entry in self._labels if entry[3] is not plot]

    def _draw_step(self, r) -> None:
        step = r.step_time_s
        segments, x = [], 0.0
        for key, value in r.breakdown_s.items():
            if value <= 0:
                continue
            share = value / step if step > 0 else 0.0
            name = CATEGORY_NAMES.get(key, key)
            figures = f"{seconds_text(value)} · {share:.1%}"
            texts = [f"{name}\n{figures}", f"{name} {figures}", f"{seconds_text(value)}\n{share:.1%}", figures,
                     f"{share:.0%}"]
            segments.append((key, x, value, texts, f"{name} {seconds_text(value)}", name))
            x += value
        self._segments = {key: (x0, value) for key, x0, value, *_ in segments}
        shape = tuple(key for key, *_ in segments)
        if shape and shape == self._step_shape:  # the same categories (most edits): move and relabel them
            self._move_segments(self.step_plot, self.step_legend, self._step_items, segments)
        else:
            self._step_shape = shape
            self._step_items = []
            self._clear_plot(self.step_plot, self.step_legend)
            for key, x0, value, texts, legend_text, name in segments:
                color = category_color(key)
                hatched = key in WAIT_CATEGORIES
                bar = pg.BarGraphItem(x0=[x0], width=[value], y=[0.0], height=[BAR_HEIGHT],
                                      brush=light(color, 150) if hatched else color,
                                      pen=pg.mkPen(QColor("#ffffff"), width=1))
                self.step_plot.addItem(bar)
                bars = [bar]
                if hatched:
                    bars.append(pg.BarGraphItem(x0=[x0], width=[value], y=[0.0], height=[BAR_HEIGHT],
                                                brush=hatch_brush(color), pen=pg.mkPen(color.darker(140))))
                    self.step_plot.addItem(bars[-1])
                self._step_items.append(bars)
                self._add_label(self.step_plot, x0 + value / 2, value, texts,
                                light_text=color.lightness() < 150 and not hatched)
                self._add_legend(self.step_legend, Swatch(bar, color, hatched), legend_text, name)
        self.step_plot.setXRange(-0.004 * max(step, 1e-9), max(step, 1e-9) * 1.005, padding=0)
        self.step_plot.getAxis("left").setTicks([[(0.0, "step")]])
        crit = r.devices.get(r.critical_device, {}) if r.devices else {}
        where = f"stage {crit['stage']} gpu{r.critical_device}" if "stage" in crit else f"gpu{r.critical_device}"
        plan = r.plan or {}
        shape = " ".join(f"{k.upper()}{plan[k]}" for k in ("tp", "pp", "cp", "ep", "dp") if plan.get(k, 1) != 1)
        self.title.setText((f"Job {self.job}: " if self.job else "") + f"Step time {r.step_time_s:.3f} s on the critical device ({where}) · {r.num_gpus:,} GPUs"
                           + (f" · {shape}" if shape else "") + f" · MFU {r.mfu:.1%}")

    def _draw_memory(self, r) -> None:
        mem = r.memory_gib_per_gpu
        total = mem.get("total", sum(v for k, v in mem.items() if k != "total"))
        order = [k for k in MEMORY_COLORS if k in mem] + [k for k in mem if k not in MEMORY_COLORS and k != "total"]
        shape = (tuple(k for k in order if mem[k] > 0), self.hbm_gib, r.fits_in_memory)
        if shape[0] and shape == self._memory_shape:  # the same parts, HBM and fit: move and relabel them
            segments, x = [], 0.0
            for key in shape[0]:
                value, name = mem[key], MEMORY_NAMES.get(key, key)
                segments.append((key, x, value, [f"{name}\n{value:.1f} GiB", f"{name} {value:.1f} GiB",
                                                 f"{value:.1f} GiB", f"{value:.1f}"], f"{name} {value:.1f} GiB", name))
                x += value
            self._memory_segments = {key: (x0, value) for key, x0, value, *_ in segments}
            self._move_segments(self.memory_plot, self.memory_legend, self._memory_items, segments)
            if self._memory_outline is not None:
                self._memory_outline.setOpts(width=[max(total, 1e-9)])
            self._memory_total.setText(f"  {total:.1f} GiB")
            self._memory_total.setPos(total, 0.0)
            extent = max(total, self.hbm_gib or 0.0, 1e-9)
            self.memory_plot.setXRange(-0.004 * extent, extent * 1.1, padding=0)
            return
        self._memory_shape = shape
        self._memory_items = []
        self._memory_outline = None
        self._clear_plot(self.memory_plot, self.memory_legend)
        self._memory_segments = {}
        x = 0.0
        for key in order:
            value = mem[key]
            if value <= 0:
                continue
            color = QColor(MEMORY_COLORS.get(key, FALLBACK_COLORS[len(self._memory_segments) % 6]))
            bar = pg.BarGraphItem(x0=[x], width=[value], y=[0.0], height=[BAR_HEIGHT], brush=color,
                                  pen=pg.mkPen(QColor("#ffffff"), width=1))
            self.memory_plot.addItem(bar)
            self._memory_items.append([bar])
            self._memory_segments[key] = (x, value)
            name = MEMORY_NAMES.get(key, key)
            self._add_label(self.memory_plot, x + value / 2, value,
                            [f"{name}\n{value:.1f} GiB", f"{name} {value:.1f} GiB", f"{value:.1f} GiB", f"{value:.1f}"],
                            light_text=color.lightness() < 150)
            self._add_legend(self.memory_legend, Swatch(bar, color), f"{name} {value:.1f} GiB", name)
            x += value
        hbm = self.hbm_gib
        color = QColor(FITS if r.fits_in_memory else DOES_NOT_FIT)
        if hbm:
            line = pg.InfiniteLine(pos=hbm, angle=90, movable=False, pen=pg.mkPen(color, width=2, style=Qt.DashLine),
                                   label=f"HBM {hbm:.1f} GiB" + ("" if r.fits_in_memory else " — does not fit"),
                                   labelOpts={"position": 0.97, "anchors": [(1, 0), (1, 0)], "color": color})
            self.memory_plot.addItem(line)
            self.hbm_line = line
        else:
            self.hbm_line = None
        if not r.fits_in_memory:
            outline = pg.BarGraphItem(x0=[0.0], width=[max(total, 1e-9)], y=[0.0], height=[BAR_HEIGHT],
                                      brush=QBrush(Qt.NoBrush), pen=pg.mkPen(DOES_NOT_FIT, width=2))
            self.memory_plot.addItem(outline)
            self._memory_outline = outline
        extent = max(total, hbm or 0.0, 1e-9)
        self.memory_plot.setXRange(-0.004 * extent, extent * 1.1, padding=0)
        self.memory_plot.setYRange(-0.45, 0.8, padding=0)  # room above the bar for the HBM label
        self.memory_plot.getAxis("left").setTicks([[(0.0, "per GPU")]])
        total_label = pg.TextItem(f"  {total:.1f} GiB", color=DOES_NOT_FIT if not r.fits_in_memory else TEXT,
                                  anchor=(0, 0.5))
        total_label.setPos(total, 0.0)
        self.memory_plot.addItem(total_label)
        self._memory_total = total_label

    def _move_segments(self, plot, legend, items, segments) -> None:
        """Drawn segments of the same categories as before: new positions, widths and texts (a redraw
        of the bars, labels and legend costs ~50 ms, this a few)."""
        labels = [entry for entry in self._labels if entry[3] is plot]
        others = [entry for entry in self._labels if entry[3] is not plot]
        texts_of = []
        for (key, x0, value, texts, legend_text, short), bars, (item, *_), (_, label) in zip(
                segments, items, labels, legend.items):
            for bar in bars:
                bar.setOpts(x0=[x0], width=[value])
            item.setPos(x0 + value / 2, 0.0)
            others.append((item, texts, value, plot))
            label.setText(short if self._compact else legend_text)
            texts_of.append((legend_text, short))
        self._labels = others
        self._legend_texts[id(legend)] = texts_of

    def segment_at(self, plot: pg.PlotItem, x: float) -> str | None:
        """The category (step plot) or memory part (memory plot) drawn at `x`."""
        segments = self._segments if plot is self.step_plot else self._memory_segments
        for key, (x0, width) in segments.items():
            if x0 <= x <= x0 + width:
                return key
        return None

    def _on_mouse_moved(self, scene_pos) -> None:
        text = ""
        for plot in (self.step_plot, self.memory_plot):
            if self.result is None or not plot.vb.sceneBoundingRect().contains(scene_pos):
                continue
            point = plot.vb.mapSceneToView(scene_pos)
            key = self.segment_at(plot, point.x()) if abs(point.y()) <= BAR_HEIGHT / 2 else None
            if key is None:
                continue
            if plot is self.step_plot:
                value = self.result.breakdown_s[key]
                share = value / self.result.step_time_s if self.result.step_time_s > 0 else 0.0
                text = f"{CATEGORY_NAMES.get(key, key)}: {value:.3f} s, {share:.1%} of the step"
                hidden = self.result.hidden_comm_s.get(key, 0.0)
                if hidden > 0:
                    text += f"\n{seconds_text(hidden)} more overlapped with compute (not in the step)"
            else:
                value = self.result.memory_gib_per_gpu[key]
                text = f"{MEMORY_NAMES.get(key, key)}: {value:.2f} GiB per GPU"
        self.graphics.setToolTip(text)

    def _add_legend(self, legend: pg.LegendItem, sample: Swatch, text: str, short: str) -> None:
        legend.addItem(sample, short if self._compact else text)
        self._legend_texts.setdefault(id(legend), []).append((text, short))

    def _add_label(self, plot, x: float, width: float, texts: list[str], light_text: bool) -> None:
        item = pg.TextItem("", color="#ffffff" if light_text else TEXT, anchor=(0.5, 0.5))
        font = QFont()
        font.setPointSizeF(9)
        item.setFont(font)
        document = item.textItem.document()
        option = document.defaultTextOption()
        option.setAlignment(Qt.AlignHCenter)  # centre the lines of a two-line label
        document.setDefaultTextOption(option)
        item.setPos(x, 0.0)
        plot.addItem(item)
        self._labels.append((item, texts, width, plot))

    def _place_labels(self, *args) -> None:
        """Write on each segment the longest of its texts that fits (none when none does)."""
        for item, texts, width, plot in self._labels:
            px_w, px_h = plot.vb.viewPixelSize()
            pixels = width / px_w if px_w > 0 and math.isfinite(px_w) else 0.0
            tall = BAR_HEIGHT / px_h if px_h > 0 and math.isfinite(px_h) else 0.0
            font_metrics = QFontMetricsF(item.textItem.font())
            chosen, chosen_width = "", 0.0
            for text in texts:
                lines = text.split("\n")
                w = max(font_metrics.horizontalAdvance(line) for line in lines)
                if w + 12 <= pixels and len(lines) * font_metrics.lineSpacing() + 4 <= tall:
                    chosen, chosen_width = text, w
                    break
            if item.textItem.toPlainText() != chosen:
                margin = item.textItem.document().documentMargin()
                item.textItem.setTextWidth(chosen_width + 2 * margin + 2 if chosen else -1)  # lines centred in it
                item.setText(chosen)
            item.setVisible(bool(chosen))

    def _csv_rows(self) -> list[list[str]]:
        r = self.result
        step = r.step_time_s
        rows = [[k, fmt_float(v), fmt_float(v / step if step > 0 else 0.0), ""] for k, v in r.breakdown_s.items()]
        rows.append(["step_time", fmt_float(step), "1.0", ""])
        mem = r.memory_gib_per_gpu
        total = mem.get("total", 0.0)
        for k, v in mem.items():
            rows.append([f"memory:{k}", "", fmt_float(v / total if total > 0 else 0.0), fmt_float(v)])
        if self.hbm_gib:
            rows.append(["memory:hbm", "", "", fmt_float(self.hbm_gib)])
        return rows
