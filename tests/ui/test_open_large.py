"""Opening a very large design: File > Open reads the file and plans the canvas off the UI
thread under a progress bar with Cancel, then makes the canvas's items in slices, the window answering
throughout; the canvas drawn that way is the one an item-by-item build gives (cable ends on their ports,
rack-to-rack lines, ports in use, names by zoom)."""
from __future__ import annotations

import math
import time

import numpy as np
import pytest
from PySide6.QtCore import QTimer, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog, QProgressDialog, QPushButton

from designer.core.generate import generate_fat_tree
from designer.core.io import save_document


@pytest.fixture(scope="module")
def big_file(tmp_path_factory):
    """A 16,384-GPU fat-tree (2,048 servers, ~2,700 racks, servers and switches, 36,864 cables)."""
    path = tmp_path_factory.mktemp("large") / "fat-tree-16k.yaml"
    save_document(generate_fat_tree(nodes=2048, gpu="H100", switch_radix=64), path)
    return path


@pytest.fixture
def mid_file(tmp_path):
    """A design with a loose part too: a 512-GPU fat-tree plus a switch outside any rack, cabled to a leaf
    by a port it draws and by one it does not (its cable then leaves from the box's edge)."""
    import dataclasses

    from designer.core.model import Link

    doc = generate_fat_tree(nodes=64, gpu="H100", switch_radix=32)
    leaf = next(s for s in doc.switches if s.tier == "leaf")
    loose = dataclasses.replace(leaf, id="loose0", name="loose0", rack=None, slot=None)
    doc.spec.switches.append(loose)
    doc.spec.layout = {"positions": {"loose0": [-300.0, -200.0]}}
    doc.spec.links.append(Link(id="loose-a", a="loose0:p3", b=f"{leaf.id}:p30", kind="infiniband", bandwidth_gbps=400))
    doc.spec.links.append(Link(id="loose-b", a="loose0:p999", b=f"{leaf.id}", kind="infiniband", bandwidth_gbps=400))
    path = tmp_path / "fat-tree-512.yaml"
    save_document(doc, path)
    return path


def _pick(monkeypatch, path) -> None:
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(path), "")))


class _Ticks:
    """A 10 ms timer: the gaps between its ticks are how long the window's thread was busy."""

    def __init__(self):
        self.times: list[float] = [time.perf_counter()]
        self.timer = QTimer(interval=10, timeout=lambda: self.times.append(time.perf_counter()))
        self.timer.start()

    def worst_gap_s(self) -> float:
        return max(b - a for a, b in zip(self.times, self.times[1:]))


@pytest.mark.slow
def test_a_big_file_opens_off_the_window_thread_and_the_window_keeps_answering(empty_window, big_file, qtbot,
                                                                                monkeypatch):
    window = empty_window
    _pick(monkeypatch, big_file)
    qtbot.wait(300)  # the window's own first layout is not part of the open
    ticks = _Ticks()
    window.act_open.trigger()  # returns at once: the file is read in a thread
    dialog = window.findChild(QProgressDialog, "progress")
    assert dialog is not None and dialog.isVisible()
    qtbot.waitUntil(lambda: window.qdoc.path == str(big_file), timeout=60_000)
    assert window.scene.build.running  # painted already; the boxes still coming, a slice at a time
    qtbot.waitUntil(lambda: not window.scene.build.running, timeout=60_000)
    ticks.timer.stop()
    doc = window.qdoc.doc
    assert doc.num_gpus() == 16384
    assert len(window.scene.devices) == len(doc.nodes) + len(doc.switches)
    assert len(window.scene.racks) == len(doc.racks)
    # The item-by-item build stalled the window ~2-3 s here (the whole scene in one call); now the
    # longest stall is the file's parse in its thread and one slice (0.5 s leaves room for a loaded machine).
    assert len(ticks.times) > 20
    assert ticks.worst_gap_s() < 0.5, f"the window stalled {ticks.worst_gap_s() * 1000:.0f} ms"
    assert window.settle(120) and window.result_label.text() == "no job"  # then the worker's answer (no job set)


@pytest.mark.slow
def test_cancel_of_a_big_open_keeps_the_design_open_before(empty_window, big_file, qtbot, monkeypatch):
    window = empty_window
    before = window.qdoc.doc
    racks, links, path = len(before.racks), len(before.links), window.qdoc.path
    steps = window.qdoc.undo_stack.count()
    _pick(monkeypatch, big_file)
    window.act_open.trigger()
    dialog = window.findChild(QProgressDialog, "progress")
    assert dialog is not None and dialog.isVisible()
    QTest.mouseClick(next(b for b in dialog.findChildren(QPushButton) if b.text() == "Cancel"), Qt.LeftButton)
    assert window.progress.wait()  # the reading ends unseen
    qtbot.wait(100)  # its result is delivered, and dropped
    assert window.settle()
    doc = window.qdoc.doc
    assert (len(doc.racks), len(doc.links), window.qdoc.path) == (racks, links, path)
    assert window.qdoc.undo_stack.count() == steps and not window.scene.build.running
    assert len(window.scene.racks) == racks
    assert "cancelled" in window.statusBar().currentMessage()


