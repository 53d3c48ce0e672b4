"""Where the groups of one parallel dimension sit on the fabric: their servers, NVLink domains and tiers.

A dimension's groups (all its TP groups, say) are costed together, vectorised over groups; the shape
says how many servers each group spans, whether every server holds the same number of its GPUs, and
the highest network tier its traffic crosses, and it sorts the groups into classes that cost alike.
"""
from __future__ import annotations

import numpy as np

from .fabric import Fabric


class GroupShape:
    """How the groups of one dimension sit on the fabric, vectorised over groups."""

    members: np.ndarray  # (G, n) GPU indices
    by_node: np.ndarray | None  # (G, N, g) members sorted by node, when every node holds g of them
    n_nodes: np.ndarray  # (G,)
    per_node: int  # g, or 0 when groups are uneven
    max_tier: np.ndarray  # (G,) 0 inside a server, 1 same leaf, 2 same pod, 3 across pods
    classes: dict[tuple, np.ndarray]  # class key -> group indices
    spans_servers: bool  # some group spans more than one server (NVLink domain): it uses the NICs

    __slots__ = ("members", "by_node", "n_nodes", "per_node", "max_tier", "classes", "spans_servers")

    def __init__(self, members: np.ndarray, by_node: np.ndarray | None, n_nodes: np.ndarray, per_node: int,
                 max_tier: np.ndarray, classes: dict[tuple, np.ndarray] | None = None,
                 spans_servers: bool = False) -> None:
        self.members = members
        self.by_node = by_node
        self.n_nodes = n_nodes
        self.per_node = per_node
        self.max_tier = max_tier
        self.classes = {} if classes is None else classes
        self.spans_servers = spans_servers


def group_shape(fabric: Fabric, members: np.ndarray) -> GroupShape:
    G, n = members.shape
    if n == 1 and G:  # a dimension of size 1 (CP 1, say): every group one GPU, one class, nothing to look up
        shape = GroupShape(members, members.reshape(G, 1, 1), np.ones(G, np.int64), 1, np.zeros(G, np.int64))
        shape.classes[(1, 1, 0)] = np.arange(G)
        return shape
    # GPU indices grow with the server index, so sorting members sorts them by server too
    if n == 2:  # pairs (the pipeline's neighbours): two elementwise passes, not a sort per row
        first, second = members[:, :1], members[:, 1:]
        sorted_members = np.concatenate((np.minimum(first, second), np.maximum(first, second)), axis=1)
    else:
        sorted_members = np.sort(members, axis=1) if n > 1 else members
    # (take: indexing by the placements' 32-bit ranks converts them first, at twice the cost)
    sorted_nodes = fabric.gpu_domain.take(sorted_members)  # scale-up islands: NVLink domains
    N = _servers_of_every_group(sorted_nodes)
    if N is None:
        return _uneven_shape(fabric, members, sorted_members, sorted_nodes)
    # every group on N servers
    n_nodes = np.full(G, N, dtype=np.int64)
    by_node, per_node = None, 0
    if n % N == 0:
        g = n // N
        candidate = sorted_members.reshape(G, N, g)
        # one server per group, or one GPU per server: every server holds g of each group's GPUs
        cnodes = sorted_nodes.reshape(G, N, g)
        if N == 1 or g == 1 or (cnodes == cnodes[:, :, :1]).all():
            by_node, per_node = candidate, g
    spans = N > 1
    # every group inside one server: no NIC, leaf or pod to look at
    max_tier = _network_tier(fabric, members) if spans else np.zeros(G, dtype=np.int64)
    shape = GroupShape(members, by_node, n_nodes, per_node, max_tier, spans_servers=spans)
    # the classes by tier alone (the tiers present, in order, from their counts)
    counts = np.bincount(max_tier, minlength=4).tolist() if spans else [G]
    if G in counts:  # one class (the usual dimension of a regular layout)
        shape.classes[(N, per_node, counts.index(G))] = np.arange(G)
    else:  # each tier's groups in order: runs of the groups sorted by tier, stably (a radix sort of bytes)
        order = np.argsort(max_tier, kind="stable")
        start = 0
        for tier, count in enumerate(counts):
            if count:
                shape.classes[(N, per_node, tier)] = order[start:start + count]
                start += count
    return shape


