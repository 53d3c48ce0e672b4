"""Edit > Delete of a server with its cables, then Edit > Undo and Edit > Redo, as a user does them (the
server selected on the canvas, the window's actions triggered): after each step the canvas holds exactly
the design's racks, servers and switches, each where the design puts it, its scene rect covers them as a
fresh window's does, and the picture on screen, zoomed in and zoomed far out (where one layer draws every
box from a picture it keeps, repainted only where the edit was), is a fresh window's."""
import pytest
from PySide6.QtCore import QPointF, Qt

from designer.core.io import load_document
from designer.core.model.geometry import UNIT_HEIGHT_PX, rack_height_px
from designer.ui.canvas.items import ID_ROLE, DeviceItem, RackItem
from tests.conftest import run_cli
from tests.ui.test_cables_in_place import fresh_open


def _items(scene, kind) -> dict:
    return {item.data(ID_ROLE): item for item in scene.items() if type(item) is kind}


def _shows_the_document(window) -> None:
    scene, doc = window.scene, window.qdoc.doc
    devices, racks = _items(scene, DeviceItem), _items(scene, RackItem)
    assert sorted(racks) == sorted(r.id for r in doc.racks)
    assert sorted(devices) == sorted([n.id for n in doc.nodes] + [s.id for s in doc.switches])
    for element in list(doc.nodes) + list(doc.switches):
        item, rack = devices[element.id], racks[element.rack]
        assert item.parentItem() is rack
        y = rack_height_px(doc.find("racks", element.rack).units) - (element.slot + element.height_units) * UNIT_HEIGHT_PX
        assert (item.pos().x(), item.pos().y()) == (0, pytest.approx(y)), element.id
    everything = scene.itemsBoundingRect()
    assert scene.sceneRect().contains(everything)


def _picture(window, scale: float, center: QPointF, size):
    view = window.view
    view.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)  # the same picture size in both windows
    view.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
    view.setFixedSize(size)
    view.zoom_to(scale)
    view.centerOn(center)
    window.settle()
    return view.viewport().grab().toImage()


def _looks_as_fresh(window, new_window, tmp_path, step: str) -> None:
    fresh = fresh_open(window, new_window, tmp_path, step)
    assert fresh.scene.sceneRect() == window.scene.sceneRect(), step
    center, size = window.scene.layout_rect().center(), window.view.size()
    for scale in (0.1, 1.0):  # far out (the box layer) and close (the items themselves)
        mine, theirs = _picture(window, scale, center, size), _picture(fresh, scale, center, size)
        if mine != theirs:
            mine.save(str(tmp_path / f"{step}-{scale}-mine.png"))
            theirs.save(str(tmp_path / f"{step}-{scale}-fresh.png"))
        assert mine == theirs, f"{step} at {scale}: {tmp_path}"
    fresh.close()


@pytest.fixture
def big_fat_tree(empty_window, tmp_path, monkeypatch):
    """A generated fat-tree of 256 GPUs opened as a big design is (staged, with the box layer far out)."""
    import designer.ui.canvas.scene as scene_module
    import designer.ui.canvas.scene_plan as plan_module

    monkeypatch.setattr(scene_module, "STAGED_ITEMS", 10)
    monkeypatch.setattr(plan_module, "STAGED_ITEMS", 10)
    path = tmp_path / "ft.yaml"
    assert run_cli("generate", "fat-tree", "-o", path, "--nodes", "32", "--gpu", "H100")[0] == 0
    assert len(load_document(path).racks) > 1
    empty_window.open_file(str(path))
    assert empty_window.settle()
    assert empty_window.scene.box_layer is not None
    return empty_window


def test_a_server_deleted_undone_and_redone_leaves_the_canvas_a_fresh_windows(big_fat_tree, new_window, tmp_path):
    window = big_fat_tree
    doc = window.qdoc.doc
    server = doc.nodes[9].id
    cables = [link.id for link in doc.links_of_devices({server})]
    assert cables
    window.view.zoom_to(0.1)  # far out: the box layer draws the boxes
    assert window.settle() and window.scene.detail.far
    window.scene.select_ids([server])
    assert window.scene.selected_ids() == [server]
    window.view.viewport().repaint()  # the selection painted (its frame goes with the server)
    for step in ("delete", "undo", "redo"):
        window.actions[step].trigger()
        assert window.settle()
        window.view.viewport().repaint()
        assert (doc.get(server) is None) == (step != "undo")
        assert all((doc.find("links", c) is None) == (step != "undo") for c in cables)
        _shows_the_document(window)
        _looks_as_fresh(window, new_window, tmp_path, step)
        window.view.zoom_to(0.1)
        assert window.settle()


def _painted_whole(window):
    """The canvas painted again from nothing, the layers' cached pictures too."""
    from tests.ui.test_cables_painted_in_place import shown

    for layer in (window.scene.link_layer, window.scene.box_layer):
        cache = layer.cacheMode()
        layer.setCacheMode(layer.CacheMode.NoCache)
        layer.setCacheMode(cache)  # (the cached picture dropped, made again at the next paint)
    window.view.viewport().update()
    return shown(window)


def test_far_out_a_server_deleted_undone_and_redone_repaints_what_changed(big_fat_tree):
    """What the canvas shows after each step, painted only where the edit asked, is the canvas painted
    whole (a part asked too small would leave the server's box, its frame or its cables' lines)."""
    import numpy as np

    from tests.ui.test_cables_painted_in_place import shown
    from tests.ui.test_minimap_edits import SMOOTHING_LEVELS

    window = big_fat_tree
    if window.act_heat.isChecked():
        window.act_heat.trigger()
    window.view.zoom_to(0.1)
    assert window.settle() and window.scene.detail.far
    server = window.qdoc.doc.nodes[9].id
    window.scene.select_ids([server])
    assert window.settle()
    before = shown(window)
    assert (np.abs(before - _painted_whole(window)).max(axis=2) > SMOOTHING_LEVELS).sum() == 0
    for step in ("delete", "undo", "redo"):
        window.actions[step].trigger()
        assert window.settle()
        now = shown(window)
        whole = _painted_whole(window)
        assert (np.abs(now - whole).max(axis=2) > SMOOTHING_LEVELS).sum() == 0, step
        if step == "delete":
            assert (np.abs(whole - before).max(axis=2) > 24).any(), "the delete changed nothing: the test tests nothing"
