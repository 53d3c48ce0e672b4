""""Copy as Megatron arguments" on the plan-search table and the Advisor's changes:
right-click a row, the action puts that plan's Megatron-LM line on the clipboard."""
import pytest

from tests.conftest import EXAMPLES
from tests.ui.test_advisor import analysed, raise_advisor, searched, small_space


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("DESIGNER_RECOVERY_DIR", str(tmp_path / "recovery"))
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QMessageBox

    from designer.ui.window.main_window import MainWindow

    w = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat))
    qtbot.addWidget(w)
    monkeypatch.setattr(QMessageBox, "question", staticmethod(lambda *a, **k: QMessageBox.Discard))
    failures = []
    monkeypatch.setattr(QMessageBox, "critical", staticmethod(lambda *a, **k: failures.append(a)))
    w.resize(1600, 1000)
    w.open_file(str(EXAMPLES / "h100-64gpu-infiniband.yaml"))
    w.show()
    qtbot.waitExposed(w)
    assert w.settle()
    w.failures = failures
    yield w
    w.close()


@pytest.mark.slow
def test_copy_a_searched_plan_as_megatron_arguments(window, qtbot):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    from designer.core.export.megatron_args import plan_line
    from designer.core.model.catalog import default_catalog

    panel = raise_advisor(window, qtbot)
    analysed(panel, qtbot)
    panel.plan_search.options = small_space()
    searched(panel, qtbot)
    action = panel.plan_search.copy_megatron
    assert action.text() == "Copy as Megatron arguments"
    table = panel.plan_search.page.table
    assert action in table.actions() and table.contextMenuPolicy() == Qt.ActionsContextMenu
    QApplication.clipboard().setText("before")
    rows = panel.plan_search.result.top
    assert len(rows) >= 2
    # the second plan: the row the user clicked
    rect = table.visualItemRect(table.item(1, 1))
    from PySide6.QtTest import QTest

    QTest.mouseClick(table.viewport(), Qt.LeftButton, pos=rect.center())
    assert table.currentRow() == 1
    action.trigger()
    text = QApplication.clipboard().text()
    expected = plan_line(window.qdoc.doc, rows[1]["point"], default_catalog().presets()).one_line()
    assert text == expected and text.startswith("--num-layers 32 ")
    p = rows[1]["point"]
    assert (f"--tensor-model-parallel-size {p.tp}" in text) == (p.tp > 1)
    assert f"--micro-batch-size {p.micro_batch}" in text
    assert "copied" in panel.controls.status_label.text() and not window.failures


def test_copy_an_advisor_change_as_megatron_arguments(window, qtbot):
    from PySide6.QtWidgets import QApplication

    panel = raise_advisor(window, qtbot)
    analysed(panel, qtbot)
    advice = next(a for a in panel.advice_state.result["ranked"]
                  if a.set and any(s.startswith("parallelism.tensor_model_parallel_size=") for s in a.set))
    tp = next(s for s in advice.set if s.startswith("parallelism.tensor_model_parallel_size=")).split("=")[1]
    QApplication.clipboard().setText("before")
    panel.changes.table.setCurrentCell(panel.changes.row_of(advice), 0)
    panel.changes.copy_change_megatron.trigger()
    text = QApplication.clipboard().text()
    assert text.startswith("--num-layers 32 ") and "--bf16" in text
    assert (f"--tensor-model-parallel-size {tp}" in text) == (tp != "1"), (advice.set, text)
    # a heading row holds no plan: nothing copied, and the status says why
    QApplication.clipboard().setText("before")
    panel.changes.table.setCurrentCell(0, 0)
    panel.changes.copy_change_megatron.trigger()
    assert QApplication.clipboard().text() == "before" and "select a plan" in panel.controls.status_label.text()
    assert not window.failures
