"""The Advisor's scaling curve: tokens/s against the GPU count on log axes, the linear ideal, this
cluster and where more GPUs stop paying, with its key above and the verdict below.

`ScalingPlot.show_report(report)` draws a `designer.core.analysis.scaling.scale` report (the same
numbers `designer scale` prints); `show_error(text)` says why there is no curve.
"""
from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

from .plot_style import AXIS, DOES_NOT_FIT, FASTER, MUTED, SLOWER, style_axis
from .results_table import capital, escape

ACCENT = "#2563eb"
IDEAL = "#9ca3af"


def count_text(n: float) -> str:
    """8, 512, 1k, 16k, 128k."""
    n = int(round(n))
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024}k"
    return f"{n:,}"


def rate_text(v: float) -> str:
    """100k, 2.5M, 1.2G (tokens/s)."""
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if v >= div:
            return f"{v / div:.3g}{suffix}"
    return f"{v:.3g}"


def nice_log_ticks(lo: float, hi: float, pixels: float = 1e9, spacing: float = 22.0) -> list[float]:
    """Round values between lo and hi for a log axis `pixels` long: 1-2-5, 1-3 or 1 per decade,
    the densest whose ticks stay `spacing` pixels apart."""
    span = max(math.log10(hi) - math.log10(lo), 1e-9)
    best: list[float] = []
    for mantissas in ((1, 2, 5), (1, 3), (1,)):
        out = []
        k = math.floor(math.log10(max(lo, 1e-12)))
        while 10 ** k <= hi * 1.0001:
            out += [m * 10 ** k for m in mantissas if lo * 0.9999 <= m * 10 ** k <= hi * 1.0001]
            k += 1
        logs = [math.log10(v) for v in out]
        gaps = [b - a for a, b in zip(logs, logs[1:])]
        best = out
        if not gaps or min(gaps) / span * pixels >= spacing:
            break
    return best


def _label(name: str, rich: bool) -> QLabel:
    label = QLabel("")
    label.setObjectName(name)
    label.setTextFormat(Qt.RichText if rich else Qt.PlainText)
    label.setWordWrap(True)
    label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
    return label


