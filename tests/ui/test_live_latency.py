"""An edit's step time reaches the screen without the work of the panels that follow it:
the Timeline's events are built off the UI thread and only while the Timeline can be seen; the
Breakdown moves its bars for a result of the same categories instead of drawing them anew; the
Timeline's "updating" note moves nothing; bars thinner than a pixel are drawn one per pixel cell."""
import threading

import numpy as np
import pytest

from designer.core.engine.evaluate import Engine
from designer.core.io import load_document
from tests.conftest import EXAMPLES
from tests.ui.test_live_edits import open_example
from tests.ui.test_stale_panels import TP, type_like_a_user

H100 = EXAMPLES / "h100-64gpu-infiniband.yaml"


@pytest.fixture(autouse=True)
def no_garbage_left_behind():
    """Each result holds itself (result.jobs[0].result), so the results of these tests' windows are
    cyclic garbage: collected here, not in a later test's timed wait (a 1.3 s pass otherwise)."""
    yield
    import gc

    gc.collect()


def test_a_hidden_timeline_builds_no_events_until_it_is_shown(empty_window, monkeypatch):
    import designer.core.engine.evaluate as evaluate_module

    built = []
    real = evaluate_module.build_events
    monkeypatch.setattr(evaluate_module, "build_events", lambda *args: built.append(1) or real(*args))
    window = empty_window
    open_example(window, H100)
    assert window.timeline_panel.result is window.result and window.timeline_panel.bar_count() > 0

    window.timeline_dock.toggleViewAction().trigger()  # View > Timeline: closed
    built.clear()
    assert not window.timeline_panel.isVisible()
    type_like_a_user(window, TP, "4")
    assert window.settle() and window.result is not None
    assert window.breakdown_panel.result is window.result  # the step time is shown
    assert window.timeline_panel.result is not window.result and not built  # nothing built for it: not even its events

    window.timeline_dock.toggleViewAction().trigger()  # shown again: it asks for the events now
    assert window.timeline_panel.isVisible()
    assert window.settle()
    assert window.timeline_panel.result is window.result and window.timeline_panel.bar_count() > 0
    assert built and window.timeline_panel.bar_count() > 0  # its events, built now
    assert window.timeline_panel.revision == window.breakdown_panel.revision == window.qdoc.doc.revision
    assert not window.timeline_panel.is_updating()


def test_the_timeline_and_its_arrows_are_built_off_the_ui_thread(empty_window, monkeypatch):
    import designer.ui.work.worker as worker_module

    import designer.ui.panels.timeline_data as data_module

    threads, passes = [], []
    real = worker_module.timeline_data

    def recording(result):
        threads.append(threading.current_thread().name)
        return real(result)

    def recorded(name):
        real_pass = getattr(data_module, name)

        def one_pass(*args):
            passes.append(threading.current_thread().name)
            return real_pass(*args)
        monkeypatch.setattr(data_module, name, one_pass)

    monkeypatch.setattr(worker_module, "timeline_data", recording)
    for name in ("event_columns", "wait_arrows", "send_receive_arrows"):
        recorded(name)
    window = empty_window
    open_example(window, H100)
    type_like_a_user(window, TP, "4")
    assert window.settle() and window.timeline_panel.result is window.result
    assert threads and set(threads) == {"designer-timeline"}
    # what the panel draws is what the worker built: no second pass over the events on the UI thread
    window.timeline_panel.act_merge_lanes.trigger()  # the rows again: the columns and arrows are not read again
    window.timeline_panel.act_fit_all.trigger()
    window.timeline_panel.arrow_pairs()
    assert window.timeline_panel.bar_count() > 0
    assert passes and set(passes) == {"designer-timeline"}


def _two_results():
    import dataclasses

    doc = load_document(H100)
    engine = Engine()
    first = engine.evaluate(doc.snapshot())
    doc.set_job(parallelism=dataclasses.replace(doc.spec.parallelism, tensor_model_parallel_size=4))
    second = engine.evaluate(doc.snapshot())
    assert first.step_time_s != second.step_time_s
    return first, second


