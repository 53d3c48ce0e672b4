"""The racks' rectangles in the scene, kept until the racks change: what the rack fills, the box layer's
outlines and bounds and the overview paint. Their edges are one array, so a paint picks the racks it
meets in numpy rather than by a Python test of each (4.5k racks at 131k GPUs, on every paint)."""
from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
from PySide6.QtCore import QRectF


class RackRects:
    def __init__(self, rack_items: Callable[[], Iterable]):
        self._rack_items = rack_items  # the scene's rack items, measured when no rectangles are kept
        self._rects: list | None = None
        self._edges: tuple[list, np.ndarray] | None = None  # (those rects, their edges)

    def forget(self) -> None:
        """Racks came, went, moved or changed size: measured again when next asked."""
        self._rects = None

    def set(self, rects: list, edges: np.ndarray | None = None) -> None:
        """The racks' rectangles as planned (a staged build's, before their items are made); `edges`:
        theirs as `edges` has them, when made already (scene_plan.py, off the UI thread)."""
        self._rects = rects
        if edges is not None:
            self._edges = (rects, edges)

    def rects(self) -> list:
        """Every rack's rectangle in the scene."""
        if self._rects is None:
            self._rects = [item.mapRectToScene(item.rect()) for item in self._rack_items()]
        return self._rects

    def edges(self) -> np.ndarray:
        """Every rack's (left, top, right, bottom), a row each in `rects`' order."""
        rects = self.rects()
        if self._edges is None or self._edges[0] is not rects:
            edges = np.array([(r.left(), r.top(), r.right(), r.bottom()) for r in rects], float).reshape(-1, 4)
            self._edges = (rects, edges)
        return self._edges[1]

    def bounds(self) -> QRectF:
        """What the racks cover (null when there are none)."""
        e = self.edges()
        if not len(e):
            return QRectF()
        left, top = float(e[:, 0].min()), float(e[:, 1].min())
        right, bottom = float(e[:, 2].max()), float(e[:, 3].max())
        return QRectF(left, top, right - left, bottom - top)

    def meeting(self, rect: QRectF) -> list:
        """The racks' rectangles that meet `rect`."""
        rects = self.rects()
        if rect.isEmpty():
            return []  # (as QRectF.intersects: an empty rectangle meets nothing)
        e = self.edges()
        meet = np.flatnonzero((e[:, 0] < rect.right()) & (e[:, 2] > rect.left())
                              & (e[:, 1] < rect.bottom()) & (e[:, 3] > rect.top()))
        return [rects[i] for i in meet.tolist()]
