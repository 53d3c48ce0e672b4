"""Result panels: the step breakdown, the per-device timeline, and their exports."""
import csv
import dataclasses
import xml.etree.ElementTree as ET
from types import SimpleNamespace

import pytest


from tests.conftest import EXAMPLES  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _evaluate(name: str):
    from designer.core.engine.evaluate import Engine
    from designer.core.io import load_document

    result = Engine().evaluate(load_document(EXAMPLES / name))
    result.events  # built once, shared by the tests
    return result


@pytest.fixture(scope="module")
def h100():
    return _evaluate("h100-roce-2to1-ethernet.yaml")


@pytest.fixture(scope="module")
def a100():
    return _evaluate("a100-1024gpu-rail-infiniband.yaml")


@pytest.fixture
def breakdown(qtbot):
    from designer.ui.panels import BreakdownPanel

    panel = BreakdownPanel()
    qtbot.addWidget(panel)
    panel.resize(1400, 500)
    panel.show()
    return panel


@pytest.fixture
def timeline(qtbot):
    from designer.ui.panels import TimelinePanel

    panel = TimelinePanel()
    qtbot.addWidget(panel)
    panel.resize(1400, 500)
    panel.show()
    return panel


def _check_png(path):
    from PySide6.QtGui import QImage

    assert path.read_bytes()[:8] == PNG_MAGIC
    image = QImage(str(path))
    assert not image.isNull()
    return image


def _check_svg(path):
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    return root


def _no_temporaries(folder):
    assert not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


# ---- breakdown ------------------------------------------------------------------------------------

def test_category_colors_cover_the_breakdown():
    from designer.core.engine.evaluate import BREAKDOWN_KEYS
    from designer.ui.panels import CATEGORY_COLORS

    assert set(CATEGORY_COLORS) == set(BREAKDOWN_KEYS)
    assert len(set(CATEGORY_COLORS.values())) == len(CATEGORY_COLORS)  # all distinct


def test_breakdown_shows_result(breakdown, h100):
    from designer.ui.panels.plot_style import CATEGORY_COLORS

    assert breakdown.diff_text() == "first evaluation"
    breakdown.show_result(h100)
    assert breakdown.message.isHidden()  # the result page shows instead of the message
    assert f"{h100.step_time_s:.3f} s" in breakdown.headline["step"].text()
    assert f"{h100.tokens_per_s:,.0f}" in breakdown.headline["tokens"].text()
    assert f"{h100.model_tflops_per_gpu:.1f}" in breakdown.headline["tflops"].text()
    assert f"{h100.mfu * 100:.1f}%" in breakdown.headline["mfu"].text()
    assert f"{h100.hfu * 100:.1f}%" in breakdown.headline["hfu"].text()
    assert breakdown.diff_text() == "first evaluation"

    segments = breakdown.segments()
    assert list(segments) == [k for k, v in h100.breakdown_s.items() if v > 0]
    assert sum(w for _, w in segments.values()) == pytest.approx(h100.step_time_s, rel=1e-9)
    x = 0.0
    for key, (x0, width) in segments.items():  # stacked: each starts where the previous ends
        assert x0 == pytest.approx(x, abs=1e-12)
        assert width == pytest.approx(h100.breakdown_s[key])
        x += width
    # each segment is a bar in its category's colour
    import pyqtgraph as pg

    brushes = [item.opts["brush"] for item in breakdown.plots.step.plot.items if isinstance(item, pg.BarGraphItem)]
    for key in segments:
        if key not in ("bubble", "imbalance_wait"):  # those are hatched over a light fill
            assert any(pg.mkBrush(b).color().name() == CATEGORY_COLORS[key] for b in brushes)
    # the biggest segment is labelled with its seconds and share
    labels = [item.textItem.toPlainText() for item, *_ in breakdown.plots.step.labels if item.isVisible()]
    assert any("compute" in t and f"{h100.breakdown_s['compute'] / h100.step_time_s:.1%}" in t for t in labels)


def test_breakdown_memory_against_hbm(breakdown, h100):
    from designer.core.model import default_catalog

    breakdown.show_result(h100)
    hbm = default_catalog().accelerator(h100.plan["accelerator"]).hbm_gib
    mem = h100.memory_gib_per_gpu
    assert sum(w for _, w in breakdown.memory_segments().values()) == pytest.approx(mem["total"], rel=1e-6)
    assert breakdown.plots.hbm_line is not None and breakdown.plots.hbm_line.value() == pytest.approx(hbm)
    assert h100.fits_in_memory
    assert breakdown.plots.hbm_line.pen.color().name() != "#dc2626"

    too_big = dataclasses.replace(h100, fits_in_memory=False,
                                  memory_gib_per_gpu={**mem, "activations": 90.0, "total": mem["total"] + 90.0})
    breakdown.show_result(too_big)
    assert breakdown.plots.hbm_line.pen.color().name() == "#dc2626"
    assert "does not fit" in breakdown.headline["memory"].text()


