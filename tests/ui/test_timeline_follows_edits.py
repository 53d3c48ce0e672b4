"""The Timeline after edits, as a user makes them: an edit that leaves the step as it was (a spine cable
of a fat-tree deleted, then undone) keeps the chart and what is selected on it, now showing the new
result; an edit that changes the step (TP typed into the Job panel) draws it again. Each time the chart
is the one a new window draws when it opens the design saved at that moment (undone: the design opened,
whose fresh window's chart is known)."""
from __future__ import annotations

import copy

from PySide6.QtCore import QPointF, Qt
from PySide6.QtTest import QTest

from designer.core.generate import generate_fat_tree
from designer.core.io import dumps_document, save_document
from designer.core.model.job import Parallelism, Workload
from tests.ui.fresh_open import as_fresh_open
from tests.ui.test_timeline_whole_job import four, timeline  # noqa: F401  (the fixtures)


def _chart(window) -> tuple:
    """What the Timeline draws: its title, rows and bars (its dock opened, its events come)."""
    window.timeline_dock.show()
    window.timeline_dock.raise_()
    assert window.settle()
    panel = window.timeline_panel
    assert panel.result is window.results.shown_result()
    bars = panel.bars
    return (panel.title.text, tuple(panel.row_labels), panel.bar_count(), tuple(bars.start.round(9)),
            tuple(bars.end.round(9)), len(panel.arrow_pairs()))


def test_timeline_keeps_its_chart_when_the_step_is_the_same_and_redraws_it_when_not(empty_window, new_window,
                                                                                    tmp_path):
    doc = generate_fat_tree(nodes=16, gpu="H100", switch_radix=32)
    doc.set_job(Workload(preset="llama3-8b", global_batch_size=64, micro_batch_size=1),
                Parallelism(tensor_model_parallel_size=8, pipeline_model_parallel_size=2))
    path = tmp_path / "ft.yaml"
    save_document(doc, path)
    window = empty_window
    window.open_file(str(path))
    opened = as_fresh_open(window, new_window, tmp_path, "opened", _chart)
    opened_text = dumps_document(window.qdoc.doc)
    panel = window.timeline_panel
    panel.act_critical.trigger()  # "Critical device": selected and scrolled to
    critical = panel.selected_device()
    assert critical is not None

    doc = window.qdoc.doc
    switches = {s.id for s in doc.switches if s.tier == "spine"}
    spine_cable = next(c for c in doc.links if c.a.split(":")[0] in switches or c.b.split(":")[0] in switches)
    for step in ("delete", "undo"):
        before = window.result
        window.scene.select_ids([spine_cable.id])
        window.actions[step].trigger()
        assert window.settle() and window.result is not before
        assert window.result.step_time_s == before.step_time_s  # the fat-tree routes around it
        if step == "undo":  # the design opened, again
            assert dumps_document(window.qdoc.doc) == opened_text and _chart(window) == opened
        else:
            assert as_fresh_open(window, new_window, tmp_path, f"spine cable {step}", _chart) == opened
        assert panel.selected_device() == critical  # the chart kept: the selection with it

    # TP 4 typed into the Job panel: another step, another chart
    editor = window.job_panel.editors["parallelism.tensor_model_parallel_size"]
    editor.setFocus()
    editor.selectAll()
    QTest.keyClicks(editor, "4")
    QTest.keyClick(editor, Qt.Key_Return)
    assert window.settle()
    tp4 = as_fresh_open(window, new_window, tmp_path, "TP 4", _chart)
    assert tp4 != opened and panel.selected_device() is None


def test_a_result_of_the_same_step_with_a_bar_moved_is_drawn_again(timeline, four):
    """The chart is kept only for the same bars: a result of the same step time, devices and critical
    device whose one bar starts later is drawn again (its bar where it now is)."""
    result = four[0]
    timeline.show_result(result)
    events = list(result.events)
    i = next(i for i, e in enumerate(events) if e.end_s < result.step_time_s / 2 and e.end_s > e.start_s)
    later = (events[i].start_s + events[i].end_s) / 2
    events[i] = copy.copy(events[i])
    events[i].start_s = later
    moved = copy.copy(result)
    moved._events = events
    assert later not in timeline.bars.start
    timeline.show_result(moved)
    assert timeline.result is moved and later in timeline.bars.start
    timeline.show_result(result)
    assert timeline.result is result and later not in timeline.bars.start


def _with_resource(result, resource: str):
    """`result` with every communication event on the scale-up domain named `resource` (how a
    collective's bottleneck names the server it runs in)."""
    named = copy.copy(result)
    named._events = [_renamed(e, resource) if e.group else e for e in result.events]
    return named


def _renamed(event, resource: str):
    event = copy.copy(event)
    event.resource = resource
    return event


def test_the_clicked_bar_of_a_kept_chart_says_what_it_is_in_the_new_result(timeline, four):
    """A server renamed, the step unchanged: the chart is kept, and the detail line under it names the
    server by its new id (it is read from the new result's events, not the ones of before)."""
    before = _with_resource(four[0], "scale-up of node5 (nvlink)")
    timeline.show_result(before)
    i = next(i for i, e in enumerate(before.events)
             if e.group and e.end_s > e.start_s and (e.device, e.stream) in timeline.layout_rows.row_index)
    e = before.events[i]
    row = timeline.layout_rows.row_index[(e.device, e.stream)]
    timeline.vb.setXRange(e.start_s - (e.end_s - e.start_s), e.end_s + (e.end_s - e.start_s), padding=0)
    QTest.qWait(50)
    point = timeline.graphics.mapFromScene(timeline.vb.mapViewToScene(QPointF((e.start_s + e.end_s) / 2, row)))
    QTest.mouseClick(timeline.graphics.viewport(), Qt.LeftButton, Qt.NoModifier, point)
    assert timeline.selected_event() == i
    assert "resource scale-up of node5 (nvlink)" in timeline.info.full_text()

    bars = timeline.bars
    after = _with_resource(four[0], "scale-up of gpu-box-5 (nvlink)")  # node5 renamed gpu-box-5
    timeline.show_result(after)
    assert timeline.result is after and timeline.bars is bars  # the chart kept
    assert timeline.selected_event() == i
    detail = timeline.info.full_text()
    assert "resource scale-up of gpu-box-5 (nvlink)" in detail and "node5" not in detail
    assert detail == timeline.event_text(i).replace("\n", "  ·  ")
    assert "gpu-box-5" in timeline.graphics.toolTip()
