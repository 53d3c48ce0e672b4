"""Where the Timeline puts things, without Qt: its rows (one per representative device and stream
lane, or one per stage), each event's bar on them, and the bar at a point.

The panel (timeline.py) draws what these give; its whole-job picture (timeline_export.py) redraws
the same rows.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

LANES = ("compute", "tp", "cp", "ep", "pp", "dp", "wait")
MAX_DEVICES = 64  # above this many representative devices, one replica's stages are shown
MERGED = "all"  # the lane of a row that holds all of one device's lanes (one row per stage)
BAR_HALF = 0.40  # a full bar covers row +- BAR_HALF
HIDDEN_TOP = 0.10  # an overlapped bar covers row + HIDDEN_TOP .. row + BAR_HALF (the lane's lower part)
# One row per stage: work and waits in the upper part of the row, communication in the lower part
MERGED_WORK = (-0.42, 0.02)
MERGED_COMM = (0.06, 0.42)
MERGED_HIDDEN = (0.24, 0.42)
LABEL_PIXELS = 12.0  # row labels at least this far apart; denser rows label every k-th device
KIND_ORDER = ("forward", "backward", "wgrad", "recompute", "optimizer", "tp_comm", "tp_comm_hidden", "cp_comm",
              "cp_comm_hidden", "ep_comm", "ep_comm_hidden", "pp_comm", "pp_comm_hidden", "dp_comm",
              "dp_comm_hidden", "bubble", "imbalance_wait")


@dataclass
class RowLayout:
    """The rows top to bottom and what names them."""
    rows: list[tuple[int, str]] = field(default_factory=list)  # (device, lane); lane MERGED: all its lanes
    labels: list[str] = field(default_factory=list)  # "stage 0 gpu128 compute"
    axis_labels: list[str] = field(default_factory=list)  # the same, the device named on its first row only
    groups: list[tuple[float, float]] = field(default_factory=list)  # (top, bottom) of each device's rows
    row_index: dict[tuple[int, str], int] = field(default_factory=dict)  # (device, lane) -> its row
    lane_rows: int = 0  # rows when every lane has its own row
    collapsed: bool = False  # too many devices: one replica's stages

    def rows_of(self, device: int | None) -> list[int]:
        return [r for r, (d, _) in enumerate(self.rows) if d == device] if device is not None else []

    def row_at(self, y: float) -> int | None:
        row = int(math.floor(y + 0.5))
        return row if 0 <= row < len(self.rows) else None

    def short_label(self, row: int) -> str:
        """The device's name (without its lane)."""
        return self.labels[row] if self.rows[row][1] == MERGED else self.axis_labels[row].split("   ")[0]


def lay_out_rows(devices: dict, critical_device: int, columns, lanes_merged: bool, expanded: set[int]) -> RowLayout:
    """Rows for the lanes the events use (`columns`: timeline_data.EventColumns); one row per device
    when `lanes_merged`, except the `expanded` devices."""
    devices = dict(devices or {})
    device, stream, streams = columns.device, columns.stream, columns.streams
    pairs = np.unique(device * len(streams) + stream) if len(device) else np.zeros(0, dtype=np.int64)
    lanes_used = [(int(d), streams[int(k)]) for d, k in zip(*np.divmod(pairs, max(len(streams), 1)))]
    for d, _ in lanes_used:  # a device without a description still gets rows
        if d not in devices:
            devices[d] = {}
    order = sorted(devices, key=lambda d: (devices[d].get("replica", 0), devices[d].get("stage", 1 << 30), d))
    layout = RowLayout(collapsed=len(order) > MAX_DEVICES)
    if layout.collapsed:  # one row group per stage: the critical device's replica
        replica = devices.get(critical_device, {}).get("replica", devices[order[0]].get("replica", 0))
        order = [d for d in order if devices[d].get("replica", 0) == replica]
    replicas = {info.get("replica", 0) for info in devices.values()}
    shown = set(order)
    used: dict[int, set[str]] = {d: set() for d in order}
    for d, lane in lanes_used:
        if d in shown:
            used[d].add(lane)
    extra = sorted(set(streams) - set(LANES))
    layout.lane_rows = sum(len(lanes) for lanes in used.values())
    for d in order:
        lanes = [lane for lane in (*LANES, *extra) if lane in used[d]]
        if not lanes:
            continue
        first = len(layout.rows)
        info = devices[d]
        name = (f"stage {info['stage']} " if "stage" in info else "") + (
            f"r{info.get('replica', 0)} " if len(replicas) > 1 else "") + f"gpu{d}"
        merged = lanes_merged and d not in expanded
        if merged:  # one row for the device: every lane maps to it
            layout.row_index.update({(d, lane): first for lane in lanes})
            layout.rows.append((d, MERGED))
            layout.labels.append(name)
            layout.axis_labels.append(name)
        for i, lane in enumerate(lanes if not merged else ()):
            layout.row_index[(d, lane)] = len(layout.rows)
            layout.rows.append((d, lane))
            layout.labels.append(f"{name} {lane}")
            layout.axis_labels.append(f"{name}   {lane}" if i == 0 else lane)  # the device once per group
        layout.groups.append((first - 0.5, len(layout.rows) - 0.5))
    return layout


