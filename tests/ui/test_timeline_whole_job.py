"""The timeline shows the whole job: every stage after Fit all, the critical device one click away,
arrows for waits and pipeline send -> receive (the trace's flow events), exports of the whole plot."""
import re
import xml.etree.ElementTree as ET

import pytest

from tests.conftest import EXAMPLES

DESIGN = "h100-64gpu-infiniband.yaml"


def _evaluate(*overrides):
    from designer.core.engine.evaluate import Engine
    from designer.core.io import load_document
    from designer.core.io.overrides import apply_overrides

    doc = load_document(EXAMPLES / DESIGN)
    apply_overrides(doc, list(overrides))
    engine = Engine()
    result = engine.evaluate(doc)
    result.events
    return result, engine.built_fabric


@pytest.fixture(scope="module")
def deep():
    """16 pipeline stages (80 lanes): more rows than a dock shows; the critical device is the last stage."""
    return _evaluate("parallelism.pipeline_model_parallel_size=16")[0]


@pytest.fixture(scope="module")
def four():
    return _evaluate("parallelism.pipeline_model_parallel_size=4")


@pytest.fixture
def timeline(qtbot):
    from designer.ui.panels import TimelinePanel

    panel = TimelinePanel()
    qtbot.addWidget(panel)
    panel.resize(1400, 420)
    panel.show()
    qtbot.waitExposed(panel)
    return panel


def _stages_in_view(timeline):
    top, bottom = timeline.vb.viewRange()[1]
    return {timeline.result.devices[d]["stage"] for r, (d, _) in enumerate(timeline.rows) if top <= r <= bottom}


def test_fit_all_gives_every_stage_a_row_in_view(timeline, deep, qtbot):
    from PySide6.QtWidgets import QAbstractSlider

    timeline.show_result(deep)
    stages = {info["stage"] for info in deep.devices.values()}
    assert len(stages) == 16
    assert _stages_in_view(timeline) == stages  # fitted to the dock from the start
    timeline.act_merge_lanes.trigger()  # the user asks for a row per lane
    assert not timeline.lanes_merged
    assert _stages_in_view(timeline) != stages  # 80 lanes: a dock shows some of them
    assert timeline.scrollbar.isVisible()
    timeline.scrollbar.triggerAction(QAbstractSlider.SliderToMaximum)  # the scroll bar reaches the last stage
    assert 15 in _stages_in_view(timeline) and 0 not in _stages_in_view(timeline)

    timeline.act_fit_all.trigger()
    assert _stages_in_view(timeline) == stages
    # lanes at MIN_ROW_PIXELS would not fit: one row per stage, each as tall as the view allows
    assert timeline.lanes_merged and timeline.act_merge_lanes.isChecked()
    assert len(timeline.rows) == 16 and [lane for _, lane in timeline.rows] == ["all"] * 16
    top, bottom = timeline.vb.viewRange()[1]
    assert (top, bottom) == pytest.approx((-0.5, 15.5))
    assert not timeline.scrollbar.isVisible()
    assert {label for _, label in timeline.plot.getAxis("left")._tickLevels[0]} == set(timeline.row_labels)
    # every bar is still drawn, and a resize keeps every stage in view
    assert timeline.bar_count() == len(deep.events)
    timeline.resize(1400, 300)
    qtbot.waitUntil(lambda: timeline.vb.height() < 250)
    assert _stages_in_view(timeline) == stages


def test_one_row_per_stage_keeps_hover_and_selection(timeline, deep):
    timeline.show_result(deep)  # 80 lanes do not fit the dock: one row per stage
    assert timeline.lanes_merged and timeline.act_merge_lanes.isChecked()
    i = next(i for i, e in enumerate(deep.events) if e.kind == "backward" and e.device == 0)
    e = deep.events[i]
    row = timeline.rows.index((0, "all"))
    assert timeline.event_at((e.start_s + e.end_s) / 2, row) == i
    timeline.select_event(i)
    assert timeline.selection_box.isVisible()
    timeline.act_merge_lanes.trigger()  # back to a row per lane; the selection stays
    assert timeline.selected_event() == i and not timeline.lanes_merged
    assert (0, "compute") in timeline.rows


