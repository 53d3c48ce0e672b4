"""The design's GPU count for what the window shows, counted again only after an edit that can change
it: a server added, removed, re-sized or given another role, or another design. A cable edit reads
the count held (counting 16k servers while the engine's thread shared the interpreter held the
window 20-50 ms at 131k GPUs)."""
from __future__ import annotations

# the fields of a server that Document.num_gpus reads
COUNTED_FIELDS = ("accelerator_count", "role")


class GpuCount:
    def __init__(self):
        self._held: tuple[object, int, int] | None = None  # (the design's lineage, its revision, GPUs)

    def of(self, doc) -> int:
        """doc.num_gpus(), from the count held when no change since could alter it."""
        if self._held is not None:
            lineage, revision, gpus = self._held
            changes = doc.changes_since(revision) if lineage is doc.lineage and revision <= doc.revision else None
            if changes is not None and not any(_may_change_gpus(c) for c in changes):
                self._held = (lineage, doc.revision, gpus)
                return gpus
        gpus = doc.num_gpus()
        self._held = (doc.lineage, doc.revision, gpus)
        return gpus


def _may_change_gpus(change) -> bool:
    if change.collection == "document":
        return True
    return change.collection == "nodes" and (change.action != "changed" or change.field in COUNTED_FIELDS)