def row_ticks(layout: RowLayout, pixels_per_row: float, selected_device: int | None) -> list[tuple[int, str]]:
    """The row labels to show at `pixels_per_row`: every row, or the devices' first rows as many as
    fit LABEL_PIXELS apart (the selected device always named)."""
    if pixels_per_row >= LABEL_PIXELS:
        return list(enumerate(layout.axis_labels))
    ticks, last = [], -math.inf
    for first, _ in layout.groups:
        row = int(first + 0.5)
        if (row - last) * pixels_per_row >= LABEL_PIXELS:
            ticks.append((row, layout.short_label(row)))
            last = row
    rows = layout.rows_of(selected_device)
    if rows:
        ticks = [(r, t) for r, t in ticks if abs(r - rows[0]) * pixels_per_row >= LABEL_PIXELS]
        ticks.append((rows[0], layout.short_label(rows[0])))
    return ticks


@dataclass
class PlacedBars:
    """The events on a row shown, as columns (the others left out), and each bar's top and bottom."""
    start: np.ndarray
    end: np.ndarray
    row: np.ndarray
    index: np.ndarray  # into result.events
    hidden: np.ndarray  # overlapped communication
    wait: np.ndarray
    code: np.ndarray  # into kinds
    kinds: list[str]
    y0: np.ndarray
    y1: np.ndarray

    @classmethod
    def empty(cls) -> PlacedBars:
        floats, ints, flags = np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
        return cls(floats, floats, ints, ints, flags, flags, ints, [], floats, floats)

    def kinds_drawn(self) -> list[str]:
        """The kinds with a bar, in the legend's order."""
        ranked = sorted(self.kinds, key=lambda k: (KIND_ORDER.index(k) if k in KIND_ORDER else len(KIND_ORDER), k))
        present = (np.bincount(self.code, minlength=len(self.kinds)) > 0 if len(self.code)
                   else np.zeros(len(self.kinds), dtype=bool))
        return [k for k in ranked if present[self.kinds.index(k)]]

    def of_kind(self, kind: str) -> tuple[np.ndarray, ...]:
        """(x0, x1, y0, y1, waits) of one kind's bars."""
        sel = self.code == self.kinds.index(kind)
        return self.start[sel], self.end[sel], self.y0[sel], self.y1[sel], self.wait[sel]


