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
"""
from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QAction, QColor, QFont, QFontMetricsF
from PySide6.QtWidgets import QHBoxLayout, QLabel, QScrollBar, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from .breakdown import TEXT, FlexibleLabel, Swatch, fit_legend, make_legend, stale_banner, stale_text, style_axis
from .plot_export import PLOT_FORMATS, fmt_float, write_csv
from .timeline_arrows import ARROW_KINDS, TimelineArrows
from .timeline_data import event_columns, timeline_data
from .timeline_export import export_whole_timeline
from .timeline_items import KindBars, OutlineBox, RowBands, fmt_bytes, kind_color, kind_name


LANES = ("compute", "tp", "cp", "ep", "pp", "dp", "wait")
MAX_DEVICES = 64  # above this many representative devices, one replica's stages are shown
DEFAULT_VISIBLE_ROWS = 48  # at most this many rows in view at first; the others by panning
MIN_ROW_PIXELS = 9.0  # a smaller view shows fewer rows rather than squashing them
BAR_HALF = 0.40  # a full bar covers row +- BAR_HALF
HIDDEN_TOP = 0.10  # an overlapped bar covers row + HIDDEN_TOP .. row + BAR_HALF (the lane's lower part)
HOVER_PIXELS = 4.0  # how near (in pixels) the cursor must be to a bar that it misses
MERGED = "all"  # the lane of a row that holds all of one device's lanes (one row per stage)
# One row per stage: work and waits in the upper part of the row, communication in the lower part
MERGED_WORK = (-0.42, 0.02)
MERGED_COMM = (0.06, 0.42)
MERGED_HIDDEN = (0.24, 0.42)
LABEL_PIXELS = 12.0  # row labels at least this far apart; denser rows label every k-th device
SCROLL_STEPS = 10  # scroll bar units per row
ARROWS_AT_ONCE = 50_000  # events; a larger step draws its bars first and its arrows after

KIND_ORDER = ("forward", "backward", "wgrad", "recompute", "optimizer", "tp_comm", "tp_comm_hidden", "cp_comm",
              "cp_comm_hidden", "ep_comm", "ep_comm_hidden", "pp_comm", "pp_comm_hidden", "dp_comm",
              "dp_comm_hidden", "bubble", "imbalance_wait")
SELECTION = QColor("#111827")
RELATED = QColor("#f59e0b")
HIGHLIGHT = QColor(250, 204, 21, 70)


class TimeViewBox(pg.ViewBox):
    """Wheel and right-drag zoom time only; left-drag pans time and rows."""

    def wheelEvent(self, ev, axis=None):
        super().wheelEvent(ev, axis=0)

    def mouseDragEvent(self, ev, axis=None):
        if ev.button() == Qt.RightButton:
            axis = 0
        super().mouseDragEvent(ev, axis=axis)


class DetailLine(QLabel):
    """One line of fixed height under the plot: a text too long for it ends in "…" and its
    tooltip holds the whole text (hovering never changes the panel's layout)."""

    def __init__(self, text: str = "", parent: QWidget | None = None):
        super().__init__(parent)
        self._full = ""
        self.setTextFormat(Qt.PlainText)
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Fixed)
        self.setFixedHeight(self.fontMetrics().height() + 6)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        self._full = str(text)
        self._elide()

    def full_text(self) -> str:
        return self._full

    def is_elided(self) -> bool:
        return super().text() != self._full

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        margins = self.contentsMargins()
        room = max(0, self.width() - margins.left() - margins.right() - 14)  # the style sheet's padding
        shown = self.fontMetrics().elidedText(self._full, Qt.ElideRight, room) if self._full else ""
        super().setText(shown)
        self.setToolTip(self._full if shown != self._full else "")


