"""The links' check on whole arrays, for the common case of a design whose links are all sound.

`check.link_problems` walks every link in Python (a quarter of a second at 16k GPUs, most of
`designer evaluate` after loading). Here numpy proves, for all links at once, that none of them
has a problem that walk would report: both ends exist, every port is a valid port of its device,
no port is used twice, and every link's kind and speed suit its ends. Then it hands back what
the servers' and switches' part of the check needs (cables per device, NIC ports in use, cables
without a port per server). When anything could be a problem it returns None and the walk runs
as before, so every message, and its order, is the walk's own.
"""
from __future__ import annotations

from collections import defaultdict
from operator import attrgetter

import numpy as np

from .document import Document
from .endpoints import PORT_NIC, PORT_NVL, PORT_P, PORT_PCIE

NETWORK = ("ethernet", "infiniband")
PREFIX_CODE = {"p": PORT_P, "nic": PORT_NIC, "nvl": PORT_NVL, "pcie": PORT_PCIE}


def _codes(*columns: list[str]) -> tuple[dict[str, int], list[np.ndarray]]:
    """Strings as small integers, one numbering for all the columns (equal strings, equal codes),
    so that kinds, fabrics and NIC kinds compare as integers."""
    vocab = {name: i for i, name in enumerate(NETWORK + ("nvlink", "pcie", ""))}
    for column in columns:
        for name in set(column) - vocab.keys():
            vocab[name] = len(vocab)
    return vocab, [np.fromiter(map(vocab.__getitem__, column), np.int16, len(column)) for column in columns]


def links_without_problems(doc: Document):
    """(cables on each device, None, cables without a port per server, server -> its NICs no link names
    (servers with one at least)): device_problems' arguments; or None when some link may have a
    problem (the walk of check.link_problems says which)."""
    links, nodes, switches = doc.links, doc.nodes, doc.switches
    n = len(links)
    if n == 0:
        return None
    node_ids = list(map(attrgetter("id"), nodes))
    switch_ids = list(map(attrgetter("id"), switches))
    if len(set(node_ids) | set(switch_ids)) != len(node_ids) + len(switch_ids):
        return None  # a repeated id: which element an end means is the walk's question
    n_nodes = len(nodes)

    # per device (servers first, then switches): their kinds share one numbering with the links'
    try:
        vocab, (kind, nic_kind, fabric) = _codes(list(map(attrgetter("kind"), links)),
                                                 list(map(attrgetter("nic_kind"), nodes)) + [""] * len(switches),
                                                 [""] * n_nodes + list(map(attrgetter("fabric"), switches)))
    except TypeError:  # a kind that is no string (an edit through the API): the walk says what
        return None
    count = np.fromiter(map(attrgetter("count"), links), np.int64, n)
    bw = np.fromiter(map(attrgetter("bandwidth_gbps"), links), float, n)
    if (count < 1).any():
        return None
    is_switch = np.arange(n_nodes + len(switches)) >= n_nodes
    port_gbps = np.array([0.0] * n_nodes + [float(x.port_gbps) for x in switches])
    radix = np.array([0] * n_nodes + [x.radix for x in switches], dtype=np.int64)
    nic_count = np.array([x.nic_count for x in nodes] + [0] * len(switches), dtype=np.int64)
    gpus = np.array([x.accelerator_count for x in nodes] + [0] * len(switches), dtype=np.int64)

    network = (kind == vocab["ethernet"]) | (kind == vocab["infiniband"])
    nvlink, pcie = kind == vocab["nvlink"], kind == vocab["pcie"]
    sides = []
    for text in (list(map(attrgetter("a"), links)), list(map(attrgetter("b"), links))):
        ends = doc.link_ends.parse(text, node_ids, switch_ids)  # the fabric reuses this parse
        if (ends.kind == 0).any():
            return None  # an end that does not exist
        # 64-bit device numbers: the keys below shift them past 32 bits (the parse's are 32-bit)
        sides.append((np.where(ends.kind == 1, ends.index, n_nodes + ends.index).astype(np.int64), ends))

    (a, _), (b, _) = sides
    if not _kinds_sound(kind, bw, network, a, b, is_switch, nic_kind, fabric, port_gbps):
        return None

    all_ids = node_ids + switch_ids
    cables = np.zeros(len(all_ids), np.int64)
    keys, anonymous = [], defaultdict(int)
    for dev, ends in sides:
        cables += np.bincount(dev, weights=count, minlength=len(all_ids)).astype(np.int64)  # add.at: 10x slower
        server = ~is_switch[dev]
        no_port = ~ends.has_port & server & network
        if no_port.any():
            for i, c in zip(dev[no_port].tolist(), count[no_port].tolist()):
                anonymous[node_ids[i]] += c
        # the port each end names: its prefix and number of ports follow the device and the link kind
        prefix = np.where(~server, PORT_P, np.where(nvlink, PORT_NVL, np.where(pcie, PORT_PCIE, PORT_NIC)))
        limit = np.where(~server, radix[dev], np.where(nvlink | pcie, gpus[dev], nic_count[dev]))
        named = np.flatnonzero(ends.has_port)
        if not named.size:
            continue
        prefix_code = prefix[named]
        # another prefix, or a number written otherwise (p07, non-ASCII digits): the walk says what
        if (ends.port_code[named] != prefix_code).any():
            return None
        first = ends.port_number[named]
        if ((first + count[named]) > limit[named]).any():
            return None  # past the last port
        reps = count[named]
        offset = np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps)
        port_number = np.repeat(first, reps) + offset
        if port_number.size and port_number.max() >= 1 << 32:
            return None
        # one integer per (device, prefix, port): the walk's key (device id, port, prefix)
        keys.append(((np.repeat(dev[named], reps) * 4 + np.repeat(prefix_code, reps)) << 32) + port_number)
    # each server's NICs that no link names, as a table: a set of (server, k, "nic") for every port in
    # use and a look-up per NIC (device_problems' walk) cost ~100 ms at 131k GPUs
    node_nics = nic_count[:n_nodes]
    nic_used = np.zeros((n_nodes, max(int(node_nics.max()) if n_nodes else 0, 1)), dtype=bool)
    if keys:
        all_keys = np.concatenate(keys)
        if _port_used_twice(all_keys, radix, nic_count, gpus):
            return None
        nic = all_keys[((all_keys >> 32) & 3) == PREFIX_CODE["nic"]]
        nic_used[nic >> 34, nic & 0xFFFFFFFF] = True  # the ports are below nic_count (checked above)
    free = ~nic_used & (np.arange(nic_used.shape[1]) < node_nics[:, None])
    free_nics = {node_ids[i]: np.flatnonzero(free[i]).tolist() for i in np.flatnonzero(free.any(axis=1)).tolist()}
    return defaultdict(int, zip(all_ids, cables.tolist())), None, anonymous, free_nics


