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

This module wires the panel; where rows and bars go is timeline_layout.py, the items that draw
them timeline_items.py, the plot timeline_view.py, the line under it timeline_detail.py, the
mouse timeline_mouse.py.
"""
from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QEvent, QSize, QTimer
from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

from .plot_style import TEXT, fit_legend, stale_banner, stale_text
from .timeline_data import TimelineData, timeline_data
from .timeline_detail import HINT, DetailLine, device_name, event_text, title_text
from .timeline_export import export_timeline
from .timeline_items import BarItemsOnPlot, KindBars
from .timeline_layout import BarLookup, PlacedBars, RowLayout, lay_out_rows, place_bars
from .timeline_marks import TimelineMarks
from .timeline_mouse import TimelineMouse
from .timeline_rows_in_view import MIN_ROW_PIXELS, RowsInView
from .timeline_view import TimelinePlot, tool_bar

ARROWS_AT_ONCE = 50_000  # events; a larger step draws its bars first and its arrows after


class TimelinePanel(QWidget):
    """Gantt chart of the step's events, one row per (representative device, stream lane)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.result = None
        self.data: TimelineData | None = None  # the shown result's events as columns, with arrows
        self.lanes_merged = False  # one row per stage (all lanes of a device in one row)
        self.expanded: set[int] = set()  # devices opened into their lanes while the others are one row each
        self._lanes_by_user: bool | None = None  # one row per stage chosen by the user (None: fitted)
        self._fitting_lanes = False
        self._arrows_of = None  # the result whose arrows are built (a large one builds them after its bars)
        self.design_name = ""  # named in exported plots' titles (the main window sets it)
        self._selected: int | None = None
        self._related: int | None = None
        self._highlighted: list[int] = []
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
        self.vb.sigResized.connect(self._on_view_resized)
        self.hint = HINT
        self.info = DetailLine(self.hint)
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
             self.set_lanes_merged, True, False),
            ("Arrows", "Arrows for waits (from the bar waited on) and pipeline send → receive; drawn when few "
             "enough are in view", self._set_arrows_shown, True, True)))
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

    def export(self, path: str | os.PathLike) -> Path:
        """.png / .svg / .pdf: the whole chart; .csv: every event (timeline_export.export_timeline)."""
        return export_timeline(self, path)

    # ---- a result ---------------------------------------------------------------------------

    def show_result(self, result, data: TimelineData | None = None) -> None:
        """`data`: the result's timeline data when the engine worker built it; built here otherwise."""
        if result is None:
            self.clear("no result")
            return
        self.data = data if data is not None else timeline_data(result)
        self.result = result
        self.stale_banner.hide()
        self.updating.hide()
        self._lay_out(result)
        self.arrows.clear()
        self._arrows_of = None
        if len(result.events) <= ARROWS_AT_ONCE:
            self._build_arrows()
        else:  # the bars first; the arrows (a second pass over the events) a moment later
            QTimer.singleShot(0, self, lambda shown=result: self._arrows_later(shown))  # dropped if the panel goes
        self._frame(result)
        self.select_event(None)
        self.select_device(None)
        if self.in_view.fitting_all:
            self.fit_all()
        self.info.setText(self.hint)

    def clear(self, message: str = "no result") -> None:
        self.result = None
        self.data = None
        self.bar_items_on_plot.clear()
        self.layout_rows = RowLayout()
        self.bars = PlacedBars.empty()
        self.lookup = BarLookup(self.bars, 0)
        self.bands.set_groups([], 0.0, 1.0)
        self.arrows.clear()
        self._arrows_of = None
        self.select_event(None)
        self.select_device(None)
        self.scrollbar.setRange(0, 0)
        self.plot.getAxis("left").setTicks([[]])
        self.title.setText(message)
        self.info.setText("")
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

    def _lay_out(self, result) -> None:
        """Rows, bars and the bar lookup. The events were read into columns once per result (maybe
        off-thread, timeline_data.py), so one row per stage / Fit all only recompute the rows."""
        columns = self.data.columns
        self.layout_rows = lay_out_rows(result.devices, result.critical_device, columns, self.lanes_merged,
                                        self.expanded)
        self.bars = place_bars(columns, self.layout_rows, self.lanes_merged)
        self.bar_items_on_plot.show(self.bars, self.graphics.width() - 30)
        self.lookup = BarLookup(self.bars, len(self.rows))

    def _frame(self, result) -> None:
        step = max(result.step_time_s, float(self.bars.end.max()) if len(self.bars.end) else 0.0, 1e-9)
        pad = step * 0.01
        self.bands.set_groups(self.layout_rows.groups, -pad, step + pad)
        self.in_view.frame(step, pad)
        self.title.setText(title_text(result, self.layout_rows, self.bar_count()))

    def _on_view_resized(self) -> None:
        """Keep rows legible (after Fit all: every row, however small, or one row per stage)."""
        if not self.rows:
            return
        if self.in_view.fitting_all:
            self._fit_lanes_to_view()
            self.in_view.show_all()
            self.in_view.follow()  # the same range, fewer pixels: the labels thin out
        else:
            self.in_view.keep_legible()

    # ---- whole job: fit all, one row per stage, arrows, the critical device -------------------

    def fit_all(self) -> None:
        """Every row in view. When the lanes would be thinner than MIN_ROW_PIXELS, one row per stage."""
        if self.result is None:
            return
        self.in_view.fitting_all = True
        self._lanes_by_user = None
        self._fit_lanes_to_view()
        self.in_view.show_all()

    def _fit_lanes_to_view(self) -> None:
        """A row per lane when every lane fits at MIN_ROW_PIXELS, else one row per stage; back to the
        lanes when the view grows enough (unless the user chose rows per lane or per stage)."""
        height = self.vb.height()
        if self.result is None or height <= 0 or self._lanes_by_user is not None:
            return
        fits = self.layout_rows.lane_rows * MIN_ROW_PIXELS <= height
        if fits != self.lanes_merged:
            return
        self._fitting_lanes = True
        try:
            self.act_merge_lanes.setChecked(not fits)  # rebuilds the rows (set_lanes_merged)
        finally:
            self._fitting_lanes = False

    def set_lanes_merged(self, merged: bool) -> None:
        """One row per stage (all lanes of a device in one row), or a row per lane."""
        merged = bool(merged)
        if self.act_merge_lanes.isChecked() != merged:
            self.act_merge_lanes.setChecked(merged)  # comes back here
            return
        if not self._fitting_lanes:  # the user's choice, kept until Fit all
            self._lanes_by_user = merged
            if not merged and self.vb.height() < self.layout_rows.lane_rows * MIN_ROW_PIXELS:
                self.in_view.fitting_all = False  # lanes at a readable height, the scroll bar for the rest
        if merged == self.lanes_merged:
            return
        self.lanes_merged = merged
        self.expanded = set()
        self._rebuild_rows()

    def toggle_stage(self, device: int) -> bool:
        """One row per stage: open this device's row into its lanes, or close it again (a double
        click on the row). False when the rows are a row per lane already."""
        if not self.lanes_merged or self.result is None or not any(d == device for d, _ in self.rows):
            return False
        self.expanded ^= {device}
        self._rebuild_rows()
        return True

    def _rebuild_rows(self) -> None:
        """Rows, bars, arrows and frame again, keeping the time range, the selection and the device."""
        if self.result is None:
            return
        x_range = self.vb.viewRange()[0]
        selected, device = self._selected, self.selected_device()
        self._lay_out(self.result)
        self._build_arrows()
        self._frame(self.result)
        self.vb.setXRange(*x_range, padding=0)
        self.select_event(selected)
        self.select_device(device, scroll=device is not None)

    def _set_arrows_shown(self, shown: bool) -> None:
        self.arrows.enabled = bool(shown)
        self.arrows.update()

    def arrow_pairs(self, kind: str | None = None) -> list[tuple[int, int]]:
        """(from event, to event) of the arrows drawn on the timeline ("wait", "pp" or all)."""
        if self.result is not None and self._arrows_of is not self.result:
            self._build_arrows()  # not built yet (a large step builds them after its bars)
        return self.arrows.pairs(kind)

    def _arrows_later(self, result) -> None:
        if self.result is result and self._arrows_of is not result:  # still shown, arrows not built yet
            self._build_arrows()

    def _build_arrows(self) -> None:
        """The pairs were found once per result (flows.py, as the trace; by the engine worker after
        the step time, or here), so Fit all and one row per stage only move them."""
        data = self.data
        self.arrows.join(data.arrow_kinds, data.arrow_sources, data.arrow_targets, self.bars, len(data.events))
        self._arrows_of = self.result

    def show_critical_device(self) -> int | None:
        """Scroll to the critical device (the one that ends the step last) and select it."""
        if self.result is None:
            return None
        device = int(self.result.critical_device)
        name = device_name(self.result, device)
        if not self.select_device(device, scroll=True):
            self.info.setText(f"the critical device {name} has no rows here")
            return None
        self.info.setText(f"critical device: {name} (ends the step last)")
        return device

    def select_device(self, device: int | None, scroll: bool = False) -> bool:
        """Outline a device's rows (and scroll them into view); False when it has no rows."""
        rows = self.layout_rows.rows_of(device)
        self.marks.mark_device(rows)
        self.in_view.selected_device = device if rows else None
        if self.rows:
            self.in_view.follow()  # its label
        if rows and scroll:
            self.in_view.bring_into_view(rows)
        return bool(rows)

    def selected_device(self) -> int | None:
        return self.in_view.selected_device

    # ---- interaction ------------------------------------------------------------------------

    def select_event(self, index: int | None) -> None:
        """Select an event (index into result.events); a wait also highlights whom it waited for."""
        self.marks.clear_event()
        self._highlighted = []
        self._selected = self._related = None
        self.arrows.emphasize_event(None)
        if index is None or self.result is None:
            return
        events = self.result.events
        if not (0 <= index < len(events)):
            raise IndexError(f"no event {index} (there are {len(events)})")
        self._selected = index
        self.arrows.emphasize_event(index)
        e = events[index]
        self._highlighted = self.layout_rows.rows_of(e.waited_for)
        self.marks.mark_event(self.layout_rows, e, self._highlighted)
        if e.waited_for is None:
            return
        # on the device it waited for: the bar that ended last at or before the wait's end (flows.py)
        self._related = self.data.waited_on.get(index)
        if self._related is not None:
            self.marks.outline(self.related_box, self.layout_rows, events[self._related])

    def selected_event(self) -> int | None:
        return self._selected

    def related_event(self) -> int | None:
        """The bar the selected wait waited on (on the device it waited for), if any."""
        return self._related

    def highlighted_rows(self) -> list[int]:
        return list(self._highlighted)
