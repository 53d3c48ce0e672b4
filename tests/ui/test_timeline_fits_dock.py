"""The Timeline dock shows every pipeline stage without scrolling, and the detail line of a clicked
wait is never cut: it ends in "…" and its tooltip holds the whole text."""
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtTest import QTest

from tests.conftest import EXAMPLES


EIGHT_STAGES = "a100-1024gpu-rail-infiniband.yaml"  # pipeline_model_parallel_size: 8


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    """The first window a user sees at 1600x1000 (its docks laid out for that size)."""
    monkeypatch.setenv("DESIGNER_RECOVERY_DIR", str(tmp_path / "recovery"))
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QMessageBox

    from designer.ui.window.main_window import MainWindow

    monkeypatch.setattr(QMessageBox, "question", staticmethod(lambda *a, **k: QMessageBox.Discard))
    w = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat))
    qtbot.addWidget(w)
    w.resize(1600, 1000)
    w.show()
    qtbot.waitExposed(w)
    return w


def _open_in_a_real_size_window(window, qtbot):
    window.open_file(str(EXAMPLES / EIGHT_STAGES))
    assert window.settle() and window.result is not None
    timeline = window.timeline_panel
    window.timeline_dock.show()
    window.timeline_dock.raise_()
    qtbot.waitUntil(lambda: timeline.result is not None and timeline.vb.height() > 0, timeout=60_000)
    return timeline


def test_every_stage_of_eight_has_its_lane_in_the_dock_without_scrolling(window, qtbot):
    from designer.ui.panels.timeline_rows_in_view import MIN_ROW_PIXELS

    timeline = _open_in_a_real_size_window(window, qtbot)
    stages = {info["stage"] for info in timeline.result.devices.values()}
    assert len(stages) == 8
    top, bottom = timeline.vb.viewRange()[1]
    in_view = {timeline.result.devices[d]["stage"] for r, (d, _) in enumerate(timeline.rows) if top <= r <= bottom}
    assert in_view == stages
    assert not timeline.scrollbar.isVisible()
    assert timeline.vb.height() / (bottom - top) >= MIN_ROW_PIXELS  # each row readable, not squashed
    labels = {label for _, label in timeline.plot.getAxis("left")._tickLevels[0]}
    assert all(any(label.startswith(f"stage {s} ") for label in labels) for s in stages)


def test_a_clicked_wait_shows_its_whole_detail_line_or_elides_it_with_a_tooltip(window, qtbot):
    timeline = _open_in_a_real_size_window(window, qtbot)
    events = timeline.result.events
    wait = next(i for i, e in enumerate(events) if e.stream == "wait" and e.waited_for is not None
                and (e.device, e.stream) in timeline.layout_rows.row_index)
    e = events[wait]
    row = timeline.layout_rows.row_index[(e.device, e.stream)]
    timeline.vb.setXRange(e.start_s - (e.end_s - e.start_s), e.end_s + (e.end_s - e.start_s), padding=0)
    QTest.qWait(50)
    point = timeline.graphics.mapFromScene(timeline.vb.mapViewToScene(QPointF((e.start_s + e.end_s) / 2, row)))
    QTest.mouseClick(timeline.graphics.viewport(), Qt.LeftButton, Qt.NoModifier, point)
    assert timeline.selected_event() == wait

    line = timeline.info
    whole = timeline.event_text(wait).replace("\n", "  ·  ")
    assert line.full_text() == whole and "waited for" in whole
    shown = line.text()
    room = line.contentsRect().width()
    assert line.fontMetrics().horizontalAdvance(shown) <= room  # nothing drawn past the edge
    if shown != whole:
        assert shown.endswith("…") and whole.startswith(shown[:-1])
        assert line.toolTip() == whole
    # a narrow dock: the same line elides, the tooltip holds it all
    window.resize(900, 1000)
    qtbot.waitUntil(lambda: line.is_elided(), timeout=5_000)
    assert line.text().endswith("…") and line.toolTip() == whole
    assert line.fontMetrics().horizontalAdvance(line.text()) <= line.contentsRect().width()


def test_a_double_click_opens_a_stage_into_its_lanes_and_closes_it(window, qtbot):
    timeline = _open_in_a_real_size_window(window, qtbot)
    assert timeline.lanes_merged  # 8 stages x 5 lanes do not fit the dock: one row per stage
    devices = [d for d, _ in timeline.rows]
    stage3 = next(d for d in devices if timeline.result.devices[d]["stage"] == 3)

    def double_click_row(device):
        row = next(r for r, (d, _) in enumerate(timeline.rows) if d == device)
        x = sum(timeline.vb.viewRange()[0]) / 2
        point = timeline.graphics.mapFromScene(timeline.vb.mapViewToScene(QPointF(x, row)))
        QTest.mouseDClick(timeline.graphics.viewport(), Qt.LeftButton, Qt.NoModifier, point)

    double_click_row(stage3)
    lanes = [lane for d, lane in timeline.rows if d == stage3]
    assert len(lanes) > 1 and "compute" in lanes and "all" not in lanes  # stage 3 opened into its lanes
    assert all(lane == "all" for d, lane in timeline.rows if d != stage3)  # the others stay one row each
    top, bottom = timeline.vb.viewRange()[1]
    assert top <= 0 and bottom >= len(timeline.rows) - 1  # every row still in view
    e = next(i for i, ev in enumerate(timeline.result.events) if ev.device == stage3 and ev.stream == "compute")
    ev = timeline.result.events[e]
    row = timeline.rows.index((stage3, "compute"))
    assert timeline.event_at((ev.start_s + ev.end_s) / 2, row) is not None  # its bars are on its lanes

    double_click_row(stage3)
    assert [lane for d, lane in timeline.rows if d == stage3] == ["all"]