def _port_used_twice(keys: np.ndarray, radix, nic_count, gpus) -> bool:
    """True when two keys (device * 4 + prefix) << 32 | port are the same. Each device's ports of a
    prefix are numbered below its count of them (checked before), so the keys map to places in one
    table of every port of the design, counted in one pass; a sort (4x slower) when that table would
    be much larger than the keys."""
    capacity = np.stack([radix, nic_count, gpus, gpus], axis=1).ravel()  # by PORT_P, PORT_NIC, PORT_NVL, PORT_PCIE
    total = int(capacity.sum())
    if total > 4 * len(keys) + (1 << 20):
        ordered = np.sort(keys)
        return bool((ordered[1:] == ordered[:-1]).any())
    base = np.cumsum(capacity) - capacity
    place = base[keys >> 32] + (keys & 0xFFFFFFFF)
    return bool(np.bincount(place, minlength=total).max(initial=0) > 1)


def _kinds_sound(kind, bw, network, a, b, is_switch, nic_kind, fabric, port_gbps) -> bool:
    """True when no link's kind or speed is wrong on its ends (check.link_kind_problems finds nothing)."""
    if (a == b).any():
        return False  # a link to itself
    ok = np.ones(len(kind), dtype=bool)
    for dev in (a, b):
        switch = is_switch[dev]
        # a switch end: the link's kind is the switch's fabric, and no faster than its ports
        ok &= ~switch | ((kind == fabric[dev]) & (bw <= port_gbps[dev]))
        # a server end of a network link: the server's NIC kind
        ok &= switch | ~network | (kind == nic_kind[dev])
    ok &= ~(network & ~is_switch[a] & ~is_switch[b])  # two servers joined directly
    return bool(ok.all())


def every_leaf_has_uplinks(doc: Document) -> bool:
    """True when the engine's routes join every compute server to every other (network_reach): then
    check._leaves_without_uplinks has nothing to report (False: it looks)."""
    from .network_reach import server_islands

    return len(server_islands(doc)) < 2