def _servers_of_every_group(sorted_nodes: np.ndarray) -> int | None:
    """The servers each group spans when every group spans as many, else None: one look at all
    of them for a group per server or a server per GPU (a regular layout's dimensions), counted
    per group otherwise. `sorted_nodes`: each group's servers, in order."""
    G, n = sorted_nodes.shape
    if not G:
        return None
    step = sorted_nodes[:, 1:] != sorted_nodes[:, :-1]
    steps = np.count_nonzero(step)
    if not steps:
        return 1
    if steps == step.size:
        return n
    # (a sum of the booleans: count_nonzero along an axis is that sum behind a Python wrapper, 3x the time)
    counts = step.sum(axis=1, dtype=np.intp)
    return int(counts[0]) + 1 if (counts == counts[0]).all() else None


def _uneven_shape(fabric: Fabric, members: np.ndarray, sorted_members: np.ndarray,
                  sorted_nodes: np.ndarray) -> GroupShape:
    """The shape of groups that span different numbers of servers (or of no group)."""
    G, n = members.shape
    n_nodes = (sorted_nodes[:, 1:] != sorted_nodes[:, :-1]).sum(axis=1, dtype=np.intp) + 1
    multi = n_nodes > 1
    spans = bool(multi.any())
    max_tier = np.where(~multi, 0, _network_tier(fabric, members)) if spans else np.zeros(G, dtype=np.int64)
    shape = GroupShape(members, None, n_nodes, 0, max_tier, spans_servers=spans)
    keys = n_nodes.astype(np.int64) * 4 + max_tier
    # the keys present, in order, from their counts (np.unique imports numpy.ma: see flows._leaves_of_nics)
    for key in np.bincount(keys).nonzero()[0].tolist():
        shape.classes[(key // 4, 0, key % 4)] = (keys == key).nonzero()[0]
    return shape


def _network_tier(fabric: Fabric, members: np.ndarray) -> np.ndarray:
    """Per group: 1 when its GPUs' NICs share a leaf, 2 a pod, 3 else (8-bit)."""
    ends = gpu_leaves_and_pods(fabric).take(members, axis=1)  # (2, G, n): each member's leaf, its pod
    # (rows of two, the pipeline's pairs, compared as one elementwise pass: numpy runs a reduction along
    # them as a loop per row, 15 times slower)
    alike = ends[:, :, 0] == ends[:, :, 1] if ends.shape[2] == 2 else (ends == ends[:, :, :1]).all(axis=2)
    # GPUs under one leaf are in one pod: 3, less one for one pod, less one more for one leaf
    return 3 - alike.sum(axis=0, dtype=np.int8)


def gpu_leaves_and_pods(fabric: Fabric) -> np.ndarray:
    """(2, GPUs): per GPU, the leaf its NIC hangs from and that leaf's pod (-1: none), kept with the
    fabric while its NICs, leaves and pods are the same arrays (every dimension of every plan reads them)."""
    def make():
        # -1 (no NIC, no leaf) indexes the last entry: a -1 put after each table keeps it -1
        leaf_of = np.append(fabric.nic_leaf.astype(np.int64, copy=False), -1)
        pod_of = np.append(fabric.switch_pod.astype(np.int64, copy=False), -1)
        gpu_leaf = leaf_of[fabric.gpu_nic]
        # 32-bit, as switch and pod indices fit: half the memory of 64-bit tables (1 MB less at 131k GPUs)
        return np.stack([gpu_leaf, pod_of[gpu_leaf]]).astype(np.int32)
    return fabric.remembered("gpu_leaves_and_pods", (fabric.gpu_nic, fabric.nic_leaf, fabric.switch_pod), make)
