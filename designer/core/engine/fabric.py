"""The cluster's network as arrays the collective model can route over quickly.

Levels a byte can cross, each with a capacity per direction:
  scale-up  inside a server: NVSwitch/NVLink, or PCIe (GPUs behind PCIe switches)
  NIC       the GPU's NIC (shared by `gpus_per_nic` GPUs) and its cable to a leaf
  leaf      the up-links of a leaf switch (traffic to another leaf)
  pod       the up-links from a pod's spines to the core (traffic to another pod)
A pod is a set of leaves joined by spines. Traffic between two leaves spreads over all
up-links of the source leaf (ECMP, or adaptive routing on InfiniBand) and arrives over
the up-links of the destination leaf; across pods, likewise at the spine tier. Inter-node
traffic leaves from the NIC on the destination GPU's rail (NCCL's PXN), so rings and
all-to-all stay rail-aligned.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..model.catalog import Catalog
from ..model.document import Document
from ..model.elements import Switch, split_endpoint
from ..problems import DesignerError, Problem
from ..units import gbps_to_bytes_per_s
from .constants import EngineConstants

TIER_RANK = {"leaf": 0, "spine": 1, "core": 2}


@dataclass
class Fabric:
    node_ids: list[str]
    gpu_node: np.ndarray  # node index of each GPU (file order)
    gpu_local: np.ndarray
    gpu_nic: np.ndarray  # global NIC index of each GPU's own NIC (-1: none)
    node_nic_base: np.ndarray  # first global NIC index of each node
    node_nic_count: np.ndarray
    node_gpus: np.ndarray
    node_scale_up_Bps: np.ndarray  # per GPU per direction, after efficiency
    node_scale_up_kind: list[str]
    node_slowdown: np.ndarray
    node_accelerator: list[str]
    nic_node: np.ndarray
    nic_cap_Bps: np.ndarray  # per direction, after efficiency and slowdown; 0 when not cabled
    nic_leaf: np.ndarray  # switch index of the leaf (-1 when not cabled)
    nic_link: np.ndarray  # link index of the NIC's cable (-1 when not cabled)
    nic_kind: list[str]
    switch_ids: list[str]
    switch_latency_us: np.ndarray
    switch_fabric: list[str]
    switch_sharp: np.ndarray
    leaf_up_Bps: np.ndarray  # per switch: capacity towards other leaves
    leaf_up_cables: np.ndarray
    leaf_up_links: list[list[int]]
    switch_pod: np.ndarray  # pod index of each leaf/spine (-1 for core or unknown)
    pod_up_Bps: np.ndarray
    pod_up_cables: np.ndarray
    pod_up_links: list[list[int]]
    link_ids: list[str]
    link_cap_Bps: np.ndarray
    has_core: bool
    warnings: list[str] = field(default_factory=list)

    @property
    def num_gpus(self) -> int:
        return len(self.gpu_node)


def _scale_up(node, accelerator, k: EngineConstants) -> tuple[float, str]:
    gbps = node.scale_up_gbps or accelerator.scale_up_gbps
    kind = node.scale_up
    eff = k.pcie_efficiency if kind == "pcie" else k.nvlink_efficiency
    return gbps_to_bytes_per_s(gbps) * eff, kind


def build_fabric(doc: Document, catalog: Catalog, k: EngineConstants) -> Fabric:
    nodes = doc.nodes
    switches = doc.switches
    node_index = {n.id: i for i, n in enumerate(nodes)}
    switch_index = {s.id: i for i, s in enumerate(switches)}

    gpus = np.array([n.accelerator_count for n in nodes], dtype=np.int64)
    gpu_node = np.repeat(np.arange(len(nodes)), gpus)
    starts = np.concatenate([[0], np.cumsum(gpus)[:-1]]) if len(nodes) else np.zeros(0, dtype=np.int64)
    gpu_local = np.arange(len(gpu_node)) - np.repeat(starts, gpus)

    nic_counts = np.array([n.nic_count for n in nodes], dtype=np.int64)
    nic_base = np.concatenate([[0], np.cumsum(nic_counts)[:-1]]) if len(nodes) else np.zeros(0, dtype=np.int64)
    total_nics = int(nic_counts.sum())
    nic_node = np.repeat(np.arange(len(nodes)), nic_counts)
    per_nic = np.array([n.gpus_per_nic for n in nodes], dtype=np.int64)
    local_nic = gpu_local // per_nic[gpu_node]
    has_nic = local_nic < nic_counts[gpu_node]
    gpu_nic = np.where(has_nic, nic_base[gpu_node] + np.minimum(local_nic, np.maximum(nic_counts[gpu_node] - 1, 0)), -1)

    scale = [_scale_up(n, catalog.accelerator(n.accelerator), k) for n in nodes]
    node_bw = np.array([s[0] for s in scale], dtype=float)
    node_kind = [s[1] for s in scale]

    nic_cap = np.zeros(total_nics)
    nic_leaf = np.full(total_nics, -1, dtype=np.int64)
    nic_link = np.full(total_nics, -1, dtype=np.int64)
    eff = {"infiniband": k.infiniband_nic_efficiency, "ethernet": k.ethernet_nic_efficiency}
    next_free = {i: 0 for i in range(len(nodes))}

    n_sw = len(switches)
    tier = np.array([TIER_RANK.get(s.tier, 0) for s in switches], dtype=np.int64)
    up_Bps = np.zeros(n_sw)
    up_cables = np.zeros(n_sw, dtype=np.int64)
    up_links: list[list[int]] = [[] for _ in range(n_sw)]
    switch_edges: list[tuple[int, int, float, int, int]] = []  # (lower, upper, capacity, cables, link)
    link_cap = np.zeros(len(doc.links))

    for li, link in enumerate(doc.links):
        a_dev, a_port = split_endpoint(link.a)
        b_dev, b_port = split_endpoint(link.b)
        cap = gbps_to_bytes_per_s(link.bandwidth_gbps) * link.count / link.slowdown
        link_cap[li] = cap
        ends = [(a_dev, a_port), (b_dev, b_port)]
        kinds = ["node" if d in node_index else "switch" if d in switch_index else None for d, _ in ends]
        if None in kinds:
            continue
        if kinds == ["node", "switch"] or kinds == ["switch", "node"]:
            (n_dev, n_port), (s_dev, _) = (ends if kinds[0] == "node" else ends[::-1])
            ni = node_index[n_dev]
            node = nodes[ni]
            if link.kind not in ("ethernet", "infiniband"):
                continue
            sw = switches[switch_index[s_dev]]
            for c in range(link.count):
                if n_port and n_port.startswith("nic") and n_port[3:].isdigit():
                    local = int(n_port[3:]) + c
                else:
                    local = next_free[ni]
                    next_free[ni] += 1
                if local >= node.nic_count:
                    break
                g = nic_base[ni] + local
                line = gbps_to_bytes_per_s(min(link.bandwidth_gbps, node.nic_gbps, sw.port_gbps))
                bounce = 1.0 if node.gpudirect_rdma else k.host_bounce_efficiency
                nic_cap[g] = line * eff.get(link.kind, 0.9) * bounce / link.slowdown
                nic_leaf[g] = switch_index[s_dev]
                nic_link[g] = li
                if n_port:
                    next_free[ni] = max(next_free[ni], local + 1)
        elif kinds == ["switch", "switch"]:
            i, j = switch_index[a_dev], switch_index[b_dev]
            if tier[i] == tier[j]:
                lower, upper = (i, j) if i < j else (j, i)
            else:
                lower, upper = (i, j) if tier[i] < tier[j] else (j, i)
            switch_edges.append((lower, upper, cap, link.count, li))

    # Leaves: switches with NICs below them. Their up-capacity: links to other switches.
    is_leaf = np.zeros(n_sw, dtype=bool)
    is_leaf[nic_leaf[nic_leaf >= 0]] = True
    parent = list(range(n_sw))  # union-find over leaf-spine adjacency (pods)

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for lower, upper, cap, cables, li in switch_edges:
        if is_leaf[lower] and not is_leaf[upper] or tier[lower] < tier[upper] and tier[upper] < 2:
            up_Bps[lower] += cap
            up_cables[lower] += cables
            up_links[lower].append(li)
        if tier[upper] < 2 and tier[lower] < 2:
            parent[find(lower)] = find(upper)
    pod_of = np.array([find(i) if tier[i] < 2 else -1 for i in range(n_sw)], dtype=np.int64)
    roots = sorted({int(p) for p in pod_of if p >= 0})
    pod_number = {r: n for n, r in enumerate(roots)}
    switch_pod = np.array([pod_number[int(p)] if p >= 0 else -1 for p in pod_of], dtype=np.int64)
    pod_up = np.zeros(len(roots))
    pod_cables = np.zeros(len(roots), dtype=np.int64)
    pod_links: list[list[int]] = [[] for _ in roots]
    has_core = False
    for lower, upper, cap, cables, li in switch_edges:
        if tier[upper] == 2 and switch_pod[lower] >= 0:
            has_core = True
            pod_up[switch_pod[lower]] += cap
            pod_cables[switch_pod[lower]] += cables
            pod_links[switch_pod[lower]].append(li)

    return Fabric(
        node_ids=[n.id for n in nodes], gpu_node=gpu_node, gpu_local=gpu_local, gpu_nic=gpu_nic,
        node_nic_base=nic_base, node_nic_count=nic_counts, node_gpus=gpus, node_scale_up_Bps=node_bw,
        node_scale_up_kind=node_kind, node_slowdown=np.array([n.slowdown for n in nodes], dtype=float),
        node_accelerator=[n.accelerator for n in nodes], nic_node=nic_node, nic_cap_Bps=nic_cap,
        nic_leaf=nic_leaf, nic_link=nic_link, nic_kind=[n.nic_kind for n in nodes for _ in range(n.nic_count)],
        switch_ids=[s.id for s in switches], switch_latency_us=np.array([s.latency_us for s in switches]),
        switch_fabric=[s.fabric for s in switches], switch_sharp=np.array([s.sharp for s in switches], dtype=bool),
        leaf_up_Bps=up_Bps, leaf_up_cables=up_cables, leaf_up_links=up_links, switch_pod=switch_pod,
        pod_up_Bps=pod_up, pod_up_cables=pod_cables, pod_up_links=pod_links, link_ids=[l.id for l in doc.links],
        link_cap_Bps=link_cap, has_core=has_core,
    )


def require_routes(fabric: Fabric, gpus: np.ndarray, what: str) -> None:
    """A clear error when GPUs that must talk have no NIC or no cable."""
    nics = fabric.gpu_nic[gpus]
    bad = np.flatnonzero((nics < 0) | (fabric.nic_cap_Bps[np.maximum(nics, 0)] <= 0))
    if bad.size:
        g = int(gpus[bad[0]])
        node = fabric.node_ids[fabric.gpu_node[g]]
        raise DesignerError([Problem(
            f"{what} needs the network, but GPU {fabric.gpu_local[g]} of {node} has no connected NIC",
            "spec.links", element=node, fix=f"connect the NICs of {node} to a leaf switch")])
