"""Edit > Delete and Edit > Undo of a cable and of a server: the Job panel's summary, the status bar's
counts and the canvas's job colours and parts down then equal what a new window shows when it opens
the design saved at that moment (what the window keeps between edits never goes stale). Undone, the
design is the one opened, so the window shows what the new window that opened it showed."""
from __future__ import annotations

import pytest

from designer.core.io import dumps_document, load_document, save_document
from designer.core.model import Parallelism, Workload
from designer.core.model.jobs import JobPlacement, JobSpec
from tests.conftest import run_cli
from tests.ui.fresh_open import as_fresh_open


def _design(tmp_path, jobs: bool):
    """A generated 8-server (64 H100) fat-tree with the cable leaf0-spine0 and, with jobs, server node6
    down. Without jobs: one job whose size is all GPUs of the design (the summary counts them);
    with jobs: two of 16 GPUs each, coloured on the canvas."""
    path = tmp_path / "ft.yaml"
    code, _out, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", "8", "--gpu", "H100")
    assert code == 0, err
    doc = load_document(path)
    workload = Workload(preset="llama3-8b", global_batch_size=448, micro_batch_size=1, seq_length=4096)
    if jobs:
        doc.spec.jobs = [JobSpec(name=name, workload=workload, parallelism=Parallelism(tensor_model_parallel_size=8),
                                 placement=JobPlacement(gpus=16)) for name in ("first", "second")]
        doc.update("node6", state="down")
    else:
        doc.spec.workload, doc.spec.parallelism = workload, Parallelism(tensor_model_parallel_size=8)
    down = next(l for l in doc.links if {l.a.split(":")[0], l.b.split(":")[0]} == {"leaf0", "spine0"})
    doc.update(down.id, state="down")
    save_document(doc, path)
    return path, down.id


def _shown(window) -> dict:
    """What the window shows of the design's size, its job(s) and its parts down."""
    marks = window.job_marks
    bundles = window.scene.link_layer.bundles
    return {
        "summary": window.job_panel.summary.text(),
        "counts": window.counts_label.text(),
        "bands": {node: (band.job, band.color.name()) for node, band in marks.bands.items()},
        "bands on their boxes": all(band.parentItem() is window.scene.devices.get(node)
                                    for node, band in marks.bands.items()),
        "down": sorted(marks.down_marks),
        "marks on their boxes": all(mark.parentItem() is window.scene.devices.get(element)
                                    for element, mark in marks.down_marks.items()),
        "cables down": {tuple(sorted(bundles[row].key)): whole for row, whole in marks.links.rows.items()},
        "legend": [(name, color.name()) for name, color in marks.legend.entries] + [marks.legend.down],
    }


def _delete(window, element_id: str) -> None:
    window.scene.select_ids([element_id])
    window.actions["delete"].trigger()
    assert window.qdoc.doc.get(element_id) is None
    assert window.settle()


def _undo(window) -> None:
    window.actions["undo"].trigger()
    assert window.settle()


def _as_fresh_open(window, new_window, tmp_path, step: str):
    return as_fresh_open(window, new_window, tmp_path, step, _shown)


@pytest.fixture
def opened(empty_window, new_window, tmp_path):
    """Opens the design (_design; `jobs` from the test's parameter) in the window: (window, the cable
    that is down, what it shows, as a fresh window does, the design as text)."""
    def open_design(jobs: bool):
        path, down_cable = _design(tmp_path, jobs)
        empty_window.open_file(str(path))
        assert empty_window.settle()
        shown = _as_fresh_open(empty_window, new_window, tmp_path, "opened")
        return empty_window, down_cable, shown, dumps_document(empty_window.qdoc.doc)

    return open_design


def _delete_and_undo_as_fresh_open(window, new_window, tmp_path, steps, opened: dict, opened_text: str) -> None:
    """Each (step, element): Edit > Delete of it, shown as a fresh window shows the design saved then;
    then Edit > Undo: the design opened again, shown as the fresh window that opened it showed it."""
    for step, element in steps:
        _delete(window, element)
        _as_fresh_open(window, new_window, tmp_path, f"{step} deleted")
        _undo(window)
        assert dumps_document(window.qdoc.doc) == opened_text, f"{step} deleted and undone"
        assert _shown(window) == opened, f"{step} deleted and undone"


def test_deletes_and_undos_show_the_gpus_as_a_fresh_open(opened, new_window, tmp_path):
    window, down_cable, shown, text = opened(jobs=False)
    assert "64 GPUs</b> = TP 8" in shown["summary"] and " 64 GPUs " in shown["counts"]
    assert shown["cables down"] and shown["legend"] == [1]
    up_cable = next(l.id for l in window.qdoc.doc.links if l.state == "up")
    _delete_and_undo_as_fresh_open(window, new_window, tmp_path,
                                   (("cable", up_cable), ("cable down", down_cable), ("server", "node7")), shown, text)
    # deleting a server shrinks the job: the summary and the status bar say so
    _delete(window, "node7")
    after = _as_fresh_open(window, new_window, tmp_path, "server deleted again")
    assert "56 GPUs</b> = TP 8" in after["summary"] and " 56 GPUs " in after["counts"]


def test_deletes_and_undos_show_the_job_colours_as_a_fresh_open(opened, new_window, tmp_path):
    window, down_cable, shown, text = opened(jobs=True)
    assert len(shown["bands"]) == 4 and {job for job, _c in shown["bands"].values()} == {"first", "second"}
    assert shown["down"] == ["node6"] and shown["cables down"] and shown["legend"][-1] == 2
    up_cable = next(l.id for l in window.qdoc.doc.links if l.state == "up")
    second = sorted(node for node, (job, _c) in shown["bands"].items() if job == "second")
    _delete_and_undo_as_fresh_open(window, new_window, tmp_path,
                                   (("cable", up_cable), ("cable down", down_cable), ("server down", "node6"),
                                    ("server of the second job", second[0])), shown, text)
