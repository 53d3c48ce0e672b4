"""The open design as seen by Qt: the core Document, its undo stack, its file and dirty state.

The core announces changes without Qt; this object re-emits them as a Qt signal so that the
canvas, the inspector and the status bar mirror the document. Every edit is a QUndoCommand
pushed here (designer/ui/document/commands.py); nothing else mutates the document.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoStack

from ...core.io import dumps_document, load_document, save_document
from ...core.io.bundled import example_title, file_name_for, is_bundled
from ...core.problems import DesignerError, Problem
from ...core.model import Document
from ...core.model.events import Change
from . import frozen_design


# Undo keeps the last UNDO_LIMIT steps. A step that replaces the whole design (generate, recovery,
# calibration) keeps the other design, shared and not copied; the elements those steps keep are
# bounded by UNDO_KEPT_ELEMENTS (~1 KB each: a 16,384-GPU fat-tree is 40k elements, 131,072 GPUs
# 330k), and a step that would pass it drops the undo history before it (the window says so).
UNDO_LIMIT = 200
UNDO_KEPT_ELEMENTS = 400_000


class QtDocument(QObject):
    # An edit's changes by kind, in this order (containers before what they hold), each only when the
    # edit has some; then `changed` with all of them (the canvas mirrors each kind in its own handler).
    racksChanged = Signal(list)  # list[Change] of racks
    devicesChanged = Signal(list)  # of servers ("nodes") and switches
    linksChanged = Signal(list)
    layoutChanged = Signal(list)  # where boxes outside racks sit
    changed = Signal(list)  # list[Change]
    historyDropped = Signal(str)  # why the undo history was emptied (memory bound)
    replaced = Signal()  # the whole document changed (open, new, generate, undo of those)
    pathChanged = Signal(str)
    dirtyChanged = Signal(bool)

    def __init__(self, doc: Document | None = None, path: str | None = None, parent=None):
        super().__init__(parent)
        self.undo_stack = QUndoStack(self)
        self.undo_stack.setUndoLimit(UNDO_LIMIT)  # Qt drops the oldest steps past it
        self.undo_stack.cleanChanged.connect(self._clean_changed)  # a slot: disconnected when this goes
        self.doc = doc or Document()
        self.path = path
        self.untitled_name: str | None = None  # the title of a document with no file (an example's copy)
        self.doc.events.connect(self._forward)

    def _clean_changed(self, clean: bool) -> None:
        self.dirtyChanged.emit(not clean)

    def _forward(self, changes: list[Change]) -> None:
        if any(c.collection == "document" for c in changes):
            self.replaced.emit()
            return
        for signal, kinds in ((self.racksChanged, ("racks",)), (self.devicesChanged, ("nodes", "switches")),
                              (self.linksChanged, ("links",)), (self.layoutChanged, ("layout",))):
            mine = [c for c in changes if c.collection in kinds]
            if mine:
                signal.emit(mine)
        self.changed.emit(changes)

    # ---- files ----
    @property
    def dirty(self) -> bool:
        return not self.undo_stack.isClean()

    @property
    def name(self) -> str:
        return Path(self.path).name if self.path else (self.untitled_name or "untitled")

    @property
    def identity(self) -> tuple[str | None, str | None]:
        """(file path, untitled title): what `set_identity` restores (undo of a generate)."""
        return self.path, self.untitled_name

    def set_identity(self, path: str | None, untitled_name: str | None = None) -> None:
        """Tie the document to a file, or make it untitled under a title (no file until Save As)."""
        self.path = str(path) if path else None
        self.untitled_name = None if path else untitled_name
        self.pathChanged.emit(self.path or "")

    def suggested_file_name(self) -> str:
        """What a Save dialog proposes: the file's own name, else one made from the title."""
        return Path(self.path).name if self.path else file_name_for(self.name)

    def open(self, path: str) -> None:
        """Load a file; on any error nothing changes (the exception says why).

        A file shipped with Designer (an example) opens as an untitled copy, so that saving it
        asks where to and never writes over the installed example."""
        self.take(load_document(path), path)

    def take(self, new: Document, path: str) -> None:
        """Make `new` (just read from `path`, off the UI thread maybe) the open design, with no history."""
        self._replace(lambda: self.doc.replace_all(new, adopt=True), clear_history=True)
        if is_bundled(path):
            self.set_identity(None, example_title(path))
        else:
            self.set_identity(path)
        self.dirtyChanged.emit(False)

    @staticmethod
    def keep_read_design_out_of_collections() -> None:
        """A big design just read (off the UI thread, the collector still paused), before it replaces
        the shown one: out of the collector's walks (frozen_design.py)."""
        frozen_design.keep_out_of_collections(shown=False)

    def keep_shown_design_out_of_collections(self) -> None:
        """The big design shown, and its canvas items made so far: out of the collector's walks until
        it is replaced (frozen_design.py)."""
        frozen_design.keep_out_of_collections()

    def new(self) -> None:
        self._replace(lambda: self.doc.replace_all(Document()), clear_history=True)
        self.set_identity(None)
        self.dirtyChanged.emit(False)

    def exchange(self, spec, metadata):
        """Swap the design's contents with `spec` and `metadata` (undo and redo of a replaced design:
        commands.ReplaceDocument); the ones set aside."""
        return self._replace(lambda: self.doc.exchange(spec, metadata), clear_history=False)

    def _replace(self, swap, clear_history: bool):
        """Every replacement of the shown design goes through here. The design set aside may be dropped
        later, so what was kept out of the collector's walks goes back under it now, at this user action
        (frozen_design.py: release)."""
        out = swap()
        if clear_history:
            self.undo_stack.clear()
        frozen_design.release()
        return out

    def save(self, path: str | None = None) -> None:
        """Write the design to `path` (default: its file). DesignerError, nothing written, when the
        target is inside Designer's installed files or the design holds a NaN or an infinity
        (the loader would refuse the file); OSError when the system refuses the write."""
        target = path or self.path
        if not target:
            raise ValueError("no file name")
        if is_bundled(target):
            raise DesignerError([Problem(
                "this file is part of Designer's installed files, which are never written",
                file=str(target), fix="use File > Save As... to save a copy in another folder")])
        from ...core.model.non_finite import non_finite_problems

        bad = non_finite_problems(self.doc)
        if bad:
            raise DesignerError(bad)
        save_document(self.doc, target)
        if target != self.path:
            self.set_identity(target)
        self.undo_stack.setClean()

    def text(self) -> str:
        return dumps_document(self.doc)

    def push(self, command) -> None:
        # a step that replaces the design keeps the one shown now
        kept = sum(len(getattr(self.doc.spec, k)) for k in ("racks", "nodes", "switches", "links")) \
            if hasattr(command, "kept_elements") else 0
        if kept and self.kept_elements() + kept > UNDO_KEPT_ELEMENTS:
            self.undo_stack.clear()  # the designs the history keeps would pass the memory bound
            self.historyDropped.emit(f"undo history cleared: it would keep more than {UNDO_KEPT_ELEMENTS:,} "
                                     "elements of replaced designs")
        self.undo_stack.push(command)

    def kept_elements(self) -> int:
        """Elements of whole designs the undo history keeps (a generate keeps the one it replaced)."""
        stack = self.undo_stack
        return sum(getattr(stack.command(i), "kept_elements", 0) for i in range(stack.count()))
