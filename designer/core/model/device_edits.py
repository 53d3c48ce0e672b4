"""The kept parts of the check (check.CheckParts) followed through servers and switches added, removed
or renamed: the links' ends and the devices' problems name devices by their place in the list of
servers or of switches, and those places move.

The places before and after the edits are matched by id (a repeated id's in order), one array per
kind of device; an end at a device that is gone (removed, or renamed: its cables still
name the old id) is detached, and is parsed again from its text with the rest of the ends the edits
may have touched.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..problems import Problem
from .endpoints import Endpoints
from .link_edits import SERVER, SWITCH, at_index, device_of_path

COLLECTION_OF_KIND = {SERVER: "nodes", SWITCH: "switches"}


def place_map(old_ids: list[str], new_ids: list[str]) -> np.ndarray:
    """Each old place's new place (-1: that id is gone), with one spare entry for an index of -1. The
    ids before the first place that differs, and after the last, stay in order (a few servers added,
    removed or renamed leave the rest so), so only the ids between are looked up."""
    n_old, n_new = len(old_ids), len(new_ids)
    head = _same_run(old_ids, new_ids, min(n_old, n_new))
    tail = _same_run(old_ids[::-1], new_ids[::-1], min(n_old, n_new) - head)
    places = np.full(n_old + 1, -1, np.int64)
    places[:head] = np.arange(head)
    places[n_old - tail:n_old] = np.arange(n_new - tail, n_new)
    middle: dict[str, list[int]] = {}  # id -> its new places, the last first
    for i in range(n_new - tail - 1, head - 1, -1):
        middle.setdefault(new_ids[i], []).append(i)
    # a repeated id's places matched in order (an id repeated before and after, whose elements were not
    # edited, keeps its elements' places; the live check parses again the cables at an id edited)
    places[head:n_old - tail] = [(middle.get(element_id) or [-1]).pop() for element_id in old_ids[head:n_old - tail]]
    return places


def _same_run(a: list, b: list, most: int, block: int = 512) -> int:
    """How many of the first entries (at most `most`) are equal in `a` and `b`: compared a block at a time
    (a list comparison runs in C), then one by one in the block that differs."""
    start = 0
    while start < most and a[start:min(start + block, most)] == b[start:min(start + block, most)]:
        start += block
    end = min(start + block, most)
    return next((i for i in range(start, end) if a[i] != b[i]), end)


def ends_moved(ends: Endpoints, maps: dict[int, np.ndarray]) -> tuple[Endpoints, np.ndarray]:
    """`ends` with each device index moved to its new place (`maps`: kind -> place_map), and the
    positions of the ends whose device is gone (now marked at no device: to be parsed again). An index
    past the old list (an end parsed among the edits, at the new places) counts as gone: it is parsed
    again too."""
    index = ends.index.astype(np.int64)
    moved = index.copy()
    for kind, places in maps.items():
        at = ends.kind == kind
        moved[at] = places[np.minimum(index[at], len(places) - 1)]  # the spare last entry: -1
    gone = (ends.kind != 0) & (moved < 0)
    kind = np.where(gone, 0, ends.kind).astype(ends.kind.dtype)
    return dataclasses.replace(ends, kind=kind, index=np.where(gone, -1, moved).astype(ends.index.dtype)), \
        np.flatnonzero(gone)


def ends_set(ends: Endpoints, positions: list[int], parsed: Endpoints) -> Endpoints:
    """`ends` with the end at each of `positions` replaced by the parse's entry in the same place."""
    if not positions:
        return ends
    fields = {}
    for f in dataclasses.fields(Endpoints):
        column = getattr(ends, f.name).copy()  # the arrays may be the document's own parse: not in place
        column[positions] = getattr(parsed, f.name)
        fields[f.name] = column
    return Endpoints(**fields)


def ends_copied(ends: Endpoints) -> Endpoints:
    """A copy of `ends` that can be written in place (the kept arrays may be a snapshot's parse)."""
    return Endpoints(*(getattr(ends, f.name).copy() for f in dataclasses.fields(Endpoints)))


def end_written(ends: Endpoints, position: int, one: Endpoints) -> None:
    """The end at `position` set, in place, to the parse `one` (of one end): a cable re-pointed."""
    for f in dataclasses.fields(Endpoints):
        getattr(ends, f.name)[position] = getattr(one, f.name)[0]


def ends_set_one(parsed: Endpoints, k: int) -> Endpoints:
    """The k-th end of a parse of several, as a parse of one."""
    return Endpoints(*(getattr(parsed, f.name)[k:k + 1] for f in dataclasses.fields(Endpoints)))


def devices_moved(devices: set[tuple[int, int]], maps: dict[int, np.ndarray]) -> set[tuple[int, int]]:
    """(kind, index) pairs at their new places; those whose device is gone are left out (and those past
    the old list, found among the edits: the ends parsed again name them anew)."""
    out = set()
    for kind, index in devices:
        place = int(maps[kind][min(index, len(maps[kind]) - 1)]) if kind in maps and index >= 0 else index
        if place >= 0 or kind not in maps:
            out.add((kind, place))
    return out


def tail_moved(tail: list[Problem], maps: dict[int, np.ndarray]) -> list[Problem]:
    """The devices' problems with their paths at their devices' new places (a gone device's: left out)."""
    out = []
    for p in tail:
        kind, index = device_of_path(p.path)
        if kind not in maps:
            out.append(p)
            continue
        place = int(maps[kind][min(index, len(maps[kind]) - 1)])
        if place >= 0:
            out.append(at_index(p, COLLECTION_OF_KIND[kind], place))
    return out
