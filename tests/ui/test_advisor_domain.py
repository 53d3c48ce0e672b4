"""The Advisor's "NVL72 instead of 4-GPU servers" applied from the table as one undo
step, saved and reopened with its NVLink domains."""
import pytest

from tests.ui.test_advisor import LONG, analysed, raise_advisor


@pytest.fixture
def gb200_window(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("DESIGNER_RECOVERY_DIR", str(tmp_path / "recovery"))
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QMessageBox

    from designer.core.generate.fat_tree import generate_fat_tree
    from designer.core.io.files import save_document
    from designer.core.io.overrides import apply_overrides
    from designer.ui.window.main_window import MainWindow

    doc = generate_fat_tree(36, "GB200", gpus_per_node=4, nics_per_node=4, nvlink_domain_gpus=4)
    apply_overrides(doc, ["workload.preset=llama3-70b", "workload.global_batch_size=144",
                          "parallelism.tensor_model_parallel_size=8", "parallelism.pipeline_model_parallel_size=2"])
    path = tmp_path / "gb200.yaml"
    save_document(doc, path)
    w = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat))
    qtbot.addWidget(w)
    monkeypatch.setattr(QMessageBox, "question", staticmethod(lambda *a, **k: QMessageBox.Discard))
    w.resize(1600, 1000)
    w.open_file(str(path))
    w.show()
    qtbot.waitExposed(w)
    assert w.settle()
    yield w, path
    w.close()


def test_nvl72_advice_applies_saves_and_reopens(gb200_window, qtbot):
    from PySide6.QtCore import Qt

    from designer.core.io import load_document

    window, path = gb200_window
    panel = raise_advisor(window, qtbot)
    analysed(panel, qtbot)
    advice = panel.changes.find("nvlink-domain-72")
    assert advice is not None and advice.title == "NVL72 instead of 4-GPU servers" and advice.speedup > 0
    step_before = window.result.step_time_s
    row = panel.changes.row_of(advice)
    panel.changes.table.scrollToItem(panel.changes.table.item(row, 1))
    rect = panel.changes.table.visualItemRect(panel.changes.table.item(row, 1))
    qtbot.mouseClick(panel.changes.table.viewport(), Qt.LeftButton, pos=rect.center())
    qtbot.mouseDClick(panel.changes.table.viewport(), Qt.LeftButton, pos=rect.center())
    assert window.qdoc.undo_stack.undoText() == f"Advisor: {advice.title}"
    doc = window.qdoc.doc
    assert [n.nvlink_domain for n in doc.nodes[:19]] == ["nvl0"] * 18 + ["nvl1"]
    assert window.settle()
    qtbot.waitUntil(lambda: window.result is not None and window.result.step_time_s < step_before, timeout=LONG)
    window.act_save.trigger()
    again = load_document(path)
    assert {n.nvlink_domain for n in again.nodes} == {"nvl0", "nvl1"}
    window.qdoc.undo_stack.undo()
    assert {n.nvlink_domain for n in window.qdoc.doc.nodes} == {None}  # each tray its own domain again
