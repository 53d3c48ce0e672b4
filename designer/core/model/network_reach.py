"""Which servers reach which over the network, by the rules the engine routes with.

The engine (engine/fabric.py) routes traffic between two leaf switches over the up-links of
both, and between two pods (leaves and spines joined by cables) over the pods' up-links to the
core switches. `switch_links` says which cable is which; the engine builds its fabric from it and
the design check (check.py) finds, from the same function, the servers that no such route joins,
so that what `designer validate` accepts the engine can cost, and what it refuses validate names.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter, eq

import numpy as np

from .document import Document
from .link_columns import NETWORK, LinkColumns
from .switch_links import TIER_RANK, SwitchLinks, switch_links  # noqa: F401 (the engine's fabric reads them here)


@dataclass(eq=False, repr=False, init=False)  # its __init__ written: dataclass would compile one at start
class Island:
    """Compute servers the engine's routes join, and why they reach no others."""
    servers: list[str] | np.ndarray  # file order (by place: an int64 array, 8 bytes a server, not an int object)
    bare_leaves: list[int]  # its switches with servers that have no up-links (switch indices)
    pods_without_core: list[int]  # a switch of each of its pods that has no cable to a core switch, while
    # servers of other pods wait beyond the core tier
    core: list[int]  # the core switches it reaches, while another island reaches other ones
    down: tuple[str, ...] = ()  # (operational islands) the elements marked down that cut it off

    def __init__(self, servers: list[str] | np.ndarray, bare_leaves: list[int], pods_without_core: list[int],
                 core: list[int], down: tuple[str, ...] = ()) -> None:
        self.servers = servers
        self.bare_leaves = bare_leaves
        self.pods_without_core = pods_without_core
        self.core = core
        self.down = down


def server_islands(doc: Document, operational: bool = False, ends=None,
                   columns: LinkColumns | None = None, positions: bool = False) -> list[Island]:
    """The groups of compute servers (servers with GPUs and role compute) that the engine's routes
    join: one group when every server reaches every other; the largest first. A server reaches
    another on a leaf they share (a rail-only fabric is one group); beyond it through its leaf's
    up-links to the leaf's pod; beyond the pod through the pod's cables to the core switches (and
    cables between core switches). `operational`: as the design runs now, the servers marked down
    left out and the cables marked down (or ending on a switch marked down) carrying nothing; the
    cables keep the roles the whole design gives them, as in the engine's fabric. `ends`: the links'
    ends as `doc.link_ends.sides(doc)` gives them, and `columns` the links' kinds, counts and states
    (link_columns.py), when the caller has them. `positions`: the islands' servers by their places in
    the list of servers, not by id (a server renamed leaves such islands as they are)."""
    compute = [i for i, n in enumerate(doc.nodes) if n.role == "compute" and n.accelerator_count > 0
               and not (operational and n.state == "down")]
    if len(compute) < 2 or not doc.switches:  # (servers with no switch at all: the NIC check names them)
        return [Island(np.asarray(compute, np.int64) if positions else [doc.nodes[i].id for i in compute],
                       [], [], [])] if compute else []
    a, b = ends or doc.link_ends.sides(doc)
    routes = NetworkRoutes(doc, a, b, None if columns is None else columns.network)
    return routes.islands(doc, compute, cables_up(doc, a, b) if operational else None, positions)