def place_bars(columns, layout: RowLayout, lanes_merged: bool) -> PlacedBars:
    """Each event's row (a table lookup per event) and the top and bottom of its bar."""
    start, end, device, stream, streams, code, names = columns.as_tuple()
    devices, device_code = np.unique(device, return_inverse=True)
    table = np.full((len(devices), len(streams)), -1, dtype=np.int64)
    for (d, lane), r in layout.row_index.items():
        i = int(np.searchsorted(devices, d))
        if i < len(devices) and devices[i] == d and lane in streams:
            table[i, streams.index(lane)] = r
    row = table[device_code.reshape(-1), stream] if len(device) else np.zeros(0, dtype=np.int64)
    lane_of = np.array(streams, dtype=object)
    wait = stream == streams.index("wait") if "wait" in streams else np.zeros(len(stream), dtype=bool)
    keep = row >= 0
    index = np.flatnonzero(keep)
    start, end, row, code, wait = start[keep], end[keep], row[keep], code[keep], wait[keep]
    hidden_code = np.array([k.endswith("_hidden") for k in names], dtype=bool)
    hidden = hidden_code[code] if len(code) else np.zeros(0, dtype=bool)

    y0 = np.where(hidden, row + HIDDEN_TOP, row - BAR_HALF)
    y1 = row + BAR_HALF
    if lanes_merged:  # work and waits above, communication below, overlapped at the bottom
        comm = np.isin(lane_of[stream[keep]], ("compute", "wait"), invert=True) if len(stream) else wait
        top = np.where(hidden, MERGED_HIDDEN[0], np.where(comm, MERGED_COMM[0], MERGED_WORK[0]))
        bottom = np.where(comm | hidden, MERGED_COMM[1], MERGED_WORK[1])
        merged_row = np.array([lane == MERGED for _, lane in layout.rows], dtype=bool)
        one_row = merged_row[row] if len(row) else np.zeros(0, dtype=bool)  # (an opened stage keeps its lanes)
        y0, y1 = np.where(one_row, row + top, y0), np.where(one_row, row + bottom, y1)
    return PlacedBars(start, end, row, index, hidden, wait, code, list(names), y0, y1)


def bar_box(layout: RowLayout, event) -> tuple[float, float, float, float] | None:
    """(x, y, width, height) just around an event's bar; None when its lane has no row."""
    row = layout.row_index.get((event.device, event.stream))
    if row is None:
        return None
    top, bottom = (-BAR_HALF, BAR_HALF)
    if layout.rows[row][1] == MERGED:
        top, bottom = MERGED_WORK if event.stream in ("compute", "wait") else MERGED_COMM
    return event.start_s, row + top - 0.06, max(event.end_s - event.start_s, 0.0), bottom - top + 0.12


class BarLookup:
    """The bar at a time on a row: per row, its events sorted by start and the running maximum of their ends."""

    def __init__(self, bars: PlacedBars, n_rows: int):
        self.bars = bars
        self._by_row: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (order, starts, cummax end)
        order_all = np.lexsort((bars.start, bars.row))
        bounds = np.searchsorted(bars.row[order_all], np.arange(n_rows + 1))
        for r in range(n_rows):
            order = order_all[bounds[r]:bounds[r + 1]]
            ends = np.maximum.accumulate(bars.end[order]) if len(order) else bars.end[order]
            self._by_row.append((order, bars.start[order], ends))

    def event_at(self, t: float, row: int, tolerance_s: float = 0.0) -> int | None:
        """Index (in result.events) of the bar at time `t` in `row`, or the nearest within `tolerance_s`."""
        if not (0 <= row < len(self._by_row)) or not math.isfinite(t):
            return None
        order, starts, cummax = self._by_row[row]
        if not len(order):
            return None
        bars = self.bars
        i = int(np.searchsorted(starts, t + tolerance_s, side="right")) - 1
        best, best_key = None, None
        j, scanned = i, 0
        while j >= 0 and cummax[j] >= t - tolerance_s and scanned < 512:
            k = order[j]
            s, e = bars.start[k], bars.end[k]
            distance = 0.0 if s <= t <= e else min(abs(t - s), abs(t - e))
            if distance <= tolerance_s:
                # containing bars first, then exposed before overlapped, then the shortest
                key = (distance, bool(bars.hidden[k]), e - s)
                if best_key is None or key < best_key:
                    best, best_key = k, key
            j -= 1
            scanned += 1
        return None if best is None else int(bars.index[best])
