"""The Advisor: what limits the step, which changes would buy the most, and where more GPUs stop paying.

`AdvisorPanel(qdoc)` shows, for the open design,
- the attribution of the step (designer.core.analysis.attribution via whatif.advise): a one-line
  summary, the critical resource, and the causes with their share of the step (a thin stacked bar
  and a list);
- every candidate change of the hardware, the plan and the software settings, costed by the
  engine and ranked by predicted speed-up (whatif.advise), each applicable with one click (or a
  double-click on its row) as ONE undo step: a job edit (commands.SetJob) when only the workload
  or the plan changes, otherwise the changed design as a whole (commands.ReplaceDocument);
- the scaling curve (scaling.scale): tokens/s against the GPU count, the linear ideal, strong or
  weak scaling, and the verdict ("more GPUs stop paying at ...");
- on "Search plans" only (it takes seconds), the plan search (analysis.search, in this process,
  see plan_search.py) in a "Best plans" tab: the fastest plans of the whole space that fit, their
  speed-up against the file's plan, the verdict and how the space was cut down, each plan
  applied as one job edit (commands.SetJob).

The analysis runs off the UI thread (AdvisorWorker: one long-lived daemon thread, the newest
request of each kind wins, emits guarded so it may outlive the window) on snapshots of the
document. Every edit bumps the panel's revision: a result computed for an older revision is
dropped, what is shown is marked stale (its Apply buttons disabled, since applying it would
undo the edits made since) and, while the panel is shown and Auto is on, analysed again after
a short pause. A search is never started by an edit: an edit stops a running search (its
result would be stale) and marks the plans shown stale until Search plans is pressed again.
"""
from __future__ import annotations

import math
import threading
import time

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPen
from PySide6.QtWidgets import (
    QAbstractItemView, QCheckBox, QComboBox, QDockWidget, QHBoxLayout, QHeaderView, QLabel, QProgressBar, QPushButton,
    QSizePolicy, QSplitter, QStackedLayout, QTableWidget, QTableWidgetItem, QTabWidget, QToolButton, QToolTip,
    QVBoxLayout, QWidget,
)

from ..action_guard import guarded
from ..worker import emit_guarded, error_text
from .breakdown import AXIS, DOES_NOT_FIT, FASTER, MUTED, SLOWER, category_color, style_axis
from .plan_search import SearchWorker, counts_text, row_tip, speedup_of

NO_GAIN = 0.01  # as designer.core.analysis.whatif: below 1% a change buys nothing
AUTO_DELAY_MS = 700  # pause after the last edit before an automatic re-analysis
ACCENT = "#2563eb"
IDEAL = "#9ca3af"
STALE_BG = "#fef3c7"
STALE_FG = "#92400e"
NOFIT_BG = "#fef2f2"
GROUP_BG = "#f3f4f6"
ADVICE_CATEGORY_NAMES = {"hardware": "hardware", "parallelism": "parallelism", "software": "software setting",
                  "scale": "another GPU count"}
COLUMNS = ("", "Change", "Step (s)", "Speed-up", "MFU", "Note")
COL_APPLY, COL_TITLE, COL_STEP, COL_SPEEDUP, COL_MFU, COL_NOTE = range(len(COLUMNS))
ADVICE_ROLE = Qt.UserRole + 1
PLAN_COLUMNS = ("", "Plan", "Step (s)", "Speed-up", "MFU", "GiB/GPU")
PCOL_APPLY, PCOL_PLAN, PCOL_STEP, PCOL_SPEEDUP, PCOL_MFU, PCOL_MEMORY = range(len(PLAN_COLUMNS))
SEARCH_TOP = 10  # plans listed
SEARCH_NOTES = {  # why a search ended without a result: the page's message, the status line
    "stopped": ("Search stopped.", "plan search stopped"),
    "changed": ("The search was stopped: the design changed while it ran.",
                "plan search stopped: the design changed"),
}
SEARCH_HINT = ("Search plans walks every plan of this cluster (TP, PP, CP, EP, schedule, micro-batch, recompute, "
               "ZeRO, overlaps, rank order) and lists the fastest that fit in memory, each applied with one click. "
               "It takes a few seconds, so it runs only when you press Search plans.")


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


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


# ---- the worker ---------------------------------------------------------------------------------

class AdvisorWorker(QObject):
    """`advise` and `scale` off the UI thread. No Qt parent: it may outlive the window; its
    thread starts with the first request and ends at `stop()` (a running analysis finishes and
    is dropped). Of each kind only the newest request waits; "advise" goes before "scale"."""

    advised = Signal(int, int, object, object, float)  # request, revision, report or None, error or None, s
    scaled = Signal(int, int, object, object, float)

    def __init__(self, slowdown_s: float = 0.0):
        super().__init__()
        self._lock = threading.Condition()
        self._pending: dict[str, tuple] = {}
        self._stop = False
        self._thread: threading.Thread | None = None
        self.running: str | None = None  # the kind being computed now (tests, status)
        self.slowdown_s = slowdown_s  # tests: a slow analysis, to close the window while it runs

    def submit(self, kind: str, request: int, revision: int, snapshot, mode: str = "strong") -> None:
        with self._lock:
            if self._stop:
                return
            self._pending[kind] = (request, revision, snapshot, mode)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="designer-advisor", daemon=True)
                self._thread.start()
            self._lock.notify()

    def stop(self) -> None:
        with self._lock:
            self._stop = True
            self._pending.clear()
            self._lock.notify()

    @property
    def stopped(self) -> bool:
        return self._stop

    def _run(self) -> None:
        from ...core.analysis.scaling import scale
        from ...core.analysis.whatif import advise
        from ...core.engine.evaluate import Engine

        engine, quick = Engine(), Engine(detail=False)
        while True:
            with self._lock:
                while not self._pending and not self._stop:
                    self._lock.wait()
                if self._stop:
                    return
                kind = "advise" if "advise" in self._pending else "scale"
                request, revision, doc, mode = self._pending.pop(kind)
                self.running = kind
            started = time.perf_counter()
            report, error = None, None
            try:
                deadline = started + self.slowdown_s
                while time.perf_counter() < deadline and not self._stop:
                    time.sleep(0.01)
                if kind == "advise":
                    report = advise(doc, engine=engine)
                else:
                    report = scale(doc, mode=mode, engine=quick)
            except Exception as exc:  # noqa: BLE001 - shown in the panel, never a crash
                error = error_text(exc)
            self.running = None
            if self._stop:
                return
            signal = self.advised if kind == "advise" else self.scaled
            if not self._emit(signal, request, revision, report, error, time.perf_counter() - started):
                return

    _emit = staticmethod(emit_guarded)


# ---- the causes bar -----------------------------------------------------------------------------

def cause_color(cause: dict) -> QColor:
    color = category_color(cause.get("kind", ""))
    if "(latency)" in cause.get("cause", ""):
        color = color.lighter(135)
    return color