def test_critical_device_action_scrolls_to_and_selects_it(timeline, deep, four):
    timeline.show_result(deep)
    timeline.act_merge_lanes.trigger()  # a row per lane: 80 rows, more than the dock shows
    critical = deep.critical_device
    rows = [r for r, (d, _) in enumerate(timeline.rows) if d == critical]
    top, bottom = timeline.vb.viewRange()[1]
    assert rows[-1] > bottom  # out of view at first
    timeline.act_critical.trigger()
    assert timeline.selected_device() == critical
    top, bottom = timeline.vb.viewRange()[1]
    assert top <= rows[0] and rows[-1] <= bottom
    assert len(timeline.marks.device_items) == 1
    assert f"stage {deep.devices[critical]['stage']} gpu{critical}" in timeline.info.text()
    timeline.show_result(deep)  # the same step again (an edit that changed none of it): the selection stays
    assert timeline.selected_device() == critical and len(timeline.marks.device_items) == 1
    timeline.show_result(four[0])  # another step drops the selection
    assert timeline.selected_device() is None and timeline.marks.device_items == []


def test_arrows_for_a_known_wait_and_a_pipeline_send(timeline, four, qtbot):
    result, _ = four
    events = result.events
    timeline.show_result(result)
    stage = {d: info["stage"] for d, info in result.devices.items()}
    # stage 1 waits for micro-batch 0's activation: its arrow starts at stage 0's send of it
    wait = next(i for i, e in enumerate(events) if stage[e.device] == 1 and e.label == "wait before F0 c0")
    source = dict((b, a) for a, b in timeline.arrow_pairs("wait"))[wait]
    assert events[source].label == "send activation F0 c0" and stage[events[source].device] == 0
    assert timeline.related_event() is None
    timeline.select_event(wait)
    assert timeline.related_event() == source
    # that send goes to the op that received it: stage 1's forward of micro-batch 0
    send = source
    received = dict(timeline.arrow_pairs("pp"))[send]
    assert events[received].label == "F0 c0" and events[received].kind == "forward"
    assert stage[events[received].device] == 1
    # a backward send goes down a stage, to the first bar of that backward op
    grad = next(i for i, e in enumerate(events) if stage[e.device] == 3 and e.label == "send gradient B0 c0")
    back = dict(timeline.arrow_pairs("pp"))[grad]
    assert stage[events[back].device] == 2 and events[back].label == "B0 c0"
    assert events[back].start_s == min(e.start_s for e in events if e.device == events[back].device
                                       and e.label == "B0 c0" and e.stream == "compute")
    sends = [i for i, e in enumerate(events) if e.stream == "pp" and e.label.startswith("send ")]
    assert len(timeline.arrow_pairs("pp")) == len(sends)  # every send in one replica has its receiver
    # drawn: zoomed in on the first micro-batches, the arrows there are painted (the selected one thicker)
    arrows = timeline.arrows
    k = list(zip(arrows.source.tolist(), arrows.target.tolist())).index((send, received))
    assert arrows.x0[k] == events[send].end_s and arrows.x1[k] == events[received].start_s
    timeline.vb.setXRange(0.0, events[received].end_s * 3, padding=0)
    timeline.graphics.grab()
    assert arrows.drawn > 1 and len(arrows.emphasis) >= 1
    timeline.act_arrows.trigger()  # off: only the selected bar's arrows
    timeline.graphics.grab()
    assert arrows.drawn == len(arrows.emphasis)


def _svg_text(path) -> str:
    return " ".join(t.strip() for t in ET.parse(path).getroot().itertext() if t.strip())


