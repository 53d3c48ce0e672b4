"""The main window: canvas in the centre, palette and inspector docks, menus, status bar."""
from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import QPointF, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QApplication, QDialog, QDockWidget, QFileDialog, QInputDialog, QLabel, QMainWindow, QMessageBox, QToolButton,
)

from ..core.analysis.link_load import remember as remember_link_load
from ..core.model.geometry import RACK_WIDTH_PX
from ..core.problems import DesignerError
from . import commands, editing
from .action_guard import connect_action
from .canvas.items import ID_ROLE
from .canvas.scene import CanvasScene
from .canvas.style import GRID_PX
from .canvas.view import CanvasView
from .dialog_folders import design_folder, export_start
from .inspector import Inspector
from .palette import Palette, parse_part
from .panels.breakdown import ShownBefore
from .qt_document import QtDocument

FILE_FILTER = "Designer files (*.yaml *.yml);;All files (*)"
PROBLEM_TEXT_PX = 340  # the first problem's message in the status bar, elided to this width
TOOLTIP_PROBLEMS = 30  # problems listed in the status bar's tooltip (the popup lists them all)
STATUS_REASON_PX = 360  # the "not evaluated" reason in the status bar (whole in its tooltip)
MAX_RECENT = 8
LINK_LOAD_DELAY_MS = 150  # a selected link's load (big designs): asked once the user has not edited at once


def _changes_link_words(change) -> bool:
    """Whether a change can alter how a link's load is worded: its links, or the ids and tiers of the
    servers and switches they join (a box placed on the canvas cannot)."""
    if change.collection == "links":
        return True
    return change.collection in ("nodes", "switches") and (change.action != "changed"
                                                           or change.field in ("id", "tier"))


