import pytest


@pytest.fixture(scope="session", autouse=True)
def process_set_up_as_the_app_does():
    """The windows here are made without the app's main(): the process is set up as it would be."""
    from designer.ui.app import set_up_the_process

    set_up_the_process()


@pytest.fixture(autouse=True)
def closed_windows_are_destroyed():
    """The windows a test closed are destroyed when it ends, not kept for the rest of the process.

    pytest-qt closes each window a test registered and asks Qt to delete it later (deleteLater);
    Qt deletes it only in an event loop of its own, which the tests rarely run (processEvents is
    not one). Without this, every later test shared the process with all the earlier tests'
    windows: their widgets, timers and signal connections (a hundred windows, 100,000 widgets)."""
    yield  # torn down after pytest-qt closed the test's windows (its teardown wraps the fixtures')
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication

    QApplication.sendPostedEvents(None, QEvent.DeferredDelete)


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


@pytest.fixture
def new_window(qtbot, tmp_path, monkeypatch):
    """Opens a file in a window of its own, as a user starting the app again would (`heat`: with
    View > Link heat on first); returns it settled."""
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QMessageBox

    from designer.ui.window.main_window import MainWindow

    monkeypatch.setattr(QMessageBox, "question", staticmethod(lambda *a, **k: QMessageBox.Discard))
    made = []

    def open_in_new_window(path, heat: bool = False):
        made.append(1)
        w = MainWindow(QSettings(str(tmp_path / f"fresh-settings-{len(made)}.ini"), QSettings.IniFormat))
        qtbot.addWidget(w)
        w.resize(1200, 800)
        w.show()
        qtbot.waitExposed(w)
        if heat:
            w.act_heat.trigger()
        w.open_file(str(path))
        assert w.settle()
        return w

    return open_in_new_window
