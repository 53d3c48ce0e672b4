"""A layout that fits the work: the docks as the user left them in the last run, an Advisor table that
shows its rows at 1600x1000, an Inspector that does not cut a part's name, a canvas PDF on A4 or
Letter paper, and export dialogs that open in the design's folder."""
import re
import shutil

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog, QMessageBox

from tests.conftest import EXAMPLES

A100 = EXAMPLES / "a100-1024gpu-rail-infiniband.yaml"


def open_window(qtbot, tmp_path, monkeypatch, path=EXAMPLES / "h100-64gpu-infiniband.yaml"):
    """A shown 1600x1000 window with the settings of tmp_path (the same file for every run of a test)."""
    from designer.ui.window.main_window import MainWindow

    monkeypatch.setenv("DESIGNER_RECOVERY_DIR", str(tmp_path / "recovery"))
    monkeypatch.setattr(QMessageBox, "question", staticmethod(lambda *a, **k: QMessageBox.Discard))
    w = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat))
    qtbot.addWidget(w)
    w.resize(1600, 1000)
    w.open_file(str(path))
    w.show()
    qtbot.waitExposed(w)
    qtbot.waitUntil(lambda: w.advisor_dock.toggleViewAction().isChecked(), timeout=5000)  # tabbed after show
    return w


@pytest.mark.slow
def test_dock_sizes_and_places_are_remembered_across_runs(qtbot, tmp_path, monkeypatch):
    w = open_window(qtbot, tmp_path, monkeypatch)
    overview = w.minimap.parentWidget()
    assert w.dockWidgetArea(overview) == Qt.RightDockWidgetArea
    # the user drags the Overview to the left, widens the Inspector, brings the Advisor to the front
    w.addDockWidget(Qt.LeftDockWidgetArea, overview)
    w.resizeDocks([w.inspector_dock], [430], Qt.Horizontal)
    w.advisor_dock.raise_()
    qtbot.waitUntil(lambda: w.advisor_panel.shown, timeout=5000)
    QTest.qWait(50)
    inspector_px = w.inspector_dock.width()
    assert inspector_px > 400
    w.close()  # File > Quit

    again = open_window(qtbot, tmp_path, monkeypatch)  # the next run, with the same settings
    overview = again.minimap.parentWidget()
    qtbot.waitUntil(lambda: again.dockWidgetArea(overview) == Qt.LeftDockWidgetArea, timeout=5000)
    qtbot.waitUntil(lambda: abs(again.inspector_dock.width() - inspector_px) <= 4, timeout=5000)
    qtbot.waitUntil(lambda: again.advisor_panel.shown, timeout=5000)  # still in front of the Timeline
    assert not again.timeline_panel.isVisible() or again.timeline_panel.visibleRegion().isEmpty()
    again.close()


@pytest.mark.slow
def test_a_layout_of_another_version_is_not_applied(qtbot, tmp_path, monkeypatch):
    from designer.ui.window import layout_memory

    w = open_window(qtbot, tmp_path, monkeypatch)
    w.addDockWidget(Qt.LeftDockWidgetArea, w.minimap.parentWidget())
    w.close()
    monkeypatch.setattr(layout_memory, "LAYOUT_VERSION", layout_memory.LAYOUT_VERSION + 1)
    again = open_window(qtbot, tmp_path, monkeypatch)
    QTest.qWait(50)
    assert again.dockWidgetArea(again.minimap.parentWidget()) == Qt.RightDockWidgetArea  # the first-run layout
    again.close()


def rows_shown(table) -> int:
    header = table.verticalHeader()
    return sum(1 for row in range(table.rowCount())
               if header.sectionViewportPosition(row) >= 0
               and header.sectionViewportPosition(row) + header.sectionSize(row) <= table.viewport().height())


@pytest.mark.slow
def test_the_advisor_table_shows_its_rows_at_1600x1000(qtbot, tmp_path, monkeypatch):
    w = open_window(qtbot, tmp_path, monkeypatch, A100)
    assert w.settle()
    w.advisor_dock.raise_()  # the Advisor tab, as a user clicks it
    panel = w.advisor_panel
    qtbot.waitUntil(lambda: panel.shown, timeout=5000)
    panel.controls.analyse_button.click()
    qtbot.waitUntil(lambda: panel.advice_state.result is not None and not panel.running, timeout=60_000)
    QTest.qWait(50)
    assert len(panel.changes.advice()) >= 10
    assert rows_shown(panel.changes.table) >= 6, (panel.changes.table.height(), w.advisor_dock.height())
    w.close()


