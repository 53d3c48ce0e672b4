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

import numpy as np

from .document import Document
from .endpoints import parse_endpoints

NETWORK = ("ethernet", "infiniband")
PREFIX_CODE = {"p": 0, "nic": 1, "nvl": 2, "pcie": 3}


def links_without_problems(doc: Document):
    """(cables on each device, None, cables without a port per server, server -> its NICs no link names
    (servers with one at least)): device_problems' arguments; or None when some link may have a
    problem (the walk of check.link_problems says which)."""
    links, nodes, switches = doc.links, doc.nodes, doc.switches
    n = len(links)
    if n == 0:
        return None
    node_ids = [x.id for x in nodes]
    switch_ids = [x.id for x in switches]
    if len(set(node_ids) | set(switch_ids)) != len(node_ids) + len(switch_ids):
        return None  # a repeated id: which element an end means is the walk's question
    n_nodes = len(nodes)

    kind = np.array([x.kind for x in links])
    count = np.fromiter((x.count for x in links), np.int64, n)
    bw = np.fromiter((x.bandwidth_gbps for x in links), float, n)
    if (count < 1).any():
        return None
    # per device (servers first, then switches)
    is_switch = np.arange(n_nodes + len(switches)) >= n_nodes
    nic_kind = np.array([x.nic_kind for x in nodes] + [""] * len(switches))
    fabric = np.array([""] * n_nodes + [x.fabric for x in switches])
    port_gbps = np.array([0.0] * n_nodes + [float(x.port_gbps) for x in switches])
    radix = np.array([0] * n_nodes + [x.radix for x in switches], dtype=np.int64)
    nic_count = np.array([x.nic_count for x in nodes] + [0] * len(switches), dtype=np.int64)
    gpus = np.array([x.accelerator_count for x in nodes] + [0] * len(switches), dtype=np.int64)

    network = np.isin(kind, NETWORK)
    sides = []
    for text in ([x.a for x in links], [x.b for x in links]):
        ends = parse_endpoints(text, node_ids, switch_ids)  # the fabric reuses this parse
        if (ends.kind == 0).any():
            return None  # an end that does not exist
        port = ends.port
        if port.dtype.itemsize and port.view(np.uint32).max() >= 128:
            return None  # not ASCII: the walk's int() reads other scripts' digits too, so it decides those
        sides.append((np.where(ends.kind == 1, ends.index, n_nodes + ends.index), ends.has_port, port))

    (a, _, _), (b, _, _) = sides
    if not _kinds_sound(kind, bw, network, a, b, is_switch, nic_kind, fabric, port_gbps):
        return None

    all_ids = node_ids + switch_ids
    cables = np.zeros(len(all_ids), np.int64)
    keys, anonymous = [], defaultdict(int)
    for dev, has_port, port in sides:
        np.add.at(cables, dev, count)
        server = ~is_switch[dev]
        no_port = ~has_port & server & network
        if no_port.any():
            for i, c in zip(dev[no_port].tolist(), count[no_port].tolist()):
                anonymous[node_ids[i]] += c
        # the port each end names: its prefix and number of ports follow the device and the link kind
        prefix = np.where(~server, "p", np.where(kind == "nvlink", "nvl", np.where(kind == "pcie", "pcie", "nic")))
        limit = np.where(~server, radix[dev], np.where(np.isin(kind, ("nvlink", "pcie")), gpus[dev], nic_count[dev]))
        named = np.flatnonzero(has_port)
        if not named.size:
            continue
        p_text, p_prefix = port[named], prefix[named]
        if not np.strings.startswith(p_text, p_prefix).all():
            return None
        digits = np.strings.slice(p_text, np.strings.str_len(p_prefix), None)
        width = np.strings.str_len(digits)
        if not (np.strings.isdigit(digits).all() and ((width == 1) | ~np.strings.startswith(digits, "0")).all()):
            return None
        first = digits.astype(np.int64)
        if ((first + count[named]) > limit[named]).any():
            return None  # past the last port
        prefix_code = np.select([p_prefix == "p", p_prefix == "nic", p_prefix == "nvl"],
                                [PREFIX_CODE["p"], PREFIX_CODE["nic"], PREFIX_CODE["nvl"]], PREFIX_CODE["pcie"])
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
        ordered = np.sort(all_keys)
        if (ordered[1:] == ordered[:-1]).any():
            return None  # a port used twice
        nic = all_keys[((all_keys >> 32) & 3) == PREFIX_CODE["nic"]]
        nic_used[nic >> 34, nic & 0xFFFFFFFF] = True  # the ports are below nic_count (checked above)
    free = ~nic_used & (np.arange(nic_used.shape[1]) < node_nics[:, None])
    free_nics = {node_ids[i]: np.flatnonzero(free[i]).tolist() for i in np.flatnonzero(free.any(axis=1)).tolist()}
    return defaultdict(int, zip(all_ids, cables.tolist())), None, anonymous, free_nics


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
    """True when every switch with servers on its network cables also has a network cable to
    another switch: then check._leaves_without_uplinks has nothing to report (False: it looks)."""
    links, node_ids, switch_ids = doc.links, [x.id for x in doc.nodes], [x.id for x in doc.switches]
    if not links or len(set(node_ids) | set(switch_ids)) != len(node_ids) + len(switch_ids):
        return False
    network = np.isin(np.array([x.kind for x in links]), NETWORK)
    a = parse_endpoints([x.a for x in links], node_ids, switch_ids)  # the links' check parsed these
    b = parse_endpoints([x.b for x in links], node_ids, switch_ids)
    has_servers = np.zeros(len(switch_ids), dtype=bool)
    has_peer = np.zeros(len(switch_ids), dtype=bool)
    for me, other in ((a, b), (b, a)):
        mine = network & (me.kind == 2)
        has_peer[me.index[mine & (other.kind == 2) & (me.index != other.index)]] = True
        has_servers[me.index[mine & (other.kind == 1)]] = True
    return not (has_servers & ~has_peer).any()
