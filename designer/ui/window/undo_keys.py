"""Ctrl+Z / Ctrl+Shift+Z undo and redo the document from any field of the main window.

A focused QLineEdit (and the line edit inside a spin box or an editable combo box) claims the
undo and redo keys for its own text history through a ShortcutOverride event, whether or not it
has anything to undo, so the window's Undo action never fired while the focus was in a Job or
Inspector field. This filter lets a field keep the keys only while it holds uncommitted typing
(its own history is not empty: a committed value is written back with setText, which clears it);
otherwise the override is refused and the keys reach the window's Undo/Redo actions.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QComboBox, QLineEdit, QPlainTextEdit, QTextEdit, QWidget


class DocumentUndoKeys(QObject):
    """One per window (its child). It filters only the widget that has the focus, and only while it
    has it: an application-wide filter would run Python for every event of the application."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.window = window
        QApplication.instance().focusChanged.connect(self._follow_focus)

    def _follow_focus(self, old: QWidget | None, new: QWidget | None) -> None:
        if old is not None:
            old.removeEventFilter(self)
        if new is not None and self._inside(new):
            new.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if event.type() != QEvent.ShortcutOverride:
            return False
        undo = event.matches(QKeySequence.Undo)
        if not (undo or event.matches(QKeySequence.Redo)):
            return False
        if not isinstance(obj, QWidget) or not self._inside(obj):
            return False
        if _has_own_history(obj, undo):
            return False  # uncommitted typing: the field's own text undo comes first
        event.ignore()  # not overridden: the shortcut map gives the keys to the document's actions
        return True

    def _inside(self, widget: QWidget) -> bool:
        """In the window, a dock of it (floating ones too) or a dialog it owns."""
        while widget is not None:
            if widget is self.window:
                return True
            widget = widget.parentWidget()
        return False


def _has_own_history(widget: QWidget, undo: bool) -> bool:
    if isinstance(widget, (QAbstractSpinBox, QComboBox)):
        widget = widget.findChild(QLineEdit)
    if isinstance(widget, QLineEdit):
        return not widget.isReadOnly() and (widget.isUndoAvailable() if undo else widget.isRedoAvailable())
    if isinstance(widget, (QTextEdit, QPlainTextEdit)):
        document = widget.document()
        return not widget.isReadOnly() and (document.isUndoAvailable() if undo else document.isRedoAvailable())
    return False