class NetworkRoutes:
    """The roles of a design's cables in the engine's routes (what server_islands joins by): NIC
    cables and their leaves, the switch-to-switch cables, the pods. States play no part: a design
    whose states alone change keeps these (ServerReach)."""

    def __init__(self, doc: Document, a, b, network: np.ndarray | None = None):
        """`network`: per link, its kind is a network's (LinkColumns.network), when the caller has it."""
        links, switches = doc.links, doc.switches
        self.node_ids, self.switch_ids = list(map(attrgetter("id"), doc.nodes)), list(map(attrgetter("id"), switches))
        n_sw = len(self.switch_ids)
        if network is None:
            network = np.fromiter(map(NETWORK.__contains__, doc.link_values("kind")), bool, len(links))
        tray = trays(doc)
        self.tier = tier = np.fromiter((TIER_RANK.get(s.tier, 0) for s in switches), np.int64, n_sw)
        a_sw, b_sw = a.kind == 2, b.kind == 2
        network = network & ~on_trays(a, b, tray)  # a new array: the caller's is the live check's kept column
        self.nic, self.node_end, self.leaf_end = nic_cables(a, b, network)
        nic = self.nic
        self.is_leaf = is_leaf = np.zeros(n_sw, dtype=bool)
        is_leaf[self.leaf_end] = True
        ss = np.flatnonzero(network & a_sw & b_sw & (a.index != b.index))
        self.routes = doc.switch_links.of(tier, is_leaf, tray, ss, a.index[ss], b.index[ss])  # (the fabric's too)
        self.a, self.b = a, b

    def islands(self, doc: Document, compute: list[int], carries: np.ndarray | None,
                positions: bool = False) -> list[Island]:
        """server_islands of the servers `compute` (indices), over the cables that `carries` (per link;
        None: all of them, and no elements marked down are named); `positions`: as server_islands'."""
        node_ids, routes, tier, a, b = self.node_ids, self.routes, self.tier, self.a, self.b
        n_nodes, n_sw = len(node_ids), len(self.switch_ids)
        node_end, leaf_end = self.node_end, self.leaf_end
        operational = carries is not None
        if operational:
            node_end, leaf_end = node_end[carries[self.nic]], leaf_end[carries[self.nic]]
        else:
            carries = np.ones(len(a.kind), dtype=bool)
        has_up, pod_core, n_pods, su, sv = self._switch_graph(carries)
        # components over servers, switches and pods: a server joins its leaves (then as _switch_graph)
        u = np.concatenate([node_end, n_nodes + su])
        v = np.concatenate([n_nodes + leaf_end, n_nodes + sv])
        label = components(n_nodes + n_sw + n_pods, u.astype(np.int64), v.astype(np.int64))
        root = label.tolist().__getitem__

        groups: dict[int, list[int]] = {}
        for i in compute:
            groups.setdefault(root(i), []).append(i)
        if len(groups) == 1:
            return [Island(np.asarray(compute, np.int64) if positions else [node_ids[i] for i in compute], [], [], [])]
        leaves_of: dict[int, list[int]] = {}
        for leaf in np.unique(leaf_end).tolist():
            leaves_of.setdefault(root(n_nodes + leaf), []).append(leaf)
        routed = {key: sorted({int(routes.pod[s]) for s in leaves_of.get(key, [])
                               if has_up[s] and routes.pod[s] >= 0})
                  for key in groups}
        cores = {key: sorted(s for s in range(n_sw) if tier[s] == 2 and root(n_nodes + s) == key) for key in groups}
        several_pods = sum(len(p) for p in routed.values()) > 1
        several_cores = sum(bool(c) for c in cores.values()) > 1
        islands = []
        for key, members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[1][0])):
            bare = [s for s in leaves_of.get(key, []) if not has_up[s]]
            no_core = [_top(routes.pod == p, tier) for p in routed[key] if not pod_core[p]] if several_pods else []
            down = _down_around(doc, members, self.nic, a, b, routes) if operational else ()
            servers = np.asarray(members, np.int64) if positions else [node_ids[i] for i in members]
            islands.append(Island(servers, bare, no_core, cores[key] if several_cores else [],
                                  down))
        return islands


    def _switch_graph(self, carries: np.ndarray):
        """The routes among switches and pods over the cables that `carries`: per switch, whether it has
        an up-link; per pod, whether it has a cable to a core; the count of pods; and the edges (u, v)
        over the switches (0..) and pods (after the switches): a leaf with up-links joins its pod, a pod
        with core cables the cores it reaches, cores joined by cables join."""
        routes, tier = self.routes, self.tier
        n_sw = len(self.switch_ids)
        up_cable = carries[routes.links]
        has_up = np.zeros(n_sw, dtype=bool)
        has_up[routes.lower[routes.uplink & up_cable]] = True
        has_up[routes.upper[routes.upper_uplink & up_cable]] = True
        to_core = routes.to_core & up_cable
        n_pods = int(routes.pod.max(initial=-1)) + 1
        pod_core = np.zeros(n_pods, dtype=bool)
        pod_core[routes.pod[routes.lower[to_core]]] = True
        up_leaves = np.flatnonzero(has_up & (routes.pod >= 0))
        core_core = (tier[routes.lower] == 2) & (tier[routes.upper] == 2) & up_cable
        u = np.concatenate([up_leaves, n_sw + routes.pod[routes.lower[to_core]], routes.lower[core_core]])
        v = np.concatenate([n_sw + routes.pod[up_leaves], routes.upper[to_core], routes.upper[core_core]])
        return has_up, pod_core, n_pods, u, v

    def switch_components(self) -> np.ndarray:
        """Per switch, the smallest switch or pod of its component over the routes among switches alone
        (every cable carrying; no server joins two of them): switches that reach each other whatever
        servers come or go."""
        n_sw = len(self.switch_ids)
        _, _, n_pods, u, v = self._switch_graph(np.ones(len(self.a.kind), dtype=bool))
        return components(n_sw + n_pods, u.astype(np.int64), v.astype(np.int64))[:n_sw]


