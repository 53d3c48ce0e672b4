"""Mark Down / Mark Up: a server, switch or cable out of service (`state: down`), as one undo step.

Edit > Mark Down and Mark Up act on the selection; the canvas's right-click menu offers them on
the server, switch or cable under the mouse (selecting it first, as Connect to Fabric does). The
engine routes around what is down and the placer gives no job a server that is down; the canvas
greys it out under a red cross (canvas/job_colors.py).
"""
from __future__ import annotations

from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QMenu

from . import commands
from ..canvas.items import ID_ROLE

STATEFUL = ("nodes", "switches", "links")


def follow_selection(window) -> None:
    """Edit > Mark Down / Mark Up (menus.py) enabled for what the selection holds."""
    window.scene.selectionChanged.connect(lambda: update_actions(window))
    window.qdoc.changed.connect(lambda _c: update_actions(window))
    window.qdoc.replaced.connect(lambda: update_actions(window))
    update_actions(window)


def _stateful(window, ids) -> list:
    doc = window.qdoc.doc
    out = []
    for element_id in dict.fromkeys(ids):
        for collection in STATEFUL:
            element = doc.find(collection, element_id)
            if element is not None:
                out.append(element)
                break
    return out


def update_actions(window) -> None:
    """Mark Down when something selected is up, Mark Up when something selected is down."""
    try:
        elements = _stateful(window, window.scene.selected_ids())
    except RuntimeError:  # the window is closing: its scene is gone
        return
    window.act_mark_down.setEnabled(any(e.state != "down" for e in elements))
    window.act_mark_up.setEnabled(any(e.state == "down" for e in elements))


def mark_selection(window, state: str) -> list[str]:
    """Set `state` on every selected server, switch and cable not in it yet: one undo step.
    Returns the ids changed."""
    elements = [e for e in _stateful(window, window.scene.selected_ids()) if e.state != state]
    if not elements:
        other = "up" if state == "down" else "down"
        window.tell(f"Mark {state.title()}: select a server, switch or cable that is {other}")
        return []
    ids = [e.id for e in elements]
    what = ids[0] if len(ids) == 1 else f"{len(ids)} elements"
    window.qdoc.push(commands.SetFields(window.qdoc, {i: {"state": state} for i in ids}, f"Mark {what} {state}"))
    window.tell(f"marked {what} {state}")
    return ids


def add_state_actions(window, menu: QMenu) -> None:
    """Mark Down / Mark Up at the end of a canvas menu (for the selection it was opened on)."""
    update_actions(window)
    menu.addSeparator()
    menu.addAction(window.act_mark_down)
    menu.addAction(window.act_mark_up)


def state_menu(window, pos: QPoint) -> QMenu | None:
    """The menu for a right-click on a switch or a cable (viewport coordinates `pos`): the element
    is selected unless it is already, and Mark Down / Up offered. None elsewhere."""
    scene = window.scene
    scene_pos = window.view.mapToScene(pos)
    item = scene.gestures.item_at(scene_pos, ("switch",))
    if item is not None:
        if not item.isSelected():
            scene.select_ids([item.data(ID_ROLE)])
    else:
        layer = scene.link_layer
        row = layer.row_at(scene_pos, scene.gestures.tolerance()) if layer.show_individual else None
        if row is None:
            return None
        if row not in layer.selected:
            scene.clearSelection()
            layer.selected = {row}
            layer.update()
            scene.selectionChanged.emit()
    menu = QMenu(window.view)
    add_state_actions(window, menu)
    menu.actions()[0].setVisible(False)  # no separator above the first entry
    return menu
