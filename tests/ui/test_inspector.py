"""The Inspector follows the document: what undo removes leaves it, and its counts are the
document's after every change (undo and redo included)."""
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDockWidget, QLineEdit

from tests.ui.test_editor import load, small_design


@pytest.fixture
def window(empty_window, tmp_path):
    w = empty_window
    load(w, small_design(), tmp_path)
    w.findChild(QDockWidget, "Inspector").raise_()
    w.view.fitInView(w.scene.itemsBoundingRect(), Qt.KeepAspectRatio)
    yield w


def click(window, element_id: str) -> None:
    item = window.scene.racks.get(element_id) or window.scene.devices[element_id]
    rect = item.sceneBoundingRect()
    point = window.view.mapFromScene(rect.center().x(), rect.top() + 3)  # the rack's own top, above its servers
    QTest.mouseClick(window.view.viewport(), Qt.LeftButton, Qt.NoModifier, point)


def counts_text(window) -> str:
    c = window.qdoc.doc.counts()
    return (f"{c['racks']} racks, {c['nodes']} servers, {c['gpus']} GPUs, {c['switches']} switches, "
            f"{c['links']} links")


def test_undoing_a_duplicate_clears_the_inspector(window, qtbot):
    inspector = window.inspector
    click(window, "eth0")
    assert inspector.ids == ["eth0"]
    window.act_duplicate.trigger()
    copy_id = inspector.ids[0]
    assert copy_id != "r0" and window.qdoc.doc.get(copy_id) is not None
    assert inspector.ids == [copy_id] and f"switch {copy_id}" in inspector.title.text()
    editor = inspector.editors["name"]
    assert isinstance(editor, QLineEdit)
    qtbot.waitUntil(lambda: editor.isVisibleTo(inspector))  # a new row shows at the next event loop turn

    window.act_undo.trigger()
    assert window.qdoc.doc.get(copy_id) is None
    assert inspector.ids == []
    assert copy_id not in inspector.title.text()
    assert counts_text(window) in inspector.title.text()  # 2 switches again: the document's own counts
    # no field of the vanished rack is left to type into
    assert inspector.editors == {} and inspector.findChild(QLineEdit, "name") is None

    window.act_redo.trigger()  # nothing selected: the counts follow the redo too
    assert counts_text(window) in inspector.title.text() and "3 switches" in inspector.title.text()
    window.act_undo.trigger()
    assert counts_text(window) in inspector.title.text() and "2 switches" in inspector.title.text()


def test_an_edit_typed_into_an_element_undone_meanwhile_changes_nothing(window, qtbot):
    """The user types into a field, then undoes from the menu the command that made its element:
    the field goes with the element (nothing is left to type into), Return commits nothing, and
    the text typed goes into no element, the one a redo brings back included."""
    inspector = window.inspector
    click(window, "eth0")
    window.act_duplicate.trigger()
    copy_id = inspector.ids[0]
    name = window.qdoc.doc.get(copy_id).name
    editor = inspector.findChild(QLineEdit, "name")
    qtbot.waitUntil(lambda: editor.isVisible())
    QTest.mouseClick(editor, Qt.LeftButton)
    QTest.keyClicks(editor, "ghost")  # typed, not yet committed
    window.act_undo.trigger()
    assert window.qdoc.doc.get(copy_id) is None
    assert inspector.ids == [] and inspector.editors == {} and inspector.findChild(QLineEdit, "name") is None
    before = window.qdoc.undo_stack.count(), window.qdoc.undo_stack.index()
    for key in (Qt.Key_Return, Qt.Key_Tab):  # whatever has the keyboard now
        QTest.keyClick(QApplication.focusWidget() or window.view.viewport(), key)
    assert (window.qdoc.undo_stack.count(), window.qdoc.undo_stack.index()) == before
    assert all(e.name != "ghost" for e in window.qdoc.doc.switches)
    window.act_redo.trigger()
    assert window.qdoc.doc.get(copy_id).name == name


def test_counts_follow_every_change_with_nothing_selected(window):
    inspector = window.inspector
    window.scene.clearSelection()
    assert counts_text(window) in inspector.title.text()
    window.qdoc.doc.update("n0", accelerator_count=4)  # GPUs 16 -> 12
    assert "12 GPUs" in inspector.title.text()
    window.scene.select_ids(["l0"])  # the bundle n0 - leaf0: two cables
    assert inspector.editors  # the two links' fields
    window.act_delete.trigger()
    assert "2 links" in inspector.title.text() and inspector.editors == {}
    window.act_undo.trigger()
    assert counts_text(window) in inspector.title.text() and "4 links" in inspector.title.text()


def test_a_delete_and_undo_read_the_kept_gpu_count(window, monkeypatch):
    """With nothing selected the title's GPUs are the window's kept count (the status bar's and the
    Jobs panel's, which sizes a job that names no GPU count by it): a cable's delete and undo count no
    server again (16k servers on each: ~3 ms of the window at 131k GPUs); a server's delete and undo
    add or take their GPUs from the count held, and the title says so."""
    from designer.core.model import Document

    counted = []
    num_gpus = Document.num_gpus
    monkeypatch.setattr(Document, "num_gpus", lambda doc: counted.append(1) or num_gpus(doc))
    inspector = window.inspector
    window.scene.clearSelection()
    assert window.settle()
    for action in (window.act_delete, window.act_undo):
        window.scene.select_ids(["l3"])
        counted.clear()
        action.trigger()
        assert window.settle()
        assert counted == []  # (before counts_text, which counts them itself)
        assert counts_text(window) in inspector.title.text()
    assert "4 links" in inspector.title.text()
    window.scene.select_ids(["n1"])
    counted.clear()
    window.act_delete.trigger()
    assert window.settle() and counted == [] and "8 GPUs" in inspector.title.text()
    window.scene.clearSelection()
    window.act_undo.trigger()
    assert window.settle() and counted == [] and "16 GPUs" in inspector.title.text()
