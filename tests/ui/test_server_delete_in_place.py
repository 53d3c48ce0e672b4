"""Edit > Delete of a server (with its cables), Edit > Undo and Edit > Redo change the rows of that
server's cable bundles only, not every bundle: after each step the canvas (each bundle's cables, line,
label and ports, the rack-to-rack lines, the ports drawn in use, the Overview) is what a fresh window
opening the saved design shows."""
import numpy as np
import pytest

from designer.core.io import load_document
from designer.ui.canvas.cable_labels import label_text
from tests.conftest import run_cli
from tests.ui.canvas_helpers import aggregates, drawn_cables
from tests.ui.test_canvas_far_zoom import _pixels
from tests.ui.test_cables_in_place import fresh_open, plans  # noqa: F401 - plans: a fixture
from tests.ui.test_minimap_edits import kept_and_fresh


def _canvas(window) -> dict:
    scene = window.scene
    layer = scene.link_layer
    return {
        "cables": drawn_cables(scene),
        "labels": sorted(label_text(b) for b in layer.bundles if b.link_ids),
        "kinds": layer.bundles.kinds_present(),
        "aggregates": aggregates(scene),
        "ports in use": {d: sorted(item.ports.used) for d, item in scene.devices.items()},
        "boxes": {d: tuple(np.round([r.x(), r.y(), r.width(), r.height()], 3))
                  for d, item in scene.devices.items() for r in [item.mapRectToScene(item.rect())]},
    }


def _names_and_ports_shown(window) -> list:
    """At a few zooms: which devices show their names and their ports."""
    shown = []
    for scale in (0.3, 0.6, 1.2, 2.5):
        window.view.zoom_to(scale)
        shown.append({d: (item.label.isVisible(), item.ports.isVisible())
                      for d, item in window.scene.devices.items()})
    window.view.zoom_to(None)
    return shown


def _as_fresh_open(window, new_window, tmp_path, step: str) -> None:
    fresh = fresh_open(window, new_window, tmp_path, step)
    assert _canvas(window) == _canvas(fresh), step
    assert _names_and_ports_shown(window) == _names_and_ports_shown(fresh), step
    fresh.close()
    kept, drawn = kept_and_fresh(window)
    assert np.array_equal(kept, drawn), step  # the Overview: the picture drawn from nothing


@pytest.fixture
def fat_tree(empty_window, tmp_path):
    """A generated fat-tree of 256 GPUs (32 servers in racks, two tiers of switches), opened."""
    path = tmp_path / "ft.yaml"
    code, _out, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", "32", "--gpu", "H100")
    assert code == 0, err
    assert len(load_document(path).racks) > 1
    empty_window.open_file(str(path))
    assert empty_window.settle()
    return empty_window


def _step(window, action: str) -> None:
    window.actions[action].trigger()
    assert window.settle()


@pytest.mark.parametrize("device", [("nodes", 0), ("nodes", 13), ("switches", 0)])
def test_a_server_deleted_undone_and_redone_changes_its_own_bundles(fat_tree, new_window, tmp_path, plans, device):
    """(a leaf switch too: its many bundles emptied and filled again in their rows)"""
    window = fat_tree
    doc = window.qdoc.doc
    node = getattr(doc, device[0])[device[1]].id
    cables = [l.id for l in doc.links_of_devices({node})]
    assert len(cables) >= 8  # its NICs' cables
    layer = window.scene.link_layer
    rows = len(layer.bundles)
    window.scene.select_ids([node])
    plans.clear()

    _step(window, "delete")
    assert doc.get(node) is None and all(doc.find("links", c) is None for c in cables)
    assert not plans and len(layer.bundles) == rows  # its bundles emptied in their rows
    _as_fresh_open(window, new_window, tmp_path, "deleted")
    plans.clear()  # (the fresh window's own)

    _step(window, "undo")
    assert doc.get(node) is not None and all(doc.find("links", c) is not None for c in cables)
    assert not plans and len(layer.bundles) == rows  # filled again
    _as_fresh_open(window, new_window, tmp_path, "undone")
    plans.clear()

    _step(window, "redo")
    assert doc.get(node) is None
    assert not plans
    _as_fresh_open(window, new_window, tmp_path, "redone")


def test_a_rack_deleted_and_undone_is_drawn_as_a_fresh_open(fat_tree, new_window, tmp_path):
    """A rack's delete takes its servers and their cables: the canvas and its rack-to-rack lines are a
    fresh open's, after the undo too."""
    window = fat_tree
    rack = window.qdoc.doc.racks[0].id
    window.scene.select_ids([rack])
    _step(window, "delete")
    _as_fresh_open(window, new_window, tmp_path, "rack-deleted")
    _step(window, "undo")
    _as_fresh_open(window, new_window, tmp_path, "rack-undone")


def _drawn_where(window, monkeypatch, box) -> tuple:
    """Zoomed far out, the viewport's pixels around `box` (a scene rectangle): as the one layer that draws
    every box draws them, and as the items draw them when they draw themselves."""
    import designer.ui.canvas.scene_detail as detail

    view = window.view
    view.viewport().repaint()
    assert window.scene.box_layer.isVisible()
    around = view.mapFromScene(box).boundingRect().adjusted(-1, -1, 1, 1)
    crop = (slice(max(around.top(), 0), around.bottom() + 1), slice(max(around.left(), 0), around.right() + 1))
    by_layer = _pixels(view.viewport())[crop]
    far = detail.LOD_BOXES
    monkeypatch.setattr(detail, "LOD_BOXES", 0.0)
    view.zoom_by(1.0)
    assert not window.scene.box_layer.isVisible()
    by_items = _pixels(view.viewport())[crop]
    monkeypatch.setattr(detail, "LOD_BOXES", far)
    view.zoom_by(1.0)  # far out again
    return by_layer, by_items


def test_far_out_a_server_deleted_and_undone_redraws_its_own_box(empty_window, tmp_path, plans, monkeypatch):
    """A design built as a big one is, zoomed far out: after Edit > Delete of a server and after Edit >
    Undo, the one layer that draws every box draws, where the server is, what the items draw, reading
    only the edited server's box from the items (not every item's)."""
    import designer.ui.canvas.scene as scene_module
    import designer.ui.canvas.scene_plan as plan_module

    monkeypatch.setattr(scene_module, "STAGED_ITEMS", 10)  # built as a big design is
    monkeypatch.setattr(plan_module, "STAGED_ITEMS", 10)
    path = tmp_path / "ft.yaml"
    assert run_cli("generate", "fat-tree", "-o", path, "--nodes", "32", "--gpu", "H100")[0] == 0
    window = empty_window
    window.open_file(str(path))
    window.view.zoom_to(0.1)
    assert window.settle() and window.scene.detail.far and window.scene.box_layer is not None
    read_all = []
    real = window.scene.cables.device_boxes
    monkeypatch.setattr(window.scene.cables, "device_boxes", lambda: read_all.append(1) or real())
    node = window.qdoc.doc.nodes[9].id
    window.scene.select_ids([node])
    item = window.scene.devices[node]
    box = item.mapRectToScene(item.rect())
    drawn = {}
    for step in ("delete", "undo"):
        read_all.clear()
        _step(window, step)
        by_layer, drawn[step] = _drawn_where(window, monkeypatch, box)
        assert not read_all and not plans, step
        off = np.abs(by_layer - drawn[step]).max(axis=2) > 40  # (antialiased edges land a few levels off)
        assert off.mean() < 0.03, step
    assert (np.abs(drawn["delete"] - drawn["undo"]).max(axis=2) > 40).mean() > 0.1  # the box, gone and back
