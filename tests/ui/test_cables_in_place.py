"""A cable bundle that comes or goes with an edit (Edit > Delete of its only cable, Edit > Undo, a link
drawn between two devices that had none) changes its own row of the canvas, not every bundle: what
the canvas then draws, hit-tests and colours with link heat is what a fresh open of the saved design
shows."""
import numpy as np
import pytest
from PySide6.QtCore import QPointF

from designer.ui.canvas import scene_cables
from tests.ui.canvas_helpers import aggregates, cable_heat, drawn_cables
from tests.ui.test_live_edits import A100, open_example

# 512 GPUs, 64 cables between the switches of two racks: a rack-to-rack line, small enough to open at each step
ROCE = A100.parent / "h100-roce-2to1-ethernet.yaml"


def fresh_open(window, new_window, tmp_path, name):
    """The window's design saved (File > Save's own code), and opened in a new window (link heat on
    when it is on in `window`)."""
    path = tmp_path / f"{name}.yaml"
    assert window.files.save_to(str(path))
    return new_window(path, heat=window.act_heat.isChecked())


def heat_caught_up(window, qtbot):
    """The link heat shows the window's last result (it follows the step time on screen)."""
    qtbot.waitUntil(lambda: window.scene.heat.result is window.result, timeout=60_000)


def assert_as_fresh(window, new_window, qtbot, tmp_path, name):
    other = fresh_open(window, new_window, tmp_path, name)
    assert drawn_cables(window.scene) == drawn_cables(other.scene), name
    if window.act_heat.isChecked():
        heat_caught_up(window, qtbot)
        heat_caught_up(other, qtbot)
        heat = cable_heat(window.scene)
        assert heat == cable_heat(other.scene), name
        assert window.result is not None, window.problems[:3]
        assert any("of the step" in (words or "") for _b, _m, words in heat.values())  # in words too
    assert aggregates(window.scene) == aggregates(other.scene), name
    assert window.scene.link_layer.bundles.kinds_present() == other.scene.link_layer.bundles.kinds_present()
    assert window.view.legend.kinds() == other.view.legend.kinds(), name
    other.close()


