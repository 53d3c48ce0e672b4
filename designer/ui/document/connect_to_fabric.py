"""Connect to Fabric in the app: Edit > Connect to Fabric (menus.py) and the canvas's right-click menu.

The selected servers are cabled to their rail leaves the way their neighbours are
(designer/core/model/auto_cable.py) as ONE undo step; a refusal (a full leaf, nothing to follow)
goes to the status bar with the leaf's name and the fix, and nothing changes.
"""
from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QMenu

from ...core.model.auto_cable import CablingRefused, plan_connection
from ...core.model.elements import split_endpoint
from . import commands
from ..canvas.items import ID_ROLE

def enable_canvas_menu(window) -> None:
    """The canvas's right-click menu: Connect to Fabric on a server, Mark Down / Up on a switch or cable."""
    view = window.view
    view.setContextMenuPolicy(Qt.CustomContextMenu)
    view.customContextMenuRequested.connect(lambda pos: _popup(window, pos))


def servers_to_connect(window) -> list[str]:
    """The selected servers, and the servers without cables of the selected racks (a duplicated rack)."""
    doc = window.qdoc.doc
    selected = window.scene.selected_ids()
    servers = [i for i in selected if doc.find("nodes", i) is not None]
    racks = {i for i in selected if doc.find("racks", i) is not None}
    if racks:
        chosen = set(servers)
        cabled = {split_endpoint(end)[0] for link in doc.links for end in (link.a, link.b)}
        servers += [n.id for n in doc.nodes if n.rack in racks and n.id not in chosen and n.id not in cabled]
    return servers


def connect_selection(window) -> list[str]:
    """Cable every selected server; returns the ids of the new links (one undo step for all)."""
    servers = servers_to_connect(window)
    if not servers:
        window.tell("Connect to Fabric: select a server first (one without cables, e.g. a duplicate)")
        return []
    qdoc = window.qdoc
    stack = qdoc.undo_stack
    new_ids: list[str] = []
    done: list[str] = []
    refusals: list[str] = []
    summary = ""
    started = False
    for node_id in servers:
        try:
            cabling = plan_connection(qdoc.doc, node_id)  # sees the cables of the servers before it
        except CablingRefused as exc:
            refusals.append(f"{node_id}: {exc}" if len(servers) > 1 else str(exc))
            continue
        if len(servers) > 1 and not started:
            stack.beginMacro(f"Connect {len(servers)} servers to fabric")
            started = True
        qdoc.push(commands.AddElements(qdoc, cabling.links, f"Connect {node_id} to fabric"))
        new_ids += [link.id for link in cabling.links]
        done.append(node_id)
        summary = cabling.summary()
    if started:
        stack.endMacro()
    if refusals:
        head = f"connected {', '.join(done)}; not " if done else "Not connected: "
        window.tell(head + "; ".join(refusals))
    elif len(done) == 1:
        window.tell(f"connected {summary}")
    else:
        window.tell(f"connected {len(done)} servers ({len(new_ids)} cables)")
    return new_ids


def canvas_menu(window, pos: QPoint) -> QMenu | None:
    """The menu for a right-click at `pos` (viewport coordinates): on a server, that server is
    selected (unless it already is) and Connect to Fabric is offered; elsewhere no menu."""
    scene_pos = window.view.mapToScene(pos)
    item = window.scene.gestures.item_at(scene_pos, ("node",))
    if item is None:
        from .mark_down import state_menu

        return state_menu(window, pos)  # a switch or a cable: Mark Down / Up (mark_down.py)
    if not item.isSelected():
        window.scene.select_ids([item.data(ID_ROLE)])
    menu = QMenu(window.view)
    menu.addAction(window.act_connect)
    menu.addSeparator()
    for act in (window.act_duplicate, window.act_delete):
        menu.addAction(act)
    from .mark_down import add_state_actions

    add_state_actions(window, menu)
    return menu


def _popup(window, pos: QPoint) -> None:
    menu = canvas_menu(window, pos)
    if menu is not None:
        menu.setAttribute(Qt.WA_DeleteOnClose)
        menu.popup(window.view.viewport().mapToGlobal(pos))