def _staged_open(window, path, qtbot, monkeypatch) -> None:
    """File > Open of `path` with the staged build for any size (as a 16k-GPU design gets it)."""
    import designer.ui.canvas.scene as scene_module
    import designer.ui.canvas.scene_plan as plan_module

    monkeypatch.setattr(scene_module, "STAGED_ITEMS", 10)
    monkeypatch.setattr(plan_module, "STAGED_ITEMS", 10)
    _pick(monkeypatch, path)
    with qtbot.waitSignal(window.scene.built, timeout=30_000):  # the staged build ran and ended
        window.act_open.trigger()
    assert window.qdoc.path == str(path) and not window.scene.build.running


def test_a_staged_open_paints_the_racks_then_the_boxes_then_the_cables_each_in_a_paint_of_its_own(
        empty_window, mid_file, qtbot, monkeypatch):
    from PySide6.QtCore import QEvent, QObject

    import designer.ui.common.next_paint as next_paint

    # the layers wait for the paint itself, not for the fallback of a widget never painted (a loaded
    # machine may take longer than that fallback to paint)
    monkeypatch.setattr(next_paint, "LATEST_MS", 60_000)
    monkeypatch.setattr("designer.ui.canvas.scene_detail.LOD_BOXES", 1e9)  # opened far out: a layer draws the boxes
    window = empty_window

    def drawn(layer) -> bool:
        return layer.isVisible() and layer.opacity() > 0

    class Paints(QObject):  # at each paint of the canvas once the staged build began: (boxes drawn, cables drawn)
        layers: list = []
        began = False  # (a paint between the open and the build still shows the design before)

        def eventFilter(self, watched, event):
            self.began = self.began or window.scene.build.running
            if event.type() == QEvent.Paint and self.began:
                scene = window.scene
                self.layers.append((drawn(scene.box_layer), drawn(scene.link_layer)))
            return False

    paints = Paints()
    window.view.viewport().installEventFilter(paints)
    _staged_open(window, mid_file, qtbot, monkeypatch)
    assert window.settle()
    window.view.viewport().removeEventFilter(paints)
    boxes_at = next(i for i, (boxes, _) in enumerate(paints.layers) if boxes)
    cables_at = next(i for i, (_, cables) in enumerate(paints.layers) if cables)
    assert 0 < boxes_at < cables_at  # the racks alone, then their boxes, then the cables
    assert drawn(window.scene.box_layer) and drawn(window.scene.link_layer)


def test_the_staged_canvas_is_the_one_items_give(empty_window, mid_file, qtbot, monkeypatch):
    window = empty_window
    from designer.ui.document import commands

    _staged_open(window, mid_file, qtbot, monkeypatch)
    scene, layer = window.scene, window.scene.link_layer
    doc = window.qdoc.doc
    assert len(scene.cables.bundles) == len(layer.bundles) > 100
    # the key -> row look-up (a sorted search, no dict of every key) finds each bundle at its row
    assert [layer.index.get(bundle.key) for bundle in layer.bundles] == list(range(len(layer.bundles)))
    assert list(layer.index) == [bundle.key for bundle in layer.bundles]
    first = layer.bundles[0].key
    assert first[::-1] not in layer.index and (first[0], "no-such-device") not in layer.index
    assert layer.index.get("not a key") is None and scene.cables.bundles.get(first) == layer.bundles[0]
    # every cable's line ends where the items say (items.DeviceItem.port_point / anchor, one at a time)
    for row, bundle in enumerate(layer.bundles):
        pa, pb = scene.cables.ends(bundle.key)
        assert np.allclose(layer.lines.a[row], (pa.x(), pa.y())) and np.allclose(layer.lines.b[row], (pb.x(), pb.y()))
    # the ports in use, from the cables
    from designer.ui.canvas.items import port_index

    used: dict = {}
    for link in doc.links:
        for end in (link.a, link.b):
            device, _, port = end.partition(":")
            if port_index(port) is not None:
                used.setdefault(device, set()).add(port_index(port))
    assert all(set(item.ports.used) == used.get(i, set()) for i, item in scene.devices.items())
    # the rack-to-rack lines as an item-by-item pass over the racks finds them
    planned = (layer.aggregates.a.copy(), layer.aggregates.b.copy(), list(layer.aggregate_tips))
    scene.cables.rebuild_aggregates()
    assert np.allclose(planned[0], layer.aggregates.a) and np.allclose(planned[1], layer.aggregates.b)
    assert planned[2] == layer.aggregate_tips
    # and an edit after the staged build moves a cable's end with its device, as ever
    leaf = next(s for s in doc.switches if s.tier == "leaf")
    key = next(iter(scene.cables.device_bundles[leaf.id]))
    row = layer.index[key]
    before = (layer.lines.a[row].copy(), layer.lines.b[row].copy())
    window.qdoc.push(commands.SetFields(window.qdoc, {leaf.rack: {"x": doc.find("racks", leaf.rack).x + 240.0}},
                                        "Move rack"))
    assert not (np.allclose(before[0], layer.lines.a[row]) and np.allclose(before[1], layer.lines.b[row]))


