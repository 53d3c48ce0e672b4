"""Per-device timeline of one training step: a Gantt chart of the engine's events.

One row per (representative device, stream lane); lanes compute, tp, cp, ep, pp, dp, wait, the
empty ones left out. Drawing is one graphics item per event kind, each painting all of its bars
from numpy arrays in one drawRects call (only the bars in view), so 50k events cost a few
milliseconds per frame. Waits (bubbles, imbalance, pipeline waits) are hatched with an outline;
overlapped ("hidden") communication is a thin translucent bar at the bottom of its lane.

Mouse: the wheel and right-drag zoom time only, left-drag pans (time and rows). Hovering a bar
shows what it is; clicking a wait highlights the rows of the device it waited for and selects
the bar it waited on. With one row per stage, a double click opens that stage into its lanes (the
other stages stay one row each); another closes it.

The whole job: the rows start fitted to the dock, as "Fit all" puts them (every row in view: a row
per lane, or one row per stage when lanes would be thinner than MIN_ROW_PIXELS, back to the lanes
when the dock grows), until the user scrolls; a scroll bar moves through the rows then, "Critical
device" scrolls to and outlines the device that ends the step last, arrows (timeline_arrows.py)
join a wait to the bar it waited on and a pipeline send to the op that received it, and a plot
export (timeline_export.py) holds every row and the whole step under a title.

This module wires the panel and holds the result shown; how the rows are arranged (per lane or per
stage, Fit all, the arrows placed on them) is timeline_arrangement.py, what is selected
timeline_selection.py, where rows and bars go timeline_layout.py, the items that draw them
timeline_items.py, the plot timeline_view.py, the line under it timeline_detail.py, the mouse
timeline_mouse.py.
"""
from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QEvent, QSize, QTimer
from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

from .plot_style import TEXT, fit_legend, stale_banner, stale_text
from .timeline_arrangement import TimelineArrangement
from .timeline_data import TimelineData, timeline_data
from .timeline_detail import HINT, DetailLine, event_text
from .timeline_export import export_timeline
from .timeline_items import BarItemsOnPlot, KindBars
from .timeline_layout import BarLookup, PlacedBars, RowLayout
from .timeline_marks import TimelineMarks
from .timeline_mouse import TimelineMouse
from .timeline_rows_in_view import RowsInView
from .timeline_selection import TimelineSelection
from .timeline_view import TimelinePlot, tool_bar

ARROWS_AT_ONCE = 50_000  # events; a larger step draws its bars first and its arrows after


