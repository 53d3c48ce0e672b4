"""Collectives on the real fabric: NCCL-like algorithm choice, latency and bandwidth.

time = latency(algorithm, protocol, ranks, nodes, hops) + bandwidth term, where the
bandwidth term is the most loaded resource on the group's path when every group of the
dimension runs at once (all DP groups reduce together, all TP groups gather together):
the GPU's scale-up link, its NIC, its leaf's up-links, its pod's up-links. So rails,
oversubscription and shared up-links change the answer. Latency follows NCCL's tuning
model (src/graph/tuning.cc): base + per-step latency x steps, with the switch hops added.
Algorithms: ring, tree (double binary tree between nodes), nvls (NVSwitch reduction on
Hopper and later, NVLS-tree across nodes), collnet (SHARP in the switches, when every leaf
of the group has it). Sizes follow nccl-tests: all_reduce S per rank; all_gather and
reduce_scatter S = the whole gathered buffer; all_to_all S = what one rank sends in all.

This module costs a dimension's collectives class by class of alike groups and keeps the costs; the
candidates NCCL weighs (algorithms, protocols, their latency) are collective_choice.py's, the latency
collective_latency.py's, the bandwidth term and NCCL's estimate collective_bandwidth.py's, each group's
seconds per byte and their update after a link edit pattern_times.py's, the flows each traffic pattern
sends between servers group_flows.py's, where a dimension's groups sit on the fabric group_shape.py's.
"""
from __future__ import annotations

import math

import numpy as np

from .collective_bandwidth import GroupBandwidth
from .collective_choice import AlgorithmChoice
from .collective_latency import GroupLatency
from .constants import EngineConstants
from .fabric import Fabric
from .flows import SPARSE_SHARE, LinkBytes, Loads, ScaledLinkBytes
from .group_shape import group_shape
from .pattern_times import PatternTimes, UnitTimes, pattern_of

# send_recv: each pair's members send to each other (and a pipeline's pairs all at once, every stage to
# both neighbours); send: each group's member 0 sends to member 1, every group at once (one direction)
PRIMITIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv", "send", "broadcast")
ALGORITHMS = ("ring", "tree", "nvls", "collnet", "pat")
PROTOCOLS = ("LL", "LL128", "Simple")


def bus_factor(primitive: str, n: int) -> float:
    """nccl-tests busbw / algbw."""
    if n <= 1:
        return 0.0
    if primitive == "all_reduce":
        return 2 * (n - 1) / n
    if primitive in ("all_gather", "reduce_scatter", "all_to_all"):
        return (n - 1) / n
    return 1.0


class CollectiveCost:
    """The time of one collective on its GPUs, split into latency and bandwidth, with what limits it."""
    time_s: float
    algorithm: str
    protocol: str
    latency_s: float
    bandwidth_s: float
    bottleneck: str  # resource that limits the bandwidth term
    bottleneck_links: list[int]  # link indices of that resource
    utilization: float  # of the bottleneck while the collective runs
    classes: int
    link_bytes: "LinkBytes | None"  # the cables it loads and their bytes

    __slots__ = ("time_s", "algorithm", "protocol", "latency_s", "bandwidth_s", "bottleneck",
                 "bottleneck_links", "utilization", "classes", "link_bytes")

    def __init__(self, time_s: float, algorithm: str, protocol: str, latency_s: float, bandwidth_s: float,
                 bottleneck: str, bottleneck_links: list[int], utilization: float, classes: int,
                 link_bytes: "LinkBytes | None" = None) -> None:
        self.time_s = time_s
        self.algorithm = algorithm
        self.protocol = protocol
        self.latency_s = latency_s
        self.bandwidth_s = bandwidth_s
        self.bottleneck = bottleneck
        self.bottleneck_links = bottleneck_links
        self.utilization = utilization
        self.classes = classes
        self.link_bytes = link_bytes


def cannot_win(latency_s: float, best_estimate_s: float) -> bool:
    """Whether an algorithm and protocol of this latency cannot beat the best NCCL estimate so far: its
    estimate is the latency plus a bandwidth time of 0 or more, and only a lower one replaces the best.
    Its bandwidth is then not costed (most pairs, for a small collective)."""
    return latency_s >= best_estimate_s


