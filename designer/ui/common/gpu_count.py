"""The design's GPU count for what the window shows, kept across edits: one that cannot change it (a
cable edit) reads the count held, a server added or removed adds or takes its GPUs, and anything else
that may change it (a server re-sized or given another role, another design) counts them again
(counting 16k servers while the engine's thread shared the interpreter held the window 20-50 ms at
131k GPUs)."""
from __future__ import annotations

# the fields of a server that Document.num_gpus reads
COUNTED_FIELDS = ("accelerator_count", "role")


class GpuCount:
    def __init__(self):
        self._held: tuple[object, int, int] | None = None  # (the design's lineage, its revision, GPUs)

    def of(self, doc) -> int:
        """doc.num_gpus(), from the count held when the changes since tell how it changed."""
        if self._held is not None:
            lineage, revision, gpus = self._held
            changes = doc.changes_since(revision) if lineage is doc.lineage and revision <= doc.revision else None
            gpus = _count_after(gpus, changes) if changes is not None else None
            if gpus is not None:
                self._held = (lineage, doc.revision, gpus)
                return gpus
        gpus = doc.num_gpus()
        self._held = (doc.lineage, doc.revision, gpus)
        return gpus


def _count_after(gpus: int, changes) -> int | None:
    """The count after `changes`, from the count before them; None when one of them may have changed it
    in a way they do not tell (counted again)."""
    for change in changes:
        if not _may_change_gpus(change):
            continue
        if change.collection != "nodes" or change.action not in ("added", "removed"):
            return None
        server = change.new if change.action == "added" else change.old
        if server is None:
            return None
        own = server.accelerator_count if server.role == "compute" else 0  # as Document.num_gpus counts
        gpus += own if change.action == "added" else -own
    return gpus


def _may_change_gpus(change) -> bool:
    if change.collection == "document":
        return True
    return change.collection == "nodes" and (change.action != "changed" or change.field in COUNTED_FIELDS)
