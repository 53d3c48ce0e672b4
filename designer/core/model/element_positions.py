"""Where each rack, server, switch and link of a design is, by id, kept through edits for the live
check (check_incremental.py): an index made the first time an edit asks, then moved edit by edit."""
from __future__ import annotations

from operator import attrgetter

from .document import Document
from .id_index import IdIndex, SharedIdIndex


class ElementPositions:
    """Id -> position in each collection, made the first time an edit asks and kept while the checked
    parts are. A snapshot's own id index would be made again for every snapshot (a dict of 295k links:
    0.15 s an edit at 131k GPUs). The links' index follows cables added, removed and renamed: it keeps
    the links' ids now (`link_ids`, moved edit by edit), an index of them as they were when it was
    made, and the moves since (a link put at or taken from a place shifts those after it), so a link
    is found by its old place moved along; after REMAKE_AFTER moves the index is made again."""

    REMAKE_AFTER = 256

    def __init__(self, link_ids: list[str] | None = None, shared: SharedIdIndex | None = None,
                 version: object = None):
        self._indexes: dict[str, IdIndex] = {}
        self.link_ids = link_ids  # the links' ids now, in order (check.CheckParts.link_ids)
        self._shared = shared or SharedIdIndex()  # the document's index of its links' ids (Document.link_id_index)
        self._version = version  # the document's version of `link_ids` (None once they moved)
        self._moves: list[tuple[int, int]] = []  # (place, +1 a link put there | -1 the one there taken)
        # id -> (place, moves before) of each link put there or renamed to it since the index was made
        self._since: dict[str, list[tuple[int, int]]] = {}

    def find(self, doc: Document, name: str, element_id: str) -> int | None:
        items = getattr(doc.spec, name)
        if name == "links" and self.link_ids is not None:
            found = self.link_places(element_id)
            position = found[-1] if found else None
        else:
            position = self._index(doc, name).get(element_id)
        if position is None or position >= len(items) or items[position].id != element_id:
            return None
        return position

    def count(self, doc: Document, name: str, element_id: str) -> int:
        """How many racks, servers or switches (`name`) have this id."""
        return self._index(doc, name).count(element_id)

    def places(self, doc: Document, name: str, element_id: str) -> list[int]:
        """Every place in `name`'s list that holds this id, in order (a repeated id's first is the one its
        cables' ends mean, as the links' parse says)."""
        if name == "links":
            return self.link_places(element_id)
        items = getattr(doc.spec, name)
        return [i for i in self._index(doc, name).places(element_id) if i < len(items) and items[i].id == element_id]

    def holding(self, doc: Document, name: str, names: list[str]) -> list[bool]:
        """Per name, whether an element of `name`'s list has it as its id (one sorted search for all)."""
        if name != "links":
            return self._index(doc, name).holds(names)  # (made from the ids now: forgotten at every rename)
        # the links' index is of their ids when it was made, and moved since: a name found is looked up
        self.link_places("")  # (the index made, when it was not)
        maybe = self._indexes["links"].holds(names)
        return [bool((hit or element_id in self._since) and self.link_places(element_id))
                for hit, element_id in zip(maybe, names)]

    def _index(self, doc: Document, name: str) -> IdIndex:
        index = self._indexes.get(name)
        if index is None:
            index = self._indexes[name] = IdIndex(list(map(attrgetter("id"), getattr(doc.spec, name))))
        return index

    def link_places(self, element_id: str) -> list[int]:
        """Every place in `link_ids` that holds this id, in order."""
        ids = self.link_ids
        index = self._indexes.get("links")
        if index is None:
            index = self._indexes["links"] = self._shared.of(list(ids), self._version)
            self._moves, self._since = [], {}
        candidates = list(self._since.get(element_id, ()))
        candidates += ((original, 0) for original in index.places(element_id))  # (a repeated id: each of its places)
        found = set()
        for place, since in candidates:
            place = _moved(place, self._moves[since:])
            if place is not None and place < len(ids) and ids[place] == element_id:
                found.add(place)
        return sorted(found)

    def link_inserted(self, position: int, element_id: str) -> None:
        self._take_shared_index()
        self._version = None
        self.link_ids.insert(position, element_id)
        self._moves.append((position, 1))
        self._since.setdefault(element_id, []).append((position, len(self._moves)))
        self._remake_when_long()

    def link_removed(self, position: int) -> None:
        self._take_shared_index()
        self._version = None
        del self.link_ids[position]
        self._moves.append((position, -1))
        self._remake_when_long()

    def link_renamed(self, position: int, new_id: str) -> None:
        self._take_shared_index()
        self._version = None
        self.link_ids[position] = new_id
        self._since.setdefault(new_id, []).append((position, len(self._moves)))

    def _take_shared_index(self) -> None:
        """Before the first move of the links' ids: the document's index of them at this version, when it
        keeps one (no hashing), so that it follows the moves; made after them it would be made from the
        moved ids (295k ids hashed and sorted: ~45 ms at 131k GPUs, at the first cable put back)."""
        if "links" in self._indexes or self._version is None or self.link_ids is None:
            return
        index = self._shared.kept(self._version)
        if index is not None and len(index.ids) == len(self.link_ids):
            self._indexes["links"] = index
            self._moves, self._since = [], {}

    def forget(self, name: str) -> None:
        """A rack, server or switch was added, removed or renamed: that list's index is made again when asked."""
        self._indexes.pop(name, None)

    def _remake_when_long(self) -> None:
        if len(self._moves) > self.REMAKE_AFTER:
            self._indexes.pop("links", None)  # made again from link_ids when next asked

    def device(self, doc: Document, device_id: str):
        """The server or switch of that id (None: none), as Document.device says."""
        for name in ("nodes", "switches"):
            position = self.find(doc, name, device_id)
            if position is not None:
                return getattr(doc.spec, name)[position]
        return None


def _moved(place: int, moves: list[tuple[int, int]]) -> int | None:
    """Where the element at `place` is after these moves (None: it was taken)."""
    for at, step in moves:
        if step > 0:
            if at <= place:
                place += 1
        elif at == place:
            return None
        elif at < place:
            place -= 1
    return place