def test_the_advisor_table_keeps_a_few_rows_in_a_squeezed_dock(qtbot, tmp_path, monkeypatch):
    w = open_window(qtbot, tmp_path, monkeypatch)
    table = w.advisor_panel.changes.table
    header = table.horizontalHeader().sizeHint().height()
    assert table.minimumHeight() >= header + 4 * 24  # never one squeezed line


@pytest.mark.slow
def test_the_inspector_shows_a_whole_accelerator_name(qtbot, tmp_path, monkeypatch):
    w = open_window(qtbot, tmp_path, monkeypatch, A100)
    w.fit_view()
    node = w.qdoc.doc.nodes[0]
    assert node.accelerator == "A100-SXM4-80GB"
    item = w.scene.devices[node.id]
    # zoom onto the server and click it, as a user does
    w.view.fitInView(item.sceneBoundingRect().adjusted(-40, -40, 40, 40), Qt.KeepAspectRatio)
    QTest.qWait(20)
    point = w.view.mapFromScene(item.sceneBoundingRect().center())
    QTest.mouseClick(w.view.viewport(), Qt.LeftButton, Qt.NoModifier, point)
    qtbot.waitUntil(lambda: "accelerator" in w.inspector.editors, timeout=5000)
    for width in (None, 200):  # the first-run dock, and a dock the user made narrow
        if width:
            w.resizeDocks([w.inspector_dock], [width], Qt.Horizontal)
        QTest.qWait(50)
        field = w.inspector.editors["accelerator"]
        assert field.text() == "A100-SXM4-80GB"
        room = field.contentsRect().width() - field.textMargins().left() - field.textMargins().right() - 4
        assert field.fontMetrics().horizontalAdvance(field.text()) <= room, (width, field.width())
        assert field.cursorPosition() == 0  # its start in view, not "100-SXM4-80GB"
    w.close()


@pytest.fixture
def saved_design(tmp_path):
    folder = tmp_path / "designs"
    folder.mkdir()
    path = folder / "pod.yaml"
    shutil.copy(EXAMPLES / "h100-64gpu-infiniband.yaml", path)
    return path


def capture_dialogs(monkeypatch, answer):
    """Every save dialog's proposed path and filters; `answer(filters)` is what the user picks."""
    asked = []

    def dialog(_parent, caption, start, filters="", *args, **kwargs):
        asked.append((caption, start, filters))
        return answer(filters)

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(dialog))
    return asked


@pytest.mark.slow
def test_export_dialogs_start_in_the_designs_folder(qtbot, tmp_path, monkeypatch, saved_design):
    w = open_window(qtbot, tmp_path, monkeypatch, saved_design)
    assert w.settle()
    asked = capture_dialogs(monkeypatch, lambda filters: ("", ""))  # the user cancels each
    monkeypatch.chdir(tmp_path)  # the working directory is elsewhere
    for action in (w.act_export, w.act_report, w.act_trace, w.act_export_breakdown, w.act_export_timeline):
        action.trigger()
    assert len(asked) == 5
    for caption, start, _filters in asked:
        assert str(saved_design.parent) == str(__import__("pathlib").Path(start).parent), (caption, start)
        assert __import__("pathlib").Path(start).name.startswith("pod")
    w.close()


def media_box(pdf: bytes) -> tuple[float, float]:
    match = re.search(rb"/MediaBox\s*\[\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*\]", pdf)
    x0, y0, x1, y1 = (float(v) for v in match.groups())
    return x1 - x0, y1 - y0


