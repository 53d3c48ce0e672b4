"""The canvas heat tooltip and the Inspector answer a link's load in the engine's numbers: the
class of symmetric links it belongs to, its busy share of the step and of its phase, and that a
DP-bound design's rails are the bottleneck of the DP phase."""
import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPointF
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QApplication

import designer.ui.canvas.scene_gestures as scene_module

from designer.core.analysis.link_load import link_load, seconds_text, share_text
from tests.conftest import EXAMPLES
from tests.ui.test_editor import window  # noqa: F401  (the fixture)


def open_dp_bound(window, tmp_path):
    """The 64-GPU example on 25 Gb/s rails: the gradient reduction holds the step up."""
    path = tmp_path / "dp-bound.yaml"
    text = (EXAMPLES / "h100-64gpu-infiniband.yaml").read_text()
    path.write_text(text.replace('"bandwidth_gbps": 400', '"bandwidth_gbps": 25'))
    window.open_file(str(path))
    assert window.settle() and window.result is not None
    if not window.act_heat.isChecked():  # heat may be off by default: the user turns it on
        window.act_heat.trigger()
    assert window.settle() and window.scene.link_layer.heat is not None


def hover_tooltip(window, scene_point: QPointF, monkeypatch) -> str:
    """What the user sees resting the mouse on the canvas at `scene_point` (the tooltip text is
    caught where the scene shows it: a real tooltip window warns on the offscreen platform)."""
    shown = []
    monkeypatch.setattr(scene_module.QToolTip, "showText", staticmethod(lambda pos, text, *a: shown.append(text)))
    view = window.view
    local = view.mapFromScene(scene_point)
    event = QHelpEvent(QEvent.ToolTip, local, view.viewport().mapToGlobal(local))
    QApplication.sendEvent(view.viewport(), event)
    assert shown, "no tooltip at the cable"
    return shown[-1]


def open_point_on(window, row: int) -> QPointF:
    """A point of the cable's line that no rack or device covers (where its tooltip shows)."""
    layer, view = window.scene.link_layer, window.view
    a, b = layer.lines.a[row], layer.lines.b[row]
    for t in np.linspace(0.05, 0.95, 91):
        point = QPointF(*(a + (b - a) * t))
        view.centerOn(point)
        item = window.scene.itemAt(point, view.transform())
        if item is None or item is layer:
            return point
    raise AssertionError(f"cable row {row} runs under items along its whole length")


@pytest.mark.slow
def test_heat_tooltip_names_the_class_and_the_dp_phase_bottleneck(window, tmp_path, monkeypatch):
    open_dp_bound(window, tmp_path)
    doc, result, scene = window.qdoc.doc, window.result, window.scene
    layer = scene.link_layer
    row = layer.index[scene.cables.bundle_key(doc.find("links", "l0"))]
    util = result.link_utilization_array
    # the heat is the engine's load: the bundle's busiest cable, busy share of the step
    cables = [i for i, link in enumerate(doc.links) if scene.cables.bundle_key(link) == scene.cables.bundle_key(doc.links[0])]
    assert layer.heat[row] == int(np.clip(np.round(max(util[i] for i in cables) * 10), 0, 10))
    tip = hover_tooltip(window, open_point_on(window, row), monkeypatch)
    answer = link_load(result, doc).answer(0)
    dp = answer.phase
    assert "64 rail links (25 Gb/s InfiniBand) loaded alike" in tip
    assert f"busy {share_text(dp.share)} of the DP phase" in tip and f"of its {seconds_text(dp.phase_s)}" in tip
    assert "the bottleneck of the DP phase, on the critical path" in tip
    assert f"busy {share_text(float(util[0]))} of the {seconds_text(result.step_time_s)} step" in tip
    assert "busy 0 % of the step" not in tip and "(a bottleneck)" not in tip


def test_the_inspector_shows_the_selected_links_load(window, tmp_path):
    open_dp_bound(window, tmp_path)
    inspector = window.inspector
    window.scene.select_ids(["l7"])
    assert inspector.ids == ["l7"] and inspector.load.isVisibleTo(inspector)
    text = inspector.load.text()
    assert text.startswith("64 rail links (25 Gb/s InfiniBand) loaded alike, l7 among them; each:")
    assert "the bottleneck of the DP phase" in text
    answer = link_load(window.result, window.qdoc.doc).answer(7)
    assert f"{share_text(answer.busy_share_of_step)} of the" in text
    window.scene.select_ids(["leaf0"])  # a switch: no link load shown
    assert not inspector.load.isVisibleTo(inspector)
    window.scene.select_ids(["l64"])  # a leaf-spine bundle this job leaves idle
    assert "carries no traffic of this job's step" in inspector.load.text()