def trays(doc: Document) -> np.ndarray:
    """Per switch: an NVLink switch tray (its cables are no network's)."""
    return np.fromiter((s.fabric == "nvlink" for s in doc.switches), bool, len(doc.switches))


def on_trays(a, b, tray: np.ndarray) -> np.ndarray:
    """Per link: an end on a switch tray (`tray`: per switch)."""
    a_sw, b_sw = a.kind == 2, b.kind == 2
    return (a_sw & tray[np.where(a_sw, a.index, 0)]) | (b_sw & tray[np.where(b_sw, b.index, 0)])


def nic_cables(a, b, network: np.ndarray):
    """The servers' cables to a switch among the links whose kind is a network's and that end on no
    tray (`network`): per link whether it is one, and the server and the switch (its leaf) of each."""
    a_sw, b_sw = a.kind == 2, b.kind == 2
    nic = network & (((a.kind == 1) & b_sw) | (a_sw & (b.kind == 1)))
    return nic, np.where(a.kind == 1, a.index, b.index)[nic].astype(np.int64), \
        np.where(a_sw, a.index, b.index)[nic].astype(np.int64)


def cables_up(doc: Document, a, b, states: list[str] | None = None) -> np.ndarray:
    """Per link: it carries traffic (not marked down, and no end on a switch marked down)."""
    states = doc.link_list("state") if states is None else states
    up = np.fromiter(map("down".__ne__, states), bool, len(states))
    switch_down = np.fromiter((s.state == "down" for s in doc.switches), bool, len(doc.switches))
    if switch_down.any():
        for end in (a, b):
            up &= ~((end.kind == 2) & switch_down[np.where(end.kind == 2, end.index, 0)])
    return up


def _down_around(doc: Document, members: list[int], nic: np.ndarray, a, b, routes: SwitchLinks) -> tuple[str, ...]:
    """The elements marked down on the way out of these servers: their NIC cables and leaves, the
    leaves' up-links and the switches those reach."""
    links, switches = doc.links, doc.switches
    mine = np.zeros(len(doc.nodes), dtype=bool)
    mine[members] = True
    node_end = np.where(a.kind == 1, a.index, b.index)
    sw_end = np.where(a.kind == 1, b.index, a.index)
    own = np.flatnonzero(nic & mine[np.where(nic, node_end, 0)])
    leaves = np.unique(sw_end[own])
    is_mine = np.zeros(len(switches), dtype=bool)
    is_mine[leaves] = True
    ups = routes.links[is_mine[routes.lower] & routes.uplink]
    far = np.unique(routes.upper[is_mine[routes.lower] & routes.uplink])
    found = [links[i].id for i in np.concatenate([own, ups]).tolist() if links[i].state == "down"]
    found += [switches[s].id for s in np.concatenate([leaves, far]).tolist() if switches[s].state == "down"]
    return tuple(dict.fromkeys(found))


