"""Which servers reach which over the network, by the rules the engine routes with.

The engine (engine/fabric.py) routes traffic between two leaf switches over the up-links of
both, and between two pods (leaves and spines joined by cables) over the pods' up-links to the
core switches. `switch_links` says which cable is which; the engine builds its fabric from it and
the design check (check.py) finds, from the same function, the servers that no such route joins,
so that what `designer validate` accepts the engine can cost, and what it refuses validate names.
"""
from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter

import numpy as np

from .document import Document

TIER_RANK = {"leaf": 0, "spine": 1, "core": 2}
NETWORK = ("ethernet", "infiniband")


@dataclass(frozen=True)
class SwitchLinks:
    """The switch-to-switch network cables of a design (NVLink trays left out), as the engine routes."""
    links: np.ndarray  # link index of each cable
    lower: np.ndarray  # switch index of its lower end (the lower tier; a leaf with servers below one without)
    upper: np.ndarray
    uplink: np.ndarray  # bool per cable: an up-link of `lower`, towards the other leaves
    upper_uplink: np.ndarray  # bool per cable: also an up-link of `upper` (two leaves cabled to each other)
    pod: np.ndarray  # per switch: its pod (leaves and spines one cable path joins), -1 for cores and trays
    to_core: np.ndarray  # bool per cable: an up-link of pod `pod[lower]` to a core switch


def switch_links(tier: np.ndarray, is_leaf: np.ndarray, tray: np.ndarray, links: np.ndarray,
                 a_idx: np.ndarray, b_idx: np.ndarray) -> SwitchLinks:
    """`tier`: TIER_RANK of each switch; `is_leaf`: the switch has a server's NIC cable; `tray`: an
    NVLink switch tray; `links`, `a_idx`, `b_idx`: the switch-to-switch cables and their ends."""
    ai, bi = a_idx, b_idx
    lower = np.where((tier[ai] < tier[bi]) | ((tier[ai] == tier[bi]) & (ai < bi)), ai, bi)
    upper = np.where(lower == ai, bi, ai)
    uplink = (is_leaf[lower] & ~is_leaf[upper]) | ((tier[lower] < tier[upper]) & (tier[upper] < 2))
    # two switches with servers, of one tier, cabled to each other (a lab's two leaves, a leaf ring):
    # the cable is the way out of each that has no up-link otherwise
    n_sw = len(tier)
    has_up = np.zeros(n_sw, dtype=bool)
    has_up[lower[uplink]] = True
    peers = is_leaf[lower] & is_leaf[upper] & (tier[lower] == tier[upper])
    upper_uplink = peers & ~has_up[upper]
    uplink = uplink | (peers & ~has_up[lower])
    # pods: connected components of leaves and spines (label propagation)
    label = np.where((tier < 2) & ~tray, np.arange(n_sw), -1)  # a tray is in no pod
    inside = (tier[lower] < 2) & (tier[upper] < 2)
    lu, uu = lower[inside], upper[inside]
    for _ in range(64):
        before = label.copy()
        m = np.minimum(label[lu], label[uu])
        np.minimum.at(label, lu, m)
        np.minimum.at(label, uu, m)
        if np.array_equal(before, label):
            break
    _, pod_of = np.unique(label[label >= 0], return_inverse=True)
    pod = np.full(n_sw, -1, dtype=np.int32)
    pod[label >= 0] = pod_of.reshape(-1)
    to_core = (tier[upper] == 2) & (pod[lower] >= 0)
    return SwitchLinks(links, lower, upper, uplink, upper_uplink, pod, to_core)


@dataclass(frozen=True)
class Island:
    """Compute servers the engine's routes join, and why they reach no others."""
    servers: list[str]  # file order
    bare_leaves: list[int]  # its switches with servers that have no up-links (switch indices)
    pods_without_core: list[int]  # a switch of each of its pods that has no cable to a core switch, while
    # servers of other pods wait beyond the core tier
    core: list[int]  # the core switches it reaches, while another island reaches other ones