class ScalingPlot(QWidget):
    """The key, the curve and the verdict, one above the other."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.plot = pg.PlotWidget(enableMenu=False)  # no context menu: its widgets are never built
        self.plot.setObjectName("scaling_plot")
        self.plot.setBackground("w")
        self.plot.setMinimumSize(240, 110)
        self.plot.hideButtons()
        self.plot.setMouseEnabled(x=False, y=False)
        item = self.plot.getPlotItem()
        item.showGrid(x=True, y=True, alpha=0.12)
        for name in ("left", "bottom"):
            style_axis(item.getAxis(name), 8.5)
        item.setLabel("bottom", "GPUs")
        item.setLabel("left", "tokens/s")
        item.getAxis("left").setWidth(52)
        self._y_range: tuple[float, float] | None = None
        self.points: list[tuple[int, float]] = []  # (GPUs, tokens/s) drawn
        item.vb.sigResized.connect(self._update_y_ticks)
        self.key_label = _label("scaling_key", rich=True)  # above the plot, not over the points
        self.verdict_label = _label("verdict", rich=False)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(3)
        column.addWidget(self.key_label)
        column.addWidget(self.plot, 1)
        column.addWidget(self.verdict_label)

    def show_error(self, error: str) -> None:
        self.plot.getPlotItem().clear()
        self.points = []
        self.verdict_label.setText(error.splitlines()[0])
        self.verdict_label.setToolTip(error)
        self.verdict_label.setStyleSheet(f"color: {DOES_NOT_FIT}")

    def show_report(self, report: dict) -> None:
        item = self.plot.getPlotItem()
        item.clear()
        self.key_label.setText("")
        rows = report["rows"]
        good = [r for r in rows if "error" not in r]
        stops = report.get("stops_paying_at")
        self.verdict_label.setText(capital(report.get("verdict", "")))
        self.verdict_label.setStyleSheet(f"color: {SLOWER if stops else FASTER}")
        failed = [r for r in rows if "error" in r]
        self.verdict_label.setToolTip("\n".join(f"{r['gpus']} GPUs: {r['error']}" for r in failed))
        self.points = []
        if not good:
            return
        base = good[0]["tokens_per_s_per_gpu"]
        xs = [math.log2(r["gpus"]) for r in good]
        ys = [math.log10(r["tokens_per_s"]) for r in good]
        ideal = [math.log10(base * r["gpus"]) for r in good]
        item.plot(xs, ideal, pen=pg.mkPen(IDEAL, width=1.5, style=Qt.DashLine), name="linear")
        item.plot(xs, ys, pen=pg.mkPen(ACCENT, width=2), name="tokens/s")
        brushes = [pg.mkBrush("w" if r.get("extended_fabric") else ACCENT) for r in good]
        pens = [pg.mkPen(DOES_NOT_FIT if not r.get("fits_in_memory", True) else ACCENT, width=1.5) for r in good]
        item.addItem(pg.ScatterPlotItem(xs, ys, size=7, brush=brushes, pen=pens, symbol="o"))
        self.key_label.setText(self._key(good))
        self.points = [(r["gpus"], r["tokens_per_s"]) for r in good]
        self._mark_lines(item, report.get("current_gpus"), stops)
        # axes: GPU counts below, 1-2-5 tokens/s at the left (log scales drawn as such)
        item.getAxis("bottom").setTicks([[(x, count_text(r["gpus"])) for x, r in zip(xs, good)]])
        lo, hi = min(min(ys), min(ideal)), max(max(ys), max(ideal))
        pad_x = 0.35
        item.setXRange(xs[0] - pad_x, xs[-1] + pad_x, padding=0)
        span = max(hi - lo, 0.3)
        self._y_range = (lo - 0.08 * span, hi + 0.12 * span)
        item.setYRange(*self._y_range, padding=0)
        self._update_y_ticks()
        self.plot.setToolTip(f"<pre>{escape(chr(10).join(self._table_lines(rows)))}</pre>")

    @staticmethod
    def _key(good: list[dict]) -> str:
        key = [f"<span style='color:{ACCENT}'><b>&#8212;&#9679;&#8212;</b></span>&nbsp;tokens/s",
               f"<span style='color:{IDEAL}'><b>-&nbsp;-&nbsp;-</b></span>&nbsp;linear"]
        if any(r.get("extended_fabric") for r in good):  # the hollow points
            key.append(f"<span style='color:{ACCENT}'>&#9675;</span>&nbsp;generated&nbsp;fabric")
        if any(not r.get("fits_in_memory", True) for r in good):
            key.append(f"<span style='color:{DOES_NOT_FIT}'>&#9679;</span>&nbsp;does&nbsp;not&nbsp;fit")
        return f"<span style='color:{MUTED}; font-size:8pt'>{' &nbsp; '.join(key)}</span>"

    @staticmethod
    def _mark_lines(item, current, stops) -> None:
        small = QFont()
        small.setPointSizeF(7.5)
        if current:
            line = pg.InfiniteLine(pos=math.log2(current), angle=90,
                                   pen=pg.mkPen(AXIS, width=1, style=Qt.DotLine),
                                   label="this cluster", labelOpts={"position": 0.96, "color": AXIS,
                                                                    "anchors": [(1, 0), (1, 0)]})
            line.label.setFont(small)
            item.addItem(line)
        if stops:
            stop_line = pg.InfiniteLine(pos=math.log2(stops), angle=90, pen=pg.mkPen(SLOWER, width=1.2),
                                        label="stops paying", labelOpts={"position": 0.08, "color": SLOWER,
                                                                         "anchors": [(1, 1), (1, 1)]})
            stop_line.label.setFont(small)
            item.addItem(stop_line)

    @staticmethod
    def _table_lines(rows: list[dict]) -> list[str]:
        lines = [f"{'GPUs':>6}  {'tokens/s':>10}  {'efficiency':>10}  {'MFU':>6}"]
        for r in rows:
            if "error" in r:
                lines.append(f"{r['gpus']:>6}  {r['error']}")
            else:
                lines.append(f"{r['gpus']:>6}  {r['tokens_per_s']:>10,.0f}  {r['efficiency']:>10.0%}  "
                             f"{r['mfu']:>6.1%}" + ("" if r.get("fits_in_memory", True) else "  does not fit")
                             + ("  (generated larger fabric)" if r.get("extended_fabric") else ""))
        return lines

    def _update_y_ticks(self) -> None:
        """Round tokens/s at the left, as many as the plot's height holds."""
        if self._y_range is None:
            return
        lo, hi = self._y_range
        height = self.plot.getPlotItem().vb.height() or 200.0
        ticks = nice_log_ticks(10 ** lo, 10 ** hi, pixels=height)
        self.plot.getPlotItem().getAxis("left").setTicks([[(math.log10(v), rate_text(v)) for v in ticks]])
