"""The main window: canvas in the centre, palette and inspector docks, menus, status bar."""
from __future__ import annotations

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QDockWidget, QLabel, QMainWindow, QScrollArea, QToolButton

from ...core.analysis.link_load import LinkLoads
from ..common.action_guard import connect_action
from ..canvas import heat as link_heat
from ..canvas.heat_menu import HEAT_BY_PHASE_SETTING
from ..canvas.scene import CanvasScene
from ..canvas.view import CanvasView
from ..docks.inspector import Inspector
from ..docks.palette import Palette
from ..document.qt_document import QtDocument


SIDE_DOCK_MAX_PX = 620  # a side dock's widest: the Jobs table's columns and the Job form, whole


def _scrolled(widget) -> QScrollArea:
    area = QScrollArea()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
    return area


class MainWindow(QMainWindow):
    resultChanged = Signal(object)  # the newest Evaluation (or None)

    def __init__(self, settings: QSettings | None = None, engine_slowdown_s: float = 0.0,
                 remember_layout: bool = True) -> None:
        super().__init__()
        self.settings = settings or QSettings()
        self.qdoc = QtDocument(parent=self)
        self.link_loads = LinkLoads()  # the shown result's link loads: the Inspector and the canvas ask them
        self._build_canvas()
        from .result_flow import ResultFlow

        self.results = ResultFlow(self, engine_slowdown_s)  # the engine's results to the status bar and panels
        self.progress = None  # the running (or last) BackgroundJob: generate, open, recovery
        self._build_design_docks()
        self._build_result_docks()
        self._build_status_bar()
        self.autosaver = None  # the crash-recovery autosave (use_autosaver), once the window is shown
        self.remember_layout = remember_layout  # the docks as the user left them (layout_memory.py)
        self.welcome_banner = None  # the first-run hint above the canvas (show_welcome)
        self._build_controllers()
        self._build_logical_dock()
        from ..docks.jobs_control import JobsControl

        self.jobs = JobsControl(self)  # the Jobs dock, the jobs' colours on the canvas
        self.jobs_panel, self.jobs_dock, self.job_marks = self.jobs.panel, self.jobs.dock, self.jobs.marks
        self._build_menus()
        self._build_canvas_menus()
        self._connect()
        self.jobs.connect()
        self.results.connect()
        self.qdoc.replaced.connect(self._update_title)
        self._refresh_all()

    # ---- what the window is made of (in the order __init__ builds it) ----
    def _build_canvas(self) -> None:
        self.scene = CanvasScene(self.qdoc, self, self.link_loads)
        self.view = CanvasView(self.scene)
        self.setCentralWidget(self.view)

    def _build_design_docks(self) -> None:
        """Parts and Job (tabbed, left); Inspector and Overview (right)."""
        self.palette = Palette()
        self.palette.follow_document(self.qdoc)  # new parts start as the open design's own
        self.inspector = Inspector(self.qdoc, self.link_loads, gpus=self.results.gpus)
        # scrolled: its list and form stand 530 px tall, more than a laptop's window leaves the left column
        self._dock(_scrolled(self.palette), "Parts", Qt.LeftDockWidgetArea)
        self.inspector_dock = self._dock(self.inspector, "Inspector", Qt.RightDockWidgetArea)
        from ..canvas.minimap import Minimap
        from ..docks.job_panel import JobPanel

        self.job_panel = JobPanel(self.qdoc, gpus=self.results.gpus)
        self.job_dock = self._dock(self.job_panel, "Job", Qt.LeftDockWidgetArea)
        self.tabifyDockWidget(self.findChild(QDockWidget, "Parts"), self.job_dock)

        self.minimap = Minimap(self.view, self.qdoc)
        self._dock(self.minimap, "Overview", Qt.RightDockWidgetArea)

    def _build_result_docks(self) -> None:
        """Breakdown beside Timeline (bottom), the Advisor a tab behind the Timeline; then the docks
        as the user left them."""
        from ..panels.breakdown import BreakdownPanel
        from ..panels.timeline import TimelinePanel

        self.breakdown_panel = BreakdownPanel()
        self.timeline_panel = TimelinePanel()
        self.breakdown_dock = self._dock(self.breakdown_panel, "Breakdown", Qt.BottomDockWidgetArea)
        self.timeline_dock = self._dock(self.timeline_panel, "Timeline", Qt.BottomDockWidgetArea)
        self.splitDockWidget(self.breakdown_dock, self.timeline_dock, Qt.Horizontal)
        from ..panels.advisor import tabify_behind
        from ..panels.advisor_slot import AdvisorSlot

        # the Advisor (a tab behind the Timeline, idle until raised) is made when first brought up
        self.advisor_slot = AdvisorSlot(self._make_advisor)
        self.advisor_dock = self._dock(self.advisor_slot, "Advisor", Qt.BottomDockWidgetArea)
        self.advisor_slot.follow(self.advisor_dock)
        from .layout_memory import LayoutMemory

        # once shown and tabbed: the docks as the user left them (layout_memory.py), else a first layout;
        # the first layout is kept for View > Reset Layout
        self.layout_memory = LayoutMemory(self)
        tabify_behind(self, self.timeline_dock, self.advisor_dock, then=self.layout_memory.restore_or_first)
        self.resizeDocks([self.breakdown_dock, self.timeline_dock], [520, 900], Qt.Horizontal)
        self.resizeDocks([self.breakdown_dock], [300], Qt.Vertical)

    def _make_advisor(self):
        """The Advisor panel, analysing when shown; a failure's row selects its elements on the canvas."""
        from ..panels.advisor import AdvisorPanel
        from ..panels.failures_part import select_elements

        panel = AdvisorPanel(self.qdoc)
        panel.elementsRequested.connect(lambda ids: select_elements(self, ids))
        return panel

    @property
    def advisor_panel(self):
        """The Advisor panel (made now if its dock was never brought up)."""
        return self.advisor_slot.panel()

    def _build_status_bar(self) -> None:
        """Counts of the design; the result, the problems and the zoom on the right."""
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
        self.result_label = QLabel()
        self.zoom_label = QLabel()
        self.statusBar().addWidget(self.counts_label, 1)
        self.statusBar().addPermanentWidget(self.result_label)
        self.statusBar().addPermanentWidget(self.problems_button)
        self.statusBar().addPermanentWidget(self.zoom_label)

    def _build_controllers(self) -> None:
        """The window's commands, one controller per job; the menus (menus.py) call into them."""
        from .design_tools import DesignTools
        from .import_actions import ImportActions
        from .edit_actions import EditActions
        from .export_actions import ExportActions
        from .file_actions import FileActions

        self.files = FileActions(self)
        self.exports = ExportActions(self)
        self.tools = DesignTools(self)
        self.imports = ImportActions(self)
        self.edits = EditActions(self)
        self.help_dialogs: dict = {}  # Help's dialogs by kind, kept while the window lives (help.py)

    def _build_logical_dock(self) -> None:
        """View > Logical Fabric View: a dock sharing the canvas's selection, closed at first."""
        from ..logical.install import logical_view_dock

        self.logical_view, self.logical_dock = logical_view_dock(self)
        self.act_logical = self.logical_dock.toggleViewAction()

    def _build_canvas_menus(self) -> None:
        """The canvas's right-click menu; Edit > Mark Down / Up enabled for the selection."""
        from ..document.connect_to_fabric import enable_canvas_menu
        from ..document.mark_down import follow_selection

        enable_canvas_menu(self)
        follow_selection(self)

    # ---- layout ----
    def _dock(self, widget, title: str, area) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(title)
        dock.setWidget(widget)
        if area in (Qt.LeftDockWidgetArea, Qt.RightDockWidgetArea):
            # a side dock never takes the canvas's room: closing its neighbour gives the width back to
            # the canvas, not to a form that has no use for 840 px
            dock.setMaximumWidth(SIDE_DOCK_MAX_PX)
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
        self.actions = {"undo": self.act_undo, "redo": self.act_redo, "logical": self.act_logical}
        self.menus = {}
        for title, entries in menus.MENUS:
            menu = self.menuBar().addMenu(title)
            self.menus[title.replace("&", "")] = menu
            self._fill_menu(menu, entries)
        self.help_menu = self.menus["Help"]
        # Link Heat: as the user left it (off at first: red and green read as cable kinds to a newcomer)
        self.act_heat.setChecked(self.settings.value("view/link_heat", False, type=bool))
        self.view.set_heat(self.act_heat.isChecked())
        by_phase = self.settings.value(HEAT_BY_PHASE_SETTING, False, type=bool)  # remembered
        self.act_heat_phase.setChecked(by_phase)
        self.scene.heat.set_mode(link_heat.PHASE if by_phase else link_heat.STEP)
        toolbar = self.addToolBar("Main")
        toolbar.setObjectName("main-toolbar")
        for key in menus.TOOLBAR:
            toolbar.addSeparator() if key == menus.SEPARATOR else toolbar.addAction(self.actions[key])
        self.files.update_recent_menu()

    def _fill_menu(self, menu, entries) -> None:
        """One menu's entries of menus.py: commands, separators, submenus and the named actions."""
        from . import menus

        for entry in entries:
            if entry == menus.SEPARATOR:
                menu.addSeparator()
            elif entry == menus.OPEN_RECENT:
                self.files.recent_menu = menu.addMenu("Open &Recent")
            elif entry == menus.OPEN_EXAMPLE:
                self.files.fill_example_menu(menu.addMenu("Open E&xample"))
            elif entry == menus.DOCKS:
                for name in menus.DOCKS:
                    menu.addAction(self.findChild(QDockWidget, name).toggleViewAction())
            elif isinstance(entry, str):
                menu.addAction(self.actions[entry])
            elif isinstance(entry, menus.Submenu):
                self._fill_menu(menu.addMenu(entry.title), entry.entries)
            else:
                self.actions[entry.key] = action = self._action(entry)
                setattr(self, f"act_{entry.key}", action)  # the names scripts and tests know
                menu.addAction(action)

    def _connect(self) -> None:
        self.scene.buildProgress.connect(self._show_build_progress)
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
            return (self.results.busy or self.scene.build.running
                    or self.minimap._timer.isActive() or (self.progress is not None and self.progress.active))

        quiet_passes = 0
        while time.monotonic() < deadline:
            app.processEvents()
            if busy():
                quiet_passes = 0
                time.sleep(0.005)
                continue
            quiet_passes += 1
            if quiet_passes == 2:  # and what the pass before posted (a zero-length timer) started nothing
                return True
        return False

    def use_autosaver(self, autosaver) -> None:
        """Unsaved changes go to a recovery file every minute (autosave.py); removed on save and close."""
        self.autosaver = autosaver
        autosaver.failed.connect(self.tell)  # never silent, never a traceback on the UI thread

    def show_welcome(self, force: bool = False) -> None:
        """The first-run hint above the canvas, unless it was dismissed before (or `force`)."""
        from .welcome import show_welcome

        self.welcome_banner = show_welcome(self, force) or self.welcome_banner

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
        self.results.after_edit()

    def show_problems_popup(self) -> None:
        """The status bar's problem list: every message whole, inside the window."""
        if self.problems:
            self.problems_popup.popup_above(self.problems_button)

    def jump_to(self, element_id: str | None) -> None:
        if not element_id:
            return
        item = self.scene.item_for(element_id)
        if item is None:  # a link that is not drawn (one of its ends is missing): show the end that exists
            link = self.qdoc.doc.find("links", element_id)
            if link is not None:
                from ...core.model.elements import split_endpoint

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

    # ---- the results (result_flow.py), by the names scripts and tests know ----
    result = property(lambda self: self.results.result, doc="the newest Evaluation (None: no current one)")
    previous_result = property(lambda self: self.results.previous_result)
    evaluating = property(lambda self: self.results.evaluating)
    problems = property(lambda self: self.results.problems, doc="the design's problems, as last checked")
    stale_reason = property(lambda self: self.results.stale_reason)
    worker = property(lambda self: self.results.worker)

    # ---- files ----
    def open_file(self, path: str) -> None:
        """Open a design on the UI thread (scripts, tests, start-up); File > Open reads off it."""
        self.files.open_file(path)

    def fit_view(self) -> None:
        self.view.fit()

    def run_in_background(self, title: str, label: str, work, on_result, on_error, on_cancel=None):
        """Long work (generate, open, recovery) in a thread under a progress bar with Cancel."""
        from ..work.background import BackgroundJob

        if self.progress is not None and self.progress.active:
            self.tell("wait for the running task, or cancel it")
            return None
        self.progress = BackgroundJob(self, title, label, work, on_result, on_error, on_cancel).start()
        return self.progress

    def closeEvent(self, event) -> None:
        if self.files.maybe_save():
            if self.autosaver is not None:
                self.autosaver.discard()
            from .layout_memory import save_layout

            save_layout(self)  # the docks' sizes and places, for the next run
            self.results.close()  # no late results for a closed window
            self.advisor_slot.shutdown()
            event.accept()
        else:
            event.ignore()

