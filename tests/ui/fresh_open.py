"""A window's state compared with what a new window shows when it opens the design saved at that
moment, as a user restarting the app would see it."""
from __future__ import annotations

from designer.core.io import save_document


def as_fresh_open(window, new_window, tmp_path, step: str, read):
    """`read(window)` equals `read` of a new window (the `new_window` fixture) opening the design
    saved now; returns what both show."""
    saved = tmp_path / f"{step.replace(' ', '-')}.yaml"
    save_document(window.qdoc.doc, saved)
    fresh = new_window(saved)
    expected = read(fresh)
    fresh.close()
    assert read(window) == expected, step
    return expected
