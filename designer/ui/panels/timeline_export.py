"""The Timeline's export: the events as CSV, or a picture of the whole job: every row, the whole step,
a title naming the design and the plan, whatever part of it the dock shows.

The picture is a second, off-screen figure built from the panel's own bar arrays (no events are
re-read) at EXPORT_ROW_PIXELS per row, and written with plot_export (PNG through pyqtgraph's
image exporter, SVG / PDF through Qt's QSvgGenerator / QPdfWriter).
"""
from __future__ import annotations

import os
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetricsF
from PySide6.QtWidgets import QApplication

from .plot_export import PLOT_FORMATS, export_plot, fmt_float, write_csv
from .plot_style import TEXT, FlexibleLabel, Swatch, fit_legend, make_legend, style_axis
from .timeline_arrows import TimelineArrows
from .timeline_detail import device_name
from .timeline_items import KindBars, RowBands, kind_name

EXPORT_WIDTH = 1600  # pixels (PNG: twice that)
EXPORT_ROW_PIXELS = 14.0  # every row at least this tall, however many there are
AXIS_PIXELS = 48.0  # the time axis and its label under the rows
MAX_EXPORT_HEIGHT = 60000  # pixels; beyond this the rows are shorter than EXPORT_ROW_PIXELS


def plan_text(plan: dict) -> str:
    """'TP 8 · PP 16 · DP 128 · 1F1B · 16 micro-batches · bf16 · H100-SXM5-80GB' from result.plan."""
    if not plan:
        return "plan not known"
    parts = [f"{name} {plan[key]}" for key, name in (("tp", "TP"), ("pp", "PP"), ("dp", "DP"))
             if key in plan]
    parts += [f"{name} {plan[key]}" for key, name in (("cp", "CP"), ("ep", "EP"), ("vp", "VP"))
              if int(plan.get(key, 1) or 1) > 1]
    if plan.get("schedule"):
        parts.append(str(plan["schedule"]).upper())
    if plan.get("num_microbatches"):
        parts.append(f"{int(plan['num_microbatches']):,} micro-batches")
    parts += [str(plan[key]) for key in ("precision", "accelerator") if plan.get(key)]
    return " · ".join(parts)


def export_title(panel) -> str:
    result = panel.result
    design = panel.design_name or "unsaved design"
    rows = "one row per stage" if panel.lanes_merged else "one row per lane"
    return (f"{design} — {plan_text(getattr(result, 'plan', {}) or {})} — step {result.step_time_s:.3f} s — "
            f"critical device {device_name(result, result.critical_device)} — {rows}")


CSV_COLUMNS = ("device", "stream", "kind", "label", "start_s", "end_s", "micro_batch", "chunk")


def export_timeline(panel, path: str | os.PathLike) -> Path:
    """.png / .svg / .pdf: the whole chart of `panel` (every row, the whole step) under a title naming
    the design and the plan; .csv: every event of the result, one row each (CSV_COLUMNS)."""
    target = Path(path)
    if panel.result is None:
        raise ValueError("nothing to export: no result is shown")
    if target.suffix.lower() == ".csv":
        rows = ([e.device, e.stream, e.kind, e.label, fmt_float(e.start_s), fmt_float(e.end_s), e.micro_batch,
                 e.chunk] for e in panel.result.events)
        return write_csv(target, CSV_COLUMNS, rows)
    if target.suffix.lower() not in PLOT_FORMATS:
        raise ValueError(f"cannot export to {target.name!r}: unknown extension {target.suffix or '(none)'!r}; "
                         f"use one of {', '.join(PLOT_FORMATS + ('.csv',))}")
    return export_whole_timeline(panel, target)  # every row and the whole step, not only the view


def export_whole_timeline(panel, path: str | os.PathLike, width: int = EXPORT_WIDTH) -> Path:
    """Write the whole timeline of `panel` (a TimelinePanel showing a result) to .png / .svg / .pdf,
    `width` pixels wide (before the PNG's scale)."""
    figure = _figure(panel, export_title(panel), width)
    try:
        return export_plot(figure, path)
    finally:
        figure.close()
        figure.deleteLater()


def _figure(panel, title: str, width: int = EXPORT_WIDTH) -> pg.GraphicsLayoutWidget:
    figure = pg.GraphicsLayoutWidget()
    figure.setAttribute(Qt.WA_DontShowOnScreen, True)
    figure.setBackground("w")
    ci = figure.ci
    ci.setContentsMargins(8, 6, 16, 6)
    ci.setSpacing(3)
    heading = FlexibleLabel(title, color=TEXT, size="11pt", justify="left", bold=True)
    ci.addItem(heading, row=0, col=0)
    ci.addItem(FlexibleLabel(panel.title.text, color=TEXT, size="9pt", justify="left"), row=1, col=0)
    legend = make_legend(9)
    ci.addItem(legend, row=2, col=0)
    plot = pg.PlotItem()
    ci.addItem(plot, row=3, col=0)
    ci.layout.setRowStretchFactor(3, 10)
    plot.hideButtons()
    plot.setMenuEnabled(False)
    vb = plot.getViewBox()
    vb.invertY(True)
    plot.setLabel("bottom", "time", units="s")
    for name in ("left", "bottom"):
        style_axis(plot.getAxis(name), 8.5)
    left = plot.getAxis("left")
    left.setStyle(tickLength=0)
    labels = list(panel.layout_rows.axis_labels)
    left.setTicks([[(float(r), label) for r, label in enumerate(labels)]])
    metrics = QFontMetricsF(left.style["tickFont"] or QFont())
    left.setWidth(int(max((metrics.horizontalAdvance(t) for t in labels), default=40) + 14))
    plot.showGrid(x=True, y=False, alpha=0.18)

    # the panel's own items' data: bands, bars (one item per kind), the arrows it would draw
    x_lo, x_hi = panel.bands.boundingRect().left(), panel.bands.boundingRect().right()
    if not panel.layout_rows.groups:
        x_lo, x_hi = 0.0, max(panel.result.step_time_s, 1e-9)
    bands = RowBands()
    bands.set_groups(list(panel.layout_rows.groups), x_lo, x_hi)
    plot.addItem(bands)
    for kind, item in panel.bar_items().items():
        copy = KindBars(kind, item.x0, item.x0 + item.width, item.y0, item.y0 + item.height, item.waits, item.color)
        copy.setZValue(item.zValue())
        plot.addItem(copy)
        legend.addItem(Swatch(copy, copy.color, hatched=kind in ("bubble", "imbalance_wait"), thin=copy.hidden),
                       kind_name(kind))
    source = panel.arrows
    arrows = TimelineArrows()
    arrows.enabled = source.enabled
    arrows.set_arrows(source.kind, source.source, source.target, source.x0, source.y0, source.x1, source.y1)
    arrows.emphasis = source.emphasis.copy()
    plot.addItem(arrows, ignoreBounds=True)

    rows = max(len(panel.rows), 1)
    fit_legend(legend, width - 40)
    figure.resize(width, 400)
    figure.show()  # off-screen (WA_DontShowOnScreen): lays the items out
    QApplication.processEvents()
    header = figure.height() - vb.height()  # title, legend, axis: what is not rows
    height = min(MAX_EXPORT_HEIGHT, int(header + rows * EXPORT_ROW_PIXELS + AXIS_PIXELS * 0.25))
    figure.resize(width, height)
    QApplication.processEvents()
    vb.setRange(xRange=(x_lo, x_hi), yRange=(-0.5, rows - 0.5), padding=0)
    return figure