class CauseBar(QWidget):
    """The step as one thin stacked bar, a segment per cause (hover: what it is)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.causes: list[dict] = []
        self.setFixedHeight(12)
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)

    def set_causes(self, causes: list[dict]) -> None:
        self.causes = [c for c in causes if c.get("share", 0) > 0]
        self.update()

    def _segments(self) -> list[tuple[QRectF, dict]]:
        total = sum(c["share"] for c in self.causes) or 1.0
        width = self.width() - 1
        x, out = 0.0, []
        for c in self.causes:
            w = c["share"] / max(total, 1.0) * width
            out.append((QRectF(x, 0, w, self.height() - 1), c))
            x += w
        return out

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.Antialiasing, False)
        p.fillRect(QRectF(0, 0, self.width() - 1, self.height() - 1), QColor("#f3f4f6"))
        for rect, c in self._segments():
            p.fillRect(rect, cause_color(c))
        p.setPen(QPen(QColor("#d1d5db")))
        p.setBrush(Qt.NoBrush)
        p.drawRect(QRectF(0, 0, self.width() - 1, self.height() - 1))
        p.end()

    def cause_at(self, x: float) -> dict | None:
        for rect, c in self._segments():
            if rect.left() <= x < rect.right():
                return c
        return None

    def mouseMoveEvent(self, event) -> None:
        c = self.cause_at(event.position().x())
        if c is None:
            QToolTip.hideText()
        else:
            QToolTip.showText(event.globalPosition().toPoint(), cause_tip(c), self)


def short_cause(c: dict) -> str:
    """The cause without a long aside: "recompute (optional: the plan fits without it)" -> "recompute"
    (the tooltip keeps it); "tp_comm over NVLink (bandwidth)" stays as it is."""
    import re

    return re.sub(r"\s*\([^)]{16,}\)", "", c.get("cause", "")).strip() or c.get("cause", "")


def note_text(note: str) -> str:
    """A note as short as a table cell wants it (the row's tooltip keeps it whole): no speed-up
    (its column shows it), no aside in parentheses, no long explanation after a colon.
    "+0.4%, not the bottleneck (compute-bound; ...)" -> "not the bottleneck";
    "does not fit: 88.1 GiB per GPU" -> "needs 88.1 GiB/GPU"."""
    import re

    text = re.sub(r"^[+-]?\d+(\.\d+)?%,\s*", "", note.strip())
    text = re.sub(r"\s*\([^()]*(\([^()]*\)[^()]*)*\)\s*$", "", text)
    head, sep, tail = text.partition(": ")
    if sep and len(tail) > 24:
        text = head
    if text.startswith("does not fit: "):  # its group and the red row say so
        text = "needs " + text[len("does not fit: "):]
    return text.replace(" per GPU", "/GPU")


def cause_tip(c: dict) -> str:
    text = f"{c['cause']}: {c['seconds']:.3f} s, {c['share']:.1%} of the step"
    if c.get("detail"):
        text += f"\n{c['detail']}"
    return text


# ---- the panel ----------------------------------------------------------------------------------

class _Split(QSplitter):
    """Table | curve: the curve gets `right` pixels the first time there is room, the table the rest
    (later the user's drag decides)."""

    def __init__(self, right: int = 300):
        super().__init__(Qt.Horizontal)
        self.right = right
        self._placed = False

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if not self._placed and self.width() > 2 * self.right:
            self._placed = True
            self.setSizes([self.width() - self.right - self.handleWidth(), self.right])


class _Item(QTableWidgetItem):
    def __init__(self, text: str, align=Qt.AlignLeft | Qt.AlignVCenter):
        super().__init__(text)
        self.setTextAlignment(align)
        self.setFlags(Qt.ItemIsEnabled | Qt.ItemIsSelectable)


def plan_cell_text(label: str) -> str:
    """A plan's label as its cell shows it: it may wrap after a comma only ("dist-opt" and "TP2 PP1"
    stay whole)."""
    return ", ".join(part.replace(" ", "\u00a0").replace("-", "\u2011") for part in label.split(", "))


def _table(name: str, columns: tuple, apply_col: int, stretch_col: int) -> QTableWidget:
    """A results table as the panel draws them: rows of 24 px, no grid, an Apply column."""
    table = QTableWidget(0, len(columns))
    table.setObjectName(name)
    table.setHorizontalHeaderLabels(columns)
    table.verticalHeader().hide()
    table.verticalHeader().setDefaultSectionSize(24)
    table.setSelectionBehavior(QAbstractItemView.SelectRows)
    table.setSelectionMode(QAbstractItemView.SingleSelection)
    table.setEditTriggers(QAbstractItemView.NoEditTriggers)
    table.setWordWrap(False)
    table.setTextElideMode(Qt.ElideRight)
    table.setShowGrid(False)
    table.setAlternatingRowColors(False)
    table.setHorizontalScrollMode(QAbstractItemView.ScrollPerPixel)
    table.setVerticalScrollMode(QAbstractItemView.ScrollPerPixel)
    header = table.horizontalHeader()
    header.setHighlightSections(False)
    header.setMinimumSectionSize(40)
    for col in range(len(columns)):
        header.setSectionResizeMode(col, QHeaderView.ResizeToContents)
    header.setSectionResizeMode(stretch_col, QHeaderView.Stretch)
    header.setSectionResizeMode(apply_col, QHeaderView.Fixed)  # not widened by the group rows' text
    header.resizeSection(apply_col, 58)
    return table


def _apply_button(name: str, tip: str, slot, enabled: bool) -> QWidget:
    holder = QWidget()
    lay = QHBoxLayout(holder)
    lay.setContentsMargins(4, 1, 4, 1)
    button = QToolButton()
    button.setText("Apply")
    button.setObjectName(name)
    button.setToolTip(tip)
    button.setFixedHeight(20)
    button.clicked.connect(guarded(button, "Apply", slot))  # a failure shows a message box
    lay.addWidget(button)
    holder.setEnabled(enabled)
    return holder


class AdvisorPanel(QWidget):
    """Attribution, ranked what-if changes (one click applies one) and the scaling curve."""

    applied = Signal(str)  # the id of the advice applied
    analysed = Signal()  # a fresh advice report is shown
    scalingShown = Signal()  # a fresh scaling report is shown
    searched = Signal()  # a fresh plan search is shown
    planApplied = Signal(str)  # the label of the plan applied

    def __init__(self, qdoc, parent: QWidget | None = None, slowdown_s: float = 0.0):
        super().__init__(parent)
        self.qdoc = qdoc
        self.revision = 0  # bumped by every change of the document
        self.report: dict | None = None  # the advice shown, and the revision it is for
        self.report_revision = -1
        self.scaling: dict | None = None
        self.scaling_revision = -1
        self.error: str | None = None  # why the design cannot be analysed, and for which revision
        self.error_revision = -1
        self._dock = None  # the QDockWidget holding the panel, once shown
        self._requests = {"advise": 0, "scale": 0}  # the newest request of each kind
        self._busy = {"advise": False, "scale": False}
        self._closed = False
        self._last_applied: str | None = None
        self._row_advice: list = []  # table row -> Advice (None for group rows)
        self.worker = AdvisorWorker(slowdown_s)  # not a Qt child: its thread may outlive the window
        self.worker.advised.connect(self._on_advised)
        self.worker.scaled.connect(self._on_scaled)
        # the plan search: only on the button, its own thread (an analysis need not wait for it)
        self.search_options = None  # a SpaceOptions to search a smaller space (tests); None: the whole space
        self.search_result = None  # the SearchResult shown, and the revision it is for
        self.search_revision = -1
        self.search_error: str | None = None
        self._search_request = 0
        self._searching = False
        self._search_costed = 0  # plans costed so far by the running search
        self._search_note = ""  # why the last search ended without a result: "", "stopped" or "changed"
        self._last_applied_plan: str | None = None
        self._plan_rows: list[dict] = []  # best-plans table row -> search row
        self.search_worker = SearchWorker()  # not a Qt child either
        self.search_worker.progressed.connect(self._on_search_progress)
        self.search_worker.searched.connect(self._on_searched)
        self._auto_timer = QTimer(self, singleShot=True, interval=AUTO_DELAY_MS, timeout=self._auto_analyse)
        qdoc.changed.connect(self._on_changed)
        qdoc.replaced.connect(self._on_replaced)
        self._build()
        from ..wheel_guard import guard_wheel

        guard_wheel(self)  # scrolling past the scaling mode never switches it

    # ---- layout ----
    def _build(self) -> None:
        self.analyse_button = QPushButton("Analyse")
        self.analyse_button.setObjectName("analyse")
        self.analyse_button.setToolTip("Attribute the step, cost every candidate change and the scaling curve "
                                       "(off the UI thread)")
        self.analyse_button.clicked.connect(guarded(self, "Analyse", self.analyse))
        self.auto_check = QCheckBox("Auto")
        self.auto_check.setChecked(True)
        self.auto_check.setToolTip(f"Analyse again {AUTO_DELAY_MS / 1000:.1f} s after each edit while this panel "
                                   "is shown")
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)  # indeterminate
        self.busy.setTextVisible(False)
        self.busy.setFixedSize(56, 8)
        self.busy.hide()
        self.status_label = QLabel("")
        self.status_label.setObjectName("status")
        self.status_label.setTextFormat(Qt.PlainText)
        self.status_label.setStyleSheet(f"color: {MUTED}")
        self.status_label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.header_label = QLabel()
        self.header_label.setObjectName("header")
        self.header_label.setTextFormat(Qt.RichText)
        self.header_label.setWordWrap(True)
        self.header_label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.cause_bar = CauseBar()
        self.causes_label = QLabel()
        self.causes_label.setObjectName("causes")
        self.causes_label.setTextFormat(Qt.RichText)
        self.causes_label.setWordWrap(True)
        self.causes_label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.banner = QLabel()
        self.banner.setObjectName("stale")
        self.banner.setTextFormat(Qt.PlainText)
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet(f"background: {STALE_BG}; color: {STALE_FG}; padding: 2px 6px; "
                                  "border-radius: 3px")
        self.banner.hide()

        self.table = _table("advice", COLUMNS, COL_APPLY, COL_NOTE)
        for col, tip in ((COL_STEP, "predicted step time with the change"),
                         (COL_SPEEDUP, "current step / new step - 1: +10% is 10% more steps per hour"),
                         (COL_MFU, "model FLOPs utilisation with the change"),
                         (COL_NOTE, "why it buys little or nothing, or does not fit; hover a row for the details")):
            self.table.horizontalHeaderItem(col).setToolTip(tip)
        self.table.cellDoubleClicked.connect(self._on_double_clicked)

        # the scaling curve
        self.mode_combo = QComboBox()
        self.mode_combo.addItems(["strong", "weak"])
        self.mode_combo.setToolTip("strong: the global batch stays, DP grows\n"
                                   "weak: the batch per replica stays, the global batch grows with DP")
        self.mode_combo.currentTextChanged.connect(lambda _m: self.run_scale())
        self.scale_button = QPushButton("Scale")
        self.scale_button.setObjectName("scale")
        self.scale_button.setToolTip("Evaluate the design from 1/8 to 8x its GPU count (more servers: the same "
                                     "fabric design generated larger)")
        self.scale_button.clicked.connect(guarded(self, "Scaling", self.run_scale))
        self.plot = pg.PlotWidget()
        self.plot.setObjectName("scaling_plot")
        self.plot.setBackground("w")
        self.plot.setMinimumSize(240, 110)
        self.plot.setMenuEnabled(False)
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
        item.vb.sigResized.connect(self._update_y_ticks)
        # the key above the plot, not over the points (a docked plot is small)
        self.key_label = QLabel()
        self.key_label.setObjectName("scaling_key")
        self.key_label.setTextFormat(Qt.RichText)
        self.key_label.setWordWrap(True)
        self.key_label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.verdict_label = QLabel("")
        self.verdict_label.setObjectName("verdict")
        self.verdict_label.setTextFormat(Qt.PlainText)
        self.verdict_label.setWordWrap(True)
        self.verdict_label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        # the right column: the buttons, the status, the scaling curve and its verdict
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.setSpacing(6)
        buttons.addWidget(self.analyse_button)
        buttons.addWidget(self.auto_check)
        buttons.addStretch(1)
        buttons.addWidget(self.mode_combo)
        buttons.addWidget(self.scale_button)
        status = QHBoxLayout()
        status.setContentsMargins(0, 0, 0, 0)
        status.setSpacing(6)
        status.addWidget(self.busy)
        status.addWidget(self.status_label, 1)
        right = QWidget()
        column = QVBoxLayout(right)
        column.setContentsMargins(6, 0, 0, 0)
        column.setSpacing(3)
        column.addLayout(buttons)
        column.addLayout(status)
        column.addWidget(self.key_label)
        column.addWidget(self.plot, 1)
        column.addWidget(self.verdict_label)

        # the left column: the attribution and the ranked changes (or a message instead)
        content = QWidget()
        body = QVBoxLayout(content)
        body.setContentsMargins(0, 0, 0, 0)
        body.setSpacing(3)
        body.addWidget(self.header_label)
        body.addWidget(self.cause_bar)
        body.addWidget(self.causes_label)
        body.addWidget(self.banner)
        body.addWidget(self.table, 1)
        self.message = QLabel("Analyse ranks changes of the hardware, the plan and the software settings by "
                              "their predicted speed-up, and shows where more GPUs stop paying.")
        self.message.setObjectName("message")
        self.message.setTextFormat(Qt.PlainText)  # problems may hold "<"
        self.message.setAlignment(Qt.AlignCenter)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.message.setStyleSheet(f"color: {MUTED}; font-size: 11pt")
        left = QWidget()
        self._stack = QStackedLayout(left)
        self._stack.addWidget(self.message)
        self._stack.addWidget(content)

        # the tabs: the ranked changes (with the attribution) and the best plans of the search
        self._build_search()
        self.tabs = QTabWidget()
        self.tabs.setObjectName("advisor_tabs")
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(left, "Changes")
        self.tabs.addTab(self.search_page, "Best plans")
        self.tabs.setTabToolTip(0, "What limits the step and every candidate change, ranked (Analyse)")
        self.tabs.setTabToolTip(1, "The fastest plans of the whole space that fit in memory (Search plans)")
        corner = QWidget()
        corner_lay = QHBoxLayout(corner)
        corner_lay.setContentsMargins(0, 0, 4, 2)
        corner_lay.addWidget(self.search_button)
        self.tabs.setCornerWidget(corner, Qt.TopRightCorner)

        self.splitter = _Split(300)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.tabs)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 0)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(8, 4, 8, 4)
        outer.addWidget(self.splitter)

    def _build_search(self) -> None:
        self.search_button = QPushButton("Search plans")
        self.search_button.setObjectName("search")
        self.search_button.setToolTip("Walk every plan of this cluster (TP, PP, CP, EP, schedule, micro-batch, "
                                      "recompute, ZeRO, overlaps, rank order) and list the fastest that fit "
                                      "(a few seconds; press again to stop)")
        self.search_button.clicked.connect(guarded(self, "Plan search", self._on_search_button))
        self.search_verdict = QLabel("")
        self.search_verdict.setObjectName("search_verdict")
        self.search_verdict.setTextFormat(Qt.RichText)
        self.search_verdict.setWordWrap(True)
        self.search_verdict.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.search_counts = QLabel("")
        self.search_counts.setObjectName("search_counts")
        self.search_counts.setTextFormat(Qt.RichText)
        self.search_counts.setWordWrap(True)
        self.search_counts.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.search_banner = QLabel()
        self.search_banner.setObjectName("search_stale")
        self.search_banner.setTextFormat(Qt.PlainText)
        self.search_banner.setWordWrap(True)
        self.search_banner.setStyleSheet(self.banner.styleSheet())
        self.search_banner.hide()
        self.plan_table = _table("plans", PLAN_COLUMNS, PCOL_APPLY, PCOL_PLAN)
        for col, tip in ((PCOL_PLAN, "the plan: parallelism, micro-batch, schedule, recompute, sequence "
                                     "parallelism, optimizer sharding (hover a row for where its step goes)"),
                         (PCOL_STEP, "predicted step time with this plan"),
                         (PCOL_SPEEDUP, "the file's step / this plan's step - 1: +10% is 10% more steps per hour"),
                         (PCOL_MFU, "model FLOPs utilisation with this plan"),
                         (PCOL_MEMORY, "memory per GPU with this plan (GiB)")):
            self.plan_table.horizontalHeaderItem(col).setToolTip(tip)
        self.plan_table.cellDoubleClicked.connect(self._on_plan_double_clicked)
        # a plan too long for its column wraps onto a second line: two plans that differ only at
        # the end of their label (the rank order) must not look the same
        self.plan_table.setWordWrap(True)
        self.plan_table.verticalHeader().setMinimumSectionSize(24)
        self._rows_timer = QTimer(self, singleShot=True, interval=0, timeout=self._fit_plan_rows)
        self.plan_table.horizontalHeader().sectionResized.connect(lambda *_: self._rows_timer.start())
        content = QWidget()
        body = QVBoxLayout(content)
        body.setContentsMargins(0, 0, 0, 0)
        body.setSpacing(3)
        body.addWidget(self.search_verdict)
        body.addWidget(self.search_counts)
        body.addWidget(self.search_banner)
        body.addWidget(self.plan_table, 1)
        self.search_message = QLabel(SEARCH_HINT)
        self.search_message.setObjectName("search_message")
        self.search_message.setTextFormat(Qt.PlainText)
        self.search_message.setAlignment(Qt.AlignCenter)
        self.search_message.setWordWrap(True)
        self.search_message.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.search_message.setStyleSheet(f"color: {MUTED}; font-size: 11pt")
        self.search_page = QWidget()
        self._search_stack = QStackedLayout(self.search_page)
        self._search_stack.addWidget(self.search_message)
        self._search_stack.addWidget(content)

    # A docked panel's size must not follow its content (a new result must not re-layout the window).
    def sizeHint(self) -> QSize:
        return QSize(640, 300)

    def minimumSizeHint(self) -> QSize:
        return QSize(360, 220)

    # ---- state ----
    @property
    def stale(self) -> bool:
        """What is shown was computed for an older version of the design."""
        return self.report is not None and self.report_revision != self.revision

    @property
    def running(self) -> bool:
        return self._busy["advise"] or self._busy["scale"]

    @property
    def searching(self) -> bool:
        """A plan search is running (for the design as it is now: an edit stops it)."""
        return self._searching

    @property
    def search_stale(self) -> bool:
        """The best plans shown were searched for an older version of the design."""
        return self.search_result is not None and self.search_revision != self.revision

    def wait_search(self, timeout_s: float = 120.0) -> bool:
        """Process events until the running plan search is in (scripts, screenshots)."""
        import time

        from PySide6.QtWidgets import QApplication

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            QApplication.processEvents()
            if not self._searching:
                return True
            time.sleep(0.01)
        return False

    def wait_done(self, timeout_s: float = 60.0) -> bool:
        """Process events until the analysis and the scaling curve are in (scripts, screenshots)."""
        import time

        from PySide6.QtWidgets import QApplication

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            QApplication.processEvents()
            if not self.running and (self.report is not None or self.error is not None):
                return True
            time.sleep(0.01)
        return False

    def shutdown(self) -> None:
        """The window closes: no more requests, no late results (a running analysis is dropped)."""
        self._closed = True
        self._auto_timer.stop()
        self.worker.stop()
        self.search_worker.stop()  # a running search stops at its next progress call
        self._searching = False
        self.busy.hide()

    def _on_changed(self, _changes) -> None:
        self._document_changed()

    def _on_replaced(self) -> None:
        self._document_changed()

    def _document_changed(self) -> None:
        if self._closed:
            return
        self.revision += 1
        if self._searching:  # its result would be stale: stop it, free the CPU for the analysis
            self._cancel_search("changed")
        self._update_stale()
        if self.auto_check.isChecked() and self.shown:
            self._auto_timer.start()

    @property
    def shown(self) -> bool:
        """On screen: a dock behind another tab stays "visible" to Qt, moved out of the window."""
        return self.isVisible() and not self.visibleRegion().isEmpty()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._dock is None:  # a tab switch does not show or hide the panel: the dock tells
            parent = self.parentWidget()
            while parent is not None and not isinstance(parent, QDockWidget):
                parent = parent.parentWidget()
            if parent is not None:
                self._dock = parent
                parent.visibilityChanged.connect(self._on_dock_visibility)
        self._auto_start(150)

    def _on_dock_visibility(self, visible: bool) -> None:
        if visible:
            self._auto_start(150)  # raised: analyse what has not been analysed yet
        self._update_stale()

    def _auto_start(self, delay_ms: int) -> None:
        if self._closed or not self.auto_check.isChecked() or self._busy["advise"]:
            return
        up_to_date = (self.report is not None and not self.stale) or \
            (self.error is not None and self.error_revision == self.revision)
        if not up_to_date:
            self._auto_timer.start(delay_ms)

    def _auto_analyse(self) -> None:
        if not self._closed and self.shown and self.auto_check.isChecked():
            self.analyse()

    # ---- requests ----
    def analyse(self) -> None:
        """Advice and the scaling curve for the design as it is now (newest request wins)."""
        if self._closed:
            return
        self._auto_timer.stop()
        snapshot = self.qdoc.doc.snapshot()
        for kind in ("advise", "scale"):
            self._requests[kind] += 1
            self._busy[kind] = True
            self.worker.submit(kind, self._requests[kind], self.revision, snapshot, self.mode_combo.currentText())
        self._show_busy()

    def run_scale(self) -> None:
        if self._closed:
            return
        self._requests["scale"] += 1
        self._busy["scale"] = True
        self.worker.submit("scale", self._requests["scale"], self.revision, self.qdoc.doc.snapshot(),
                           self.mode_combo.currentText())
        self._show_busy()

    def search_plans(self) -> None:
        """Search the plans of the design as it is now (a running search is superseded)."""
        if self._closed:
            return
        self._search_request += 1
        self._searching = True
        self._search_costed = 0
        self._search_note = ""
        self.search_worker.submit(self._search_request, self.revision, self.qdoc.doc.snapshot(), SEARCH_TOP,
                                  self.search_options)
        self.tabs.setCurrentWidget(self.search_page)
        self._search_state_changed()

    def stop_search(self) -> None:
        """Stop the running search (what was shown before stays)."""
        if self._searching:
            self._cancel_search("stopped")
            self._update_stale()

    def _on_search_button(self) -> None:
        if self._searching:
            self.stop_search()
        else:
            self.search_plans()

    def _cancel_search(self, why: str) -> None:
        self.search_worker.cancel()
        self._searching = False
        self._search_note = why
        self._search_state_changed()

    def _search_state_changed(self) -> None:
        """The button, the busy bar, the status line and the page's message follow the search."""
        searching = self._searching
        self.search_button.setText("Stop search" if searching else "Search plans")
        self.search_button.setToolTip("Stop the plan search" if searching else
                                      "Walk every plan of this cluster (TP, PP, CP, EP, schedule, micro-batch, "
                                      "recompute, ZeRO, overlaps, rank order) and list the fastest that fit "
                                      "(a few seconds; press again to stop)")
        if self.search_result is None:
            if searching:
                self.search_message.setText(self._search_progress_text() + "\n\nThe fastest plans that fit in "
                                            "memory will be listed here.")
                self.search_message.setStyleSheet(f"color: {MUTED}; font-size: 11pt")
            elif self.search_error is None:
                note = SEARCH_NOTES.get(self._search_note, ("", ""))[0]
                self.search_message.setText((note + "\n\n" if note else "") + SEARCH_HINT)
                self.search_message.setStyleSheet(f"color: {MUTED}; font-size: 11pt")
        self._show_busy()
        self._finish_status()
        if not searching and not self.running:  # the status line says how the search ended
            if self._search_note:
                self.status_label.setText(SEARCH_NOTES[self._search_note][1])
            elif self.search_result is not None and self.search_revision == self.revision:
                r = self.search_result
                self.status_label.setText(f"{r.evaluated:,} plans costed in {r.elapsed_s:.1f} s")

    def _search_progress_text(self) -> str:
        gpus = count_text(self.qdoc.doc.num_gpus())
        if self._search_costed:
            return f"Searching plans on {gpus} GPUs: costed {self._search_costed:,} plans..."
        return f"Searching plans on {gpus} GPUs: enumerating the space..."

    def _search_status_text(self) -> str:
        """As short as the status line next to the busy bar wants it."""
        if self._search_costed:
            return f"searching plans: {self._search_costed:,} costed..."
        return f"searching plans on {count_text(self.qdoc.doc.num_gpus())} GPUs..."

    def _show_busy(self) -> None:
        running = self.running
        self.busy.setVisible(running or self._searching)
        if not running and self._searching:
            self.status_label.setText(self._search_status_text())
        if running:
            what = "analysing" if self._busy["advise"] else f"scaling ({self.mode_combo.currentText()})"
            self.status_label.setText(f"{what} {count_text(self.qdoc.doc.num_gpus())} GPUs...")
            if self._stack.currentWidget() is self.message and self.report is None and self.error is None:
                self.message.setText("analysing...")
                self.message.setStyleSheet(f"color: {MUTED}; font-size: 11pt")

    # ---- answers ----
    def _on_advised(self, request: int, revision: int, report, error, seconds: float) -> None:
        if self._closed or request != self._requests["advise"]:
            return  # a newer request is on its way
        self._busy["advise"] = False
        if revision != self.revision:  # the design changed while it ran: drop it
            self._show_busy()
            self._finish_status()
            self._update_stale()
            if self.auto_check.isChecked() and self.shown and not self._auto_timer.isActive():
                self._auto_timer.start()
            return
        if error:
            self.error, self.error_revision = error, revision
            self.report, self.report_revision = None, -1
            self.table.setRowCount(0)
            self._row_advice = []
            self.message.setText("Cannot analyse this design:\n\n" + error)
            self.tabs.setTabText(0, "Changes")
            self.message.setStyleSheet(f"color: {DOES_NOT_FIT}; font-size: 10pt")
            self._stack.setCurrentWidget(self.message)
        else:
            self.error = None
            self.report, self.report_revision = report, revision
            self._elapsed = seconds
            self._show_report(report)
            self._stack.setCurrentIndex(1)
        self._show_busy()
        self._finish_status()
        self._update_stale()
        if not error:
            self.analysed.emit()

    def _on_scaled(self, request: int, revision: int, report, error, seconds: float) -> None:
        if self._closed or request != self._requests["scale"]:
            return
        self._busy["scale"] = False
        self._show_busy()
        if revision != self.revision:
            self._finish_status()
            return
        if error:
            self.scaling, self.scaling_revision = None, -1
            self.plot.getPlotItem().clear()
            self.verdict_label.setText(error.splitlines()[0])
            self.verdict_label.setToolTip(error)
            self.verdict_label.setStyleSheet(f"color: {DOES_NOT_FIT}")
        else:
            self.scaling, self.scaling_revision = report, revision
            self._show_scaling(report)
        self._finish_status()
        self._update_stale()
        if not error:
            self.scalingShown.emit()

    def _on_search_progress(self, request: int, costed: int) -> None:
        if self._closed or request != self._search_request or not self._searching:
            return
        self._search_costed = costed
        if not self.running:
            self.status_label.setText(self._search_status_text())
        if self.search_result is None and self.search_error is None:
            self._search_state_changed()

    def _on_searched(self, request: int, revision: int, result, error, seconds: float) -> None:
        if self._closed or request != self._search_request or not self._searching:
            return  # superseded, stopped, or the window went
        self._searching = False
        if revision != self.revision:  # the design changed while it ran: drop it
            self._search_note = "changed"
            self._search_state_changed()
            self._update_stale()
            return
        self._search_note = ""
        if error:
            self.search_error = error
            self.search_result, self.search_revision = None, -1
            self.plan_table.setRowCount(0)
            self._plan_rows = []
            self.search_message.setText("Cannot search plans for this design:\n\n" + error)
            self.search_message.setStyleSheet(f"color: {DOES_NOT_FIT}; font-size: 10pt")
            self._search_stack.setCurrentWidget(self.search_message)
            self.tabs.setTabText(1, "Best plans")
        else:
            self.search_error = None
            self.search_result, self.search_revision = result, revision
            self._show_search(result)
            self._search_stack.setCurrentIndex(1)
        self._search_state_changed()
        self._update_stale()
        if not error:
            self.searched.emit()

    def _finish_status(self) -> None:
        if self.running:
            return
        if self._searching:
            self.status_label.setText(self._search_status_text())
            return
        if self.report is not None:
            n = len(self.report["ranked"])
            self.status_label.setText(f"{n} changes costed on {count_text(self.qdoc.doc.num_gpus())} GPUs "
                                      f"in {self.report.get('elapsed_s', 0.0):.2f} s")
        elif self.error:
            self.status_label.setText("the design cannot be analysed")
        else:
            self.status_label.setText("")

    def _update_stale(self) -> None:
        stale = self.stale or (self.scaling is not None and self.scaling_revision != self.revision)
        if stale:
            then = f"Applied \u201c{self._last_applied}\u201d (Edit > Undo takes it back). " if self._last_applied \
                else "The design changed since this analysis. "
            if self._busy["advise"] or self._auto_timer.isActive():
                text = then + "Analysing again..."
            elif self.auto_check.isChecked() and self.shown:
                text = then + "Analysing again shortly..."
            else:
                text = then + "Press Analyse for advice on the design as it is now."
            self.banner.setText(text)
        else:
            self._last_applied = None
        self.banner.setVisible(stale)
        for row, advice in enumerate(self._row_advice):
            widget = self.table.cellWidget(row, COL_APPLY)
            if widget is not None:
                widget.setEnabled(not self.stale)
        # the best plans: stale after any edit until searched again (never automatically)
        search_stale = self.search_stale
        if search_stale:
            then = f"Applied \u201c{self._last_applied_plan}\u201d (Edit > Undo takes it back). " \
                if self._last_applied_plan else "The design changed since this search. "
            if self._searching:
                text = then + "Searching again..."
            else:
                text = then + "Press Search plans for the best plans of the design as it is now."
            self.search_banner.setText(text)
        else:
            self._last_applied_plan = None
        self.search_banner.setVisible(search_stale)
        for row in range(len(self._plan_rows)):
            widget = self.plan_table.cellWidget(row, PCOL_APPLY)
            if widget is not None:
                widget.setEnabled(not search_stale)

    # ---- showing ----
    def _show_report(self, report: dict) -> None:
        why = report["attribution"]
        cur = report["current"]
        plan = cur.get("plan", {})
        dims = "  ".join(f"{k.upper()} {plan[k]}" for k in ("tp", "pp", "cp", "ep", "dp") if k in plan)
        fits = "" if cur.get("fits_in_memory", True) else \
            f" &nbsp;<span style='color:{DOES_NOT_FIT}'><b>does not fit in memory</b></span>"
        self.header_label.setText(
            f"<b>{_escape(_capital(why.get('summary', '')))}</b>"
            f"<br>Critical resource: <b>{_escape(why.get('critical_resource', ''))}</b>" + fits)
        self.header_label.setToolTip(
            f"now: step {cur['step_time_s']:.3f} s, MFU {cur['mfu'] * 100:.1f}%, {cur['tokens_per_s']:,.0f} "
            f"tokens/s, {dims}")
        causes = why.get("causes", [])
        self.cause_bar.set_causes(causes)
        shown = [c for c in causes if c.get("share", 0) >= 0.005]
        def nbsp(text: str) -> str:  # a cause breaks onto the next line as a whole
            return _escape(text).replace(" ", "&nbsp;")

        parts = [f"<span style='color:{cause_color(c).name()}'>&#9632;</span>&nbsp;{nbsp(short_cause(c))}"
                 f"&nbsp;<b>{c['share'] * 100:.1f}%</b>" for c in shown]
        rest = len(causes) - len(shown)
        if rest:
            parts.append(f"<span style='color:{MUTED}'>{nbsp(f'+{rest} below 0.5%')}</span>")
        self.causes_label.setText(" &nbsp;&nbsp; ".join(parts))
        self.causes_label.setToolTip("\n".join(cause_tip(c) for c in causes))
        self._fill_table(report)
        self.tabs.setTabText(0, f"Changes ({len(report['ranked'])})")

    def _show_search(self, result) -> None:
        current = result.current
        verdict = _capital(result.verdict)
        gain = speedup_of(result.top[0], current) if result.top else None
        color = FASTER if gain is not None and gain >= NO_GAIN else (DOES_NOT_FIT if not result.top else AXIS)
        self.search_verdict.setText(f"<b style='color:{color}'>{_escape(verdict)}</b>")
        self.search_verdict.setToolTip(verdict)
        counts = _escape(counts_text(result))
        now = ""
        if current and "error" not in current:
            now = (f" &nbsp;\u00b7&nbsp; now {current['step_time_s']:.3f} s, MFU {current['mfu'] * 100:.1f}%"
                   + ("" if current["fits_in_memory"] else ", does not fit"))
        warnings = "".join(f"<br><span style='color:{DOES_NOT_FIT}'>{_escape(w)}</span>" for w in result.warnings)
        self.search_counts.setText(f"<span style='color:{MUTED}'>{counts}{now}</span>{warnings}")
        self.search_counts.setToolTip(f"searched in {result.runner}: {result.evaluated:,} plans costed by the "
                                      "engine, the rest counted without being costed")
        self._fill_plans(result)
        self.tabs.setTabText(1, f"Best plans ({len(result.top)})")

    def _fill_plans(self, result) -> None:
        table = self.plan_table
        right = Qt.AlignRight | Qt.AlignVCenter
        current = result.current
        current_point = current["point"] if current else None
        stale = self.search_stale
        table.setUpdatesEnabled(False)
        table.setRowCount(0)
        listed = any(r["point"] == current_point for r in result.top)
        reference = current is not None and "error" not in current and not listed
        table.setRowCount(len(result.top) + reference)
        self._plan_rows = list(result.top)
        for row, r in enumerate(result.top):
            point = r["point"]
            is_current = point == current_point
            gain = speedup_of(r, current)
            cells = {PCOL_PLAN: _Item(plan_cell_text(point.label() + (" (the file's plan)" if is_current else ""))),
                     PCOL_STEP: _Item(f"{r['step_time_s']:.3f}", right),
                     PCOL_SPEEDUP: _Item("\u2013" if gain is None else f"{gain * 100:+.1f}%", right),
                     PCOL_MFU: _Item(f"{r['mfu'] * 100:.1f}%", right),
                     PCOL_MEMORY: _Item(f"{r['memory_gib']:.1f}", right)}
            tip = row_tip(r, current, is_current)
            for col, item in cells.items():
                item.setToolTip(tip)
                if is_current:
                    font = QFont(item.font())
                    font.setBold(True)
                    item.setFont(font)
                table.setItem(row, col, item)
            if gain is not None:
                color = FASTER if gain >= NO_GAIN else SLOWER if gain <= -NO_GAIN else MUTED
                cells[PCOL_SPEEDUP].setForeground(QBrush(QColor(color)))
            if is_current:
                table.setItem(row, PCOL_APPLY, _Item(""))
            else:
                table.setCellWidget(row, PCOL_APPLY, _apply_button(
                    f"apply-plan:{row}", tip, lambda _=False, r=r: self.apply_plan(r), not stale))
        if reference:  # the file's own plan, to compare with, below the best
            row = len(result.top)
            fits = current["fits_in_memory"]
            cells = {PCOL_APPLY: _Item("now"),
                     PCOL_PLAN: _Item(plan_cell_text(current["point"].label() + ("" if fits else " (does not fit)"))),
                     PCOL_STEP: _Item(f"{current['step_time_s']:.3f}", right), PCOL_SPEEDUP: _Item("", right),
                     PCOL_MFU: _Item(f"{current['mfu'] * 100:.1f}%", right),
                     PCOL_MEMORY: _Item(f"{current['memory_gib']:.1f}", right)}
            cells[PCOL_APPLY].setTextAlignment(Qt.AlignCenter)
            tip = row_tip(current, current, True)
            for col, item in cells.items():
                item.setToolTip(tip)
                item.setForeground(QBrush(QColor(DOES_NOT_FIT if not fits and col == PCOL_MEMORY else MUTED)))
                item.setBackground(QBrush(QColor(GROUP_BG)))
                font = QFont(item.font())
                font.setItalic(True)
                item.setFont(font)
                table.setItem(row, col, item)
        table.setUpdatesEnabled(True)
        self._fit_plan_rows()

    def _fit_plan_rows(self) -> None:
        if self._closed:
            return
        table = self.plan_table
        table.resizeRowsToContents()
        rows = table.verticalHeader()
        for row in range(table.rowCount()):
            if rows.sectionSize(row) > 24:  # two lines: some air between the rows
                rows.resizeSection(row, rows.sectionSize(row) + 6)

    def _fill_table(self, report: dict) -> None:
        ranked = report["ranked"]
        same = [a for a in ranked if a.fits_in_memory and a.category != "scale"]
        more = [a for a in ranked if a.fits_in_memory and a.category == "scale"]
        nofit = [a for a in ranked if not a.fits_in_memory]
        na = list(report.get("not_applicable", []))
        groups = [("Same GPUs, fastest first", same), ("Other GPU counts", more), ("Do not fit in memory", nofit),
                  ("Not applicable here", na)]
        table = self.table
        table.setUpdatesEnabled(False)
        table.clearSpans()
        table.setRowCount(0)
        self._row_advice = []
        rows = sum(len(g) + 1 for _, g in groups if g)
        table.setRowCount(rows)
        row = 0
        for title, group in groups:
            if not group:
                continue
            hint = ""
            if not row:
                cur = report["current"]
                hint = (f"   \u00b7   now {cur['step_time_s']:.3f} s, MFU {cur['mfu'] * 100:.1f}%"
                        "   \u00b7   Apply: one undo step")
            self._group_row(row, f"{title} ({len(group)}){hint}")
            self._row_advice.append(None)
            row += 1
            for advice in group:
                self._advice_row(row, advice, applicable=group is not na)
                self._row_advice.append(advice)
                row += 1
        table.setUpdatesEnabled(True)

    def _group_row(self, row: int, text: str) -> None:
        item = _Item(text)
        item.setFlags(Qt.ItemIsEnabled)
        font = QFont(item.font())
        font.setBold(True)
        item.setFont(font)
        item.setForeground(QBrush(QColor(AXIS)))
        item.setBackground(QBrush(QColor(GROUP_BG)))
        self.table.setItem(row, 0, item)
        self.table.setSpan(row, 0, 1, len(COLUMNS))

    def _advice_row(self, row: int, a, applicable: bool) -> None:
        right = Qt.AlignRight | Qt.AlignVCenter
        if applicable:
            cells = {COL_TITLE: _Item(a.title), COL_STEP: _Item(f"{a.step_time_s:.3f}", right),
                     COL_SPEEDUP: _Item(f"{a.speedup * 100:+.1f}%", right),
                     COL_MFU: _Item(f"{a.mfu * 100:.1f}%", right), COL_NOTE: _Item(note_text(a.note))}
        else:
            cells = {COL_TITLE: _Item(a.title), COL_NOTE: _Item(note_text(a.error))}
            for col in (COL_STEP, COL_SPEEDUP, COL_MFU):
                cells[col] = _Item("\u2013", right)
        faint = not applicable or "not the bottleneck" in a.note
        tip = [f"{a.title}  ({ADVICE_CATEGORY_NAMES.get(a.category, a.category)})"]
        if a.description:
            tip.append(a.description)
        if a.note or a.error:
            tip.append(a.note or a.error)
        if applicable:
            tip.append(f"memory per GPU {a.memory_gib:.1f} GiB" + ("" if a.fits_in_memory else ": does not fit"))
        if a.set:
            tip.append("CLI: designer evaluate FILE " + " ".join(f"--set {s}" for s in a.set))
        if applicable:
            tip.append("Double-click or Apply: one undo step" + (" (a job edit)" if a.job_only
                                                                 else " (the whole design)"))
        tip_text = "\n".join(tip)
        for col, item in cells.items():
            item.setData(ADVICE_ROLE, a.id)
            item.setToolTip(tip_text)
            if faint:
                item.setForeground(QBrush(QColor(MUTED)))
                font = QFont(item.font())
                font.setItalic(True)
                item.setFont(font)
            if applicable and not a.fits_in_memory:
                item.setBackground(QBrush(QColor(NOFIT_BG)))
            self.table.setItem(row, col, item)
        if applicable and not faint:
            if a.speedup >= NO_GAIN:
                cells[COL_SPEEDUP].setForeground(QBrush(QColor(FASTER)))
            elif a.speedup <= -NO_GAIN:
                cells[COL_SPEEDUP].setForeground(QBrush(QColor(SLOWER)))
            else:
                cells[COL_SPEEDUP].setForeground(QBrush(QColor(MUTED)))
        if applicable and not a.fits_in_memory:  # tinted row, the note in red
            cells[COL_NOTE].setForeground(QBrush(QColor(DOES_NOT_FIT)))
        if applicable:
            holder = _apply_button(f"apply:{a.id}", tip_text, lambda _=False, a=a: self.apply(a), not self.stale)
            self.table.setCellWidget(row, COL_APPLY, holder)
        else:
            self.table.setItem(row, COL_APPLY, _Item(""))

    def _show_scaling(self, report: dict) -> None:
        item = self.plot.getPlotItem()
        item.clear()
        self.key_label.setText("")
        rows = report["rows"]
        good = [r for r in rows if "error" not in r]
        verdict = _capital(report.get("verdict", ""))
        stops = report.get("stops_paying_at")
        self.verdict_label.setText(verdict)
        self.verdict_label.setStyleSheet(f"color: {SLOWER if stops else FASTER}")
        failed = [r for r in rows if "error" in r]
        self.verdict_label.setToolTip("\n".join(f"{r['gpus']} GPUs: {r['error']}" for r in failed))
        self._scaling_points = []
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
        scatter = pg.ScatterPlotItem(xs, ys, size=7, brush=brushes, pen=pens, symbol="o")
        item.addItem(scatter)
        key = [f"<span style='color:{ACCENT}'><b>&#8212;&#9679;&#8212;</b></span>&nbsp;tokens/s",
               f"<span style='color:{IDEAL}'><b>-&nbsp;-&nbsp;-</b></span>&nbsp;linear"]
        if any(r.get("extended_fabric") for r in good):  # the hollow points
            key.append(f"<span style='color:{ACCENT}'>&#9675;</span>&nbsp;generated&nbsp;fabric")
        if any(not r.get("fits_in_memory", True) for r in good):
            key.append(f"<span style='color:{DOES_NOT_FIT}'>&#9679;</span>&nbsp;does&nbsp;not&nbsp;fit")
        self.key_label.setText(f"<span style='color:{MUTED}; font-size:8pt'>{' &nbsp; '.join(key)}</span>")
        self._scaling_points = list(zip([r["gpus"] for r in good], [r["tokens_per_s"] for r in good]))
        small = QFont()
        small.setPointSizeF(7.5)
        current = report.get("current_gpus")
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
        # axes: GPU counts below, 1-2-5 tokens/s at the left (log scales drawn as such)
        item.getAxis("bottom").setTicks([[(x, count_text(r["gpus"])) for x, r in zip(xs, good)]])
        lo = min(min(ys), min(ideal))
        hi = max(max(ys), max(ideal))
        pad_x = 0.35
        item.setXRange(xs[0] - pad_x, xs[-1] + pad_x, padding=0)
        span = max(hi - lo, 0.3)
        self._y_range = (lo - 0.08 * span, hi + 0.12 * span)
        item.setYRange(*self._y_range, padding=0)
        self._update_y_ticks()
        lines = [f"{'GPUs':>6}  {'tokens/s':>10}  {'efficiency':>10}  {'MFU':>6}"]
        for r in rows:
            if "error" in r:
                lines.append(f"{r['gpus']:>6}  {r['error']}")
            else:
                lines.append(f"{r['gpus']:>6}  {r['tokens_per_s']:>10,.0f}  {r['efficiency']:>10.0%}  "
                             f"{r['mfu']:>6.1%}" + ("" if r.get("fits_in_memory", True) else "  does not fit")
                             + ("  (generated larger fabric)" if r.get("extended_fabric") else ""))
        self.plot.setToolTip(f"<pre>{_escape(chr(10).join(lines))}</pre>")

    def _update_y_ticks(self) -> None:
        """Round tokens/s at the left, as many as the plot's height holds."""
        if self._y_range is None:
            return
        lo, hi = self._y_range
        height = self.plot.getPlotItem().vb.height() or 200.0
        ticks = nice_log_ticks(10 ** lo, 10 ** hi, pixels=height)
        self.plot.getPlotItem().getAxis("left").setTicks([[(math.log10(v), rate_text(v)) for v in ticks]])

    # ---- applying ----
    def _on_double_clicked(self, row: int, _col: int) -> None:
        if 0 <= row < len(self._row_advice) and self._row_advice[row] is not None:
            advice = self._row_advice[row]
            if not advice.error:
                self.apply(advice)

    def _on_plan_double_clicked(self, row: int, _col: int) -> None:
        if 0 <= row < len(self._plan_rows):
            self.apply_plan(self._plan_rows[row])

    def plan_rows(self) -> list[dict]:
        """The best plans in table order (the search's rows: point, step_time_s, mfu, ...)."""
        return list(self._plan_rows)

    def apply_plan(self, row: dict) -> bool:
        """Apply a plan of the search as one undo step (a job edit); False, and why in the status line,
        when it cannot be."""
        from ..commands import SetJob

        if self._closed or row is None or self.search_result is None:
            return False
        if self.search_stale or self.search_revision != self.revision:
            self.status_label.setText("the design changed since this search: search again first")
            return False
        current = self.search_result.current
        if current is not None and row["point"] == current["point"]:
            self.status_label.setText("this is the file's plan already")
            return False
        doc = self.qdoc.doc
        if doc.spec.workload is None:
            self.status_label.setText("the design has no workload")
            return False
        point = row["point"]
        label = point.label()
        command = SetJob(self.qdoc, workload=point.workload(doc.spec.workload),
                         parallelism=point.parallelism(doc.spec.parallelism), text=f"Search: {label}")
        self._last_applied_plan = label
        self._last_applied = f"Search: {label}"
        self.qdoc.push(command)  # the document changes: the window re-evaluates, these plans go stale
        self._update_stale()
        self.planApplied.emit(label)
        return True

    def advice_rows(self) -> list:
        """The advice in table order (group header rows left out)."""
        return [a for a in self._row_advice if a is not None]

    def find_advice(self, prefix: str):
        return next((a for a in self.advice_rows() if a.id.startswith(prefix) and not a.error), None)

    def row_of(self, advice) -> int:
        return self._row_advice.index(advice)

    def apply(self, advice) -> bool:
        """Apply one change as one undo step; False (and why, in the status line) when it cannot be."""
        from ..commands import ReplaceDocument, SetJob

        if self._closed or advice is None:
            return False
        if advice.error or advice.document is None:
            self.status_label.setText(f"{advice.title}: not applicable ({advice.error})")
            return False
        if self.stale or self.report_revision != self.revision:
            self.status_label.setText("the design changed since this analysis: analyse again first")
            return False
        doc = advice.document
        text = f"Advisor: {advice.title}"
        if advice.job_only:
            command = SetJob(self.qdoc, workload=doc.spec.workload, parallelism=doc.spec.parallelism, text=text)
        else:
            command = ReplaceDocument(self.qdoc, doc, text=text)
        self._last_applied = advice.title
        self.qdoc.push(command)  # the document changes: the window re-evaluates, this advice goes stale
        self._update_stale()
        self.applied.emit(advice.id)
        return True



class _TabifyOnShow(QObject):
    """Tabify two docks once their window has been shown (see tabify_behind)."""

    def __init__(self, window, front, dock):
        super().__init__(window)
        self.front, self.dock = front, dock
        window.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Show:
            watched.removeEventFilter(self)
            QTimer.singleShot(0, self._tabify)
        return False

    def _tabify(self) -> None:
        try:
            window = self.parent()
            window.tabifyDockWidget(self.front, self.dock)
            self.dock.show()
            self.front.raise_()
            self.deleteLater()
        except RuntimeError:  # the window went before the timer fired
            pass


def tabify_behind(window, front, dock) -> None:
    """Put `dock` in a tab behind `front` (docks of a QMainWindow), `front` staying in front.

    Done right after the window is first shown: Qt 6.11, tabifying a second tab group before,
    makes a spare tab bar that stays visible over the other docks and narrows the side docks.
    Until then the dock is hidden (and its panel idle)."""
    dock.hide()
    _TabifyOnShow(window, front, dock)