@pytest.mark.slow
def test_exports_hold_the_whole_plot_under_a_title(timeline, deep, tmp_path):
    from PySide6.QtGui import QImage

    from designer.ui.panels.timeline_export import EXPORT_ROW_PIXELS

    timeline.show_result(deep)
    timeline.design_name = DESIGN
    timeline.act_merge_lanes.trigger()  # a row per lane: 80 rows, more than the dock shows
    assert _stages_in_view(timeline) != {info["stage"] for info in deep.devices.values()}  # the dock shows part
    svg = timeline.export(tmp_path / "whole.svg")
    text = _svg_text(svg)
    assert DESIGN in text and "PP 16" in text and "TP 2" in text and "DP 2" in text and "1F1B" in text
    for device, info in deep.devices.items():
        assert f"stage {info['stage']} gpu{device}" in text  # every stage's label
    assert re.search(r"step \d+\.\d{3} s", text)
    png = QImage(str(timeline.export(tmp_path / "whole.png")))
    assert not png.isNull()
    assert png.height() >= 2 * len(timeline.rows) * EXPORT_ROW_PIXELS  # 2x: every row at full height
    pdf = timeline.export(tmp_path / "whole.pdf").read_bytes()
    assert pdf.startswith(b"%PDF") and len(pdf) > 10_000
    # one row per stage exports every stage too
    timeline.act_merge_lanes.trigger()
    text = _svg_text(timeline.export(tmp_path / "merged.svg"))
    assert all(f"stage {info['stage']} gpu{d}" in text for d, info in deep.devices.items())
    assert "one row per stage" in text


def test_main_window_export_names_the_design(empty_window, qtbot, tmp_path):
    window = empty_window
    window.open_file(str(EXAMPLES / DESIGN))
    assert window.settle() and window.result is not None
    path = window.exports.panel("timeline", str(tmp_path / "t.svg"))
    assert path
    assert window.qdoc.name.startswith("h100-64gpu-infiniband")
    assert f"{window.qdoc.name} — TP 2" in _svg_text(path)


def test_trace_flow_pairs_match_the_timeline_arrows(timeline, four):
    from designer.core.export.trace import trace_events

    result, fabric = four
    trace = trace_events(result, fabric.gpu_node, fabric.node_ids, fabric.gpu_local)["traceEvents"]
    slices = [e for e in trace if e["ph"] == "X"]  # one per result event, in order
    starts = [e for e in trace if e["ph"] == "s"]
    finishes = [e for e in trace if e["ph"] == "f"]
    assert sorted(e["id"] for e in starts) == sorted(e["id"] for e in finishes)  # matched pairs
    assert len({e["id"] for e in starts}) == len(starts)
    by_place: dict = {}
    for index, s in enumerate(slices):
        by_place.setdefault((s["pid"], s["tid"]), []).append((s["ts"], s["ts"] + s["dur"], index))

    def slice_of(flow):
        inside = [i for a, b, i in by_place[(flow["pid"], flow["tid"])] if a <= flow["ts"] <= b]
        assert len(inside) == 1
        return inside[0]

    finish_of = {e["id"]: e for e in finishes}
    pairs = {"wait": set(), "pp": set()}
    for s in starts:
        f = finish_of[s["id"]]
        assert s["cat"] == f["cat"] and f["bp"] == "e" and f["ts"] >= s["ts"]
        pairs[s["cat"]].add((slice_of(s), slice_of(f)))
    assert len(pairs["pp"]) > 100
    for send, receive in pairs["pp"]:
        assert slices[send]["name"].startswith("send ") and slices[receive]["cat"] == "compute"
        assert slices[send]["name"].endswith(" " + slices[receive]["name"])  # the same op
    timeline.show_result(result)
    assert pairs["pp"] == set(timeline.arrow_pairs("pp"))
    assert pairs["wait"] == set(timeline.arrow_pairs("wait"))


