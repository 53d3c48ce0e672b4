"""Which algorithms and protocols NCCL weighs for one dimension's collectives, each with its latency.

The algorithms follow what NCCL enables (tree for all_reduce; NVLS on NVSwitch boards with more than
two GPUs per domain; CollNet where every leaf reduces in the switch; PAT for one GPU per server);
the protocols follow LL's size limit. The latency is collective_latency.py's.
"""
from __future__ import annotations

import numpy as np

from .collective_latency import RING_PLATEAU_BYTES, GroupLatency
from .constants import EngineConstants
from .fabric import Fabric
from .group_shape import GroupShape


# One algorithm and protocol NCCL weighs, with its latency: (algorithm, protocol, latency_s). A plain
# tuple: a plan makes ~70 of them, and a named tuple's __new__ costs six times a tuple's.
Candidate = tuple[str, str, float]
# candidate lists kept per fabric (GroupLatency.fabric_table): a plan search asks a few hundred shapes
SHARED_CANDIDATES_KEPT = 4096


class AlgorithmChoice:
    """The (algorithm, protocol, latency) candidates of a dimension's classes of groups: they depend on
    the size only through LL's size limit and the ring's plateau, so a plan's collectives of one
    dimension make them once per class, not once per size; and, where every server has the same
    latencies, on the class only through its algorithms, ranks, servers and tier, so the plans costed
    on one fabric share them (GroupLatency.fabric_table)."""

    def __init__(self, fabric: Fabric, shape: GroupShape, k: EngineConstants, nvls: bool, latency: GroupLatency):
        self.fabric = fabric
        self.shape = shape
        self.k = k
        self.nvls_ok = nvls
        self.latency = latency
        self._choices: dict[tuple, list[Candidate]] = {}  # candidates
        self._offered: dict[tuple, list[str]] = {}  # (primitive, requested, class index) -> algorithms
        self._menus: dict[tuple, list[list[Candidate]]] = {}  # menu
        self._ll_max = k.nccl_ll_max_bytes
        # the fabric's shared candidate lists (None: its servers' latencies differ), looked up once: the
        # latencies this model costs with are fixed when it is made (GroupLatency.fabric_latencies_us)
        self._shared: dict | None = None
        self._shared_known = False
        # whether some group may reduce in its switches: the fabric's shape, as the model's (a rebuilt fabric
        # has new models)
        self.sharp_possible = sharp_possible(fabric)
        # per class of groups, in the shape's order: (its servers, its groups, the first of them (-1: none))
        self.heads: list[tuple[int, np.ndarray, int]] = [
            (N, groups, int(groups[0]) if len(groups) else -1) for (N, _, _), groups in shape.classes.items()]
        self._class_servers_tiers = tuple([(N, tier) for N, _, tier in shape.classes])  # the menus' shared key

    def menu(self, primitive: str, algorithm: str, size: float) -> list[list[Candidate]]:
        """Per class of groups, in the shape's order (that of `heads`): its candidates for a collective of
        `size` bytes. Kept per size band: a dimension's collectives of one primitive mostly share one, and
        each class would otherwise look its candidates up afresh at every size."""
        ll_max = self._ll_max
        key = (primitive, algorithm, size >= RING_PLATEAU_BYTES, bool(ll_max) and size > ll_max)
        hit = self._menus.get(key)
        if hit is None:
            n = self.shape.members.shape[1]
            shared = self._shared_table()
            # without SHARP a class's algorithms follow its servers alone: with the servers' latencies alike,
            # the lists of classes of those servers and tiers are the fabric's, made by the first plan to ask
            if shared is not None and not self.sharp_possible:
                shared_key = ("menu", primitive, algorithm, key[2], key[3], n, self.nvls_ok, self._class_servers_tiers)
                hit = shared.get(shared_key)
                if hit is None:
                    hit = self._class_candidates(primitive, algorithm, n, size)
                    if len(shared) >= SHARED_CANDIDATES_KEPT:
                        shared.clear()
                    shared[shared_key] = hit
            else:
                hit = self._class_candidates(primitive, algorithm, n, size)
            self._menus[key] = hit
        return hit

    def _class_candidates(self, primitive: str, algorithm: str, n: int, size: float) -> list[list[Candidate]]:
        return [self.candidates(primitive, algorithm, class_index, n, N, tier, groups, size)
                for class_index, ((N, _, tier), groups) in enumerate(self.shape.classes.items())]

    def _shared_table(self) -> dict | None:
        """The fabric's shared candidate lists (None: its servers' latencies differ), looked up once."""
        if not self._shared_known:
            self._shared, self._shared_known = self.latency.fabric_table(), True
        return self._shared

    def candidates(self, primitive: str, algorithm: str, class_index: int, n: int, N: int, tier: int,
                   groups: np.ndarray, size: float) -> list[Candidate]:
        """What NCCL weighs for the class `class_index` (its groups `groups`, n ranks on N servers at
        network tier `tier`) for a collective of `size` bytes; `algorithm` "auto" or the one asked for."""
        k = self.k
        key = (primitive, algorithm, class_index, size >= RING_PLATEAU_BYTES,
               bool(k.nccl_ll_max_bytes) and size > k.nccl_ll_max_bytes)
        hit = self._choices.get(key)
        if hit is None:
            # the algorithms do not depend on the size: found once per class (SHARP looks at its leaves)
            names = self._offered.get((primitive, algorithm, class_index))
            if names is None:
                names = self._offered[(primitive, algorithm, class_index)] = tuple(
                    self.algorithms(primitive, N, groups, algorithm))
            # with the servers' latencies alike, the same for every dimension of every plan on the fabric
            shared = self._shared_table()
            shared_key = (primitive, names, n, N, tier, key[3], key[4])
            hit = shared.get(shared_key) if shared is not None else None
            if hit is None:
                hit = [(name, protocol, self.latency.seconds(name, protocol, primitive, n, N, tier, size))
                       for name in names for protocol in self.protocols(name, size)]
                if shared is not None:
                    if len(shared) >= SHARED_CANDIDATES_KEPT:
                        shared.clear()
                    shared[shared_key] = hit
            self._choices[key] = hit
        return hit

    def algorithms(self, primitive: str, N: int, groups: np.ndarray, requested: str) -> list[str]:
        """The algorithms NCCL offers for `primitive` on groups spanning N servers: all of them for
        "auto", else the one requested if offered (none if not)."""
        if primitive in ("send_recv", "send", "all_to_all", "broadcast"):
            return ["ring"]
        options = ["ring"]
        version = self.k.nccl_version
        if primitive == "all_reduce":
            options.append("tree")
            # NVLS needs more than 2 GPUs on each NVLink domain (nvls.cc, ncclNvlsInit: gpuCount <= 2 disables it)
            local = self.shape.members.shape[1] // max(N, 1)
            if self.nvls_ok and local > 2 and (version >= 2.18 or (N == 1 and version >= 2.17)):
                options.append("nvls")
            if N > 1 and self._sharp(groups):
                options.append("collnet")
        elif primitive in ("all_gather", "reduce_scatter") and N > 1 and N == self.shape.members.shape[1] \
                and version >= 2.23:
            options.append("pat")  # one GPU per server (NCCL's ncclPatEnable); NVLS brings AG/RS no bandwidth (nccl#1506)
        if requested != "auto":
            return [requested] if requested in options else []
        return options

    def _sharp(self, groups: np.ndarray) -> bool:
        """Whether every leaf the groups' NICs hang from reduces in the switch (SHARP)."""
        f = self.fabric
        if not self.sharp_possible:
            return False
        nics = f.gpu_nic[self.shape.members[groups].ravel()]
        leaves = f.nic_leaf[nics[nics >= 0]]
        return bool(leaves.size) and bool(np.all(f.switch_sharp[leaves[leaves >= 0]]))

    def protocols(self, algorithm: str, size: float) -> list[str]:
        """The protocols NCCL weighs for `algorithm` at `size` bytes."""
        if algorithm in ("nvls", "collnet", "pat"):
            return ["Simple"]
        if self.k.nccl_ll_max_bytes and size > self.k.nccl_ll_max_bytes:
            return ["LL128", "Simple"]
        return ["LL", "LL128", "Simple"]


def sharp_possible(f: Fabric) -> bool:
    """Whether some switch has SHARP or some NIC hangs from no leaf: else no group's leaves all reduce in
    the switch, found once per fabric rather than from each class's NICs."""
    return f.remembered("sharp_possible", (f.switch_sharp, f.nic_leaf),
                        lambda: bool(f.switch_sharp.any()) or bool((f.nic_leaf < 0).any()))
