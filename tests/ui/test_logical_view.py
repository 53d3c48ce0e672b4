"""View > Logical Fabric View: a second live view of the document beside the rack canvas. It
mirrors every edit (add, delete, undo), shares the canvas's selection (and so the Inspector's),
and a delete made in it is the canvas's own undo step."""
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from designer.core.generate.fat_tree import generate_fat_tree
from designer.core.io import save_document
from designer.core.model import Link, Node
from designer.ui.document import commands


def _open(window, tmp_path, servers=8, qtbot=None):
    path = tmp_path / "fabric.yaml"
    save_document(generate_fat_tree(servers, "H100"), path)
    window.open_file(str(path))
    window.act_logical.trigger()  # View > Logical Fabric View
    assert window.logical_dock.isVisible()
    view = window.logical_view
    if qtbot is not None:  # the dock takes most of the room beside the side panels, once laid out
        qtbot.waitUntil(lambda: view.width() > 300, timeout=3000)
    return view


def _block_point(view, element_id) -> QPoint:
    layout = view.layout_model
    block = layout.blocks[layout.block_of[element_id]]
    return view.mapFromScene(*block.center)


def _labels(view) -> set[str]:
    return {b.label for b in view.layout_model.blocks}


def _wait_rebuilt(qtbot, view):
    qtbot.waitUntil(lambda: not view.is_stale(), timeout=5000)


def test_the_menu_opens_a_view_of_tiers_with_ratios(empty_window, qtbot, tmp_path):
    view = _open(empty_window, tmp_path, qtbot=qtbot)
    assert view.layout_model.tiers == ["spine", "leaf", "compute"]
    assert _labels(view) >= {"spine0", "leaf0", "node7"}
    assert view.layout_model.ratios["leaf"].label == "leaf -> spine 1:1"
    assert view.width() > empty_window.view.width()  # wider than the canvas beside it
    assert not view.grab().isNull()  # it draws (no exception from paint)
    empty_window.act_logical.trigger()
    assert not empty_window.logical_dock.isVisible()


def test_a_click_in_the_logical_view_selects_on_the_canvas_and_in_the_inspector(empty_window, qtbot, tmp_path):
    window = empty_window
    view = _open(window, tmp_path)
    QTest.mouseClick(view.viewport(), Qt.LeftButton, Qt.NoModifier, _block_point(view, "leaf2"))
    assert window.scene.selected_ids() == ["leaf2"]
    assert window.inspector.ids == ["leaf2"]
    assert view.selected_blocks() == [view.layout_model.block_of["leaf2"]]
    # Ctrl+click adds a server
    QTest.mouseClick(view.viewport(), Qt.LeftButton, Qt.ControlModifier, _block_point(view, "node5"))
    assert sorted(window.scene.selected_ids()) == ["leaf2", "node5"]
    assert sorted(window.inspector.ids) == ["leaf2", "node5"]
    # a click on empty ground clears the shared selection
    QTest.mouseClick(view.viewport(), Qt.LeftButton, Qt.NoModifier, QPoint(view.viewport().width() - 3, 3))
    assert window.scene.selected_ids() == [] and view.selected_blocks() == []


