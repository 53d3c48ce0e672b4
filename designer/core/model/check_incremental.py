"""check_model redone only where an edit can change it (the live window checks on every edit).

A full check of a 16,384-GPU design takes ~300 ms, most of it the links' ports; an edit of one
link's speed or of the job changes a few of its problems at most. `DesignChecker.check` keeps
the last full check in parts and, when the document's change log says only such edits
happened since, redoes just those parts; anything else (adds, removals, renames, moves, a new
design) gets the full check. The result is always the list check_model would return, in
the same order (tests/ui/test_live_edits.py holds it). Saving and `designer validate` still run
the full check.
"""
from __future__ import annotations

from ..problems import Problem
from .catalog import Catalog, default_catalog
from .check import (
    _duplicate_ids, _parts, _racks_and_slots, join_link_problems, link_kind_problems,
    link_problems, problems_after_links,
)
from .document import Document
from .elements import split_endpoint
from .non_finite import non_finite_problems
from .plan import check_plan

LINK_SHAPE_FIELDS = frozenset({"id", "a", "b", "kind", "count"})  # ports and ends: the full check
JOB_PARTS = frozenset({"workload", "parallelism", "jobs", "layout"})  # none of the cluster checks read them
# A part marked down or up (or GPUs of a server out): no cluster check reads it; the jobs' check,
# which does, runs on every check (check_plan)
STATE_FIELDS = frozenset({"state", "gpus_down"})


class ModelChecker:
    def __init__(self, catalog: Catalog | None = None):
        self.catalog = catalog or default_catalog()
        self._key = None  # (lineage, revision) of the parts below
        self.full_checks = 0  # how many times the whole design was checked (tests, benchmarks)

    def check(self, doc: Document) -> list[Problem]:
        changes = doc.changes_since(self._key[1]) if self._key and self._key[0] is doc.lineage else None
        if changes is None or not self._patch(doc, changes):
            self._full(doc)
        self._key = (doc.lineage, doc.revision)
        return self._assemble(doc)

    def _full(self, doc: Document) -> None:
        self.full_checks += 1
        self._duplicates = _duplicate_ids(doc)
        self._before_links = self._duplicates + _racks_and_slots(doc) + _parts(doc, self.catalog)
        self._per_link, self._kinds, self._tail = link_problems(doc)
        self._after_links = problems_after_links(doc, self.catalog)

    def _patch(self, doc: Document, changes) -> bool:
        """Redo the parts these changes can affect; False when only a full check will do."""
        edited_links = set()
        for c in changes:
            if c.collection in JOB_PARTS:
                continue
            if c.action == "changed" and c.field in STATE_FIELDS and c.collection in ("nodes", "switches"):
                continue
            if c.collection == "links" and c.action == "changed" and c.field not in LINK_SHAPE_FIELDS:
                edited_links.add(c.id)
                continue
            return False
        if edited_links and self._duplicates:
            return False  # with repeated ids, which link or device a name means is the full check's call
        for link_id in edited_links:
            link = doc.find("links", link_id)
            if link is None:
                return False
            position = list(map(id, doc.links)).index(id(link))
            ends = [doc.device(split_endpoint(end)[0]) for end in (link.a, link.b)]
            kind = link_kind_problems(link, ends, f"spec.links[{position}]")
            if kind:
                self._kinds[position] = kind
            else:
                self._kinds.pop(position, None)
        return True

    def _assemble(self, doc: Document) -> list[Problem]:
        # NaN anywhere (an API edit or a recovered file): cheap (a sum per field), so always redone
        problems = non_finite_problems(doc) + self._before_links
        problems += join_link_problems(self._per_link, self._kinds, self._tail)
        return problems + self._after_links + check_plan(doc, self.catalog)