def test_breakdown_in_turns_paints_a_bar_at_a_time_and_ends_as_drawn_at_once(breakdown, h100, qtbot):
    from designer.ui.panels import BreakdownPanel

    at_once = BreakdownPanel()
    qtbot.addWidget(at_once)
    at_once.show_result(h100)
    breakdown.show_result(h100, in_turns=True)  # as the window shows a new result
    assert f"{h100.step_time_s:.3f} s" in breakdown.headline["step"].text()  # the figures at once
    assert breakdown.drawing and not breakdown.memory_segments()  # the bars once the figures are painted
    qtbot.waitUntil(lambda: not breakdown.drawing)
    assert breakdown.segments() == at_once.segments()
    assert breakdown.memory_segments() == at_once.memory_segments()
    assert breakdown.plots.hbm_line.value() == at_once.plots.hbm_line.value()
    breakdown.show_result(h100, in_turns=True)  # the same parts again: moved at once
    assert not breakdown.drawing and breakdown.memory_segments() == at_once.memory_segments()


def test_breakdown_diff_names_largest_change(breakdown, h100):
    breakdown.show_result(h100)
    slower = dataclasses.replace(
        h100, step_time_s=h100.step_time_s + 0.5,
        breakdown_s={**h100.breakdown_s, "dp_comm": h100.breakdown_s["dp_comm"] + 0.4,
                     "compute": h100.breakdown_s["compute"] + 0.1})
    breakdown.show_result(slower)
    pct = 0.5 / h100.step_time_s * 100
    assert breakdown.diff_text() == f"+{pct:.1f}% step time: dp_comm exposed +0.40 s, compute +0.10 s"
    assert breakdown.diff_text() in breakdown.diff_label.text()

    faster = dataclasses.replace(slower, step_time_s=slower.step_time_s - 0.2,
                                 breakdown_s={**slower.breakdown_s, "tp_comm": slower.breakdown_s["tp_comm"] - 0.2})
    breakdown.show_result(faster)
    assert breakdown.diff_text().startswith("-")
    assert "tp_comm exposed -0.20 s" in breakdown.diff_text()
    breakdown.show_result(faster)
    assert breakdown.diff_text() == "+0.0% step time: no category changed"


def test_breakdown_diff_between_real_evaluations(breakdown, h100, a100):
    breakdown.show_result(h100)
    breakdown.show_result(a100)  # a100 is slower
    changes = {k: a100.breakdown_s[k] - h100.breakdown_s[k] for k in h100.breakdown_s}
    largest = max(changes, key=lambda k: abs(changes[k]))
    text = breakdown.diff_text()
    assert text.startswith("+")
    assert text.split(": ", 1)[1].startswith(largest)
    assert ("+" if changes[largest] > 0 else "-") in text.split(", ")[0].split(largest, 1)[1]


def test_breakdown_clear_keeps_previous(breakdown, h100):
    breakdown.show_result(h100)
    breakdown.clear("fix the errors to evaluate")
    assert breakdown.message.text() == "fix the errors to evaluate"
    assert not breakdown.message.isHidden()
    breakdown.show_result(h100)
    assert breakdown.diff_text().endswith("no category changed")


def test_breakdown_hover_names_the_segment(breakdown, h100):
    from PySide6.QtCore import QPointF

    breakdown.show_result(h100)
    x0, width = breakdown.segments()["tp_comm"]
    breakdown.plots.on_mouse_moved(breakdown.plots.step.plot.vb.mapViewToScene(QPointF(x0 + width / 2, 0.0)))
    tip = breakdown.plots.toolTip()
    assert tip.startswith(f"TP comm: {h100.breakdown_s['tp_comm']:.3f} s") and "overlapped" in tip
    x0, width = breakdown.memory_segments()["activations"]
    breakdown.plots.on_mouse_moved(breakdown.plots.memory.plot.vb.mapViewToScene(QPointF(x0 + width / 2, 0.0)))
    assert breakdown.plots.toolTip().startswith("activations:")


