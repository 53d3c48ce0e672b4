"""check_model redone only where an edit can change it (the live window checks on every edit).

A full check of a 16,384-GPU design takes ~300 ms, most of it the links' ports; an edit of one
link's speed or of the job changes a few of its problems at most. `ModelChecker.check` keeps
the last full check's parts (check.CheckParts) and, when the document's change log says only such
edits happened since, redoes just those parts with check.py's own rules, and reads only the edited elements (their
numbers, their ends): the work of an edit follows the edit, not the design. The jobs' check, redone
on every check, reads the cluster through the parts' tallies (design_tallies.py), which the edited
elements update. Anything else (adds,
removals, renames, moves, a new design) gets the full check. The list is joined as check_model
joins it (check.assemble). Saving and `designer validate` run the full check.
"""
from __future__ import annotations

from operator import attrgetter

from ..problems import Problem
from .catalog import Catalog, default_catalog
from .check import MAX_LISTED_DUPLICATES, CheckParts, assemble, check_parts, redo_link_kind
from .document import Document
from .elements import split_endpoint
from .id_index import IdIndex

LINK_SHAPE_FIELDS = frozenset({"id", "a", "b", "kind", "count"})  # ports and ends: the full check
JOB_PARTS = frozenset({"workload", "parallelism", "jobs", "layout"})  # none of the cluster checks read them
# A part marked down or up (or GPUs of a server out): no cluster check reads it; the jobs' check,
# which does, runs on every check (check_plan) and reads them through the tallies the edit updates
STATE_FIELDS = frozenset({"state", "gpus_down"})


class ModelChecker:
    def __init__(self, catalog: Catalog | None = None):
        self.catalog = catalog or default_catalog()
        self._key = None  # (lineage, revision) of the parts below
        self._parts: CheckParts | None = None
        self._positions = ElementPositions()
        self.full_checks = 0  # how many times the whole design was checked (tests, benchmarks)

    def check(self, doc: Document) -> list[Problem]:
        changes = doc.changes_since(self._key[1]) if self._key and self._key[0] is doc.lineage else None
        if changes is None or not self._patch(doc, changes):
            self.full_checks += 1
            self._parts = check_parts(doc, self.catalog)
            self._positions = ElementPositions()
        self._key = (doc.lineage, doc.revision)
        return assemble(doc, self._parts, self.catalog)

    def _patch(self, doc: Document, changes) -> bool:
        """Redo the parts these changes can affect; False when only a full check will do."""
        edited: dict[tuple[str, str], set[str]] = {}  # (collection, id) of each element changed -> its fields
        for c in changes:
            if c.collection in JOB_PARTS:
                continue
            if c.action == "changed" and c.field in STATE_FIELDS and c.collection in ("nodes", "switches"):
                edited.setdefault((c.collection, c.id), set()).add(c.field)
                continue
            if c.collection == "links" and c.action == "changed" and c.field not in LINK_SHAPE_FIELDS:
                edited.setdefault((c.collection, c.id), set()).add(c.field)
                continue
            return False
        if edited and self._names_a_repeated_id(doc, edited):
            return False  # which element a repeated id means is the full check's call
        places = [(name, self._positions.find(doc, name, element_id), fields)
                  for (name, element_id), fields in edited.items()]
        if any(position is None for _, position, _ in places):
            return False
        tallies = self._parts.tallies
        for name, position, fields in places:
            self._parts.numbers.redo(doc, name, position)
            edited_in = {"nodes": tallies.server_edited, "links": tallies.link_edited,
                         "switches": tallies.switch_edited}[name]
            for field in fields:
                edited_in(doc, position, field)
            if name == "links":
                link = doc.links[position]
                ends = [self._positions.device(doc, split_endpoint(end)[0]) for end in (link.a, link.b)]
                redo_link_kind(doc, self._parts, position, ends)
        return True

    def _names_a_repeated_id(self, doc: Document, edited) -> bool:
        """Whether an edited element, or a device at an edited cable's ends, has an id that another
        element has too (True too when the check listed only the first of many repeats)."""
        duplicates = self._parts.duplicates
        if not duplicates:
            return False
        if len(duplicates) > MAX_LISTED_DUPLICATES:
            return True
        repeated = {p.element for p in duplicates}
        for name, element_id in edited:
            if element_id in repeated:
                return True
            if name == "links":
                position = self._positions.find(doc, name, element_id)
                if position is None:
                    return True
                link = doc.links[position]
                if split_endpoint(link.a)[0] in repeated or split_endpoint(link.b)[0] in repeated:
                    return True
        return False


class ElementPositions:
    """Id -> position in each collection, made the first time an edit asks and kept while the checked
    parts are: the edits patched in place (values, not ids, adds or removes) leave every position as it
    was. A snapshot's own id index would be made again for every snapshot (a dict of 295k links: 0.15 s
    an edit at 131k GPUs)."""

    def __init__(self):
        self._indexes: dict[str, IdIndex] = {}

    def find(self, doc: Document, name: str, element_id: str) -> int | None:
        items = getattr(doc.spec, name)
        index = self._indexes.get(name)
        if index is None:
            index = self._indexes[name] = IdIndex(list(map(attrgetter("id"), items)))
        position = index.get(element_id)
        if position is None or position >= len(items) or items[position].id != element_id:
            return None
        return position

    def device(self, doc: Document, device_id: str):
        """The server or switch of that id (None: none), as Document.device says."""
        for name in ("nodes", "switches"):
            position = self.find(doc, name, device_id)
            if position is not None:
                return getattr(doc.spec, name)[position]
        return None
