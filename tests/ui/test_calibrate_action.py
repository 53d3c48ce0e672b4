"""File > Calibrate from nccl-tests...: pick logs, see the fit, Apply is one undo step."""
import pytest

from designer.core.generate import generate_fat_tree
from designer.core.io import save_document
from tests.core.nccl_log_writer import synthetic_log

TRUTH = {"nvlink_efficiency": 0.74, "infiniband_nic_efficiency": 0.87}


@pytest.fixture
def opened(empty_window, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QFileDialog, QMessageBox

    errors = []  # a failing command shows a modal error box: record it instead of blocking
    monkeypatch.setattr(QMessageBox, "critical", staticmethod(lambda parent, title, text, *a: errors.append(text)))

    doc = generate_fat_tree(nodes=4, gpu="H100", name="calib")
    path = tmp_path / "c.yaml"
    save_document(doc, path)
    logs = []
    for op, n in (("all_gather", 8), ("all_gather", 32)):
        log = tmp_path / f"{op}_perf_{n}.txt"
        log.write_text(synthetic_log(doc, op, n, TRUTH, max_bytes=1 << 30))
        logs.append(str(log))
    window = empty_window
    window.open_file(str(path))
    asked = []
    monkeypatch.setattr(QFileDialog, "getOpenFileNames",
                        staticmethod(lambda parent=None, caption="", *a, **k: asked.append(caption) or (logs, "")))
    yield window, asked, logs
    assert not errors, errors


def answer(monkeypatch, button: str, seen: list):
    from designer.ui.dialogs.calibrate_dialog import CalibrationDialog

    def run(dialog):
        seen.append(dialog)
        if button == "apply":
            assert dialog.apply_button.isEnabled()
            dialog.apply_button.click()  # the user presses Apply
        else:
            dialog.reject()
        return dialog.result()

    monkeypatch.setattr(CalibrationDialog, "exec", run)


def test_apply_writes_the_fit_as_one_undo_step(opened, monkeypatch):
    window, asked, logs = opened
    seen = []
    answer(monkeypatch, "apply", seen)
    stack = window.qdoc.undo_stack
    before_index, before_calibration = stack.index(), dict(window.qdoc.doc.spec.calibration)
    window.act_calibrate.trigger()
    assert asked == ["Calibrate from nccl-tests logs"]
    dialog = seen[0]
    names = [dialog.constants.item(r, 1).text() for r in range(dialog.constants.rowCount())]
    assert "nvlink_efficiency" in names and "infiniband_nic_efficiency" in names
    assert dialog.rows.rowCount() > 20  # every measured row, before and after
    calibration = window.qdoc.doc.spec.calibration
    assert calibration["nvlink_efficiency"] == pytest.approx(0.74, abs=0.005)
    assert calibration["infiniband_nic_efficiency"] == pytest.approx(0.87, abs=0.005)
    assert "all_gather_perf_8.txt" in window.qdoc.doc.metadata.description
    assert stack.index() == before_index + 1 and stack.undoText() == "Calibrate from nccl-tests"
    window.act_undo.trigger()  # one step brings the old calibration back
    assert window.qdoc.doc.spec.calibration == before_calibration
    assert "designer calibrate" not in window.qdoc.doc.metadata.description


def test_cancel_changes_nothing(opened, monkeypatch):
    window, asked, _ = opened
    seen = []
    answer(monkeypatch, "cancel", seen)
    index = window.qdoc.undo_stack.index()
    window.act_calibrate.trigger()
    assert seen and window.qdoc.undo_stack.index() == index
    assert "nvlink_efficiency" not in window.qdoc.doc.spec.calibration


def test_a_bad_log_is_reported_not_raised(opened, monkeypatch, tmp_path):
    from PySide6.QtWidgets import QMessageBox

    window, _, logs = opened
    with open(logs[0], "a") as fh:
        fh.write("  1048576  262144  float  none\n")  # a row cut short
    shown = []
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda parent, title, text, *a: shown.append(text)))
    index = window.qdoc.undo_stack.index()
    window.act_calibrate.trigger()
    assert shown and f"{logs[0]}:" in shown[0] and "columns" in shown[0]
    assert window.qdoc.undo_stack.index() == index


def test_a_refused_fit_offers_the_fit_by_size_range(empty_window, tmp_path, monkeypatch):
    # the real A3 Mega log on a 2-node 200G Ethernet design: one set of values cannot fit the small and
    # the large sizes; the values fitted size range by size range can be applied
    from pathlib import Path

    from PySide6.QtWidgets import QFileDialog

    log = Path(__file__).parents[1] / "data" / "nccl-tests" / "a3mega-h100-2node-all_reduce.txt"
    path = tmp_path / "c.yaml"
    save_document(generate_fat_tree(nodes=2, gpu="H100", fabric="ethernet", nic_gbps=200, name="a3"), path)
    window = empty_window
    window.open_file(str(path))
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", staticmethod(lambda *a, **k: ([str(log)], "")))
    seen = []
    answer(monkeypatch, "apply", seen)
    window.act_calibrate.trigger()
    assert "One set of values cannot fit every row" in seen[0].verdict.text()
    calibration = window.qdoc.doc.spec.calibration
    assert 30 < calibration["net_overhead_us"] < 150
    assert 0.5 < calibration.get("ethernet_nic_efficiency", 0.9) <= 1.0  # a physical NIC share, if fitted
