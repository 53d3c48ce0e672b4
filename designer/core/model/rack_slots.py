"""The racks' and slots' check (check.racks_and_slots) kept per element and per rack, so that an edit
of a few servers, switches or racks redoes the answers of those and of the racks they sit in.

A server's or switch's own problem (in no rack, in a rack that does not exist, above its rack's top)
follows from it and its rack; a rack's overlaps from the elements at slots in it. The live check
(check_incremental.py) says which elements and racks an edit touched; the kept answers of the rest
stand. Ids are unique in each list here (while one repeats, the live check makes the list in full):
elements are kept by (collection, id) and found at their places when the list is made, which moves
their paths with servers added or removed.
A missing rack's guess reads every rack's id, so the elements that name one are redone whenever a
rack is added, removed or renamed (as the full check would guess again).
"""
from __future__ import annotations

from collections.abc import Callable

from ..problems import Problem
from .check import (guess_rack, missing_rack_problem, no_rack_problem, overlap_problems, racks_and_slots,
                    too_high_problem)
from .document import Document
from .link_edits import at_index

DEVICES = ("nodes", "switches")
Key = tuple[str, str]  # (collection, element id)


class RackSlots:
    def __init__(self, doc: Document):
        self.racks = {r.id: r for r in doc.racks}
        # per collection (no (collection, id) pair kept per element: ~2 MB less at 131k GPUs):
        # rack named -> the ids of the elements that name it, and element id -> the rack it names
        # (elements in no rack: absent)
        self.members: dict[str, dict[object, list[str]]] = {name: {} for name in DEVICES}
        self.rack_of: dict[str, dict[str, object]] = {name: {} for name in DEVICES}
        self.own: dict[Key, Problem] = {}  # element -> its own problem, its path at the place it was made at
        self.missing: dict[Key, None] = {}  # elements that name a rack that does not exist
        self.overlaps: dict[object, list[Problem]] = {}  # rack id -> its overlaps (racks with some only)
        guesses: dict[str, str | None] = {}
        spans: dict[str, list[tuple[int, int, str]]] = {}
        racks = self.racks
        for name in DEVICES:
            members, rack_of = self.members[name], self.rack_of[name]
            for i, element in enumerate(getattr(doc.spec, name)):
                rack = racks.get(element.rack) if element.rack is not None else None
                if rack is None or element.slot is None:
                    self._place(name, i, element, guesses)
                    continue
                # (the usual element, inline: at a slot in a rack that exists; 21k at 131k GPUs)
                top = element.slot + element.height_units
                rack_of[element.id] = element.rack
                members.setdefault(element.rack, []).append(element.id)
                if top > rack.units:
                    self.own[(name, element.id)] = too_high_problem(name, i, element, rack)
                spans.setdefault(element.rack, []).append((element.slot, top, element.id))
        for rack_id, rack_spans in spans.items():
            found = overlap_problems(rack_id, rack_spans)
            if found:
                self.overlaps[rack_id] = found

    def edited(self, doc: Document, find: Callable[[Document, str, str], int | None],
               elements: set[Key], racks: set[str], racks_renamed: bool) -> None:
        """The servers and switches `elements` ((collection, id), those gone too) and the racks of ids
        `racks` (their old and new ids; gone ones too) were added, removed or changed; `racks_renamed`: a
        rack was added, removed or renamed (every missing rack's guess may change). `find`: an
        element's place in its list now (None: gone)."""
        for rack_id in racks:
            position = find(doc, "racks", rack_id)
            if position is None:
                self.racks.pop(rack_id, None)
            else:
                self.racks[rack_id] = doc.racks[position]
        redo = set(racks)
        again = set(elements)
        for rack_id in racks:  # a rack's size or existence changed: its members' own problems too
            again.update(self.members_of(rack_id))
        if racks_renamed:
            again.update(self.missing)
        guesses: dict[str, str | None] = {}
        for key in again:
            rack = self.rack_of[key[0]].pop(key[1], None)
            if rack is not None:
                members = self.members[key[0]][rack]
                members.remove(key[1])
                if not members:
                    del self.members[key[0]][rack]
                redo.add(rack)
            self.own.pop(key, None)
            self.missing.pop(key, None)
            position = find(doc, key[0], key[1])
            if position is not None:
                element = getattr(doc.spec, key[0])[position]
                self._place(key[0], position, element, guesses)
                redo.add(element.rack)
        for rack_id in redo:
            if rack_id is not None:
                self._redo_rack(doc, rack_id, find)

    def problems(self, doc: Document, find: Callable[[Document, str, str], int | None]) -> list[Problem]:
        """check.racks_and_slots' list: the elements' own problems in the lists' order, then the
        overlaps, rack by rack in the order of each rack's first element at a slot."""
        own = []
        for (name, element_id), problem in self.own.items():
            position = find(doc, name, element_id)
            own.append(((DEVICES.index(name), position), at_index(problem, name, position)))
        own.sort(key=lambda kp: kp[0])
        out = [p for _, p in own]
        if self.overlaps:
            first = {}
            for rack_id in self.overlaps:
                places = []
                for name, element_id in self.members_of(rack_id):
                    position = find(doc, name, element_id)
                    if getattr(doc.spec, name)[position].slot is not None:
                        places.append((DEVICES.index(name), position))
                first[rack_id] = min(places)
            for rack_id in sorted(self.overlaps, key=first.__getitem__):
                out += self.overlaps[rack_id]
        return out

    def members_of(self, rack_id) -> list[Key]:
        """The elements that name the rack `rack_id`, as (collection, id)."""
        return [(name, element_id) for name in DEVICES for element_id in self.members[name].get(rack_id, ())]

    def _place(self, name: str, i: int, element, guesses: dict[str, str | None]) -> None:
        key = (name, element.id)
        if element.rack is None:
            if name == "nodes":
                self.own[key] = no_rack_problem(i, element)
            return
        self.rack_of[name][element.id] = element.rack
        self.members[name].setdefault(element.rack, []).append(element.id)
        rack = self.racks.get(element.rack)
        if rack is None:
            if str(element.rack) not in guesses:
                guesses[str(element.rack)] = guess_rack(element.rack, self.racks)
            self.own[key] = missing_rack_problem(name, i, element, guesses[str(element.rack)])
            self.missing[key] = None
        elif element.slot is not None and element.slot + element.height_units > rack.units:
            self.own[key] = too_high_problem(name, i, element, rack)

    def _redo_rack(self, doc: Document, rack_id, find) -> None:
        """The overlaps of the rack named `rack_id` again, from its members."""
        rack = self.racks.get(rack_id)
        spans = []
        if rack is not None:
            for name, element_id in self.members_of(rack_id):
                element = getattr(doc.spec, name)[find(doc, name, element_id)]
                if element.slot is not None:
                    spans.append((element.slot, element.slot + element.height_units, element.id))
        found = overlap_problems(rack.id, spans) if spans else []
        if found:
            self.overlaps[rack_id] = found
        else:
            self.overlaps.pop(rack_id, None)



def slots_after_edits(slots: RackSlots | None, doc: Document, find: Callable[[Document, str, str], int | None],
                      id_repeats_in_a_list: bool, placed: dict[str, set], racks_renamed) -> RackSlots | None:
    """The racks' and slots' check kept through edits at the racks, servers and switches `placed` (made
    again when it was not kept); None while an id repeats among the racks, servers or switches, which
    answers kept by id cannot keep apart."""
    if id_repeats_in_a_list:
        return None
    if slots is None:
        return RackSlots(doc)
    elements = {(name, element_id) for name in ("nodes", "switches") for element_id in placed[name]}
    slots.edited(doc, find, elements, placed["racks"], racks_renamed)
    return slots


def slot_problems(slots: RackSlots | None, doc: Document,
                  find: Callable[[Document, str, str], int | None]) -> list[Problem]:
    """The racks' and slots' check's list: from the kept answers, or in full while none are kept (an id
    repeated in a list: ~16 ms at 131k GPUs)."""
    return racks_and_slots(doc) if slots is None else slots.problems(doc, find)