class TimelinePanel(QWidget):
    """Gantt chart of the step's events, one row per (representative device, stream lane)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.result = None
        self.data: TimelineData | None = None  # the shown result's events as columns, with arrows
        self.design_name = ""  # named in exported plots' titles (the main window sets it)
        self.arrangement = TimelineArrangement(self)  # a row per lane or per stage, Fit all, the arrows
        self.selection = TimelineSelection(self)  # the event and the device selected
        self.bars = PlacedBars.empty()
        self.lookup = BarLookup(self.bars, 0)

        view = TimelinePlot()
        self.graphics, self.title, self.legend, self.vb, self.plot = (
            view.graphics, view.title, view.legend, view.vb, view.plot)
        self.bands, self.arrows, self.scrollbar, self.updating = view.bands, view.arrows, view.scrollbar, view.updating
        self.bar_items_on_plot = BarItemsOnPlot(self.plot, self.legend)
        self.marks = TimelineMarks(self.plot)
        self.selection_box, self.related_box = self.marks.selection_box, self.marks.related_box
        self.in_view = RowsInView(self.vb, self.plot, self.scrollbar)
        self.vb.sigResized.connect(self.arrangement.view_resized)
        self.hint = HINT
        self.info = DetailLine(self.hint)
        self.described: int | None = None  # the event whose text is on the detail line (hovered or clicked)
        self.info.setObjectName("hover")
        self.info.setStyleSheet(f"color: {TEXT}; padding: 2px 6px")
        self.stale_banner = stale_banner()
        self.revision: int | None = None  # the document revision of the events shown
        bar, (self.act_fit_all, self.act_critical, self.act_merge_lanes, self.act_arrows) = tool_bar(self, (
            ("Fit all", "Every stage in view: rows shrink, or become one row per stage, to fit",
             lambda: self.fit_all(), False, False),
            ("Critical device", "Scroll to and select the device that ends the step last",
             lambda: self.show_critical_device(), False, False),
            ("One row per stage", "All lanes of a device in one row: work on top, communication below",
             self.arrangement.set_lanes_merged, True, False),
            ("Arrows", "Arrows for waits (from the bar waited on) and pipeline send → receive; drawn when few "
             "enough are in view", self.arrangement.set_arrows_shown, True, True)))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.stale_banner)
        layout.addWidget(bar)
        body = QHBoxLayout()
        body.setContentsMargins(0, 0, 0, 0)
        body.setSpacing(0)
        body.addWidget(self.graphics, 1)
        body.addWidget(self.scrollbar)
        layout.addLayout(body, 1)
        layout.addWidget(self.info)

        self.graphics.installEventFilter(self)  # the legend takes as many columns as the width allows
        self.mouse = TimelineMouse(self)  # hover, click, double click

    # The panel's size never depends on the result shown (see BreakdownPanel.sizeHint).
    def sizeHint(self) -> QSize:
        return QSize(900, 340)

    def minimumSizeHint(self) -> QSize:
        return QSize(280, 200)

    def hasHeightForWidth(self) -> bool:
        return False

    def eventFilter(self, watched, event) -> bool:
        if watched is self.graphics and event.type() == QEvent.Resize:
            fit_legend(self.legend, event.size().width() - 30)
        return super().eventFilter(watched, event)

    # ---- the rows (timeline_layout.py) ------------------------------------------------------

    @property
    def layout_rows(self) -> RowLayout:
        return self.in_view.layout

    @layout_rows.setter
    def layout_rows(self, layout: RowLayout) -> None:
        self.in_view.layout = layout

    @property
    def rows(self) -> list[tuple[int, str]]:
        """(device, lane) per row, top to bottom."""
        return self.layout_rows.rows

    @property
    def row_labels(self) -> list[str]:
        return self.layout_rows.labels

    @property
    def collapsed(self) -> bool:
        return self.layout_rows.collapsed

    def row_at(self, y: float) -> int | None:
        return self.layout_rows.row_at(y)

    def event_at(self, t: float, row: int, tolerance_s: float = 0.0) -> int | None:
        """Index (in result.events) of the bar at time `t` in `row`, or the nearest within `tolerance_s`."""
        return self.lookup.event_at(t, row, tolerance_s)

    def bar_count(self) -> int:
        """Bars drawn (all kinds)."""
        return self.bar_items_on_plot.count()

    def bar_items(self) -> dict[str, KindBars]:
        """The graphics items drawing bars: one per event kind."""
        return dict(self.bar_items_on_plot.items)

    def event_text(self, index: int) -> str:
        return event_text(self.result, index)

    def describe(self, index: int | None) -> None:
        """The detail line (and the plot's tooltip) says what event `index` is; None: the hint."""
        self.described = index
        if index is None:
            self.info.setText(self.hint if self.result is not None else "")
            self.graphics.setToolTip("")
            return
        text = self.event_text(index)
        self.info.setText(text.replace("\n", "  ·  "))
        self.graphics.setToolTip(text)  # Qt shows it when the mouse rests over the bar

    def say(self, text: str) -> None:
        """A line of its own on the detail line (no event described)."""
        self.described = None
        self.info.setText(text)

    def export(self, path: str | os.PathLike) -> Path:
        """.png / .svg / .pdf: the whole chart; .csv: every event (timeline_export.export_timeline)."""
        return export_timeline(self, path)

    # ---- a result ---------------------------------------------------------------------------

    def show_result(self, result, data: TimelineData | None = None) -> None:
        """`data`: the result's timeline data when the engine worker built it; built here otherwise."""
        if result is None:
            self.clear("no result")
            return
        data = data if data is not None else timeline_data(result)
        if self._draws(result, data):  # an edit that left the step as it was (most cable edits)
            self._keep_drawn(result, data)
            return
        self.data = data
        self.result = result
        self.stale_banner.hide()
        self.updating.hide()
        arrangement = self.arrangement
        arrangement.lay_out(result, fitting=self.in_view.fitting_all)
        arrangement.forget_arrows()
        if len(result.events) <= ARROWS_AT_ONCE:
            arrangement.build_arrows()
        else:  # the bars first; the arrows (a second pass over the events) a moment later
            QTimer.singleShot(0, self, lambda shown=result: arrangement.arrows_later(shown))  # dropped if the panel goes
        arrangement.frame(result)
        self.select_event(None)
        self.select_device(None)
        if self.in_view.fitting_all:
            self.fit_all()
        self.describe(None)

    def _draws(self, result, data: TimelineData) -> bool:
        """Whether the rows, bars, arrows and title on screen are those of `result`: the same step time,
        devices and critical device, and the same columns of events and arrows (~0.1 ms where laying
        out and drawing them again took ~5 ms at 131k GPUs)."""
        shown = self.result
        return (shown is not None and self.data is not None and result.step_time_s == shown.step_time_s
                and result.critical_device == shown.critical_device and result.devices == shown.devices
                and data.same_as(self.data))

    def _keep_drawn(self, result, data: TimelineData) -> None:
        """`result` draws what is on screen: it becomes the result shown (its events are the ones
        read), the selection and the view stay; the event described says what it is in `result` (its
        resource may name a server renamed since)."""
        arrows_built = self.arrangement.adopt(self.result, result)
        self.result, self.data = result, data
        self.stale_banner.hide()
        self.updating.hide()
        if self.described is not None:
            self.describe(self.described)
        if not arrows_built:  # a large step's arrows were on their way for the result before
            QTimer.singleShot(0, self, lambda shown=result: self.arrangement.arrows_later(shown))

    def clear(self, message: str = "no result") -> None:
        self.result = None
        self.data = None
        self.bar_items_on_plot.clear()
        self.layout_rows = RowLayout()
        self.bars = PlacedBars.empty()
        self.lookup = BarLookup(self.bars, 0)
        self.bands.set_groups([], 0.0, 1.0)
        self.arrangement.forget_arrows()
        self.select_event(None)
        self.select_device(None)
        self.scrollbar.setRange(0, 0)
        self.plot.getAxis("left").setTicks([[]])
        self.title.setText(message)
        self.say("")
        self.stale_banner.hide()
        self.updating.hide()
        self.revision = None

    def forget(self, message: str = "no result") -> None:
        self.clear(message)

    def mark_stale(self, reason: str, details: str = "") -> bool:
        """Keep the last valid timeline under a banner with the reason (see BreakdownPanel.mark_stale)."""
        if self.result is None:
            self.clear(reason)
            return False
        self.stale_banner.setText(stale_text(reason))
        self.stale_banner.setToolTip(details or reason)
        self.stale_banner.show()
        return True

    def is_stale(self) -> bool:
        return self.result is not None and not self.stale_banner.isHidden()

    def mark_updating(self) -> None:
        """A newer result's step time is on screen; its events are on their way (the ones shown are older)."""
        if self.result is not None:
            self.updating.move(max(0, self.graphics.width() - self.updating.width() - 4), 4)
            self.updating.show()
            self.updating.raise_()

    def is_updating(self) -> bool:
        return not self.updating.isHidden()

    # ---- the arrangement of the rows and the selection (timeline_arrangement.py, timeline_selection.py)

    @property
    def lanes_merged(self) -> bool:
        """One row per stage (all lanes of a device in one row), some maybe opened into their lanes."""
        return self.arrangement.lanes_merged

    def fit_all(self) -> None:
        self.arrangement.fit_all()

    def set_lanes_merged(self, merged: bool) -> None:
        self.arrangement.set_lanes_merged(merged)

    def toggle_stage(self, device: int) -> bool:
        return self.arrangement.toggle_stage(device)

    def arrow_pairs(self, kind: str | None = None) -> list[tuple[int, int]]:
        return self.arrangement.arrow_pairs(kind)

    def show_critical_device(self) -> int | None:
        return self.selection.show_critical_device()

    def select_device(self, device: int | None, scroll: bool = False) -> bool:
        return self.selection.select_device(device, scroll)

    def selected_device(self) -> int | None:
        return self.selection.device

    def select_event(self, index: int | None) -> None:
        self.selection.select_event(index)

    def selected_event(self) -> int | None:
        return self.selection.event

    def related_event(self) -> int | None:
        """The bar the selected wait waited on (on the device it waited for), if any."""
        return self.selection.related

    def highlighted_rows(self) -> list[int]:
        return list(self.selection.highlighted)