class CollectiveModel:
    """Costs collectives of one dimension's groups; caches per (primitive, size, algorithm)."""

    def __init__(self, fabric: Fabric, members: np.ndarray, k: EngineConstants, nvls: bool,
                 name: str = "group", link_bytes: bool = True):
        """`link_bytes=False`: costs without the bytes each cable carries (a plan search reads only
        times; at 16k GPUs those arrays were a third of a search worker's memory)."""
        self.fabric = fabric
        self.k = k
        self.name = name
        self.keeps_link_bytes = link_bytes
        self.shape = group_shape(fabric, members)
        self.latency = GroupLatency(fabric, self.shape.members, k)  # NCCL's latency per algorithm and protocol
        self.bandwidth = GroupBandwidth(fabric, self.shape, k)  # the bandwidth term and NCCL's estimate of it
        self.choice = AlgorithmChoice(fabric, self.shape, k, nvls, self.latency)  # what NCCL weighs
        self._cache: dict[tuple, CollectiveCost] = {}
        self._per_part: dict[tuple, list[float]] = {}  # cost_per_part's, by (primitive, size, parts)
        self._uniform: dict[str, tuple] = {}  # pattern -> (its unit times' arrays, uniform_classes)
        self._bottlenecks: dict[tuple, tuple[str, list[int]]] = {}  # _bottleneck's, by resource
        # each group's seconds per byte by pattern, kept at the fabric's rating
        self.times = PatternTimes(fabric, self.shape, k, link_bytes)

    def invalidate_capacities(self) -> None:
        """Link rates changed. Nothing to drop: every cost compares the rating it was made at with
        the fabric's (PatternTimes.up_to_date) and times again only the flows on what changed."""

    def forget_routes(self) -> None:
        """Drop the kept routes and flow times (a plan search never re-rates a link: they would
        only take memory); a re-rating then costs the patterns that had them afresh."""
        self.times.forget_routes()

    def _up_to_date(self) -> None:
        """Bring the unit times to the fabric's current rating; drop the costs they no longer give."""
        try:
            stale = self.times.up_to_date()
        except BaseException:  # the next call costs afresh
            self._cache.clear()
            self._per_part.clear()
            raise
        for pattern in stale:
            for kept in (self._cache, self._per_part):
                for key in [key for key in kept if pattern_of(key[0]) == pattern]:
                    del kept[key]

    # ---- the cost ----
    def cost(self, primitive: str, size_bytes: float, algorithm: str = "auto") -> CollectiveCost:
        self._up_to_date()
        key = (primitive, float(size_bytes), algorithm)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        sh = self.shape
        n = sh.members.shape[1]
        if n <= 1 or size_bytes <= 0:
            result = CollectiveCost(0.0, "none", "none", 0.0, 0.0, "", [], 0.0, len(sh.classes))
            self._cache[key] = result
            return result
        pattern = pattern_of(primitive)
        unit = self.times.unit(pattern)
        bus_bytes = size_bytes * (bus_factor(primitive, n) if primitive != "send_recv" else 1.0)
        result = self._slowest_class(primitive, size_bytes, algorithm, pattern, unit.scale_s, unit.net_s, unit.loads,
                                     bus_bytes, self.uniform_classes(pattern, unit))
        self._cache[key] = result
        return result

    def uniform_classes(self, pattern: str, unit: UnitTimes) -> list[tuple | None]:
        """Per class of groups: (scale-up, network seconds per byte) when all its groups have the same
        finite pair (a symmetric fabric's usual case), else None. Kept per pattern while its unit
        times are the same arrays (a re-rating or a new costing makes new ones)."""
        scale_t, net_t = unit.scale_s, unit.net_s
        hit = self._uniform.get(pattern)
        if hit is not None and hit[0] is scale_t and hit[1] is net_t:
            return hit[2]
        # every group of every class alike (a regular layout's usual case): one look at the whole arrays
        known = unit.scale_alike, unit.net_alike
        rows = [_alike_pair(scale_t, net_t, *known)] * len(self.shape.classes) if len(scale_t) else []
        if rows and rows[0] is None:
            rows = [_alike_pair(scale_t[groups], net_t[groups], *known) for groups in self.shape.classes.values()]
        self._uniform[pattern] = (scale_t, net_t, rows)
        return rows

    def _slowest_class(self, primitive, size_bytes, algorithm, pattern, scale_t, net_t, loads, bus_bytes, uniform):
        sh = self.shape
        worst = None
        # classes of alike groups that differ only in their tier (the DP groups under one leaf, one pod,
        # across pods) share each candidate's bandwidth terms: worked out once per call
        alike_times: dict[tuple, dict] = {}
        choice = self.choice
        for (N, groups, first), candidates, alike in zip(choice.heads, choice.menu(primitive, algorithm, size_bytes),
                                                        uniform):
            if alike is not None:
                best = self._alike_best(primitive, size_bytes, candidates, N, first, alike, bus_bytes, alike_times)
            else:
                best = self._class_best(primitive, size_bytes, candidates, N, groups, scale_t, net_t, bus_bytes)
            if best is not None and (worst is None or best[0] > worst[0]):
                worst = best
        total, algo, proto, lat, bw, group, net_bound, _ = worst
        resource, links = self._bottleneck(group, *(self.times.bottleneck(pattern, group) if net_bound else (0, 0)))
        utilization = 1.0 if bw > 0 else 0.0
        link_bytes = self._link_bytes(loads, bus_bytes, algo) if loads is not None and self.keeps_link_bytes else None
        return CollectiveCost(total, algo, proto, lat, bw, resource, links, utilization * (bw / total if total else 0),
                              len(sh.classes), link_bytes)

    def _bottleneck(self, group: int, code: int, index: int) -> tuple[str, list[int]]:
        """The name and cables of what limits `group`'s collective: the network resource of `code`
        (flows.flow_times's, > 0) and `index`, else its first member's scale-up. Kept per model by
        resource: a dimension's collectives of one pattern mostly stop at the same one (read only:
        the cables' list is shared by the costs that name it)."""
        if code > 0:
            key = (code, index)
        else:
            f = self.fabric
            key = (0, int(f.gpu_node[self.shape.members[group, 0]]))
        hit = self._bottlenecks.get(key)
        if hit is None:
            if code > 0:
                hit = resource_name(self.fabric, code, key[1])
            else:
                node = key[1]
                hit = (f"scale-up of {f.node_ids[node]} ({f.node_scale_up_kind[node]})", [])
            self._bottlenecks[key] = hit
        return hit

    def _alike_best(self, primitive, size_bytes, candidates, N, first, alike, bus_bytes, alike_times):
        """_class_best of a class whose groups all take the same time, costed on its first group's
        Python floats (`first`: its first group's index): the same products and quotients as numpy's,
        and numpy's argmax picks the first of equals (a few numpy calls per algorithm and protocol were
        most of a plan's DP costing).
        `alike_times`: what this call has worked out of each algorithm and protocol's bandwidth terms
        (the larger, NCCL's estimate of it or None, whether the network bounds it), by (servers, the
        pair of seconds per byte), then by (algorithm, protocol): the classes of other tiers reuse it."""
        shared = alike_times.get((N, alike))
        if shared is None:
            shared = alike_times[(N, alike)] = {}
        best = best_terms = None  # NCCL's pick so far, and its bandwidth terms
        best_estimate = 0.0
        n, (scale, net), times_of = self.shape.members.shape[1], alike, self.bandwidth.alike_times
        for candidate in candidates:
            algorithm_name, protocol, lat = candidate
            if best is not None and lat >= best_estimate:  # cannot_win
                continue
            terms = shared.get((algorithm_name, protocol))
            if terms is None:
                t_scale, t_net, believed = times_of(algorithm_name, protocol, primitive, N, n, scale, net, size_bytes,
                                                    bus_bytes)
                terms = shared[(algorithm_name, protocol)] = (
                    t_scale if t_scale > t_net else t_net, None if believed is None else float(believed),
                    t_net >= t_scale)
            # NCCL picks by its own estimate; asked for one algorithm, only the protocol is chosen
            estimate = lat + terms[0] if terms[1] is None else lat + terms[1]
            if best is None or estimate < best_estimate:
                best_estimate, best, best_terms = estimate, candidate, terms
        if best is None:
            return None
        algorithm_name, protocol, lat = best
        both, _, net_bound = best_terms
        return lat + both, algorithm_name, protocol, lat, both, first, net_bound, best_estimate

    def _class_best(self, primitive, size_bytes, candidates, N, groups, scale_t, net_t, bus_bytes):
        """NCCL's pick for one class of groups (those of `groups`) among its `candidates`, costed on its
        slowest group: (time, algorithm, protocol, latency, bandwidth term, that group, whether the
        network bounds it, NCCL's estimate), or None when no algorithm is offered."""
        n = self.shape.members.shape[1]
        best = None
        scale_in, net_in = scale_t[groups], net_t[groups]
        for algorithm_name, protocol, lat in candidates:
            if best is not None and cannot_win(lat, best[7]):
                continue
            t_scale, t_net, believed = self.bandwidth.times(algorithm_name, protocol, primitive, N, n,
                                                            scale_in, net_in, size_bytes, bus_bytes)
            both = np.maximum(t_scale, t_net)
            i = int(np.argmax(both))
            both, net_bound = float(both[i]), bool(t_net[i] >= t_scale[i])
            believed_max = None if believed is None else float(np.max(believed))
            total = lat + both
            estimate = total if believed_max is None else lat + float(believed_max)
            if best is None or estimate < best[7]:
                best = (total, algorithm_name, protocol, lat, both, int(groups[i]), net_bound, estimate)
        return best

    def cost_per_part(self, primitive: str, size_bytes: float, parts: int) -> list[float]:
        """The groups in rounds of `parts` (group g in part g % parts: the pipeline's pairs, pipeline
        after pipeline, one per stage boundary): per part, the collective's time on that part's groups
        while every group runs it at once (under the loads of all of them), its slowest class as
        `cost` takes over all groups. A part without groups takes 0."""
        self._up_to_date()
        key = (primitive, float(size_bytes), parts)
        hit = self._per_part.get(key)
        if hit is not None:
            return hit
        sh = self.shape
        times = [0.0] * parts
        if sh.members.shape[1] > 1 and size_bytes > 0:
            pattern = pattern_of(primitive)
            unit = self.times.unit(pattern)
            scale_t, net_t = unit.scale_s, unit.net_s
            n = sh.members.shape[1]
            bus_bytes = size_bytes * (bus_factor(primitive, n) if primitive != "send_recv" else 1.0)
            alike_times: dict[tuple, dict] = {}
            for class_index, ((class_key, groups), alike) in enumerate(
                    zip(sh.classes.items(), self.uniform_classes(pattern, unit))):
                part = groups % parts
                present = np.bincount(part, minlength=parts).nonzero()[0].tolist()
                N, _, tier = class_key
                if alike is not None:  # every group of the class takes the same time: costed once
                    candidates = self.choice.candidates(primitive, "auto", class_index, n, N, tier, groups, size_bytes)
                    best = self._alike_best(primitive, size_bytes, candidates, N, int(groups[0]), alike, bus_bytes,
                                            alike_times)
                    at = {p: best for p in present}
                else:  # each part on its own groups of the class
                    at = {}
                    for p in present:
                        in_part = groups[part == p]
                        candidates = self.choice.candidates(primitive, "auto", class_index, n, N, tier, in_part,
                                                            size_bytes)
                        at[p] = self._class_best(primitive, size_bytes, candidates, N, in_part, scale_t, net_t,
                                                 bus_bytes)
                for p, best in at.items():
                    if best is not None and best[0] > times[p]:
                        times[p] = best[0]
        self._per_part[key] = times
        return times

    def _link_bytes(self, loads: "Loads", bus_bytes: float, algorithm: str) -> "LinkBytes":
        """Bytes each cable carries (busiest direction) for this collective, all groups at once:
        the pattern's bytes per cable for one bus byte (kept with its loads), times the size."""
        if loads.per_link is None:
            loads.per_link = link_bytes_per_bus_byte(self.fabric, loads)
        unit = loads.per_link
        return ScaledLinkBytes(unit, bus_bytes * (0.5 if algorithm == "collnet" else 1.0))


