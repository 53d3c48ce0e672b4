"""The open design as seen by Qt: the core Document, its undo stack, its file and dirty state.

The core announces changes without Qt; this object re-emits them as a Qt signal so that the
canvas, the inspector and the status bar mirror the document. Every edit is a QUndoCommand
pushed here (designer/ui/commands.py); nothing else mutates the document.
"""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoStack

from ..core.io import dumps_document, load_document, save_document
from ..core.model import Document
from ..core.model.events import Change


class QtDocument(QObject):
    changed = Signal(list)  # list[Change]
    replaced = Signal()  # the whole document changed (open, new, generate, undo of those)
    pathChanged = Signal(str)
    dirtyChanged = Signal(bool)

    def __init__(self, doc: Document | None = None, path: str | None = None, parent=None):
        super().__init__(parent)
        self.undo_stack = QUndoStack(self)
        self.undo_stack.cleanChanged.connect(self._clean_changed)  # a slot: disconnected when this goes
        self.doc = doc or Document()
        self.path = path
        self.doc.events.connect(self._forward)

    def _clean_changed(self, clean: bool) -> None:
        self.dirtyChanged.emit(not clean)

    def _forward(self, changes: list[Change]) -> None:
        if any(c.collection == "document" for c in changes):
            self.replaced.emit()
        else:
            self.changed.emit(changes)

    # ---- files ----
    @property
    def dirty(self) -> bool:
        return not self.undo_stack.isClean()

    @property
    def name(self) -> str:
        return Path(self.path).name if self.path else "untitled"

    def open(self, path: str) -> None:
        """Load a file; on any error nothing changes (the exception says why)."""
        new = load_document(path)
        self.doc.replace_all(new, adopt=True)
        self.undo_stack.clear()
        self.path = str(path)
        self.pathChanged.emit(self.path)
        self.dirtyChanged.emit(False)

    def new(self) -> None:
        self.doc.replace_all(Document())
        self.undo_stack.clear()
        self.path = None
        self.pathChanged.emit("")
        self.dirtyChanged.emit(False)

    def save(self, path: str | None = None) -> None:
        target = path or self.path
        if not target:
            raise ValueError("no file name")
        save_document(self.doc, target)
        if target != self.path:
            self.path = str(target)
            self.pathChanged.emit(self.path)
        self.undo_stack.setClean()

    def text(self) -> str:
        return dumps_document(self.doc)

    def push(self, command) -> None:
        self.undo_stack.push(command)