@pytest.mark.parametrize("paper, points", [("A4", (595.0, 842.0)), ("Letter", (612.0, 792.0))])
def test_the_canvas_exports_a_pdf_on_a4_or_letter(qtbot, tmp_path, monkeypatch, saved_design, paper, points):
    w = open_window(qtbot, tmp_path, monkeypatch, saved_design)
    out = tmp_path / f"canvas-{paper}.pdf"

    def pick(filters):
        choice = next(f for f in filters.split(";;") if paper in f)
        return str(out), choice

    asked = capture_dialogs(monkeypatch, pick)
    w.act_export.trigger()  # File > Export Canvas..., "PDF on A4 paper"
    assert "PDF document (*.pdf)" in asked[0][2]  # the drawing's own size is still offered
    size = media_box(out.read_bytes())
    assert sorted(round(v) for v in size) == sorted(round(v) for v in points)
    w.close()


def test_the_canvas_pdf_of_the_drawings_size_is_unchanged(qtbot, tmp_path, monkeypatch, saved_design):
    w = open_window(qtbot, tmp_path, monkeypatch, saved_design)
    out = tmp_path / "canvas.pdf"
    capture_dialogs(monkeypatch, lambda filters: (str(out), "PDF document (*.pdf)"))
    w.act_export.trigger()
    size = media_box(out.read_bytes())
    assert sorted(round(v) for v in size) not in (sorted((595, 842)), sorted((612, 792)))
    w.close()


@pytest.mark.slow
def test_a_screenshot_shows_the_first_run_layout_and_keeps_the_users(qtbot, tmp_path, monkeypatch):
    """`designer-gui --screenshot` pictures a first run: the user's saved layout is neither used nor replaced."""
    from designer.ui.app import build_parser, create_window

    w = open_window(qtbot, tmp_path, monkeypatch)
    w.addDockWidget(Qt.LeftDockWidgetArea, w.minimap.parentWidget())
    w.close()
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)
    saved = settings.value("window/docks")
    args = build_parser().parse_args([str(EXAMPLES / "h100-64gpu-infiniband.yaml"), "--screenshot",
                                      str(tmp_path / "shot.png")])
    shot, error = create_window(args, settings)
    assert error is None
    qtbot.addWidget(shot)
    shot.show()
    qtbot.waitUntil(lambda: shot.advisor_dock.toggleViewAction().isChecked(), timeout=5000)
    QTest.qWait(50)
    assert shot.dockWidgetArea(shot.minimap.parentWidget()) == Qt.RightDockWidgetArea
    shot.close()
    assert settings.value("window/docks") == saved


def test_closing_the_logical_view_gives_its_width_to_the_canvas_not_the_job_form(qtbot, tmp_path, monkeypatch):
    w = open_window(qtbot, tmp_path, monkeypatch)
    w.act_logical.trigger()  # View > Logical Fabric View: opens beside the left docks
    qtbot.waitUntil(lambda: w.logical_dock.isVisible(), timeout=5000)
    w.act_logical.trigger()  # and closed again
    qtbot.waitUntil(lambda: not w.logical_dock.isVisible(), timeout=5000)
    QTest.qWait(50)
    side = [d for d in (w.job_dock, w.inspector_dock) if d.isVisible()]
    assert side and all(d.width() <= 620 for d in side)
    assert w.view.width() >= 0.4 * w.width()  # the canvas keeps the most space


def test_view_reset_layout_brings_back_the_first_runs_docks(qtbot, tmp_path, monkeypatch):
    w = open_window(qtbot, tmp_path, monkeypatch)
    first = {d.objectName(): d.isVisible() for d in (w.inspector_dock, w.breakdown_dock, w.timeline_dock)}
    w.inspector_dock.toggleViewAction().trigger()  # the user closes the Inspector and the Breakdown
    w.breakdown_dock.toggleViewAction().trigger()
    qtbot.waitUntil(lambda: not w.inspector_dock.isVisible() and not w.breakdown_dock.isVisible(), timeout=5000)
    w.act_reset_layout.trigger()  # View > Reset Layout
    qtbot.waitUntil(lambda: w.inspector_dock.isVisible() and w.breakdown_dock.isVisible(), timeout=5000)
    assert {d.objectName(): d.isVisible() for d in (w.inspector_dock, w.breakdown_dock, w.timeline_dock)} == first
    assert w.breakdown_dock.height() >= 300  # the first layout's bottom row, not a squeezed one
