"""First run (the hint above the canvas) and the Help menu: quick guide, shortcuts, about."""
import pytest

from tests.conftest import EXAMPLES



def _settings(tmp_path):
    from PySide6.QtCore import QSettings

    return QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)


def _window(qtbot, tmp_path, *argv):
    from designer.ui.app import build_parser, create_window

    window, error = create_window(build_parser().parse_args(list(argv)), _settings(tmp_path))
    assert error is None
    qtbot.addWidget(window)
    window.resize(1600, 1000)  # the default size (the offscreen screen is smaller: create_window clamps to it)
    window.show()
    qtbot.waitExposed(window)
    assert window.settle()
    return window


@pytest.mark.slow
def test_first_run_hint_names_three_things_and_closes(qtbot, tmp_path):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QDockWidget

    window = _window(qtbot, tmp_path)
    assert "h100-64gpu-infiniband" in window.windowTitle()  # the built-in example
    banner = window.welcome_banner
    assert banner.isVisible()
    text = banner.text()
    for words in ("cable", "bandwidth", "Inspector", "TP", "Job panel", "waits", "Timeline"):
        assert words in text, (words, text)
    # It sits above the canvas, one slim line at the default size, and the canvas is still there.
    assert window.view.isVisible() and banner.geometry().bottom() < window.view.geometry().top()
    assert banner.height() < 40
    for name in ("Job", "Inspector", "Overview", "Breakdown", "Timeline"):
        assert window.findChild(QDockWidget, name).isVisible(), name
    assert window.findChild(QDockWidget, "Parts").toggleViewAction().isChecked()  # tabbed behind Job

    banner.label.linkActivated.emit("dock:Timeline")  # a panel's name brings it forward
    qtbot.mouseClick(banner.close_button, Qt.LeftButton)
    assert not banner.isVisible()
    assert window.settings.value("welcome/dismissed", False, type=bool)
    window.close()

    again = _window(qtbot, tmp_path)  # dismissed once: gone for good
    assert getattr(again, "welcome_banner", None) is None


@pytest.mark.slow
def test_no_hint_when_a_file_is_given(qtbot, tmp_path):
    window = _window(qtbot, tmp_path, str(EXAMPLES / "h100-roce-2to1-ethernet.yaml"))
    assert getattr(window, "welcome_banner", None) is None
    assert window.centralWidget() is window.view


def test_screenshot_without_file_shows_the_hint_even_when_dismissed(qtbot, tmp_path):
    settings = _settings(tmp_path)
    settings.setValue("welcome/dismissed", True)
    settings.sync()
    window = _window(qtbot, tmp_path, "--screenshot", str(tmp_path / "x.png"))
    assert window.welcome_banner.isVisible()


# Bringing an open dialog forward again: the offscreen plugin says it cannot raise windows.
@pytest.mark.qt_log_ignore("This plugin does not support raise")
def test_help_menu_actions(qtbot, tmp_path):
    from PySide6.QtCore import QSettings

    from designer.ui.window.main_window import MainWindow

    window = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat))
    qtbot.addWidget(window)
    menus = [a.text().replace("&", "") for a in window.menuBar().actions()]
    assert menus[-1] == "Help"
    texts = [a.text().replace("&", "") for a in window.help_menu.actions() if not a.isSeparator()]
    assert texts == ["Quick Guide", "Keyboard Shortcuts", "About Designer"]

    window.act_quick_guide.trigger()
    guide = window.help_dialogs["guide"]
    assert guide.isVisible()
    text = guide.text()
    for words in ("Parts", "Generate Fat-Tree", "Ctrl+G", "Breakdown", "Timeline", "Advisor panel (View menu)",
                  "Perfetto", "PDF"):
        assert words in text, words
    window.act_quick_guide.trigger()  # again: the same dialog, brought forward
    assert len(window.help_dialogs) == 1
    guide.close()


def test_shortcuts_dialog_lists_the_windows_real_shortcuts(qtbot, tmp_path):
    from PySide6.QtCore import QSettings
    from PySide6.QtGui import QAction, QKeySequence

    from designer.ui.window.help import shortcut_rows
    from designer.ui.window.main_window import MainWindow

    window = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat))
    qtbot.addWidget(window)
    rows = shortcut_rows(window)
    assert ("Edit", "Undo", "Ctrl+Z") in rows
    assert ("Tools", "Generate Fat-Tree...", "Ctrl+G") in rows
    assert ("Help", "Quick Guide", "F1") in rows
    # Every action of the window with a shortcut is listed, and nothing else.
    expected = {a.shortcut().toString(QKeySequence.NativeText) for a in window.findChildren(QAction)
                if not a.shortcut().isEmpty()}
    assert {r[2].split(", ")[0] for r in rows} == expected

    window.act_shortcuts.trigger()
    text = window.help_dialogs["shortcuts"].text()
    assert "Ctrl+Z" in text and "Ctrl+Shift+D" in text and "Duplicate Many..." in text
    assert "Space + drag" in text  # the canvas gestures too

    # A shortcut added later shows up the next time the dialog opens.
    window.help_dialogs["shortcuts"].close()
    extra = QAction("Something New", window)
    extra.setShortcut(QKeySequence("Ctrl+Alt+K"))
    window.addAction(extra)
    window.act_shortcuts.trigger()
    assert "Something New" in window.help_dialogs["shortcuts"].text()


def test_about_shows_version_qt_and_catalog_sources(qtbot, tmp_path):
    from PySide6.QtCore import QSettings, qVersion

    from designer import __version__
    from designer.core.model import default_catalog
    from designer.ui.window.main_window import MainWindow

    window = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat))
    qtbot.addWidget(window)
    window.act_about.trigger()
    text = window.help_dialogs["about"].text()
    assert f"Designer {__version__}" in text
    assert f"Qt {qVersion()}" in text and "PySide6" in text
    cat = default_catalog()
    h100 = cat.accelerator("H100")
    assert h100.name in text
    source = next(iter(h100.sources.values()))
    assert " ".join(source.split())[:60] in " ".join(text.split())
    for nic in cat.nics.values():
        assert nic.name in text


def test_app_icon_is_found_and_loads(qapp):
    from designer.ui.common.app_icon import ICON_NAME, app_icon, icon_file

    assert icon_file(".png").name == f"{ICON_NAME}.png"
    assert icon_file(".svg") is not None
    icon = app_icon()
    assert not icon.isNull() and icon.pixmap(64, 64).width() == 64


def test_app_icon_found_in_a_frozen_bundle(tmp_path, monkeypatch):
    """Inside PyInstaller's bundle the icon is under sys._MEIPASS/resources/icons."""
    import shutil
    import sys

    from designer.ui.common import app_icon as mod

    bundle = tmp_path / "_internal"
    (bundle / "resources" / "icons").mkdir(parents=True)
    shutil.copy(mod.icon_file(".png"), bundle / "resources" / "icons")
    monkeypatch.setattr(sys, "_MEIPASS", str(bundle), raising=False)
    assert mod.icon_dirs()[0] == bundle / "resources" / "icons"
    assert mod.icon_file(".png") == bundle / "resources" / "icons" / "designer-gui.png"
