"""Where a collective's bytes go on the fabric, and how fast they drain there.

A route puts each inter-node flow on its NICs, leaves and pods (it depends on no rate, so a re-rated
fabric keeps it); a flow's time is its most loaded resource: the NIC that sends or receives it, its
leaf's up-links, its pod's up-links. Up-links drain at the share their routing allows: adaptive
routing on InfiniBand, packet spraying (Spectrum-X, SRD, Pollara), or ECMP's hash collisions and a
slow cable's drag on hashed Ethernet and static InfiniBand. The collective model
(engine/collectives.py) chooses the algorithm and adds the latency.
"""
from __future__ import annotations

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

    __slots__ = ("nic_up", "nic_down", "leaf_up", "leaf_down", "pod_up", "pod_down", "per_link")

    def __init__(self, nic_up: np.ndarray, nic_down: np.ndarray, leaf_up: np.ndarray, leaf_down: np.ndarray,
                 pod_up: np.ndarray, pod_down: np.ndarray, per_link: "LinkBytes | None" = None) -> None:
        self.nic_up = nic_up
        self.nic_down = nic_down
        self.leaf_up = leaf_up
        self.leaf_down = leaf_down
        self.pod_up = pod_up
        self.pod_down = pod_down
        self.per_link = per_link


class Route:
    """Where one pattern's inter-node flows go, which does not depend on any rate: a re-rated fabric
    (a link's bandwidth, a part down) keeps it and only times the flows again (flow_times)."""
    src: np.ndarray  # sending NIC of each flow
    dst: np.ndarray  # receiving NIC
    sl: np.ndarray  # their leaves
    dl: np.ndarray
    sp: np.ndarray  # their pods
    dp: np.ndarray
    cross_leaf: np.ndarray  # the flow leaves its leaf
    cross_pod: np.ndarray  # the flow leaves its pod
    loads: Loads
    leaf_flows: np.ndarray | None  # flows leaving each leaf (ECMP's share: no rate in it)
    pod_flows: np.ndarray | None  # flows leaving each pod

    __slots__ = ("src", "dst", "sl", "dl", "sp", "dp", "cross_leaf", "cross_pod", "loads", "leaf_flows", "pod_flows")

    def __init__(self, src: np.ndarray, dst: np.ndarray, sl: np.ndarray, dl: np.ndarray, sp: np.ndarray, dp: np.ndarray,
                 cross_leaf: np.ndarray, cross_pod: np.ndarray, loads: Loads, leaf_flows: np.ndarray | None = None,
                 pod_flows: np.ndarray | None = None) -> None:
        self.src = src
        self.dst = dst
        self.sl = sl
        self.dl = dl
        self.sp = sp
        self.dp = dp
        self.cross_leaf = cross_leaf
        self.cross_pod = cross_pod
        self.loads = loads
        self.leaf_flows = leaf_flows
        self.pod_flows = pod_flows


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


def route_flows(fabric: Fabric, src_nic, dst_nic, nbytes) -> Route:
    """The loads of inter-node flows on each NIC, leaf and pod (bytes per direction)."""
    n_nic = len(fabric.nic_cap_Bps)
    n_sw = len(fabric.switch_ids)
    n_pod = len(fabric.pod_up_Bps)
    nic_up = np.bincount(src_nic, nbytes, minlength=n_nic)
    nic_down = np.bincount(dst_nic, nbytes, minlength=n_nic)
    # (gathers index by the callers' 64-bit indices, and the flows that leave a leaf or a pod are
    # picked once by position: numpy gathers by 32-bit or boolean indices several times slower)
    sl, dl = fabric.nic_leaf[src_nic], fabric.nic_leaf[dst_nic]
    cross_leaf = sl != dl
    leaving = np.flatnonzero(cross_leaf)
    if n_sw:
        leaving_bytes = nbytes[leaving]
        leaf_up = np.bincount(sl[leaving], leaving_bytes, minlength=n_sw)
        leaf_down = np.bincount(dl[leaving], leaving_bytes, minlength=n_sw)
    else:
        leaf_up = leaf_down = np.zeros(0)
    sp, dp = fabric.switch_pod.take(sl), fabric.switch_pod.take(dl)  # (take: see _resource_time)
    cross_pod = cross_leaf & (sp != dp)
    if n_pod:
        crossing = np.flatnonzero(cross_pod)
        crossing_bytes = nbytes[crossing]
        pod_up = np.bincount(sp[crossing], crossing_bytes, minlength=n_pod)
        pod_down = np.bincount(dp[crossing], crossing_bytes, minlength=n_pod)
    else:
        pod_up = pod_down = np.zeros(0)
    loads = Loads(nic_up, nic_down, leaf_up, leaf_down, pod_up, pod_down)
    # kept per flow with the route: 32-bit indices (the NICs, leaves and pods of 131k GPUs: 17 MB -> 8)
    return Route(src_nic.astype(np.int32, copy=False), dst_nic.astype(np.int32, copy=False), sl, dl, sp, dp,
                 cross_leaf, cross_pod, loads)


