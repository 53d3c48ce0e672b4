"""The app's start-up sets the process-wide settings (designer/ui/app.py: set_up_the_process)."""
from __future__ import annotations

import sys

import pytest


def test_designer_gui_shortens_the_switch_interval_before_it_makes_the_window(tmp_path, monkeypatch):
    from designer.ui import app

    intervals, at_window = [], []

    def window_made(args, settings=None, background=False):
        at_window.append(list(intervals))
        raise SystemExit(0)

    monkeypatch.setattr(sys, "getswitchinterval", lambda: 0.005)
    monkeypatch.setattr(sys, "setswitchinterval", intervals.append)
    monkeypatch.setattr(app, "create_window", window_made)
    with pytest.raises(SystemExit):
        app.main([str(tmp_path / "none.yaml"), "--screenshot", str(tmp_path / "out.png")])
    assert at_window == [[app.UI_SWITCH_INTERVAL_S]]


def test_a_shorter_interval_already_set_is_kept(monkeypatch):
    from designer.ui.app import set_up_the_process

    calls = []
    monkeypatch.setattr(sys, "getswitchinterval", lambda: 0.0001)
    monkeypatch.setattr(sys, "setswitchinterval", calls.append)
    set_up_the_process()
    assert calls == []


def test_the_window_and_its_workers_leave_the_process_settings_alone(qtbot, tmp_path, monkeypatch):
    """Only the start-up sets them: making a window (and its engine workers) changes nothing."""
    from PySide6.QtCore import QSettings

    from designer.ui.work import malloc_arenas
    from designer.ui.window.main_window import MainWindow

    calls = []
    monkeypatch.setattr(sys, "setswitchinterval", calls.append)
    monkeypatch.setattr(malloc_arenas, "use_one_arena", lambda: calls.append("arena"))
    window = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat))
    qtbot.addWidget(window)
    assert calls == []
