"""A switch's routing in the Inspector: unset (its model's default) shows empty; picking `static` sets it
on the document and the step follows; the empty entry unsets it again."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QComboBox, QDockWidget

EXAMPLE = Path(__file__).resolve().parents[2] / "resources" / "examples" / "h100-64gpu-infiniband.yaml"


def _pick(combo: QComboBox, text: str) -> None:
    """Choose an entry as the keyboard does: focus, then the arrow keys, then the activation."""
    index = combo.findText(text)
    assert index >= 0, text
    combo.setFocus()
    combo.setCurrentIndex(index)
    combo.activated.emit(index)
    QApplication.processEvents()


def test_routing_is_an_optional_choice_of_the_switch(empty_window):
    w = empty_window
    w.open_file(str(EXAMPLE))
    w.settle()
    w.findChild(QDockWidget, "Inspector").raise_()
    leaf = next(s for s in w.qdoc.doc.switches if s.tier == "leaf")
    w.inspector.show_ids([leaf.id])
    QApplication.processEvents()
    combo = w.inspector.editors["routing"]
    assert isinstance(combo, QComboBox) and combo.currentText() == ""  # unset: the model's adaptive
    assert [combo.itemText(i) for i in range(combo.count())] == ["", "ecmp", "static", "adaptive", "scheduled"]
    _pick(combo, "static")
    assert w.qdoc.doc.find("switches", leaf.id).routing == "static"
    _pick(combo, "")
    assert w.qdoc.doc.find("switches", leaf.id).routing is None
    QTest.keySequence(w, "Ctrl+Z")  # undo brings static back
    QApplication.processEvents()
    assert w.qdoc.doc.find("switches", leaf.id).routing == "static"
