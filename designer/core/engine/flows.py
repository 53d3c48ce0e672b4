"""Where a collective's bytes go on the fabric, and how fast they drain there.

A route puts each inter-node flow on its NICs, leaves and pods (it depends on no rate, so a re-rated
fabric keeps it); a flow's time is its most loaded resource: the NIC that sends or receives it, its
leaf's up-links, its pod's up-links. Up-links drain at the share their routing allows: adaptive
routing on InfiniBand, packet spraying (Spectrum-X, SRD, Pollara), or ECMP's hash collisions and a
slow cable's drag on hashed Ethernet and static InfiniBand. The collective model
(engine/collectives.py) chooses the algorithm and adds the latency.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..problems import DesignerError, Problem
from .constants import EngineConstants
from .fabric import Fabric


@dataclass(eq=False, repr=False, init=False)  # its __init__ written: dataclass would compile one at start
class LinkBytes:
    """Bytes on the cables a collective loads: link indices (sorted, distinct) and their bytes, or
    (index None) the bytes of every cable of the fabric, when it loads most of them."""
    index: np.ndarray | None
    bytes: np.ndarray

    def __init__(self, index: np.ndarray | None, bytes: np.ndarray) -> None:
        self.index, self.bytes = index, bytes

    def dense(self, n_links: int) -> np.ndarray:
        if self.index is None:
            return self.bytes
        out = np.zeros(n_links)
        out[self.index] = self.bytes
        return out


class ScaledLinkBytes(LinkBytes):
    """A collective's bytes per cable as its pattern's bytes for one bus byte times its size, multiplied
    when read: every cached size of a pattern kept a cable-sized array of its own (~16 MB at 131k GPUs)."""

    def __init__(self, unit: LinkBytes, scale: float):
        self.index, self._unit_bytes, self.scale = unit.index, unit.bytes, scale

    @property
    def bytes(self) -> np.ndarray:
        return self._unit_bytes * self.scale


# Below this share of a fabric's cables a collective's (or a job's) bytes are kept per loaded cable;
# above it per cable of the fabric, where whole-array arithmetic beats gathering by index.
SPARSE_SHARE = 0.25


class Loads:
    """Bytes per direction on each resource, summed over every concurrent group."""

    nic_up: np.ndarray
    nic_down: np.ndarray
    leaf_up: np.ndarray
    leaf_down: np.ndarray
    pod_up: np.ndarray
    pod_down: np.ndarray
    per_link: "LinkBytes | None"  # bytes per cable for one bus byte (CollectiveModel._link_bytes)
    stacked: np.ndarray | None  # the six above one after the other (each a view of it), as ResourceTables

    __slots__ = ("nic_up", "nic_down", "leaf_up", "leaf_down", "pod_up", "pod_down", "per_link", "stacked")

    def __init__(self, nic_up: np.ndarray, nic_down: np.ndarray, leaf_up: np.ndarray, leaf_down: np.ndarray,
                 pod_up: np.ndarray, pod_down: np.ndarray, per_link: "LinkBytes | None" = None,
                 stacked: np.ndarray | None = None) -> None:
        self.nic_up = nic_up
        self.nic_down = nic_down
        self.leaf_up = leaf_up
        self.leaf_down = leaf_down
        self.pod_up = pod_up
        self.pod_down = pod_down
        self.per_link = per_link
        self.stacked = stacked


class Route:
    """Where one pattern's inter-node flows go, which does not depend on any rate: a re-rated fabric
    (a link's bandwidth, a part down) keeps it and only times the flows again (FlowTimer).

    A flow waits on its sending NIC, its receiving NIC and, as far as it goes, its leaves' and its
    pods' up-links: how far it goes (its level: 0 under its leaf, 1 out of its leaf, 2 out of its pod
    too) and its NICs are all a route keeps of it, as one number per end, level x 2 NICs + NIC: its
    place in FlowTimer's table of each end's slowest resource (sending ends first at each level)."""
    up: np.ndarray  # per flow: level x 2 NICs + its sending NIC
    down: np.ndarray  # level x 2 NICs + its receiving NIC
    loads: Loads
    leaf_flows: np.ndarray | None  # flows leaving each leaf (ECMP's share: no rate in it)
    pod_flows: np.ndarray | None  # flows leaving each pod
    crosses_pods: bool  # some flow leaves its pod

    __slots__ = ("up", "down", "loads", "leaf_flows", "pod_flows", "crosses_pods", "_nic_leaf", "_switch_pod")

    def __init__(self, up: np.ndarray, down: np.ndarray, loads: Loads, crosses_pods: bool, nic_leaf: np.ndarray,
                 switch_pod: np.ndarray) -> None:
        self.up = up
        self.down = down
        self.loads = loads
        self.crosses_pods = crosses_pods
        self.leaf_flows = None
        self.pod_flows = None
        self._nic_leaf, self._switch_pod = nic_leaf, switch_pod  # the fabric's, that it was routed on

    # Each flow's ends, as the route's numbers give them (worked out when asked: a re-rating, a
    # hashed tier's flow counts and bad input ask; timing the flows does not)
    @property
    def src(self) -> np.ndarray:  # sending NIC of each flow
        return self.up % (2 * len(self._nic_leaf))

    @property
    def dst(self) -> np.ndarray:  # receiving NIC
        return self.down % (2 * len(self._nic_leaf))

    @property
    def sl(self) -> np.ndarray:  # their leaves
        return self._nic_leaf.take(self.src)

    @property
    def dl(self) -> np.ndarray:
        return self._nic_leaf.take(self.dst)

    @property
    def sp(self) -> np.ndarray:  # their pods
        return self._switch_pod.take(self.sl)

    @property
    def dp(self) -> np.ndarray:
        return self._switch_pod.take(self.dl)

    @property
    def cross_leaf(self) -> np.ndarray:  # the flow leaves its leaf
        return self.up >= 2 * len(self._nic_leaf)

    @property
    def cross_pod(self) -> np.ndarray:  # the flow leaves its pod
        return self.up >= 4 * len(self._nic_leaf)


class RateChange:
    """The resources whose rate differs between two ratings of a fabric (see `rates_of`): the
    flows that use none of them keep their times when a link is edited."""
    nics: np.ndarray  # bool per NIC
    leaves: np.ndarray  # bool per switch (its up-links' capacity or usable cables)
    pods: np.ndarray  # bool per pod
    links: np.ndarray  # bool per cable (its capacity)

    __slots__ = ("nics", "leaves", "pods", "links")

    def __init__(self, nics: np.ndarray, leaves: np.ndarray, pods: np.ndarray, links: np.ndarray) -> None:
        self.nics = nics
        self.leaves = leaves
        self.pods = pods
        self.links = links

    def flows_of(self, route: Route) -> np.ndarray:
        """Indices of the route's flows that use a changed NIC, leaf up-link or pod up-link."""
        hit = self.nics[route.src] | self.nics[route.dst]
        if self.leaves.any():
            hit |= route.cross_leaf & (self.leaves[route.sl] | self.leaves[route.dl])
        if self.pods.any():
            hit |= route.cross_pod & (self.pods[route.sp] | self.pods[route.dp])
        return np.flatnonzero(hit)


