"""Zoomed far out, the one layer that draws a big design's boxes (canvas/box_layer.py) also draws the jobs'
frames and the boxes down. It skips repainting them when an edit changes neither (a cable deleted), and
must repaint them when one does: a server marked down, a job given other GPUs. Each time its picture is
the one the items themselves give, and its marks are those of a fresh window opening the saved file."""
from __future__ import annotations

import numpy as np
import pytest

from designer.core.generate import generate_fat_tree
from designer.core.io import save_document
from designer.core.model.job import Parallelism, Workload
from designer.core.model.jobs import JobPlacement, JobSpec
from tests.ui.fresh_open import as_fresh_open
from tests.ui.test_canvas_far_zoom import _opened_far_out, _pixels


@pytest.fixture
def two_jobs_file(tmp_path):
    """A 128-GPU fat-tree shared by two jobs of 32 GPUs: their servers framed in their colours."""
    doc = generate_fat_tree(nodes=16, gpu="H100", switch_radix=32)
    workload = Workload(preset="llama3-8b", global_batch_size=64, micro_batch_size=1)
    parallelism = Parallelism(tensor_model_parallel_size=8)
    doc.set_jobs([JobSpec(name=name, workload=workload, parallelism=parallelism, placement=JobPlacement(gpus=32))
                  for name in ("job A", "job B")])
    path = tmp_path / "two-jobs.yaml"
    save_document(doc, path)
    return path


def _layer_picture_is_the_items(window, monkeypatch, step: str) -> None:
    """The viewport drawn by the far-out layer is the one the items give when they draw themselves."""
    import designer.ui.canvas.scene_detail as detail

    view, layer = window.view, window.scene.box_layer
    window.view.viewport().repaint()
    assert layer.isVisible(), step
    drawn_by_layer = _pixels(view.viewport())
    far = detail.LOD_BOXES
    monkeypatch.setattr(detail, "LOD_BOXES", 0.0)
    view.zoom_by(1.0)
    assert not layer.isVisible()
    drawn_by_items = _pixels(view.viewport())
    monkeypatch.setattr(detail, "LOD_BOXES", far)
    view.zoom_by(1.0)  # far out again
    differ = np.abs(drawn_by_layer - drawn_by_items).max(axis=2)
    assert (differ > 40).mean() < 0.002, f"{step}: {(differ > 40).sum()} pixels differ"


def _marks(window):
    return window.scene.box_layer.marks_drawn()


def test_far_out_marks_follow_a_server_down_and_a_job_given_other_gpus(empty_window, new_window, two_jobs_file,
                                                                       qtbot, monkeypatch, tmp_path):
    window = empty_window
    scene, view = _opened_far_out(window, two_jobs_file, qtbot, monkeypatch)
    marks = window.job_marks
    assert window.result is not None, window.results.problems
    assert len(marks.bands) == 8  # both jobs framed
    _layer_picture_is_the_items(window, monkeypatch, "open")

    # a cable deleted: no frame or box down changes, nothing of the marks is drawn again
    drawn = marks.generation
    doc = window.qdoc.doc
    switches = {s.id for s in doc.switches}
    cable = next(c for c in doc.links if c.a.split(":")[0] in switches and c.b.split(":")[0] in switches)
    scene.select_ids([cable.id])
    window.actions["delete"].trigger()
    assert window.settle()
    assert marks.generation == drawn
    _layer_picture_is_the_items(window, monkeypatch, "delete")

    # Edit > Mark Down of a server framed in job A's colour: the layer paints it down
    server = window.result.jobs[0].node_ids[0]
    scene.select_ids([server])
    window.act_mark_down.trigger()
    assert window.qdoc.doc.find("nodes", server).state == "down" and window.settle()
    assert server in marks.down_marks
    _layer_picture_is_the_items(window, monkeypatch, "mark down")
    down = as_fresh_open(window, new_window, tmp_path, "mark down", _marks)
    assert any(rects for _pen, _brush, _style, rects in down)

    # job B given fewer GPUs: its frames on the servers it left go (the layer repaints them)
    window.jobs_panel.set_current(1)
    window.jobs_panel.gpus.setValue(16)
    assert window.qdoc.doc.spec.jobs[1].placement.gpus == 16 and window.settle()
    assert len(marks.bands) == 6
    _layer_picture_is_the_items(window, monkeypatch, "job B smaller")
    as_fresh_open(window, new_window, tmp_path, "job B smaller", _marks)

    # Edit > Undo twice: both marks back as they were
    window.qdoc.undo_stack.undo()
    window.qdoc.undo_stack.undo()
    assert window.settle() and server not in marks.down_marks and len(marks.bands) == 8
    _layer_picture_is_the_items(window, monkeypatch, "undo")
    as_fresh_open(window, new_window, tmp_path, "undo", _marks)


def test_a_framed_server_deleted_while_the_jobs_cannot_be_placed_takes_its_frame_along(empty_window, tmp_path):
    """Every GPU in use by two jobs: Edit > Delete of a server leaves the jobs unplaceable (no new
    placement comes), and the frames of the servers left stay, each on its box; Edit > Undo frames
    the server again."""
    doc = generate_fat_tree(nodes=8, gpu="H100", switch_radix=32)
    workload = Workload(preset="llama3-8b", global_batch_size=64, micro_batch_size=1)
    doc.set_jobs([JobSpec(name=name, workload=workload, parallelism=Parallelism(tensor_model_parallel_size=8),
                          placement=JobPlacement(gpus=32)) for name in ("job A", "job B")])
    path = tmp_path / "full.yaml"
    save_document(doc, path)
    window = empty_window
    window.open_file(str(path))
    assert window.settle() and window.result is not None
    marks, scene = window.job_marks, window.scene
    framed = {node: band.job for node, band in marks.bands.items()}
    assert len(framed) == 8
    server = sorted(framed)[0]
    scene.select_ids([server])
    window.actions["delete"].trigger()
    assert window.settle() and window.result is None  # 56 GPUs left for 64
    assert {node: band.job for node, band in marks.bands.items()} == {n: j for n, j in framed.items() if n != server}
    assert all(band.parentItem() is scene.devices[node] for node, band in marks.bands.items())
    window.actions["undo"].trigger()
    assert window.settle() and window.result is not None
    assert {node: band.job for node, band in marks.bands.items()} == framed
    assert all(band.parentItem() is scene.devices[node] for node, band in marks.bands.items())