def test_a_click_on_a_bundle_selects_its_cables(empty_window, tmp_path):
    window = empty_window
    view = _open(window, tmp_path)
    layout = view.layout_model
    k = next(i for i, b in enumerate(layout.bundles)
             if {layout.blocks[b.upper].label, layout.blocks[b.lower].label} == {"spine0", "leaf4"})
    a, b = view.bundle_layer.a[k], view.bundle_layer.b[k]
    middle = view.mapFromScene((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
    QTest.mouseClick(view.viewport(), Qt.LeftButton, Qt.NoModifier, middle)
    assert sorted(window.scene.selected_ids()) == sorted(layout.bundle_link_ids(layout.bundles[k]))
    assert view.selected_bundles() == [k]


def test_a_selection_on_the_canvas_shows_in_the_logical_view(empty_window, tmp_path):
    window = empty_window
    view = _open(window, tmp_path)
    window.edits.find_element("node3")  # Edit > Find picks it on the canvas
    assert window.scene.selected_ids() == ["node3"]
    assert view.selected_blocks() == [view.layout_model.block_of["node3"]]
    rack = window.qdoc.doc.find("nodes", "node3").rack
    window.scene.select_ids([rack])  # a rack: the blocks of what it holds
    held = {n.id for n in window.qdoc.doc.nodes if n.rack == rack}
    assert {view.layout_model.blocks[i].label for i in view.selected_blocks()} == held


def test_delete_in_the_logical_view_is_one_undo_step(empty_window, qtbot, tmp_path):
    window = empty_window
    view = _open(window, tmp_path)
    doc = window.qdoc.doc
    links_before = len(doc.links)
    steps = window.qdoc.undo_stack.count()
    QTest.mouseClick(view.viewport(), Qt.LeftButton, Qt.NoModifier, _block_point(view, "leaf3"))
    view.setFocus()
    QTest.keyClick(view, Qt.Key_Delete)
    assert doc.find("switches", "leaf3") is None
    assert window.qdoc.undo_stack.count() == steps + 1
    assert len(doc.links) < links_before  # its cables went with it
    _wait_rebuilt(qtbot, view)
    assert "leaf3" not in _labels(view)
    window.act_undo.trigger()
    assert doc.find("switches", "leaf3") is not None and len(doc.links) == links_before
    _wait_rebuilt(qtbot, view)
    assert "leaf3" in _labels(view)
    assert sum(b.cables for b in view.layout_model.bundles) == sum(l.count for l in doc.links)


def test_a_server_added_through_the_undo_stack_appears_and_goes_with_undo(empty_window, qtbot, tmp_path):
    window = empty_window
    view = _open(window, tmp_path)
    server = Node(id="node8", accelerator="H100-SXM5-80GB", nic_count=1)
    cable = Link(id="extra", a="node8:nic0", b="leaf0:p40", kind="infiniband", bandwidth_gbps=400)
    window.qdoc.push(commands.AddElements(window.qdoc, [server, cable], "Add server"))
    _wait_rebuilt(qtbot, view)
    assert "node8" in _labels(view)
    assert any("extra" in view.layout_model.bundle_link_ids(b) for b in view.layout_model.bundles)
    window.act_undo.trigger()
    _wait_rebuilt(qtbot, view)
    assert "node8" not in _labels(view)
    window.act_redo.trigger()
    _wait_rebuilt(qtbot, view)
    assert "node8" in _labels(view)


def test_edits_while_closed_show_when_it_opens(empty_window, qtbot, tmp_path):
    window = empty_window
    view = _open(window, tmp_path)
    window.act_logical.trigger()  # closed
    window.scene.select_ids(["leaf1"])
    window.edits.delete_selection()
    assert view.is_stale() and "leaf1" in _labels(view)  # nothing rebuilt while nobody looks
    window.act_logical.trigger()  # opened again
    _wait_rebuilt(qtbot, view)
    assert "leaf1" not in _labels(view)


@pytest.mark.slow
def test_a_large_fabric_opens_aggregated_by_pod(empty_window, qtbot, tmp_path):
    window = empty_window
    view = _open(window, tmp_path, servers=2048)
    layout = view.layout_model
    assert layout.aggregated["compute"] and layout.aggregated["leaf"]
    assert len([b for b in layout.blocks if b.tier == "compute"]) == 16
    QTest.mouseClick(view.viewport(), Qt.LeftButton, Qt.NoModifier, _block_point(view, "node0"))
    pod = layout.blocks[layout.block_of["node0"]]
    assert len(window.scene.selected_ids()) == len(pod.members) == 128


def test_a_double_click_shows_the_element_on_the_canvas(empty_window, qtbot, tmp_path):
    window = empty_window
    view = _open(window, tmp_path, qtbot=qtbot)
    item = window.scene.item_for("node6")
    canvas_centre = lambda: window.view.mapToScene(window.view.viewport().rect().center())  # noqa: E731
    assert (canvas_centre() - item.sceneBoundingRect().center()).manhattanLength() > 20
    QTest.mouseDClick(view.viewport(), Qt.LeftButton, Qt.NoModifier, _block_point(view, "node6"))
    assert (canvas_centre() - item.sceneBoundingRect().center()).manhattanLength() < 20


def test_an_empty_design_says_what_to_do(empty_window, qtbot):
    window = empty_window
    window.qdoc.new()
    window.act_logical.trigger()
    view = window.logical_view
    qtbot.waitUntil(lambda: view.layout_model is not None and not view.is_stale(), timeout=3000)
    assert view.layout_model.blocks == []
    assert not view.grab().isNull()  # the hint paints, nothing raises
