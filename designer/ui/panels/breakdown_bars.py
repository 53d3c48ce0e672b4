"""The Breakdown panel's plots: the step of the critical device and the memory per GPU as two stacked
bars in one graphics view, with their legends, the labels written on the segments and the hover tips.

`StackedBar` is one bar with what it has drawn; `BreakdownPlots` is the view that draws a result into
its two bars (and the HBM line, the total, the "does not fit" outline of the memory bar).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import pyqtgraph as pg
from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF
from PySide6.QtWidgets import QSizePolicy

from ..common.next_paint import NextPaint
from .plot_style import (
    CATEGORY_NAMES, DOES_NOT_FIT, FALLBACK_COLORS, FITS, TEXT, WAIT_CATEGORIES, FlexibleLabel, Swatch,
    category_color, fit_legend, hatch_brush, light, make_legend, seconds_text, style_axis,
)

MEMORY_COLORS: dict[str, str] = {
    "params": "#1e3a8a",
    "grads": "#60a5fa",
    "optimizer": "#16a34a",
    "activations": "#f59e0b",
    "temporaries": "#fcd34d",
}
MEMORY_NAMES = {"params": "parameters", "grads": "gradients", "optimizer": "optimizer state",
                "activations": "activations", "temporaries": "temporaries"}
BAR_HEIGHT = 0.62


class _BarPlot(pg.PlotItem):
    """A one-bar plot: no mouse interaction, no menu, no auto-range button."""

    def __init__(self, label: str, units: str):
        super().__init__(enableMenu=False)  # its view box is made without the context menu, never built
        self.hideButtons()
        self.setMouseEnabled(x=False, y=False)
        self.vb.setDefaultPadding(0.0)
        self.setLabel("bottom", label, units=units)
        for name in ("left", "bottom"):
            style_axis(self.getAxis(name))
        self.getAxis("left").setWidth(86)
        self.getAxis("left").setTicks([[(0.0, "")]])
        self.setYRange(-0.55, 0.55, padding=0)
        self.setMinimumHeight(64)  # the bar keeps its room; a legend is cut first


class StackedBar:
    """One horizontal bar of stacked segments, its legend and the texts written on its segments.

    It remembers what it drew, so that a result of the same segments only moves it (`move`)."""

    def __init__(self, label: str, units: str, legend_columns: int):
        self.plot = _BarPlot(label, units)
        self.legend = make_legend(legend_columns)
        self.segments: dict[str, tuple[float, float]] = {}  # key -> (x0, width)
        self.shape = None  # what was drawn: a result of the same shape only moves it
        self.items: list[list[pg.BarGraphItem]] = []  # per segment: its bar (and hatching)
        # (item, its texts longest first as _Measured, the segment's width): measured once per text, not
        # at each placing (a result placed them ~14 times, each measuring every text: ~a third of a
        # Breakdown's first result)
        self.labels: list[tuple[pg.TextItem, list[_Measured], float]] = []
        self.legend_texts: list[tuple[str, str]] = []  # per legend entry: (with value, name only)
        self.compact = False  # legend entries name only

    def clear(self) -> None:
        self.plot.clear()
        self.legend.clear()
        self.legend_texts = []
        self.labels = []

    def add_bars(self, bars: list[pg.BarGraphItem]) -> None:
        for bar in bars:
            self.plot.addItem(bar)
        self.items.append(bars)

    def add_label(self, x: float, width: float, texts: list[str], light_text: bool) -> None:
        item = pg.TextItem("", color="#ffffff" if light_text else TEXT, anchor=(0.5, 0.5))
        font = QFont()
        font.setPointSizeF(9)
        item.setFont(font)
        document = item.textItem.document()
        option = document.defaultTextOption()
        option.setAlignment(Qt.AlignHCenter)  # centre the lines of a two-line label
        document.setDefaultTextOption(option)
        item.setPos(x, 0.0)
        self.plot.addItem(item)
        self.labels.append((item, _measured(item, texts), width))

    def add_legend(self, sample: Swatch, text: str, short: str) -> None:
        self.legend.addItem(sample, short if self.compact else text)
        self.legend_texts.append((text, short))

    def move(self, segments) -> None:
        """Drawn segments of the same keys as before: new positions, widths and texts (a redraw of the
        bars, labels and legend costs ~50 ms, this a few)."""
        labels, texts_of = [], []
        for (key, x0, value, texts, legend_text, short), bars, (item, *_), (_, label) in zip(
                segments, self.items, self.labels, self.legend.items):
            for bar in bars:
                bar.setOpts(x0=[x0], width=[value])
            item.setPos(x0 + value / 2, 0.0)
            labels.append((item, _measured(item, texts), value))
            label.setText(short if self.compact else legend_text)
            texts_of.append((legend_text, short))
        self.labels = labels
        self.legend_texts = texts_of

    def segment_at(self, x: float) -> str | None:
        for key, (x0, width) in self.segments.items():
            if x0 <= x <= x0 + width:
                return key
        return None

    def set_compact(self, compact: bool) -> None:
        """Legend entries with their values, or (compact) names only."""
        self.compact = compact
        for (_, label), (text, short) in zip(self.legend.items, self.legend_texts):
            label.setText(short if compact else text)

    def place_labels(self) -> None:
        """Write on each segment the longest of its texts that fits (none when none does)."""
        for item, texts, width in self.labels:
            px_w, px_h = self.plot.vb.viewPixelSize()
            pixels = width / px_w if px_w > 0 and math.isfinite(px_w) else 0.0
            tall = BAR_HEIGHT / px_h if px_h > 0 and math.isfinite(px_h) else 0.0
            chosen, chosen_width = "", 0.0
            for text in texts:
                if text.width + 12 <= pixels and text.height + 4 <= tall:
                    chosen, chosen_width = text.text, text.width
                    break
            if item.textItem.toPlainText() != chosen:
                margin = item.textItem.document().documentMargin()
                item.textItem.setTextWidth(chosen_width + 2 * margin + 2 if chosen else -1)  # lines centred in it
                item.setText(chosen)
            item.setVisible(bool(chosen))


def _step_shape(r) -> tuple:
    """What the step bar's items depend on: its categories (_step_segments'), else they only move."""
    return tuple(key for key, value in r.breakdown_s.items() if value > 0)


def _memory_order(mem: dict) -> list[str]:
    return [k for k in MEMORY_COLORS if k in mem] + [k for k in mem if k not in MEMORY_COLORS and k != "total"]


def _memory_shape(r, hbm_gib: float | None) -> tuple:
    """What the memory bar's items depend on: its parts, the HBM line and the fit (else they only move)."""
    mem = r.memory_gib_per_gpu
    return tuple(k for k in _memory_order(mem) if mem[k] > 0), hbm_gib, r.fits_in_memory