def server_islands(doc: Document) -> list[Island]:
    """The groups of compute servers (servers with GPUs and role compute) that the engine's routes
    join: one group when every server reaches every other; the largest first. A server reaches
    another on a leaf they share (a rail-only fabric is one group); beyond it through its leaf's
    up-links to the leaf's pod; beyond the pod through the pod's cables to the core switches (and
    cables between core switches)."""
    links, nodes, switches = doc.links, doc.nodes, doc.switches
    compute = [i for i, n in enumerate(nodes) if n.role == "compute" and n.accelerator_count > 0]
    if len(compute) < 2 or not switches:  # (servers with no switch at all: the NIC check names them)
        return [Island([nodes[i].id for i in compute], [], [], [])] if compute else []
    node_ids, switch_ids = list(map(attrgetter("id"), nodes)), list(map(attrgetter("id"), switches))
    n_nodes, n_sw = len(node_ids), len(switch_ids)
    a, b = doc.link_ends.sides(doc)
    network = np.fromiter(map(NETWORK.__contains__, map(attrgetter("kind"), links)), bool, len(links))
    tray = np.fromiter((s.fabric == "nvlink" for s in switches), bool, n_sw)
    tier = np.fromiter((TIER_RANK.get(s.tier, 0) for s in switches), np.int64, n_sw)
    a_sw, b_sw = a.kind == 2, b.kind == 2
    on_tray = (a_sw & tray[np.where(a_sw, a.index, 0)]) | (b_sw & tray[np.where(b_sw, b.index, 0)])
    network &= ~on_tray
    nic = network & (((a.kind == 1) & b_sw) | (a_sw & (b.kind == 1)))
    node_end = np.where(a.kind == 1, a.index, b.index)[nic].astype(np.int64)
    leaf_end = np.where(a_sw, a.index, b.index)[nic].astype(np.int64)
    is_leaf = np.zeros(n_sw, dtype=bool)
    is_leaf[leaf_end] = True
    ss = np.flatnonzero(network & a_sw & b_sw & (a.index != b.index))
    routes = switch_links(tier, is_leaf, tray, ss, a.index[ss].astype(np.int64), b.index[ss].astype(np.int64))
    has_up = np.zeros(n_sw, dtype=bool)
    has_up[routes.lower[routes.uplink]] = True
    has_up[routes.upper[routes.upper_uplink]] = True
    n_pods = int(routes.pod.max(initial=-1)) + 1
    pod_core = np.zeros(n_pods, dtype=bool)
    pod_core[routes.pod[routes.lower[routes.to_core]]] = True

    # components over servers, switches and pods: a server joins its leaves; a leaf with up-links its
    # pod; a pod with core cables the cores it reaches; cores joined by cables join
    pod_node = n_nodes + n_sw
    up_leaves = np.flatnonzero(has_up & (routes.pod >= 0))
    core_core = (tier[routes.lower] == 2) & (tier[routes.upper] == 2)
    u = np.concatenate([node_end, n_nodes + up_leaves, pod_node + routes.pod[routes.lower[routes.to_core]],
                        n_nodes + routes.lower[core_core]])
    v = np.concatenate([n_nodes + leaf_end, pod_node + routes.pod[up_leaves], n_nodes + routes.upper[routes.to_core],
                        n_nodes + routes.upper[core_core]])
    label = components(n_nodes + n_sw + n_pods, u.astype(np.int64), v.astype(np.int64))
    root = label.tolist().__getitem__

    groups: dict[int, list[int]] = {}
    for i in compute:
        groups.setdefault(root(i), []).append(i)
    if len(groups) == 1:
        return [Island([node_ids[i] for i in compute], [], [], [])]
    leaves_of: dict[int, list[int]] = {}
    for leaf in np.unique(leaf_end).tolist():
        leaves_of.setdefault(root(n_nodes + leaf), []).append(leaf)
    routed = {key: sorted({int(routes.pod[s]) for s in leaves_of.get(key, []) if has_up[s] and routes.pod[s] >= 0})
              for key in groups}
    cores = {key: sorted(s for s in range(n_sw) if tier[s] == 2 and root(n_nodes + s) == key) for key in groups}
    several_pods = sum(len(p) for p in routed.values()) > 1
    several_cores = sum(bool(c) for c in cores.values()) > 1
    islands = []
    for key, members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[1][0])):
        bare = [s for s in leaves_of.get(key, []) if not has_up[s]]
        no_core = [_top(routes.pod == p, tier) for p in routed[key] if not pod_core[p]] if several_pods else []
        islands.append(Island([node_ids[i] for i in members], bare, no_core, cores[key] if several_cores else []))
    return islands


def _top(members: np.ndarray, tier: np.ndarray) -> int:
    """The first switch of the highest tier among `members` (a pod's spine rather than a leaf)."""
    inside = np.flatnonzero(members)
    return int(inside[np.argmax(tier[inside])])


def components(n: int, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Per vertex 0..n-1, the smallest vertex of its connected component (edges u[i]-v[i])."""
    label = np.arange(n)
    while True:
        m = np.minimum(label[u], label[v])
        before = label.copy()
        np.minimum.at(label, u, m)
        np.minimum.at(label, v, m)
        label = label[label]  # jump: a chain of labels shortens each round
        if np.array_equal(before, label):
            return label
