"""The canvas's cable bundles as columns: a Bundle is made when one is read.

At 131,072 GPUs the canvas has 295k bundles; as objects (a Bundle, its key tuple and its tuple of
link ids each) they held ~56 MB for the whole life of the design, when the window reads a few of
them at a time (a tooltip, a selection, an edit) and everything else wants columns (the pens'
kinds, the totals, the rack-to-rack lines). A bundle an edit replaces is kept as that object.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import style

KINDS = ("infiniband", "ethernet", "nvlink", "pcie")


@dataclass(slots=True)
class Bundle:  # 295k of them at 131k GPUs: slots, and link_ids a tuple, keep each small
    key: tuple[str, str]
    link_ids: tuple[str, ...]
    kind: str
    total_gbps: float
    cables: int
    rate: str
    ports: tuple = (None, None)  # the port numbers its first cable ends on at key[0] and key[1]

    def tooltip(self) -> str:
        return (f"{self.key[0]} - {self.key[1]}: {self.cables} x {self.rate} {style.LINK_LABEL.get(self.kind, '')} "
                f"({self.total_gbps / 1000:g} Tb/s per direction)\nlinks: " + ", ".join(self.link_ids[:8])
                + (" ..." if len(self.link_ids) > 8 else ""))


class BundleTable:
    """Read like a list of Bundle (len, [row], iteration, [row] = bundle); the columns are for the
    callers that want every bundle at once."""

    def __init__(self, device_ids: list, ends: np.ndarray, ports: np.ndarray, starts: np.ndarray,
                 member_ids: list, kinds: list, kind_code: np.ndarray, totals: np.ndarray, cables: np.ndarray,
                 rates: list, rate_code: np.ndarray):
        self.device_ids = device_ids  # ends index these
        self.ends = ends  # (n, 2) device rows, key order (bundle.key)
        self._ports = ports  # (n, 2) port numbers, -1: none
        self._starts = starts  # row r holds the links member_ids[starts[r]:starts[r + 1]]
        self._member_ids = member_ids
        self._kinds, self._kind_code = kinds, kind_code  # kind of row r: kinds[kind_code[r]]
        self.totals = totals  # Gb/s per direction of each bundle
        self._cables = cables
        self._rates, self._rate_code = rates, rate_code
        self._edited: dict[int, Bundle] = {}  # rows an edit replaced (scene.cables.refresh)
        self.empty: set[int] = set()  # rows whose last cable an edit removed: kept for an undo, drawn as nothing
        self._device_row: dict | None = None  # device id -> its row in device_ids (append)
        self._port_pairs: dict = {}  # (3, 17) once for all the bundles that end on those ports

    @classmethod
    def empty(cls) -> "BundleTable":
        none = np.zeros(0, np.int64)
        return cls([], np.zeros((0, 2), np.int64), np.zeros((0, 2), np.int64), np.zeros(1, np.int64), [], [], none,
                   np.zeros(0), none, [], none)

    def __len__(self) -> int:
        return len(self.ends)

    def __getitem__(self, row):
        if isinstance(row, slice):
            return [self[r] for r in range(*row.indices(len(self)))]
        n = len(self.ends)
        if row < 0:
            row += n
        if not 0 <= row < n:
            raise IndexError(row)
        edited = self._edited.get(row)
        if edited is not None:
            return edited
        port_a, port_b = self._ports[row].tolist()
        ports = (None if port_a < 0 else port_a, None if port_b < 0 else port_b)
        return Bundle(self.key(row), self.link_ids(row), self._kinds[self._kind_code[row]], float(self.totals[row]),
                      int(self._cables[row]), self._rates[self._rate_code[row]],
                      self._port_pairs.setdefault(ports, ports))

    def __setitem__(self, row: int, bundle: Bundle) -> None:
        """An edit's new bundle for this row (the same two devices): kept, and the columns follow it."""
        self._edited[row] = bundle
        self._kind_code[row] = self._code(self._kinds, bundle.kind)
        self._rate_code[row] = self._code(self._rates, bundle.rate)
        self.totals[row] = bundle.total_gbps
        self._cables[row] = bundle.cables

    def __iter__(self):
        return (self[r] for r in range(len(self.ends)))

    @staticmethod
    def _code(words: list, word: str) -> int:
        if word not in words:
            words.append(word)
        return words.index(word)

    def key(self, row: int) -> tuple[str, str]:
        lo, hi = self.ends[row].tolist()
        return (self.device_ids[lo], self.device_ids[hi])

    def link_ids(self, row: int) -> tuple[str, ...]:
        edited = self._edited.get(row)
        if edited is not None:
            return edited.link_ids
        return tuple(self._member_ids[self._starts[row]:self._starts[row + 1]])

    def kinds_present(self) -> set[str]:
        codes = self._kind_code[self.filled()] if self.empty else self._kind_code
        return {self._kinds[c] for c in np.unique(codes).tolist()}

    def filled(self) -> np.ndarray:
        """Per row: it holds cables (not a row an edit emptied)."""
        out = np.ones(len(self.ends), bool)
        out[list(self.empty)] = False
        return out

    def empty_row(self, row: int) -> None:
        """The row's last cable went: it stays (its key too, for an undo to fill it again), holding nothing."""
        old = self[row]
        self[row] = Bundle(old.key, (), old.kind, 0.0, 0, old.rate)
        self.empty.add(row)

    def fill_row(self, row: int, bundle: Bundle) -> None:
        self[row] = bundle
        self.empty.discard(row)

    def device_row(self) -> dict:
        """Device id -> its number in device_ids (what `ends` hold)."""
        if self._device_row is None:
            self._device_row = {d: i for i, d in enumerate(self.device_ids)}
        return self._device_row

    def append(self, bundle: Bundle) -> int:
        """A bundle between two devices that had none: one more row (a column grows by one: a copy of
        each, ~1 ms at 295k rows, once per edit). Its devices are among device_ids (a device added to the
        design plans every bundle anew)."""
        row = len(self.ends)
        ends = [self.device_row()[bundle.key[0]], self.device_row()[bundle.key[1]]]
        ports = [-1 if p is None else p for p in bundle.ports]
        self.ends = np.concatenate([self.ends, np.array([ends], self.ends.dtype)])
        self._ports = np.concatenate([self._ports, np.array([ports], self._ports.dtype)])
        self._starts = np.append(self._starts, self._starts[-1])
        self._kind_code = np.append(self._kind_code, 0).astype(self._kind_code.dtype)
        self._rate_code = np.append(self._rate_code, 0).astype(self._rate_code.dtype)
        self.totals = np.append(self.totals, 0.0)
        self._cables = np.append(self._cables, 0).astype(self._cables.dtype)
        self[row] = bundle
        return row

    def kind_index(self) -> np.ndarray:
        """Each bundle's kind as its row in links.KINDS (an unknown kind: the first), as bundle_kinds."""
        table = np.array([KINDS.index(k) if k in KINDS else 0 for k in self._kinds] or [0], np.int8)
        return table[self._kind_code]

    def device_rows(self, index: dict) -> tuple[np.ndarray, np.ndarray]:
        """Both ends of each bundle as rows of another numbering of the devices (id -> row)."""
        remap = np.fromiter((index.get(d, -1) for d in self.device_ids), np.int64, len(self.device_ids))
        if not len(remap):
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return remap[self.ends[:, 0]], remap[self.ends[:, 1]]

    def rows_holding(self, link_ids: set) -> dict[int, bool]:
        """Row -> whether all its links are in `link_ids`, for the rows holding any of them."""
        hit = np.fromiter(map(link_ids.__contains__, self._member_ids), bool, len(self._member_ids))
        lengths = np.diff(self._starts)
        row_of_member = np.repeat(np.arange(len(lengths)), lengths)
        found = np.bincount(row_of_member[hit], minlength=len(lengths))
        out = {r: bool(found[r] == lengths[r]) for r in np.flatnonzero(found).tolist() if r not in self._edited}
        for r, bundle in self._edited.items():
            count = len(link_ids.intersection(bundle.link_ids))
            if count:
                out[r] = count == len(bundle.link_ids)
        return out

    def row_of_link(self, link_id: str) -> int | None:
        """The row whose cables include this link, None when none does."""
        for r, bundle in self._edited.items():
            if link_id in bundle.link_ids:
                return r
        try:
            at = self._member_ids.index(link_id)
        except ValueError:
            return None
        row = int(np.searchsorted(self._starts, at, side="right")) - 1
        return None if row in self._edited else row
