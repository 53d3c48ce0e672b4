"""Connect to Fabric in the window: a duplicated server is cabled by the Edit menu's action or the
canvas's right-click menu, as one undo step; a full leaf is refused in the status bar."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication, QMenu

from designer.core.generate import generate_fat_tree
from designer.core.io import save_document
from designer.core.model.elements import split_endpoint


@pytest.fixture
def open_fat_tree(empty_window, tmp_path):
    def open_(nodes: int):
        path = tmp_path / f"fat-tree-{nodes}.yaml"
        save_document(generate_fat_tree(nodes=nodes, gpu="H100"), path)
        empty_window.open_file(str(path))
        empty_window.settle()
        return empty_window
    return open_


def _nic_leaves(doc, node_id: str) -> list[str]:
    ends = {}
    for link in doc.links:
        (a, port), (b, _) = split_endpoint(link.a), split_endpoint(link.b)
        if a == node_id and port and port.startswith("nic"):
            ends[int(port[3:])] = b
    return [ends[k] for k in sorted(ends)]


def _duplicate(window, node_id: str) -> str:
    window.scene.select_ids([node_id])
    window.act_duplicate.trigger()
    (copy,) = window.scene.selected_ids()
    assert window.qdoc.doc.links_of(copy) == []  # Duplicate copies a lone server without cables
    return copy


def test_connect_cables_the_duplicate_and_one_undo_removes_every_cable(open_fat_tree):
    window = open_fat_tree(15)
    doc = window.qdoc.doc
    links_before = len(doc.links)
    copy = _duplicate(window, "node13")
    steps = window.qdoc.undo_stack.count()

    assert window.act_connect in window.menuBar().actions()[1].menu().actions()  # Edit menu
    window.act_connect.trigger()
    assert len(doc.links) == links_before + 8
    assert _nic_leaves(doc, copy) == _nic_leaves(doc, "node13")
    assert window.qdoc.undo_stack.count() == steps + 1
    assert f"connected {copy}: 8 NIC cable(s)" in window.statusBar().currentMessage()
    window.settle()
    assert not [p for p in window.problems if p.severity == "error"]

    window.act_undo.trigger()
    assert len(doc.links) == links_before and doc.find("nodes", copy) is not None
    window.act_redo.trigger()
    assert len(doc.links) == links_before + 8


# a popup menu on the offscreen platform: the plugin's own limits, not the app's
@pytest.mark.qt_log_ignore("This plugin does not support raise", "This plugin does not support grabbing the keyboard")
def test_right_click_on_a_server_offers_connect(open_fat_tree):
    window = open_fat_tree(15)
    copy = _duplicate(window, "node13")
    window.scene.clearSelection()
    item = window.scene.devices[copy]
    window.view.centerOn(item)
    QApplication.processEvents()
    pos = window.view.mapFromScene(item.sceneBoundingRect().center())
    event = QContextMenuEvent(QContextMenuEvent.Mouse, pos, window.view.viewport().mapToGlobal(pos))
    QApplication.sendEvent(window.view.viewport(), event)
    menu = next(m for m in window.view.findChildren(QMenu) if m.isVisible())
    assert window.act_connect in menu.actions()
    assert window.scene.selected_ids() == [copy]  # the right-clicked server is the one connected
    window.act_connect.trigger()
    menu.close()
    assert len(_nic_leaves(window.qdoc.doc, copy)) == 8
    # on empty canvas: no menu
    from designer.ui.document.connect_to_fabric import canvas_menu

    corner = window.view.mapFromScene(window.scene.itemsBoundingRect().topLeft()) - QPoint(40, 40)
    assert canvas_menu(window, corner) is None


def test_a_full_leaf_is_refused_in_the_status_bar_and_nothing_changes(open_fat_tree):
    window = open_fat_tree(32)  # 32 servers fill every radix-64 leaf at 1:1
    doc = window.qdoc.doc
    _duplicate(window, "node3")
    links, steps = len(doc.links), window.qdoc.undo_stack.count()
    window.act_connect.trigger()
    message = window.statusBar().currentMessage()
    assert "leaf0" in message and "is full (64 of 64 ports in use)" in message, message
    assert "add a leaf or free a port on leaf0" in message
    assert len(doc.links) == links and window.qdoc.undo_stack.count() == steps


def test_nothing_selected_says_what_to_do(open_fat_tree):
    window = open_fat_tree(15)
    window.scene.clearSelection()
    window.act_connect.trigger()
    assert "select a server first" in window.statusBar().currentMessage()


def test_a_duplicated_rack_is_connected_server_by_server_in_one_step(open_fat_tree):
    window = open_fat_tree(15)
    doc = window.qdoc.doc
    window.scene.select_ids(["rack3"])  # node12..node14
    window.act_duplicate.trigger()
    (rack,) = [i for i in window.scene.selected_ids() if doc.find("racks", i) is not None]
    servers = [n.id for n in doc.nodes if n.rack == rack]
    assert len(servers) == 3
    window.scene.select_ids([rack])  # the rack alone: its servers without cables are the ones connected
    links, steps = len(doc.links), window.qdoc.undo_stack.count()
    window.act_connect.trigger()
    assert len(doc.links) == links + 24 and window.qdoc.undo_stack.count() == steps + 1
    assert {tuple(_nic_leaves(doc, s)) for s in servers} == {tuple(_nic_leaves(doc, "node12"))}
    ports = [link.b for link in doc.links[links:]]
    assert len(set(ports)) == 24  # each server on ports of its own
    window.settle()
    assert not [p for p in window.problems if p.severity == "error"]
    window.act_undo.trigger()
    assert len(doc.links) == links
