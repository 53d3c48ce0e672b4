"""Per traffic pattern, each group's seconds per bus byte on the scale-up links and on the network.

A dimension's groups all send at once: the network term is the slowest flow of each group under the
loads of every group (flows.flow_times), the scale-up term the group's share of its GPUs' scale-up
bandwidth. Both are linear in the size, so they are kept for one byte and kept up to date when a
link's rate changes: only the flows on a changed NIC, leaf or pod are timed again. What holds a
group's slowest flow (its bottleneck) is worked out when a cost asks for it: a cost names only its
slowest group's, one group of hundreds.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .constants import EngineConstants
from .fabric import Fabric
from .flows import (FlowTimer, Loads, RateChange, Route, capacities, flow_bottleneck, flow_bottlenecks, kind_mask,
                    rate_change, rates_of, route_flows)
from .group_flows import pattern_flows
from .group_shape import GroupShape


NOTHING_STALE: list[str] = []  # up_to_date's answer while the rating holds (never appended to)


class UnitTimes(NamedTuple):
    """One pattern's bandwidth term for a 1-byte bus volume, per group of the dimension (the resource
    that holds each group's network term: PatternTimes.bottleneck)."""
    scale_s: np.ndarray  # scale-up seconds
    net_s: np.ndarray  # network seconds: the group's slowest flow
    loads: Loads | None  # every group's bytes per resource (None without link bytes)
    # the seconds every group takes, where they are known to be alike without looking (None: not known)
    scale_alike: float | None = None  # every group on as many servers, alike behind switches
    net_alike: float | None = None  # 0: no flow leaves the servers


def pattern_of(primitive: str) -> str:
    """The flows a primitive makes: send/recv pairs, one-way sends, all-to-all shifts, or a ring."""
    return {"send_recv": "pairs", "send": "one_way", "all_to_all": "a2a"}.get(primitive, "ring")


# Reductions along rows of two (the pipeline's pairs): numpy runs a reduction over a 2-wide axis as a
# loop per row, 15 times slower than one elementwise pass over the two columns.
def _row_min(a: np.ndarray) -> np.ndarray:
    """Per row, its smallest value (NaN if it holds one, as min)."""
    return np.minimum(a[:, 0], a[:, 1]) if a.shape[1] == 2 else a.min(axis=1)


