"""Waiting for background work from scripts and screenshots, with the event loop running."""
from __future__ import annotations

import time

from PySide6.QtWidgets import QApplication


def process_events_until(done, timeout_s: float) -> bool:
    """Process Qt events until `done()` (True) or `timeout_s` passed (False)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        QApplication.processEvents()
        if done():
            return True
        time.sleep(0.01)
    return False