def _alike_pair(scale_t: np.ndarray, net_t: np.ndarray, scale: float | None = None,
                net: float | None = None) -> tuple[float, float] | None:
    """(scale-up, network seconds per byte) as Python floats when every group of these (at least
    one) has that same finite pair, else None. `scale`, `net`: what every group takes where that is
    known (UnitTimes.scale_alike, net_alike), not looked at again."""
    s0 = float(scale_t[0]) if scale is None else scale
    n0 = float(net_t[0]) if net is None else net
    # (counting the bools of != : half the time of all() on those of ==)
    alike = (math.isfinite(s0) and math.isfinite(n0) and (scale is not None or not np.count_nonzero(scale_t != s0))
             and (net is not None or not np.count_nonzero(net_t != n0)))
    return (s0, n0) if alike else None


def resource_name(f: Fabric, code: int, index: int) -> tuple[str, list[int]]:
    """The name of a bottleneck (flows.flow_times's resource code and index) and its cables."""
    if code in (1, 2):
        node = f.node_ids[f.nic_node[index]]
        local = index - f.node_nic_base[f.nic_node[index]]
        link = int(f.nic_link[index])
        return f"NIC {node}:nic{local} {'send' if code == 1 else 'receive'}", [link] if link >= 0 else []
    if code in (3, 4):
        return (f"up-links of {f.switch_ids[index]} ({'up' if code == 3 else 'down'})",
                f.uplinks_of(index))
    return f"pod {index} spine-core links ({'up' if code == 5 else 'down'})", f.pod_links_of(index)


