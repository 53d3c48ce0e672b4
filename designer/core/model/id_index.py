"""Id -> position among a long list of ids, in a few MB.

A dict of 295k link ids (a 131k-GPU design) holds ~15 MB; the fabric and the link-load analysis each
kept one per design. The ids' string hashes, sorted, with their order, hold 3.6 MB and answer in a
sorted search.
"""
from __future__ import annotations

import numpy as np

from ..parts import array_in_parts


class IdIndex:
    """Id -> its index among `ids` (the last of a repeated id, as a dict built in order would say), by
    the ids' string hashes, sorted: 3.6 MB at 131k GPUs where a dict of 295k ids took 15 MB."""

    def __init__(self, ids: list[str]):
        self.ids = ids
        hashes = array_in_parts(hash, ids, np.int64)  # (a window's thread gets its turn between parts)
        self.order = np.argsort(hashes, kind="stable").astype(np.int32)
        self.hashes = hashes[self.order]

    def moved(self, ids: list[str], moves: list[tuple[bool, int, str]]) -> "IdIndex":
        """The index of `ids`: these ids after the moves (each (added, place, id): an id put at that place
        or the one there taken, in order), moved in the sorted arrays (a few ms at 131k GPUs, where hashing
        and sorting 295k ids again took ~0.2 s); this index is left as it is (a reader may hold it)."""
        hashes, order = self.hashes, self.order
        for added, place, element_id in moves:
            if added:
                order = order + (order >= place).astype(order.dtype)  # the places after it, one further
                h = hash(element_id)
                lo, hi = int(np.searchsorted(hashes, h, "left")), int(np.searchsorted(hashes, h, "right"))
                slot = lo + int(np.searchsorted(order[lo:hi], place))  # a repeated hash stays in place order
                hashes, order = np.insert(hashes, slot, h), np.insert(order, slot, place)
            else:
                slot = int(np.flatnonzero(order == place)[0])
                hashes, order = np.delete(hashes, slot), np.delete(order, slot)
                order -= (order > place).astype(order.dtype)
        index = IdIndex.__new__(IdIndex)
        index.ids, index.hashes, index.order = ids, hashes, order
        return index

    def get(self, element_id: str) -> int | None:
        h = hash(element_id)
        lo, hi = int(np.searchsorted(self.hashes, h, "left")), int(np.searchsorted(self.hashes, h, "right"))
        for k in range(hi - 1, lo - 1, -1):  # the same hash: the ids themselves tell (the last first)
            i = int(self.order[k])
            if self.ids[i] == element_id:
                return i
        return None

    def count(self, element_id: str) -> int:
        """How many times `element_id` is among `ids`."""
        return len(self.places(element_id))

    def holds(self, names: list[str]) -> list[bool]:
        """Per name, whether it is among `ids` (one sorted search for all of them)."""
        if not len(self.hashes):
            return [False] * len(names)
        hashes = np.fromiter(map(hash, names), np.int64, len(names))
        at = np.minimum(np.searchsorted(self.hashes, hashes), len(self.hashes) - 1)
        hit, first = (self.hashes[at] == hashes).tolist(), self.order[at].tolist()
        ids = self.ids
        # the first id of that hash is the name, or (two ids of one hash) the name is looked for among them
        return [found and (ids[i] == name or bool(self.places(name))) for found, i, name in zip(hit, first, names)]

    def places(self, element_id: str) -> list[int]:
        """Every index of `element_id` among `ids`, in order."""
        h = hash(element_id)
        lo, hi = int(np.searchsorted(self.hashes, h, "left")), int(np.searchsorted(self.hashes, h, "right"))
        return sorted(i for i in self.order[lo:hi].tolist() if self.ids[i] == element_id)


class SharedIdIndex:
    """One IdIndex of a design's link ids for every reader of that design: the live check, the engine's
    fabric and the link-load analysis each made their own of the same 295k ids (3.6 MB each at 131k
    GPUs). A document owns one, shared with its snapshots; it keeps the index of the last list of ids
    asked for, found again for the same version of the document's link ids (Document.link_ids_version:
    a token the document replaces at each edit that adds, removes or renames a link) without comparing
    them, or, for another version or a reader that follows edits on its own list and so knows no
    version, for the same list or an equal one."""

    def __init__(self):
        self._last: tuple[object, IdIndex] | None = None  # (the version of its ids or None, the index)
        self.made = 0  # how many indexes it made rather than found (tests)

    def of(self, ids: list[str], version: object = None) -> IdIndex:
        """The index of `ids` (a list that nothing changes afterwards: the index reads it), the
        document's link ids at `version` when given (no comparison of 295k ids, a few ms at 131k)."""
        last = self._last
        if last is not None:
            last_version, index = last
            if version is not None and last_version is version and len(index.ids) == len(ids):
                return index
            if len(index.ids) == len(ids) and (index.ids is ids or index.ids == ids):
                # the same ids under another version (a cable removed and put back, a full check after
                # edits followed apart): kept, under the version asked for. Comparing costs ~2 ms at
                # 131k GPUs where indexing again took ~45 ms
                if version is not None:
                    self._last = (version, index)
                return index
        index = IdIndex(ids)
        self.made += 1
        # one assignment: a worker and the window's thread may both ask. Kept under the version asked
        # for (or None): a reader without one finds it again by comparing the ids
        self._last = (version, index)
        return index

    def kept(self, version: object) -> IdIndex | None:
        """The index kept for the document's link ids at `version`, if that is the one kept."""
        last = self._last
        return last[1] if last is not None and version is not None and last[0] is version else None

    def keep(self, index: IdIndex, version: object) -> None:
        """Take `index` as the index of the document's link ids at `version` when none is kept for it (a
        reader's, moved from an earlier one with the cables added and removed since: IdIndex.moved)."""
        last = self._last
        if version is not None and (last is None or last[0] is not version):
            self._last = (version, index)

    def __deepcopy__(self, memo) -> "SharedIdIndex":
        return SharedIdIndex()  # a copy of a design is edited apart

    def __getstate__(self):
        return {"_last": None, "made": 0}
