"""The network's islands (check.network_islands) followed through servers added and removed with
their cables, as the live check sees a server deleted and the delete undone.

Finding the islands again reads every link's ends and every switch (~20 ms at 131k GPUs). A server
and its cables added or removed leave the routes among the switches as they were whenever every
switch that had a server's cable still has one (and none that had none gains one): only the
servers' part of the graph changes. A server removed whose leaves reach each other without it
(`SwitchReach.label`: the components of the switches and pods alone) splits nothing: it leaves its
island. A server added whose leaves reach each other so joins the island of their component, or no
island when it is no compute server. Anything else (a server that joined two parts of the network,
or one that starts an island of its own) gets the islands found again.
"""
from __future__ import annotations

import bisect
import dataclasses
from dataclasses import dataclass

import numpy as np

from .document import Document
from .network_reach import Island, NetworkRoutes, nic_cables, on_trays, trays

# servers added or removed in one edit beyond which the islands are found again (each reads the ends once)
MOST_SERVERS = 16


@dataclass(eq=False, repr=False)
class SwitchReach:
    """The routes among the switches of one shape of the network, and which island each reaches."""
    label: np.ndarray  # per switch: its component over the switches and pods alone
    is_leaf: np.ndarray  # per switch: a server's cable ends on it
    island_of: dict[int, Island]  # component -> the island of the compute servers it reaches

    @classmethod
    def of(cls, doc: Document, ends, network: np.ndarray, islands: list[Island], n_servers: int) -> "SwitchReach":
        """From the links' `ends` and `network` column and the `islands` (servers by place) they make,
        of `n_servers` servers; `doc`'s switches (the same as theirs)."""
        a, b = ends
        routes = NetworkRoutes(doc, a, b, network)
        label = routes.switch_components()
        island_at = np.full(n_servers, -1, np.int64)
        for k, island in enumerate(islands):
            island_at[island.servers] = k
        islands_of_cables = island_at[routes.node_end]
        mine = islands_of_cables >= 0
        # a component reaches one island at most (what reaches each other is one island): its first cable's
        reached, first = np.unique(label[routes.leaf_end[mine]], return_index=True)
        island_of = {c: islands[k] for c, k in zip(reached.tolist(), islands_of_cables[mine][first].tolist())}
        return cls(label, routes.is_leaf, island_of)


def server_leaves(ends, network: np.ndarray, tray: np.ndarray, server: int) -> set[int]:
    """The switches (by place) that the server at place `server` has a network cable to."""
    a, b = ends
    at = np.flatnonzero(((a.kind == 1) & (a.index == server)) | ((b.kind == 1) & (b.index == server)))
    sub = [dataclasses.replace(side, **{f.name: getattr(side, f.name)[at] for f in dataclasses.fields(side)})
           for side in (a, b)]
    _, _, leaves = nic_cables(*sub, network[at] & ~on_trays(*sub, tray))
    return set(leaves.tolist())


def islands_followed(doc: Document, islands: list[Island], reach: SwitchReach, server_map: np.ndarray,
                     ends_before, network_before: np.ndarray, ends, network: np.ndarray) -> list[Island] | None:
    """The islands after servers were added and removed with their cables and nothing else of the
    network changed (the caller's word), or None when they are to be found again. `server_map`: each
    old place's new place, -1 for a server gone (device_edits.place_map); the ends and network columns
    before and after. `reach` is updated to the islands returned."""
    n_old, n_new = len(server_map) - 1, len(doc.nodes)
    moved = server_map[:n_old]
    removed = np.flatnonzero(moved < 0).tolist()
    taken = np.zeros(n_new, dtype=bool)
    taken[moved[moved >= 0]] = True
    added = np.flatnonzero(~taken).tolist()
    if len(removed) + len(added) > MOST_SERVERS or not doc.switches or sum(len(i.servers) for i in islands) < 2:
        return None
    tray = trays(doc)
    _, _, leaf_end = nic_cables(*ends, network & ~on_trays(*ends, tray))
    is_leaf = np.zeros(len(tray), dtype=bool)
    is_leaf[leaf_end] = True
    if not np.array_equal(is_leaf, reach.is_leaf):
        return None  # a switch gained its first server or lost its last: the routes among switches moved
    label = reach.label
    for server in removed:
        if len({int(label[s]) for s in server_leaves(ends_before, network_before, tray, server)}) > 1:
            return None  # it may have joined parts of the network that nothing else joins
    servers = {}
    for island in islands:
        mine = moved[np.asarray(island.servers, np.int64)]
        mine = mine[mine >= 0]
        servers[id(island)] = (mine if np.all(np.diff(mine) > 0) else np.sort(mine)).tolist()
    for server in added:
        reached = {int(label[s]) for s in server_leaves(ends, network, tray, server)}
        node = doc.nodes[server]
        try:
            compute = node.role == "compute" and node.accelerator_count > 0
        except TypeError:
            return None
        if len(reached) > 1 or (compute and not reached):
            return None  # it joins parts of the network, or starts an island of its own
        if compute:
            island = reach.island_of.get(reached.pop())
            if island is None:
                return None  # its switches reach only servers without GPUs: an island of its own
            bisect.insort(servers[id(island)], server)
    if any(not servers[id(island)] for island in islands) or sum(map(len, servers.values())) < 2:
        return None  # an island gone, or too few servers for any
    followed = {id(island): dataclasses.replace(island, servers=np.asarray(servers[id(island)], np.int64))
                for island in islands}
    reach.island_of = {c: followed[id(island)] for c, island in reach.island_of.items()}
    return sorted(followed.values(), key=lambda island: (-len(island.servers), island.servers[0]))
