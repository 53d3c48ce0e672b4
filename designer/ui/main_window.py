"""The main window: canvas in the centre, palette and inspector docks, menus, status bar."""
from __future__ import annotations

import time

from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QDockWidget, QLabel, QMainWindow, QToolButton

from ..core.analysis.link_load import remember as remember_link_load
from .action_guard import connect_action
from .canvas.scene import CanvasScene
from .canvas.view import CanvasView
from .inspector import Inspector
from .palette import Palette
from .panels.breakdown import ShownBefore
from .qt_document import QtDocument

PROBLEM_TEXT_PX = 340  # the first problem's message in the status bar, elided to this width
TOOLTIP_PROBLEMS = 30  # problems listed in the status bar's tooltip (the popup lists them all)
STATUS_REASON_PX = 360  # the "not evaluated" reason in the status bar (whole in its tooltip)
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

        self.autosaver = None  # the crash-recovery autosave (app.py), once the window is shown
        # the window's commands, one controller per job; the menus (menus.py) call into them
        from .design_tools import DesignTools
        from .edit_actions import EditActions
        from .export_actions import ExportActions
        from .file_actions import FileActions

        self.files = FileActions(self)
        self.exports = ExportActions(self)
        self.tools = DesignTools(self)
        self.edits = EditActions(self)
        self._build_menus()
        self.help_dialogs: dict = {}  # Help's dialogs by kind, kept while the window lives (help.py)
        from .connect_to_fabric import enable_canvas_menu

        enable_canvas_menu(self)  # the canvas's right-click menu
        from .logical.install import install_logical_view

        install_logical_view(self)  # View > Logical Fabric View: a dock sharing the canvas's selection
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

    def _action(self, command) -> QAction:
        """The QAction of a menus.Command: `command.run(window)` (with the flag when checkable),
        through action_guard (a failure shows a message box)."""
        action = QAction(command.text, self)
        shortcuts = command.shortcut if isinstance(command.shortcut, tuple) else (command.shortcut,)
        keys = [QKeySequence(k) for k in shortcuts if k is not None]
        action.setShortcuts([k for k in keys if not k.isEmpty()])  # Quit has no key on some platforms
        if command.tip:
            action.setStatusTip(command.tip)
        action.setCheckable(command.checkable)
        action.setChecked(command.checked)
        if command.about:
            action.setMenuRole(QAction.AboutRole)
        run = command.run
        connect_action(action, self, (lambda on: run(self, on)) if command.checkable else (lambda: run(self)))
        return action

    def _build_menus(self) -> None:
        """The menus and the toolbar of menus.py; each action is also window.act_<key>."""
        from . import menus

        self.act_undo = self.qdoc.undo_stack.createUndoAction(self, "&Undo")
        self.act_undo.setShortcut(QKeySequence.Undo)
        self.act_redo = self.qdoc.undo_stack.createRedoAction(self, "&Redo")
        # Ctrl+Shift+Z and Ctrl+Y everywhere (Qt's standard Redo is only one of them, depending on the platform)
        self.act_redo.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        from .undo_keys import DocumentUndoKeys

        # Undo/redo keys reach these actions from any field of the window (a line edit would keep them).
        self.undo_keys = DocumentUndoKeys(self)
        self.actions = {"undo": self.act_undo, "redo": self.act_redo}
        self.menus = {}
        for title, entries in menus.MENUS:
            menu = self.menuBar().addMenu(title)
            self.menus[title.replace("&", "")] = menu
            for entry in entries:
                if entry == menus.SEPARATOR:
                    menu.addSeparator()
                elif entry == menus.OPEN_RECENT:
                    self.files.recent_menu = menu.addMenu("Open &Recent")
                elif entry == menus.DOCKS:
                    for dock in self.findChildren(QDockWidget):
                        menu.addAction(dock.toggleViewAction())
                elif isinstance(entry, str):
                    menu.addAction(self.actions[entry])
                else:
                    self.actions[entry.key] = action = self._action(entry)
                    setattr(self, f"act_{entry.key}", action)  # the names scripts and tests know
                    menu.addAction(action)
        self.help_menu = self.menus["Help"]
        # Link Heat: as the user left it (off at first: red and green read as cable kinds to a newcomer)
        self.act_heat.setChecked(self.settings.value("view/link_heat", False, type=bool))
        self.view.set_heat(self.act_heat.isChecked())
        toolbar = self.addToolBar("Main")
        toolbar.setObjectName("main-toolbar")
        for key in menus.TOOLBAR:
            toolbar.addSeparator() if key == menus.SEPARATOR else toolbar.addAction(self.actions[key])
        self.files.update_recent_menu()

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
        self.view.partDropped.connect(self.edits.drop_part)
        self.view.linkRequested.connect(self.edits.request_link)
        self.view.zoomChanged.connect(lambda s: self.zoom_label.setText(f"{s * 100:.0f}%"))
        self.palette.linkToolChanged.connect(self.edits.set_link_tool)
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
        """Open a design on the UI thread (scripts, tests, start-up); File > Open reads off it."""
        self.files.open_file(path)

    def fit_view(self) -> None:
        self.view.fit()

    def run_in_background(self, title: str, label: str, work, on_result, on_error, on_cancel=None):
        """Long work (generate, open, recovery) in a thread under a progress bar with Cancel."""
        from .background import BackgroundJob

        if self.progress is not None and self.progress.active:
            self.tell("wait for the running task, or cancel it")
            return None
        self.progress = BackgroundJob(self, title, label, work, on_result, on_error, on_cancel).start()
        return self.progress

    def closeEvent(self, event) -> None:
        if self.files.maybe_save():
            if self.autosaver is not None:
                self.autosaver.discard()
            self._closed = True
            from .layout_memory import save_layout

            save_layout(self)  # the docks' sizes and places, for the next run
            self.worker.stop()  # no late results for a closed window
            self.advisor_panel.shutdown()
            event.accept()
        else:
            event.ignore()

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

    def toggle_heat(self, on: bool) -> None:
        """View > Link Heat."""
        self._heat_of = self.result if on else None
        self.scene.show_heat(self._heat_of)
        self.view.set_heat(on)
        self.settings.setValue("view/link_heat", on)

