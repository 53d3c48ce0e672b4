"""Zoomed in on a big fabric: racks in front of bundled cables, a single cable only where cables can be
told apart, and a click picks what is drawn on top (a cable over a rack's inside, a bundle in an aisle)."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtTest import QTest

from designer.ui.canvas import style
from designer.ui.canvas.items import RackItem


@pytest.fixture(scope="module")
def fabric_1k(tmp_path_factory):
    from designer.cli import main

    path = tmp_path_factory.mktemp("fabric") / "fat-tree-1024.yaml"
    assert main(["generate", "fat-tree", "-o", str(path), "--nodes", "128", "--system", "dgx-h100"]) == 0
    return path


def _open_at(window, path, scale: float, qtbot):
    window.open_file(str(path))
    window.scene.build.finish()
    window.view.zoom_to(scale)
    qtbot.wait(10)
    return window.scene


def _click(window, point: QPointF, qtbot) -> None:
    view = window.view
    view.centerOn(point)
    qtbot.wait(10)
    QTest.mouseClick(view.viewport(), Qt.LeftButton, Qt.NoModifier, view.mapFromScene(point))


def _point_on(scene, a, b, wanted) -> QPointF | None:
    """A point of the segment a-b where the items under it are exactly what `wanted(items)` accepts."""
    for t in np.linspace(0.05, 0.95, 37):
        p = QPointF(*(np.asarray(a) + (np.asarray(b) - a) * t))
        under = [i for i in scene.items(p) if i is not scene.link_layer]
        if wanted(under):
            return p
    return None


def test_at_150_percent_the_racks_cover_the_bundled_cables(empty_window, fabric_1k, qtbot):
    scene = _open_at(empty_window, fabric_1k, 1.5, qtbot)
    assert scene.detail.cable_spacing_px(1.5, empty_window.view.visible_rect()) < style.MIN_CABLE_SPACING_PX  # a wall
    assert not scene.link_layer.show_individual  # bundled rack to rack
    assert all(r.brush().style() != Qt.NoBrush for r in scene.racks.values())  # racks filled, in front
    view = empty_window.view
    view.zoom_to(8.0)
    assert scene.detail.cable_spacing_px(8.0, view.visible_rect()) >= style.MIN_CABLE_SPACING_PX
    assert scene.link_layer.show_individual  # told apart at 800 %: single cables, to their ports
    assert all(r.brush().style() == Qt.NoBrush for r in scene.racks.values())


def test_a_click_on_a_cable_inside_a_rack_selects_the_cable(empty_window, fabric_1k, qtbot):
    scene = _open_at(empty_window, fabric_1k, 8.0, qtbot)
    layer = scene.link_layer
    assert layer.show_individual
    found = None
    for row in range(len(layer.lines.a)):  # a cable's stretch over a rack's inside, off every server and switch
        p = _point_on(scene, layer.lines.a[row], layer.lines.b[row],
                      lambda under: len(under) == 1 and isinstance(under[0], RackItem))
        if p is not None and layer.row_at(p, scene.gestures.tolerance()) == row:
            found = row, p
            break
    assert found is not None
    row, point = found
    _click(empty_window, point, qtbot)
    assert not scene.selectedItems()  # not the rack underneath
    assert scene.selected_ids() == list(layer.bundles.link_ids(row))


def test_a_click_on_a_server_over_a_cable_selects_the_server(empty_window, fabric_1k, qtbot):
    scene = _open_at(empty_window, fabric_1k, 8.0, qtbot)
    server = next(item for item in scene.devices.values() if item.kind == "node")
    point = server.mapToScene(server.rect().center())
    _click(empty_window, point, qtbot)
    assert scene.selectedItems() == [server] and not scene.link_layer.selected


def test_a_click_on_a_bundle_in_an_aisle_selects_its_cables(empty_window, fabric_1k, qtbot):
    scene = _open_at(empty_window, fabric_1k, 1.5, qtbot)
    layer = scene.link_layer
    assert not layer.show_individual
    found = None
    for agg in range(len(layer.aggregates.a)):
        p = _point_on(scene, layer.aggregates.a[agg], layer.aggregates.b[agg], lambda under: not under)
        if p is not None and layer.row_at(p, scene.gestures.tolerance()) == agg:
            found = agg, p
            break
    assert found is not None
    agg, point = found
    _click(empty_window, point, qtbot)
    members = np.flatnonzero(layer.bundle_aggregate == agg).tolist()
    assert members and sorted(layer.selected) == members
    expected = [link for r in members for link in layer.bundles.link_ids(r)]
    assert sorted(scene.selected_ids()) == sorted(expected)


def test_a_click_on_a_rack_over_a_bundle_selects_the_rack(empty_window, fabric_1k, qtbot):
    scene = _open_at(empty_window, fabric_1k, 1.5, qtbot)
    rack = next(iter(scene.racks.values()))
    top_left = rack.mapToScene(rack.rect().topLeft())
    point = top_left + QPointF(1.5, 1.5)  # inside the rack, above its servers
    under = [i for i in scene.items(point) if i is not scene.link_layer]
    assert under and isinstance(under[0], RackItem)
    _click(empty_window, point, qtbot)
    assert scene.selectedItems() == [rack] and not scene.link_layer.selected