@pytest.mark.slow
def test_once_the_inspector_has_a_links_load_no_thread_keeps_that_result(window, tmp_path):
    """Once the window moved on, nothing keeps the result whose link load was worded: not the
    link-load thread (a local that outlived its job kept the result and a document snapshot until
    the next request), not the analysis' memo (it kept the last worded result until another link
    was worded) and not a closed Timeline (it kept the last result it showed, events and all):
    ~40 MB and more at 131k GPUs."""
    import gc
    import weakref

    from tests.ui.test_stale_panels import TP, type_like_a_user

    open_dp_bound(window, tmp_path)
    window.timeline_dock.close()  # no timeline asked for either: the thread waits from here on
    window.scene.select_ids(["l7"])
    assert window.settle() and "l7 among them" in window.inspector.load.text()
    worded = weakref.ref(window.result)
    window.scene.select_ids(["leaf0"])  # a switch: no link load asked for the next result
    type_like_a_user(window, TP, "4")
    assert window.settle() and window.result is not worded() and window.result.plan["tp"] == 4
    for _ in range(3):  # the Inspector is handed the new result a moment later (two zero timers)
        QApplication.processEvents()
    assert window.inspector.result is window.result
    gc.collect()
    assert worded() is None
    window.timeline_dock.show()  # opened again: the result shown's own events
    assert window.settle() and window.timeline_panel.result is window.result
    assert window.timeline_panel.bar_count() > 0 and not window.timeline_panel.is_updating()


def test_a_worded_link_load_leaves_the_result_without_its_document(window, tmp_path):
    """The window keeps the shown result's link loads (LinkLoads) beside the result, not on it: a
    result the Inspector worded a link of still holds numbers only."""
    from designer.core.model.document import Document
    from tests.core.test_engine_cache import _reachable

    open_dp_bound(window, tmp_path)
    window.scene.select_ids(["l7"])
    assert window.settle() and "l7 among them" in window.inspector.load.text()
    assert window.link_loads.ready(window.result, window.qdoc.doc)
    assert _reachable(window.result, (Document,)) == []


@pytest.mark.slow
def test_the_heats_tooltips_read_no_link_on_the_windows_thread(window, tmp_path, monkeypatch):
    """With Link Heat on and no cable selected, the worker prepares each result's link loads, so a
    tooltip words its bundle's busiest cable without reading every link (~0.15 s at 131k GPUs) or
    grouping them all on the window's thread; after a cable's new speed too."""
    from designer.ui.document import commands
    from tests.ui.test_live_latency import _record_link_reading

    reads, grouped = _record_link_reading(monkeypatch)
    open_dp_bound(window, tmp_path)
    doc, scene = window.qdoc.doc, window.scene
    window.qdoc.push(commands.SetFields(window.qdoc, {"l9": {"bandwidth_gbps": 50.0}}))
    assert window.settle()
    row = scene.link_layer.index[scene.cables.bundle_key(doc.find("links", "l0"))]
    tip = hover_tooltip(window, open_point_on(window, row), monkeypatch)
    assert "63 rail links (25 Gb/s InfiniBand) loaded alike" in tip
    assert reads and "MainThread" not in reads and grouped == []


def test_opening_another_design_lets_go_of_the_links_read_for_the_one_before(window, tmp_path):
    """The links' tiers, cables and ids read to word a cable's load (tens of MB at 131k GPUs) go with
    their design: File > Open of another keeps none of them."""
    open_dp_bound(window, tmp_path)
    window.scene.select_ids(["l7"])
    assert window.settle() and "l7 among them" in window.inspector.load.text()
    assert window.link_loads.groups is not None
    window.act_heat.trigger()  # Link Heat off: no view of the next design words a load
    window.open_file(str(EXAMPLES / "gb200-nvl72-144gpu.yaml"))
    assert window.settle() and window.result is not None
    assert window.link_loads.groups is None
