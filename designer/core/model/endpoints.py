"""Link endpoints ("leaf3:p17", "node0:nic2") as integer arrays, parsed once per design.

The check and the engine's fabric both need every link's two ends as device indices; a cold
`designer evaluate` parsed the same 300k strings twice (a large share of its time). The parse
is vectorised with numpy's string functions and remembered for the last few designs: the memo
is keyed on the endpoint strings themselves (list equality, which compares the very same string
objects by identity first), so an edit made in place, outside the document's change log, is
never served a stale parse.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MEMO_ENTRIES = 4


@dataclass(frozen=True)
class Endpoints:
    kind: np.ndarray  # 0: no such device, 1: a server, 2: a switch
    index: np.ndarray  # its index among the servers or among the switches (-1: none)
    nic: np.ndarray  # the NIC number of a server's "nicK" port, else -1
    has_port: np.ndarray  # the endpoint names a port ("device:port")
    port: np.ndarray  # the port's name ("" without one)


_memo: list[tuple[list[str], list[str], list[str], Endpoints]] = []


def parse_endpoints(endpoints: list[str], node_ids: list[str], switch_ids: list[str]) -> Endpoints:
    """Every endpoint as arrays (a repeated id means the first element of that id in servers,
    then switches, sorted by name: the check reports repeated ids)."""
    for i, (ends, nodes, switches, parsed) in enumerate(_memo):
        if ends == endpoints and nodes == node_ids and switches == switch_ids:
            return parsed
    parsed = _parse(endpoints, node_ids, switch_ids)
    if len(_memo) >= MEMO_ENTRIES:
        _memo.pop(0)
    _memo.append((list(endpoints), list(node_ids), list(switch_ids), parsed))
    return parsed


def _parse(endpoints: list[str], node_ids: list[str], switch_ids: list[str]) -> Endpoints:
    n = len(endpoints)
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Endpoints(empty.astype(np.int8), empty, empty, empty.astype(bool), np.array([], dtype=str))
    text = np.array(endpoints)
    dev, sep, port = np.strings.partition(text, ":")
    port = np.ascontiguousarray(port)
    names = np.array(node_ids + switch_ids) if (node_ids or switch_ids) else np.array([""])
    order = np.argsort(names)
    sorted_names = names[order]
    pos = np.searchsorted(sorted_names, dev)
    pos = np.minimum(pos, len(sorted_names) - 1)
    found = sorted_names[pos] == dev
    which = np.where(found, order[pos], -1)
    kind = np.where(~found, 0, np.where(which < len(node_ids), 1, 2)).astype(np.int8)
    index = np.where(kind == 1, which, np.where(kind == 2, which - len(node_ids), -1)).astype(np.int64)
    number = np.strings.slice(port, 3, None)
    has_port = sep == ":"
    ok = (kind == 1) & has_port & np.strings.startswith(port, "nic") & np.strings.isdigit(number)
    nic = np.full(n, -1, dtype=np.int64)
    if ok.any():
        nic[ok] = number[ok].astype(np.int64)
    for array in (kind, index, nic, has_port, port):
        array.flags.writeable = False  # shared by every caller of the memo
    return Endpoints(kind, index, nic, has_port, port)
