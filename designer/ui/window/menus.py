"""The window's menus and toolbar, declared as data: one tuple of entries per menu.

A `Command` says what an action is (its text, keys, status tip, whether it is checkable) and what
it runs: `run(window)` (`run(window, checked)` for a checkable one), calling into the window's
controllers. `MainWindow` makes one QAction per command, reachable as `window.act_<key>`, and lays
the menus out from these tuples; an entry that is a string names an action made elsewhere
("undo", "redo": the undo stack's own; "logical": the Logical Fabric dock's toggle). Every command goes through action_guard (a failure is a
message box, never a traceback).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtGui import QKeySequence

SEPARATOR = "-"
OPEN_RECENT = "open recent"  # File > Open Recent: the submenu FileActions fills
OPEN_EXAMPLE = "open example"  # File > Open Example: the bundled examples, one action each
# View: the docks' show/hide actions, in this order (each QDockWidget's object name)
DOCKS = ("Parts", "Inspector", "Job", "Jobs", "Overview", "Breakdown", "Timeline", "Advisor")


@dataclass(frozen=True)
class Command:
    key: str  # window.act_<key>
    text: str
    run: Callable
    shortcut: object = None  # a key string, a QKeySequence.StandardKey, or a tuple of either
    tip: str | None = None
    checkable: bool = False
    checked: bool = False  # a checkable command's state at start
    about: bool = False  # macOS: goes to the application menu


@dataclass(frozen=True)
class Submenu:
    """A submenu of a menu: its title and its entries (Commands, separators)."""

    title: str
    entries: tuple


def _import(key: str) -> Callable:
    def run(window) -> None:
        window.imports.import_file(key)
    return run


def _import_menu() -> Submenu:
    """File > Import: one command per importer of `designer import` (core/io/importers/formats.py)."""
    from ...core.io.importers.formats import FORMATS

    return Submenu("&Import", tuple(
        Command(f"import_{f.key.replace('-', '_')}", f.title, _import(f.key), None,
                f"Read {f.what} (as `designer import {f.key}`), see what it held, then "
                + {"fabric": "open it as a new design", "servers": "apply it to the servers with as many GPUs",
                   "job": "set the current job"}[f.kind])
        for f in FORMATS))


def _help(kind: str) -> Callable:
    def run(window) -> None:
        from .help import open_dialog

        open_dialog(window, kind)
    return run


def _connect_selection(window) -> None:
    from ..document.connect_to_fabric import connect_selection

    connect_selection(window)


def _mark(state: str) -> Callable:
    def run(window) -> None:
        from ..document.mark_down import mark_selection

        mark_selection(window, state)
    return run


FILE_MENU = ("&File", (
    Command("new", "&New", lambda w: w.files.new(), QKeySequence.New),
    Command("open", "&Open...", lambda w: w.files.open_dialog(), QKeySequence.Open),
    OPEN_RECENT,
    OPEN_EXAMPLE,
    _import_menu(),
    Command("compare", "Co&mpare With...", lambda w: w.tools.compare_with(), None,
            "This design beside another file: figures, cost and both breakdowns"),
    Command("calibrate", "Cali&brate from nccl-tests...", lambda w: w.tools.calibrate_from_logs(), None,
            "Fit the link efficiencies to measured nccl-tests logs; applied as one undo step"),
    SEPARATOR,
    Command("save", "&Save", lambda w: w.files.save(), QKeySequence.Save),
    Command("save_as", "Save &As...", lambda w: w.files.save_as(), QKeySequence.SaveAs),
    Command("export", "&Export Canvas...", lambda w: w.exports.canvas(), "Ctrl+E",
            "PNG (2x), SVG or PDF (the drawing's size, A4 or Letter)"),
    Command("export_breakdown", "Export &Breakdown Plot...", lambda w: w.exports.panel("breakdown"), None,
            "The step breakdown as PNG (2x), SVG, PDF or the CSV of its figures"),
    Command("export_timeline", "Export T&imeline Plot...", lambda w: w.exports.panel("timeline"), None,
            "The Gantt timeline as PNG (2x), SVG, PDF or the CSV of its events"),
    Command("trace", "Export &Trace (Perfetto)...", lambda w: w.exports.trace(), None,
            "The predicted step as a Chrome/Perfetto trace (open it in ui.perfetto.dev)"),
    Command("report", "&Report (PDF)...", lambda w: w.exports.report(), "Ctrl+R",
            "A design-review PDF: cluster, job, breakdown, memory, bottlenecks, calibration"),
    SEPARATOR,
    Command("quit", "&Quit", lambda w: w.close(), QKeySequence.Quit),
))

EDIT_MENU = ("&Edit", (
    "undo", "redo",
    SEPARATOR,
    Command("cut", "Cu&t", lambda w: w.edits.cut(), QKeySequence.Cut),
    Command("copy", "&Copy", lambda w: w.edits.copy(), QKeySequence.Copy),
    Command("paste", "&Paste", lambda w: w.edits.paste(), QKeySequence.Paste),
    Command("duplicate", "&Duplicate", lambda w: w.edits.duplicate(1), "Ctrl+D", "Copy the selection beside itself"),
    Command("duplicate_many", "Duplicate &Many...", lambda w: w.edits.duplicate_many(), "Ctrl+Shift+D",
            "Copies of the selection in a row, cables between them included"),
    Command("connect", "Connect to &Fabric", _connect_selection, None,
            "Cable the selected server(s), or the uncabled servers of the selected racks, to their rail leaves "
            "like the servers around them (free ports chosen)"),
    Command("mark_down", "Mark &Down", _mark("down"), None,
            "Mark the selected servers, switches or cables down: out of service, traffic and jobs go around them"),
    Command("mark_up", "Mark &Up", _mark("up"), None, "Mark the selected servers, switches or cables up again"),
    Command("delete", "De&lete", lambda w: w.edits.delete_selection(), QKeySequence.Delete),
    SEPARATOR,
    Command("select_all", "Select &All", lambda w: w.edits.select_all(), QKeySequence.SelectAll),
    Command("find", "&Find...", lambda w: w.edits.find(), QKeySequence.Find),
))

VIEW_MENU = ("&View", (
    Command("fit", "&Fit", lambda w: w.view.fit(), "F"),
    Command("zoom_in", "Zoom &In", lambda w: w.view.zoom_by(1.25), QKeySequence.ZoomIn),
    Command("zoom_out", "Zoom &Out", lambda w: w.view.zoom_by(0.8), QKeySequence.ZoomOut),
    SEPARATOR,
    Command("grid", "&Grid", lambda w, on: w.view.set_grid(on), "Ctrl+'", checkable=True, checked=True),
    Command("snap", "&Snap to Grid", lambda w, on: w.edits.set_snap(on), checkable=True, checked=True),
    # Off until the user turns it on (red and green read as cable kinds to a newcomer); remembered.
    Command("heat", "Link &Heat", lambda w, on: w.results.toggle_heat(on), "Ctrl+H",
            "Colour cables by their use in the last evaluation; outline the bottlenecks", checkable=True),
    Command("heat_phase", "Heat by Busiest &Phase", lambda w, on: w.results.set_heat_by_phase(on), None,
            "Link heat: colour a cable by its busiest phase (traffic kind) instead of its share of the step",
            checkable=True),
    "logical",  # the Logical Fabric dock's own toggle (logical/install.py)
    SEPARATOR,
    DOCKS,
    SEPARATOR,
    Command("reset_layout", "&Reset Layout", lambda w: w.layout_memory.reset(), None,
            "Every panel back where a first run puts it: the canvas in the middle with the most space"),
))

TOOLS_MENU = ("&Tools", (
    Command("generate", "&Generate Fat-Tree...", lambda w: w.tools.generate(), "Ctrl+G",
            "A whole fabric from a few numbers; undoable as one step"),
    Command("costs", "&Parts and Costs...", lambda w: w.tools.parts_and_costs(), None,
            "Prices, power and failure rates of the design's parts, editable (one undo step each), with the cost "
            "and goodput they give"),
    Command("decide", "Compare &Clusters for a Model...", lambda w: w.tools.compare_clusters(), None,
            "The open design's job on other designs, each at its best plan: time, dollars and goodput per run"),
))

HELP_MENU = ("&Help", (
    Command("quick_guide", "&Quick Guide", _help("guide"), QKeySequence.HelpContents,
            "How to draw, generate, read the results and export"),
    Command("shortcuts", "&Keyboard Shortcuts", _help("shortcuts"), "Ctrl+/", "Every shortcut of the window's commands"),
    SEPARATOR,
    Command("about", "&About Designer", _help("about"), None, "Version, Qt, and where the catalog's figures come from",
            about=True),
))

MENUS = (FILE_MENU, EDIT_MENU, VIEW_MENU, TOOLS_MENU, HELP_MENU)
TOOLBAR = ("new", "open", "save", SEPARATOR, "undo", "redo", SEPARATOR, "fit", "generate")
