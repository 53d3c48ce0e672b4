"""Long work (open, generate, recovery) starts its thread once the window has answered the modal
progress dialog (every widget disabled and repainted): with the thread running, each of those
~200 calls into Python waited for the interpreter and a 16k-GPU open stalled the window ~120 ms."""
from __future__ import annotations

from designer.ui.work.background import BackgroundJob


def test_the_work_starts_after_the_dialog_shows_and_delivers_its_result(empty_window, qtbot):
    ran, results = [], []
    job = BackgroundJob(empty_window, "Work", "Working...", lambda: ran.append(1) or 42,
                        results.append, lambda exc: results.append(exc))
    job.start()
    assert job.dialog.isVisible() and ran == []  # not yet: the window first answers the dialog
    assert job.wait()
    qtbot.waitUntil(lambda: results == [42], timeout=5000)
    assert ran == [1] and job.finished  # (its dialog closed and deleted)


def test_a_cancel_before_the_start_runs_nothing(empty_window, qtbot):
    ran, cancelled = [], []
    job = BackgroundJob(empty_window, "Work", "Working...", lambda: ran.append(1), lambda r: None,
                        lambda exc: None, on_cancel=lambda: cancelled.append(1))
    job.start()
    job.cancel()
    assert job.wait() and cancelled == [1]
    qtbot.wait(150)
    assert ran == []
