"""check_model redone only where an edit can change it (the live window checks on every edit).

A full check of a 16,384-GPU design takes ~300 ms, most of it the links' ports; an edit of one
link's speed or of the job changes a few of its problems at most. `ModelChecker.check` keeps
the last full check's parts (check.CheckParts) and, when the document's change log says only such
edits happened since, redoes just those parts with check.py's own rules; anything else (adds,
removals, renames, moves, a new design) gets the full check. The list is joined as check_model
joins it (check.assemble). Saving and `designer validate` run the full check.
"""
from __future__ import annotations

from ..problems import Problem
from .catalog import Catalog, default_catalog
from .check import CheckParts, assemble, check_parts, redo_link_kind
from .document import Document

LINK_SHAPE_FIELDS = frozenset({"id", "a", "b", "kind", "count"})  # ports and ends: the full check
JOB_PARTS = frozenset({"workload", "parallelism", "jobs", "layout"})  # none of the cluster checks read them
# A part marked down or up (or GPUs of a server out): no cluster check reads it; the jobs' check,
# which does, runs on every check (check_plan)
STATE_FIELDS = frozenset({"state", "gpus_down"})


class ModelChecker:
    def __init__(self, catalog: Catalog | None = None):
        self.catalog = catalog or default_catalog()
        self._key = None  # (lineage, revision) of the parts below
        self._parts: CheckParts | None = None
        self.full_checks = 0  # how many times the whole design was checked (tests, benchmarks)

    def check(self, doc: Document) -> list[Problem]:
        changes = doc.changes_since(self._key[1]) if self._key and self._key[0] is doc.lineage else None
        if changes is None or not self._patch(doc, changes):
            self.full_checks += 1
            self._parts = check_parts(doc, self.catalog)
        self._key = (doc.lineage, doc.revision)
        return assemble(doc, self._parts, self.catalog)

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
        if edited_links and self._parts.duplicates:
            return False  # with repeated ids, which link or device a name means is the full check's call
        for link_id in edited_links:
            link = doc.find("links", link_id)
            if link is None:
                return False
            redo_link_kind(doc, self._parts, list(map(id, doc.links)).index(id(link)))
        return True
