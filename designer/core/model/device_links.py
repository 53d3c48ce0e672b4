"""Which links end on each device: the cables a device's delete takes with it, found by the device
rather than by reading every link's two ends (at 131k GPUs that read held the window 40-60 ms per
server deleted)."""
from __future__ import annotations

from operator import attrgetter

import numpy as np

from ..parts import tolist_in_parts
from .endpoints import Endpoints


class DeviceLinks:
    """Device id -> the ids of the links with an end on it, a device being what an end's text names
    before its first ':' (as the check reads it), whether or not a server or switch holds that id. One
    entry per end: a link with both ends on one device is there twice. Made once from the design (off
    the window's thread where a file is read), then kept by the document's add, remove and update of
    a link (`learn`, `forget`): an edit costs what it touches."""

    __slots__ = ("_of",)

    def __init__(self, of: dict[str, tuple[str, ...]]):
        self._of = of

    @classmethod
    def of_design(cls, doc) -> "DeviceLinks":
        """From the links' parsed ends (the check's parse, doc.link_ends): the ends on a server or a
        switch grouped on arrays, the rare end on no device read from its text. A loop over 590k ends'
        texts took ~0.4 s at 131k GPUs."""
        links = doc.links
        if not links:
            return cls({})
        names = list(map(attrgetter("id"), doc.nodes)) + list(map(attrgetter("id"), doc.switches))
        sides = doc.link_ends.sides(doc)
        count = len(links)
        device = np.concatenate([_device_numbers(side, len(doc.nodes)) for side in sides])
        on_device = np.flatnonzero(device >= 0)
        order = on_device[np.argsort(device[on_device], kind="stable")]  # (stable: each device's links in order)
        devices = device[order]
        link_ids = list(map(attrgetter("id"), links))
        ids = [link_ids[i] for i in tolist_in_parts(order % count)]
        starts = np.flatnonzero(np.diff(devices)) + 1
        bounds = [0, *starts.tolist(), len(ids)]
        heads = devices[bounds[:-1]].tolist() if len(ids) else []
        of = {names[d]: tuple(ids[s:e]) for d, s, e in zip(heads, bounds, bounds[1:])}
        index = cls(of)
        for end in np.flatnonzero(device < 0).tolist():  # an end on no device, by its text
            link = links[end % count]
            index._add(_device_of(link.a if end < count else link.b), link.id)
        return index

    def of(self, device_id: str) -> tuple[str, ...]:
        return self._of.get(device_id, ())

    def learn(self, link) -> None:
        """`link` joined the design (added, or its ends or id changed)."""
        for end in (link.a, link.b):
            self._add(_device_of(end), link.id)

    def forget(self, link_id: str, a: str, b: str) -> None:
        """The link `link_id` with ends `a` and `b` left the design (removed, or about to change)."""
        for end in (a, b):
            device = _device_of(end)
            ids = self._of.get(device, ())
            if link_id in ids:
                at = ids.index(link_id)
                rest = ids[:at] + ids[at + 1:]
                if rest:
                    self._of[device] = rest
                else:
                    del self._of[device]

    def _add(self, device: str, link_id: str) -> None:
        self._of[device] = self._of.get(device, ()) + (link_id,)


def _device_of(end: str) -> str:
    return end.partition(":")[0]


def _device_numbers(side: Endpoints, nodes: int) -> np.ndarray:
    """Each end's device as one number: servers first, then switches; -1 for an end on neither."""
    return np.where(side.kind == 1, side.index.astype(np.int64),
                    np.where(side.kind == 2, side.index.astype(np.int64) + nodes, -1))
