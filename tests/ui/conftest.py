import pytest


@pytest.fixture(scope="session", autouse=True)
def process_set_up_as_the_app_does():
    """The windows here are made without the app's main(): the process is set up as it would be."""
    from designer.ui.app import set_up_the_process

    set_up_the_process()


@pytest.fixture
def empty_window(qtbot, tmp_path, monkeypatch):
    """A shown 1200x800 main window with its own settings; closing never blocks on the
    unsaved-changes prompt."""
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QMessageBox

    from designer.ui.window.main_window import MainWindow

    monkeypatch.setattr(QMessageBox, "question", staticmethod(lambda *a, **k: QMessageBox.Discard))
    w = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat))
    qtbot.addWidget(w)
    w.resize(1200, 800)
    w.show()
    qtbot.waitExposed(w)
    return w