def _nic_cables(doc: Document, a, b, count: np.ndarray | None = None,
                nic_counts: np.ndarray | None = None) -> np.ndarray:
    """Per NIC of every server (servers in file order, then NIC number): the link index of its cable
    to a switch, -1 for none. As the engine's fabric: a cable names its NIC; bundles take the next
    NICs, cables without a port the server's next free ones, in file order. `nic_counts`: per server,
    its NICs (when the caller has them; 0 for those whose cables are not among `a`, `b`)."""
    nodes, links = doc.nodes, doc.links
    if nic_counts is None:
        nic_counts = np.fromiter((n.nic_count for n in nodes), np.int64, len(nodes))
    base = np.concatenate([[0], np.cumsum(nic_counts)[:-1]]).astype(np.int64)
    nic_link = np.full(int(nic_counts.sum()), -1, dtype=np.int64)
    if count is None:
        count = np.fromiter(doc.link_values("count"), np.int64, len(links))
    swap = (a.kind == 2) & (b.kind == 1)
    node = np.where(swap, b.index, a.index).astype(np.int64)
    port = np.where(swap, b.nic, a.nic).astype(np.int64)
    # a cable to a network switch (the switch's fabric, not the link's kind: a kind that does not match
    # its switch is an error of its own)
    network = np.fromiter((sw.fabric in NETWORK for sw in doc.switches), bool, len(doc.switches))
    cable = ((a.kind == 1) & (b.kind == 2)) | swap
    cable &= network[np.where(cable, np.where(swap, a.index, b.index), 0)] if len(network) else False
    simple = cable & (count == 1) & (port >= 0)
    simple &= port < nic_counts[np.where(cable, node, 0)] if len(nodes) else simple
    li = np.flatnonzero(simple)
    nic_link[base[node[li]] + port[li]] = li
    for i in np.flatnonzero(cable & ~simple).tolist():
        ni = int(node[i])
        mine = nic_link[base[ni]: base[ni] + nic_counts[ni]]
        for c in range(int(count[i])):
            local = int(port[i]) + c if port[i] >= 0 else int(next(iter(np.flatnonzero(mine < 0)), nic_counts[ni]))
            if local >= nic_counts[ni]:
                break
            mine[local] = i
    return nic_link


def _server_nic_cables(doc: Document, a, b, count: np.ndarray, server: int) -> np.ndarray:
    """_nic_cables of the server at place `server` alone: per NIC, the link index of its cable."""
    at = np.flatnonzero(((a.kind == 1) & (a.index == server)) | ((b.kind == 1) & (b.index == server)))
    sub = [dataclasses.replace(side, **{f.name: getattr(side, f.name)[at] for f in dataclasses.fields(side)})
           for side in (a, b)]
    nic_counts = np.zeros(len(doc.nodes), np.int64)
    nic_counts[server] = doc.nodes[server].nic_count
    found = _nic_cables(doc, *sub, count[at], nic_counts)
    return np.where(found >= 0, at[np.maximum(found, 0)], -1) if len(at) else found


