"""The bandwidth term of a dimension's collectives per NCCL algorithm and protocol, and NCCL's own
estimate of it (src/graph/tuning.cc), by which NCCL chooses: the physics and the estimate differ
for LL's caps, the tree's and NVLS's models and LL128 across servers."""
from __future__ import annotations

import functools

import numpy as np

from .constants import EngineConstants
from .fabric import Fabric
from .flows import kind_mask

# NCCL's LL caps inside one server before the releases that raised them (tuning.cc llMaxBws): Hopper took
# Ampere's 87.7 GB/s until 2.21 (141 from it), Blackwell took Hopper's 141 until 2.25 (282 from it).
NCCL_LL_CAP_HISTORY = ((2.21, 87.7), (2.25, 141.0))
# LL128's data share of a network link's rate: 120 of each 128-byte line, less its flags (NCCL tuning.cc
# rates the ring's LL128 at 0.92 of Simple)
LL128_NETWORK_SHARE = 0.92
# NCCL's estimate of the tree's LL128 bus bandwidth inside one node: 7/9 of the tree's Simple (tuning.cc,
# ncclTopoTuneModel: busBw * (nNodes == 1 ? 7.0/9.0 : 120.0/128.0)), below the ring's 0.92
TREE_LL128_ONE_NODE_SHARE = 7.0 / 9.0


def _btree_parent(rank: int, nranks: int) -> int:
    """Parent of `rank` in NCCL's binary tree (src/graph/trees.cc, ncclGetBtree): -1 for the root 0."""
    if rank == 0:
        return -1
    bit = 1
    while bit < nranks and not bit & rank:
        bit <<= 1
    up = (rank ^ bit) | (bit << 1)
    return up if up < nranks else rank ^ bit


@functools.lru_cache(maxsize=256)
def dtree_max_edges(n_nodes: int) -> int:
    """The most tree edges one node has over NCCL's double binary tree between `n_nodes` servers.

    Each of the two trees carries half the buffer, and a node sends (and receives) its half once per
    edge: to its parent (reduce) and to each child (broadcast). So the busiest node's NICs carry
    S x edges / 2 each way: S on 2 nodes, 1.5 S on 3, 2 S on 4 or more, where a ring carries
    2 (n-1)/n S. The second tree mirrors the first (rank N-1-r) for an even count and shifts it by
    one for an odd count (trees.cc, ncclGetDtree)."""
    if n_nodes <= 1:
        return 0
    degree = [0] * n_nodes
    for r in range(1, n_nodes):
        degree[r] += 1
        degree[_btree_parent(r, n_nodes)] += 1
    if n_nodes % 2:
        return max(degree[r] + degree[(r - 1) % n_nodes] for r in range(n_nodes))
    return max(degree[r] + degree[n_nodes - 1 - r] for r in range(n_nodes))


# A class of alike groups is costed on floats by a recipe per algorithm, protocol, primitive and server
# count (GroupBandwidth.alike_times): the bandwidth terms scaled (and divided by a factor), CollNet's, or
# the general path (NVLS, the hierarchical tree); NCCL's estimate the physics, Simple's, a share of
# Simple's, or LL's.
_SCALED, _COLLNET, _GENERAL = 0, 1, 2
_PHYSICS, _SIMPLE, _SHARE, _LL = 0, 1, 2, 3


def _maximum(a, b):
    """np.maximum, on two Python floats without numpy (a class of alike groups is costed on floats)."""
    if type(a) is float and type(b) is float:
        if a != a:  # NaN wins, as in np.maximum
            return a
        return b if b > a or b != b else a
    return np.maximum(a, b)