class MainWindow(QMainWindow):
    resultChanged = Signal(object)  # the newest Evaluation (or None)

    def __init__(self, settings: QSettings | None = None, engine_slowdown_s: float = 0.0) -> None:
        from .interpreter_share import share_the_interpreter
        from .malloc_arenas import use_one_arena

        use_one_arena()  # before the window's threads allocate (memory of a big open: malloc_arenas.py)
        share_the_interpreter()  # the window waits less for the working threads (interpreter_share.py)
        super().__init__()
        self.settings = settings or QSettings()
        self.qdoc = QtDocument(parent=self)
        self.scene = CanvasScene(self.qdoc, self)
        self.view = CanvasView(self.scene)
        self.setCentralWidget(self.view)
        self.result = None
        self.previous_result = None
        self.evaluating = False
        self.problems: list = []
        from .worker import EvaluationWorker

        self.worker = EvaluationWorker(engine_slowdown_s)  # not a Qt child: its thread may outlive the window
        self.worker.checked.connect(self._on_checked)
        self.worker.evaluated.connect(self._on_evaluated)
        self.worker.timelineReady.connect(self._on_timeline)
        self.worker.linkLoadReady.connect(self._on_link_load)
        self._link_load_pending = False  # a selected link's load being made off the UI thread
        self._link_load_timer = QTimer(self, singleShot=True, interval=LINK_LOAD_DELAY_MS,
                                       timeout=self._link_load_due)
        self._timeline_pending = False  # the step time of a result is shown, its timeline not yet
        self._timeline_requested = None  # the result whose timeline the worker was asked for
        self._heat_of = None  # the result the canvas's link heat shows
        self.progress = None  # the running (or last) BackgroundJob: generate, open, recovery
        self._revision_of: dict[int, int] = {}  # worker request -> the document revision it evaluates

        self.palette = Palette()
        self.palette.follow_document(self.qdoc)  # new parts start as the open design's own
        self.inspector = Inspector(self.qdoc)
        self.inspector.load_later = self._link_load_soon  # a big design's link load: off this thread
        self._dock(self.palette, "Parts", Qt.LeftDockWidgetArea)
        self.inspector_dock = self._dock(self.inspector, "Inspector", Qt.RightDockWidgetArea)
        from .canvas.minimap import Minimap
        from .job_panel import JobPanel

        self.job_panel = JobPanel(self.qdoc)
        self.job_dock = self._dock(self.job_panel, "Job", Qt.LeftDockWidgetArea)
        self.tabifyDockWidget(self.findChild(QDockWidget, "Parts"), self.job_dock)

        self.minimap = Minimap(self.view, self.qdoc)
        self._dock(self.minimap, "Overview", Qt.RightDockWidgetArea)
        from .panels.breakdown import BreakdownPanel
        from .panels.timeline import TimelinePanel

        self.breakdown_panel = BreakdownPanel()
        self.timeline_panel = TimelinePanel()
        self.breakdown_dock = self._dock(self.breakdown_panel, "Breakdown", Qt.BottomDockWidgetArea)
        self.timeline_dock = self._dock(self.timeline_panel, "Timeline", Qt.BottomDockWidgetArea)
        self.splitDockWidget(self.breakdown_dock, self.timeline_dock, Qt.Horizontal)
        from .panels.advisor import AdvisorPanel, tabify_behind

        self.advisor_panel = AdvisorPanel(self.qdoc)  # analyses when shown (a tab behind the Timeline)
        self.advisor_dock = self._dock(self.advisor_panel, "Advisor", Qt.BottomDockWidgetArea)
        from .panels.failures_part import select_elements

        self.advisor_panel.elementsRequested.connect(lambda ids: select_elements(self, ids))  # a failure's row
        from .layout_memory import restore_or_first_layout

        # once shown and tabbed: the docks as the user left them (layout_memory.py), else a first layout
        tabify_behind(self, self.timeline_dock, self.advisor_dock, then=lambda: restore_or_first_layout(self))
        self.resizeDocks([self.breakdown_dock, self.timeline_dock], [520, 900], Qt.Horizontal)
        self.resizeDocks([self.breakdown_dock], [300], Qt.Vertical)

        self.counts_label = QLabel()
        # One list of problems per revision (the worker's check: design + plan), shown the same way by
        # this button (count + first message), its popup (every message, wrapped) and the Job panel.
        self.problems_button = QToolButton()
        self.problems_button.setObjectName("problems")
        self.problems_button.setAutoRaise(True)
        self.problems_button.setToolButtonStyle(Qt.ToolButtonTextOnly)
        self.problems_button.clicked.connect(self.show_problems_popup)
        from .problems_popup import ProblemsPopup

        self.problems_popup = ProblemsPopup(self)
        self.problems_popup.jumpRequested.connect(self.jump_to)
        self.stale_reason: str | None = None  # why the panels show an older result (None: they are current)
        self._replaced_at = 0  # worker requests up to this number were for the design before the last replace
        self.result_label = QLabel()
        self.zoom_label = QLabel()
        self.statusBar().addWidget(self.counts_label, 1)
        self.statusBar().addPermanentWidget(self.result_label)
        self.statusBar().addPermanentWidget(self.problems_button)
        self.statusBar().addPermanentWidget(self.zoom_label)

        self._build_actions()
        self._build_menus()
        from .connect_to_fabric import install_connect_to_fabric
        from .help import install_help_menu

        install_connect_to_fabric(self)  # Edit > Connect to Fabric, and the canvas's right-click menu
        install_help_menu(self)  # last in the menu bar: quick guide, shortcuts, about
        from .logical.install import install_logical_view

        install_logical_view(self)  # View > Logical Fabric View: a dock sharing the canvas's selection
        from .canvas.heat_menu import install_heat_view

        install_heat_view(self)  # View > Heat by Busiest Phase (else: share of the step)
        from .jobs_install import install_jobs

        install_jobs(self)  # the Jobs dock, the jobs' colours on the canvas, Edit > Mark Down / Up
        self._connect()
        # Live recompute: a snapshot (copy-on-write: cheap) goes to the worker 16 ms after the last
        # edit, one frame, so that a burst of edits (a key held down) sends one request, not many.
        self._check_timer = QTimer(self, singleShot=True, interval=16, timeout=self._after_edit)
        self.qdoc.replaced.connect(self._update_title)
        self._refresh_all()

    # ---- layout ----
    def _dock(self, widget, title: str, area) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(title)
        dock.setWidget(widget)
        dock.setFeatures(QDockWidget.DockWidgetMovable | QDockWidget.DockWidgetFloatable
                         | QDockWidget.DockWidgetClosable)
        self.addDockWidget(area, dock)
        return dock

    def _action(self, text, slot, shortcut=None, tip=None, checkable=False) -> QAction:
        """A window command. `slot()` is called with no argument (Qt's `checked` flag would land in a
        parameter such as `path`), `slot(checked)` only for a checkable action; a failure shows a message box."""
        action = QAction(text, self)
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        if tip:
            action.setStatusTip(tip)
        action.setCheckable(checkable)
        connect_action(action, self, slot)
        return action

    def _build_actions(self) -> None:
        a = self._action
        self.act_new = a("&New", self.file_new, QKeySequence.New)
        self.act_open = a("&Open...", self.file_open_dialog, QKeySequence.Open)
        self.act_save = a("&Save", self.file_save, QKeySequence.Save)
        self.act_save_as = a("Save &As...", self.file_save_as, QKeySequence.SaveAs)
        self.act_quit = a("&Quit", self.close, QKeySequence.Quit)
        self.act_undo = self.qdoc.undo_stack.createUndoAction(self, "&Undo")
        self.act_undo.setShortcut(QKeySequence.Undo)
        self.act_redo = self.qdoc.undo_stack.createRedoAction(self, "&Redo")
        # Ctrl+Shift+Z and Ctrl+Y everywhere (Qt's standard Redo is only one of them, depending on the platform)
        self.act_redo.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        from .undo_keys import DocumentUndoKeys

        # Undo/redo keys reach these actions from any field of the window (a line edit would keep them).
        self.undo_keys = DocumentUndoKeys(self)
        self.act_cut = a("Cu&t", self.cut, QKeySequence.Cut)
        self.act_copy = a("&Copy", self.copy, QKeySequence.Copy)
        self.act_paste = a("&Paste", self.paste, QKeySequence.Paste)
        self.act_duplicate = a("&Duplicate", lambda: self.duplicate(1), "Ctrl+D", "Copy the selection beside itself")
        self.act_duplicate_many = a("Duplicate &Many...", self.duplicate_many, "Ctrl+Shift+D",
                                    "Copies of the selection in a row, cables between them included")
        self.act_delete = a("De&lete", self.delete_selection, QKeySequence.Delete)
        self.act_select_all = a("Select &All", self.select_all, QKeySequence.SelectAll)
        self.act_find = a("&Find...", self.find, QKeySequence.Find)
        self.act_fit = a("&Fit", self.view.fit, "F")
        self.act_zoom_in = a("Zoom &In", lambda: self.view.zoom_by(1.25), QKeySequence.ZoomIn)
        self.act_zoom_out = a("Zoom &Out", lambda: self.view.zoom_by(0.8), QKeySequence.ZoomOut)
        self.act_grid = a("&Grid", lambda on: self.view.set_grid(on), "Ctrl+'", checkable=True)
        self.act_grid.setChecked(True)
        self.act_snap = a("&Snap to Grid", self._set_snap, checkable=True)
        self.act_snap.setChecked(True)
        self.act_generate = a("&Generate Fat-Tree...", self.generate, "Ctrl+G",
                              "A whole fabric from a few numbers; undoable as one step")
        self.act_export = a("&Export Canvas...", self.export_dialog, "Ctrl+E",
                            "PNG (2x), SVG or PDF (the drawing's size, A4 or Letter)")
        self.act_trace = a("Export &Trace (Perfetto)...", self.export_trace, None,
                           "The predicted step as a Chrome/Perfetto trace (open it in ui.perfetto.dev)")
        self.act_export_breakdown = a("Export &Breakdown Plot...", lambda: self.export_panel("breakdown"), None,
                                      "The step breakdown as PNG (2x), SVG or the CSV of its figures")
        self.act_export_timeline = a("Export T&imeline Plot...", lambda: self.export_panel("timeline"), None,
                                     "The Gantt timeline as PNG (2x), SVG or the CSV of its events")
        self.act_compare = a("Co&mpare With...", self.compare_with, None,
                             "This design beside another file: figures, cost and both breakdowns")
        self.act_calibrate = a("Cali&brate from nccl-tests...", self.calibrate_from_logs, None,
                               "Fit the link efficiencies to measured nccl-tests logs; applied as one undo step")
        self.act_report = a("&Report (PDF)...", self.export_report, "Ctrl+R",
                            "A design-review PDF: cluster, job, breakdown, memory, bottlenecks, calibration")
        self.act_heat = a("Link &Heat", self._toggle_heat, "Ctrl+H",
                          "Colour cables by their use in the last evaluation; outline the bottlenecks",
                          checkable=True)
        # Off until the user turns it on (red and green read as cable kinds to a newcomer); remembered.
        self.act_heat.setChecked(self.settings.value("view/link_heat", False, type=bool))
        self.view.set_heat(self.act_heat.isChecked())

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        for act in (self.act_new, self.act_open):
            file_menu.addAction(act)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        file_menu.addAction(self.act_compare)
        file_menu.addAction(self.act_calibrate)
        file_menu.addSeparator()
        for act in (self.act_save, self.act_save_as, self.act_export, self.act_export_breakdown,
                    self.act_export_timeline, self.act_trace, self.act_report):
            file_menu.addAction(act)
        file_menu.addSeparator()
        file_menu.addAction(self.act_quit)
        edit = bar.addMenu("&Edit")
        for act in (self.act_undo, self.act_redo, None, self.act_cut, self.act_copy, self.act_paste,
                    self.act_duplicate, self.act_duplicate_many, self.act_delete, None, self.act_select_all,
                    self.act_find):
            edit.addSeparator() if act is None else edit.addAction(act)
        view = bar.addMenu("&View")
        for act in (self.act_fit, self.act_zoom_in, self.act_zoom_out, None, self.act_grid, self.act_snap,
                    self.act_heat):
            view.addSeparator() if act is None else view.addAction(act)
        view.addSeparator()
        for dock in self.findChildren(QDockWidget):
            view.addAction(dock.toggleViewAction())
        tools = bar.addMenu("&Tools")
        tools.addAction(self.act_generate)
        from .decide_dialog import open_decide_dialog  # the buying decision (decide_dialog.py)
        self.act_decide = tools.addAction("Compare &Clusters for a Model...", lambda: open_decide_dialog(self))
        toolbar = self.addToolBar("Main")
        toolbar.setObjectName("main-toolbar")
        for act in (self.act_new, self.act_open, self.act_save, None, self.act_undo, self.act_redo, None,
                    self.act_fit, self.act_generate):
            toolbar.addSeparator() if act is None else toolbar.addAction(act)
        self._update_recent_menu()

    def _connect(self) -> None:
        self.qdoc.changed.connect(lambda _c: self._check_timer.start())
        self.qdoc.replaced.connect(lambda: self._check_timer.start(0))  # after the first paint
        self.scene.built.connect(lambda: self._check_timer.start(0))  # a big design's boxes are all made
        self.scene.buildProgress.connect(self._show_build_progress)
        self.qdoc.replaced.connect(self._on_replaced)
        self.job_panel.showProblemsRequested.connect(self.show_problems_popup)
        self.qdoc.dirtyChanged.connect(self.setWindowModified)
        self.qdoc.historyDropped.connect(self.tell)
        self.qdoc.pathChanged.connect(lambda _p: self._update_title())
        self.scene.selectionChanged.connect(self._selection_changed)
        self.scene.message.connect(self.tell)
        self.inspector.message.connect(self.tell)
        self.view.partDropped.connect(self.drop_part)
        self.view.linkRequested.connect(self.request_link)
        self.view.zoomChanged.connect(lambda s: self.zoom_label.setText(f"{s * 100:.0f}%"))
        self.palette.linkToolChanged.connect(self._set_link_tool)
        self.resultChanged.connect(self._show_panels)  # the breakdown now; timeline and heat when ready
        # a selected link's load (~30 ms of CPU at 16k GPUs): made by the worker once the step time is
        # painted (not competing with the Breakdown for the interpreter), shown when it is done
        self.resultChanged.connect(self._link_load_later)
        self.timeline_dock.visibilityChanged.connect(self._timeline_shown)

    def _show_build_progress(self, made: int, total: int) -> None:
        """A big design's boxes coming in after its first paint (canvas/scene.py): how far, in the status bar."""
        bar = self.statusBar()
        if made < total:
            bar.showMessage(f"drawing the canvas: {made:,} of {total:,} racks, servers and switches")
        elif bar.currentMessage().startswith("drawing the canvas"):
            bar.clearMessage()

    def settle(self, timeout_s: float = 120.0) -> bool:
        """Process events until the pending check and evaluation are done (screenshots, tests)."""
        import time

        deadline = time.monotonic() + timeout_s
        app = QApplication.instance()
        def busy():
            return (self._check_timer.isActive() or self.evaluating or self._timeline_pending or self.scene.building
                    or self._link_load_pending
                    or self.minimap._timer.isActive() or (self.progress is not None and self.progress.active))

        while busy() and time.monotonic() < deadline:
            app.processEvents()
            time.sleep(0.005)
        app.processEvents()
        return not busy()

    # ---- status ----
    def tell(self, text: str) -> None:
        """A passing message; the status bar cuts a long one at its edge, so its tooltip holds it whole."""
        bar = self.statusBar()
        bar.showMessage(text, 8000)
        bar.setToolTip(text)
        if not getattr(self, "_tell_tooltip_clears", False):
            self._tell_tooltip_clears = True
            bar.messageChanged.connect(lambda message: bar.setToolTip(message))

    def _refresh_all(self) -> None:
        self._update_title()
        self._after_edit()

    def _after_edit(self) -> None:
        doc = self.qdoc.doc
        # what is shown only (doc.counts also sums every link's cables: 0.1 s a call at 131k GPUs)
        self.counts_label.setText(f"{len(doc.racks)} racks   {len(doc.nodes)} servers   {doc.num_gpus()} GPUs   "
                                  f"{len(doc.switches)} switches   {len(doc.links)} links")
        if self.scene.building:  # the engine's thread would slow the canvas's slices (they share the GIL)
            self.result_label.setText("evaluating once the canvas is drawn...")
            return  # scene.built starts it
        self.evaluate()

    def _on_checked(self, number: int, problems) -> None:
        if getattr(self, "_closed", False) or number != self.worker.latest or number <= self._replaced_at:
            return
        from ..core.problems import count_text, first_error

        self.problems = problems
        errors = sum(p.severity == "error" for p in problems)
        count = count_text(problems)
        first = first_error(problems)
        if first is None:
            self.problems_button.setText(count)
        else:  # the count and the first message, elided to a status-bar width; the whole list in the tooltip
            metrics = self.problems_button.fontMetrics()
            self.problems_button.setText(f"{count}: " + metrics.elidedText(first.message, Qt.ElideRight,
                                                                          PROBLEM_TEXT_PX).replace("&", "&&"))
        self.problems_button.setStyleSheet("color: #b91c1c" if errors else "color: #b45309" if problems
                                           else "color: #047857")
        shown = problems[:TOOLTIP_PROBLEMS]
        self.problems_button.setToolTip("\n".join([count + (" (click for the list)" if problems else "")]
                                                  + [p.format() for p in shown]
                                                  + ([f"... and {len(problems) - len(shown)} more"]
                                                     if len(problems) > len(shown) else [])))
        self.problems_popup.set_problems(problems)
        self.job_panel.show_problems(problems)

    def show_problems_popup(self) -> None:
        """The status bar's problem list: every message whole, inside the window."""
        if self.problems:
            self.problems_popup.popup_above(self.problems_button)

    def _on_replaced(self) -> None:
        """Another design (open, new, generate, or the undo of one): its results start afresh.

        The last result belongs to the design before: it is neither shown as stale nor compared with."""
        self._replaced_at = self.worker.latest
        self.result = self.previous_result = None
        self.stale_reason = None
        self._timeline_pending = False
        self._timeline_requested = None
        self.breakdown_panel.forget("evaluating...")
        self.timeline_panel.forget("evaluating...")

    def jump_to(self, element_id: str | None) -> None:
        if not element_id:
            return
        item = self.scene.item_for(element_id)
        if item is None:  # a link that is not drawn (one of its ends is missing): show the end that exists
            link = self.qdoc.doc.find("links", element_id)
            if link is not None:
                from ..core.model.elements import split_endpoint

                for end in (link.a, link.b):
                    device = split_endpoint(end)[0]
                    if device in self.scene.devices:
                        element_id, item = device, self.scene.devices[device]
                        break
        if item is not None:
            self.scene.select_ids([element_id])
            self.view.center_on_item(item)

    def _update_title(self) -> None:
        self.setWindowTitle(f"{self.qdoc.name}[*] - Designer")
        self.setWindowModified(self.qdoc.dirty)

    def _selection_changed(self) -> None:
        self.inspector.show_ids(self.scene.selected_ids())

    # ---- evaluation off the UI thread ----
    def evaluate(self) -> None:
        """Hand a snapshot to the worker; the window never waits for it."""
        self.evaluating = True
        self.result_label.setText("evaluating...")
        snapshot = self.qdoc.doc.snapshot()
        number = self.worker.submit(snapshot)
        self._revision_of = {number: snapshot.revision}  # only the newest request's result is shown

    def _on_evaluated(self, number: int, result, error, seconds: float) -> None:
        if getattr(self, "_closed", False) or number != self.worker.latest or number <= self._replaced_at:
            return  # a newer edit superseded it, or it was for the design before the last replace
        self.evaluating = False
        if result is not None:
            # the result before, as its step and categories (ShownBefore), not the result and its arrays
            self.previous_result = ShownBefore.of(self.result) or self.previous_result
            self.result = result
            self.stale_reason = None
        else:
            if self.result is not None:  # the last valid result: what the next one is compared with
                self.previous_result = ShownBefore.of(self.result)
            self.result = None  # exports and the heat map need a current result
            self.stale_reason = None if error in (None, "no job") else self._stale_reason(error)
            self._stale_details = error or ""
        if error:
            if error == "no job":
                self.result_label.setText("no job")
            elif any(p.severity == "error" for p in self.problems):  # the problems button names them
                self.result_label.setText("not evaluated (the design has errors)")
            else:  # the engine's reason, elided at a word's end by Qt, never cut mid-word
                self.result_label.setText(self.result_label.fontMetrics().elidedText(
                    "not evaluated: " + (self.stale_reason or ""), Qt.ElideRight, STATUS_REASON_PX))
            self.result_label.setToolTip(self.stale_reason or error)  # whole, however long
        else:
            self.result_label.setText(f"step {result.step_time_s:.2f} s   MFU {result.mfu:.1%}   "
                                      f"{result.model_tflops_per_gpu:.0f} TFLOP/s/GPU"
                                      + ("" if result.fits_in_memory else "   does not fit in memory"))
            self.result_label.setToolTip(f"evaluated in {seconds * 1000:.0f} ms off the UI thread")
        self.resultChanged.emit(self.result)

    # ---- files ----
    def open_file(self, path: str) -> None:
        """Open a design; a file that fails leaves the open design as it was (and says why)."""
        self.qdoc.open(path)
        self.scene.finish_build()  # this call returns with the canvas whole (File > Open does not wait)
        self._add_recent(path)
        self.view.fit()

    def fit_view(self) -> None:
        self.view.fit()

    def file_new(self) -> None:
        if self._maybe_save():
            self.qdoc.new()

    def file_open_dialog(self) -> None:
        if not self._maybe_save():
            return
        path, _ = QFileDialog.getOpenFileName(self, "Open design", str(design_folder(self.qdoc)), FILE_FILTER)
        if path:
            self._open_reporting(path)

    def _open_reporting(self, path: str) -> None:
        """File > Open and Open Recent: the file is read off the UI thread, under a progress bar with
        Cancel; a file that fails leaves the open design as it was (and says why)."""
        from ..core.io import load_document
        from ..core.model.parts_in_use import parts_in_use
        from .canvas.scene_plan import plan_if_large

        def work():
            from ..core.gc_pause import collector_paused

            with collector_paused():  # a full collection walks the growing design: seconds of stalls at 131k
                new = load_document(path)
                if self.progress is not None:
                    self.progress.say(f"Laying out {Path(path).name}...")
                plan = plan_if_large(new)  # a big design's cables and boxes, worked out here too
                parts = parts_in_use(new, self.palette._catalog)  # what the palette starts from
                if plan is not None:  # before the collector resumes: see canvas/staged_gc.py
                    from .canvas.staged_gc import keep_out_of_collections

                    keep_out_of_collections(shown=False)
                return new, plan, parts

        def opened(loaded) -> None:
            from ..core.gc_pause import collector_paused

            new, plan, parts = loaded
            with collector_paused():  # the canvas makes an item per element, no cyclic garbage (10-20 %)
                self.scene.use_plan(plan)
                self.palette.expect_parts(new.spec, parts)
                self.qdoc.take(new, path)
                self._add_recent(path)
                self.view.fit()
                if plan is not None:  # a big design: see canvas/staged_gc.py
                    from .canvas.staged_gc import keep_out_of_collections

                    keep_out_of_collections()

        def failed(exc) -> None:
            QMessageBox.critical(self, "Cannot open the file", str(exc) if isinstance(exc, (DesignerError, OSError))
                                 else f"{path}: internal error: {type(exc).__name__}: {exc}")

        self.run_in_background("Open", f"Reading {Path(path).name}...", work, opened, failed,
                               lambda: self.tell(f"open of {Path(path).name} cancelled"))

    def run_in_background(self, title: str, label: str, work, on_result, on_error, on_cancel=None):
        """Long work (generate, open, recovery) in a thread under a progress bar with Cancel."""
        from .background import BackgroundJob

        if self.progress is not None and self.progress.active:
            self.tell("wait for the running task, or cancel it")
            return None
        self.progress = BackgroundJob(self, title, label, work, on_result, on_error, on_cancel).start()
        return self.progress

    def file_save(self) -> bool:
        """Save to the document's file; an untitled one (new, generated, an example's copy) asks where."""
        if not self.qdoc.path:
            return self.file_save_as()
        return self._save_to(self.qdoc.path)

    def file_save_as(self) -> bool:
        path, _ = QFileDialog.getSaveFileName(self, "Save design", self._save_dialog_start(), FILE_FILTER)
        if not path:
            return False
        if not path.endswith((".yaml", ".yml")):
            path += ".yaml"
        return self._save_to(path)

    def _save_dialog_start(self) -> str:
        """The document's own file, else its suggested name in the user's documents folder."""
        from ..core.io.bundled import is_bundled

        if self.qdoc.path and not is_bundled(self.qdoc.path):
            return self.qdoc.path
        from PySide6.QtCore import QStandardPaths

        documents = QStandardPaths.writableLocation(QStandardPaths.DocumentsLocation)
        # a missing folder would make the dialog open in the working directory (often Designer's own)
        folder = documents if documents and Path(documents).is_dir() else str(Path.home())
        return str(Path(folder) / self.qdoc.suggested_file_name())

    def _save_to(self, path: str) -> bool:
        """The one way the window writes a design (Save, Save As, save before closing)."""
        try:
            self.qdoc.save(path)
        except DesignerError as exc:  # a NaN or infinity in the design, or a target in Designer's own files
            QMessageBox.critical(self, "Cannot save", f"{exc}\n\nNothing was written; the design is still open.")
            return False
        except OSError as exc:
            QMessageBox.critical(self, "Cannot save", f"{path}: {exc.strerror or exc}\nThe design is still open; "
                                 "try another folder.")
            return False
        self._add_recent(path)
        self.tell(f"saved {path}")
        if getattr(self, "autosaver", None) is not None:
            self.autosaver.discard()
        return True

    def _maybe_save(self) -> bool:
        """True when it is fine to drop the current design."""
        if not self.qdoc.dirty:
            return True
        answer = QMessageBox.question(self, "Unsaved changes", f"Save the changes to {self.qdoc.name}?",
                                      QMessageBox.Save | QMessageBox.Discard | QMessageBox.Cancel, QMessageBox.Save)
        if answer == QMessageBox.Save:
            return self.file_save()
        return answer == QMessageBox.Discard

    def closeEvent(self, event) -> None:
        if self._maybe_save():
            if getattr(self, "autosaver", None) is not None:
                self.autosaver.discard()
            self._closed = True
            from .layout_memory import save_layout

            save_layout(self)  # the docks' sizes and places, for the next run
            self.worker.stop()  # no late results for a closed window
            self.advisor_panel.shutdown()
            event.accept()
        else:
            event.ignore()

    def _recent(self) -> list[str]:
        value = self.settings.value("recent", [])
        if isinstance(value, str):
            value = [value]
        return [v for v in (value or []) if v]

    def _add_recent(self, path: str) -> None:
        path = str(Path(path).resolve())
        recent = [path] + [p for p in self._recent() if p != path]
        self.settings.setValue("recent", recent[:MAX_RECENT])
        self._update_recent_menu()

    def _update_recent_menu(self) -> None:
        self.recent_menu.clear()
        for path in self._recent():
            act = self.recent_menu.addAction(Path(path).name)
            act.setToolTip(path)
            connect_action(act, self, lambda p=path: self._maybe_save() and self._open_reporting(p))
        self.recent_menu.setEnabled(bool(self._recent()))

    def _stale_reason(self, error: str) -> str:
        """Why there is no new result, in one sentence: the first error of the design, else the engine's."""
        from ..core.problems import first_error

        first = first_error([p for p in self.problems if p.severity == "error"])
        if first is not None:
            more = sum(p.severity == "error" for p in self.problems) - 1
            return first.message + (f" (and {more} more error{'s' if more > 1 else ''})" if more > 0 else "")
        return error.splitlines()[0]  # the engine's first problem, whole (its message and fix)

    def _on_timeline(self, number: int, result) -> None:
        """The events of the result whose step time is shown: the timeline follows it."""
        if getattr(self, "_closed", False) or result is not self.shown_result():
            return  # a newer result (or none, or another job's) is shown meanwhile
        self._timeline_pending = False
        self.timeline_panel.show_result(result)
        self.timeline_panel.revision = self.breakdown_panel.revision

    def _show_link_load(self) -> None:
        if not getattr(self, "_closed", False):
            self.inspector.show_result(self.result, now=True)

    def _link_load_later(self, _result) -> None:
        self._link_load_pending = self.inspector.shows_one_link()  # (settle() waits for it)
        if self._link_load_pending:
            self.inspector.mark_updating()
        QTimer.singleShot(0, self, lambda: getattr(self, "_closed", False) or self._request_link_load(self.result))

    def _link_load_soon(self, _result) -> None:
        """A link just selected on a big design: its load is asked of the worker a moment later. A
        user who selects a cable and types its new speed at once gets the edit's own result's load
        instead, and the worker's ~0.1 s (131k GPUs) no longer runs beside the window's commit and
        repaint of the edit (it held the window 118-150 ms)."""
        self._link_load_pending = True
        self._link_load_timer.start()

    def _link_load_due(self) -> None:
        if getattr(self, "_closed", False):
            return
        if self.evaluating or self._check_timer.isActive():
            self._link_load_pending = False  # an edit's result is coming: resultChanged asks for its load
            return
        self._request_link_load(self.result)

    def _request_link_load(self, result) -> None:
        """A new result (or a link selected, for a big design): the selected link's load with it. Its
        classes (every link of the design grouped, ~30 ms of CPU at 16k GPUs, 0.3 s at 131k) are made
        by the worker, off the UI thread; the Inspector shows what it showed until they come."""
        if result is None or not self.inspector.shows_one_link() or not getattr(result, "link_load", None):
            self._link_load_pending = False
            QTimer.singleShot(0, self, self._show_link_load)  # nothing to word, or no link loads: cheap
            return
        self._link_load_pending = True
        self.worker.build_link_load(self.worker.latest, result, self.qdoc.doc.snapshot())

    def _on_link_load(self, _number: int, result, analysis) -> None:
        if getattr(self, "_closed", False) or result is not self.result:
            return  # a newer result is shown: its own load is on its way
        doc = self.qdoc.doc
        if analysis is not None:
            changes = doc.changes_since(analysis.doc.revision) if analysis.doc.lineage is doc.lineage else None
            if changes is None or any(_changes_link_words(c) for c in changes):  # edited since it was asked
                if self.evaluating or self._check_timer.isActive():
                    self._link_load_pending = False  # the edit's own result asks again
                else:
                    self.worker.build_link_load(self.worker.latest, result, doc.snapshot())
                return
            remember_link_load(result, doc, analysis)  # the canvas may have placed boxes since: the same words
        self._link_load_pending = False
        self.inspector.show_result(result, now=True)  # (analysis None: it failed; worded here)

    def _timeline_seen(self) -> bool:
        """The Timeline can be seen: its dock is open and it is not a tab behind another."""
        return self.timeline_panel.isVisible()

    def _details_later(self) -> None:
        """After the step time is on screen: the link heat (when on) and the timeline (when seen)."""
        if getattr(self, "_closed", False) or self.result is None:
            return
        if self.act_heat.isChecked() and self._heat_of is not self.result:
            self._heat_of = self.result
            self.scene.show_heat(self.result)
        self._request_timeline()

    def _timeline_shown(self, _visible: bool) -> None:
        """The Timeline's dock was opened, closed or its tab raised: the events of the result shown, if it
        can be seen now and lacks them (the signal's flag is not reliable for tabbed docks: asked anew)."""
        if self._timeline_seen():
            self._request_timeline()

    def _request_timeline(self) -> None:
        """The events of the result shown, built by the worker, if the Timeline can be seen and does
        not show them yet; a hidden Timeline costs nothing (it asks when it is shown)."""
        result = self.shown_result()
        if result is not None and self.timeline_panel.result is result:  # shown already (a job picked again)
            self._timeline_pending = False
            self.timeline_panel.updating.hide()
            return
        if result is None or not self._timeline_seen():
            if self._timeline_requested is not result or result is None:
                self._timeline_pending = False  # nothing on its way
            if result is not None and self.timeline_panel.result not in (None, result):
                # A hidden Timeline lets go of an older result and its events (tens of MB at 131k
                # GPUs); opened again, it asks for the shown result's.
                self.timeline_panel.clear("working out the events of the result shown...")
                self._timeline_requested = None
            return
        self._timeline_pending = True
        if self._timeline_requested is not result:
            self._timeline_requested = result
            self.worker.build_timeline(self.worker.latest, result)

    def shown_result(self):
        """What the Breakdown and Timeline show: the Jobs panel's current job's result on the shared
        fabric (result.jobs), the first job's being the result itself."""
        result = self.result
        jobs = getattr(result, "jobs", None) or []
        index = self.jobs_panel.current if hasattr(self, "jobs_panel") else 0
        return jobs[index].result if 0 < index < len(jobs) else result

    def show_job(self, index: int) -> None:
        """The Jobs panel's current job changed: the Job panel edits it, the Breakdown and Timeline show it."""
        self.job_panel.set_job_index(index)
        if self.result is not None:
            self.breakdown_panel.forget()  # another job: not a difference to the one shown before
            self._show_panels(self.result)

    def _show_panels(self, result) -> None:
        if result is not None:
            self.breakdown_panel.show_result(self.shown_result())
            self.breakdown_panel.revision = self._revision_of.get(self.worker.latest)
            self._timeline_pending = self._timeline_seen()  # (settle() waits for it)
            self.timeline_panel.mark_updating()
            QTimer.singleShot(0, self, self._details_later)  # once the step time is painted
            return
        self._timeline_pending = False
        self.timeline_panel.updating.hide()
        self._heat_of = None
        self.scene.show_heat(None)
        if self.stale_reason:  # keep the last valid result, marked, so the user can still compare
            details = ("\n".join(p.format() for p in self.problems if p.severity == "error")
                       or getattr(self, "_stale_details", "") or self.stale_reason)
            self.breakdown_panel.mark_stale(self.stale_reason, details)
            self.timeline_panel.mark_stale(self.stale_reason, details)
            return
        reason = self.result_label.text() or "no job"
        self.breakdown_panel.clear(reason)
        self.timeline_panel.clear(reason)

    def _toggle_heat(self, on: bool) -> None:
        self._heat_of = self.result if on else None
        self.scene.show_heat(self._heat_of)
        self.view.set_heat(on)
        self.settings.setValue("view/link_heat", on)

    # ---- canvas gestures ----
    def _set_snap(self, on: bool) -> None:
        for item in self.scene.racks.values():
            item.snap = on

    def _set_link_tool(self, kind) -> None:
        """A palette link button: a kind starts that tool (ending any other); None ends it.

        The tool itself gives back the drag mode, the cursor and its button when it ends."""
        from .canvas.link_tool import LinkTool

        current = self.view.interaction
        if not kind:
            if current is not None:
                current.finish()
            return
        if isinstance(current, LinkTool) and current.kind == kind and current.active:
            return
        tool = LinkTool(self.view, kind, self.palette.tool_buttons.get(kind))
        tool.ended.connect(lambda cancelled: self.tell("link tool off") if cancelled else None)
        self.view.set_interaction(tool)
        self.tell(f"{kind} link tool: press on a server or switch, release on another (Esc ends)")

    def drop_part(self, description: str, pos: QPointF) -> bool:
        """A part dropped from the palette at a scene position: one undoable command."""
        kind, params = parse_part(description)
        doc = self.qdoc.doc
        try:
            if kind == "rack":
                x = round((pos.x() - RACK_WIDTH_PX / 2) / GRID_PX) * GRID_PX
                y = round(pos.y() / GRID_PX) * GRID_PX
                rack = editing.new_rack(doc, x, y)
                self.qdoc.push(commands.AddElements(self.qdoc, [rack], "Add rack"))
                self.scene.select_ids([rack.id])
                return True
            if kind in ("server", "ethernet-switch", "infiniband-switch"):
                if kind == "server":
                    element = editing.new_server(doc, params.get("accelerator", "H100-SXM5-80GB"),
                                                 int(params.get("count", 8)), nic_gbps=float(params.get("nic_gbps", 400)),
                                                 nic_kind=params.get("nic_kind", "infiniband"))
                else:
                    element = editing.new_switch(doc, kind.split("-")[0], port_gbps=float(params.get("port_gbps", 400)))
                    if params.get("model"):  # the palette's model and radix (the design's own by default)
                        element.model = params["model"]
                        element.radix = int(params.get("radix", element.radix))
                rack_item = self.scene.rack_at(pos)
                if rack_item is None:
                    self.qdoc.undo_stack.beginMacro(f"Add {element.id}")
                    self.qdoc.push(commands.AddElements(self.qdoc, [element]))
                    self.qdoc.push(commands.SetLayout(self.qdoc, {element.id: (pos.x() - RACK_WIDTH_PX / 2, pos.y())}))
                    self.qdoc.undo_stack.endMacro()
                    self.tell(f"{element.id} is in no rack: drag it into one")
                else:
                    rack_id = rack_item.data(ID_ROLE)
                    rack = doc.find("racks", rack_id)
                    from ..core.model.geometry import UNIT_HEIGHT_PX

                    from_bottom = (rack_item.sceneBoundingRect().bottom() - pos.y()) / UNIT_HEIGHT_PX
                    wanted = max(0, min(rack.units - element.height_units, int(from_bottom - element.height_units / 2)))
                    slot = self.scene.free_slot(rack_id, element.height_units, wanted)
                    if slot is None:
                        raise editing.Refused(f"rack {rack_id} has no {element.height_units}U free: use another rack")
                    element.rack, element.slot = rack_id, slot
                    self.qdoc.push(commands.AddElements(self.qdoc, [element], f"Add {element.id}"))
                self.scene.select_ids([element.id])
                return True
            if kind in ("accelerator", "nic"):
                item = self.scene.item_at(pos, ("node",))
                if item is None:
                    raise editing.Refused(f"drop the {kind} onto a server")
                node = doc.find("nodes", item.data(ID_ROLE))
                if kind == "accelerator":
                    from ..core.model import default_catalog

                    acc = default_catalog().accelerator(params.get("accelerator", node.accelerator))
                    if acc.name != default_catalog().accelerator(node.accelerator).name:
                        raise editing.Refused(f"{node.id} holds {node.accelerator}; one server takes one model "
                                              f"(change its accelerator in the inspector)")
                    if node.accelerator_count >= acc.max_per_node:
                        raise editing.Refused(f"{node.id} already holds {acc.max_per_node} x {acc.name}, the most "
                                              f"one server takes")
                    change = {"accelerator_count": node.accelerator_count + 1}
                else:
                    change = {"nic_count": node.nic_count + 1}
                self.qdoc.push(commands.SetFields(self.qdoc, {node.id: change}, f"Add {kind} to {node.id}"))
                return True
        except editing.Refused as exc:
            self.tell(str(exc))
            return False
        self.tell(f"unknown part {kind!r}")
        return False

    def request_link(self, a: str, b: str, kind: str) -> bool:
        from ..core.model.elements import LINK_KINDS

        if kind not in LINK_KINDS:  # never reaches the document (which would refuse it too)
            self.tell(f"no link drawn: kind {kind!r} is not one of {', '.join(LINK_KINDS)}")
            return False
        try:
            link = editing.plan_link(self.qdoc.doc, a, b, kind)
        except editing.Refused as exc:
            self.tell(str(exc))
            return False
        self.qdoc.push(commands.AddElements(self.qdoc, [link], f"Link {a} - {b}"))
        self.tell(f"{kind} link {link.a} - {link.b} at {link.bandwidth_gbps:g} Gb/s")
        return True

    # ---- edit menu ----
    def delete_selection(self) -> None:
        ids = self.scene.selected_ids()
        if ids:
            self.qdoc.push(commands.RemoveElements(self.qdoc, ids, f"Delete {len(ids)} item(s)"))

    def select_all(self) -> None:
        for item in list(self.scene.racks.values()) + list(self.scene.devices.values()):
            if item.parentItem() is None:
                item.setSelected(True)

    def copy(self) -> str | None:
        ids = self.scene.selected_ids()
        if not ids:
            return None
        text = editing.copy_text(self.qdoc.doc, ids)
        QApplication.clipboard().setText(text)
        self.tell(f"copied {len(ids)} item(s)")
        return text

    def cut(self) -> None:
        if self.copy():
            self.delete_selection()

    def paste(self, text: str | None = None, dx: float | None = None) -> list[str]:
        text = text if text is not None else QApplication.clipboard().text()
        try:
            elements = editing.paste_elements(self.qdoc.doc, text, dx if dx is not None else 60.0)
        except editing.Refused as exc:
            self.tell(str(exc))
            return []
        if not elements:
            return []
        self.qdoc.push(commands.AddElements(self.qdoc, elements, f"Paste {len(elements)} item(s)"))
        ids = [e.id for e in elements if not isinstance(e, editing.Link)]
        self.scene.select_ids(ids)
        return ids

    def duplicate(self, copies: int = 1) -> list[str]:
        """Copies of the selection in a row to its right, inner cables included, as one step."""
        ids = self.scene.selected_ids()
        if not ids:
            self.tell("select what to duplicate first")
            return []
        doc = self.qdoc.doc
        text = editing.copy_text(doc, ids)
        racks = [doc.find("racks", i) for i in ids if doc.find("racks", i) is not None]
        if racks:
            width = max(r.x for r in racks) - min(r.x for r in racks) + RACK_WIDTH_PX + GRID_PX
        else:
            width = RACK_WIDTH_PX + GRID_PX
        stack = self.qdoc.undo_stack
        stack.beginMacro(f"Duplicate x{copies}")
        new_ids: list[str] = []
        for k in range(1, copies + 1):
            elements = editing.paste_elements(doc, text, dx=width * k)
            self.qdoc.push(commands.AddElements(self.qdoc, elements, "Duplicate"))
            new_ids += [e.id for e in elements if not isinstance(e, editing.Link)]
        stack.endMacro()
        self.scene.select_ids(new_ids)
        return new_ids

    def duplicate_many(self) -> None:
        count, ok = QInputDialog.getInt(self, "Duplicate", "Copies:", 15, 1, 512)
        if ok:
            self.duplicate(count)

    def find(self) -> None:
        doc = self.qdoc.doc
        names = sorted(e.id for e in list(doc.racks) + list(doc.nodes) + list(doc.switches))
        names += sorted(f"{e.name} ({e.id})" for e in list(doc.racks) + list(doc.nodes) + list(doc.switches) if e.name)
        text, ok = QInputDialog.getItem(self, "Find", "Id or name:", names, 0, True)
        if ok and text:
            self.find_element(text)

    def find_element(self, text: str) -> str | None:
        """Select and show an element given its id, its name, or 'name (id)'."""
        doc = self.qdoc.doc
        text = text.strip()
        if text.endswith(")") and "(" in text:
            text = text[text.rindex("(") + 1:-1]
        found = doc.get(text)
        if found is None:
            found = next((e for e in list(doc.racks) + list(doc.nodes) + list(doc.switches)
                          if e.name == text or e.id.lower() == text.lower()), None)
        if found is None:
            self.tell(f"no element with id or name {text!r}")
            return None
        self.jump_to(found.id)
        return found.id

    # ---- tools ----
    def generate(self) -> None:
        from .generator_dialog import GeneratorDialog

        dialog = GeneratorDialog(self, design=self.qdoc.doc)  # starts from the design's own parts
        if not dialog.exec():
            return
        options, catalog = dialog.options(), dialog.catalog
        if options["nic_gbps"] is None or options["switch_radix"] is None:
            QMessageBox.critical(self, "Cannot generate",
                                 dialog.error() or "NIC speed and switch radix must be numbers")
            return
        from ..core.generate import generate_fat_tree

        def build():
            from .canvas.scene_plan import plan_if_large

            new = generate_fat_tree(**options, catalog=catalog)
            return new, plan_if_large(new)  # a big fabric's canvas planned here too, as for an open

        def built(made) -> None:
            new, plan = made
            self.scene.use_plan(plan)  # used if the next rebuild is of this very design
            if self.qdoc.doc.spec.workload is not None:
                new.set_job(self.qdoc.doc.spec.workload, self.qdoc.doc.spec.parallelism)
            from ..core.io.bundled import untitled_title

            from ..core.gc_pause import collector_paused

            # A new design with no file: Save asks where, so it never overwrites the design it replaced.
            with collector_paused():  # as for an open: the canvas's items are no cyclic garbage
                self.qdoc.push(commands.ReplaceDocument(self.qdoc, new, "Generate fat-tree",
                                                        identity=(None, untitled_title(new.metadata.name))))
                self.view.fit()

        # the dialog validated the options; anything else the builder raises is shown, never a crash
        self.run_in_background(
            "Generate", f"Building a fat-tree of {options['nodes']:,} servers...",
            build, built,
            lambda exc: QMessageBox.critical(self, "Cannot generate", str(exc)),
            lambda: self.tell("generate cancelled: the design is unchanged"))

    def export_panel(self, which: str, path: str | None = None) -> str | None:
        panel = self.breakdown_panel if which == "breakdown" else self.timeline_panel
        self.timeline_panel.design_name = self.qdoc.name  # the exported timeline's title names the design
        if self.result is None:
            self.tell("no evaluation to export yet")
            return None
        if path is None:
            path, _ = QFileDialog.getSaveFileName(
                self, f"Export {which}", export_start(self.qdoc, ".png", f"-{which}"),
                "PNG image (*.png);;SVG drawing (*.svg);;CSV data (*.csv)")
            if not path:
                return None
        try:
            panel.export(path)
        except (OSError, ValueError) as exc:
            QMessageBox.critical(self, "Cannot export", str(exc))
            return None
        self.tell(f"exported {path}")
        return path

    def calibrate_from_logs(self, paths: list[str] | None = None) -> bool:
        """File > Calibrate from nccl-tests...: fit the design's link efficiencies to the logs
        picked (as `designer calibrate` does), show the fit, and apply it as one undo step."""
        if paths is None:
            paths, _ = QFileDialog.getOpenFileNames(self, "Calibrate from nccl-tests logs",
                                                    str(design_folder(self.qdoc)),
                                                    "nccl-tests logs (*.txt *.log *.out *.json);;All files (*)")
            if not paths:
                return False
        from ..core.analysis.calibrate import calibrate, described_source, read_logs
        from .calibrate_dialog import CalibrationDialog

        doc = self.qdoc.doc.snapshot()
        QApplication.setOverrideCursor(Qt.WaitCursor)
        try:
            result = calibrate(doc, read_logs(list(paths)), sources=list(paths))
        except DesignerError as exc:
            QMessageBox.warning(self, "Cannot calibrate", str(exc))
            return False
        finally:
            QApplication.restoreOverrideCursor()
        dialog = CalibrationDialog(self, result)
        self.calibration_dialog = dialog
        if dialog.exec() == QDialog.Accepted:
            result = dialog.fit  # the fit shown: the whole one, or the one by size range
        if dialog.result() != QDialog.Accepted or not result.accepted:
            self.tell("calibration not applied" + (f": {result.refusals[0]}" if result.refusals else ""))
            return False
        new = self.qdoc.doc.copy()
        new.spec.calibration = result.calibration
        new.metadata.description = described_source(new.metadata.description, list(paths),
                                                    time.strftime("%Y-%m-%d"))
        self.qdoc.push(commands.ReplaceDocument(self.qdoc, new, "Calibrate from nccl-tests"))
        self.tell("calibrated: " + ", ".join(f"{c.name} {c.value:.3f}" for c in result.constants))
        return True

    def compare_with(self, path: str | None = None):
        """File > Compare With...: the open design (as the Breakdown panel shows it) beside another
        file, in a dialog that evaluates that file off the UI thread. Returns the dialog."""
        if self.result is None or self.stale_reason:
            self.tell("no current evaluation to compare yet" + (f": {self.stale_reason}" if self.stale_reason else ""))
            return None
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self, "Compare with", str(design_folder(self.qdoc)), FILE_FILTER)
            if not path:
                return None
        from .compare_dialog import CompareDialog

        dialog = CompareDialog(self, self.qdoc.doc.snapshot(), self.result, self.qdoc.path or self.qdoc.name, path)
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        self.compare_dialog = dialog
        dialog.resize(dialog.sizeHint())
        dialog.show()
        return dialog

    def export_report(self, path: str | None = None) -> str | None:
        if self.result is None:
            self.tell("no evaluation to report yet")
            return None
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Report", export_start(self.qdoc, ".pdf"),
                                                  "PDF document (*.pdf)")
            if not path:
                return None
        from ..core.export.report import build_report
        from .report_pictures import render_report_pictures

        pictures = render_report_pictures(self.qdoc.doc, self.result, self.qdoc.name, scene=self.scene)
        try:
            pages = build_report(self.qdoc.doc, self.result, path, self.qdoc.path or self.qdoc.name, pictures=pictures)
        except OSError as exc:
            QMessageBox.critical(self, "Cannot write the report", f"{path}: {exc}")
            return None
        self.tell(f"wrote {path}: {pages} pages")
        return path

    def export_trace(self, path: str | None = None) -> str | None:
        if self.result is None:
            self.tell("no evaluation to export yet")
            return None
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Export trace", export_start(self.qdoc, ".json"),
                                                  "Perfetto / Chrome trace (*.json)")
            if not path:
                return None
        import json

        import numpy as np

        from ..core.export.trace import trace_events
        from ..core.io.files import atomic_write_text

        doc = self.qdoc.doc
        counts = np.array([n.accelerator_count for n in doc.nodes], dtype=np.int64)
        gpu_node = np.repeat(np.arange(len(counts)), counts)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]) if len(counts) else counts
        gpu_local = np.arange(len(gpu_node)) - np.repeat(starts, counts)
        data = trace_events(self.result, gpu_node, [n.id for n in doc.nodes], gpu_local)
        try:
            atomic_write_text(path, json.dumps(data, separators=(",", ":")))
        except OSError as exc:
            QMessageBox.critical(self, "Cannot write the trace", f"{path}: {exc.strerror or exc}")
            return None
        self.tell(f"wrote {path}: {len(data['traceEvents'])} trace events")
        return path

    def export_dialog(self) -> None:
        from .export import export_scene

        # a PDF for a printed report on A4 or Letter paper, or one page of the drawing's own size
        pages = {"PDF on A4 paper (*.pdf)": "A4", "PDF on Letter paper (*.pdf)": "Letter"}
        path, chosen = QFileDialog.getSaveFileName(
            self, "Export canvas", export_start(self.qdoc, ".png"),
            ";;".join(["PNG image (*.png)", "SVG drawing (*.svg)", "PDF document (*.pdf)", *pages]))
        if path:
            try:
                export_scene(self.scene, path, page=pages.get(chosen) if path.lower().endswith(".pdf") else None)
                self.tell(f"exported {path}")
            except (OSError, ValueError) as exc:
                QMessageBox.critical(self, "Cannot export", str(exc))
