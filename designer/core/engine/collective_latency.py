"""NCCL's latency of a dimension's collectives (src/graph/tuning.cc): a base, plus per step the
latency of an NVLink step inside a server or of a network step between servers, with the
switch hops, cables and the NICs' own overheads added, and the library's latency per call."""
from __future__ import annotations

import math

import numpy as np

from .constants import EngineConstants
from .fabric import Fabric

# switches a message crosses between two servers, by the group's network tier (same leaf: 1; same
# pod: leaf, spine, leaf; across pods: through the core as well)
SWITCH_HOPS = (0, 1, 3, 5)
# from this size a ring's Simple protocol across servers reaches its latency plateau (nccl_ring_plateau_factor)
RING_PLATEAU_BYTES = 64 * 2**20


class GroupLatency:
    """The latency of one dimension's collectives per (algorithm, protocol, primitive, ranks, servers,
    network tier, whether the ring's plateau applies): kept, a plan's collectives ask ~80 times."""

    def __init__(self, fabric: Fabric, members: np.ndarray, k: EngineConstants):
        self.fabric = fabric
        self.members = members  # (G, n) GPU indices of the dimension's groups
        self.k = k
        self._memo: dict[tuple, float] = {}  # seconds
        self._fabric_us: tuple[float, float, float] | None = None  # fabric_latencies_us
        # per (algorithm, protocol): NCCL's (base, NVLink step, network step) latency, None where a
        # table lacks it; per (network step, tier): the network step with the hops and overheads
        self._tables: dict[tuple[str, str], tuple] = {}
        self._inter: dict[tuple[float, int], float] = {}

    def fabric_latencies_us(self) -> tuple[float, float, float]:
        """(the slowest member server's library latency, what its NICs add per network step beyond
        NCCL's InfiniBand figures (EFA's SRD), the fabric's slowest switch): fixed by the fabric's
        shape, so worked out once per model, not once per latency."""
        hit = self._fabric_us
        if hit is None:
            f = self.fabric
            library, message = _alike_server_latencies(f)
            if library is None or message is None or not self.members.size:  # servers differ: the members' slowest
                nodes = f.gpu_node[self.members.ravel()]
                library = float(f.node_collective_latency_us[nodes].max()) if nodes.size else 0.0
                extra = f.node_message_latency_us
                message = float(extra[nodes].max()) if extra is not None and nodes.size else 0.0
            switch = f.remembered("slowest_switch_us", (f.switch_latency_us,),
                                  lambda: float(np.max(f.switch_latency_us)) if len(f.switch_ids) else 0.0)
            hit = self._fabric_us = (library, message, switch)
        return hit

    def fabric_table(self) -> dict | None:
        """A memo the fabric keeps for every dimension of every plan costed on it, with the constants:
        None when its servers' latencies differ (a group's latency then follows its members)."""
        f = self.fabric
        if not self.members.size:
            return None

        def make() -> dict | None:
            library, message = _alike_server_latencies(f)
            return None if library is None or message is None else {}
        # (one look-up: every candidate list of every dimension asks)
        return f.remembered("alike_latency_table", (f.node_collective_latency_us, f.node_message_latency_us,
                                                    f.switch_latency_us, self.k), make)

    def seconds(self, algorithm: str, protocol: str, primitive: str, n: int, N: int, tier: int,
                size: float) -> float:
        """Of one collective of `size` bytes over n ranks on N servers, the farthest `tier` apart."""
        # the size counts only for the ring's plateau
        key = (algorithm, protocol, primitive, n, N, tier, size >= RING_PLATEAU_BYTES)
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = self._latency_of(algorithm, protocol, primitive, n, N, tier, size)
        return hit

    def _latency_of(self, algorithm: str, protocol: str, primitive: str, n: int, N: int, tier: int,
                    size: float) -> float:
        k = self.k
        # the tables read once per algorithm and protocol, the network step once per tier: a plan's
        # dimensions ask ~70 latencies, most of them of a few algorithms, protocols and tiers
        per_step_us = self._tables.get((algorithm, protocol))
        if per_step_us is None:
            per_step_us = self._tables[(algorithm, protocol)] = (
                k.nccl_base_latency_us.get(algorithm, {}).get(protocol),
                k.nccl_nvlink_step_latency_us.get(algorithm, {}).get(protocol),
                k.nccl_net_step_latency_us.get(algorithm, {}).get(protocol))
        base, intra, net = per_step_us
        if base is None or intra is None or net is None:
            return math.inf
        library_us, message_us, switch_us = self._fabric_us or self.fabric_latencies_us()
        inter = self._inter.get((net, tier))
        if inter is None:
            hops = SWITCH_HOPS[tier]
            inter = self._inter[(net, tier)] = (net + hops * switch_us + (hops + 1) * k.cable_latency_us
                                                + k.net_overhead_us + message_us)
        if primitive == "all_reduce":
            steps = 2 * (n - 1)
            inter_steps = 2 * N if N > 1 else 0
        elif primitive in ("all_gather", "reduce_scatter", "broadcast"):
            steps, inter_steps = n - 1, (N - 1 if N > 1 else 0)
        elif primitive == "all_to_all":
            steps, inter_steps = n - 1, (n - n // max(N, 1)) if N > 1 else 0
        else:  # send_recv, send: one message
            steps, inter_steps = 1, (1 if N > 1 else 0)
        if algorithm == "ring":
            lat = base + (steps - inter_steps) * intra + inter_steps * inter
            if N > 1 and protocol == "Simple" and size >= RING_PLATEAU_BYTES:
                lat *= k.nccl_ring_plateau_factor
        elif algorithm == "tree":
            lat = base + 2 * ((n / max(N, 1) - 1) * intra + math.log2(max(N, 1)) * inter)
        elif algorithm == "nvls":  # NCCL's figure, and a cost per rank of the domain it joins (constants)
            lat = base + intra + k.nvls_rank_latency_us * n / max(N, 1) + (2 * math.log2(N) * inter if N > 1 else 0)
        elif algorithm == "pat":  # tuning.cc (2.23+): log2(nNodes) x interLat / 3.5 + nRanks x 2.8
            lat = base + math.log2(max(N, 1)) * inter / 3.5 + n * k.nccl_pat_rank_latency_us
        else:  # collnet
            lat = base + 2 * (n / max(N, 1) - 1) * k.nccl_nvlink_step_latency_us["ring"]["LL128"] + inter
        return (lat + library_us) * 1e-6


def _alike_server_latencies(f: Fabric) -> tuple[float | None, float | None]:
    """(library latency, NIC message latency) when every server has the same one (any group's slowest
    member then has it), None for one that differs; kept with the fabric: every dimension of every
    plan asks."""
    def make():
        out = []
        for values in (f.node_collective_latency_us, f.node_message_latency_us):
            if values is None:
                out.append(0.0)
            elif len(values) and values.min() == values.max():
                out.append(float(values.max()))
            else:
                out.append(None)
        return tuple(out)
    return f.remembered("alike_server_latencies", (f.node_collective_latency_us, f.node_message_latency_us), make)
