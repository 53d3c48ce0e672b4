"""Edits made through the document's edit API as the window's undo commands make them: a list of
steps applied in one batch (one undo step), returning the steps that undo it. Used by the tests of
the live check and by benchmarks/bench_check_edits.py."""
from __future__ import annotations


def apply_steps(doc, steps: list[tuple]) -> list[tuple]:
    """Apply ("add", element, index) / ("remove", id) / ("update", id, fields) in one batch; returns
    the steps that undo them (in the order they must run). Removing an id already gone does nothing."""
    undo = []
    with doc.batch():
        for step in steps:
            if step[0] == "add":
                doc.add(step[1], step[2])
                undo.append(("remove", step[1].id))
            elif step[0] == "remove":
                if doc.get(step[1]) is None:
                    continue
                _, position, element = doc.remove(step[1])
                undo.append(("add", element, position))
            else:
                old = doc.update(step[1], **step[2])
                undo.append(("update", step[2].get("id", step[1]), old))
    return undo[::-1]
