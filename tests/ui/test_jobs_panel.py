"""The Jobs panel and parts down in the window: add, rename, place on selected servers, switch the
Breakdown between jobs, mark a switch down from the canvas's right-click menu; each one undo step."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLineEdit, QMenu

from designer.core.io import load_document, save_document
from designer.core.model import Parallelism, Workload
from tests.conftest import run_cli


@pytest.fixture
def open_design(empty_window, tmp_path):
    """A generated 8-server (64 H100) fat-tree with one job: Llama 3 8B, TP 8, on 32 GPUs."""
    path = tmp_path / "ft.yaml"
    code, _out, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", "8", "--gpu", "H100")
    assert code == 0, err
    doc = load_document(path)
    doc.spec.workload = Workload(preset="llama3-8b", global_batch_size=64, micro_batch_size=1, seq_length=4096)
    doc.spec.parallelism = Parallelism(tensor_model_parallel_size=8, num_gpus=32)
    save_document(doc, path)
    empty_window.open_file(str(path))
    assert empty_window.settle()
    assert empty_window.result is not None
    return empty_window


def _add_second_job(window):
    window.jobs_panel.act_add.trigger()
    assert window.settle()
    return window.qdoc.doc.spec.jobs


def test_add_job_converts_the_single_job_and_undo_brings_it_back(open_design):
    window = open_design
    doc = window.qdoc.doc
    assert not doc.spec.jobs and window.jobs_panel.row_texts()[0][0] == doc.metadata.name
    jobs = _add_second_job(window)
    assert [j.name for j in jobs] == [doc.metadata.name, "job 2"]
    assert jobs[1].placement.policy == "packed" and jobs[1].placement.gpus == 32  # the 32 GPUs left
    assert doc.spec.workload is None  # the single job moved into spec.jobs[0]
    # both jobs evaluated, on disjoint servers, each coloured on the canvas
    assert window.result is not None and len(window.result.jobs) == 2
    rows = window.jobs_panel.row_texts()
    assert [r[1] for r in rows] == ["32", "32"] and all(r[2].endswith(" s") for r in rows)
    first, second = (set(j.node_ids) for j in window.result.jobs)
    assert first and second and not first & second
    assert set(window.job_marks.bands) == first | second
    assert window.job_marks.legend.isVisible() and "job 2" in window.job_marks.legend.rows()
    window.qdoc.undo_stack.undo()  # one step: back to the single job of spec.workload
    assert doc.spec.jobs == [] and doc.spec.workload.preset == "llama3-8b"
    assert doc.spec.parallelism.num_gpus == 32
    assert window.settle() and len(window.jobs_panel.row_texts()) == 1
    assert not window.job_marks.bands and not window.job_marks.legend.isVisible()


def test_rename_in_the_row_is_one_step_and_a_taken_name_is_refused(open_design, qtbot):
    window = open_design
    _add_second_job(window)
    panel = window.jobs_panel
    panel.set_current(1)
    panel.act_rename.trigger()
    editor = panel.table.findChild(QLineEdit)
    assert editor is not None and editor.isVisible()
    editor.selectAll()
    QTest.keyClicks(editor, "finetune")
    QTest.keyClick(editor, Qt.Key_Return)
    doc = window.qdoc.doc
    qtbot.waitUntil(lambda: doc.spec.jobs[1].name == "finetune", timeout=2000)  # the view commits it queued
    assert window.qdoc.undo_stack.undoText() == "Rename job job 2 to finetune"
    assert not panel.rename_job(1, doc.spec.jobs[0].name)  # taken: refused, said in the status bar
    assert doc.spec.jobs[1].name == "finetune" and "another job is named" in window.statusBar().currentMessage()
    window.qdoc.undo_stack.undo()
    assert doc.spec.jobs[1].name == "job 2" and panel.row_texts()[1][0] == "job 2"


def test_use_selected_servers_places_the_job_there(open_design):
    window = open_design
    _add_second_job(window)
    panel = window.jobs_panel
    panel.set_current(1)
    window.scene.select_ids(["node7", "node5", "rack0"])  # a rack is not a server: ignored
    panel.act_use_selected.trigger()
    doc = window.qdoc.doc
    assert doc.spec.jobs[1].placement.nodes == ["node5", "node7"]  # in file order
    assert "node5, node7" in panel.servers.text()
    assert window.settle()
    assert window.result.jobs[1].node_ids == ["node5", "node7"]
    assert window.job_marks.bands["node5"].job == "job 2"
    window.qdoc.undo_stack.undo()
    assert doc.spec.jobs[1].placement.nodes == [] and doc.spec.jobs[1].placement.policy == "packed"


def test_the_job_selector_switches_the_breakdown_to_that_job(open_design):
    window = open_design
    _add_second_job(window)
    panel = window.jobs_panel
    panel.set_current(1)
    panel.gpus.setValue(16)  # the second job smaller: another step time
    assert window.qdoc.doc.spec.jobs[1].placement.gpus == 16 and window.settle()
    jobs = window.result.jobs
    assert jobs[0].result.step_time_s != pytest.approx(jobs[1].result.step_time_s, rel=1e-3)
    step = window.breakdown_panel.headline["step"]
    assert f"{jobs[1].result.step_time_s:.3f} s" in step.text()  # still the current job's after the edit
    assert window.breakdown_dock.windowTitle() == "Breakdown: job 2"
    panel.selector.setCurrentIndex(0)
    panel.selector.activated.emit(0)
    assert f"{jobs[0].result.step_time_s:.3f} s" in step.text()
    assert window.job_panel.which.text().startswith("<b>Job ")  # the Job panel edits the job shown
    panel.selector.setCurrentIndex(1)
    panel.selector.activated.emit(1)
    assert f"{jobs[1].result.step_time_s:.3f} s" in step.text()
    assert window.settle() and window.timeline_panel.result is jobs[1].result or not window.timeline_panel.isVisible()


def test_the_job_panel_edits_the_current_job_as_one_step(open_design):
    window = open_design
    _add_second_job(window)
    window.jobs_panel.set_current(1)
    editor = window.job_panel.editors["workload.global_batch_size"]
    editor.setText("128")
    editor.textEdited.emit("128")
    editor.editingFinished.emit()
    doc = window.qdoc.doc
    assert doc.spec.jobs[1].workload.global_batch_size == 128 and doc.spec.jobs[0].workload.global_batch_size == 64
    window.qdoc.undo_stack.undo()
    assert doc.spec.jobs[1].workload.global_batch_size == 64


def _right_click(window, scene_point):
    window.view.centerOn(scene_point)
    QApplication.processEvents()
    pos = window.view.mapFromScene(scene_point)
    event = QContextMenuEvent(QContextMenuEvent.Mouse, pos, window.view.viewport().mapToGlobal(pos))
    QApplication.sendEvent(window.view.viewport(), event)
    return next(m for m in window.view.findChildren(QMenu) if m.isVisible())


OFFSCREEN_POPUP = pytest.mark.qt_log_ignore("does not support raise", "does not support grabbing the keyboard")
# (a menu's popup on the offscreen platform; the patterns add to the project's list)


@OFFSCREEN_POPUP
def test_mark_a_switch_down_from_the_right_click_menu_then_undo(open_design):
    window = open_design
    item = window.scene.devices["spine0"]
    menu = _right_click(window, item.sceneBoundingRect().center())
    assert window.scene.selected_ids() == ["spine0"]
    assert window.act_mark_down in menu.actions() and window.act_mark_down.isEnabled()
    assert not window.act_mark_up.isEnabled()
    window.act_mark_down.trigger()
    menu.close()
    doc = window.qdoc.doc
    assert doc.find("switches", "spine0").state == "down"
    assert "spine0" in window.job_marks.down_marks  # greyed and crossed out on the canvas
    assert window.job_marks.down_marks["spine0"].parentItem() is item
    assert window.job_marks.legend.rows() == ["down (1)"]
    assert window.act_mark_up.isEnabled() and not window.act_mark_down.isEnabled()
    window.qdoc.undo_stack.undo()
    assert doc.find("switches", "spine0").state == "up" and not window.job_marks.down_marks


@OFFSCREEN_POPUP
def test_mark_a_cable_down_from_the_right_click_menu(open_design):
    window = open_design
    layer = window.scene.link_layer
    row = next(i for i, b in enumerate(layer.bundles) if b.key == ("leaf0", "spine0") or b.key == ("spine0", "leaf0"))
    a, b = layer.lines.a[row], layer.lines.b[row]
    from PySide6.QtCore import QPointF

    window.view.zoom_to(2.0)
    on_cable = (QPointF(a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t) for t in (i / 40 for i in range(2, 39)))
    spot = next(p for p in on_cable if window.scene.gestures.item_at(p) is None)  # off the boxes
    menu = _right_click(window, spot)
    ids = layer.bundles[row].link_ids
    assert set(window.scene.selected_ids()) == set(ids)
    window.act_mark_down.trigger()
    menu.close()
    doc = window.qdoc.doc
    assert all(doc.find("links", i).state == "down" for i in ids)
    assert window.job_marks.links.rows == {row: True}
    window.qdoc.undo_stack.undo()
    assert all(doc.find("links", i).state == "up" for i in ids) and window.job_marks.links.rows == {}


def test_remove_is_one_step_and_the_last_job_stays(open_design):
    window = open_design
    jobs = _add_second_job(window)
    panel = window.jobs_panel
    doc = window.qdoc.doc
    panel.set_current(0)
    panel.act_remove.trigger()
    assert [j.name for j in doc.spec.jobs] == ["job 2"] and panel.current == 0
    assert not panel.act_remove.isEnabled()  # one job left: it stays
    panel.remove_job()
    assert len(doc.spec.jobs) == 1 and "at least one job" in window.statusBar().currentMessage()
    window.qdoc.undo_stack.undo()
    assert [j.name for j in doc.spec.jobs] == [j.name for j in jobs]


def test_add_fits_the_job_into_what_is_free_and_says_when_nothing_is(open_design):
    window = open_design
    said = []
    window.jobs_panel.message.connect(said.append)
    jobs = _add_second_job(window)  # 32 of the 64 GPUs were free: the copy takes them
    assert [j.placement.gpus for j in jobs] == [32, 32]
    count = len(jobs)
    window.jobs_panel.act_add.trigger()  # every GPU is a job's now: nothing is added, and it is said
    assert window.settle()
    assert len(window.qdoc.doc.spec.jobs) == count
    assert said and "no GPU is free" in said[-1]
    assert not [p for p in window.problems if p.severity == "error"]  # the design stays valid
