"""Edit > Delete of a switch that servers hang off, Edit > Undo and Redo, and a server renamed in the
Inspector: after each, the Problems list (the status bar's popup) lists exactly what a new window
lists when it opens the design saved at that moment, though the window checked only what each edit
changed (undone to the design opened: what the new window that opened it listed). The list keeps the
rows of the problems an edit leaves: it adds and takes away only the rows of those that came or went."""
from __future__ import annotations

from designer.core.io import dumps_document
from designer.ui.window.problems_popup import ELEMENT_ROLE

from tests.conftest import run_cli
from tests.ui.fresh_open import as_fresh_open


def _listed(window) -> list[str]:
    return window.problems_popup.texts()


def _rows(window) -> list[tuple]:
    """Each row as a user meets it: its text, colour, tooltip and the element a click shows."""
    rows = window.problems_popup.list
    return [(item.text(), item.foreground().color().name(), item.toolTip(), item.data(ELEMENT_ROLE))
            for item in map(rows.item, range(rows.count()))]


class _RowChanges:
    """Rows the popup's list inserts and removes (its model's signals)."""

    def __init__(self, window):
        self.inserted = self.removed = 0
        model = window.problems_popup.list.model()
        model.rowsInserted.connect(lambda _p, first, last: self._add("inserted", last - first + 1))
        model.rowsRemoved.connect(lambda _p, first, last: self._add("removed", last - first + 1))

    def _add(self, what: str, n: int) -> None:
        setattr(self, what, getattr(self, what) + n)


def _as_fresh_open(window, new_window, tmp_path, step: str):
    return as_fresh_open(window, new_window, tmp_path, step, _listed)


def _trigger(window, name: str) -> None:
    window.actions[name].trigger()
    assert window.settle()


def test_problems_after_deletes_renames_and_undos_are_a_fresh_opens(empty_window, new_window, tmp_path):
    path = tmp_path / "ft.yaml"
    code, _out, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", "8", "--gpu", "H100")
    assert code == 0, err
    window = empty_window
    window.open_file(str(path))
    assert window.settle()
    assert _as_fresh_open(window, new_window, tmp_path, "opened") == []
    opened = dumps_document(window.qdoc.doc)
    checker = window.results.worker.checker
    full_checks = checker.full_checks

    window.scene.select_ids(["leaf0"])  # every server's nic0 hangs off it
    _trigger(window, "delete")
    assert window.qdoc.doc.get("leaf0") is None
    deleted = [text for text, *_ in as_fresh_open(window, new_window, tmp_path, "leaf deleted", _rows)]
    assert len(deleted) == 8 and all("not connected (nic0)" in text for text in deleted)

    _trigger(window, "undo")
    assert dumps_document(window.qdoc.doc) == opened and _listed(window) == []
    _trigger(window, "redo")
    assert _as_fresh_open(window, new_window, tmp_path, "leaf deleted again") == deleted

    window.scene.select_ids(["node3"])  # renamed in the Inspector: its cables follow
    rename = window.inspector.editors["id"]
    rename.setText("gpu-box-3")
    rename.editingFinished.emit()
    assert window.settle()
    renamed = _as_fresh_open(window, new_window, tmp_path, "server renamed")
    assert any("node3" not in text and "gpu-box-3" in text for text in renamed)

    window.scene.select_ids(["gpu-box-3"])
    rows_before = _rows(window)
    changes = _RowChanges(window)
    _trigger(window, "delete")  # one server fewer: its warning goes, and its row alone
    assert (changes.inserted, changes.removed) == (0, 1)
    # the later servers' places
    assert len(as_fresh_open(window, new_window, tmp_path, "server deleted", _rows)) == 7
    _trigger(window, "undo")  # its row back, the others kept
    assert (changes.inserted, changes.removed) == (1, 1) and _rows(window) == rows_before
    _trigger(window, "redo")
    for step in range(3):
        _trigger(window, "undo")
    assert dumps_document(window.qdoc.doc) == opened and _listed(window) == []
    assert checker.full_checks == full_checks  # each edit was checked by itself, not the whole design
