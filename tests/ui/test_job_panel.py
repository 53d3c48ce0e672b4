"""The job panel checks as one types, and a valid change is one undoable step."""

from pathlib import Path

import pytest

from tests.conftest import EXAMPLES
from tests.ui.test_editor import window  # noqa: F401  (the fixture)


def type_into(panel, path, text):
    editor = panel.editors[path]
    editor.setText(text)
    editor.textEdited.emit(text)
    editor.editingFinished.emit()


def test_an_impossible_plan_says_why_beside_the_field(window):
    window.open_file(str(EXAMPLES / "h100-64gpu-infiniband.yaml"))
    window.settle()
    panel = window.job_panel
    before = window.qdoc.doc.spec.parallelism
    type_into(panel, "parallelism.tensor_model_parallel_size", "3")
    assert window.settle()
    error = panel.errors["parallelism.tensor_model_parallel_size"]
    assert not error.isHidden() and "does not divide" in error.text() and "TP 4 or 2" in error.text()
    assert window.qdoc.doc.spec.parallelism.tensor_model_parallel_size == 3  # an undoable step, like any edit
    assert "error" in panel.summary.text()
    window.qdoc.undo_stack.undo()
    assert window.qdoc.doc.spec.parallelism == before and window.settle()
    assert error.isHidden()


def test_text_that_is_not_a_number_is_refused_beside_the_field(window):
    window.open_file(str(EXAMPLES / "h100-64gpu-infiniband.yaml"))
    window.settle()
    before = window.qdoc.doc.spec.parallelism
    type_into(window.job_panel, "parallelism.tensor_model_parallel_size", "four")
    error = window.job_panel.errors["parallelism.tensor_model_parallel_size"]
    assert not error.isHidden() and error.text()
    assert window.qdoc.doc.spec.parallelism == before  # never reaches the document


def test_a_valid_change_is_undoable_and_re_evaluated(window):
    window.open_file(str(EXAMPLES / "h100-64gpu-infiniband.yaml"))
    window.settle()
    first = window.result.step_time_s
    panel = window.job_panel
    type_into(panel, "parallelism.tensor_model_parallel_size", "4")
    doc = window.qdoc.doc
    assert doc.spec.parallelism.tensor_model_parallel_size == 4
    assert "TP 4" in panel.summary.text()
    assert window.settle() and window.result is not None and window.result.plan["tp"] == 4
    assert window.result.step_time_s != first
    window.qdoc.undo_stack.undo()
    assert doc.spec.parallelism.tensor_model_parallel_size == 2
    assert panel.editors["parallelism.tensor_model_parallel_size"].text() == "2"


def test_preset_fills_the_placeholders(window):
    window.open_file(str(EXAMPLES / "h100-64gpu-infiniband.yaml"))
    panel = window.job_panel
    assert panel.editors["workload.num_layers"].placeholderText() == "32"  # llama3-8b
    panel.preset.setCurrentText("llama3-70b")
    panel.preset.activated.emit(0)
    assert window.qdoc.doc.spec.workload.preset == "llama3-70b"
    assert panel.editors["workload.num_layers"].placeholderText() == "80"


@pytest.mark.slow
def test_the_ui_stays_responsive_while_a_slow_engine_runs(qtbot, tmp_path):
    """Event-loop delay measured while the engine is busy for 3 s: it must stay below a frame or two."""
    import gc
    import threading
    import time

    from PySide6.QtCore import QEvent, QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    from designer.ui.window.main_window import MainWindow

    # Quiet the test process first: earlier tests' closed windows stop their engine workers;
    # wait for them, destroy what Qt still holds, collect, and freeze the old heap.
    for thread in threading.enumerate():
        if thread.name == "designer-engine":
            thread.join(timeout=30)
    gc.collect()
    QApplication.sendPostedEvents(None, QEvent.DeferredDelete)
    QApplication.processEvents()
    gc.freeze()
    try:
        w = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat), engine_slowdown_s=3.0)
        qtbot.addWidget(w)
        w.open_file(str(EXAMPLES / "a100-1024gpu-rail-infiniband.yaml"))
        w.show()
        qtbot.waitExposed(w)
        settle_until = time.perf_counter() + 0.2  # the window's first paint is not the engine's doing
        while time.perf_counter() < settle_until:
            QApplication.processEvents()
        delays = []
        last = [time.perf_counter()]

        def tick():
            now = time.perf_counter()
            delays.append(now - last[0] - 0.01)
            last[0] = now

        timer = QTimer(interval=10, timeout=tick)
        timer.start()
        deadline = time.perf_counter() + 1.0
        while time.perf_counter() < deadline:
            QApplication.processEvents()
            time.sleep(0.002)
        timer.stop()
        assert w.evaluating  # still running: the engine is slow
        delays.sort()
        p95 = delays[int(len(delays) * 0.95)]
        assert len(delays) > 50 and p95 < 0.033 and delays[-1] < 0.1, (p95, delays[-3:])
        assert w.settle(60) and w.result is not None
        w.qdoc.undo_stack.setClean()
    finally:
        gc.unfreeze()