class PatternTimes:
    """The unit times of one dimension's groups per pattern, at the fabric's current rating."""

    def __init__(self, fabric: Fabric, shape: GroupShape, k: EngineConstants, keep_loads: bool):
        self.fabric = fabric
        self.shape = shape
        self.k = k
        self.keep_loads = keep_loads
        self._unit: dict[str, UnitTimes] = {}
        self.routes: dict[str, tuple] = {}  # pattern -> (Route, group of each flow): kept when re-rated
        self._flow_t: dict[str, np.ndarray] = {}  # pattern -> each flow's time
        # pattern -> each group's slowest flow at the current rating (the last of them; -1: none; None: no
        # flow leaves the servers), the resources' rates it was timed at, and the bottlenecks asked so far
        self._slowest: dict[str, np.ndarray | None] = {}
        self._caps: dict[str, np.ndarray] = {}
        self._found: dict[str, dict[int, tuple[int, int]]] = {}
        self._rates: tuple | None = None  # the rating every kept time was made at (rates_of)
        # Which groups a re-rating timed again (pattern -> group indices), and how many so far:
        # only the groups with a flow on a changed NIC, leaf or pod are.
        self.last_retimed: dict[str, np.ndarray] = {}
        self.retimed_groups = 0

    def forget_routes(self) -> None:
        """Drop the kept routes and flow times (a plan search never re-rates a link: they would
        only take memory); a re-rating then costs the patterns that had them afresh. The bottlenecks a
        cost can ask for are worked out first (see _settle)."""
        for pattern in self.routes:
            self._settle(pattern)
        self.routes.clear()
        self._flow_t.clear()
        self._caps.clear()

    def bottleneck(self, pattern: str, group: int) -> tuple[int, int]:
        """What holds `group`'s network time in `pattern` (unit's) at the current rating: its slowest
        flow's most loaded resource as (flows.flow_times's code, its index); (0, 0) without flows."""
        found = self._found[pattern]
        hit = found.get(group)
        if hit is None:
            slowest = self._slowest[pattern]
            flow = -1 if slowest is None else int(slowest[group])
            if flow < 0:
                hit = (0, 0)
            elif pattern in self.routes:
                route = self.routes[pattern][0]
                hit = flow_bottleneck(self.fabric, route, self._caps[pattern], int(route.up[flow]),
                                      int(route.down[flow]))
            else:  # its route was let go (forget_routes) and no rate changed since: routed again, not kept
                route = route_flows(self.fabric, *self._flows(pattern)[:3])
                hit = flow_bottleneck(self.fabric, route, capacities(self.fabric, route, self.k)[0],
                                      int(route.up[flow]), int(route.down[flow]))
            found[group] = hit
        return hit

    def _settle(self, pattern: str) -> None:
        """Work out the bottlenecks a cost of `pattern` can still ask for while the route is at hand:
        a class whose groups all take the same times asks only for its first group's (its slowest
        by numpy's argmax), any other class for any of its groups'. (bottleneck routes again any
        other it is asked for.)"""
        unit = self._unit.get(pattern)
        if unit is None or self._slowest.get(pattern) is None:
            return
        scale, net = unit.scale_s, unit.net_s
        alike = bool((scale == scale[0]).all()) and bool((net == net[0]).all()) if len(net) else True
        for groups in self.shape.classes.values():
            if not len(groups):
                continue
            if alike or (bool((scale[groups] == scale[groups[0]]).all())
                         and bool((net[groups] == net[groups[0]]).all())):
                self.bottleneck(pattern, int(groups[0]))
                continue
            # every group of the class, each flow's own resources looked at
            slowest = self._slowest[pattern][groups]
            has = (slowest >= 0).nonzero()[0]
            at = slowest[has]
            route = self.routes[pattern][0]
            codes, indices = np.zeros(len(groups), dtype=np.int64), np.zeros(len(groups), dtype=np.int64)
            codes[has], indices[has] = flow_bottlenecks(self.fabric, route, self._caps[pattern], route.up.take(at),
                                                        route.down.take(at))
            self._found[pattern].update(zip(groups.tolist(), zip(codes.tolist(), indices.tolist())))

    def _flows(self, pattern: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The pattern's inter-node flows, spread over the NICs: (source NIC, destination NIC, bytes, group)."""
        return self.fabric.spread_over_nics(*pattern_flows(self.fabric, self.shape, pattern))

    def up_to_date(self) -> list[str]:
        """Bring the kept times to the fabric's current rating when it changed: the patterns whose
        collectives' costs no longer hold (none when the rating is the one they were made at). When
        it raises, every pattern's costs are to be dropped."""
        f = self.fabric
        old = self._rates
        if old is None:
            self._rates = rates_of(f)
            return NOTHING_STALE
        if (old[0] is f.nic_cap_Bps and old[1] is f.leaf_up_Bps and old[2] is f.leaf_up_cables
                and old[3] is f.pod_up_Bps and old[4] is f.pod_up_cables and old[5] is f.link_cap_Bps):
            return NOTHING_STALE
        try:
            stale = self._rerate(rate_change(f, old))
        except BaseException:  # e.g. traffic left with no path: the next call costs afresh and says so again
            self._unit.clear()
            self._flow_t.clear()
            self._found.clear()
            self._rates = None
            raise
        self._rates = rates_of(f)
        return stale

    def _rerate(self, change: RateChange) -> list[str]:
        """Time again the flows on a changed NIC, leaf or pod and the groups they belong to again
        from their flows: the patterns one of whose groups' times (or a loaded cable's share of its
        tier) changed. Groups inside their servers have no flows: their costs stay."""
        stale = []
        self.last_retimed = {}
        for pattern in list(self._unit):
            if pattern not in self.routes or (self.routes[pattern][0] is not None and pattern not in self._flow_t):
                self._unit.pop(pattern, None)  # its routes were let go (forget_routes): cost it afresh
                stale.append(pattern)
                continue
            route, gid = self.routes[pattern]
            if route is None:  # no flow leaves the servers
                continue
            flows = change.flows_of(route)
            tiers_stale = route.loads.per_link is not None and _tier_shares_changed(self.fabric, route.loads, change)
            if tiers_stale:
                route.loads.per_link = None  # a cable's share of its tier follows the rates
            if not flows.size:
                if tiers_stale:
                    stale.append(pattern)
                continue
            groups, times_changed = self._retime(pattern, route, gid, flows)
            self.last_retimed[pattern] = groups
            self.retimed_groups += groups.size
            if times_changed or tiers_stale:
                stale.append(pattern)
        return stale

    def _retime(self, pattern: str, route: Route, gid: np.ndarray, flows: np.ndarray) -> tuple[np.ndarray, bool]:
        """Time `flows` again; the network time and slowest flow of their groups again from all their
        flows, as `unit` does for every group, and the bottlenecks asked for of those groups. (groups,
        whether any of them changed: a time, or a bottleneck a cost named)."""
        flow_t = self._flow_t[pattern]
        timer = FlowTimer(self.fabric, route, self.k, flows)
        flow_t[flows] = timer.seconds(route.up[flows], route.down[flows])
        self._caps[pattern] = timer.cap
        net = self._unit[pattern].net_s
        groups = np.unique(gid[flows])
        mine = np.zeros(len(net), dtype=bool)
        mine[groups] = True
        sel = np.flatnonzero(mine[gid])  # every flow of those groups, in flow order
        new_net = net.copy()
        new_net[groups] = 0.0
        np.maximum.at(new_net, gid[sel], flow_t[sel])
        slowest = sel[flow_t[sel] >= new_net[gid[sel]]]
        self._slowest[pattern][gid[slowest]] = slowest  # the last of a group's slowest flows, as `unit` picks
        changed = bool(np.any(new_net[groups] != net[groups]))
        # (a flow timed before on resources whose rates hold has the bottleneck it had; one not asked
        # for is worked out at the rating it is asked at)
        found = self._found[pattern]
        for group in [group for group in found if mine[group]]:
            had = found.pop(group)
            changed = self.bottleneck(pattern, group) != had or changed
        if changed:
            self._unit[pattern] = self._unit[pattern]._replace(net_s=new_net)
        return groups, changed

    def unit(self, pattern: str) -> UnitTimes:
        """Per group: the bus-bandwidth-limited time per byte of busbw-equivalent traffic."""
        hit = self._unit.get(pattern)
        if hit is not None:
            return hit
        f = self.fabric
        G = self.shape.members.shape[0]
        if pattern not in self.routes:
            if not self.shape.spans_servers:  # every group inside its servers: no flow
                self.routes[pattern] = (None, np.zeros(0, np.int32))
            else:
                src, dst, nbytes, gid = self._flows(pattern)
                self.routes[pattern] = (route_flows(f, src, dst, nbytes) if src.size else None, gid.astype(np.int32))
        route, gid = self.routes[pattern]
        loads = best = net_alike = None
        if route is None:
            net, net_alike = np.zeros(G), 0.0
        else:
            loads = route.loads
            timer = FlowTimer(f, route, self.k)
            flow_t = self._flow_t[pattern] = timer.seconds(route.up, route.down)
            self._caps[pattern] = timer.cap
            # each group's time: its slowest flow's, the last of them its bottleneck
            layout = flows_in_order(self.shape, pattern, len(gid))
            if layout is not None:  # (every group has flows)
                net, best = slowest_in_order(flow_t, G, layout)
            else:
                net, best = slowest_of_groups(flow_t, gid, G)
        self._slowest[pattern], self._found[pattern] = best, {}
        scale, scale_alike = scale_up_seconds(f, self.shape, pattern)
        # (without link bytes nothing reads the loads again: not kept, 2 arrays per NIC at 16k GPUs)
        out = UnitTimes(scale, net, loads if self.keep_loads else None, scale_alike, net_alike)
        self._unit[pattern] = out
        return out


def slowest_of_groups(flow_t: np.ndarray, gid: np.ndarray, G: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group: its slowest flow's time (0 without flows) and the last of its flows that has it
    (-1 without flows); `gid`: each flow's group."""
    net = np.zeros(G)
    np.maximum.at(net, gid, flow_t)
    best = np.full(G, -1, dtype=np.int64)
    slowest = (flow_t >= net.take(gid)).nonzero()[0]  # (take: gid is 32-bit, see group_flows.pxn_nic)
    best[gid[slowest]] = slowest  # (the last write of a group's wins)
    return net, best


def flows_in_order(sh: GroupShape, pattern: str, flows: int) -> tuple[str, int] | None:
    """How pattern_flows laid out the `flows` of a dimension's groups when every group spans as many
    servers (by_node) and none was spread over more NICs (as many flows as it makes then):
    ("rounds", R), R rounds of one flow per group in group order (pairs on two servers each: each
    way a round); ("blocks", w), each group's w flows one after the other (a ring through servers
    holding as many of its GPUs each). None for other layouts."""
    G, n = sh.members.shape
    if sh.by_node is None or not G:
        return None
    if pattern in ("pairs", "one_way") and n == 2 and flows == G * (2 if pattern == "pairs" else 1):
        return "rounds", flows // G
    if pattern == "ring" and flows == G * n:
        return "blocks", n
    return None


def slowest_in_order(flow_t: np.ndarray, G: int, layout: tuple[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """slowest_of_groups for flows laid out as `layout` (flows_in_order), by rows of the flows'
    times: the same maxima, and the same last flow of each group's maximum."""
    kind, width = layout
    if kind == "rounds":
        groups = np.arange(G)
        if width == 1:
            return flow_t.copy(), groups
        if width == 2:  # (a reduction over two rows runs as one elementwise pass)
            first, second = flow_t[:G], flow_t[G:]
            net = np.maximum(first, second)
            return net, np.where(second >= net, groups + G, groups)
        rows = flow_t.reshape(width, G)
        return rows.max(axis=0), (width - 1 - rows[::-1].argmax(axis=0)) * G + groups
    # each group's last slowest flow, its time read there (numpy's max along rows of a few flows
    # runs a loop per row: several times an argmax's cost)
    best = np.arange(width - 1, G * width, width) - flow_t.reshape(G, width)[:, ::-1].argmax(axis=1)
    return flow_t.take(best), best


def scale_up_seconds(f: Fabric, sh: GroupShape, pattern: str) -> tuple[np.ndarray, float | None]:
    """Per group, the seconds per bus byte on its GPUs' scale-up links (and, behind PCIe switches
    without GPUDirect RDMA, the PCIe crossings of its NIC traffic); and what every group takes
    where that is known without looking at them (_uniform_scale_up_seconds; None otherwise)."""
    uniform = _uniform_scale_up_seconds(f, sh, pattern)
    if uniform is not None:
        return np.full(sh.members.shape[0], uniform), uniform
    return _scale_up_seconds_per_group(f, sh, pattern), None


def _scale_up_seconds_per_group(f: Fabric, sh: GroupShape, pattern: str) -> np.ndarray:
    n = sh.members.shape[1]
    multi = sh.n_nodes > 1
    g = np.where(multi, sh.n_nodes * 0 + (sh.per_node or 1), n)
    intra_share = np.where(multi, (g - 1) / np.maximum(g, 1), 1.0)
    if pattern in ("pairs", "one_way"):
        intra_share = np.where(multi, 0.0, 1.0)
    if pattern == "a2a":
        intra_share = np.where(multi, (g - 1) / np.maximum(n - 1, 1), 1.0)
    # Direct links (scale_up: nvlink, e.g. MI300X's Infinity Fabric full mesh) spread a GPU's
    # bandwidth evenly over its links to the other GPUs of the server: a group that holds g
    # of them reaches only (g - 1) of those links; a switch (NVSwitch) gives any group all of it.
    first = f.gpu_node.take(sh.members[:, 0])  # (take: see group_flows.pxn_nic)
    mesh_nodes = kind_mask(f, "node_scale_up_kind", "nvlink")
    mesh = mesh_nodes[first] if mesh_nodes.any() else None
    # each group's slowest member's rate
    if mesh is not None and np.any(mesh):
        local = np.where(multi, g, n)
        peers = np.maximum(f.node_gpus[first] - 1, 1)
        reach = np.clip((local - 1) / peers, 1.0 / peers, 1.0)
        slowest = _row_min(f.node_scale_up_Bps[f.gpu_node[sh.members]] * np.where(mesh, reach, 1.0)[:, None])
    else:
        alike = _alike_scale_up_Bps(f)
        slowest = alike if alike is not None else _row_min(f.node_scale_up_Bps[f.gpu_node[sh.members]])
    scale = intra_share / slowest
    # GPUs behind PCIe switches push their NIC traffic through the same PCIe lanes, twice
    # (into host memory and out again) without GPUDirect RDMA.
    first_node = first
    pcie_nodes = kind_mask(f, "node_scale_up_kind", "pcie")
    pcie = pcie_nodes[first_node] if sh.spans_servers and pcie_nodes.any() else None
    if pcie is not None and np.any(pcie & multi):
        gdr = f._nic_line[1][first_node]
        nic_share = np.where(multi, 1.0 / g, 0.0)
        if pattern == "a2a":
            nic_share = np.where(multi, (n - g) / np.maximum(n - 1, 1), 0.0)
        elif pattern in ("pairs", "one_way"):
            nic_share = np.where(multi, 1.0, 0.0)
        crossings = np.where(gdr, 1.0, 2.0)
        scale = np.where(pcie & multi, scale + nic_share * crossings / slowest, scale)
    return scale


def _uniform_scale_up_seconds(f: Fabric, sh: GroupShape, pattern: str) -> float | None:
    """What scale_up_seconds gives every group when they all span as many servers with as many of
    their GPUs on each, on servers of one scale-up rate behind switches (no direct mesh, no PCIe):
    worked out on Python floats, the same quotients as on the arrays (a regular layout's usual case,
    where a dozen numpy calls on arrays of a few groups cost more than the work). None otherwise."""
    if not sh.per_node or not _switched_scale_up(f):  # (per_node: every group on as many servers)
        return None
    rate = _alike_scale_up_Bps(f)
    if rate is None or not rate > 0.0 or not math.isfinite(rate):
        return None
    n = sh.members.shape[1]
    multi = int(sh.n_nodes[0]) > 1
    g = sh.per_node if multi else n
    if not multi:
        share = 1.0
    elif pattern in ("pairs", "one_way"):
        share = 0.0
    elif pattern == "a2a":
        share = (g - 1) / max(n - 1, 1)
    else:
        share = (g - 1) / max(g, 1)
    return share / rate


def _switched_scale_up(f: Fabric) -> bool:
    """Whether no server's GPUs are a direct mesh (nvlink) or behind PCIe; kept with the fabric."""
    kinds = f.node_scale_up_kind
    return f.remembered("switched_scale_up", (kinds,),
                        lambda: not kind_mask(f, "node_scale_up_kind", "nvlink").any()
                        and not kind_mask(f, "node_scale_up_kind", "pcie").any())


def _alike_scale_up_Bps(f: Fabric) -> float | None:
    """The scale-up rate of every server when they all have the same (the slowest member of any
    group then has it: no (groups x members) gather), None when they differ; kept with the fabric."""
    def make():
        rates = f.node_scale_up_Bps
        return float(rates[0]) if len(rates) and bool((rates == rates[0]).all()) else None
    return f.remembered("alike_scale_up_Bps", (f.node_scale_up_Bps,), make)


def _tier_shares_changed(fabric: Fabric, loads: Loads, change: RateChange) -> bool:
    """Whether a cable's share of the up-link bytes of a tier these loads use changed (its own
    rate, or its leaf's or pod's total): the bytes per cable then change (link_bytes_per_bus_byte).
    A NIC's cable carries its NIC's bytes whatever its rate."""
    for (links, owner), changed_owner, load in ((fabric._uplink, change.leaves, (loads.leaf_up, loads.leaf_down)),
                                                (fabric._podlink, change.pods, (loads.pod_up, loads.pod_down))):
        if not len(links) or not len(load[0]):
            continue
        touched = changed_owner[owner] | change.links[links]
        if touched.any() and np.any(np.maximum(*load)[owner[touched]] > 0):
            return True
    return False