def test_the_staged_canvas_measures_what_it_draws_as_its_items_do(empty_window, mid_file, qtbot, monkeypatch):
    """What the plan brings measured (the cables' and rack-to-rack lines' box, each line's kind, the racks'
    edges) is what measuring the items and lines on screen gives."""
    from PySide6.QtCore import QRectF

    window = empty_window
    _staged_open(window, mid_file, qtbot, monkeypatch)
    scene, layer = window.scene, window.scene.link_layer
    ends = np.concatenate([layer.lines.a, layer.lines.b, layer.aggregates.a, layer.aggregates.b])
    (left, top), (right, bottom) = np.nanmin(ends, axis=0), np.nanmax(ends, axis=0)
    assert layer.bounds() == QRectF(left - 4, top - 4, right - left + 8, bottom - top + 8)
    rack_rects = [item.mapRectToScene(item.rect()) for item in scene.racks.values()]
    assert len(rack_rects) > 10
    assert scene.rack_rects.edges().tolist() == [[r.left(), r.top(), r.right(), r.bottom()] for r in rack_rects]
    assert scene.rack_rects.meeting(scene.sceneRect()) == rack_rects
    planned = (layer.aggregates.kind.copy(), layer.bounds())
    scene.cables.rebuild_aggregates()  # an item-by-item pass over the racks
    assert planned[0].tolist() == layer.aggregates.kind.tolist() and planned[1] == layer.bounds()
    # the canvas looks the same once it is rebuilt from the items (a new design, the same racks)
    scene.cables.rebuild()
    assert layer.bounds() == planned[1]
    # indexed as deep as Qt would index the items made (ceil(log2 n)), no deeper
    assert scene.bspTreeDepth() == max(5, math.ceil(math.log2(len(scene.items()))))


def test_the_staged_canvas_shows_names_and_ports_by_zoom_as_an_item_by_item_build(empty_window, mid_file,
                                                                                   qtbot, monkeypatch):
    window = empty_window
    _staged_open(window, mid_file, qtbot, monkeypatch)
    staged = _names_and_ports_by_zoom(window)
    assert any(shown[0] for shown in staged) and any(shown[1] for shown in staged)  # some zoom shows each
    assert not all(shown[0] for shown in staged) and not all(shown[1] for shown in staged)  # not every zoom
    monkeypatch.undo()  # the item-by-item build (the design is small)
    window.act_new.trigger()
    _pick(monkeypatch, mid_file)
    window.act_open.trigger()
    assert window.settle(60) and window.qdoc.path == str(mid_file)
    assert _names_and_ports_by_zoom(window) == staged


def _names_and_ports_by_zoom(window) -> list[tuple[frozenset, frozenset, bool]]:
    """At zooms from far out to close in: the ids whose names show, those whose ports show, and
    whether the layer that draws them shows (what a user sees as they zoom)."""
    scene, view = window.scene, window.view
    seen = []
    for zoom in np.geomspace(0.02, 8.0, 24).tolist():
        view.zoom_to(zoom)
        names = {i for i, item in (*scene.racks.items(), *scene.devices.items()) if item.label.isVisible()}
        names |= {band.label.text() for band in scene.domain_bands if band.label.isVisible()}
        ports = {i for i, item in scene.devices.items() if item.ports.isVisible()}
        seen.append((frozenset(names), frozenset(ports), scene.detail_layer.isVisible()))
    return seen


