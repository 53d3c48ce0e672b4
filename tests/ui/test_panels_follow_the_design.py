"""After File > Open of another file, and after Undo of an applied plan, no panel shows the previous
result: the Breakdown, the Timeline, the Advisor, the status bar and the Logical Fabric view all follow
the design now open."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QToolButton

from tests.conftest import EXAMPLES
from tests.ui.test_advisor import analysed, raise_advisor, window  # noqa: F401  (the fixture)


def _step(result) -> str:
    return f"{result.step_time_s:.3f} s"


def _panels_show(window, result) -> None:
    """Every panel shows `result`: its step, its GPUs, its heat."""
    qtbot_step = _step(result)
    breakdown, timeline = window.breakdown_panel, window.timeline_panel
    assert breakdown.result is result and not breakdown.is_stale()
    assert qtbot_step in breakdown.headline["step"].text()
    assert timeline.result is None or timeline.result is result  # never the previous one
    assert f"step {result.step_time_s:.2f} s" in window.result_label.text()
    assert f"{result.num_gpus} GPUs" in window.counts_label.text()
    assert window.scene.heat.result in (None, result)
    logical = window.logical_view
    assert logical.heat_result in (None, result)


def test_file_open_of_another_file_leaves_no_panel_on_the_first(window, qtbot, monkeypatch, tmp_path):
    panel = raise_advisor(window, qtbot)
    analysed(panel, qtbot)
    window.act_heat.setChecked(True)
    if not window.logical_dock.isVisible():
        window.act_logical.trigger()
    first = window.result
    assert first.num_gpus == 64
    _panels_show(window, first)
    other = tmp_path / "gb200-nvl72.yaml"  # a file of the user's (an example opens as an untitled copy)
    other.write_text((EXAMPLES / "gb200-nvl72-144gpu.yaml").read_text())
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(other), "")))
    window.act_open.trigger()
    qtbot.waitUntil(lambda: window.qdoc.path == str(other), timeout=20_000)
    assert window.settle()
    second = window.result
    assert second is not first and second.num_gpus == 144
    _panels_show(window, second)
    assert window.scene.heat.result is second and window.logical_view.heat_result is second
    # the Advisor: the first file's advice never stands for the second
    analysed(panel, qtbot, start=False)
    assert panel.advice_state.result["current"]["step_time_s"] == pytest.approx(second.step_time_s, rel=1e-6)
    assert panel.advice_state.result["current"]["step_time_s"] != pytest.approx(first.step_time_s, rel=1e-3)


def test_undo_of_an_applied_plan_brings_every_panel_back(window, qtbot):
    panel = raise_advisor(window, qtbot)
    analysed(panel, qtbot)
    window.act_heat.setChecked(True)
    if not window.logical_dock.isVisible():
        window.act_logical.trigger()
    before = window.result
    advice = panel.changes.find("recompute-")
    assert advice is not None and advice.job_only
    qtbot.mouseClick(panel.changes.table.findChild(QToolButton, f"apply:{advice.id}"), Qt.LeftButton)
    assert window.settle()
    applied = window.result
    assert applied.step_time_s != pytest.approx(before.step_time_s, rel=1e-6)
    _panels_show(window, applied)
    analysed(panel, qtbot, start=False)

    window.qdoc.undo_stack.undo()  # Edit > Undo
    assert window.settle()
    after = window.result
    assert after.step_time_s == pytest.approx(before.step_time_s, rel=1e-9)
    _panels_show(window, after)
    assert window.scene.heat.result is after and window.logical_view.heat_result is after
    assert _step(applied) not in window.breakdown_panel.headline["step"].text()
    # the Advisor: stale (its advice was for the applied plan) until it has analysed the design again
    shown = panel.advice_state.result
    assert panel.stale or shown["current"]["step_time_s"] == pytest.approx(after.step_time_s, rel=1e-6)
    analysed(panel, qtbot, start=False)
    assert panel.advice_state.result["current"]["step_time_s"] == pytest.approx(after.step_time_s, rel=1e-6)