def _two_panels(qtbot, panel_class, height: int):
    """Two shown panels of a kind: one that will show both results, one that shows only the second."""
    panels = panel_class(), panel_class()
    for panel in panels:
        qtbot.addWidget(panel)
        panel.resize(900, height)
        panel.show()
    return panels


def test_a_result_of_the_same_categories_moves_the_breakdown_bars(qtbot):
    from designer.ui.panels.breakdown import BreakdownPanel

    first, second = _two_results()
    moved, fresh = _two_panels(qtbot, BreakdownPanel, 320)
    moved.show_result(first)
    if [k for k, v in first.breakdown_s.items() if v > 0] != [k for k, v in second.breakdown_s.items() if v > 0]:
        pytest.skip("the two plans differ in their categories")
    import pyqtgraph as pg

    def drawn(panel, kind):
        return [item for item in panel.plots.step.plot.items if isinstance(item, kind)]

    def labels(panel):
        return sorted((round(item.pos().x(), 9), item.textItem.toPlainText()) for item in drawn(panel, pg.TextItem))

    bars = drawn(moved, pg.BarGraphItem)
    moved.show_result(second)
    fresh.show_result(second)
    assert drawn(moved, pg.BarGraphItem) == bars  # the same items, moved: not drawn anew
    # and what they show is what a panel that only ever showed the second result shows
    assert moved.segments() == fresh.segments() and moved.memory_segments() == fresh.memory_segments()
    assert ([label.text for _, label in moved.plots.step.legend.items]
            == [label.text for _, label in fresh.plots.step.legend.items])
    assert len(bars) == len(drawn(fresh, pg.BarGraphItem))
    for a, b in zip(bars, drawn(fresh, pg.BarGraphItem)):
        assert a.opts["x0"] == b.opts["x0"] and a.opts["width"] == b.opts["width"]
    assert labels(moved) == labels(fresh)
    assert moved.headline["step"].text() == fresh.headline["step"].text()


def test_the_updating_note_does_not_resize_the_timeline(empty_window):
    window = empty_window
    open_example(window, H100)
    panel = window.timeline_panel
    before = panel.graphics.size()
    panel.mark_updating()
    assert panel.is_updating() and panel.updating.isVisible()
    assert panel.graphics.size() == before  # the 70k bars of a long pipeline are not laid out anew


