"""File > Compare With...: the open design beside another file, in a dialog."""
import pytest

from tests.test_compare import write_spine_designs


@pytest.fixture
def compare(empty_window, tmp_path, monkeypatch, qtbot):
    """Open the 1:1 design, then File > Compare With... the file the open dialog answers."""
    from PySide6.QtWidgets import QFileDialog

    one, four = write_spine_designs(tmp_path)
    window = empty_window
    window.open_file(str(one))
    assert window.settle() and window.result is not None
    asked = []

    def run(path):
        monkeypatch.setattr(QFileDialog, "getOpenFileName",
                            staticmethod(lambda *a, **k: asked.append(a[1]) or (str(path), "")))
        window.act_compare.trigger()
        assert asked[-1] == "Compare with"
        dialog = window.tools.compare_dialog
        qtbot.waitUntil(lambda: dialog.comparison is not None or dialog.error is not None, timeout=60000)
        return dialog

    return window, run, one, four


def cells(dialog, label):
    table = dialog.table
    for i in range(table.rowCount()):
        if table.item(i, 0) is not None and table.item(i, 0).text().strip() == label:
            return [table.item(i, c).text() if table.item(i, c) else "" for c in range(table.columnCount())]
    raise AssertionError(f"no row {label!r}")


def test_compare_with_shows_both_columns_and_the_differences(compare):
    from PySide6.QtGui import QColor

    from designer.ui.panels.plot_style import SLOWER

    window, run, one, four = compare
    dialog = run(four)
    assert dialog.error is None and dialog.isVisible() and not dialog.isModal()
    headers = [dialog.table.horizontalHeaderItem(c).text() for c in range(5)]
    assert headers == ["figure", f"A: {one.name}", f"B: {four.name}", "B - A", "%"]
    step = cells(dialog, "step time (s)")
    assert step[3].startswith("+") and step[4].startswith("+")  # 4:1 spines: a slower step
    row = next(i for i in range(dialog.table.rowCount()) if dialog.table.item(i, 0).text() == "step time (s)")
    assert dialog.table.item(row, 3).foreground().color() == QColor(SLOWER)
    assert cells(dialog, "DP comm")[3].startswith("+")
    assert cells(dialog, "capex")[3].startswith("-$")  # fewer spines
    for label in ("tokens/s", "MFU", "memory per GPU, peak (GiB)", "top bottleneck", "power (kW)",
                  "$ per million tokens"):
        cells(dialog, label)
    assert "slower per step" in dialog.summary.text()
    assert dialog.chart.comparison is dialog.comparison  # the one plot of both breakdowns


def test_compare_with_itself_says_no_difference(compare):
    window, run, one, _ = compare
    dialog = run(one)
    assert dialog.comparison.identical and "no difference" in dialog.summary.text()
    assert all(cells(dialog, label)[3] in ("0", "same") for label in ("step time (s)", "capex", "top bottleneck"))


@pytest.mark.slow
def test_export_writes_png_and_svg_of_the_table_and_the_plot(compare, tmp_path, monkeypatch):
    from PySide6.QtGui import QImage
    from PySide6.QtWidgets import QFileDialog

    window, run, one, four = compare
    dialog = run(four)
    dialog.resize(1600, 1000)
    for suffix in (".png", ".svg"):
        target = tmp_path / f"cmp{suffix}"
        monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), "")))
        dialog.export_button.click()
        assert target.stat().st_size > 1000
    image = QImage(str(tmp_path / "cmp.png"))
    assert image.width() == 2 * dialog.content.width()
    svg = (tmp_path / "cmp.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "Step-time breakdown" in svg


def test_a_broken_file_is_named_in_the_dialog_not_raised(compare, tmp_path, qtbot, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    boxes = []
    monkeypatch.setattr(QMessageBox, "critical", staticmethod(lambda *a, **k: boxes.append(a)))
    window, run, *_ = compare
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: designer/v1\nspec: [\n")
    with qtbot.captureExceptions() as exceptions:
        dialog = run(bad)
    assert not exceptions and not boxes
    assert dialog.comparison is None and f"{bad}:3" in dialog.summary.text()
    assert not dialog.export_button.isEnabled()


def test_closing_the_dialog_before_the_other_file_is_evaluated_is_safe(compare, qtbot, monkeypatch):
    """B is evaluated on a thread of its own: the window answers meanwhile, and a dialog closed
    before the answer drops it quietly."""
    import threading
    import time

    import designer.cli as cli

    release = threading.Event()
    real = cli.evaluate_file

    def slow(path):
        release.wait(10)
        return real(path)

    monkeypatch.setattr(cli, "evaluate_file", slow)
    from PySide6.QtWidgets import QFileDialog

    window, _, one, four = compare
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(four), "")))
    with qtbot.captureExceptions() as exceptions:
        started = time.monotonic()
        window.act_compare.trigger()
        dialog = window.tools.compare_dialog
        assert time.monotonic() - started < 5 and dialog.comparison is None  # not evaluated on the UI thread
        assert "evaluating" in dialog.summary.text()
        dialog.close()
        release.set()
        qtbot.wait(300)
    assert not exceptions
