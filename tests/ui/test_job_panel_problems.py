"""The Job panel's problems after Edit > Delete, Undo and Redo of the cluster's cables and switches: beside
each field and in its summary, what a new window shows when it opens the design saved at that moment
(undone or redone to a design shown before: what the new window showed then); and the panel places
only the problems an edit brought (not every problem of the design again)."""
from __future__ import annotations

import designer.ui.docks.job_panel as job_panel
from designer.core.io import dumps_document, load_document, save_document
from designer.core.model.job import Parallelism, Workload
from designer.core.problems import count_text

from tests.conftest import run_cli
from tests.ui.fresh_open import as_fresh_open


def _shown(window) -> tuple:
    """What the panel shows; its counts checked against its problems and what it shows beside fields."""
    panel = window.job_panel
    beside = sum(len(text.split("\n")) for text in panel.field_texts().values())
    outside = len(panel.problems) - beside
    assert (f"; {outside} outside the job" in panel.summary.text()) == (outside > 0)
    assert f"<b>{count_text(panel.problems)}</b>" in panel.summary.text()
    return panel.field_texts(), panel.summary.text()


def _trigger(window, name: str) -> list:
    """The QAction's edit, settled; returns the problems it brought (not held before it)."""
    before = {id(p) for p in window.job_panel.problems}  # (the objects the panel held: alive until here)
    window.actions[name].trigger()
    assert window.settle()
    return [p for p in window.job_panel.problems if id(p) not in before]


def test_job_panel_problems_follow_edits_as_a_fresh_open(empty_window, new_window, tmp_path, monkeypatch):
    path = tmp_path / "ft.yaml"
    code, _out, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", "8", "--gpu", "H100")
    assert code == 0, err
    doc = load_document(path)  # a global batch DP 8 does not divide: an error beside its field
    doc.set_job(Workload(preset="gpt3-175b", global_batch_size=100, micro_batch_size=1),
                Parallelism(tensor_model_parallel_size=8))
    save_document(doc, path)
    placed = []
    field_of = job_panel._field_of
    monkeypatch.setattr(job_panel, "_field_of", lambda *a: placed.append(a) or field_of(*a))

    window = empty_window
    window.open_file(str(path))
    assert window.settle()
    opened = as_fresh_open(window, new_window, tmp_path, "opened", _shown)
    fields, summary = opened
    assert list(fields) == ["workload.global_batch_size"] and "1 error" in summary
    opened_text = dumps_document(window.qdoc.doc)

    window.scene.select_ids(["leaf0"])  # every server's nic0 hangs off it: 8 warnings come
    placed.clear()
    came = _trigger(window, "delete")
    assert len(placed) == len(came)  # those that came (the job's checks were made again too)
    leaf_deleted = as_fresh_open(window, new_window, tmp_path, "leaf deleted", _shown)
    fields, summary = leaf_deleted
    assert "8 warnings" in summary and list(fields) == ["workload.global_batch_size"]
    leaf_deleted_text = dumps_document(window.qdoc.doc)

    cable = next(l.id for l in window.qdoc.doc.links if l.a == "node5:nic1")
    window.scene.select_ids([cable])  # node5's warning (and the job's errors) change, among 10
    placed.clear()
    came = _trigger(window, "delete")
    # the span of the list from the first problem that changed to the last: not the whole list again
    assert len(came) <= len(placed) < len(window.job_panel.problems) - 4
    fields, summary = as_fresh_open(window, new_window, tmp_path, "cable deleted", _shown)
    assert "node5" in window.problems_popup.texts()[-1] or any("nic0, nic1" in t for t in window.problems_popup.texts())
    assert list(fields) == ["workload.global_batch_size"]

    placed.clear()
    came = _trigger(window, "undo")
    assert len(came) <= len(placed) < len(window.job_panel.problems) - 4  # node5's, the job's: not all again
    _trigger(window, "undo")
    assert dumps_document(window.qdoc.doc) == opened_text and _shown(window) == opened  # both undone

    _trigger(window, "redo")
    assert dumps_document(window.qdoc.doc) == leaf_deleted_text and _shown(window) == leaf_deleted  # again