def link_bytes_per_bus_byte(f: Fabric, loads: Loads) -> LinkBytes:
    """Only the NICs and tiers the pattern loads are visited: a job's view of a big fabric
    touches a small part of its cables."""
    nic_b = np.maximum(loads.nic_up, loads.nic_down)
    tier_loads = (("leaf", np.maximum(loads.leaf_up, loads.leaf_down)),
                  ("pod", np.maximum(loads.pod_up, loads.pod_down)))
    if len(nic_b) == len(f.nic_link) and _cables_distinct(f):
        # each cable's bytes come from one NIC or one up-link: written in place, nothing to add up
        # (a third of the time of gathering the loaded NICs and adding by cable); an up-link of an
        # unloaded leaf or pod is written its 0 (its rate is finite: _cables_distinct)
        per_cable = np.zeros(len(f.link_ids))
        per_cable[f.nic_link] = nic_b
        for tier, tier_load in tier_loads:
            links, owner, link_cap, owner_cap = _tier_cables(f, tier)
            if len(links) and len(tier_load):
                per_cable[links] = tier_load.take(owner) * link_cap / owner_cap
    else:
        # (nonzero of a float array tests each value in a function call: of the bools of != 0, 3x faster)
        nics = (nic_b != 0).nonzero()[0]
        if not f.remembered("every_nic_cabled", (f.nic_link,), lambda: bool((f.nic_link >= 0).all())):
            nics = nics[f.nic_link[nics] >= 0]
        index, values = [f.nic_link.take(nics)], [nic_b.take(nics)]  # (take: twice the speed of indexing)
        for tier, tier_load in tier_loads:
            links, owner, link_cap, owner_cap = _tier_cables(f, tier)
            if len(links) and len(tier_load):
                owner_load = tier_load.take(owner)
                loaded = owner_load > 0
                if not loaded.all():  # (a leaf or pod every up-link of which carries bytes: all of them kept)
                    links, owner_load = links[loaded], owner_load[loaded]
                    link_cap, owner_cap = link_cap[loaded], owner_cap[loaded]
                index.append(links)
                values.append(owner_load * link_cap / owner_cap)
        # a bundle gives several NICs one cable: bincount adds them (linear in the fabric's cables,
        # where sorting the indices would cost more on a big job)
        per_cable = np.bincount(np.concatenate(index), np.concatenate(values), minlength=len(f.link_ids))
    # (counted first: the indices are needed only when few cables carry bytes)
    # (counted on the bools of != 0: a float array's count tests each value in a function call, 3x slower)
    if np.count_nonzero(per_cable != 0) >= SPARSE_SHARE * per_cable.size:
        return LinkBytes(None, per_cable)
    cables = (per_cable != 0).nonzero()[0]
    return LinkBytes(cables, per_cable[cables])