def flow_times(fabric: Fabric, route: Route, k: EngineConstants, flows: np.ndarray | None = None):
    """For each flow of `route` (or of its `flows`, indices) at the fabric's current rates: its
    (time, resource code, resource index). Resource codes: 1 NIC send, 2 NIC receive, 3 leaf
    up-links, 4 leaf down-links, 5 pod up, 6 pod down. Each flow's time reads only its own NICs,
    leaves and pods, so timing some flows gives what timing all of them gives for those."""
    loads = route.loads
    parts = (route.src, route.dst, route.sl, route.dl, route.sp, route.dp, route.cross_leaf, route.cross_pod)
    if flows is not None:
        parts = tuple(a[flows] for a in parts)
    src_nic, dst_nic, sl, dl, sp, dp, cross_leaf, cross_pod = parts
    n_sw = len(fabric.switch_ids)
    n_pod = len(fabric.pod_up_Bps)
    if not every_path_open(fabric, sp, dp, cross_pod):
        require_paths(fabric, sl[cross_leaf], dl[cross_leaf], sp[cross_pod], dp[cross_pod])
    # Each resource's time folded into the slowest so far as it is made: the six per-flow arrays
    # stacked (and a copy without NaN) were the peak of a new plan's evaluation at 131k GPUs (~25 MB).
    slowest = Slowest()
    with np.errstate(divide="ignore", invalid="ignore"):
        cap = fabric.nic_cap_Bps
        slowest.add(_resource_time(loads.nic_up, cap, src_nic), nan_free=True)
        slowest.add(_resource_time(loads.nic_down, cap, dst_nic), nan_free=True)
        if n_sw:
            leaf_cap = usable_uplink_Bps(fabric, route, k)
            slowest.add(np.where(cross_leaf, _resource_time(loads.leaf_up, leaf_cap, sl), 0.0), nan_free=True)
            slowest.add(np.where(cross_leaf, _resource_time(loads.leaf_down, leaf_cap, dl), 0.0), nan_free=True)
            if n_pod:
                pcap = usable_uplink_Bps(fabric, route, k, pod=True)
                slowest.add(np.where(cross_pod, _resource_time(loads.pod_up, pcap, sp), 0.0), nan_free=True)
                slowest.add(np.where(cross_pod, _resource_time(loads.pod_down, pcap, dp), 0.0), nan_free=True)
    # each flow's resource: the row of its code in the stacked ends (what np.choose gives, in half its time)
    n = len(src_nic)
    ends = np.stack([src_nic, dst_nic, sl, dl, sp, dp][: slowest.count])
    index = ends.ravel()[slowest.code.astype(np.intp) * n + np.arange(n)]
    return slowest.time, (slowest.code + 1).astype(np.int8), index.astype(np.int32, copy=False)


def _resource_time(load: np.ndarray, cap: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Per flow, the seconds of its resource `at` (load over capacity, NaN made infinite), a new array.
    Divided per resource when there are no more resources than flows (a leaf or pod tier, the NICs
    of a dimension's many flows): one division and NaN check per resource, one gather per flow; per
    flow otherwise (a small job's few flows on a big fabric). The same quotients either way."""
    # (take: the route's indices are 32-bit, which indexing converts first, at twice the cost)
    if len(cap) <= len(at):
        t = load / cap
        np.copyto(t, np.inf, where=np.isnan(t))
        return t.take(at)
    t = load.take(at) / cap.take(at)
    np.copyto(t, np.inf, where=np.isnan(t))
    return t


class Slowest:
    """Per flow, the largest of the times added so far (NaN and infinity: infinite) and the
    position of the first time that had it: an argmax over stacked times, without the stack."""

    def __init__(self):
        self.time: np.ndarray | None = None
        self.code: np.ndarray | None = None
        self.count = 0

    def add(self, t: np.ndarray, nan_free: bool = False) -> None:
        """`nan_free`: t holds no NaN (_resource_time made them infinite)."""
        if not nan_free:
            np.copyto(t, np.inf, where=np.isnan(t))  # (t is a temporary of the caller's; +inf stays +inf)
        if self.time is None:
            self.time, self.code = t, np.zeros(len(t), dtype=np.int8)
        else:
            self.code[t > self.time] = self.count  # strictly: the first of equal times keeps it
            np.maximum(self.time, t, out=self.time)
        self.count += 1


def every_path_open(fabric: Fabric, src_pod, dst_pod, cross_pod) -> bool:
    """Whether require_paths would find every flow a path without looking at each flow's leaves: every
    leaf a NIC hangs from and every pod has up-link capacity, and no flow that crosses pods leaves one
    of no pod. (Every flow starts and ends at a NIC: its leaves are among those.)"""
    # what holds for the whole fabric at its current rates is kept with it (every pattern asks)
    if not fabric.remembered("leaves_open", (fabric.nic_leaf, fabric.leaf_up_Bps), lambda: _leaves_open(fabric)):
        return False  # (a NIC under no leaf, or a leaf with no way up: each flow looked at)
    if not cross_pod.any():
        return True
    if not fabric.remembered("pods_open", (fabric.pod_up_Bps,), lambda: bool(fabric.pod_up_Bps.min() > 0)):
        return False
    # every leaf a NIC hangs from in a pod (kept with the fabric): no flow leaves one of no pod
    if fabric.remembered("nic_leaves_in_pods", (fabric.nic_leaf, fabric.switch_pod),
                         lambda: _nic_leaves_in_pods(fabric)):
        return True
    return not (cross_pod & ((src_pod < 0) | (dst_pod < 0))).any()


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


def require_paths(fabric: Fabric, src_leaf, dst_leaf, src_pod, dst_pod) -> None:
    """Bad input, not an endless step: traffic between leaves (or pods) that no cable joins."""
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