def test_editing_a_link_bandwidth_updates_the_result(window):
    from designer.ui.document import commands

    window.open_file(str(EXAMPLES / "h100-roce-2to1-ethernet.yaml"))
    assert window.settle() and window.result is not None
    before = window.result
    doc = window.qdoc.doc
    uplinks = {l.id: {"bandwidth_gbps": l.bandwidth_gbps / 8} for l in doc.links
               if l.a.startswith("leaf") and "spine" in l.b}
    window.qdoc.push(commands.SetFields(window.qdoc, uplinks, "Slower spine"))
    assert window.settle() and window.result is not before
    assert window.result.step_time_s > before.step_time_s
    assert (window.previous_result.step_time_s, window.previous_result.breakdown_s) == (
        before.step_time_s, before.breakdown_s)
    changed = {k for k in before.breakdown_s if abs(window.result.breakdown_s[k] - before.breakdown_s[k]) > 1e-9}
    assert changed & {"pp_comm", "dp_comm", "bubble", "imbalance_wait"}


@pytest.mark.slow
def test_timeline_exports_as_a_perfetto_trace(window, tmp_path):
    import json

    window.open_file(str(EXAMPLES / "h100-roce-2to1-ethernet.yaml"))
    assert window.settle() and window.result is not None
    path = window.exports.trace(str(tmp_path / "t.json"))
    data = json.loads(Path(path).read_text())
    assert any(e["ph"] == "X" and e["cat"] == "wait" for e in data["traceEvents"])
    assert {e["args"]["name"] for e in data["traceEvents"] if e.get("name") == "process_name"} <= {
        n.id for n in window.qdoc.doc.nodes}


@pytest.mark.slow
def test_every_export_of_the_analysis_parses(window, tmp_path):
    import csv
    import xml.etree.ElementTree as ET

    window.open_file(str(EXAMPLES / "h100-64gpu-infiniband.yaml"))
    assert window.settle() and window.result is not None
    for which in ("breakdown", "timeline"):
        png = window.exports.panel(which, str(tmp_path / f"{which}.png"))
        assert Path(png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        svg = window.exports.panel(which, str(tmp_path / f"{which}.svg"))
        assert ET.parse(svg).getroot().tag.endswith("svg")
        rows = list(csv.reader(Path(window.exports.panel(which, str(tmp_path / f"{which}.csv"))).read_text().splitlines()))
        assert len(rows) > 2
    pdf = window.exports.report(str(tmp_path / "report.pdf"))
    assert Path(pdf).read_bytes()[:5] == b"%PDF-"
    # the report's numbers are the evaluation's (the headless report test compares them with evaluate --json)
    from tests.pdf_text import text_lines
    text = "\n".join(text_lines(Path(pdf).read_bytes()))
    assert f"{window.result.step_time_s:.3f}" in text


def test_the_summary_checks_the_plan_again_only_when_the_job_or_its_gpus_change(window, monkeypatch):
    """A cable's delete and undo change neither the job nor the GPUs it is sized by: the summary keeps
    its plan (no check of the plan on the window's thread); a server's delete and a TP edit check it
    again, and the summary says what follows."""
    import designer.ui.docks.job_panel as job_panel

    checked = []
    check_job = job_panel.check_job
    monkeypatch.setattr(job_panel, "check_job", lambda *a, **k: checked.append(a[2]) or check_job(*a, **k))
    window.open_file(str(EXAMPLES / "h100-64gpu-infiniband.yaml"))
    assert window.settle()
    panel, doc = window.job_panel, window.qdoc.doc
    summary = panel.summary.text()
    assert "<b>64 GPUs</b> = TP 2 x PP" in summary
    cable = next(link for link in doc.links if link.b.startswith("spine")).id  # a leaf-spine cable
    checked.clear()
    for action in (window.act_delete, window.act_undo):
        window.scene.select_ids([cable])
        action.trigger()
        assert window.settle() and panel.summary.text() == summary
    assert checked == [] and doc.get(cable) is not None
    window.scene.select_ids([doc.nodes[0].id])
    window.act_delete.trigger()
    assert window.settle() and checked == [56]  # (a batch of 56 GPUs does not divide: "1 error")
    assert "1 error" in panel.summary.text()
    window.act_undo.trigger()
    assert window.settle() and panel.summary.text() == summary
    type_into(panel, "parallelism.tensor_model_parallel_size", "4")
    assert window.settle() and "<b>64 GPUs</b> = TP 4 x PP" in panel.summary.text()
