"""The first window fits the screen's available geometry: its status bar is on screen."""
from __future__ import annotations

from PySide6.QtCore import QRect, QSize


def test_clamped_size_keeps_what_fits_and_takes_off_the_frame():
    from designer.ui.window.screen_fit import clamped_size

    available = QRect(0, 24, 1600, 976)  # a 1600x1000 desktop less a 24 px panel
    assert clamped_size(QSize(1200, 800), available) == QSize(1200, 800)
    assert clamped_size(QSize(1600, 1000), available) == QSize(1600, 976)
    # a window manager's 30 px title bar and 2 px borders come off too
    assert clamped_size(QSize(1600, 1000), available, QSize(4, 32)) == QSize(1596, 944)


def test_designer_gui_window_is_clamped_to_the_available_geometry(qtbot, tmp_path):
    """`designer-gui` asks for 1600x1000; on a smaller screen the window gets the screen's available size
    (the offscreen platform's screen is 800x600), not a status bar below its bottom."""
    from PySide6.QtCore import QSettings

    from designer.ui.app import build_parser, create_window

    args = build_parser().parse_args([])
    window, error = create_window(args, QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat))
    qtbot.addWidget(window)
    assert error is None
    available = window.screen().availableGeometry()
    assert available.width() < 1600 or available.height() < 1000  # else this test proves nothing
    window.show()
    qtbot.waitExposed(window)
    from designer.ui.window.screen_fit import fit_shown

    fit_shown(window)
    assert available.contains(window.frameGeometry())
    bar = window.statusBar()
    bottom_left = bar.mapToGlobal(bar.rect().bottomLeft())
    assert available.contains(bottom_left), (bottom_left, available)


def test_screenshot_keeps_the_asked_size(qtbot, tmp_path):
    """A --screenshot picture is the size asked for, whatever the screen."""
    from PySide6.QtCore import QSettings

    from designer.ui.app import build_parser, create_window

    args = build_parser().parse_args(["--screenshot", str(tmp_path / "w.png"), "--size", "1600x1000"])
    window, _ = create_window(args, QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat))
    qtbot.addWidget(window)
    assert window.size() == QSize(1600, 1000)


def test_a_shown_window_out_of_the_screen_moves_inside(qtbot, tmp_path):
    from PySide6.QtCore import QSettings

    from designer.ui.window.main_window import MainWindow
    from designer.ui.window.screen_fit import fit_shown

    window = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat))
    qtbot.addWidget(window)
    available = window.screen().availableGeometry()
    window.resize(available.width() // 2, available.height() // 2)
    window.show()
    qtbot.waitExposed(window)
    window.move(available.right() - 50, available.bottom() - 50)  # mostly off the screen
    fit_shown(window)
    assert available.contains(window.frameGeometry())
