"""How the Timeline's rows are arranged (the panel's `arrangement` part): a row per lane, or one row per
stage with some stages opened into their lanes; "Fit all" choosing between the two by the dock's
height until the user chooses; and, for each arrangement, the bars, the frame and the arrows placed
on its rows (timeline_layout.py places them; the events were read into columns once per result)."""
from __future__ import annotations

from .timeline_detail import title_text
from .timeline_layout import BarLookup, lay_out_rows, place_bars
from .timeline_rows_in_view import MIN_ROW_PIXELS


class TimelineArrangement:
    """panel.arrangement: the rows' arrangement and what is placed on them for the result shown."""

    def __init__(self, panel):
        self.panel = panel
        self.lanes_merged = False  # one row per stage (all lanes of a device in one row)
        self.expanded: set[int] = set()  # devices opened into their lanes while the others are one row each
        self._lanes_by_user: bool | None = None  # one row per stage chosen by the user (None: fitted)
        self._fitting_lanes = False
        self._arrows_of = None  # the result whose arrows are built (a large one builds them after its bars)

    def lay_out(self, result, fitting: bool = False) -> None:
        """Rows, bars and the bar lookup. The events were read into columns once per result (maybe
        off-thread, timeline_data.py), so one row per stage / Fit all only recompute the rows.
        `fitting` (Fit all): the rows per lane or per stage that Fit all will want, chosen before the
        bars are placed (not placed twice: ~10 ms and the arrows at once at 131k GPUs)."""
        panel = self.panel
        columns = panel.data.columns
        rows = lay_out_rows(result.devices, result.critical_device, columns, self.lanes_merged, self.expanded)
        merged = self._merged_to_fit(rows.lane_rows) if fitting else None
        if merged is not None:
            self.lanes_merged, self.expanded = merged, set()
            self._check_as_fitted(merged)  # (set_lanes_merged finds the rows as wanted)
            rows = lay_out_rows(result.devices, result.critical_device, columns, merged, self.expanded)
        panel.layout_rows = rows
        panel.bars = place_bars(columns, panel.layout_rows, self.lanes_merged)
        panel.bar_items_on_plot.show(panel.bars, panel.graphics.width() - 30)
        panel.lookup = BarLookup(panel.bars, len(panel.rows))

    def frame(self, result) -> None:
        panel = self.panel
        step = max(result.step_time_s, float(panel.bars.end.max()) if len(panel.bars.end) else 0.0, 1e-9)
        pad = step * 0.01
        panel.bands.set_groups(panel.layout_rows.groups, -pad, step + pad)
        panel.in_view.frame(step, pad)
        panel.title.setText(title_text(result, panel.layout_rows, panel.bar_count()))

    def view_resized(self) -> None:
        """Keep rows legible (after Fit all: every row, however small, or one row per stage)."""
        in_view = self.panel.in_view
        if not self.panel.rows:
            return
        if in_view.fitting_all:
            self._fit_lanes_to_view()
            in_view.show_all()
            in_view.follow()  # the same range, fewer pixels: the labels thin out
        else:
            in_view.keep_legible()

    def fit_all(self) -> None:
        """Every row in view. When the lanes would be thinner than MIN_ROW_PIXELS, one row per stage."""
        if self.panel.result is None:
            return
        self.panel.in_view.fitting_all = True
        self._lanes_by_user = None
        self._fit_lanes_to_view()
        self.panel.in_view.show_all()

    def _fit_lanes_to_view(self) -> None:
        """A row per lane when every lane fits at MIN_ROW_PIXELS, else one row per stage; back to the
        lanes when the view grows enough (unless the user chose rows per lane or per stage)."""
        panel = self.panel
        if panel.result is None:
            return
        merged = self._merged_to_fit(panel.layout_rows.lane_rows)
        if merged is None:
            return
        self._check_as_fitted(merged)  # rebuilds the rows (set_lanes_merged)

    def _check_as_fitted(self, merged: bool) -> None:
        """The action "One row per stage" set by Fit all, not by the user (whose choice Fit all keeps)."""
        self._fitting_lanes = True
        try:
            self.panel.act_merge_lanes.setChecked(merged)
        finally:
            self._fitting_lanes = False

    def _merged_to_fit(self, lane_rows: int) -> bool | None:
        """One row per stage (True) or a row per lane (False) where Fit all changes it; None otherwise."""
        height = self.panel.vb.height()
        if height <= 0 or self._lanes_by_user is not None:
            return None
        fits = lane_rows * MIN_ROW_PIXELS <= height
        return None if fits != self.lanes_merged else not fits

    def set_lanes_merged(self, merged: bool) -> None:
        """One row per stage (all lanes of a device in one row), or a row per lane."""
        panel = self.panel
        merged = bool(merged)
        if panel.act_merge_lanes.isChecked() != merged:
            panel.act_merge_lanes.setChecked(merged)  # comes back here
            return
        if not self._fitting_lanes:  # the user's choice, kept until Fit all
            self._lanes_by_user = merged
            if not merged and panel.vb.height() < panel.layout_rows.lane_rows * MIN_ROW_PIXELS:
                panel.in_view.fitting_all = False  # lanes at a readable height, the scroll bar for the rest
        if merged == self.lanes_merged:
            return
        self.lanes_merged = merged
        self.expanded = set()
        self._rebuild_rows()

    def toggle_stage(self, device: int) -> bool:
        """One row per stage: open this device's row into its lanes, or close it again (a double
        click on the row). False when the rows are a row per lane already."""
        panel = self.panel
        if not self.lanes_merged or panel.result is None or not any(d == device for d, _ in panel.rows):
            return False
        self.expanded ^= {device}
        self._rebuild_rows()
        return True

    def _rebuild_rows(self) -> None:
        """Rows, bars, arrows and frame again, keeping the time range, the selection and the device."""
        panel = self.panel
        if panel.result is None:
            return
        x_range = panel.vb.viewRange()[0]
        selected, device = panel.selection.event, panel.selection.device
        self.lay_out(panel.result)
        self.build_arrows()
        self.frame(panel.result)
        panel.vb.setXRange(*x_range, padding=0)
        panel.selection.select_event(selected)
        panel.selection.select_device(device, scroll=device is not None)

    # ---- arrows (timeline_arrows.py) ----------------------------------------------------------

    def set_arrows_shown(self, shown: bool) -> None:
        self.panel.arrows.enabled = bool(shown)
        self.panel.arrows.update()

    def forget_arrows(self) -> None:
        """A new result, or none: its arrows are not built yet."""
        self.panel.arrows.clear()
        self._arrows_of = None

    def arrow_pairs(self, kind: str | None = None) -> list[tuple[int, int]]:
        """(from event, to event) of the arrows drawn on the timeline ("wait", "pp" or all)."""
        panel = self.panel
        if panel.result is not None and self._arrows_of is not panel.result:
            self.build_arrows()  # not built yet (a large step builds them after its bars)
        return panel.arrows.pairs(kind)

    def adopt(self, shown, result) -> bool:
        """`result` draws the same as `shown` and takes its place; whether its arrows are built."""
        if self._arrows_of is shown:
            self._arrows_of = result
        return self._arrows_of is result

    def arrows_later(self, result) -> None:
        if self.panel.result is result and self._arrows_of is not result:  # still shown, arrows not built yet
            self.build_arrows()

    def build_arrows(self) -> None:
        """The pairs were found once per result (flows.py, as the trace; by the engine worker after
        the step time, or here), so Fit all and one row per stage only move them."""
        panel = self.panel
        data = panel.data
        panel.arrows.join(data.arrow_kinds, data.arrow_sources, data.arrow_targets, panel.bars, len(data.events))
        self._arrows_of = panel.result
