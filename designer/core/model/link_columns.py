"""The links' fields that the whole-network checks read (network_reach.py: which servers reach which,
which a job cannot use), one array each, kept by the live check edit by edit.

Reading a field of every link is ~17 ms at 131k GPUs (295k links); the network checks read three
(kind, cable count, state) and redid it after every cable edit. The live check (check_incremental.py)
reads them once with the full check and then moves an entry with each link added or removed and
reads it again for a link whose kind, count or state changed.
"""
from __future__ import annotations

import numpy as np

NETWORK = ("ethernet", "infiniband")  # the link kinds the engine routes over (not NVLink, not PCIe)


class LinkColumns:
    network: np.ndarray  # bool per link: its kind is a network's (NETWORK)
    count: np.ndarray  # int64 per link: its cable count
    down: np.ndarray  # bool per link: marked down

    __slots__ = ("network", "count", "down")

    def __init__(self, network: np.ndarray, count: np.ndarray, down: np.ndarray) -> None:
        self.network = network
        self.count = count
        self.down = down

    @classmethod
    def of(cls, doc) -> "LinkColumns":
        """(ValueError: a count that is not a whole number.) Each test is made once per distinct value
        (Document.link_codes, shared with the links' rules: a kind or a state per link was ~15 ms each at
        131k GPUs)."""
        return cls(per_value(doc, "kind", NETWORK.__contains__), doc.link_array("count", np.int64).copy(),
                   per_value(doc, "state", "down".__eq__))

    def inserted(self, position: int, link) -> None:
        """A link put at `position` (ValueError: a count that is not a whole number)."""
        network, count, down = _of(link)
        self.network = np.insert(self.network, position, network)
        self.count = np.insert(self.count, position, count)
        self.down = np.insert(self.down, position, down)

    def removed(self, position: int) -> None:
        self.network = np.delete(self.network, position)
        self.count = np.delete(self.count, position)
        self.down = np.delete(self.down, position)

    def moved(self, source: np.ndarray, added: list) -> None:
        """Links added and removed at once: entry i is now the old entry source[i], or, where source[i]
        < 0, that of the link added[-source[i] - 1] (ValueError as `inserted`)."""
        new, at = source < 0, kept_places(source)
        values = [_of(added[k]) for k in (-source[new] - 1).tolist()]
        for k, name in enumerate(("network", "count", "down")):
            column = gathered(getattr(self, name), at)
            column[new] = [v[k] for v in values]
            setattr(self, name, column)

    def redo(self, position: int, link) -> None:
        """The link at `position` had its kind, count or state edited (ValueError as `inserted`)."""
        self.network[position], self.count[position], self.down[position] = _of(link)


def per_value(doc, name: str, test, dtype=bool) -> np.ndarray:
    """test(value) of each link's field `name` as `dtype`, made once per distinct value (each link's by
    itself when a value is unhashable)."""
    try:
        place, values = doc.link_codes(name)
    except TypeError:
        return np.fromiter(map(test, doc.link_values(name)), dtype, len(doc.links))
    return np.fromiter(map(test, values), dtype, len(values))[place]


def kept_places(source: np.ndarray) -> np.ndarray:
    """The places to gather from for `source` (entries < 0: any place; the caller fills those), made once
    for all the columns gathered."""
    return np.maximum(source, 0)


def gathered(column: np.ndarray, at: np.ndarray) -> np.ndarray:
    """column[at] (`at` from kept_places), the entries added left to the caller to fill."""
    if not len(column):
        return np.zeros(len(at), column.dtype)
    return column[at]


def _of(link) -> tuple[bool, int, bool]:
    """One link's entries, as `of` reads them (np.fromiter's conversion of the count, its errors too)."""
    return link.kind in NETWORK, int(np.fromiter([link.count], np.int64, 1)[0]), link.state == "down"
