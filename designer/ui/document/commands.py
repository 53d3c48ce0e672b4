"""Undoable edits. Each command changes the core document through its methods (so the
canvas hears about it) and restores it exactly on undo. A gesture is one command (or one
macro), pushed when it ends: a drag on release, a generator run as a whole.

`redo()` runs when the command is pushed, so commands are written to be applied from the
document's current state, not to assume the view already shows it.
"""
from __future__ import annotations

import copy
import dataclasses

from PySide6.QtGui import QUndoCommand

from ...core.model import Document, Link, Node, Rack, Switch
from ...core.model.elements import split_endpoint

ORDER = {Rack: 0, Node: 1, Switch: 1, Link: 2}


class AddElements(QUndoCommand):
    """Add racks, servers, switches and links (in that order; undo removes them in reverse)."""

    def __init__(self, qdoc, elements: list, text: str = "Add"):
        super().__init__(text)
        self.qdoc = qdoc
        self.elements = sorted(elements, key=lambda e: ORDER[type(e)])

    def redo(self) -> None:
        doc = self.qdoc.doc
        with doc.batch():
            for e in self.elements:
                doc.add(copy.deepcopy(e))

    def undo(self) -> None:
        doc = self.qdoc.doc
        with doc.batch():
            for e in reversed(self.elements):
                doc.remove(e.id)


class RemoveElements(QUndoCommand):
    """Remove elements; the links of removed devices and the contents of removed racks go too."""

    def __init__(self, qdoc, ids: list[str], text: str = "Delete"):
        super().__init__(text)
        self.qdoc = qdoc
        doc: Document = qdoc.doc
        wanted = set(ids)
        for rack in doc.racks:
            if rack.id in wanted:
                wanted |= {e.id for e in list(doc.nodes) + list(doc.switches) if e.rack == rack.id}
        devices = {i for i in wanted if doc.device(i) is not None}
        if devices:  # their cables, from the links' parsed ends (no pass over every cable's texts)
            wanted |= {link.id for link in doc.links_of_devices(devices)}
        self.removed: list[tuple[str, int, object]] = []  # filled by redo, in removal order
        self.ids = wanted

    def redo(self) -> None:
        doc = self.qdoc.doc
        self.removed = []
        order = sorted(self.ids, key=lambda i: -ORDER[type(doc.get(i))] if doc.get(i) is not None else 0)
        with doc.batch():
            for element_id in order:
                if doc.get(element_id) is not None:
                    self.removed.append(doc.remove(element_id))

    def undo(self) -> None:
        doc = self.qdoc.doc
        with doc.batch():
            for collection, position, element in reversed(self.removed):
                doc.add(element, position)


class SetFields(QUndoCommand):
    """Change fields of one or more elements: {id: {field: value}}. Consecutive edits of the
    same fields (a spin box held down) merge into one undo step."""

    MERGE_ID = 1001

    def __init__(self, qdoc, changes: dict[str, dict], text: str = "Edit", merge: bool = False):
        super().__init__(text)
        self.qdoc = qdoc
        self.new = changes
        self.old = {i: {f: getattr(qdoc.doc.get(i), f) for f in fields} for i, fields in changes.items()}
        self.merge = merge

    def id(self) -> int:
        return self.MERGE_ID if self.merge else -1

    def mergeWith(self, other) -> bool:
        if not (self.merge and other.merge) or set(other.new) != set(self.new):
            return False
        if any(set(other.new[i]) != set(self.new[i]) for i in self.new):
            return False
        self.new = other.new
        return True

    def redo(self) -> None:
        doc = self.qdoc.doc
        with doc.batch():
            for element_id, fields in self.new.items():
                doc.update(element_id, **fields)

    def undo(self) -> None:
        doc = self.qdoc.doc
        with doc.batch():
            for element_id, fields in self.old.items():
                doc.update(self.new[element_id].get("id", element_id), **fields)  # renamed: find it by its new id


