"""Edit > Delete and Edit > Undo of a cable and of a server: the Job panel's summary, the status bar's
counts and the canvas's job colours and parts down then equal what a new window shows when it opens
the design saved at that moment (what the window keeps between edits never goes stale)."""
from __future__ import annotations

import pytest

from designer.core.io import load_document, save_document
from designer.core.model import Parallelism, Workload
from designer.core.model.jobs import JobPlacement, JobSpec
from tests.conftest import run_cli


@pytest.fixture
def new_window(qtbot, tmp_path, monkeypatch):
    """Opens a file in a window of its own, as a user starting the app again would."""
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QMessageBox

    from designer.ui.window.main_window import MainWindow

    monkeypatch.setattr(QMessageBox, "question", staticmethod(lambda *a, **k: QMessageBox.Discard))

    def open_in_new_window(path):
        w = MainWindow(QSettings(str(tmp_path / "fresh-settings.ini"), QSettings.IniFormat))
        qtbot.addWidget(w)
        w.resize(1200, 800)
        w.show()
        qtbot.waitExposed(w)
        w.open_file(str(path))
        assert w.settle()
        return w

    return open_in_new_window


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


def _as_fresh_open(window, new_window, tmp_path, step: str) -> dict:
    saved = tmp_path / f"{step}.yaml"
    save_document(window.qdoc.doc, saved)
    fresh = new_window(saved)
    expected = _shown(fresh)
    fresh.close()
    assert _shown(window) == expected, step
    return expected


def test_deletes_and_undos_show_the_gpus_as_a_fresh_open(empty_window, new_window, tmp_path):
    path, down_cable = _design(tmp_path, jobs=False)
    window = empty_window
    window.open_file(str(path))
    assert window.settle()
    opened = _as_fresh_open(window, new_window, tmp_path, "opened")
    assert "64 GPUs</b> = TP 8" in opened["summary"] and " 64 GPUs " in opened["counts"]
    assert opened["cables down"] and opened["legend"] == [1]
    up_cable = next(l.id for l in window.qdoc.doc.links if l.state == "up")
    for step, element in (("cable", up_cable), ("cable down", down_cable), ("server", "node7")):
        _delete(window, element)
        _as_fresh_open(window, new_window, tmp_path, f"{step} deleted")
        _undo(window)
        assert _as_fresh_open(window, new_window, tmp_path, f"{step} deleted and undone") == opened
    # deleting a server shrinks the job: the summary and the status bar say so
    _delete(window, "node7")
    after = _as_fresh_open(window, new_window, tmp_path, "server deleted again")
    assert "56 GPUs</b> = TP 8" in after["summary"] and " 56 GPUs " in after["counts"]


def test_deletes_and_undos_show_the_job_colours_as_a_fresh_open(empty_window, new_window, tmp_path):
    path, down_cable = _design(tmp_path, jobs=True)
    window = empty_window
    window.open_file(str(path))
    assert window.settle()
    opened = _as_fresh_open(window, new_window, tmp_path, "opened")
    assert len(opened["bands"]) == 4 and {job for job, _c in opened["bands"].values()} == {"first", "second"}
    assert opened["down"] == ["node6"] and opened["cables down"] and opened["legend"][-1] == 2
    doc = window.qdoc.doc
    up_cable = next(l.id for l in doc.links if l.state == "up")
    second = sorted(node for node, (job, _c) in opened["bands"].items() if job == "second")
    for step, element in (("cable", up_cable), ("cable down", down_cable), ("server down", "node6"),
                          ("server of the second job", second[0])):
        _delete(window, element)
        _as_fresh_open(window, new_window, tmp_path, f"{step} deleted")
        _undo(window)
        assert _as_fresh_open(window, new_window, tmp_path, f"{step} deleted and undone") == opened
