"""The check's repeated ids (check._duplicate_ids) followed through the live check's edits.

Finding them in full reads every element's id (~60 ms at 131k GPUs, and the live check's full check
after it ~0.6 s). An edit adds, removes or renames a few elements: only their ids (the old and the
new) can start or stop repeating. Each is counted again in the live check's indexes of the ids
(element_positions.py: one per list, a sorted array of their hashes), and the problems are made again
from the places of the ids that repeat, as the full check makes them.
"""
from __future__ import annotations

from collections.abc import Iterable

from ..problems import Problem
from .check import MAX_LISTED_DUPLICATES, duplicate_problems
from .document import Document
from .element_positions import ElementPositions
from .link_edits import SERVER, SWITCH

COLLECTIONS = ("racks", "nodes", "switches", "links")  # the order the check lists the elements in
DEVICES = ("nodes", "switches")


class RepeatedIds:
    """The ids more than one element has, kept as the live check follows edits."""

    def __init__(self, ids: Iterable[str]):
        self.ids: dict[str, None] = dict.fromkeys(ids)  # (insertion order: a stable order to list them in)

    @classmethod
    def of(cls, duplicates: list[Problem]) -> "RepeatedIds | None":
        """From the full check's list of repeats; None when it listed only the first of many."""
        if len(duplicates) > MAX_LISTED_DUPLICATES:
            return None
        return cls(p.element for p in duplicates)

    def follow(self, doc: Document, positions: ElementPositions, touched: Iterable) -> None:
        """The ids `touched` (those of the elements added, removed or renamed, old and new) counted again."""
        for element_id in touched:
            if not isinstance(element_id, str):
                continue
            if sum(len(positions.places(doc, name, element_id)) for name in COLLECTIONS) > 1:
                self.ids[element_id] = None
            else:
                self.ids.pop(element_id, None)

    def among_devices(self, doc: Document, positions: ElementPositions, element_id: str) -> bool:
        """Whether more than one server or switch has this id (its cables' ends mean the first)."""
        return sum(len(positions.places(doc, name, element_id)) for name in DEVICES) > 1

    def within_a_list(self, doc: Document, positions: ElementPositions) -> bool:
        """Whether an id repeats among the racks, the servers or the switches (the racks' and slots' check
        kept per element (rack_slots.py) keeps them by id)."""
        return any(len(positions.places(doc, name, element_id)) > 1
                   for element_id in self.ids for name in ("racks", "nodes", "switches"))

    def devices_of(self, doc: Document, positions: ElementPositions,
                   element_ids: Iterable[str]) -> list[tuple[int, int]]:
        """Every server and switch, as (kind, place), that has one of `element_ids`."""
        return [(kind, place) for element_id in element_ids
                for kind, name in ((SERVER, "nodes"), (SWITCH, "switches"))
                for place in positions.places(doc, name, element_id)]

    def device_groups(self, doc: Document, positions: ElementPositions) -> dict[tuple[int, int], list[tuple[int, int]]]:
        """Each server or switch whose id another server or switch has -> every device of that id."""
        out = {}
        for element_id in self.ids:
            group = self.devices_of(doc, positions, [element_id])
            if len(group) > 1:
                out.update(dict.fromkeys(group, group))
        return out

    def problems(self, doc: Document, positions: ElementPositions) -> list[Problem]:
        """check._duplicate_ids' list, from the places of the repeated ids."""
        if not self.ids:
            return []
        repeats = []  # ((list, place), path, id, the first use's path)
        for element_id in self.ids:
            places = [(k, i) for k, name in enumerate(COLLECTIONS) for i in positions.places(doc, name, element_id)]
            first = f"spec.{COLLECTIONS[places[0][0]]}[{places[0][1]}]"
            repeats += [((k, i), f"spec.{COLLECTIONS[k]}[{i}]", element_id, first) for k, i in places[1:]]
        repeats.sort(key=lambda r: r[0])

        def taken(names: list[str]) -> list[bool]:
            out, left = [False] * len(names), list(range(len(names)))
            for name in ("nodes", "switches", "racks", "links"):  # (each list asked of the names still free)
                held = positions.holding(doc, name, [names[k] for k in left])
                for k in (k for k, found in zip(left, held) if found):
                    out[k] = True
                left = [k for k, found in zip(left, held) if not found]
                if not left:
                    break
            return out

        return duplicate_problems([r[1:] for r in repeats], taken)