class SetLayout(QUndoCommand):
    """Canvas positions of elements outside racks (spec.layout.positions)."""

    def __init__(self, qdoc, positions: dict[str, tuple[float, float] | None], text: str = "Move"):
        super().__init__(text)
        self.qdoc = qdoc
        current = qdoc.doc.spec.layout.get("positions", {})
        self.new = positions
        self.old = {i: (tuple(current[i]) if i in current else None) for i in positions}

    def _apply(self, values) -> None:
        doc = self.qdoc.doc
        layout = copy.deepcopy(doc.spec.layout)
        table = layout.setdefault("positions", {})
        for element_id, pos in values.items():
            if pos is None:
                table.pop(element_id, None)
            else:
                table[element_id] = [float(pos[0]), float(pos[1])]
        if not table:
            layout.pop("positions")
        doc.set_layout(layout)

    def redo(self) -> None:
        self._apply(self.new)

    def undo(self) -> None:
        self._apply(self.old)


class ReplaceDocument(QUndoCommand):
    """Take over a whole new design (a generator run): one undo step brings the old one back."""

    def __init__(self, qdoc, new: Document, text: str = "Generate", identity=None):
        """`identity`: (path, untitled title) the new design takes (a generated one is untitled);
        undo gives the old design its own file back. None: the document keeps its file."""
        super().__init__(text)
        self.qdoc = qdoc
        # The design not shown, as it is (no copy): redo and undo exchange it with the document's.
        # The undo stack restores every later edit before it gets here, so the objects are as they were.
        self.other = (new.spec, new.metadata)
        self.old_identity = qdoc.identity
        self.new_identity = identity

    @property
    def kept_elements(self) -> int:
        """Elements of the design this step keeps for undo or redo (QtDocument bounds their sum)."""
        spec = self.other[0]
        return len(spec.racks) + len(spec.nodes) + len(spec.switches) + len(spec.links)

    def redo(self) -> None:
        if self.new_identity is not None:
            self.qdoc.set_identity(*self.new_identity)
        self.other = self.qdoc.exchange(*self.other)

    def undo(self) -> None:
        if self.new_identity is not None:
            self.new_identity = self.qdoc.identity  # a Save As meanwhile: redo comes back to that file
            self.qdoc.set_identity(*self.old_identity)
        self.other = self.qdoc.exchange(*self.other)


class SetJob(QUndoCommand):
    def __init__(self, qdoc, workload=None, parallelism=None, text: str = "Edit job"):
        super().__init__(text)
        self.qdoc = qdoc
        self.new = (copy.deepcopy(workload), copy.deepcopy(parallelism))
        self.old = (copy.deepcopy(qdoc.doc.spec.workload), copy.deepcopy(qdoc.doc.spec.parallelism))

    def _apply(self, values) -> None:
        workload, parallelism = values
        self.qdoc.doc.replace_job(copy.deepcopy(workload), copy.deepcopy(parallelism))

    def redo(self) -> None:
        self._apply(self.new)

    def undo(self) -> None:
        self._apply(self.old)


def fields_of(element) -> dict:
    return {f.name: getattr(element, f.name) for f in dataclasses.fields(element)}


def rename(qdoc, old: str, new: str) -> None:
    """Rename an element as one undo step, re-pointing links (and rack members) at the new id."""
    doc = qdoc.doc
    stack = qdoc.undo_stack
    stack.beginMacro(f"Rename {old} to {new}")
    stack.push(SetFields(qdoc, {old: {"id": new}}, "Rename"))
    link_changes: dict[str, dict] = {}
    for link in doc.links:
        for side in ("a", "b"):
            device, port = split_endpoint(getattr(link, side))
            if device == old:
                link_changes.setdefault(link.id, {})[side] = new + (f":{port}" if port else "")
    if link_changes:
        stack.push(SetFields(qdoc, link_changes, "Re-point links"))
    members = {e.id: {"rack": new} for e in list(doc.nodes) + list(doc.switches) if e.rack == old}
    if members and doc.find("racks", new) is not None:
        stack.push(SetFields(qdoc, members, "Re-point rack members"))
    stack.endMacro()


class SetOverrides(QUndoCommand):
    """spec.prices or spec.calibration := `value` (a figure of the Parts/Costs panel edited); undo puts
    the old mapping back."""

    def __init__(self, qdoc, section: str, value: dict, text: str):
        super().__init__(text)
        self.qdoc = qdoc
        self.section = section
        self.new = copy.deepcopy(value)
        self.old = copy.deepcopy(getattr(qdoc.doc.spec, section))

    def redo(self) -> None:
        self.qdoc.doc.set_overrides(self.section, copy.deepcopy(self.new))

    def undo(self) -> None:
        self.qdoc.doc.set_overrides(self.section, copy.deepcopy(self.old))
