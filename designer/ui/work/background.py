"""Long work off the UI thread (generate, open, recovery) with a progress bar and a Cancel button.

The work runs on a CallWorker's thread; the window keeps painting and answering meanwhile (the thread
hands the GIL back every few milliseconds, see worker.py). Its result comes back as a Qt signal,
so the step that changes the document (a push onto the undo stack) runs on the UI thread.
Cancel closes the dialog at once and drops the result: the work itself cannot be interrupted
mid-way (it is one library call), so it finishes unseen and nothing changes.
"""
from __future__ import annotations

import time

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QProgressDialog

from .latest_worker import CallWorker


# The work's thread starts this long after the dialog shows: the window's answer to a modal dialog
# comes as posted events a few loop turns later (a 0 ms start still met them: 16k open 70-180 ms late).
START_DELAY_MS = 50


class BackgroundJob(QObject):
    def __init__(self, parent, title: str, label: str, work, on_result, on_error, on_cancel=None):
        super().__init__(parent)
        self.cancelled = False
        self.finished = False
        self.seen = False  # the progress dialog was on screen (tests, benchmarks)
        self._on_result, self._on_error, self._on_cancel = on_result, on_error, on_cancel
        self._label = label
        self._started = time.monotonic()
        self.dialog = QProgressDialog(label, "Cancel", 0, 0, parent)  # 0..0: a busy bar
        self.dialog.setWindowTitle(title)
        self.dialog.setObjectName("progress")
        self.dialog.setWindowModality(Qt.WindowModal)  # the window repaints; its edits wait
        self.dialog.setMinimumDuration(0)
        self.dialog.setAutoClose(False)
        self.dialog.setAutoReset(False)
        self.dialog.canceled.connect(self.cancel)
        self._tick = QTimer(self, interval=250, timeout=self._show_elapsed)
        self._work = work
        self.worker = CallWorker("designer-background")  # no Qt parent: the work may outlive the window
        self.worker.done.connect(self._finish)

    @property
    def active(self) -> bool:
        return not (self.finished or self.cancelled)

    def start(self) -> "BackgroundJob":
        self.dialog.show()
        self.seen = True
        self._tick.start()
        # The window's answer to a modal dialog (every widget disabled, relaid, repainted: ~200 calls
        # into Python) first, then the work: with the work's thread running, each of those calls
        # waited for the interpreter (a 16k-GPU open stalled the window ~120 ms)
        QTimer.singleShot(START_DELAY_MS, self, self._start_thread)
        return self

    def _start_thread(self) -> None:
        if not self.cancelled:
            self.worker.call(self._work)
        self._work = None

    def say(self, label: str) -> None:
        """The work's next stage, from its thread (shown at the next tick)."""
        self._label = label

    def _show_elapsed(self) -> None:
        self.dialog.setLabelText(f"{self._label} ({time.monotonic() - self._started:.0f} s)")

    def cancel(self) -> None:
        if self.finished or self.cancelled:
            return
        self.cancelled = True
        self.worker.stop()  # the work itself finishes unseen: its result is dropped
        self._close()
        if self._on_cancel is not None:
            self._on_cancel()

    def _close(self) -> None:
        self._tick.stop()
        self.dialog.blockSignals(True)  # closing must not read as a Cancel
        self.dialog.close()
        self.dialog.deleteLater()

    def _finish(self, result, error) -> None:
        if self.cancelled:
            return  # dropped: the user said Cancel
        self.finished = True
        self._close()
        if error is not None:
            self._on_error(error)
        else:
            self._on_result(result)

    def wait_in_event_loop(self) -> None:
        """Return once the work ended or was cancelled, the window painting and answering meanwhile
        (for callers that need the result before they go on, e.g. recovery at start-up)."""
        from PySide6.QtCore import QEventLoop

        if not self.active:
            return
        loop = QEventLoop()
        check = QTimer(interval=20, timeout=lambda: None if self.active else loop.quit())  # after _finish ran
        check.start()
        loop.exec()
        check.stop()

    def wait(self, timeout_s: float = 120.0) -> bool:
        """Tests: the thread's end (its result is delivered by the event loop)."""
        from PySide6.QtCore import QCoreApplication, QEventLoop

        deadline = time.monotonic() + timeout_s
        while self.worker.thread is None and not self.cancelled and time.monotonic() < deadline:
            QCoreApplication.processEvents(QEventLoop.AllEvents, 10)  # its start is the event loop's timer
        thread = self.worker.thread
        if thread is None:
            return self.cancelled  # cancelled before it started: nothing runs
        thread.join(max(0.0, deadline - time.monotonic()))
        return not thread.is_alive()
