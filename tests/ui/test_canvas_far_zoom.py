"""Zoomed far out, a big design's racks, servers and switches are drawn by one layer (canvas/box_layer.py):
the same picture as the items give, the items still under the mouse, and back to the items once zoomed in.
Driven as a user does: File > Open, the mouse wheel over the canvas, a click."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QImage, QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from designer.ui.canvas.box_layer import LOD_BOXES
from tests.ui.test_open_large import _staged_open, mid_file  # noqa: F401  (the fixture)


def _wheel(view, notches: int) -> None:
    viewport = view.viewport()
    centre = QPointF(viewport.rect().center())
    event = QWheelEvent(centre, QPointF(viewport.mapToGlobal(centre)), QPoint(0, 0), QPoint(0, 120 * notches),
                        Qt.NoButton, Qt.NoModifier, Qt.NoScrollPhase, False)
    QApplication.sendEvent(viewport, event)
    QApplication.processEvents()


def _pixels(widget) -> np.ndarray:
    image = widget.grab().toImage().convertToFormat(QImage.Format_RGB32)
    bits = np.frombuffer(image.constBits(), np.uint8, image.sizeInBytes())
    return bits.reshape(image.height(), image.bytesPerLine() // 4, 4)[:, :image.width(), :3].astype(int)


def _zoom_below(view, scale: float) -> None:
    for _ in range(60):
        if view.scale_factor() < scale:
            return
        _wheel(view, -1)
    raise AssertionError(f"the wheel did not zoom out below {scale}")


def _opened_far_out(window, path, qtbot, monkeypatch):
    """File > Open of a big design's canvas (at a small size), settled, then the wheel zoomed out
    below the boxes' level: (scene, view)."""
    _staged_open(window, path, qtbot, monkeypatch)
    assert window.settle(60)
    _zoom_below(window.view, LOD_BOXES)
    return window.scene, window.view


def test_far_out_one_layer_draws_the_boxes_as_the_items_would(empty_window, mid_file, qtbot,  # noqa: F811
                                                              monkeypatch):
    window = empty_window
    scene, view = _opened_far_out(window, mid_file, qtbot, monkeypatch)
    layer = scene.box_layer
    assert layer is not None and layer.isVisible()
    assert all(rack.opacity() == 0.0 for rack in scene.racks.values())  # Qt skips them, and what is inside
    qtbot.wait(50)
    drawn_by_layer = _pixels(view.viewport())
    # the same view with the items drawing themselves
    monkeypatch.setattr("designer.ui.canvas.scene_detail.LOD_BOXES", 0.0)
    view.zoom_by(1.0)
    assert not layer.isVisible() and all(rack.opacity() == 1.0 for rack in scene.racks.values())
    qtbot.wait(50)
    drawn_by_items = _pixels(view.viewport())
    differ = np.abs(drawn_by_layer - drawn_by_items).max(axis=2)
    # the same picture (antialiasing may differ by a shade)
    assert (differ > 40).mean() < 0.002, f"{(differ > 40).sum()} pixels differ"
    assert (drawn_by_items != drawn_by_items[0, 0]).any(axis=2).mean() > 0.01  # there is a design on screen


def test_far_out_the_boxes_still_take_clicks_and_zooming_in_brings_the_items_back(empty_window, mid_file,  # noqa: F811
                                                                                  qtbot, monkeypatch):
    window = empty_window
    scene, view = _opened_far_out(window, mid_file, qtbot, monkeypatch)
    assert scene.box_layer.isVisible()
    server = window.qdoc.doc.nodes[0]
    item = scene.devices[server.id]
    view.centerOn(item.sceneBoundingRect().center())
    QApplication.processEvents()
    at = view.mapFromScene(item.sceneBoundingRect().center())
    QTest.mouseClick(view.viewport(), Qt.LeftButton, Qt.NoModifier, at)
    chosen = scene.selected_ids()
    assert len(chosen) == 1 and chosen[0] in (server.id, server.rack), chosen
    # the wheel back in: the items draw themselves again, names and ports as the zoom says
    for _ in range(60):
        if view.scale_factor() >= LOD_BOXES:
            break
        _wheel(view, 1)
    assert view.scale_factor() >= LOD_BOXES
    assert not scene.box_layer.isVisible()
    assert all(rack.opacity() == 1.0 for rack in scene.racks.values())


def test_far_out_a_rubber_band_selects_what_it_covers(empty_window, mid_file, qtbot, monkeypatch):  # noqa: F811
    window = empty_window
    scene, view = _opened_far_out(window, mid_file, qtbot, monkeypatch)
    rack = window.qdoc.doc.racks[0]
    box = scene.racks[rack.id].sceneBoundingRect()
    view.centerOn(box.center())
    QApplication.processEvents()
    start = view.mapFromScene(box.topLeft()) - QPoint(3, 3)
    end = view.mapFromScene(box.bottomRight()) + QPoint(3, 3)
    viewport = view.viewport()
    QTest.mousePress(viewport, Qt.LeftButton, Qt.NoModifier, start)
    for t in (0.3, 0.6, 1.0):
        QTest.mouseMove(viewport, start + (end - start) * t)
    QTest.mouseRelease(viewport, Qt.LeftButton, Qt.NoModifier, end)
    chosen = set(scene.selected_ids())
    inside = {e.id for e in list(window.qdoc.doc.nodes) + list(window.qdoc.doc.switches) if e.rack == rack.id}
    assert rack.id in chosen and inside and inside <= chosen


def test_far_out_an_edit_moves_the_drawn_boxes_with_the_items(empty_window, mid_file, qtbot,  # noqa: F811
                                                               monkeypatch):
    """A rack moved by an edit (undoable, as the Inspector makes it) while zoomed far out: the layer draws
    it, its servers and switches where the items now are, the same picture as the items give."""
    from designer.ui.document import commands

    window = empty_window
    scene, view = _opened_far_out(window, mid_file, qtbot, monkeypatch)
    rack = window.qdoc.doc.racks[0]
    window.qdoc.push(commands.SetFields(window.qdoc, {rack.id: {"x": rack.x - 600.0}}, "Move rack"))
    qtbot.wait(50)
    drawn_by_layer = _pixels(view.viewport())
    moved = scene.racks[rack.id].sceneBoundingRect()
    assert moved.left() < -500 and view.mapToScene(view.viewport().rect()).boundingRect().contains(moved)
    monkeypatch.setattr("designer.ui.canvas.scene_detail.LOD_BOXES", 0.0)
    view.zoom_by(1.0)
    qtbot.wait(50)
    drawn_by_items = _pixels(view.viewport())
    differ = np.abs(drawn_by_layer - drawn_by_items).max(axis=2)
    assert (differ > 40).mean() < 0.002, f"{(differ > 40).sum()} pixels differ"
