"""One guard for every GUI command: a failure becomes a message box with the reason.

A slot that raises inside Qt only prints a traceback on stderr, which the user never sees, so
every menu action and button goes through `guarded`. `connect_action` also keeps Qt's
`triggered(bool)` / `clicked(bool)` flag out of slots that do not ask for it (a non-checkable
action's `checked` landing in a `path=None` parameter was the bug that made exports fail).
"""
from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtWidgets import QMessageBox, QWidget

log = logging.getLogger(__name__)


def plain(text: str) -> str:
    """A command's text without its mnemonic ampersands and trailing dots ("&Report (PDF)..." -> "Report (PDF)")."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip(".").rstrip("…")


def report_failure(parent: QWidget | None, title: str, exc: BaseException) -> None:
    """Log the traceback and tell the user what failed and why (the exception's own words)."""
    log.error("%s failed", title, exc_info=(type(exc), exc, exc.__traceback__))
    reason = str(exc) or type(exc).__name__
    QMessageBox.critical(parent, f"{title} failed", f"{title} failed: {reason}")


def guarded(parent: QWidget | None, title: str, slot: Callable, with_flag: bool = False) -> Callable:
    """A slot for `triggered`/`clicked`/`toggled`: calls `slot()` (or `slot(flag)` when `with_flag`,
    for checkable actions and buttons) and turns any exception into a message box."""
    if with_flag:
        def run_with_flag(flag: bool) -> None:
            try:
                slot(flag)
            except Exception as exc:  # noqa: BLE001 - every failure is shown, none is lost on stderr
                report_failure(parent, title, exc)
        return run_with_flag

    def run() -> None:  # no parameter: PySide then passes no `checked` flag at all
        try:
            slot()
        except Exception as exc:  # noqa: BLE001 - every failure is shown, none is lost on stderr
            report_failure(parent, title, exc)
    return run


def connect_action(action, parent: QWidget | None, slot: Callable) -> None:
    """Connect a QAction's `triggered` to `slot` through the guard; a checkable action's slot gets the flag."""
    action.triggered.connect(guarded(parent, plain(action.text()), slot, with_flag=action.isCheckable()))
