"""Which servers, switches and cables of a design are down (the canvas marks them): worked out from the
model alone, so that a big design's are found off the UI thread while its file opens (scene_plan.py)."""
from __future__ import annotations

from operator import attrgetter

DOWN_COLLECTIONS = ("nodes", "switches", "links")
_STATE = attrgetter("state")


def parts_down(doc, collections: tuple = DOWN_COLLECTIONS) -> dict[str, set[str]]:
    """The ids of what is down, per collection ("nodes", "switches", "links")."""
    return {name: {e.id for e in _down(getattr(doc, name))} for name in collections}


def _down(elements) -> list:
    """The elements that are down; the usual none found in one pass in C (600k cables at 131k GPUs:
    a loop in Python held the window ~50 ms when a big design had just been drawn)."""
    if "down" not in map(_STATE, elements):
        return []
    return [e for e in elements if e.state == "down"]