def test_breakdown_compact_when_docked_small(breakdown, h100, qtbot):
    breakdown.show_result(h100)
    assert breakdown.plots.memory.legend.isVisible() and breakdown.figures.columns == len(breakdown.headline)
    hint = breakdown.sizeHint()
    breakdown.resize(520, 300)
    qtbot.waitUntil(lambda: not breakdown.plots.memory.legend.isVisible())
    assert not breakdown.plots.memory.legend.isVisible() and not breakdown.plots.title.isVisible()
    assert breakdown.figures.columns < len(breakdown.headline)
    step_text = breakdown.headline["step"].text()
    assert "step" in step_text and f"{h100.step_time_s:.3f} s" in step_text
    assert breakdown.sizeHint() == hint  # a result or a resize never changes what the panel asks for
    breakdown.resize(1400, 500)
    qtbot.waitUntil(lambda: breakdown.plots.memory.legend.isVisible())
    assert breakdown.plots.memory.legend.isVisible() and breakdown.figures.columns == len(breakdown.headline)


def test_breakdown_exports(breakdown, h100, tmp_path):
    breakdown.show_result(h100)
    image = _check_png(breakdown.export(tmp_path / "breakdown.png"))
    assert abs(image.width() - 2 * breakdown.plots.ci.sceneBoundingRect().width()) <= 2
    _check_svg(breakdown.export(tmp_path / "breakdown.svg"))
    assert breakdown.export(tmp_path / "breakdown.pdf").read_bytes()[:5] == b"%PDF-"

    with open(breakdown.export(tmp_path / "breakdown.csv"), newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["category", "seconds", "share", "gib_per_gpu"]
    by_name = {r[0]: r for r in rows[1:]}
    for key, seconds in h100.breakdown_s.items():
        assert float(by_name[key][1]) == pytest.approx(seconds, rel=1e-12, abs=1e-15)
        assert float(by_name[key][2]) == pytest.approx(seconds / h100.step_time_s)
    assert sum(float(by_name[k][1]) for k in h100.breakdown_s) == pytest.approx(h100.step_time_s)
    for key, gib in h100.memory_gib_per_gpu.items():
        assert float(by_name[f"memory:{key}"][3]) == pytest.approx(gib)
    assert "memory:hbm" in by_name
    with pytest.raises(ValueError):
        breakdown.export(tmp_path / "breakdown.gif")
    _no_temporaries(tmp_path)


# ---- timeline -------------------------------------------------------------------------------------

def test_timeline_one_item_per_kind(timeline, h100):
    timeline.show_result(h100)
    events = h100.events
    kinds = {e.kind for e in events}
    items = timeline.bar_items()
    assert timeline.bar_count() == len(events)
    assert sum(len(item.x0) for item in items.values()) == len(events)
    assert set(items) == kinds
    assert len(items) == len(kinds)
    for kind, item in items.items():
        assert len(item.x0) == len(item.width) == len(item.y0) == sum(e.kind == kind for e in events)
    # no bar items beyond these: the plot holds one KindBars per kind
    from designer.ui.panels.timeline import KindBars

    assert sum(isinstance(i, KindBars) for i in timeline.plot.items) == len(kinds)


def test_timeline_rows(timeline, h100):
    timeline.show_result(h100)
    assert timeline.row_labels[0] == "stage 0 gpu0 compute"
    assert "stage 1 gpu128 wait" in timeline.row_labels
    used = {(e.device, e.stream) for e in h100.events}
    assert set(timeline.rows) == used  # no empty lanes
    for device, info in h100.devices.items():
        lanes = [lane for d, lane in timeline.rows if d == device]
        order = ("compute", "tp", "cp", "ep", "pp", "dp", "wait")
        assert lanes == sorted(lanes, key=order.index)
        assert all(timeline.row_labels[timeline.rows.index((device, lane))].startswith(f"stage {info['stage']} ")
                   for lane in lanes)


def test_timeline_lookup_at_midpoint(timeline, a100):
    timeline.show_result(a100)
    events = a100.events
    picks = {}
    for i, e in enumerate(events):
        if e.kind not in picks and e.end_s > e.start_s and not e.kind.endswith("_hidden"):
            picks[e.kind] = i
    assert {"forward", "backward", "tp_comm", "pp_comm", "bubble", "imbalance_wait"} <= set(picks)
    for kind, i in picks.items():
        e = events[i]
        row = timeline.rows.index((e.device, e.stream))
        assert timeline.event_at((e.start_s + e.end_s) / 2, row) == i, kind
    # a miss is None, unless within the tolerance
    e = events[picks["imbalance_wait"]]
    row = timeline.rows.index((e.device, e.stream))
    assert timeline.event_at(-1.0, row) is None
    assert timeline.event_at(e.end_s + 1e-4, row, tolerance_s=1e-3) == picks["imbalance_wait"]


def test_timeline_hover_shows_details(timeline, h100):
    from PySide6.QtCore import QPointF

    timeline.show_result(h100)
    events = h100.events
    i = next(i for i, e in enumerate(events) if e.stream == "pp" and e.bytes)
    e = events[i]
    row = timeline.rows.index((e.device, e.stream))
    timeline.vb.setRange(xRange=(e.start_s - 0.01, e.end_s + 0.01), padding=0)
    pos = timeline.vb.mapViewToScene(QPointF((e.start_s + e.end_s) / 2, row))
    timeline.mouse.moved(pos)
    text = timeline.info.text()
    assert e.label in text and e.kind in text
    assert f"{(e.end_s - e.start_s) * 1e3:.3f} ms" in text
    assert f"micro-batch {e.micro_batch}" in text and f"chunk {e.chunk}" in text
    assert "bytes" in text and "group pp" in text
    timeline.mouse.moved(timeline.vb.mapViewToScene(QPointF(e.start_s - 0.009, row + 0.45)))
    assert timeline.info.text() == timeline.hint


def test_timeline_click_wait_highlights_waited_for(timeline, h100):
    timeline.show_result(h100)
    events = h100.events
    i = next(i for i, e in enumerate(events) if e.waited_for is not None and e.waited_for != e.device)
    wait = events[i]
    timeline.select_event(i)
    assert timeline.selected_event() == i
    rows = timeline.highlighted_rows()
    assert rows and rows == [r for r, (d, _) in enumerate(timeline.rows) if d == wait.waited_for]
    related = timeline.related_event()
    assert related is not None
    assert events[related].device == wait.waited_for
    assert events[related].end_s <= wait.end_s + 1e-9
    assert timeline.selection_box.isVisible() and timeline.related_box.isVisible()
    assert len(timeline.marks.highlight_items) == 1

    # selecting a bar that is not a wait clears the highlight
    j = next(j for j, e in enumerate(events) if e.kind == "forward")
    timeline.select_event(j)
    assert timeline.highlighted_rows() == [] and timeline.related_event() is None
    assert timeline.marks.highlight_items == []


def test_timeline_mouse_click_selects(timeline, h100):
    from PySide6.QtCore import QPointF, Qt

    timeline.show_result(h100)
    events = h100.events
    i = max((i for i, e in enumerate(events) if e.kind == "bubble" and e.waited_for is not None),
            key=lambda i: events[i].end_s - events[i].start_s)
    e = events[i]
    row = timeline.rows.index((e.device, e.stream))
    pos = timeline.vb.mapViewToScene(QPointF((e.start_s + e.end_s) / 2, row))
    click = SimpleNamespace(button=lambda: Qt.LeftButton, scenePos=lambda: pos)
    timeline.mouse.clicked(click)
    assert timeline.selected_event() == i
    assert timeline.highlighted_rows() == [r for r, (d, _) in enumerate(timeline.rows) if d == e.waited_for]
    empty = timeline.vb.mapViewToScene(QPointF(-h100.step_time_s * 0.004, row + 0.45))
    timeline.mouse.clicked(SimpleNamespace(button=lambda: Qt.LeftButton, scenePos=lambda: empty))
    assert timeline.selected_event() is None and timeline.highlighted_rows() == []


def test_timeline_zoom_is_time_only(timeline, h100):
    timeline.show_result(h100)
    (x0, x1), (y0, y1) = timeline.vb.viewRange()
    assert x0 <= 0.0 and x1 >= h100.step_time_s
    assert (y0, y1) == pytest.approx((-0.5, len(timeline.rows) - 0.5))
    timeline.vb.scaleBy(x=0.5, y=1.0)
    (a0, a1), (b0, b1) = timeline.vb.viewRange()
    assert a1 - a0 == pytest.approx((x1 - x0) / 2)
    assert (b0, b1) == pytest.approx((y0, y1))


def test_timeline_small_view_shows_fewer_rows(timeline, a100, qtbot):
    from designer.ui.panels.timeline_rows_in_view import MIN_ROW_PIXELS

    timeline.show_result(a100)
    assert len(timeline.rows) == 40
    timeline.resize(900, 300)
    qtbot.waitUntil(lambda: timeline.vb.viewRange()[1][1] - timeline.vb.viewRange()[1][0] < 40)
    y0, y1 = timeline.vb.viewRange()[1]
    assert y0 == pytest.approx(-0.5)
    assert timeline.vb.height() / (y1 - y0) >= MIN_ROW_PIXELS - 1e-6
    assert timeline.sizeHint().height() == 340


def test_timeline_exports(timeline, h100, tmp_path):
    timeline.show_result(h100)
    _check_png(timeline.export(tmp_path / "timeline.png"))
    _check_svg(timeline.export(tmp_path / "timeline.svg"))
    with open(timeline.export(tmp_path / "timeline.csv"), newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["device", "stream", "kind", "label", "start_s", "end_s", "micro_batch", "chunk"]
    assert len(rows) == len(h100.events) + 1
    first = h100.events[0]
    assert rows[1][:4] == [str(first.device), first.stream, first.kind, first.label]
    assert float(rows[1][4]) == first.start_s and float(rows[1][5]) == first.end_s
    with pytest.raises(ValueError):
        timeline.export(tmp_path / "timeline.txt")
    _no_temporaries(tmp_path)


def _synthetic(devices: int, stages: int, per_device: int, critical: int = 0):
    """A result-like object with `devices` representative GPUs and `per_device` events each."""
    from designer.core.engine.evaluate import Event

    kinds = [("compute", "forward"), ("compute", "backward"), ("tp", "tp_comm"), ("tp", "tp_comm_hidden"),
             ("pp", "pp_comm"), ("wait", "bubble")]
    events = []
    for d in range(devices):
        for k in range(per_device):
            stream, kind = kinds[k % len(kinds)]
            t = k * 1e-3
            events.append(Event(d, stream, t, t + 0.8e-3, kind, f"{kind} {k}", k, 0,
                                waited_for=(d + 1) % devices if kind == "bubble" else None))
    info = {d: {"stage": d % stages, "replica": d // stages, "node": f"n{d}"} for d in range(devices)}
    return SimpleNamespace(events=events, devices=info, step_time_s=per_device * 1e-3, critical_device=critical)


def test_timeline_many_bars_one_item_per_kind(timeline):
    result = _synthetic(devices=50, stages=10, per_device=1000)
    timeline.show_result(result)
    assert timeline.bar_count() == 50_000
    assert len(timeline.bar_items()) == 6
    timeline.graphics.grab()  # paints every kind once


def test_timeline_collapses_many_devices(timeline):
    result = _synthetic(devices=80, stages=8, per_device=12, critical=42)  # 10 distinct replicas
    timeline.show_result(result)
    assert timeline.collapsed
    shown = sorted({d for d, _ in timeline.rows})
    assert shown == [d for d in range(80) if d // 8 == 42 // 8]  # the critical device's replica, every stage
    assert timeline.bar_count() == 8 * 12
    assert timeline.row_labels[0].startswith("stage 0 r5 gpu40 ")


def test_timeline_clear(timeline, h100):
    timeline.show_result(h100)
    timeline.clear("evaluating...")
    assert timeline.bar_items() == {} and timeline.rows == []
    assert timeline.event_at(1.0, 0) is None
    timeline.show_result(h100)
    assert timeline.bar_count() == len(h100.events)


# ---- export helpers -------------------------------------------------------------------------------

def test_export_plot_formats(qtbot, tmp_path):
    import pyqtgraph as pg

    from designer.ui.panels.plot_export import export_plot, write_csv

    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    widget.resize(400, 300)
    widget.plot([0, 1, 2], [2, 0, 1])
    image = _check_png(export_plot(widget, tmp_path / "p.png"))
    assert image.width() == pytest.approx(2 * widget.plotItem.sceneBoundingRect().width(), abs=2)
    _check_svg(export_plot(widget.plotItem, tmp_path / "p.svg"))
    assert export_plot(widget, tmp_path / "p.pdf").read_bytes()[:5] == b"%PDF-"
    with pytest.raises(ValueError, match="unknown extension"):
        export_plot(widget, tmp_path / "p.bmp")
    out = write_csv(tmp_path / "t.csv", ["a", "b"], [[1, "x,y"], [2, 'q"']])
    with open(out, newline="") as fh:
        assert list(csv.reader(fh)) == [["a", "b"], ["1", "x,y"], ["2", 'q"']]
    _no_temporaries(tmp_path)