class GroupBandwidth:
    """Per algorithm and protocol, the scale-up and network seconds of a class of a dimension's groups
    from their seconds per bus byte, and NCCL's estimate of the larger (`times`)."""

    def __init__(self, fabric: Fabric, shape, k: EngineConstants):
        self.fabric = fabric
        self.shape = shape  # the groups' GroupShape (group_shape.py)
        self.k = k
        self._shares: dict[str, tuple[float, float]] | None = None  # _protocol_shares
        self._hierarchical_memo: bool | None = None  # _hierarchical
        self._ll_cap: dict[int, float] = {}  # server count -> _nccl_ll_cap_gbps
        self._ll_rates: dict[tuple[str, int], tuple[float, float]] = {}  # _nccl_protocol_rate's, by (algorithm, N)
        self._recipes: dict[tuple, tuple] = {}  # _float_recipe's, by (algorithm, protocol, N, tree's primitive)

    def _nccl_protocol_rate(self, algorithm: str, protocol: str, N: int) -> tuple[float, float]:
        """NCCL's estimate of the LL protocol's bus bandwidth (tuning.cc, ncclTopoTuneModel) as (share of
        the algorithm's Simple bus bandwidth, cap in B/s): LL moves 4 data bytes per 8-byte line and is
        capped per GPU architecture inside a server and per server count across. Kept per algorithm
        and server count (every LL candidate of every size asks)."""
        hit = self._ll_rates.get((algorithm, N))
        if hit is None:
            hit = self._ll_rates[(algorithm, N)] = self._ll_rate_of(algorithm, N)
        return hit

    def _ll_rate_of(self, algorithm: str, N: int) -> tuple[float, float]:
        k = self.k
        if algorithm == "tree":
            factor = k.nccl_tree_ll_bus_factor
        else:
            factor = k.nccl_ll_bus_factor if k.nccl_version >= 2.21 else k.nccl_ll_bus_factor_legacy
        return factor, self._nccl_ll_cap_gbps(N) * 1e9

    def _nccl_ll_cap_gbps(self, N: int) -> float:
        """NCCL's cap on LL's estimated bus bandwidth (tuning.cc llMaxBws): across servers by their count,
        inside one by the GPU architecture, as the release named by nccl_version has it. Fixed by the
        constants and the servers' parts: kept per server count (every LL candidate asks)."""
        hit = self._ll_cap.get(N)
        if hit is None:
            hit = self._ll_cap[N] = self._ll_cap_of(N)
        return hit

    def _ll_cap_of(self, N: int) -> float:
        k = self.k
        if N == 2:
            return k.nccl_ll_max_bus_gbps_two_servers
        if N > 2:
            return k.nccl_ll_max_bus_gbps_more_servers
        f = self.fabric
        caps = f.node_nccl_ll_max_bus_gbps
        if caps is None:
            cap = 141.0
        else:
            # every server of the same cap (most fabrics): that cap, not the groups' servers' looked up
            same = f.remembered("ll_cap_alike", (caps,), lambda: len(caps) > 0 and bool((caps == caps[0]).all()))
            cap = float(caps[0]) if same else float(np.min(caps[f.gpu_node[self.shape.members[:, 0]]]))
        for release, ceiling in NCCL_LL_CAP_HISTORY:
            if k.nccl_version < release:
                return min(cap, ceiling)
        return cap

    def times(self, algorithm, protocol, primitive, N, n, scale_t, net_t, size, bus_bytes):
        """(scale-up seconds, network seconds, NCCL's own estimate of the larger of them or None when
        it is the same) per group for this algorithm and protocol. NCCL chooses by its estimate
        (src/graph/tuning.cc); the collective then takes the physical time."""
        k = self.k
        if algorithm == "nvls":
            g = max(n // max(N, 1), 1)  # members per server (NVLink domain)
            # Each GPU moves (1 + 1/g) S through the switch at its NVLS rate (constants: nvls_efficiency).
            t_scale = size * (1 + 1 / g) / self._nvls_rate()  # a float for a class of alike groups
            if isinstance(scale_t, np.ndarray):
                t_scale = np.full_like(scale_t, t_scale)
            if N == 1:
                return t_scale, net_t * 0.0, None
            # NVLS_TREE: the servers' reduced shards go over NCCL's double binary tree of NICs.
            t_scale = t_scale / k.nvls_tree_efficiency
            t_net = net_t * size * dtree_max_edges(N) / 2
            # tuning.cc: NVLS_TREE busBw = min(bwIntra, nNodes <= 2 ? bwInter : bwInter / 2), taken as algbw
            believed = _maximum(t_scale, net_t * size * (1 if N <= 2 else 2))
            return t_scale, t_net, believed
        proto_scale, proto_net = self._protocol_shares()[protocol]
        if algorithm == "tree" and N > 1 and primitive == "all_reduce" and self._hierarchical():
            g = max(n // max(N, 1), 1)
            t_scale, t_net, simple_believed = self._tree_bandwidth(N, g, scale_t, net_t, size, proto_scale, proto_net)
            return t_scale, t_net, self._protocol_believed(algorithm, protocol, N, simple_believed, bus_bytes, size)
        t_scale = scale_t * bus_bytes / proto_scale
        t_net = net_t * bus_bytes / proto_net
        if algorithm == "pat":  # the ring's bytes, in log2 steps of ever larger pieces, at 0.75 of its rate
            return t_scale / k.nccl_pat_bandwidth_factor, t_net / k.nccl_pat_bandwidth_factor, None
        if algorithm == "collnet":
            return t_scale, t_net * 0.5 * N / max(N - 1, 1), None  # each NIC sends and receives its share once
        # NCCL's estimate for this protocol from the algorithm's Simple time, which is the physics
        simple = _maximum(scale_t, net_t) * bus_bytes
        if algorithm == "tree":
            t_scale = t_scale / k.nccl_tree_bandwidth_factor
            t_net = t_net / k.nccl_tree_bandwidth_factor
            simple = simple / k.nccl_tree_bandwidth_factor
        return t_scale, t_net, self._protocol_believed(algorithm, protocol, N, simple, bus_bytes, size)

    def alike_times(self, algorithm, protocol, primitive, N, n, scale, net, size, bus_bytes):
        """`times` of one group's Python floats (a class of alike groups): the same products and
        quotients in the same order, with what depends only on the algorithm, protocol, primitive and
        servers read from a recipe kept per model (a plan asks ~40 times, a few recipes)."""
        # the primitive changes a recipe only for the tree (all_reduce's may be hierarchical): the others'
        # are shared between the primitives
        key = (algorithm, protocol, N, primitive if algorithm == "tree" else None)
        recipe = self._recipes.get(key)
        if recipe is None:
            recipe = self._recipes[key] = self._float_recipe(algorithm, protocol, primitive, N)
        kind, proto_scale, proto_net, divisor, estimate, share, cap_Bps = recipe
        if kind == _GENERAL:
            return self.times(algorithm, protocol, primitive, N, n, scale, net, size, bus_bytes)
        t_scale = scale * bus_bytes / proto_scale
        t_net = net * bus_bytes / proto_net
        if kind == _COLLNET:
            return t_scale, t_net * 0.5 * N / max(N - 1, 1), None
        if divisor is not None:
            t_scale = t_scale / divisor
            t_net = t_net / divisor
        if estimate == _PHYSICS:
            return t_scale, t_net, None
        simple = _maximum(scale, net) * bus_bytes
        if divisor is not None:
            simple = simple / divisor
        if estimate == _SIMPLE:
            return t_scale, t_net, simple
        if estimate == _SHARE:
            return t_scale, t_net, simple / share
        capped_bytes = bus_bytes if algorithm == "ring" else 2 * size
        return t_scale, t_net, _maximum(simple / share, capped_bytes / cap_Bps)

    def _float_recipe(self, algorithm, protocol, primitive, N) -> tuple:
        """(kind, protocol's scale-up share, its network share, the divisor of both terms or None, the
        kind of NCCL's estimate, its share of Simple's (LL: its factor), LL's cap): `times`'s branches,
        taken once."""
        k = self.k
        if algorithm == "nvls" or (algorithm == "tree" and N > 1 and primitive == "all_reduce"
                                   and self._hierarchical()):
            return _GENERAL, None, None, None, None, None, None
        proto_scale, proto_net = self._protocol_shares()[protocol]
        if algorithm == "collnet":
            return _COLLNET, proto_scale, proto_net, None, _PHYSICS, None, None
        if algorithm == "pat":
            return _SCALED, proto_scale, proto_net, k.nccl_pat_bandwidth_factor, _PHYSICS, None, None
        divisor = k.nccl_tree_bandwidth_factor if algorithm == "tree" else None
        # as _protocol_believed chooses
        physics = algorithm == "ring" or (algorithm == "tree" and N == 1)
        if protocol == "Simple":
            return _SCALED, proto_scale, proto_net, divisor, _PHYSICS if physics else _SIMPLE, None, None
        if protocol == "LL128":
            if algorithm == "tree" and N == 1:
                return _SCALED, proto_scale, proto_net, divisor, _SHARE, TREE_LL128_ONE_NODE_SHARE, None
            estimate = _PHYSICS if physics else _SHARE
            return _SCALED, proto_scale, proto_net, divisor, estimate, LL128_NETWORK_SHARE, None
        factor, cap_Bps = self._nccl_protocol_rate(algorithm, protocol, N)
        return _SCALED, proto_scale, proto_net, divisor, _LL, factor, cap_Bps

    def _protocol_believed(self, algorithm, protocol, N, simple_believed, bus_bytes, size):
        """NCCL's estimated bandwidth time of `protocol` from its estimate for Simple (None: the physics).
        The cap is on NCCL's bus bandwidth, whose algbw is busBw x n / steps for the ring (the bus bytes'
        time) and busBw / 2 for the tree."""
        physics = algorithm == "ring" or (algorithm == "tree" and N == 1)
        if protocol == "Simple":
            return None if physics else simple_believed
        if protocol == "LL128":
            if algorithm == "tree" and N == 1:  # tuning.cc: the tree's LL128 in one node is 7/9 of its Simple
                return simple_believed / TREE_LL128_ONE_NODE_SHARE
            # NCCL's 0.92 (ring) or 120/128 (tree across servers) of Simple: the engine's own LL128 share of a
            # network link; on NVLink the measured LL128 rate stands for the ring's (the estimate is the physics)
            return None if physics else simple_believed / LL128_NETWORK_SHARE
        factor, cap_Bps = self._nccl_protocol_rate(algorithm, protocol, N)
        capped_bytes = bus_bytes if algorithm == "ring" else 2 * size
        return _maximum(simple_believed / factor, capped_bytes / cap_Bps)

    def _protocol_shares(self) -> dict[str, tuple[float, float]]:
        """Per protocol: (its share of the scale-up links' Simple rate, its share of a network link's)."""
        shares = self._shares
        if shares is None:
            k = self.k
            shares = self._shares = {
                "LL": (k.nvlink_ll_efficiency / k.nvlink_efficiency, 0.5),
                "LL128": (k.nvlink_ll128_efficiency / k.nvlink_efficiency, LL128_NETWORK_SHARE),
                "Simple": (k.nvlink_efficiency / k.nvlink_efficiency, 1.0)}
        return shares

    def _tree_bandwidth(self, N, g, scale_t, net_t, size, proto_scale, proto_net):
        """NCCL's tree all-reduce across servers: a chain through the GPUs of each server (every GPU
        inside the chain receives and sends the buffer once up, reducing, and once down, broadcasting:
        2 S each way; S with 2 GPUs), and the double binary tree between servers, whose busiest node's
        NICs carry S x edges / 2 each way (dtree_max_edges), against the ring's 2 (n-1)/n S. Both at the
        links' own efficiencies: NCCL's 0.92 for the tree is its estimate (tuning.cc), which only chooses."""
        k = self.k
        intra_share = (g - 1) / g  # the ring's share of its bus bytes on the scale-up links (_unit_times)
        chain_bytes = 0.0 if g == 1 else size * (2.0 if g > 2 else 1.0)
        per_byte = scale_t / intra_share if g > 1 else scale_t * 0.0  # seconds per byte through one GPU's links
        t_scale = per_byte * chain_bytes / proto_scale
        t_net = net_t * size * dtree_max_edges(N) / 2 / proto_net
        # tuning.cc: tree busBw = nChannels x (nNodes <= 2 ? bwIntra : bwInter) x 0.92, and algbw = busBw / 2
        ring_bus_rate = per_byte if N <= 2 and g > 1 else _maximum(scale_t, net_t)
        believed = size * ring_bus_rate / (0.5 * k.nccl_tree_bandwidth_factor)  # Simple's; the protocols' from it
        return t_scale, t_net, believed

    def _hierarchical(self) -> bool:
        """Whether every group holds the same number of GPUs on each server, joined by a switch
        (NVSwitch or NVLink trays): NCCL's tree then chains them inside each server."""
        hit = self._hierarchical_memo
        if hit is None:
            f, sh = self.fabric, self.shape
            switched = kind_mask(f, "node_scale_up_kind", "nvswitch")
            # every server or none on a switch (most fabrics): known without the groups' servers
            every, none = f.remembered("nvswitch_every_none", (switched,),
                                       lambda: (bool(switched.all()), not switched.any()))
            if sh.per_node <= 0:
                hit = False
            elif every or (none and len(sh.members)):
                hit = every
            else:
                hit = bool(np.all(switched[f.gpu_node[sh.members[:, 0]]]))
            self._hierarchical_memo = hit
        return hit

    def _nvls_rate(self) -> float:
        """Per GPU, the rate NVLS moves its bytes at: the line rate times its board's (or its NVLink
        domain's) NVLS efficiency; the slowest of the groups' servers."""
        f = self.fabric
        nodes = f.gpu_node[self.shape.members[:, 0]]
        line = f.node_scale_up_Bps[nodes] / f.node_scale_up_efficiency[nodes]
        eff = f.node_nvls_efficiency[nodes] if f.node_nvls_efficiency is not None else self.k.nvls_efficiency
        return float(np.min(line * eff))
