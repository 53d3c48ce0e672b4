"""The desktop app starts, opens the first example, renders and closes cleanly."""
import pytest

from tests.conftest import EXAMPLES



def test_window_opens_example_and_closes(qtbot):
    from designer.ui.window.main_window import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    window.open_file(str(EXAMPLES / "h100-64gpu-infiniband.yaml"))
    window.show()
    qtbot.waitExposed(window)
    assert window.settle()
    assert window.windowTitle().startswith("h100-64gpu-infiniband (example)")  # an untitled copy
    assert window.qdoc.path is None
    assert "64 GPUs" in window.counts_label.text()
    assert window.problems_button.text() == "no problems"
    assert len(window.scene.items()) > 10
    window.close()


def test_bad_file_keeps_open_design(qtbot, tmp_path):
    from designer.core.problems import DesignerError
    from designer.ui.window.main_window import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    window.open_file(str(EXAMPLES / "h100-64gpu-infiniband.yaml"))
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: designer/v1\nkind: Cluster\nspec: {racks: [{id: r0, unit: 3}]}\n")
    with pytest.raises(DesignerError, match=r"bad.yaml:3:\d+: spec.racks\[0\].unit: unknown key \(did you mean units\?\)"):
        window.open_file(str(bad))
    assert window.qdoc.doc.num_gpus() == 64 and window.qdoc.name == "h100-64gpu-infiniband (example)"


@pytest.mark.slow
def test_screenshot_command(tmp_path):
    import subprocess
    import sys

    out = tmp_path / "shot.png"
    result = subprocess.run(
        [sys.executable, "-m", "designer.ui.app", str(EXAMPLES / "a100-1024gpu-rail-infiniband.yaml"),
         "--screenshot", str(out), "--size", "800x600"],
        capture_output=True, text=True, timeout=120,
        env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert result.returncode == 0, result.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    from PySide6.QtGui import QImage
    assert QImage(str(out)).size().width() == 800


def test_window_evaluates_off_the_ui_thread(qtbot):
    from designer.ui.window.main_window import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    window.open_file(str(EXAMPLES / "h100-64gpu-infiniband.yaml"))
    assert window.settle()
    assert window.result is not None and window.result.num_gpus == 64
    assert "MFU" in window.result_label.text()


def test_designer_gui_file_is_read_once_the_window_has_painted(qtbot, tmp_path):
    """`designer-gui FILE` starts reading its file only after the window's first paint: read in a thread
    meanwhile, the paint's Qt calls each waited for Python's GIL (0.6 s at 131k GPUs)."""
    from PySide6.QtCore import QEvent, QObject, QSettings

    from designer.ui.app import after_first_paint
    from designer.ui.window.main_window import MainWindow

    window = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat))
    qtbot.addWidget(window)
    paints, started = [], []

    class Count(QObject):
        def eventFilter(self, obj, event):  # noqa: N802 - Qt's name
            if event.type() == QEvent.Paint:
                paints.append(1)
            return False

    counter = Count(window)
    window.view.viewport().installEventFilter(counter)
    window.show()
    after_first_paint(window, lambda: started.append(len(paints)))  # as main() does, the window just shown
    assert not started  # not before the event loop has painted it
    qtbot.waitUntil(lambda: bool(started), timeout=5_000)
    assert started[0] >= 1
