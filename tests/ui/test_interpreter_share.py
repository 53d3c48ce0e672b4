"""A process with a window asks other threads to let go of the interpreter sooner (interpreter_share.py)."""
from __future__ import annotations

import sys

from designer.ui.work.interpreter_share import UI_SWITCH_INTERVAL_S, share_the_interpreter


def test_the_window_shortens_the_switch_interval(empty_window):
    assert sys.getswitchinterval() <= UI_SWITCH_INTERVAL_S


def test_a_shorter_interval_already_set_is_kept(monkeypatch):
    calls = []
    monkeypatch.setattr(sys, "getswitchinterval", lambda: 0.0001)
    monkeypatch.setattr(sys, "setswitchinterval", calls.append)
    share_the_interpreter()
    assert calls == []
