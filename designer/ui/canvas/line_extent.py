"""The box around the cable lines drawn, kept as an edit empties, fills, moves or adds rows.

Measuring all lines again costs ~10 ms of the window's thread at 131,072 GPUs (295k lines), once per
edit. Here an edit costs in proportion to its rows: a line gone from inside the box changes nothing;
one on its edge moves that edge in to the next line out, found among the lines nearest each edge
(picked once with a partial sort, again only when a run of edits has used them up) and the rows
changed since (kept apart: their place in that order is no longer known).
"""
from __future__ import annotations

import warnings

import numpy as np

EDGE_ROWS = 256  # lines kept per edge, nearest it first: a run of deletes on one edge uses them up
MOVED_LIMIT = 4096  # rows changed since the edges were picked before they are picked again


def _outwards(a: np.ndarray, b: np.ndarray, edge: int) -> np.ndarray:
    """How far each line reaches towards an edge (0 left, 1 top, 2 right, 3 bottom), larger further out."""
    column = edge % 2
    return np.fmax(a[:, column], b[:, column]) if edge >= 2 else -np.fmin(a[:, column], b[:, column])


class LineExtent:
    """The lines' box as (left, top, right, bottom), None when no line is drawn. A row whose line is
    not drawn has NaN ends (links.LinkLayer.empty_row)."""

    def __init__(self, a: np.ndarray, b: np.ndarray):
        self._edge_rows: list[np.ndarray | None] = [None] * 4  # per edge: rows nearest it, nearest first
        self._next = [0, 0, 0, 0]  # per edge: the first of its rows not yet passed
        self._moved: list[set[int]] = [set(), set(), set(), set()]  # per edge: rows changed since its pick
        self._stale: set[int] = set()  # edges to find again (a line on them went)
        self._reach = self._measure(a, b)  # per edge: the furthest reach (_outwards), -inf for none

    @staticmethod
    def _measure(a: np.ndarray, b: np.ndarray) -> list[float]:
        """Every line's reach, measured (a new set of lines)."""
        reach = []
        with warnings.catch_warnings():  # all NaN (every row emptied): no line that way
            warnings.simplefilter("ignore", RuntimeWarning)
            for column, sign, most in ((0, -1.0, np.nanmin), (1, -1.0, np.nanmin), (0, 1.0, np.nanmax),
                                       (1, 1.0, np.nanmax)):
                # column by column: numpy's min over axis 0 of an (n, 2) array is ~30x slower
                far = [sign * float(most(p[:, column])) for p in (a, b) if len(p)]
                far = [f for f in far if not np.isnan(f)]
                reach.append(max(far) if far else -np.inf)
        return reach

    def box(self, a: np.ndarray, b: np.ndarray) -> tuple[float, float, float, float] | None:
        if self._stale:
            for edge in sorted(self._stale):
                self._reach[edge] = self._find(edge, a, b)
            self._stale.clear()
        if not all(np.isfinite(self._reach)):
            return None
        left, top, right, bottom = self._reach
        return (-left, -top, right, bottom)

    def gone(self, row: int, a: np.ndarray, b: np.ndarray) -> None:
        """Row's line is about to go (its ends still in `a`, `b`): an edge it reaches is found again."""
        one_a, one_b = a[row:row + 1], b[row:row + 1]
        for edge in range(4):
            self._moved[edge].discard(row)  # (passed over by the edge's rows too: its ends are NaN from now)
            if _outwards(one_a, one_b, edge)[0] >= self._reach[edge]:
                self._stale.add(edge)

    def drawn(self, row: int, a: np.ndarray, b: np.ndarray) -> None:
        """Row's line is drawn anew (filled, moved or added): the box takes it in."""
        one_a, one_b = a[row:row + 1], b[row:row + 1]
        for edge in range(4):
            if self._edge_rows[edge] is not None:
                self._moved[edge].add(row)
            reach = float(_outwards(one_a, one_b, edge)[0])
            if reach > self._reach[edge]:
                self._reach[edge] = reach

    def _find(self, edge: int, a: np.ndarray, b: np.ndarray, picked: bool = False) -> float:
        """The furthest reach towards an edge of the lines drawn now: the first of the edge's rows
        still drawn and unchanged, or a changed row further out."""
        moved = self._moved[edge]
        if self._edge_rows[edge] is None or len(moved) > MOVED_LIMIT:
            self._pick(edge, a, b)
            picked = True
        rows = self._edge_rows[edge]
        ax, bx = a[:, edge % 2], b[:, edge % 2]
        at = self._next[edge]
        while at < len(rows) and (int(rows[at]) in moved or np.isnan(ax[rows[at]])):
            at += 1
        self._next[edge] = at
        if at == len(rows) and not picked and len(rows) < len(a):  # used up: the next lines out picked
            self._pick(edge, a, b)
            return self._find(edge, a, b, picked=True)
        near = np.fromiter(moved, np.int64, len(moved))
        near = near[~np.isnan(ax[near])]
        if at < len(rows):
            near = np.append(near, rows[at])
        if not len(near):
            return -np.inf
        ends = np.concatenate([ax[near], bx[near]])
        return float(ends.max()) if edge >= 2 else -float(ends.min())

    def _pick(self, edge: int, a: np.ndarray, b: np.ndarray) -> None:
        """The rows whose lines reach furthest towards an edge, furthest first: a partial sort of every
        row (O(n), ~5 ms at 295k lines), once per EDGE_ROWS lines the edge loses."""
        reach = _outwards(a, b, edge)
        reach = np.where(np.isnan(reach), np.inf, -reach)  # argpartition: smallest first; a NaN last
        k = min(EDGE_ROWS, len(reach))
        near = np.argpartition(reach, k - 1)[:k] if 0 < k < len(reach) else np.arange(len(reach))
        near = near[np.argsort(reach[near], kind="stable")]
        self._edge_rows[edge] = near[np.isfinite(reach[near])]
        self._next[edge] = 0
        self._moved[edge] = set()