def _cables_distinct(f: Fabric) -> bool:
    """Whether every NIC has a cable of its own (no bundle, none missing), no up-link cable is a
    NIC's, and every up-link's rate is finite: kept with the fabric's cabling and rating."""
    def make() -> bool:
        cables = np.concatenate((f.nic_link, f._uplink[0], f._podlink[0]))
        return (bool((f.nic_link >= 0).all()) and (not cables.size or int(np.bincount(cables).max()) <= 1)
                and bool(np.isfinite(f.link_cap_Bps[cables]).all()))
    return f.remembered("nic_and_uplink_cables_distinct", (f.nic_link, f._uplink[0], f._podlink[0], f.link_cap_Bps),
                        make)


def _tier_cables(f: Fabric, tier: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A tier's up-link cables, the leaf (pod) each leaves, each cable's rate and its owner's up-link
    capacity (at least 1e-30): kept with the fabric's rating (every pattern of every plan reads them)."""
    (links, owner), tier_cap = (f._uplink, f.leaf_up_Bps) if tier == "leaf" else (f._podlink, f.pod_up_Bps)
    if not len(tier_cap):  # (no owner to read a capacity of)
        return links, owner, links, links
    return f.remembered(("tier_cables", tier), (links, owner, f.link_cap_Bps, tier_cap),
                        lambda: (links, owner, f.link_cap_Bps[links], np.maximum(tier_cap[owner], 1e-30)))