def gpu_nics(node) -> list[list[int]]:
    """The NICs (local numbers) each GPU of `node` sends through, as the engine's fabric assigns them:
    GPU l uses NIC l // gpus_per_nic, or its `gpu_nic_affinity`; with k NICs per GPU (p5en's 16 for
    8 GPUs) NICs l*k .. l*k+k-1. [] for a GPU past the last NIC."""
    gpus, nics, per = node.accelerator_count, node.nic_count, node.gpus_per_nic
    k = nics // gpus if per == 1 and gpus and nics >= 2 * gpus else 1
    first = [g // per * k for g in range(gpus)]
    affinity = node.gpu_nic_affinity
    if affinity and len(affinity) == gpus and k == 1:
        first = list(affinity)
    return [list(range(f, min(f + k, nics))) if f < nics else [] for f in first]


def unusable_servers(doc: Document) -> dict[str, str]:
    """The compute servers that are up but that a job across servers cannot run on, each with why:
    servers that cables or switches marked down cut off from the largest group of servers that still
    reach each other, and servers with a GPU whose NIC is missing, not cabled, or whose cable or
    leaf is down. File order. {} when every server up is usable (the common case: nothing down and
    every NIC a GPU uses cabled)."""
    return ServerReach(doc).unusable(doc)


class ServerReach:
    """unusable_servers of one design, kept while only states change (the live check, as the user
    marks cables, switches and servers down and up): the cables' ends, the NIC each cable serves and
    the routes are read once; a state edit changes one entry (`link_state`, `switch_state`; a
    server's state is read from the design) and `unusable` answers from the arrays. A server's GPU
    count (`server_resized`) and devices renamed with their cables (`devices_renamed`) are followed
    too; any other edit of the design needs a new ServerReach."""

    def __init__(self, doc: Document, ends=None, columns: LinkColumns | None = None):
        """`ends`, `columns`: the links' ends and their kinds, counts and states, when the caller has them."""
        nodes, links = doc.nodes, doc.links
        self.a, self.b = a, b = ends or doc.link_ends.sides(doc)
        self.nic_link = _nic_cables(doc, a, b, None if columns is None else columns.count)
        self.nic_counts = np.fromiter((n.nic_count for n in nodes), np.int64, len(nodes))
        self.base = np.concatenate([[0], np.cumsum(self.nic_counts)[:-1]]).astype(np.int64)
        self.nic_node = np.repeat(np.arange(len(nodes)), self.nic_counts)
        # servers with more GPUs than their NICs reach
        self.short = [i for i, n in enumerate(nodes) if n.accelerator_count > n.nic_count * n.gpus_per_nic]
        self.link_down = (np.fromiter(map(eq, repeat("down"), doc.link_values("state")), bool, len(links))
                          if columns is None else columns.down.copy())  # (link_state edits this one)
        self.switch_down = np.fromiter((s.state == "down" for s in doc.switches), bool, len(doc.switches))
        self._routes: NetworkRoutes | None = None  # made the first time something is down
        self._network = None if columns is None else columns.network

    def servers_moved(self, doc: Document, origin: np.ndarray, link_place: np.ndarray, ends,
                      columns: LinkColumns) -> "ServerReach | None":
        """This reach after servers were added and removed with their cables and nothing else of the
        network changed (the caller's word): `origin`, per server now, its place before (-1: added);
        `link_place`, per link before, its place now (-1: removed); `ends`, `columns`: the links' now.
        The kept servers' NICs keep their cables (moved to their places); an added server's are read
        from its own cables. None when a kept server lost a cable (found anew then)."""
        nodes, kept = doc.nodes, origin >= 0
        if not np.all(np.diff(origin[kept]) > 0):
            return None  # (a server moved: its NICs' cables are read anew)
        reach = ServerReach.__new__(ServerReach)
        reach.a, reach.b = ends
        added = np.flatnonzero(~kept).tolist()
        reach.nic_counts = np.zeros(len(origin), dtype=self.nic_counts.dtype)
        reach.nic_counts[kept] = self.nic_counts[origin[kept]]  # (a design of no servers before: none kept)
        for i in added:
            reach.nic_counts[i] = nodes[i].nic_count
        reach.base = np.concatenate([[0], np.cumsum(reach.nic_counts)[:-1]]).astype(np.int64)
        reach.nic_node = np.repeat(np.arange(len(nodes)), reach.nic_counts)
        was_kept = np.zeros(len(self.nic_counts), dtype=bool)
        was_kept[origin[kept]] = True
        before = self.nic_link[was_kept[self.nic_node]]
        now = np.full(len(before), -1, dtype=np.int64)
        cabled = before >= 0
        now[cabled] = link_place[before[cabled]]  # (a design of no cables has no place to read)
        if np.any((before >= 0) & (now < 0)):
            return None
        reach.nic_link = np.full(len(reach.nic_node), -1, dtype=np.int64)
        reach.nic_link[kept[reach.nic_node]] = now
        for i in added:
            reach.nic_link[reach.base[i]:reach.base[i] + reach.nic_counts[i]] = \
                _server_nic_cables(doc, reach.a, reach.b, columns.count, i)
        reach.short = [int(p) for p in np.flatnonzero(kept)[np.isin(origin[kept], self.short)]] + \
            [i for i in added if nodes[i].accelerator_count > nodes[i].nic_count * nodes[i].gpus_per_nic]
        reach.link_down = columns.down.copy()
        reach.switch_down = self.switch_down
        reach._routes = None
        reach._network = columns.network
        return reach

    def server_resized(self, position: int, node) -> None:
        """The server at `position` has another GPU count: whether its GPUs outnumber its NICs' reach."""
        short = node.accelerator_count > node.nic_count * node.gpus_per_nic
        if short and position not in self.short:
            self.short.append(position)
        elif not short and position in self.short:
            self.short.remove(position)

    def devices_renamed(self) -> None:
        """Servers or switches renamed: the routes, which keep their ids, are made again when asked."""
        self._routes = None

    def link_state(self, position: int, state: str) -> None:
        self.link_down[position] = state == "down"

    def switch_state(self, position: int, state: str) -> None:
        self.switch_down[position] = state == "down"

    def _cables_up(self) -> np.ndarray:
        """cables_up from the kept states."""
        up = ~self.link_down
        if self.switch_down.any():
            for end in (self.a, self.b):
                up &= ~((end.kind == 2) & self.switch_down[np.where(end.kind == 2, end.index, 0)])
        return up

    def unusable(self, doc: Document) -> dict[str, str]:
        """unusable_servers of `doc` (this design, its states as kept)."""
        out: dict[str, str] = {}
        nodes, links, nic_link, base = doc.nodes, doc.links, self.nic_link, self.base
        any_down = bool(self.link_down.any() or self.switch_down.any())
        up = self._cables_up() if any_down else np.ones(len(links), dtype=bool)
        dead = (nic_link < 0) | ~up[np.maximum(nic_link, 0)] if len(up) else nic_link < 0  # no cables: none up
        suspects = np.flatnonzero(np.bincount(self.nic_node[dead], minlength=len(nodes))).tolist() \
            if dead.any() else []
        for ni in sorted(set(suspects + self.short)):
            node = nodes[ni]
            if node.role != "compute" or node.state == "down" or not node.accelerator_count:
                continue
            for g, used in enumerate(gpu_nics(node)):
                if not used:
                    out[node.id] = f"GPU {g} has no NIC ({node.nic_count} NICs for {node.accelerator_count} GPUs)"
                    break
                bad = [n for n in used if dead[base[ni] + n]]
                if bad:
                    cable = int(nic_link[base[ni] + bad[0]])
                    out[node.id] = (f"GPU {g}'s NIC nic{bad[0]} is not cabled" if cable < 0 else
                                    f"GPU {g}'s NIC nic{bad[0]} is cut off: its cable {links[cable].id} or its "
                                    "leaf is marked down")
                    break
        if any_down:
            for island in self._islands(doc, up)[1:]:
                shown = ", ".join(island.down[:6]) + (" ..." if len(island.down) > 6 else "")
                why = (f"cut off from the other servers by elements marked down ({shown})" if island.down
                       else "cut off from the other servers")
                for server in island.servers:
                    out.setdefault(server, why)
        order = {n.id: i for i, n in enumerate(nodes)}
        return dict(sorted(out.items(), key=lambda kv: order[kv[0]]))

    def _islands(self, doc: Document, up: np.ndarray) -> list[Island]:
        """server_islands(doc, operational=True), from the kept routes and states."""
        compute = [i for i, n in enumerate(doc.nodes) if n.role == "compute" and n.accelerator_count > 0
                   and n.state != "down"]
        if len(compute) < 2 or not doc.switches:
            return [Island([doc.nodes[i].id for i in compute], [], [], [])] if compute else []
        if self._routes is None:
            self._routes = NetworkRoutes(doc, self.a, self.b, self._network)
        return self._routes.islands(doc, compute, up)


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


def job_servers(doc: Document, num_gpus: int) -> list:
    """The servers a job of `num_gpus` GPUs runs on when placed from the first, as the engine's
    placer does (engine/job_placement.py): compute servers that are up, in file order, their GPUs up
    counted, and for a job larger than one server none that it cannot reach (unusable_servers)."""
    nodes = doc.nodes
    one_server = max((n.accelerator_count for n in nodes), default=0)
    skip = unusable_servers(doc) if num_gpus > one_server else {}
    out, seen = [], 0
    for node in nodes:
        if seen >= num_gpus:
            break
        if node.role != "compute" or node.state == "down" or node.id in skip:
            continue
        up = max(0, node.accelerator_count - node.gpus_down)
        if up:
            out.append(node)
            seen += up
    return out


def describe_unusable(unusable: dict[str, str], limit: int = 4) -> str:
    """`unusable_servers`' answer in a sentence: the servers of each reason, the reason once."""
    by_reason: dict[str, list[str]] = {}
    for server, why in unusable.items():
        by_reason.setdefault(why, []).append(server)
    parts = []
    for why, servers in by_reason.items():
        shown = ", ".join(servers[:limit]) + (f" and {len(servers) - limit} more" if len(servers) > limit else "")
        parts.append(f"{shown}: {why}")
    return "; ".join(parts)


def unusable_fix(unusable: dict[str, str], fewer: bool = True) -> str:
    """What makes those servers usable again (`fewer`: or a job that asks for fewer GPUs)."""
    fixes = []
    if any("marked down" in why for why in unusable.values()):
        fixes.append("mark the elements named up")
    if any("not cabled" in why for why in unusable.values()):
        fixes.append("cable the NICs named to a leaf switch")
    if any("has no NIC" in why for why in unusable.values()):
        fixes.append("set gpus_per_nic (or nic_count) so that every GPU has a NIC")
    return ", or ".join(fixes + (["ask for fewer GPUs"] if fewer else []))