def test_bars_thinner_than_a_pixel_add_up_per_pixel_cell():
    from designer.ui.panels.timeline_items import FAINT_LEVELS, narrow_cells

    # two quarter-pixel bars in pixel 0 of one row, one in pixel 0 of another row, one in pixel 5
    x0 = np.array([0.1, 0.6, 0.2, 5.5])
    y0 = np.array([0.0, 0.0, 1.0, 0.0])
    h = np.full(4, 0.8)
    w = np.full(4, 0.25)
    x, y, height, levels = narrow_cells(x0, y0, h, w, scale=1.0)
    cells = sorted(zip(x.tolist(), y.tolist(), height.tolist(), levels.tolist()))
    assert cells == [(0.0, 0.0, 0.8, FAINT_LEVELS // 2), (0.0, 1.0, 0.8, FAINT_LEVELS // 4),
                     (5.0, 0.0, 0.8, FAINT_LEVELS // 4)]


def test_a_selected_links_load_follows_the_step_time(empty_window):
    from tests.ui.test_live_edits import spine_link, type_into_inspector

    window = empty_window
    open_example(window, H100)
    link = spine_link(window.qdoc.doc)
    window.scene.select_ids([link.id])
    seen = []
    # when the new step time is handed to the panels, the Inspector's load (~100 ms at 16k) is not yet redone
    window.resultChanged.connect(lambda result: seen.append((result, window.inspector.result)))
    type_into_inspector(window, "bandwidth_gbps", f"{link.bandwidth_gbps / 2:g}")
    assert window.settle()
    result, inspector_had = seen[-1]
    assert result is window.result and inspector_had is not result
    assert window.inspector.result is window.result  # and then it is, with the step time already shown
    assert window.inspector.load.isVisibleTo(window.inspector)


def test_a_result_of_the_same_kinds_gives_the_timeline_new_bars_in_the_same_items(qtbot):
    """Rebuilding the legend's labels was half of the Timeline's time on the window's thread per edit:
    a result with the same kinds of events keeps the items and the legend, with the new bars."""
    from designer.ui.panels.timeline import TimelinePanel

    first, second = _two_results()
    moved, fresh = _two_panels(qtbot, TimelinePanel, 400)
    moved.show_result(first)
    items, legend = dict(moved.bar_items()), [label.text for _, label in moved.legend.items]
    moved.show_result(second)
    fresh.show_result(second)
    if list(moved.bar_items()) != list(items):
        pytest.skip("the two plans differ in their kinds of events")
    assert all(moved.bar_items()[k] is items[k] for k in items)  # the same items
    assert [label.text for _, label in moved.legend.items] == legend
    assert list(fresh.bar_items()) == list(moved.bar_items())
    for kind, item in moved.bar_items().items():  # holding what a panel that only showed the second result holds
        other = fresh.bar_items()[kind]
        for name in ("x0", "width", "y0", "height", "waits"):
            assert np.array_equal(getattr(item, name), getattr(other, name)), (kind, name)
        assert item.boundingRect() == other.boundingRect()
    assert moved.bar_count() == fresh.bar_count() and moved.title.text == fresh.title.text
    assert moved.vb.viewRange() == fresh.vb.viewRange()


def _record_link_reading(monkeypatch) -> tuple[list, list]:
    """(the threads that read every link's tier and cable, the analyses that grouped every link)."""
    import designer.core.analysis.link_groups as link_groups_module
    import designer.core.analysis.link_load as link_load_module

    reads, grouped = [], []
    real_read, real_classes = link_groups_module.LinkGroups.read.__func__, link_load_module.LinkLoad.classes

    def reading(cls, *args):
        reads.append(threading.current_thread().name)
        return real_read(cls, *args)

    def grouping(self):
        grouped.append(self)
        return real_classes(self)

    monkeypatch.setattr(link_groups_module.LinkGroups, "read", classmethod(reading))
    monkeypatch.setattr(link_load_module.LinkLoad, "classes", grouping)
    return reads, grouped


def _spine_link_selected(window, monkeypatch):
    """The H100 example opened, a leaf-spine cable selected and its load worded once: (the links' reads
    and groupings recorded from here on, the cable)."""
    from tests.ui.test_live_edits import spine_link

    reads, grouped = _record_link_reading(monkeypatch)
    open_example(window, H100)
    link = spine_link(window.qdoc.doc)
    window.scene.select_ids([link.id])
    assert window.settle() and len(reads) == 1
    return reads, grouped, link


def test_a_selected_links_load_is_worded_without_grouping_every_link(empty_window, monkeypatch):
    """A selected cable's load follows every edit without grouping every link of the design into
    classes (~0.12 s of CPU at 131k GPUs, the window's stalls while editing): its class is found alone,
    in the worker's thread, and the links' tiers and cables read at the selection are carried across
    the cable's speed edits."""
    import designer.core.analysis.link_load as link_load_module
    from tests.ui.test_live_edits import type_into_inspector

    window = empty_window
    reads, grouped, link = _spine_link_selected(window, monkeypatch)
    greyed = []  # the load of the result before, greyed while the step time of the new one is shown
    window.resultChanged.connect(lambda _r: greyed.append(window.inspector.load.isEnabled()))
    for value in (link.bandwidth_gbps / 2, link.bandwidth_gbps):
        reads.clear()
        type_into_inspector(window, "bandwidth_gbps", f"{value:g}")
        assert window.settle() and window.inspector.result is window.result
        assert greyed[-1] is False and window.inspector.load.isEnabled()
        assert reads == [] and grouped == []  # the edited cable re-read alone; no link grouped
        text = window.inspector.load.text()
        fresh = link_load_module.LinkLoad(window.result, window.qdoc.doc)
        assert text == fresh.text(fresh.index_of(link.id))  # the words of this result
    assert window.inspector.load.text().startswith("8 leaf-spine links")


def test_a_cables_delete_and_undo_carry_the_links_tiers_and_cables(empty_window, monkeypatch):
    """Edit > Delete of a cable between switches and Edit > Undo move the links' tiers and cables read at
    the selection by that cable's place, not read every link again (~0.3 s of CPU and a peak of ~24 MB at
    131k GPUs); the cable selected again is worded as a fresh analysis words it."""
    import designer.core.analysis.link_load as link_load_module

    window = empty_window
    reads, _grouped, link = _spine_link_selected(window, monkeypatch)
    reads.clear()
    for action in ("delete", "undo"):
        window.scene.select_ids([link.id])
        window.actions[action].trigger()
        assert window.settle()
    window.scene.select_ids([link.id])
    assert window.settle() and window.inspector.result is window.result
    assert reads == []
    fresh = link_load_module.LinkLoad(window.result, window.qdoc.doc)
    assert window.inspector.load.text() == fresh.text(fresh.index_of(link.id))


def test_selecting_a_link_of_a_big_design_words_its_load_off_the_ui_thread(empty_window, monkeypatch):
    import designer.core.analysis.link_load as link_load_module
    import designer.ui.docks.inspector as inspector_module
    from tests.ui.test_live_edits import spine_link

    monkeypatch.setattr(inspector_module, "LINKS_WORDED_AT_ONCE", 0, raising=False)  # as big as 16k GPUs
    reads, grouped = _record_link_reading(monkeypatch)
    window = empty_window
    open_example(window, H100)
    link = spine_link(window.qdoc.doc)
    reads.clear()
    window.scene.select_ids([link.id])
    assert window.inspector.load.text() == "Load: being worked out..."  # the click returns at once
    assert window.settle()
    assert reads == ["designer-timeline"] and grouped == []
    shown = window.inspector.load.text()
    window.scene.select_ids([window.qdoc.doc.links[0].id])  # another link of the same result: no new work
    assert reads == ["designer-timeline"] and window.inspector.load.text().startswith("64 rail links")
    fresh = link_load_module.LinkLoad(window.result, window.qdoc.doc)
    assert shown == fresh.text(fresh.index_of(link.id))


def test_a_plan_edit_does_not_measure_the_canvas_again(empty_window, monkeypatch):
    """Nothing on the canvas moves when TP changes: measuring every item (~50 ms at 16k GPUs on the
    window's thread) is left for the edits that move something."""
    window = empty_window
    open_example(window, H100)
    measured = []
    real = type(window.scene).itemsBoundingRect
    monkeypatch.setattr(type(window.scene), "itemsBoundingRect", lambda self: measured.append(1) or real(self))
    before = window.scene.sceneRect()
    type_like_a_user(window, TP, "4")
    assert window.settle() and window.result.plan["tp"] == 4
    assert measured == [] and window.scene.sceneRect() == before


def test_a_cables_new_speed_does_not_measure_the_canvas_again(empty_window, monkeypatch):
    """A link's bandwidth moves nothing on the canvas: the overview and the view keep the measure
    of every item (~40 ms at 16k GPUs, 0.3 s at 131k on the window's thread)."""
    from tests.ui.test_live_edits import spine_link, type_into_inspector

    window = empty_window
    open_example(window, H100)
    window.minimap.render_overview()
    link = spine_link(window.qdoc.doc)
    window.scene.select_ids([link.id])
    assert window.settle()
    measured = []
    real = type(window.scene).itemsBoundingRect
    monkeypatch.setattr(type(window.scene), "itemsBoundingRect", lambda self: measured.append(1) or real(self))
    before, half = window.scene.layout_rect(), link.bandwidth_gbps / 2
    type_into_inspector(window, "bandwidth_gbps", f"{half:g}")
    assert window.settle() and window.qdoc.doc.find("links", link.id).bandwidth_gbps == half
    window.minimap.render_overview()
    assert measured == [] and window.scene.layout_rect() == before


def test_a_plan_edit_does_not_redraw_the_overview(empty_window, monkeypatch):
    """The overview shows the fabric, not the job: a TP typed into the Job panel leaves its picture
    (a redraw of 131k GPUs' overview held the window 0.1-0.15 s per edit); a rack's change redraws it."""
    window = empty_window
    open_example(window, H100)
    assert window.settle()
    drawn = []
    real = type(window.minimap).render_overview
    monkeypatch.setattr(type(window.minimap), "render_overview", lambda self: drawn.append(1) or real(self))
    type_like_a_user(window, TP, "4")
    assert window.settle() and window.result.plan["tp"] == 4
    assert drawn == []
    rack = window.qdoc.doc.racks[0]  # a rack made taller: the overview is drawn again
    from designer.ui.document import commands

    window.qdoc.push(commands.SetFields(window.qdoc, {rack.id: {"units": rack.units + 4}}))
    assert window.settle() and drawn


def test_selecting_links_finds_their_bundles_by_their_ends(empty_window):
    """select_ids finds a link's cable bundle by the link's two ends (no pass over 295k bundles at
    131k GPUs): the same rows as looking in every bundle, for every link of the example."""
    window = empty_window
    open_example(window, H100)
    scene, doc = window.scene, window.qdoc.doc
    ids = [link.id for link in doc.links]
    for link_id in ids[:: max(1, len(ids) // 40)]:
        expected = {i for i, b in enumerate(scene.link_layer.bundles) if link_id in b.link_ids}
        scene.select_ids([link_id])
        assert scene.link_layer.selected == expected and expected
    scene.select_ids(ids[:3] + [doc.nodes[0].id])
    assert scene.link_layer.selected == {i for i, b in enumerate(scene.link_layer.bundles)
                                         if set(ids[:3]) & set(b.link_ids)}
    assert doc.nodes[0].id in scene.selected_ids()


def test_a_link_selected_and_edited_at_once_words_only_the_new_results_load(empty_window, monkeypatch):
    """A big design's selected link: its load is asked of the worker a moment after the click. A new
    speed typed at once is evaluated first, and the load worded is the new result's (the old result's
    ~0.1 s of work at 131k GPUs ran beside the window's commit and repaint, holding it 118-150 ms)."""
    import designer.ui.docks.inspector as inspector_module
    from tests.ui.test_live_edits import spine_link, type_into_inspector

    monkeypatch.setattr(inspector_module, "LINKS_WORDED_AT_ONCE", 0, raising=False)  # as big as 16k GPUs
    window = empty_window
    open_example(window, H100)
    asked = []
    real = window.worker.build_link_load
    monkeypatch.setattr(window.worker, "build_link_load",
                        lambda n, result, *rest: asked.append(result) or real(n, result, *rest))
    link = spine_link(window.qdoc.doc)
    old = window.result
    window.scene.select_ids([link.id])
    assert window.inspector.load.text() == "Load: being worked out..."
    type_into_inspector(window, "bandwidth_gbps", f"{link.bandwidth_gbps / 2:g}")
    assert window.settle() and window.result is not old
    assert asked and all(r is not old for r in asked) and asked[-1] is window.result
    assert window.inspector.load.isEnabled() and "being worked out" not in window.inspector.load.text()