def rates_of(fabric: Fabric) -> tuple:
    """The rate arrays a collective's cost reads. A re-rating replaces them (refresh_capacities,
    sync_view), so holding them keeps the rating a cost was made at."""
    return (fabric.nic_cap_Bps, fabric.leaf_up_Bps, fabric.leaf_up_cables, fabric.pod_up_Bps,
            fabric.pod_up_cables, fabric.link_cap_Bps)


def rate_change(fabric: Fabric, old: tuple) -> RateChange:
    """What changed between the rating `old` and the fabric's current one (the groups of every
    dimension ask the same question after an edit: the answer is kept with the fabric)."""
    new = rates_of(fabric)
    return fabric.remembered("rate_change", old + new, lambda: rates_differ(old, new))


def rates_differ(old: tuple, new: tuple) -> RateChange:
    nic_cap, leaf_cap, leaf_cables, pod_cap, pod_cables, link_cap = (
        _differs(a, b) for a, b in zip(old, new))
    return RateChange(nic_cap, leaf_cap | leaf_cables, pod_cap | pod_cables, link_cap)


def _differs(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    if old is new:
        return np.zeros(len(new), dtype=bool)
    if len(old) != len(new):  # not the same fabric's shape (never after a re-rating): all of it
        return np.ones(len(new), dtype=bool)
    return old != new


class ResourceTables:
    """How the resources a flow waits on are numbered on a fabric, kept with it (resource_tables): the
    NICs sending, the NICs receiving, the leaves' up-links, their down-links, the pods' up-links,
    their down-links (flow_times's codes 1 to 6), one kind after the other."""

    def __init__(self, fabric: Fabric):
        n_nic, n_sw, n_pod = len(fabric.nic_leaf), len(fabric.switch_pod), len(fabric.pod_up_Bps)
        self.nics, self.switches, self.pods = n_nic, n_sw, n_pod
        self.offsets = np.cumsum([0, n_nic, n_nic, n_sw, n_sw, n_pod, n_pod])  # where each kind starts; the count
        # (6, NICs): per NIC, the resources a flow from it (rows 0, 2, 4) or to it (rows 1, 3, 5) waits
        # on: the NIC, its leaf's up-links (down-links), its pod's. (A NIC under no leaf, a leaf in no
        # pod: a number no flow that leaves reads.)
        nic = np.arange(n_nic)
        leaf = fabric.nic_leaf
        # each NIC's pod (32-bit as its leaf: a route reads them for every flow)
        self.nic_pod = pod = fabric.switch_pod.take(leaf) if n_sw else np.full(n_nic, -1, dtype=np.int32)
        self.nic_resources = np.stack([nic, nic, leaf, leaf, pod, pod]) + self.offsets[:6, None]
        self._kinds = None

    def kinds(self) -> tuple[np.ndarray, np.ndarray]:
        """Per resource: its code (int8) and its index among the resources of its kind (int32)."""
        if self._kinds is None:
            sizes = np.diff(self.offsets)
            index = (np.arange(self.offsets[-1]) - np.repeat(self.offsets[:-1], sizes)).astype(np.int32)
            self._kinds = np.repeat(np.arange(1, 7, dtype=np.int8), sizes), index
        return self._kinds


def resource_tables(fabric: Fabric) -> ResourceTables:
    # (a re-rating keeps them: the pods' rates are new arrays, never of another length)
    return fabric.remembered("resource_tables", (fabric.nic_leaf, fabric.switch_pod), lambda: ResourceTables(fabric))


def route_flows(fabric: Fabric, src_nic, dst_nic, nbytes) -> Route:
    """The loads of inter-node flows on each NIC, leaf and pod (bytes per direction)."""
    tables = resource_tables(fabric)
    n_nic, n_sw, n_pod = tables.nics, tables.switches, tables.pods
    nic_up = np.bincount(src_nic, nbytes, minlength=n_nic)
    nic_down = np.bincount(dst_nic, nbytes, minlength=n_nic)
    # (the flows that leave a leaf or a pod are picked once by position: numpy gathers by boolean
    # indices several times slower)
    sl, dl = fabric.nic_leaf.take(src_nic), fabric.nic_leaf.take(dst_nic)
    cross_leaf = sl != dl
    leaving = np.flatnonzero(cross_leaf)
    if n_sw:
        leaving_bytes = nbytes[leaving]
        leaf_up = np.bincount(sl[leaving], leaving_bytes, minlength=n_sw)
        leaf_down = np.bincount(dl[leaving], leaving_bytes, minlength=n_sw)
    else:
        leaf_up = leaf_down = np.zeros(0)
    sp, dp = tables.nic_pod.take(src_nic), tables.nic_pod.take(dst_nic)
    cross_pod = sp != dp  # (under one leaf, in one pod)
    crossing = np.flatnonzero(cross_pod)
    if n_pod:
        crossing_bytes = nbytes[crossing]
        pod_up = np.bincount(sp[crossing], crossing_bytes, minlength=n_pod)
        pod_down = np.bincount(dp[crossing], crossing_bytes, minlength=n_pod)
    else:
        pod_up = pod_down = np.zeros(0)
    # the loads one after the other as the resources are numbered, each a view of them
    stacked = np.concatenate((nic_up, nic_down, leaf_up, leaf_down, pod_up, pod_down))
    cut = tables.offsets.tolist()
    loads = Loads(*(stacked[a:b] for a, b in zip(cut, cut[1:])), stacked=stacked)
    base = (cross_leaf.view(np.int8) + cross_pod.view(np.int8)) * np.intp(2 * n_nic)  # each flow's level x 2 NICs
    return Route(base + src_nic, np.add(base, dst_nic, out=base), loads, bool(len(crossing)), fabric.nic_leaf,
                 fabric.switch_pod)


class FlowTimer:
    """The times of a route's flows at the fabric's current rates. A flow's time is that of its most
    loaded resource (load over capacity; infinite where nothing drains it): the NICs that send and
    receive it and the up-links of the leaves and pods it leaves. Each flow's time reads only its own
    resources, so timing some flows gives what timing all of them gives for those.

    For as many flows as NICs or more, a table per level, end and NIC of the slowest resource that
    end of a flow waits on is made once and each flow reads its two ends' entries; for a few flows
    on a big fabric, each flow's own resources are timed."""

    def __init__(self, fabric: Fabric, route: Route, k: EngineConstants, flows: np.ndarray | None = None):
        """To time the route's `flows` (indices; None: all of them)."""
        require_paths(fabric, route, flows)
        self.tables = tables = resource_tables(fabric)
        self.load = route.loads.stacked
        self.cap, self.drains, divisor, stalled = _rates(fabric, route, k)
        self.waits = self._slowest = None
        resources = tables.nic_resources
        if resources.shape[1] <= 2 * (len(route.up) if flows is None else len(flows)):
            if divisor is None:
                per = _quotients(self.load, self.cap, self.drains)
            else:  # (_quotients: load over rate, infinite where nothing drains)
                per = self.load / divisor
                per[stalled] = np.inf
            # per level (the rows), the slowest resource so far down the levels
            rows = per.take(resources).reshape(3, -1)
            np.maximum(rows[0], rows[1], out=rows[1])
            np.maximum(rows[1], rows[2], out=rows[2])
            self.waits = rows.ravel()
            self._down = self.waits[len(self.waits) // 6:]  # (a receiving end: NICs further)

    def seconds(self, up: np.ndarray, down: np.ndarray) -> np.ndarray:
        """The times of the flows whose ends are `up` and `down` (Route's numbers)."""
        if self.waits is None:
            return _end_seconds(self.load, self.cap, *_flow_ends(self.tables.nic_resources, up, down)).max(axis=0)
        return np.maximum(self.waits.take(up), self._down.take(down))

    def bottlenecks(self, up: np.ndarray, down: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For the flows whose ends are `up` and `down`: the resource that holds each (the first of
        its longest times in flow_times's codes), as (code, index). A few flows (each group's
        slowest of a few big groups on a big fabric) are looked at on their own, not through a table
        of every NIC: below about a 64th of the NICs, that table costs more."""
        if self.waits is None or 64 * len(up) < self.tables.nics:
            slot = _own_slowest(self.tables, self.load, self.cap, up, down)
        else:
            if self._slowest is None:
                self._slowest = self._slowest_resources()
            u, d = self.waits.take(up), self._down.take(down)
            n_nic = self.tables.nics
            su, sd = self._slowest.take(up), self._slowest[n_nic:].take(down)
            # the receiving end when it is slower, or as slow with a resource of a lower code
            slot = np.where((d > u) | ((d == u) & (sd < su)), sd, su)
        codes, indices = self.tables.kinds()
        return codes.take(slot), indices.take(slot)

    def _slowest_resources(self) -> np.ndarray:
        """Per entry of the table, the resource of its time: the first down the levels to reach it."""
        waits = self.waits.reshape(3, -1)
        out = self.tables.nic_resources.reshape(3, -1).astype(np.int32)
        np.copyto(out[1], out[0], where=waits[1] == waits[0])  # (a level's resource is slower when its wait grew)
        np.copyto(out[2], out[1], where=waits[2] == waits[1])
        return out.ravel()


def flow_bottlenecks(fabric: Fabric, route: Route, cap: np.ndarray, up: np.ndarray,
                     down: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """FlowTimer.bottlenecks of the route's flows whose ends are `up` and `down` at the resources'
    rates `cap` (capacities'), each flow's own resources looked at."""
    tables = resource_tables(fabric)
    codes, indices = tables.kinds()
    slot = _own_slowest(tables, route.loads.stacked, cap, up, down)
    return codes.take(slot), indices.take(slot)


def _own_slowest(tables: ResourceTables, load: np.ndarray, cap: np.ndarray, up: np.ndarray,
                 down: np.ndarray) -> np.ndarray:
    """Per flow (its ends `up` and `down`), the first of its resources to take its longest time."""
    ends, level = _flow_ends(tables.nic_resources, up, down)
    times = _end_seconds(load, cap, ends, level)
    return ends[(times == times.max(axis=0)).argmax(axis=0), np.arange(len(up))]


def flow_bottleneck(fabric: Fabric, route: Route, cap: np.ndarray, up: int, down: int) -> tuple[int, int]:
    """What FlowTimer.bottlenecks gives one flow of `route` (its ends `up` and `down`, Route's numbers)
    at the resources' rates `cap` (capacities'): the first of its resources in flow_times's codes to
    take its longest time, as (code, index), worked out on Python floats (a cost asks for one flow,
    where a dozen numpy calls would cost more than the work). The same quotients as numpy's."""
    tables = resource_tables(fabric)
    load = route.loads.stacked
    per_level = 2 * tables.nics
    level = up // per_level
    ends = (up - level * per_level, down - level * per_level)  # its sending NIC, its receiving NIC
    column = tables.nic_resources
    slot = longest = None
    for row in range(2 * level + 2):  # (the up-links of a tier it does not leave take 0: never the first longest)
        resource = int(column[row, ends[row & 1]])
        rate = float(cap[resource])
        seconds = float(load[resource]) / rate if rate > 0 else math.inf
        if seconds != seconds:  # NaN: numpy's maximum is NaN, equal to none, and its argmax the first
            slot = int(column[0, ends[0]])
            break
        if slot is None or seconds > longest:
            slot, longest = resource, seconds
    codes, indices = tables.kinds()
    return int(codes[slot]), int(indices[slot])


def flow_times(fabric: Fabric, route: Route, k: EngineConstants, flows: np.ndarray | None = None) -> tuple:
    """For each flow of `route` (or of its `flows`, indices) at the fabric's current rates: its
    (time, resource code, resource index). Resource codes: 1 NIC send, 2 NIC receive, 3 leaf
    up-links, 4 leaf down-links, 5 pod up, 6 pod down."""
    up, down = (route.up, route.down) if flows is None else (route.up[flows], route.down[flows])
    timer = FlowTimer(fabric, route, k, flows)
    return timer.seconds(up, down), *timer.bottlenecks(up, down)


# each row of nic_resources: the level from which a flow waits on it
_ROW_LEVEL = np.array([0, 0, 1, 1, 2, 2])[:, None]


def _flow_ends(resources: np.ndarray, up: np.ndarray, down: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(6, flows): each flow's resources in nic_resources' rows (Route's numbers less their level),
    and each flow's level."""
    n_nic = resources.shape[1]
    level, sending = np.divmod(up, 2 * n_nic)
    at = np.stack([sending, down - level * (2 * n_nic)] * 3) + (np.arange(6) * n_nic)[:, None]
    return resources.ravel().take(at), level


def _end_seconds(load: np.ndarray, cap: np.ndarray, ends: np.ndarray, level: np.ndarray) -> np.ndarray:
    """Per resource of `ends` (6, flows), its seconds (load over capacity, infinite where nothing drains
    it; 0 for the up-links of a tier the flow does not leave): the quotients of the resources' table."""
    cap = cap.take(ends)
    t = _quotients(load.take(ends), cap, cap > 0)
    np.copyto(t, 0.0, where=_ROW_LEVEL > level)
    return t


def capacities(fabric: Fabric, route: Route, k: EngineConstants) -> tuple[np.ndarray, np.ndarray | None]:
    """Each resource's rate, numbered as ResourceTables says: the NICs' (twice), the rate the leaves'
    and the pods' up-links drain the route's flows at (twice each); and which rates are above 0
    (None: all). Kept with the fabric's rating where no up-link hashes (every pattern of every plan
    asks)."""
    return _rates(fabric, route, k)[:2]


def _rates(fabric: Fabric, route: Route, k: EngineConstants) -> tuple:
    """capacities, and where some rate is 0 and they are kept with the fabric: the rates with 1 in
    place of each 0, and where those are (None, None otherwise). Dividing by them and setting those
    quotients to infinity after costs half a masked divide."""
    routing = tier_routing(fabric)
    if any(routing[2]):  # hashed: the rates follow the route's flows
        return (*_capacities(fabric, route, k), None, None)
    return fabric.remembered("resource_capacities", (fabric.nic_cap_Bps, fabric.leaf_up_Bps, fabric.pod_up_Bps,
                                                     routing, k), lambda: _with_divisor(*_capacities(fabric, route, k)))


def _with_divisor(cap: np.ndarray, drains: np.ndarray | None) -> tuple:
    if drains is None:
        return cap, None, None, None
    return cap, drains, np.where(drains, cap, 1.0), np.flatnonzero(~drains)


def _capacities(fabric: Fabric, route: Route, k: EngineConstants) -> tuple[np.ndarray, np.ndarray | None]:
    nic = fabric.nic_cap_Bps
    leaf = usable_uplink_Bps(fabric, route, k) if len(fabric.switch_ids) else fabric.leaf_up_Bps
    pod = usable_uplink_Bps(fabric, route, k, pod=True) if len(fabric.pod_up_Bps) else fabric.pod_up_Bps
    cap = np.concatenate((nic, nic, leaf, leaf, pod, pod))
    drains = cap > 0  # (a spine's or core switch's leaf up-links: none)
    return cap, None if drains.all() else drains


def _quotients(load: np.ndarray, cap: np.ndarray, drains: np.ndarray | None) -> np.ndarray:
    """load / cap; infinite where the capacity is 0 (load or not: nothing drains it). `drains`: where
    the capacity is above 0 (None: everywhere)."""
    if drains is None:
        return load / cap
    return np.divide(load, cap, out=np.full(cap.shape, np.inf), where=drains)


def every_path_open(fabric: Fabric, route: Route, flows: np.ndarray | None = None) -> bool:
    """Whether every flow of the route (of its `flows`) has a path without looking at each flow's
    leaves: every leaf a NIC hangs from and every pod has up-link capacity, and no flow that crosses
    pods leaves one of no pod. (Every flow starts and ends at a NIC: its leaves are among those.)"""
    # what holds for the whole fabric at its current rates is kept with it (every pattern asks)
    leaves_open, pods_open, nic_leaves_in_pods = fabric.remembered(
        "paths_open", (fabric.nic_leaf, fabric.leaf_up_Bps, fabric.pod_up_Bps, fabric.switch_pod),
        lambda: (_leaves_open(fabric), bool(len(fabric.pod_up_Bps) and fabric.pod_up_Bps.min() > 0),
                 _nic_leaves_in_pods(fabric)))
    if not leaves_open:
        return False  # (a NIC under no leaf, or a leaf with no way up: each flow looked at)
    if not route.crosses_pods or nic_leaves_in_pods and pods_open:
        return True  # (every leaf a NIC hangs from in a pod: no flow leaves one of no pod)
    if not pods_open:
        return False
    cross_pod, sp, dp = (a if flows is None else a[flows] for a in (route.cross_pod, route.sp, route.dp))
    return not (cross_pod & ((sp < 0) | (dp < 0))).any()


def _nic_leaves_in_pods(fabric: Fabric) -> bool:
    leaves = fabric.remembered("nic_leaves", (fabric.nic_leaf,), lambda: _leaves_of_nics(fabric))
    return not len(leaves) or (leaves[0] >= 0 and bool((fabric.switch_pod[leaves] >= 0).all()))


def _leaves_open(fabric: Fabric) -> bool:
    """Whether every NIC hangs from a leaf and every such leaf has up-link capacity."""
    leaves = fabric.remembered("nic_leaves", (fabric.nic_leaf,), lambda: _leaves_of_nics(fabric))
    return not (len(leaves) and (leaves[0] < 0 or fabric.leaf_up_Bps[leaves].min() <= 0))


def _leaves_of_nics(fabric: Fabric) -> np.ndarray:
    """The distinct leaves NICs hang from, ascending, -1 first when a NIC hangs from none (np.unique
    without it: np.unique imports numpy.ma, a twentieth of a command's start-up)."""
    nic_leaf = fabric.nic_leaf
    used = np.zeros(len(fabric.switch_ids), dtype=bool)
    used[nic_leaf[nic_leaf >= 0]] = True
    leaves = np.flatnonzero(used)
    return np.concatenate(([-1], leaves)) if (nic_leaf < 0).any() else leaves


def require_paths(fabric: Fabric, route: Route, flows: np.ndarray | None = None) -> None:
    """Bad input, not an endless step: traffic between leaves (or pods) that no cable joins."""
    if every_path_open(fabric, route, flows):
        return
    cross_leaf, cross_pod, sl, dl, sp, dp = (a if flows is None else a[flows] for a in (
        route.cross_leaf, route.cross_pod, route.sl, route.dl, route.sp, route.dp))
    src_leaf, dst_leaf, src_pod, dst_pod = sl[cross_leaf], dl[cross_leaf], sp[cross_pod], dp[cross_pod]
    for leaves, other in ((src_leaf, dst_leaf), (dst_leaf, src_leaf)):
        stuck = np.flatnonzero(fabric.leaf_up_Bps[leaves] <= 0) if len(leaves) else ()
        if len(stuck):
            index = int(leaves[stuck[0]])
            leaf, to = fabric.switch_ids[index], fabric.switch_ids[other[stuck[0]]]
            dead = [fabric.link_ids[i] for i in fabric.uplinks_of(index)]
            if dead:  # cabled, but every up-link (or the spines they reach) is down
                raise DesignerError([Problem(
                    f"this job's traffic from {leaf} to {to} has no path: every up-link of {leaf} is down "
                    f"({', '.join(dead[:6])}{' ...' if len(dead) > 6 else ''})", f"spec.switches[{index}]",
                    element=dead[0], fix=f"mark an up-link of {leaf} (or the spine it reaches) up, or place the "
                                         "job under other leaves")])
            raise DesignerError([Problem(
                f"this job's traffic from {leaf} to {to} has no path: leaf switch {leaf} has no up-links "
                "to a spine", f"spec.switches[{index}]", element=leaf,
                fix=f"connect {leaf} to a spine switch as the other leaves are")])
    if not len(src_pod):
        return
    for pods in (src_pod, dst_pod):
        stuck = np.flatnonzero((pods < 0) | (fabric.pod_up_Bps[np.maximum(pods, 0)] <= 0))
        if len(stuck):
            raise DesignerError([Problem(
                f"this job's traffic crosses pods (groups of leaves and spines) that no core switch joins: "
                f"{len(fabric.pod_up_Bps)} pod(s), pod {int(pods[stuck[0]])} has no up-links to a core switch",
                "spec.links", fix="connect the spines of every pod to the core switches")])


def tier_flows(fabric: Fabric, leaves, crossing, pod: bool = False) -> np.ndarray:
    """How many of the flows leave each leaf (or each pod): where they go, not how fast."""
    n = len(fabric.pod_up_Bps) if pod else len(fabric.switch_ids)
    idx = fabric.switch_pod[leaves[crossing]] if pod else leaves[crossing]
    return np.bincount(idx[idx >= 0], minlength=n).astype(float)


def usable_uplink_Bps(fabric: Fabric, route: Route, k: EngineConstants, pod: bool = False) -> np.ndarray:
    """Per leaf (pod), the up-link rate the route's flows drain at: its capacity times
    uplink_efficiency. Where no leaf (pod) hashes, that rate does not depend on the flows: it is
    kept with the fabric's rating, and the flows leaving each leaf are not counted (every pattern
    of every plan asks)."""
    capacity = fabric.pod_up_Bps if pod else fabric.leaf_up_Bps
    routing = tier_routing(fabric)
    if not routing[2][1 if pod else 0]:
        return fabric.remembered(("routed_uplink_Bps", pod), (capacity, routing, k),
                                 lambda: capacity * uplink_efficiency(fabric, None, k, pod))
    if pod:
        if route.pod_flows is None:
            route.pod_flows = tier_flows(fabric, route.sl, route.cross_pod, pod=True)
        return capacity * uplink_efficiency(fabric, route.pod_flows, k, pod=True)
    if route.leaf_flows is None:
        route.leaf_flows = tier_flows(fabric, route.sl, route.cross_leaf)
    return capacity * uplink_efficiency(fabric, route.leaf_flows, k)


def uplink_efficiency(fabric: Fabric, tier_flows: np.ndarray | None, k: EngineConstants, pod: bool = False) -> np.ndarray:
    """Usable share of up-link capacity: adaptive routing on InfiniBand, hash collisions on Ethernet.

    ECMP on Ethernet places F flows (x QPs) on U up-links at random; the busiest link carries
    about F/U + sqrt(2 (F/U) ln U) of them (balls into bins), so the set drains that much
    slower than an ideal split (docs/engine-model.md, "The network"). `tier_flows`: the
    flows leaving each leaf (pod), from tier_flows (None where no leaf (pod) hashes: not read).
    """
    t = 1 if pod else 0
    hashed_by_tier, sprayed_by_tier, any_hashed = tier_routing(fabric)
    hashed, sprayed = hashed_by_tier[t], sprayed_by_tier[t]
    routed = np.where(sprayed, k.packet_spraying_efficiency, k.infiniband_adaptive_routing_efficiency)
    if not any_hashed[t]:
        return routed
    cables = (fabric.pod_up_cables if pod else fabric.leaf_up_cables).astype(float)
    # RoCE hashes each queue pair apart; InfiniBand's static tables route by destination, so all the
    # queue pairs of a connection take one path
    infiniband = kind_mask(fabric, "switch_fabric", "infiniband")
    if pod:
        infiniband = pods_of(fabric, infiniband) & ~pods_of(fabric, kind_mask(fabric, "switch_fabric", "ethernet"))
    flows = tier_flows * np.where(infiniband, 1, max(1, k.ecmp_qps_per_connection))
    slowest = fabric.pod_up_slowest_Bps if pod else fabric.leaf_up_slowest_Bps
    capacity = fabric.pod_up_Bps if pod else fabric.leaf_up_Bps
    drag = slow_cable_drag(flows, cables, capacity, slowest) if slowest is not None else 1.0
    return np.where(hashed, 1.0 / np.maximum(ecmp_collision(flows, cables), drag), routed)


def slow_cable_drag(flows: np.ndarray, cables: np.ndarray, capacity_Bps: np.ndarray, slowest_Bps: np.ndarray) -> np.ndarray:
    """How much slower than an even split hashed flows drain when one up-link cable trained below the
    others (>= 1). A hash puts each flow on one cable whatever its speed, so the flows on the slow
    cable finish last: the set drains at (mean cable rate / slowest cable rate) of its time, if any flow
    lands there; with F flows on U cables one does with probability 1 - (1 - 1/U)^F (the expected
    share). Adaptive routing and packet spraying move traffic off a slow cable: they pay only its
    smaller share of the capacity, which the capacity already holds."""
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.maximum(cables, 1.0)
        mean = capacity_Bps / u
        ratio = np.where((slowest_Bps > 0) & np.isfinite(slowest_Bps), mean / slowest_Bps, 1.0)
        hit = 1.0 - np.power(1.0 - 1.0 / u, flows)
        return np.where(flows > 0, np.maximum(1.0, hit * ratio + (1.0 - hit)), 1.0)


def tier_routing(fabric: Fabric) -> tuple:
    """(ethernet_tiers, sprayed_tiers, whether any leaf / any pod hashes), kept with the fabric while
    the switch kinds and pods they are read from are the same objects (every pattern of every plan
    asks, twice)."""
    def make():
        hashed = ethernet_tiers(fabric)
        return hashed, sprayed_tiers(fabric), (bool(hashed[0].any()), bool(hashed[1].any()))
    return fabric.remembered("tier_routing", (fabric.switch_hashes, fabric.switch_fabric, fabric.switch_pod,
                                              fabric.pod_up_Bps), make)


def ethernet_tiers(fabric: Fabric) -> tuple[np.ndarray, np.ndarray]:
    """Which leaves, and which pods, put each flow on one up-link (RoCE's ECMP hash, InfiniBand's static
    routing tables) rather than route it adaptively (InfiniBand AR) or spray it per packet (Spectrum-X,
    EFA's SRD, Pollara, a cell-scheduled fabric): a leaf with such a NIC under it (fabric.switch_hashes;
    without it every Ethernet leaf); a pod is hashed when one of its leaves is."""
    leaf = fabric.switch_hashes
    if leaf is None:
        leaf = kind_mask(fabric, "switch_fabric", "ethernet")
    return leaf, pods_of(fabric, leaf)


def sprayed_tiers(fabric: Fabric) -> tuple[np.ndarray, np.ndarray]:
    """Which Ethernet leaves and pods carry only per-packet-sprayed (or adaptively routed) NIC traffic."""
    ethernet = kind_mask(fabric, "switch_fabric", "ethernet")
    hashed_leaf, hashed_pod = ethernet_tiers(fabric)
    leaf = ethernet & ~hashed_leaf
    return leaf, pods_of(fabric, leaf) & ~hashed_pod


def pods_of(fabric: Fabric, switches: np.ndarray) -> np.ndarray:
    pod = np.zeros(len(fabric.pod_up_Bps), dtype=bool)
    pod[fabric.switch_pod[switches & (fabric.switch_pod >= 0)]] = True
    return pod


def kind_mask(fabric: Fabric, field_name: str, kind: str) -> np.ndarray:
    """Which servers (or switches) of `fabric` are of `kind` in the string list `field_name`, as a
    boolean array; kept with the list it was read from (a fabric's kinds change only when it is
    rebuilt), so the costing of every group does not walk thousands of strings again."""
    values = getattr(fabric, field_name)
    return fabric.remembered(("kind", field_name, kind), (values,),
                             lambda: np.array([v == kind for v in values], dtype=bool))


def ecmp_collision(flows: np.ndarray, cables: np.ndarray) -> np.ndarray:
    """How much slower than an even split `flows` hashed onto `cables` up-links drain (>= 1): the
    busiest cable carries F/U + sqrt(2 (F/U) ln U) flows. Below about one flow per cable more flows
    collide more; with many per cable the split evens out."""
    with np.errstate(divide="ignore", invalid="ignore"):
        load = flows / np.maximum(cables, 1)
        busiest = load + np.sqrt(2 * load * np.log(np.maximum(cables, 2)))
        return np.where(flows > 0, np.maximum(1.0, busiest / np.maximum(load, 1.0)), 1.0)