def midpoint(layer, row) -> QPointF:
    a, b = layer.lines.a[row], layer.lines.b[row]
    return QPointF((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)


def tip(layer, at: QPointF, tolerance: float) -> str:
    """The tooltip of the cable under a point as the zoomed-in canvas gives it (single cables drawn)."""
    shown = layer.show_individual
    layer.show_individual = True
    try:
        return layer.tooltip_at(at, tolerance) or ""
    finally:
        layer.show_individual = shown


@pytest.fixture
def plans(monkeypatch):
    """How many times the bundles were all planned anew."""
    calls = []
    real = scene_cables.plan_bundles

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(scene_cables, "plan_bundles", counted)
    return calls


def test_the_only_cable_of_a_bundle_deleted_and_undone_keeps_its_row(empty_window, new_window, qtbot, tmp_path, plans):
    """Edit > Delete of the only cable between two devices: its line is no longer drawn nor under the
    mouse, every other bundle and the link heat are a fresh open's; Edit > Undo brings it back in
    the same row; neither plans every bundle again."""
    window = empty_window
    window.act_heat.trigger()
    open_example(window, ROCE)
    assert window.act_heat.isChecked() and window.scene.link_layer.heat is not None
    layer = window.scene.link_layer
    switches = {s.id for s in window.qdoc.doc.switches}  # a switch-to-switch cable: the design stays valid
    row = [r for r, b in enumerate(layer.bundles) if len(b.link_ids) == 1 and set(b.key) <= switches][3]
    bundle = layer.bundles[row]
    cable = bundle.link_ids[0]
    mid = midpoint(layer, row)
    tolerance = window.scene.gestures.tolerance()
    assert cable in tip(layer, mid, tolerance)
    rows = len(layer.bundles)
    window.scene.select_ids([cable])
    plans.clear()

    window.actions["delete"].trigger()
    assert window.settle()
    assert window.qdoc.doc.find("links", cable) is None
    assert cable not in tip(layer, mid, tolerance)
    assert bundle.key in layer.index and layer.index[bundle.key] == row and len(layer.bundles) == rows
    assert not plans  # the bundle went in its own row
    assert_as_fresh(window, new_window, qtbot, tmp_path, "deleted")
    plans.clear()  # (the fresh window's own)

    window.actions["undo"].trigger()
    assert window.settle()
    assert layer.index[bundle.key] == row and layer.bundles[row].link_ids == (cable,)
    assert cable in tip(layer, mid, tolerance)
    assert not plans
    assert_as_fresh(window, new_window, qtbot, tmp_path, "undone")


def test_a_link_drawn_between_two_unconnected_devices_appends_its_bundle(empty_window, new_window, qtbot, tmp_path, plans):
    """A link drawn (the canvas's link gesture) between a server and a switch with no cable between
    them: one more bundle, drawn and under the mouse, and the canvas and its heat are a fresh open's;
    undone, it is gone again."""
    window = empty_window
    window.act_heat.trigger()
    open_example(window, ROCE)
    doc = window.qdoc.doc
    layer = window.scene.link_layer
    cabled = {}
    for l in doc.links:
        for end in (l.a, l.b):
            cabled[end.split(":")[0]] = cabled.get(end.split(":")[0], 0) + 1
    free = [s for s in doc.switches if cabled.get(s.id, 0) < s.radix]  # switches with a free port
    server, switch = next((a, b) for a in free for b in free if a.id < b.id and a.fabric == b.fabric
                          and (a.id, b.id) not in layer.index)
    key = (server.id, switch.id)
    rows = len(layer.bundles)
    plans.clear()
    window.view.linkRequested.emit(server.id, switch.id, server.fabric)
    assert window.settle()
    assert key in layer.index and layer.index[key] == rows  # appended
    assert not plans
    row = layer.index[key]
    link = layer.bundles[row].link_ids[0]
    assert link in tip(layer, midpoint(layer, row), window.scene.gestures.tolerance())
    assert_as_fresh(window, new_window, qtbot, tmp_path, "added")
    plans.clear()

    window.actions["undo"].trigger()
    assert window.settle()
    assert doc.find("links", link) is None and not layer.bundles[row].link_ids
    assert not plans
    assert_as_fresh(window, new_window, qtbot, tmp_path, "added-undone")



def _edge_rows(layer, edge: int | None) -> list[int]:
    """The rows whose lines reach furthest towards an edge of the cables' bounds (0 left, 1 top, 2 right,
    3 bottom; None: the edge the fewest cables reach): their cables deleted, that edge moves in."""
    a, b = layer.lines.a, layer.lines.b
    reach = (-np.minimum(a[:, 0], b[:, 0]), -np.minimum(a[:, 1], b[:, 1]),
             np.maximum(a[:, 0], b[:, 0]), np.maximum(a[:, 1], b[:, 1]))
    edges = [np.flatnonzero(r >= np.nanmax(r) - 1e-9).tolist() for r in reach]
    if edge is not None:
        return edges[edge]
    return min(edges, key=lambda rows: sum(len(layer.bundles[r].link_ids) for r in rows))


def _extent(window) -> tuple:
    """The cables' bounds, the layout the view fits, the scene's rectangle."""
    scene = window.scene
    return scene.link_layer.boundingRect(), scene.layout_rect(), scene.sceneRect()


@pytest.mark.parametrize("example, edge", [("h100-64gpu-infiniband.yaml", None),
                                           ("gb200-nvl72-144gpu.yaml", 2)])  # (its cables on the layout's edge)
def test_the_cables_bounds_follow_the_cables_drawn(empty_window, new_window, tmp_path, plans, example, edge):
    """Edit > Delete of the cables on an edge of the drawn cables: the cables' bounds (and the layout,
    the scene, also where those cables reached past every rack and device) shrink to what a fresh open
    of the saved design measures, without planning every bundle again; Edit > Undo: back to what they
    were."""
    window = empty_window
    open_example(window, A100.parent / example)
    layer = window.scene.link_layer
    opened = _extent(window)
    cables = [i for r in _edge_rows(layer, edge) for i in layer.bundles[r].link_ids]
    window.scene.select_ids(cables)
    plans.clear()
    window.actions["delete"].trigger()
    assert window.settle() and not plans
    fresh = fresh_open(window, new_window, tmp_path, "edge-deleted")
    assert drawn_cables(window.scene) == drawn_cables(fresh.scene)
    assert _extent(window) == _extent(fresh)
    assert layer.boundingRect() != opened[0] and opened[0].contains(layer.boundingRect())
    fresh.close()

    plans.clear()  # (the fresh window's own)
    window.actions["undo"].trigger()
    assert window.settle() and not plans
    assert _extent(window) == opened


def test_the_zoom_counts_the_cables_drawn(empty_window, new_window, tmp_path, monkeypatch):
    """Whether single cables or rack-to-rack lines show at a zoom counts the cables drawn: after Edit >
    Delete of some, zooming by the wheel shows what a fresh open of the saved design shows at that
    zoom (the limit set between the counts before and after)."""
    from designer.ui.canvas import style
    from tests.ui.test_wheel_and_undo import wheel

    window = empty_window
    open_example(window, A100.parent / "h100-64gpu-infiniband.yaml")
    layer = window.scene.link_layer
    singles = [b.link_ids[0] for b in layer.bundles if len(b.link_ids) == 1][:4]
    before = len(layer.bundles)
    monkeypatch.setattr(style, "MAX_DRAWN_BUNDLES", before - len(singles) // 2)
    window.scene.select_ids(singles)
    window.actions["delete"].trigger()
    assert window.settle()
    fresh = fresh_open(window, new_window, tmp_path, "deleted")
    for shown in (window, fresh):
        shown.actions["fit"].trigger()
        wheel(shown.view.viewport(), 1)
        wheel(shown.view.viewport(), -1)
    assert fresh.view.visible_fraction() == pytest.approx(1.0) and fresh.scene.detail.single_cables
    assert window.scene.detail.single_cables == fresh.scene.detail.single_cables
    assert layer.show_individual == fresh.scene.link_layer.show_individual
    fresh.close()


def _rack_pair_cables(window) -> tuple[str, str]:
    """Two switch-to-switch cables, each its bundle's only one, on one rack-to-rack line: the line's
    last bundle's (whose kind is the line's colour) and another's."""
    layer = window.scene.link_layer
    switches = {s.id for s in window.qdoc.doc.switches}
    rows_of_line: dict = {}
    for row, line in enumerate(layer.bundle_aggregate.tolist()):
        bundle = layer.bundles[row]
        if line >= 0 and len(bundle.link_ids) == 1 and set(bundle.key) <= switches:
            rows_of_line.setdefault(line, []).append(row)
    for line, rows in rows_of_line.items():
        if len(rows) > 1 and rows[-1] == int(np.flatnonzero(layer.bundle_aggregate == line)[-1]):
            return layer.bundles[rows[-1]].link_ids[0], layer.bundles[rows[0]].link_ids[0]
    raise AssertionError("no rack-to-rack line of two switch-to-switch bundles")


def test_a_cable_kind_changed_in_the_inspector_changes_its_row_alone(empty_window, new_window, qtbot, tmp_path,
                                                                   plans, monkeypatch):
    """A cable's kind chosen in the Inspector: its bundle changes colour in its own row (neither every
    bundle planned again nor every cable looked through), its rack-to-rack line takes the colour when
    the bundle is that line's last; the canvas, the rack-to-rack lines and the legend's kinds are a
    fresh open's, and a cable deleted next still changes its own row. (An Ethernet cable on an
    InfiniBand switch: the design check refuses it, so no heat to compare.)"""
    from tests.ui.test_switch_routing_inspector import _pick

    window = empty_window
    open_example(window)
    doc = window.qdoc.doc
    looked_at = []
    real_key = scene_cables.SceneCables.bundle_key
    monkeypatch.setattr(scene_cables.SceneCables, "bundle_key",
                        lambda self, l: looked_at.append(l) or real_key(self, l))
    lines_before = aggregates(window.scene)
    changed = _rack_pair_cables(window)
    for step, link in zip(("the line's last", "another"), changed):
        assert doc.find("links", link).kind == "infiniband"
        window.scene.select_ids([link])
        assert window.settle()
        looked_at.clear()
        plans.clear()
        _pick(window.inspector.editors["kind"], "ethernet")
        assert window.settle()
        assert doc.find("links", link).kind == "ethernet"
        assert not plans and len(looked_at) < 10  # its own cables, not the 2,048 of the design
        assert "ethernet" in window.view.legend.kinds()
        assert_as_fresh(window, new_window, qtbot, tmp_path, f"kind changed: {step}")  # the legend's kinds too
        if step == "the line's last":
            assert aggregates(window.scene) != lines_before  # its line's colour
    plans.clear()

    other = next(b.link_ids[0] for b in window.scene.link_layer.bundles
                 if len(b.link_ids) == 1 and not set(changed) & set(b.link_ids))
    window.scene.select_ids([other])
    window.actions["delete"].trigger()
    assert window.settle() and not plans  # still in its own row
    assert_as_fresh(window, new_window, qtbot, tmp_path, "kind changed, then a cable deleted")
    plans.clear()
    for _ in range(3):
        window.actions["undo"].trigger()
        assert window.settle()
    assert not plans and {doc.find("links", link).kind for link in changed} == {"infiniband"}
    assert_as_fresh(window, new_window, qtbot, tmp_path, "all undone")
    assert aggregates(window.scene) == lines_before
