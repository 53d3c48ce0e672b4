"""The links' part of the check (link_rules.py) redone after cables were added, removed, renamed or
re-pointed, for the devices those cables end at and nothing else.

A link's end problems follow from the links at that end's device (which port each takes, in the
order of the links); a link's kind problems from the link and its two devices; a device's problems
(more cables than ports, NICs left free) from the links at it. So after an edit of some cables, the
rules give new answers only at the devices at their ends (before and after the edit). The rules are
run, as they are, on a small design made of those devices, every link that ends at one of them and
the devices at those links' other ends; their answers at the edited devices replace the kept ones,
and every other kept answer stands (its place in the list moved with the links added or removed).
A dangling end's problem names the device it may have meant: it is redone with the whole design's
names whenever DANGLING is among the devices (a server or switch added, removed or renamed).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..problems import Problem
from .link_rules import device_names, link_problems

SERVER, SWITCH = 1, 2  # an end's device kind, as endpoints.Endpoints numbers them
# the (kind, index) of an end at no device: in a set of devices, every dangling end (its problem names
# the device it may have meant, which any server or switch added, removed or renamed can change)
DANGLING = (0, -1)


def at_index(problem: Problem, collection: str, index: int) -> Problem:
    """`problem` with its path's place in `collection` set to `index` ("spec.links[7].a")."""
    head = f"spec.{collection}["
    old, _, rest = problem.path[len(head):].partition("]")
    if not problem.path.startswith(head) or old == str(index):
        return problem
    return dataclasses.replace(problem, path=f"{head}{index}]{rest}")


def device_of_path(path: str) -> tuple[int, int]:
    """(kind, index) of the device a device problem names ("spec.switches[3]")."""
    kind = SWITCH if path.startswith("spec.switches[") else SERVER
    return kind, int(path.split("[", 1)[1].split("]", 1)[0])


def links_at(ends, devices: set[tuple[int, int]]) -> np.ndarray:
    """Positions of the links with an end at one of `devices` ((kind, index) pairs), in order."""
    a, b = ends
    mask = np.zeros(len(a.kind), bool)
    if DANGLING in devices:
        mask |= (a.kind == 0) | (b.kind == 0)
    for side in (a, b):
        for kind in (SERVER, SWITCH):
            chosen = [i for k, i in devices if k == kind]
            if chosen:
                mask |= (side.kind == kind) & np.isin(side.index, chosen)
    return np.flatnonzero(mask)


def redo_links_at(doc, parts, devices: set[tuple[int, int]],
                  same_id: dict[tuple[int, int], list[tuple[int, int]]] | None = None) -> None:
    """Redo `parts`' link problems (check.CheckParts: per_link, kinds, tail) at `devices`, whose
    links changed (DANGLING among them: every end at no device); `parts.ends` is the links' ends now.
    `same_id`: each server or switch whose id another has -> every device of that id. The rules read a
    repeated id's cables as the last server's of that id, else the last switch's, whichever device
    they end at: the devices of that id are redone together, and the small design holds them all."""
    from .document import ClusterSpec, Document

    same_id = same_id or {}
    devices = devices | {other for device in devices for other in same_id.get(device, ())}
    a, b = parts.ends
    at = links_at(parts.ends, devices)
    positions = at.tolist()
    dangling = bool((a.kind[at] == 0).any() or (b.kind[at] == 0).any())
    # the devices at those links' ends, read as whole columns (a spine's 128 links and their far ends)
    nodes, switches = ({i for k, i in devices if k == kind} for kind in (SERVER, SWITCH))
    for side in (a, b):
        kind, index = side.kind[at], side.index[at]
        nodes.update(index[kind == SERVER].tolist())
        switches.update(index[kind == SWITCH].tolist())
    for kind, chosen in ((SERVER, list(nodes)), (SWITCH, list(switches))):
        for other_kind, other in (o for i in chosen for o in same_id.get((kind, i), ())):
            (nodes if other_kind == SERVER else switches).add(other)
    nodes, switches = sorted(nodes), sorted(switches)
    small = Document(ClusterSpec(nodes=[doc.nodes[i] for i in nodes], switches=[doc.switches[j] for j in switches],
                                 links=[doc.links[i] for i in positions]))
    # a dangling end's did-you-mean reads the whole design's names, not the small design's
    per_link, kinds, tail = link_problems(small, names=device_names([*doc.nodes, *doc.switches]) if dangling else None)
    for k, real in enumerate(positions):
        mine = {"ab".index(p.path[-1]): p for p in parts.per_link.get(real, [])}
        at = [(int(a.kind[real]), int(a.index[real])) in devices, (int(b.kind[real]), int(b.index[real])) in devices]
        for side in (0, 1):
            if at[side]:
                mine.pop(side, None)
        for p in per_link.get(k, []):
            side = "ab".index(p.path[-1])
            if at[side]:
                mine[side] = at_index(p, "links", real)
        _put(parts.per_link, real, [mine[side] for side in sorted(mine)])
        _put(parts.kinds, real, [at_index(p, "links", real) for p in kinds.get(k, [])])
    real_of = {SERVER: nodes, SWITCH: switches}
    kept = [p for p in parts.tail if device_of_path(p.path) not in devices]
    for p in tail:
        kind, k = device_of_path(p.path)
        if (kind, real_of[kind][k]) in devices:
            kept.append(at_index(p, "switches" if kind == SWITCH else "nodes", real_of[kind][k]))
    kept.sort(key=lambda p: (0, device_of_path(p.path)[1]) if p.path.startswith("spec.switches[")
              else (1, device_of_path(p.path)[1]))
    parts.tail = kept


def _put(table: dict[int, list[Problem]], position: int, problems: list[Problem]) -> None:
    if problems:
        table[position] = problems
    else:
        table.pop(position, None)


def moved_links(table: dict[int, list[Problem]], position: int, step: int) -> dict[int, list[Problem]]:
    """`table` (link position -> its problems) after a link was put at `position` (step 1) or the one
    there removed (step -1): the entries after it move, and their paths say their new places."""
    out = {}
    for i, problems in table.items():
        if step < 0 and i == position:
            continue
        j = i + step if (i >= position if step > 0 else i > position) else i
        out[j] = problems if j == i else [at_index(p, "links", j) for p in problems]
    return out
