"""A list's removes and inserts, in order, kept as runs of its old places and the items put in: where
each old place is after all of them, for an array of places moved in one pass rather than one pass over
every place per edit (a server's 16 cables were 16 passes over 295k link places at 131k GPUs)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(eq=False)
class Inserted:
    """An item put into the list (`tag`: what the caller knows it by)."""
    tag: object


class ListEdits:
    """The list as parts: a run [lo, hi) of old places still in it, or an Inserted item, in order."""

    def __init__(self, length: int):
        self.parts: list = [(0, length)] if length else []

    def _find(self, position: int) -> tuple[int, int] | None:
        """(the part holding `position`, the place within it), (len(parts), 0) just past the end, None
        beyond."""
        at = 0
        for i, part in enumerate(self.parts):
            size = 1 if isinstance(part, Inserted) else part[1] - part[0]
            if position < at + size:
                return i, position - at
            at += size
        return (len(self.parts), 0) if position == at else None

    def remove(self, position: int):
        """The item at `position` taken out: its old place (int), the Inserted item, or None (no such
        position)."""
        found = self._find(position)
        if found is None or found[0] == len(self.parts):
            return None
        i, offset = found
        part = self.parts[i]
        if isinstance(part, Inserted):
            del self.parts[i]
            return part
        lo, hi = part
        place = lo + offset
        self.parts[i:i + 1] = [run for run in ((lo, place), (place + 1, hi)) if run[1] > run[0]]
        return place

    def insert(self, position: int, item: Inserted) -> bool:
        """`item` put at `position` (False: no such position)."""
        found = self._find(position)
        if found is None:
            return False
        i, offset = found
        part = self.parts[i] if i < len(self.parts) else None
        if offset and not isinstance(part, Inserted):
            lo, hi = part
            self.parts[i:i + 1] = [(lo, lo + offset), item, (lo + offset, hi)]
        else:
            self.parts.insert(i, item)
        return True

    def moved(self, places: np.ndarray) -> np.ndarray:
        """Where each of `places` (old places still in the list, in any order) is now."""
        los, news, at = [], [], 0
        for part in self.parts:
            if isinstance(part, Inserted):
                at += 1
            else:
                los.append(part[0])
                news.append(at)
                at += part[1] - part[0]
        if not los:
            return places.copy()
        lo, new = np.array(los, places.dtype), np.array(news, places.dtype)
        run = np.maximum(np.searchsorted(lo, places, side="right") - 1, 0)
        return places - lo[run] + new[run]

    def inserted(self) -> list[tuple[int, Inserted]]:
        """(where it is now, item) of each item put in and still there, in order."""
        out, at = [], 0
        for part in self.parts:
            if isinstance(part, Inserted):
                out.append((at, part))
                at += 1
            else:
                at += part[1] - part[0]
        return out