def test_an_edit_during_the_staged_build_finds_every_item(empty_window, mid_file, qtbot, monkeypatch):
    window = empty_window
    import designer.ui.canvas.scene as scene_module
    import designer.ui.canvas.scene_plan as plan_module

    monkeypatch.setattr(scene_module, "STAGED_ITEMS", 10)
    monkeypatch.setattr(plan_module, "STAGED_ITEMS", 10)
    monkeypatch.setattr("designer.ui.canvas.scene_build.BUILD_SLICE_S", 0.0)  # one rack a slice: the build is surely under way
    _pick(monkeypatch, mid_file)
    window.act_open.trigger()
    qtbot.waitUntil(lambda: window.qdoc.path == str(mid_file), timeout=30_000)
    assert window.scene.build.running and len(window.scene.devices) < len(window.qdoc.doc.nodes)
    last = window.qdoc.doc.nodes[-1].id
    window.scene.select_ids([last])  # the search of a user: the items it needs are made first
    assert not window.scene.build.running and window.scene.selected_ids() == [last]
    assert len(window.scene.devices) == len(window.qdoc.doc.nodes) + len(window.qdoc.doc.switches)


def test_a_staged_canvas_keeps_its_items_out_of_the_collectors_walks(empty_window, mid_file, qtbot, monkeypatch):
    """Each slice of a big design's canvas is frozen as it is made (document/frozen_design.py): a full
    collection never walks the items of the shown design, the last slice's included."""
    import gc

    window = empty_window
    _staged_open(window, mid_file, qtbot, monkeypatch)
    made = [item for item in window.scene.devices.values() if gc.is_tracked(item)]
    assert made
    walked = {id(o) for o in gc.get_objects()}
    assert not any(id(item) in walked for item in made)


def test_only_the_document_replacement_freezes_the_collector():
    """gc.freeze / unfreeze live in document/frozen_design.py, which only QtDocument calls."""
    from tests.conftest import ROOT

    freezing, importing = set(), set()
    for path in (ROOT / "designer").rglob("*.py"):
        text = path.read_text()
        if "gc.freeze(" in text or "gc.unfreeze(" in text:
            freezing.add(path.relative_to(ROOT).as_posix())
        if "frozen_design" in text and path.name != "frozen_design.py":
            importing.add(path.relative_to(ROOT).as_posix())
    assert freezing == {"designer/ui/document/frozen_design.py"}
    assert importing == {"designer/ui/document/qt_document.py"}


@pytest.mark.slow
def test_a_big_design_replaced_by_another_is_freed(empty_window, mid_file, tmp_path, qtbot, monkeypatch):
    """A big design's objects are frozen out of the collector's walks (document/frozen_design.py); opening
    another design must still free the first (its canvas holds cycles), as File > New must."""
    import gc
    import weakref

    window = empty_window
    _staged_open(window, mid_file, qtbot, monkeypatch)
    # the design's spec holds its element lists (the elements have slots, no weak references)
    first_link, first_node = weakref.ref(window.qdoc.doc.spec), weakref.ref(window.qdoc.doc.metadata)
    other = tmp_path / "other.yaml"
    save_document(generate_fat_tree(nodes=4, gpu="H100", switch_radix=16), other)
    _pick(monkeypatch, other)
    window.act_open.trigger()
    qtbot.waitUntil(lambda: window.qdoc.path == str(other) and not window.scene.build.running, timeout=30_000)
    assert window.settle(60)
    gc.collect()
    assert first_link() is None and first_node() is None
    second = weakref.ref(window.qdoc.doc.spec)
    window.act_new.trigger()
    assert window.settle(60)
    gc.collect()
    assert second() is None


@pytest.mark.slow
def test_a_big_file_broken_deep_in_its_cables_is_refused_by_file_open_naming_the_line(empty_window, big_file,
                                                                                      qtbot, monkeypatch, tmp_path):
    """File > Open of a 16k-GPU file with one cable line broken far down its 36,864 (past the first
    parts the fast reader decodes at a time): a message names the file, line and key and how to fix
    it; the open design stays as it was."""
    from PySide6.QtWidgets import QMessageBox

    window = empty_window
    before = (len(window.qdoc.doc.links), window.qdoc.path)
    lines = big_file.read_text().splitlines()
    cables = [i for i, line in enumerate(lines) if line.startswith("  - {") and '"bandwidth_gbps"' in line]
    broken_at = cables[len(cables) * 3 // 4]
    lines[broken_at] = lines[broken_at].replace('"bandwidth_gbps"', '"bandwith_gbps"', 1)
    broken = tmp_path / "broken-16k.yaml"
    broken.write_text("\n".join(lines) + "\n")
    said = []
    monkeypatch.setattr(QMessageBox, "critical", staticmethod(lambda parent, title, text: said.append((title, text))))
    _pick(monkeypatch, broken)
    window.act_open.trigger()
    qtbot.waitUntil(lambda: bool(said), timeout=60_000)
    title, text = said[0]
    assert title == "Cannot open the file"
    assert f"broken-16k.yaml:{broken_at + 1}:" in text and "bandwith_gbps" in text and "bandwidth_gbps" in text
    assert (len(window.qdoc.doc.links), window.qdoc.path) == before