class TimelinePanel(QWidget):
    """Gantt chart of the step's events, one row per (representative device, stream lane)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.result = None
        self.rows: list[tuple[int, str]] = []  # (device, lane) per row, top to bottom
        self.row_labels: list[str] = []  # "stage 0 gpu128 compute"
        self._axis_labels: list[str] = []  # the same, the device named on its first row only
        self._groups: list[tuple[float, float]] = []
        self._row_index: dict[tuple[int, str], int] = {}
        self.collapsed = False
        self.lanes_merged = False  # one row per stage (all lanes of a device in one row)
        self.expanded: set[int] = set()  # devices opened into their lanes while the others are one row each
        # every row in view (the lanes fitted to the dock), kept on resize, until the user scrolls
        self.fitting_all = True
        self._lanes_by_user: bool | None = None  # one row per stage chosen by the user (None: fitted)
        self._fitting_lanes = False
        self._lane_rows = 0  # rows when every lane has its own row
        self._arrow_cache: tuple | None = None  # (result, kinds, sources, targets, wait -> bar waited on)
        self.design_name = ""  # named in exported plots' titles (the main window sets it)
        self._selected_device: int | None = None
        self._syncing_scroll = False
        self.items: dict[str, KindBars] = {}
        self._selected: int | None = None
        self._related: int | None = None
        self._highlighted: list[int] = []
        self._clear_arrays()

        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("w")
        ci = self.graphics.ci
        ci.setContentsMargins(6, 4, 14, 4)
        ci.setSpacing(2)
        self.title = FlexibleLabel("", color=TEXT, size="10pt", justify="left")
        ci.addItem(self.title, row=0, col=0)
        self.legend = make_legend(9)
        ci.addItem(self.legend, row=1, col=0)
        self.vb = TimeViewBox()
        self.plot = pg.PlotItem(viewBox=self.vb)
        ci.addItem(self.plot, row=2, col=0)
        ci.layout.setRowStretchFactor(2, 10)
        self.plot.setMenuEnabled(False)
        self.vb.setMenuEnabled(False)  # its Export... would offer pyqtgraph's SVG exporter (crashes on 6.12)
        self.plot.hideButtons()
        self.vb.invertY(True)
        self.vb.setMouseEnabled(x=True, y=True)
        self.vb.disableAutoRange()
        self.plot.setLabel("bottom", "time", units="s")
        for name in ("left", "bottom"):
            style_axis(self.plot.getAxis(name), 8.5)
        self.plot.getAxis("left").setStyle(tickLength=0)
        self.plot.showGrid(x=True, y=False, alpha=0.18)
        self.vb.sigResized.connect(self._on_view_resized)
        self.bands = RowBands()
        self.plot.addItem(self.bands)
        self.highlight_items: list[pg.LinearRegionItem] = []
        self.selection_box = self._box(SELECTION, 2.0)
        self.related_box = self._box(RELATED, 2.5)
        self.arrows = TimelineArrows()
        self.plot.addItem(self.arrows, ignoreBounds=True)
        self.device_items: list[pg.LinearRegionItem] = []

        self.info = DetailLine("")
        self.info.setObjectName("hover")
        self.info.setStyleSheet(f"color: {TEXT}; padding: 2px 6px")
        self.hint = ("wheel or right-drag: zoom time · left-drag: pan · hover a bar for details · "
                     "click a wait to see whom it waited for · one row per stage: double-click a stage to "
                     "open its lanes")
        self.info.setText(self.hint)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        self.stale_banner = stale_banner()
        layout.addWidget(self.stale_banner)
        # The step time is shown first; until this revision's events come, the timeline says so, on
        # top of the plot (opaque, in its corner): showing it moves nothing, so the 70k bars are not redrawn
        self.updating = QLabel("updating to the newest result...", self.graphics)
        self.updating.setObjectName("updating")
        self.updating.setStyleSheet("color: #6b7280; background: #ffffff; padding: 2px 6px")
        self.updating.setAutoFillBackground(True)
        self.updating.adjustSize()
        self.updating.hide()
        self.revision: int | None = None  # the document revision of the events shown
        layout.addWidget(self._make_toolbar())
        body = QHBoxLayout()
        body.setContentsMargins(0, 0, 0, 0)
        body.setSpacing(0)
        body.addWidget(self.graphics, 1)
        self.scrollbar = QScrollBar(Qt.Vertical)
        self.scrollbar.setObjectName("rows")
        self.scrollbar.valueChanged.connect(self._on_scrolled)
        body.addWidget(self.scrollbar)
        layout.addLayout(body, 1)
        layout.addWidget(self.info)
        self.vb.sigYRangeChanged.connect(self._on_rows_in_view_changed)

        self.graphics.installEventFilter(self)  # the legend takes as many columns as the width allows
        self.graphics.viewport().installEventFilter(self)  # a double click opens a stage into its lanes
        scene = self.graphics.scene()
        scene.sigMouseMoved.connect(self._on_mouse_moved)
        scene.sigMouseClicked.connect(self._on_mouse_clicked)

    def _make_toolbar(self) -> QWidget:
        """Fit all, the critical device, one row per stage, arrows: actions (tests trigger them) on buttons."""
        bar = QWidget()
        row = QHBoxLayout(bar)
        row.setContentsMargins(4, 2, 4, 2)
        row.setSpacing(4)

        def action(text: str, tip: str, slot, checkable: bool = False, checked: bool = False) -> QAction:
            act = QAction(text, self)
            act.setToolTip(tip)
            act.setCheckable(checkable)
            act.setChecked(checked)
            (act.toggled if checkable else act.triggered).connect(slot)
            self.addAction(act)
            button = QToolButton()
            button.setDefaultAction(act)
            button.setToolButtonStyle(Qt.ToolButtonTextOnly)
            row.addWidget(button)
            return act

        self.act_fit_all = action("Fit all", "Every stage in view: rows shrink, or become one row per stage, to fit",
                                  lambda: self.fit_all())
        self.act_critical = action("Critical device", "Scroll to and select the device that ends the step last",
                                   lambda: self.show_critical_device())
        self.act_merge_lanes = action("One row per stage", "All lanes of a device in one row: work on top, "
                                      "communication below", self.set_lanes_merged, checkable=True)
        self.act_arrows = action("Arrows", "Arrows for waits (from the bar waited on) and pipeline send → "
                                 "receive; drawn when few enough are in view", self._set_arrows_shown,
                                 checkable=True, checked=True)
        row.addStretch(1)
        return bar

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
        elif (watched is self.graphics.viewport() and event.type() == QEvent.MouseButtonDblClick
              and event.button() == Qt.LeftButton and self.lanes_merged):
            # one row per stage: a double click opens the stage under it into its lanes (or closes it)
            point = self._view_point(self.graphics.mapToScene(event.position().toPoint()))
            row = self.row_at(point.y()) if point is not None else None
            if row is not None and self.toggle_stage(self.rows[row][0]):
                return True
        return super().eventFilter(watched, event)

    def _box(self, color: QColor, width: float) -> OutlineBox:
        box = OutlineBox(color, width)
        self.plot.addItem(box, ignoreBounds=True)
        return box

    def _clear_arrays(self) -> None:
        self.ev_start = np.zeros(0)
        self.ev_end = np.zeros(0)
        self.ev_row = np.zeros(0, dtype=np.int64)
        self.ev_index = np.zeros(0, dtype=np.int64)  # index into result.events
        self.ev_hidden = np.zeros(0, dtype=bool)
        self._by_row: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (order, starts, cummax end)

    # ---- public -----------------------------------------------------------------------------

    def show_result(self, result) -> None:
        if result is None:
            self.clear("no result")
            return
        self.result = result
        self.stale_banner.hide()
        self.updating.hide()
        events = result.events
        self._build_rows(result, events)
        self._build_items(events)
        self.arrows.clear()
        if len(events) <= ARROWS_AT_ONCE:
            self._build_arrows(events)
        else:  # the bars first; the arrows (a second pass over the events) a moment later
            QTimer.singleShot(0, self, lambda shown=result: self._arrows_later(shown))  # dropped if the panel goes
        self._frame(result)
        self.select_event(None)
        self.select_device(None)
        if self.fitting_all:
            self.fit_all()
        self.info.setText(self.hint)

    def clear(self, message: str = "no result") -> None:
        self.result = None
        for item in self.items.values():
            self.plot.removeItem(item)
        self.items = {}
        self.legend.clear()
        self.rows, self.row_labels, self._axis_labels = [], [], []
        self._clear_arrays()
        self.bands.set_groups([], 0.0, 1.0)
        self.arrows.clear()
        self._arrow_cache = self._column_cache = None
        self.select_event(None)
        self.select_device(None)
        self.scrollbar.setRange(0, 0)
        self.plot.getAxis("left").setTicks([[]])
        self.title.setText(message)
        self.info.setText("")
        self.stale_banner.hide()
        self.updating.hide()
        self.revision = None

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

    def forget(self, message: str = "no result") -> None:
        self.clear(message)

    def bar_count(self) -> int:
        """Bars drawn (all kinds)."""
        return sum(len(item) for item in self.items.values())

    def bar_items(self) -> dict[str, KindBars]:
        """The graphics items drawing bars: one per event kind."""
        return dict(self.items)

    def event_at(self, t: float, row: int, tolerance_s: float = 0.0) -> int | None:
        """Index (in result.events) of the bar at time `t` in `row`, or the nearest within `tolerance_s`."""
        if not (0 <= row < len(self._by_row)) or not math.isfinite(t):
            return None
        order, starts, cummax = self._by_row[row]
        if not len(order):
            return None
        i = int(np.searchsorted(starts, t + tolerance_s, side="right")) - 1
        best, best_key = None, None
        j, scanned = i, 0
        while j >= 0 and cummax[j] >= t - tolerance_s and scanned < 512:
            k = order[j]
            s, e = self.ev_start[k], self.ev_end[k]
            distance = 0.0 if s <= t <= e else min(abs(t - s), abs(t - e))
            if distance <= tolerance_s:
                # containing bars first, then exposed before overlapped, then the shortest
                key = (distance, bool(self.ev_hidden[k]), e - s)
                if best_key is None or key < best_key:
                    best, best_key = k, key
            j -= 1
            scanned += 1
        return None if best is None else int(self.ev_index[best])

    def row_at(self, y: float) -> int | None:
        row = int(math.floor(y + 0.5))
        return row if 0 <= row < len(self.rows) else None

    def event_text(self, index: int) -> str:
        e = self.result.events[index]
        lines = [f"{e.label} — {kind_name(e.kind)} ({e.kind})",
                 f"start {e.start_s:.6f} s · duration {(e.end_s - e.start_s) * 1e3:.3f} ms"]
        if e.micro_batch >= 0:
            lines.append(f"micro-batch {e.micro_batch} · chunk {e.chunk}")
        if e.bytes:
            lines.append(f"bytes {fmt_bytes(e.bytes)} ({e.bytes:,.0f})")
        where = [f"group {e.group}" if e.group else "", f"resource {e.resource}" if e.resource else ""]
        if any(where):
            lines.append(" · ".join(w for w in where if w))
        if e.waited_for is not None:
            lines.append(f"waited for {self._device_name(e.waited_for)} (click to show)")
        lines.append(f"on {self._device_name(e.device)}, {e.stream} lane")
        return "\n".join(lines)

    def select_event(self, index: int | None) -> None:
        """Select an event (index into result.events); a wait also highlights whom it waited for."""
        for item in self.highlight_items:
            self.plot.removeItem(item)
        self.highlight_items = []
        self._highlighted = []
        self._selected = self._related = None
        self.selection_box.setVisible(False)
        self.related_box.setVisible(False)
        self.arrows.emphasize_event(None)
        if index is None or self.result is None:
            return
        events = self.result.events
        if not (0 <= index < len(events)):
            raise IndexError(f"no event {index} (there are {len(events)})")
        self._selected = index
        self.arrows.emphasize_event(index)
        self._outline(self.selection_box, index)
        e = events[index]
        if e.waited_for is None:
            return
        rows = [r for r, (device, _) in enumerate(self.rows) if device == e.waited_for]
        self._highlighted = rows
        if rows:
            region = pg.LinearRegionItem(values=(rows[0] - 0.5, rows[-1] + 0.5), orientation="horizontal",
                                         movable=False, brush=pg.mkBrush(HIGHLIGHT), pen=pg.mkPen(None))
            region.setZValue(-10)
            self.plot.addItem(region, ignoreBounds=True)
            self.highlight_items.append(region)
        self._related = self._waited_on(index)
        if self._related is not None:
            self._outline(self.related_box, self._related)

    def selected_event(self) -> int | None:
        return self._selected

    def related_event(self) -> int | None:
        """The bar the selected wait waited on (on the device it waited for), if any."""
        return self._related

    def highlighted_rows(self) -> list[int]:
        return list(self._highlighted)

    def export(self, path: str | os.PathLike) -> Path:
        """.png / .svg / .pdf: the whole chart (every row, the whole step) under a title naming the
        design and the plan; .csv: every event of the result, one row each
        (device,stream,kind,label,start_s,end_s,micro_batch,chunk)."""
        target = Path(path)
        if self.result is None:
            raise ValueError("nothing to export: no result is shown")
        if target.suffix.lower() == ".csv":
            rows = ([e.device, e.stream, e.kind, e.label, fmt_float(e.start_s), fmt_float(e.end_s), e.micro_batch,
                     e.chunk] for e in self.result.events)
            return write_csv(target, ("device", "stream", "kind", "label", "start_s", "end_s", "micro_batch",
                                      "chunk"), rows)
        if target.suffix.lower() not in PLOT_FORMATS:
            raise ValueError(f"cannot export to {target.name!r}: unknown extension {target.suffix or '(none)'!r}; "
                             f"use one of {', '.join(PLOT_FORMATS + ('.csv',))}")
        return export_whole_timeline(self, target)  # every row and the whole step, not only the view

    # ---- building ---------------------------------------------------------------------------

    def _device_name(self, device: int) -> str:
        info = (self.result.devices or {}).get(device, {}) if self.result is not None else {}
        return f"stage {info['stage']} gpu{device}" if "stage" in info else f"gpu{device}"

    def _build_rows(self, result, events) -> None:
        devices = dict(result.devices or {})
        _, _, device, stream, streams, _, _ = self._columns(events)
        pairs = np.unique(device * len(streams) + stream) if len(device) else np.zeros(0, dtype=np.int64)
        lanes_used = [(int(d), streams[int(k)]) for d, k in zip(*np.divmod(pairs, max(len(streams), 1)))]
        for d, _ in lanes_used:  # a device without a description still gets rows
            if d not in devices:
                devices[d] = {}
        order = sorted(devices, key=lambda d: (devices[d].get("replica", 0), devices[d].get("stage", 1 << 30), d))
        self.collapsed = len(order) > MAX_DEVICES
        if self.collapsed:  # one row group per stage: the critical device's replica
            replica = devices.get(result.critical_device, {}).get("replica", devices[order[0]].get("replica", 0))
            order = [d for d in order if devices[d].get("replica", 0) == replica]
        replicas = {info.get("replica", 0) for info in devices.values()}
        shown = set(order)
        used: dict[int, set[str]] = {d: set() for d in order}
        for d, lane in lanes_used:
            if d in shown:
                used[d].add(lane)
        extra = sorted(set(streams) - set(LANES))
        self._lane_rows = sum(len(lanes) for lanes in used.values())
        self.rows, self.row_labels, self._axis_labels = [], [], []
        groups = []
        self._row_index = {}
        for d in order:
            lanes = [lane for lane in (*LANES, *extra) if lane in used[d]]
            if not lanes:
                continue
            first = len(self.rows)
            info = devices[d]
            name = (f"stage {info['stage']} " if "stage" in info else "") + (
                f"r{info.get('replica', 0)} " if len(replicas) > 1 else "") + f"gpu{d}"
            merged = self.lanes_merged and d not in self.expanded
            if merged:  # one row for the device: every lane maps to it
                self._row_index.update({(d, lane): first for lane in lanes})
                self.rows.append((d, MERGED))
                self.row_labels.append(name)
                self._axis_labels.append(name)
            for i, lane in enumerate(lanes if not merged else ()):
                self._row_index[(d, lane)] = len(self.rows)
                self.rows.append((d, lane))
                self.row_labels.append(f"{name} {lane}")
                self._axis_labels.append(f"{name}   {lane}" if i == 0 else lane)  # the device once per group
            groups.append((first - 0.5, len(self.rows) - 0.5))
        self._groups = groups

    def _columns(self, events):
        """(start, end, device, stream code, streams, kind code, kinds) of the result's events: read
        once per result, so one row per stage / Fit all only recompute the rows."""
        cache = getattr(self, "_column_cache", None)
        if cache is not None and cache[0] is events:
            return cache[1]
        if self.result is not None and self.result.events is events:  # read once per result (maybe off-thread)
            columns = timeline_data(self.result).columns.as_tuple()
        else:
            columns = event_columns(events).as_tuple()
        self._column_cache = (events, columns)
        return columns

    def _build_items(self, events) -> None:
        start, end, device, stream, streams, code, names = self._columns(events)
        code_of = {k: i for i, k in enumerate(names)}
        # a row per (device, stream): one table lookup per event
        devices, device_code = np.unique(device, return_inverse=True)
        table = np.full((len(devices), len(streams)), -1, dtype=np.int64)
        for (d, lane), r in self._row_index.items():
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
        self.ev_start, self.ev_end, self.ev_row, self.ev_index, self.ev_hidden = start, end, row, index, hidden

        y0 = np.where(hidden, row + HIDDEN_TOP, row - BAR_HALF)
        y1 = row + BAR_HALF
        if self.lanes_merged:  # work and waits above, communication below, overlapped at the bottom
            comm = np.isin(lane_of[stream[keep]], ("compute", "wait"), invert=True) if len(stream) else wait[keep]
            top = np.where(hidden, MERGED_HIDDEN[0], np.where(comm, MERGED_COMM[0], MERGED_WORK[0]))
            bottom = np.where(comm | hidden, MERGED_COMM[1], MERGED_WORK[1])
            merged_row = np.array([lane == MERGED for _, lane in self.rows], dtype=bool)
            one_row = merged_row[row] if len(row) else np.zeros(0, dtype=bool)  # (an opened stage keeps its lanes)
            y0, y1 = np.where(one_row, row + top, y0), np.where(one_row, row + bottom, y1)
        ranked = sorted(names, key=lambda k: (KIND_ORDER.index(k) if k in KIND_ORDER else len(KIND_ORDER), k))
        present = np.bincount(code, minlength=len(names)) > 0 if len(code) else np.zeros(len(names), dtype=bool)
        kinds = [k for k in ranked if present[code_of[k]]]
        if kinds == list(self.items):  # the same kinds as the result before: the same items, new bars
            for k in kinds:
                sel = code == code_of[k]
                self.items[k].set_bars(start[sel], end[sel], y0[sel], y1[sel], wait[sel])
        else:
            for item in self.items.values():
                self.plot.removeItem(item)
            self.items = {}
            self.legend.clear()
            for k in kinds:
                sel = code == code_of[k]
                item = KindBars(k, start[sel], end[sel], y0[sel], y1[sel], wait[sel], kind_color(k))
                item.setZValue(5 if item.hidden else 0)
                self.plot.addItem(item)
                self.items[k] = item
                self.legend.addItem(Swatch(item, item.color, hatched=k in ("bubble", "imbalance_wait"),
                                           thin=item.hidden), kind_name(k))
            fit_legend(self.legend, self.graphics.width() - 30)

        # lookup per row: events sorted by start and the running maximum of their ends
        self._by_row = []
        order_all = np.lexsort((start, row))
        bounds = np.searchsorted(row[order_all], np.arange(len(self.rows) + 1))
        for r in range(len(self.rows)):
            order = order_all[bounds[r]:bounds[r + 1]]
            self._by_row.append((order, start[order], np.maximum.accumulate(end[order]) if len(order) else end[order]))

    def _frame(self, result) -> None:
        step = max(result.step_time_s, float(self.ev_end.max()) if len(self.ev_end) else 0.0, 1e-9)
        pad = step * 0.01
        rows = max(len(self.rows), 1)
        self.bands.set_groups(self._groups, -pad, step + pad)
        axis = self.plot.getAxis("left")
        axis.setTicks([[(float(r), label) for r, label in enumerate(self._axis_labels)]])
        metrics = QFontMetricsF(axis.style["tickFont"] or QFont())
        axis.setWidth(int(max((metrics.horizontalAdvance(t) for t in self._axis_labels), default=40) + 14))
        self.vb.setLimits(xMin=-pad, xMax=step + pad, minXRange=step * 1e-6, yMin=-0.6, yMax=rows - 0.4,
                          maxYRange=rows + 0.2)
        span = rows if self.fitting_all else self._visible_rows()
        self.vb.setRange(xRange=(-pad / 2, step + pad / 2), yRange=(-0.5, span - 0.5), padding=0)
        self._on_rows_in_view_changed()
        crit = self._device_name(result.critical_device)
        devices = len({d for d, _ in self.rows})
        scope = (f"{devices} devices (one replica of {len({i.get('replica', 0) for i in result.devices.values()})} "
                 f"distinct; one row group per pipeline stage)" if self.collapsed else
                 f"{devices} representative device{'' if devices == 1 else 's'}")
        self.title.setText(f"Step timeline · {result.step_time_s:.3f} s · {scope} · "
                           f"{self.bar_count():,} events · critical device: {crit}")

    def _visible_rows(self) -> int:
        height = self.vb.height()
        fit = int(height / MIN_ROW_PIXELS) if height > 0 else DEFAULT_VISIBLE_ROWS
        return max(1, min(len(self.rows), DEFAULT_VISIBLE_ROWS, max(3, fit)))

    def _on_view_resized(self) -> None:
        """Keep rows legible: as many as fit at MIN_ROW_PIXELS, from the same top row (after Fit
        all: every row, however small)."""
        if not self.rows:
            return
        if self.fitting_all:
            self._fit_lanes_to_view()
            self.vb.setYRange(-0.5, len(self.rows) - 0.5, padding=0)
            self._on_rows_in_view_changed()  # the same range, fewer pixels: the labels thin out
            return
        span = self._visible_rows()
        top = self.vb.viewRange()[1][0]
        top = min(max(top, -0.5), len(self.rows) - 0.5 - span)
        self.vb.setYRange(top, top + span, padding=0)

    def _on_rows_in_view_changed(self, *args) -> None:
        """The scroll bar and the row labels follow the rows in view (labels thinned when dense)."""
        if not self.rows:
            self.plot.getAxis("left").setTicks([[]])
            return
        top, bottom = self.vb.viewRange()[1]
        span = max(bottom - top, 1e-9)
        self._syncing_scroll = True
        try:
            hidden = max(0.0, len(self.rows) - span)
            self.scrollbar.setRange(0, int(round(hidden * SCROLL_STEPS)))
            self.scrollbar.setPageStep(max(1, int(round(span * SCROLL_STEPS))))
            self.scrollbar.setSingleStep(SCROLL_STEPS)
            self.scrollbar.setValue(int(round((top + 0.5) * SCROLL_STEPS)))
            self.scrollbar.setVisible(hidden > 0.05)
        finally:
            self._syncing_scroll = False
        height = self.vb.height()
        pixels = height / span if height > 0 else MIN_ROW_PIXELS
        if pixels >= LABEL_PIXELS:
            ticks = list(enumerate(self._axis_labels))
        else:  # the devices' first rows, as many as fit LABEL_PIXELS apart
            ticks, last = [], -math.inf
            for first, _ in self._groups:
                row = int(first + 0.5)
                if (row - last) * pixels >= LABEL_PIXELS:
                    ticks.append((row, self.row_labels[row] if self.rows[row][1] == MERGED else
                                  self._axis_labels[row].split("   ")[0]))
                    last = row
            if self._selected_device is not None:  # the selected device is always named
                row = next(r for r, (d, _) in enumerate(self.rows) if d == self._selected_device)
                ticks = [(r, t) for r, t in ticks if abs(r - row) * pixels >= LABEL_PIXELS]
                ticks.append((row, self.row_labels[row] if self.rows[row][1] == MERGED else
                              self._axis_labels[row].split("   ")[0]))
        self.plot.getAxis("left").setTicks([[(float(r), label) for r, label in ticks]])

    def _on_scrolled(self, value: int) -> None:
        if self._syncing_scroll or not self.rows:
            return
        self.fitting_all = False
        top, bottom = self.vb.viewRange()[1]
        start = value / SCROLL_STEPS - 0.5
        self.vb.setYRange(start, start + (bottom - top), padding=0)

    # ---- whole job: fit all, the critical device, arrows -------------------------------------

    def fit_all(self) -> None:
        """Every row in view. When the lanes would be thinner than MIN_ROW_PIXELS, one row per stage."""
        if self.result is None:
            return
        self.fitting_all = True
        self._lanes_by_user = None
        self._fit_lanes_to_view()
        self.vb.setYRange(-0.5, len(self.rows) - 0.5, padding=0)

    def _fit_lanes_to_view(self) -> None:
        """A row per lane when every lane fits at MIN_ROW_PIXELS, else one row per stage; back to the
        lanes when the view grows enough (unless the user chose rows per lane or per stage)."""
        height = self.vb.height()
        if self.result is None or height <= 0 or self._lanes_by_user is not None:
            return
        fits = self._lane_rows * MIN_ROW_PIXELS <= height
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
            if not merged and self.vb.height() < self._lane_rows * MIN_ROW_PIXELS:
                self.fitting_all = False  # lanes at a readable height, the scroll bar for the rest
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
        selected, device = self._selected, self._selected_device
        self._build_rows(self.result, self.result.events)
        self._build_items(self.result.events)
        self._build_arrows(self.result.events)
        self._frame(self.result)
        self.vb.setXRange(*x_range, padding=0)
        self.select_event(selected)
        self.select_device(device, scroll=device is not None)

    def _set_arrows_shown(self, shown: bool) -> None:
        self.arrows.enabled = bool(shown)
        self.arrows.update()

    def arrow_pairs(self, kind: str | None = None) -> list[tuple[int, int]]:
        """(from event, to event) of the arrows drawn on the timeline ("wait", "pp" or all)."""
        if self.result is not None and not len(self.arrows) and self._arrow_cache is None:
            self._build_arrows(self.result.events)  # not built yet (a large step builds them after its bars)
        return self.arrows.pairs(kind)

    def _arrow_pairs(self):
        """(kinds, sources, targets, wait -> bar waited on) of the result shown; computed once per
        result (flows.py, as the trace), so Fit all and one row per stage only move them."""
        if self._arrow_cache is None or self._arrow_cache[0] is not self.result:
            data = timeline_data(self.result)  # built by the engine worker after the step time (or here)
            self._arrow_cache = (self.result, data.arrow_kinds, data.arrow_sources, data.arrow_targets, data.waited_on)
        return self._arrow_cache[1:]

    def _arrows_later(self, result) -> None:
        if self.result is result and not len(self.arrows):  # still the result shown, arrows not built yet
            self._build_arrows(result.events)

    def _build_arrows(self, events) -> None:
        kinds, sources, targets, _ = self._arrow_pairs()
        n = len(events)
        row = np.full(n, -1, dtype=np.int64)
        start, end = np.zeros(n), np.zeros(n)
        row[self.ev_index], start[self.ev_index], end[self.ev_index] = self.ev_row, self.ev_start, self.ev_end
        keep = (row[sources] >= 0) & (row[targets] >= 0)  # both ends on a device shown
        kinds, sources, targets = kinds[keep], sources[keep], targets[keep]
        # to the wait's end (the moment it stops waiting) / to the receiving op's start
        x1 = np.where(kinds == ARROW_KINDS.index("wait"), end[targets], start[targets])
        self.arrows.set_arrows(kinds, sources, targets, end[sources], row[sources], x1, row[targets])

    def show_critical_device(self) -> int | None:
        """Scroll to the critical device (the one that ends the step last) and select it."""
        if self.result is None:
            return None
        device = int(self.result.critical_device)
        if not self.select_device(device, scroll=True):
            self.info.setText(f"the critical device {self._device_name(device)} has no rows here")
            return None
        self.info.setText(f"critical device: {self._device_name(device)} (ends the step last)")
        return device

    def select_device(self, device: int | None, scroll: bool = False) -> bool:
        """Outline a device's rows (and scroll them into view); False when it has no rows."""
        for item in self.device_items:
            self.plot.removeItem(item)
        self.device_items = []
        self._selected_device = None
        rows = [r for r, (d, _) in enumerate(self.rows) if d == device] if device is not None else []
        if not rows:
            if self.rows:
                self._on_rows_in_view_changed()
            return False
        self._selected_device = device
        region = pg.LinearRegionItem(values=(rows[0] - 0.5, rows[-1] + 0.5), orientation="horizontal",
                                     movable=False, brush=pg.mkBrush(QColor(37, 99, 235, 40)),
                                     pen=pg.mkPen(QColor("#1d4ed8"), width=2))
        region.setZValue(-9)
        self.plot.addItem(region, ignoreBounds=True)
        self.device_items.append(region)
        self._on_rows_in_view_changed()  # its label
        if scroll:
            top, bottom = self.vb.viewRange()[1]
            span = bottom - top
            height = self.vb.height()
            if height > 0 and height / max(span, 1e-9) < MIN_ROW_PIXELS:  # rows too thin to read: zoom in
                span = max(self._visible_rows(), len(rows))
                top, bottom = math.inf, -math.inf
            if rows[0] - 0.5 < top or rows[-1] + 0.5 > bottom:  # centre it, within the rows
                centre = (rows[0] + rows[-1]) / 2
                start = min(max(centre - span / 2, -0.5), max(-0.5, len(self.rows) - 0.5 - span))
                self.fitting_all = False
                self.vb.setYRange(start, start + span, padding=0)
        return True

    def selected_device(self) -> int | None:
        return self._selected_device

    # ---- interaction ------------------------------------------------------------------------

    def _outline(self, box: OutlineBox, index: int) -> None:
        e = self.result.events[index]
        row = self._row_index.get((e.device, e.stream))
        if row is None:
            box.setVisible(False)
            return
        top, bottom = (-BAR_HALF, BAR_HALF)
        if self.rows[row][1] == MERGED:
            top, bottom = MERGED_WORK if e.stream in ("compute", "wait") else MERGED_COMM
        box.set_rect(QRectF(e.start_s, row + top - 0.06, max(e.end_s - e.start_s, 0.0), bottom - top + 0.12))
        box.setVisible(True)

    def _waited_on(self, index: int) -> int | None:
        """On the device a wait waited for: the bar that ended last at or before the wait's end (its
        message or its work), preferring the pipeline send lane: the start of its arrow (flows.py)."""
        return self._arrow_pairs()[3].get(index)

    def _view_point(self, scene_pos) -> QPointF | None:
        if self.result is None or not self.vb.sceneBoundingRect().contains(scene_pos):
            return None
        return self.vb.mapSceneToView(scene_pos)

    def _hit(self, scene_pos) -> int | None:
        point = self._view_point(scene_pos)
        if point is None:
            return None
        row = self.row_at(point.y())
        if row is None:
            return None
        return self.event_at(point.x(), row, HOVER_PIXELS * self.vb.viewPixelSize()[0])

    def _on_mouse_moved(self, scene_pos) -> None:
        index = self._hit(scene_pos)
        if index is None:
            self.info.setText(self.hint if self.result is not None else "")
            self.graphics.setToolTip("")
            return
        text = self.event_text(index)
        self.info.setText(text.replace("\n", "  ·  "))
        self.graphics.setToolTip(text)  # Qt shows it when the mouse rests over the bar

    def _on_mouse_clicked(self, ev) -> None:
        if ev.button() != Qt.LeftButton:
            return
        if self._view_point(ev.scenePos()) is None:
            return
        index = self._hit(ev.scenePos())
        self.select_event(index)
        if index is not None:
            self.info.setText(self.event_text(index).replace("\n", "  ·  "))
