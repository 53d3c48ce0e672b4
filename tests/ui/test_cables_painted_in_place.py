"""Edit > Delete and Edit > Undo of cables paint the canvas again only where those cables and their
rack-to-rack lines are (and Edit > Select of a cable, where it is): what the canvas then shows is what
it shows painted whole, near and far out (where it keeps its cables as a cached picture)."""
import numpy as np
import pytest

import designer.ui.canvas.scene as scene_module
import designer.ui.canvas.scene_plan as plan_module
from tests.ui.test_editor import window  # noqa: F401  (the fixture)
from tests.ui.test_live_edits import A100, open_example
from tests.ui.test_minimap_edits import SMOOTHING_LEVELS, delete_and_undo, switch_cables

# 512 GPUs in 18 racks, 64 cables between the switches of two of them: a bundle, a rack-to-rack line
ROCE = A100.parent / "h100-roce-2to1-ethernet.yaml"


def shown(window) -> np.ndarray:
    """The canvas as on screen: the window's backing store where the viewport is, after the
    viewport's pending repaints, each of the region it was asked for (a grab of the widget, or a
    repaint() of the viewport, would paint it whole anew and hide a region asked too small)."""
    from PySide6.QtCore import QPoint
    from PySide6.QtWidgets import QApplication

    viewport = window.view.viewport()
    for _ in range(3):  # the scene's changes reach the view, which asks its viewport to paint them
        QApplication.processEvents()
    corner = viewport.mapTo(window, QPoint(0, 0))
    image = window.screen().grabWindow(window.winId(), corner.x(), corner.y(), viewport.width(),
                                       viewport.height()).toImage()
    image = image.convertToFormat(image.Format.Format_RGB888)
    data = np.frombuffer(image.constBits(), np.uint8, image.bytesPerLine() * image.height())
    rows = data.reshape(image.height(), image.bytesPerLine())[:, :image.width() * 3]
    return rows.reshape(image.height(), image.width(), 3).astype(int)


def painted_whole(window) -> np.ndarray:
    """The canvas painted again from nothing: every layer, the cached picture too."""
    layer = window.scene.link_layer
    cache = layer.cacheMode()
    layer.setCacheMode(layer.CacheMode.NoCache)
    layer.setCacheMode(cache)  # (the cached picture dropped, made again at the next paint)
    window.view.viewport().update()
    return shown(window)


@pytest.mark.parametrize("far", [True, False])
@pytest.mark.parametrize("cables", [1, "a bundle", "all of two racks"])
def test_a_delete_and_undo_paint_the_canvas_as_painted_whole(window, monkeypatch, far, cables):
    monkeypatch.setattr(scene_module, "STAGED_ITEMS", 10)  # built as a big design is
    monkeypatch.setattr(plan_module, "STAGED_ITEMS", 10)
    open_example(window, ROCE)
    if window.act_heat.isChecked():
        window.act_heat.trigger()  # (a new heat paints every cable again)
    window.resize(1300, 860)
    if far:
        window.view.zoom_to(0.1)
    assert window.settle()
    assert window.scene.detail.far == far
    doc = window.qdoc.doc
    if cables == 1:
        ids = switch_cables(window, 2)[:1]
    elif cables == "a bundle":  # every cable between two switches: their line goes
        link = next(l for l in doc.links if l.id == switch_cables(window, 1)[0])
        ends = {link.a.split(":")[0], link.b.split(":")[0]}
        ids = [l.id for l in doc.links if {l.a.split(":")[0], l.b.split(":")[0]} == ends]
    else:
        rack_of = {s.id: s.rack for s in doc.switches}
        link = next(l for l in doc.links if l.id == switch_cables(window, 1)[0])
        racks = {rack_of[link.a.split(":")[0]], rack_of[link.b.split(":")[0]]}
        ids = [l.id for l in doc.links if {rack_of.get(l.a.split(":")[0]), rack_of.get(l.b.split(":")[0])} == racks]
    if not far:  # near the cables, each drawn
        window.view.zoom_to(0.8)
        layer = window.scene.link_layer
        row = layer.index[next(k for k in layer.index if set(k) <= {window.qdoc.doc.find("links", ids[0]).a.split(":")[0],
                                                                     window.qdoc.doc.find("links", ids[0]).b.split(":")[0]})]
        a, b = layer.lines.a[row], layer.lines.b[row]
        window.view.centerOn((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
    window.scene.select_ids(ids)
    assert window.settle()
    selected = shown(window)
    assert np.abs(selected - painted_whole(window)).max() <= SMOOTHING_LEVELS, "the selection painted stale"
    for step in delete_and_undo(window, ids):
        now = shown(window)
        whole = painted_whole(window)
        off = np.abs(now - whole).max(axis=2)
        assert (off > SMOOTHING_LEVELS).sum() == 0, f"the canvas after {step} differs from the canvas painted whole"
        if step == "delete" and cables != 1:  # (one cable of several: its line may look the same)
            assert (np.abs(whole - selected).max(axis=2) > 24).any(), "the delete changed nothing: the test tests nothing"


def open_far_out(window, monkeypatch):
    """The RoCE example zoomed far out, heat off, its boxes and cables drawn as a big design's are."""
    monkeypatch.setattr(scene_module, "STAGED_ITEMS", 10)
    monkeypatch.setattr(plan_module, "STAGED_ITEMS", 10)
    open_example(window, ROCE)
    if window.act_heat.isChecked():
        window.act_heat.trigger()
    window.resize(1300, 860)
    window.view.zoom_to(0.1)
    assert window.settle() and window.scene.detail.far


def test_a_cable_selected_far_out_is_painted_into_the_cached_picture(window, monkeypatch):
    """Far out the canvas keeps its cables as a picture; selecting a cable paints its rack-to-rack
    line in the selection's colour there (only there), and selecting nothing takes it away."""
    open_far_out(window, monkeypatch)
    before = shown(window)
    window.scene.select_ids(switch_cables(window, 1)[:1])
    assert window.settle()
    selected = shown(window)
    assert (np.abs(selected - before).max(axis=2) > 24).sum() > 10, "the selection does not show far out"
    assert np.abs(selected - painted_whole(window)).max() <= SMOOTHING_LEVELS
    window.scene.select_ids([])
    assert window.settle()
    assert np.abs(shown(window) - before).max() <= SMOOTHING_LEVELS, "the selection stayed on the picture"


def test_far_out_the_boxes_repaint_their_marks_only_when_they_change(window, monkeypatch):
    """Far out one layer draws every box and its marks (a job's frame, a box down). Edit > Delete of a
    cable leaves the marks as drawn; Edit > Mark Down of a server, and Edit > Undo, paint its mark
    on and off the picture."""
    open_far_out(window, monkeypatch)
    for _step in delete_and_undo(window, switch_cables(window, 1)[:1]):
        pass
    before = shown(window)
    window.scene.select_ids([window.qdoc.doc.nodes[0].id])
    window.act_mark_down.trigger()
    window.scene.select_ids([])
    assert window.settle()
    down = shown(window)
    assert (np.abs(down - before).max(axis=2) > 24).sum() > 4, "the server marked down does not show far out"
    assert np.abs(down - painted_whole(window)).max() <= SMOOTHING_LEVELS
    window.actions["undo"].trigger()
    assert window.settle()
    assert np.abs(shown(window) - before).max() <= SMOOTHING_LEVELS, "the mark stayed after the undo"