class _Measured(NamedTuple):
    """A label's text and its size in its font: its widest line and its lines' height, in pixels."""
    text: str
    width: float
    height: float


def _measured(item: pg.TextItem, texts: list[str]) -> list[_Measured]:
    font_metrics = QFontMetricsF(item.textItem.font())
    out = []
    for text in texts:
        lines = text.split("\n")
        out.append(_Measured(text, max(font_metrics.horizontalAdvance(line) for line in lines),
                             len(lines) * font_metrics.lineSpacing()))
    return out


def _step_segments(r) -> list[tuple]:
    """(key, x0, seconds, texts longest first, legend text, name) per category of the step."""
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
    return segments


def _memory_texts(name: str, value: float) -> list[str]:
    return [f"{name}\n{value:.1f} GiB", f"{name} {value:.1f} GiB", f"{value:.1f} GiB", f"{value:.1f}"]


class BreakdownPlots(pg.GraphicsLayoutWidget):
    """The step bar and the memory bar of one result, one above the other, each with its legend."""

    def __init__(self):
        super().__init__()
        self.result = None  # the result drawn (hover tips read it)
        self.hbm_line: pg.InfiniteLine | None = None
        self._memory_outline = self._memory_total = None
        self._due: list = []  # (bar, its drawing, its arguments) of each bar drawn once the one before is painted
        self._when_painted = None  # called once the result shown is all drawn and painted
        self._after_paint = NextPaint(self.viewport())
        self.compact = False
        self.setBackground("w")
        self.setMinimumHeight(160)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        self._lay_out_rows()
        for bar in (self.step, self.memory):
            bar.plot.vb.sigResized.connect(self.place_labels)
            bar.plot.vb.sigXRangeChanged.connect(self.place_labels)
        self.scene().sigMouseMoved.connect(self.on_mouse_moved)

    def _lay_out_rows(self) -> None:
        """Title, step bar, its legend, memory bar, its legend; the bars take the spare height."""
        ci = self.ci
        ci.setContentsMargins(6, 4, 14, 4)
        ci.setSpacing(2)
        self.title = FlexibleLabel("", color=TEXT, size="10pt", justify="left")
        ci.addItem(self.title, row=0, col=0)
        self.step = StackedBar("step time", "s", legend_columns=10)
        ci.addItem(self.step.plot, row=1, col=0)
        ci.addItem(self.step.legend, row=2, col=0)
        self.memory = StackedBar("memory per GPU", "GiB", legend_columns=6)
        self.memory.plot.getAxis("bottom").enableAutoSIPrefix(False)
        ci.addItem(self.memory.plot, row=3, col=0)
        ci.addItem(self.memory.legend, row=4, col=0)
        ci.layout.setRowStretchFactor(1, 3)
        ci.layout.setRowStretchFactor(3, 2)

    def resizeEvent(self, event) -> None:
        if event is not None:  # pyqtgraph calls it with None to re-fit its scene, not on a resize
            self.fit_legends(event.size())  # legends take as many columns as the width allows
        super().resizeEvent(event)

    def fit_legends(self, size: QSize | None = None) -> None:
        size = self.size() if size is None else size
        for bar in (self.step, self.memory):
            fit_legend(bar.legend, size.width() - 30)

    def place_labels(self, *args) -> None:
        for bar in (self.step, self.memory):
            bar.place_labels()

    def set_compact(self, compact: bool) -> None:
        """No title, no memory legend, no axis titles (segment labels and tooltips name the parts)
        and legends without values: the bars keep their room in a small panel."""
        self.compact = compact
        self.title.setVisible(not compact)
        self.title.setMaximumHeight(0 if compact else 10_000)
        self.memory.legend.setVisible(not compact)
        self.memory.legend.setMaximumHeight(0 if compact else 10_000)
        for bar in (self.step, self.memory):
            bar.plot.showLabel("bottom", not compact)
        for bar in (self.step, self.memory):
            bar.set_compact(compact)

    def show_result(self, r, hbm_gib: float | None, job: str | None, in_turns: bool = False) -> None:
        """Draw `r` (an Evaluation; `job`: whose, with several jobs) against `hbm_gib` of HBM.

        `in_turns`: a bar of other parts than the one drawn (new plot items, 15-30 ms each at the first
        result) is drawn once what came before it is painted, a bar a paint (`drawing` meanwhile)."""
        self.result = r
        self.memory.plot.setLabel("bottom", f"memory per GPU: job {job}" if job else "memory per GPU", units="GiB")
        self.title.setText(self._step_title(r, job))
        self._due, self._when_painted = [], None
        for bar, draw, args, shape in ((self.step, self._draw_step, (r,), _step_shape(r)),
                                       (self.memory, self._draw_memory, (r, hbm_gib), _memory_shape(r, hbm_gib))):
            if in_turns and shape != bar.shape:
                self._due.append((bar, draw, args))
            else:
                draw(*args)
        if self._due:
            self._after_paint.then(self._draw_due)

    @property
    def drawing(self) -> bool:
        """A bar of the result shown is still to be drawn."""
        return bool(self._due)

    def when_painted(self, callback) -> None:
        """`callback` once the result shown is all drawn and painted (at the next turn of the event loop
        when the plots cannot be seen); a newer one replaces it."""
        if self.drawing:
            self._when_painted = callback  # after the last bar
        else:
            self._after_paint.then(callback)

    def _draw_due(self) -> None:
        """The next bar due, painted before the one after it (or the when_painted callback)."""
        if not self._due:
            return
        bar, draw, args = self._due.pop(0)
        if args[0] is self.result:  # (else another result, or none, is shown since)
            draw(*args)
            fit_legend(bar.legend, self.width() - 30)
            bar.place_labels()
        if self._due:
            self._after_paint.then(self._draw_due)
            return
        callback, self._when_painted = self._when_painted, None
        if callback is not None:
            self._after_paint.then(callback)

    def forget(self) -> None:
        self.result = None

    # ---- the step bar ---------------------------------------------------------------------------

    def _draw_step(self, r) -> None:
        step, bar = r.step_time_s, self.step
        segments = _step_segments(r)
        bar.segments = {key: (x0, value) for key, x0, value, *_ in segments}
        shape = tuple(key for key, *_ in segments)
        if shape and shape == bar.shape:  # the same categories (most edits): move and relabel them
            bar.move(segments)
        else:
            bar.shape = shape
            bar.items = []
            bar.clear()
            for key, x0, value, texts, legend_text, name in segments:
                self._add_step_segment(key, x0, value, texts, legend_text, name)
        bar.plot.setXRange(-0.004 * max(step, 1e-9), max(step, 1e-9) * 1.005, padding=0)
        bar.plot.getAxis("left").setTicks([[(0.0, "step")]])

    def _add_step_segment(self, key, x0, value, texts, legend_text, name) -> None:
        """One category's bar (waits hatched over a light fill), its label and legend entry."""
        color = category_color(key)
        hatched = key in WAIT_CATEGORIES
        bars = [pg.BarGraphItem(x0=[x0], width=[value], y=[0.0], height=[BAR_HEIGHT],
                                brush=light(color, 150) if hatched else color,
                                pen=pg.mkPen(QColor("#ffffff"), width=1))]
        if hatched:
            bars.append(pg.BarGraphItem(x0=[x0], width=[value], y=[0.0], height=[BAR_HEIGHT],
                                        brush=hatch_brush(color), pen=pg.mkPen(color.darker(140))))
        self.step.add_bars(bars)
        self.step.add_label(x0 + value / 2, value, texts, light_text=color.lightness() < 150 and not hatched)
        self.step.add_legend(Swatch(bars[0], color, hatched), legend_text, name)

    @staticmethod
    def _step_title(r, job: str | None) -> str:
        crit = r.devices.get(r.critical_device, {}) if r.devices else {}
        where = f"stage {crit['stage']} gpu{r.critical_device}" if "stage" in crit else f"gpu{r.critical_device}"
        plan = r.plan or {}
        shape = " ".join(f"{k.upper()}{plan[k]}" for k in ("tp", "pp", "cp", "ep", "dp") if plan.get(k, 1) != 1)
        return ((f"Job {job}: " if job else "") + f"Step time {r.step_time_s:.3f} s on the critical device ({where}) · {r.num_gpus:,} GPUs"
                + (f" · {shape}" if shape else "") + f" · MFU {r.mfu:.1%}")

    # ---- the memory bar -------------------------------------------------------------------------

    def _draw_memory(self, r, hbm_gib: float | None) -> None:
        mem = r.memory_gib_per_gpu
        total = mem.get("total", sum(v for k, v in mem.items() if k != "total"))
        order = _memory_order(mem)
        shape = _memory_shape(r, hbm_gib)
        if shape[0] and shape == self.memory.shape:  # the same parts, HBM and fit: move and relabel them
            self._move_memory(mem, shape[0], total, hbm_gib)
            return
        self.memory.shape = shape
        self.memory.items = []
        self._memory_outline = None
        self.memory.clear()
        self.memory.segments = {}
        self._add_memory_parts(mem, order)
        self._add_hbm_line(hbm_gib, r.fits_in_memory)
        if not r.fits_in_memory:
            outline = pg.BarGraphItem(x0=[0.0], width=[max(total, 1e-9)], y=[0.0], height=[BAR_HEIGHT],
                                      brush=QBrush(Qt.NoBrush), pen=pg.mkPen(DOES_NOT_FIT, width=2))
            self.memory.plot.addItem(outline)
            self._memory_outline = outline
        plot = self.memory.plot
        extent = max(total, hbm_gib or 0.0, 1e-9)
        plot.setXRange(-0.004 * extent, extent * 1.1, padding=0)
        plot.setYRange(-0.45, 0.8, padding=0)  # room above the bar for the HBM label
        plot.getAxis("left").setTicks([[(0.0, "per GPU")]])
        total_label = pg.TextItem(f"  {total:.1f} GiB", color=DOES_NOT_FIT if not r.fits_in_memory else TEXT,
                                  anchor=(0, 0.5))
        total_label.setPos(total, 0.0)
        plot.addItem(total_label)
        self._memory_total = total_label

    def _move_memory(self, mem: dict, keys: tuple, total: float, hbm_gib: float | None) -> None:
        segments, x = [], 0.0
        for key in keys:
            value, name = mem[key], MEMORY_NAMES.get(key, key)
            segments.append((key, x, value, _memory_texts(name, value), f"{name} {value:.1f} GiB", name))
            x += value
        self.memory.segments = {key: (x0, value) for key, x0, value, *_ in segments}
        self.memory.move(segments)
        if self._memory_outline is not None:
            self._memory_outline.setOpts(width=[max(total, 1e-9)])
        self._memory_total.setText(f"  {total:.1f} GiB")
        self._memory_total.setPos(total, 0.0)
        extent = max(total, hbm_gib or 0.0, 1e-9)
        self.memory.plot.setXRange(-0.004 * extent, extent * 1.1, padding=0)

    def _add_memory_parts(self, mem: dict, order: list[str]) -> None:
        x = 0.0
        for key in order:
            value = mem[key]
            if value <= 0:
                continue
            color = QColor(MEMORY_COLORS.get(key, FALLBACK_COLORS[len(self.memory.segments) % 6]))
            bar = pg.BarGraphItem(x0=[x], width=[value], y=[0.0], height=[BAR_HEIGHT], brush=color,
                                  pen=pg.mkPen(QColor("#ffffff"), width=1))
            self.memory.add_bars([bar])
            self.memory.segments[key] = (x, value)
            name = MEMORY_NAMES.get(key, key)
            self.memory.add_label(x + value / 2, value, _memory_texts(name, value), light_text=color.lightness() < 150)
            self.memory.add_legend(Swatch(bar, color), f"{name} {value:.1f} GiB", name)
            x += value

    def _add_hbm_line(self, hbm_gib: float | None, fits: bool) -> None:
        """The accelerator's HBM as a dashed line (red when the memory does not fit)."""
        if not hbm_gib:
            self.hbm_line = None
            return
        color = QColor(FITS if fits else DOES_NOT_FIT)
        line = pg.InfiniteLine(pos=hbm_gib, angle=90, movable=False, pen=pg.mkPen(color, width=2, style=Qt.DashLine),
                               label=f"HBM {hbm_gib:.1f} GiB" + ("" if fits else " — does not fit"),
                               labelOpts={"position": 0.97, "anchors": [(1, 0), (1, 0)], "color": color})
        self.memory.plot.addItem(line)
        self.hbm_line = line

    # ---- hover ----------------------------------------------------------------------------------

    def on_mouse_moved(self, scene_pos) -> None:
        """The tooltip names the segment under the mouse, with its figures."""
        text = ""
        for bar in (self.step, self.memory):
            plot = bar.plot
            if self.result is None or not plot.vb.sceneBoundingRect().contains(scene_pos):
                continue
            point = plot.vb.mapSceneToView(scene_pos)
            key = bar.segment_at(point.x()) if abs(point.y()) <= BAR_HEIGHT / 2 else None
            if key is None:
                continue
            text = self._step_tip(key) if bar is self.step else self._memory_tip(key)
        self.setToolTip(text)

    def _step_tip(self, key: str) -> str:
        value = self.result.breakdown_s[key]
        share = value / self.result.step_time_s if self.result.step_time_s > 0 else 0.0
        text = f"{CATEGORY_NAMES.get(key, key)}: {value:.3f} s, {share:.1%} of the step"
        hidden = self.result.hidden_comm_s.get(key, 0.0)
        if hidden > 0:
            text += f"\n{seconds_text(hidden)} more overlapped with compute (not in the step)"
        return text

    def _memory_tip(self, key: str) -> str:
        value = self.result.memory_gib_per_gpu[key]
        return f"{MEMORY_NAMES.get(key, key)}: {value:.2f} GiB per GPU"
