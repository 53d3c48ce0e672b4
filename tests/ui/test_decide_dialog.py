"""Tools > Compare Clusters for a Model...: the open design's job on other designs, per run."""
import pytest

from tests.conftest import EXAMPLES, run_cli


@pytest.mark.slow  # ~16 s: two plan searches; tests/test_decide.py covers the decision itself
def test_compare_clusters_for_a_model_from_the_tools_menu(empty_window, tmp_path, monkeypatch, qtbot):
    from PySide6.QtWidgets import QFileDialog

    other = tmp_path / "gb200.yaml"
    code, _, err = run_cli("generate", "fat-tree", "-o", other, "--nodes", "16", "--gpu", "GB200",
                           "--gpus-per-node", "4", "--nics-per-node", "4", "--nic-gbps", "800",
                           "--nvlink-domain-gpus", "32")
    assert code == 0, err
    window = empty_window
    window.open_file(str(EXAMPLES / "h100-64gpu-infiniband.yaml"))
    assert window.settle()
    tools = next(m for m in window.menuBar().actions() if m.text() == "&Tools").menu()
    assert window.act_decide in tools.actions()
    window.act_decide.trigger()
    dialog = window.tools.decide_dialog
    assert dialog.isVisible()
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(other), "")))
    dialog.add_button.click()
    assert dialog.designs.count() == 2
    dialog.tokens.setText("lots")
    dialog.run_button.click()
    assert "tokens" in dialog.status.text() and dialog.decision is None  # the field is named
    dialog.tokens.setText("100B")
    dialog.run_button.click()
    qtbot.waitUntil(lambda: dialog.decision is not None or dialog.error is not None, timeout=240000)
    assert dialog.error is None, dialog.error
    assert dialog.table.columnCount() == 2 and dialog.table.rowCount() > 10
    assert dialog.status.text() == dialog.decision.verdict
    labels = [dialog.table.verticalHeaderItem(i).text() for i in range(dialog.table.rowCount())]
    assert "time to train (days)" in labels and "cost per run" in labels and "goodput" in labels
    out = tmp_path / "decision.pdf"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(out), "")))
    dialog.report_button.click()
    # the report a buyer forwards: each design's pictures, its best plan's Megatron-LM arguments, the
    # Advisor's changes and the assumptions, as in `designer decide --report`
    from tests.test_decide import pdf_text_and_pictures

    text, pictures = pdf_text_and_pictures(out.read_bytes())
    assert pictures == 4  # two designs, each its racks and cables and its logical fabric view
    for answer in dialog.decision.answers:
        assert f"Design: {answer.name}" in text and answer.changes is not None
    assert text.count("Best plan as Megatron-LM arguments") == 2 and text.count("--global-batch-size") == 2
    assert "the Advisor's best changes" in text and "Assumptions and sources" in text