def test_critical_device_after_fit_all_of_many_stages_is_readable(timeline, qtbot):
    """128 stages fitted in a short dock are a few pixels each: the action zooms to readable rows."""
    from types import SimpleNamespace

    from designer.core.engine.evaluate import Event
    from designer.ui.panels.timeline_rows_in_view import MIN_ROW_PIXELS

    events = [Event(d, lane, k * 1e-3, k * 1e-3 + 8e-4, kind, f"{kind} {k}", k, 0)
              for d in range(128) for k, (lane, kind) in enumerate([("compute", "forward"), ("tp", "tp_comm")] * 4)]
    devices = {d: {"stage": d, "replica": 0} for d in range(128)}
    result = SimpleNamespace(events=events, devices=devices, step_time_s=8e-3, critical_device=100, plan={})
    timeline.show_result(result)
    timeline.act_fit_all.trigger()
    assert timeline.lanes_merged and len(timeline.rows) == 128
    top, bottom = timeline.vb.viewRange()[1]
    assert timeline.vb.height() / (bottom - top) < MIN_ROW_PIXELS  # all 128 in view, too thin to read
    labels = [label for _, label in timeline.plot.getAxis("left")._tickLevels[0]]
    assert "stage 0 gpu0" in labels and len(labels) < 128  # thinned, never overprinted
    timeline.act_critical.trigger()
    top, bottom = timeline.vb.viewRange()[1]
    assert top <= 100 <= bottom and timeline.vb.height() / (bottom - top) >= MIN_ROW_PIXELS - 1e-6
    assert "stage 100 gpu100" in [label for _, label in timeline.plot.getAxis("left")._tickLevels[0]]
    assert timeline.selected_device() == 100


@pytest.mark.slow
def test_a_large_step_shows_its_bars_first_and_its_arrows_after(timeline, qtbot):
    from types import SimpleNamespace

    from designer.core.engine.evaluate import Event
    from designer.ui.panels.timeline import ARROWS_AT_ONCE

    events = []
    per_device = ARROWS_AT_ONCE // 8 + 10
    for d in range(16):
        for k in range(per_device // 2):
            t = k * 1e-3
            events.append(Event(d, "compute", t, t + 6e-4, "forward", f"F{k} c0", k, 0))
            events.append(Event(d, "wait", t + 6e-4, t + 9e-4, "bubble", f"wait before F{k + 1} c0", k, 0,
                                waited_for=(d + 1) % 16))
    devices = {d: {"stage": d, "replica": 0} for d in range(16)}
    result = SimpleNamespace(events=events, devices=devices, step_time_s=per_device * 1e-3, critical_device=3,
                             plan={})
    assert len(events) > ARROWS_AT_ONCE
    timeline.show_result(result)
    assert timeline.bar_count() == len(events) and len(timeline.arrows) == 0  # the bars at once
    qtbot.waitUntil(lambda: len(timeline.arrows) > 0)  # the arrows a moment later
    assert len(timeline.arrow_pairs("wait")) == len(events) // 2  # every wait, from the bar it waited on
    timeline.show_result(result)  # the same step again: the chart and its arrows stay
    assert len(timeline.arrows.pairs("wait")) == len(events) // 2
    longer = SimpleNamespace(**{**vars(result), "step_time_s": result.step_time_s * 1.01})
    timeline.show_result(longer)  # another step: its arrows come after its bars too
    assert len(timeline.arrows) == 0
    qtbot.waitUntil(lambda: len(timeline.arrows) > 0)
    assert len(timeline.arrows.pairs("wait")) == len(events) // 2


@pytest.mark.parametrize("menu_item", ["Export Timeline Plot...", "Export Breakdown Plot..."])
def test_the_plot_export_dialog_offers_the_pdf_it_writes(empty_window, qtbot, tmp_path, monkeypatch, menu_item):
    from PySide6.QtWidgets import QFileDialog

    window = empty_window
    window.open_file(str(EXAMPLES / DESIGN))
    assert window.settle() and window.result is not None
    offered = []

    def save_name(parent=None, caption="", directory="", filters="", *args, **kwargs):
        offered.append(filters)
        return str(tmp_path / "plot.pdf"), "PDF document (*.pdf)"

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(save_name))
    file_menu = next(a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == "File")
    action = next(a for a in file_menu.actions() if a.text().replace("&", "") == menu_item)
    action.trigger()
    assert offered and "PDF document (*.pdf)" in offered[0]
    assert (tmp_path / "plot.pdf").read_bytes().startswith(b"%PDF")
