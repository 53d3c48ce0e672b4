"""The mouse wheel scrolls forms; it never edits a field the user has not clicked into.

Qt gives combo boxes and spin boxes the wheel focus and lets the wheel step their value, so
scrolling down a long form (the Job panel) over `swiglu` or the pipeline schedule silently edited
the job (and made an undo step). `guard_wheel(panel)` gives every such field of the panel a
click/tab-only focus (Qt.StrongFocus: the wheel no longer focuses it) and a filter that hands a
wheel event over an unfocused field to the scroll area around it, so the form scrolls instead.
Once the user clicks (or tabs) into the field, the wheel steps it as usual.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QAbstractScrollArea, QAbstractSpinBox, QApplication, QComboBox, QWidget

GUARDED = (QComboBox, QAbstractSpinBox)  # the value-stepping fields (QSpinBox, QDoubleSpinBox, ...)


class WheelGuard(QObject):
    """One per panel (its child), installed on each value-stepping field of the panel."""

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if event.type() != QEvent.Wheel or not isinstance(obj, GUARDED) or obj.hasFocus():
            return False
        area = _scroll_area_around(obj)
        if area is None:
            event.ignore()  # a real wheel event then goes on to the field's parents
            return True
        viewport = area.viewport()
        forwarded = QWheelEvent(viewport.mapFromGlobal(event.globalPosition()), event.globalPosition(),
                                event.pixelDelta(), event.angleDelta(),
                                event.buttons(), event.modifiers(), event.phase(), event.inverted())
        QApplication.sendEvent(viewport, forwarded)
        event.accept()
        return True


def guard_wheel(panel: QWidget) -> WheelGuard:
    """Guard every combo box and spin box now inside `panel`; call again after adding fields."""
    guard = panel.findChild(WheelGuard, "wheel-guard", Qt.FindDirectChildrenOnly)
    if guard is None:
        guard = WheelGuard(panel)
        guard.setObjectName("wheel-guard")
    fields = [panel] if isinstance(panel, GUARDED) else []
    for field in fields + [w for w in panel.findChildren(QWidget) if isinstance(w, GUARDED)]:
        if field.property("wheelGuarded"):
            continue
        field.setFocusPolicy(Qt.StrongFocus)  # not Qt.WheelFocus: the wheel alone never focuses it
        field.installEventFilter(guard)
        field.setProperty("wheelGuarded", True)
    return guard


def _scroll_area_around(widget: QWidget) -> QAbstractScrollArea | None:
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QAbstractScrollArea):
            return parent
        parent = parent.parentWidget()
    return None
