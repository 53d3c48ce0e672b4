"""Fat-tree (folded Clos) generator: servers, leaf/spine/core switches, cables and racks.

`generate_fat_tree` builds a whole `Document`; `plan_fat_tree` returns only the counts, fast
enough for a dialog to show them while the user types. Both share `lay_out`, so the counts
of the plan are the counts of the document.

The parts: the arithmetic of tiers, radix and oversubscription (`lay_out`, fat_tree_sizing.py),
the building of servers, switches, cables and racks (fat_tree_build.py) and the physical and
drawing constants (fat_tree_geometry.py).

The shape, tier by tier (r = oversubscription, R = switch radix):

- Leaf: d = floor(R * r / (r + 1)) ports face the servers, the other R - d face up. A leaf
  with m servers' NICs attached sends ceil(m / r) cables up, so at 1:1 every leaf has exactly
  as much capacity up as down. NIC ports are spread evenly: leaf sizes differ by at most one.
- Rail-optimized (default): NIC i of every server goes to a leaf of rail i. Otherwise all
  NICs of a server go to one leaf.
- 2 tiers: every leaf connects to every spine (several cables to one spine form one bundle,
  Link.count > 1); the fewest spines such that none exceeds its radix; spines use all ports
  downward; each leaf's extra cables rotate over the spines so spine loads stay balanced.
- 3 tiers: pods of leaves and spines; a pod's spines use R/2 ports down and as many up as
  they have down (non-blocking above the leaf); spine j of every pod connects to the cores
  of core group j. Rail-optimized pods are scalable units: all rails' leaves of a group of
  servers sit in one pod.

Ids are deterministic: node{i}, leaf{n}, spine{n}, core{n} (global numbering), l{n} for
links, rack{n} for compute racks and net{n} for network racks. With --nvlink-domain-gpus above
one server: domains nvl{d}, their NVLink switch trays nvl{d}-switch{k} (nvlink_trays.py), one
domain per rack of 1U trays, the trays' switches and links after the scale-out ones. Ports: leaves p0.. down,
p{d}.. up; 3-tier spines p0.. down, p{R//2}.. up; cores and 2-tier spines p0.. .
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from ..model.catalog import Catalog, default_catalog
from ..model.document import Document
from ..model.elements import SWITCH_ROUTINGS
from .fat_tree_build import FatTreeBuilder
from .fat_tree_geometry import RACK_UNITS, SERVERS_PER_RACK, server_units, switches_per_rack
from .fat_tree_sizing import FatTreeError, FatTreeLayout, check_numbers, lay_out, ratio_of
from .nvlink_trays import domain_racks, domain_runs, nvlink_switch_model, tray_counts

@dataclass(frozen=True)
class FatTreePlan:
    """Counts of a fat-tree, without building it (for a dialog's live preview)."""

    tiers: int
    rail_optimized: bool
    oversubscription: float
    switch_radix: int
    nodes: int
    gpus: int
    nic_ports: int
    pods: int  # 0 below 3 tiers
    leaves: int
    spines: int
    cores: int
    switches: int
    links: int  # Link elements (a bundle of parallel cables is one link)
    cables: int
    racks: int
    leaf_down_ports: int  # d: ports of a leaf that may face servers
    leaf_up_ports: int  # R - d
    max_nodes: int  # the most servers these tiers, radix and ratio can hold
    nvlink_switch_trays: int = 0  # NVLink switch trays of rack-scale domains (counted in switches)

    def as_dict(self) -> dict:
        return asdict(self)


def _catalog_radices(catalog: Catalog | None, fabric: str, nic_gbps: float) -> tuple[int, ...]:
    if catalog is None:
        return ()
    return tuple(s.radix for s in catalog.switches.values() if s.kind == fabric and s.port_gbps == nic_gbps)


def _rack_counts(lay: FatTreeLayout, servers_per_rack: int) -> tuple[list[int], list[int], int]:
    """(compute racks per pod, network racks per pod, core racks)."""
    per_rack = switches_per_rack(lay.radix)
    compute = [-(-lay.pod_nodes(p) // servers_per_rack) for p in range(len(lay.pods))]
    network = [-(-lay.pod_switches(p) // per_rack) for p in range(len(lay.pods))]
    core = -(-lay.num_cores // per_rack)
    return compute, network, core


def _servers_per_rack(servers_per_rack: int, gpus_per_node: int) -> int:
    if isinstance(servers_per_rack, bool) or not isinstance(servers_per_rack, int) or servers_per_rack < 1:
        raise FatTreeError(f"servers per rack must be a whole number >= 1, got {servers_per_rack!r}")
    return max(1, min(servers_per_rack, RACK_UNITS // server_units(gpus_per_node)))


# ---- public API ---------------------------------------------------------------------------------

def plan_fat_tree(
    nodes: int,
    gpu: str | None = None,
    gpus_per_node: int = 8,
    nics_per_node: int = 8,
    nic_gbps: float = 400,
    fabric: str = "infiniband",
    tiers: int | None = None,
    switch_radix: int | None = 64,
    oversubscription: float = 1.0,
    rail_optimized: bool = True,
    name: str | None = None,
    catalog: Catalog | None = None,
    *,
    servers_per_rack: int = SERVERS_PER_RACK,
    nvlink_domain_gpus: int | None = None,
) -> FatTreePlan:
    """The counts `generate_fat_tree` would produce, without building anything.

    Raises FatTreeError for the same requests as `generate_fat_tree`. The accelerator is only
    checked when `gpu` is given.
    """
    check_numbers(nodes, gpus_per_node, nics_per_node, nic_gbps, fabric, tiers, switch_radix)
    r = ratio_of(oversubscription)
    trays, tray_model = 1, None
    if gpu is not None:
        acc = _accelerator(catalog or default_catalog(), gpu, gpus_per_node)
        trays = _trays_per_domain(acc, gpus_per_node, nvlink_domain_gpus)
        if trays > 1:
            tray_model = nvlink_switch_model(catalog or default_catalog(), acc, trays * gpus_per_node)
    lay = lay_out(nodes, nics_per_node, tiers, switch_radix, r, bool(rail_optimized),
                  _catalog_radices(catalog, fabric, float(nic_gbps)))
    spr = _servers_per_rack(servers_per_rack, gpus_per_node)
    compute, network, core = _rack_counts(lay, spr)
    if trays > 1:  # racks of NVLink domains (as FatTreeBuilder._domain_racks fills them)
        per_domain = tray_model.trays_for(trays * gpus_per_node) if tray_model else 0
        seen: set[int] = set()
        compute = [0]
        for _, domain, here in domain_runs([lay.pod_nodes(p) for p in range(len(lay.pods))], trays):
            compute[0] += len(domain_racks(here, 0 if domain in seen else per_domain, RACK_UNITS))
            seen.add(domain)
    switch_trays, tray_links, tray_cables = tray_counts(nodes, gpus_per_node, trays, tray_model)
    leaves, spines, cores = lay.num_leaves, lay.num_spines, lay.num_cores
    return FatTreePlan(
        tiers=lay.tiers, rail_optimized=lay.rail, oversubscription=float(r), switch_radix=switch_radix,
        nodes=nodes, gpus=nodes * gpus_per_node, nic_ports=nodes * nics_per_node,
        pods=len(lay.pods) if lay.tiers == 3 else 0, leaves=leaves, spines=spines, cores=cores,
        switches=leaves + spines + cores + switch_trays, links=lay.links + tray_links,
        cables=lay.cables + tray_cables, racks=sum(compute) + sum(network) + core, leaf_down_ports=lay.down,
        leaf_up_ports=switch_radix - lay.down, max_nodes=lay.max_nodes, nvlink_switch_trays=switch_trays,
    )


def _accelerator(catalog: Catalog, gpu: str, gpus_per_node: int):
    canonical = catalog.resolve("accelerators", gpu) if gpu else None
    if canonical is None:
        if not catalog.accelerators:
            raise FatTreeError(f"unknown accelerator {gpu!r}: the catalog has no accelerators "
                               "(is resources/catalog/accelerators.yaml missing?)")
        raise FatTreeError(f"unknown accelerator {gpu!r}; {catalog.suggest('accelerators', str(gpu))} "
                           f"(use --gpu with a name from `designer catalog`)")
    acc = catalog.accelerators[canonical]
    if acc.max_per_node and gpus_per_node > acc.max_per_node:
        raise FatTreeError(f"a {canonical} server holds at most {acc.max_per_node} accelerators, not "
                           f"{gpus_per_node}; use --gpus-per-node {acc.max_per_node} or less")
    return acc


def generate_fat_tree(
    nodes: int,
    gpu: str,
    gpus_per_node: int = 8,
    nics_per_node: int = 8,
    nic_gbps: float = 400,
    fabric: str = "infiniband",
    tiers: int | None = None,
    switch_radix: int | None = 64,
    oversubscription: float = 1.0,
    rail_optimized: bool = True,
    name: str | None = None,
    catalog: Catalog | None = None,
    *,
    servers_per_rack: int = SERVERS_PER_RACK,
    nvlink_domain_gpus: int | None = None,
    nic_model: str | None = None,
    routing: str | None = None,
    switch_model: str | None = None,
) -> Document:
    """A complete fat-tree design: servers, switches, cables, racks and canvas positions.

    tiers=None picks the fewest tiers that hold the servers (a single switch when all NICs
    fit on one and the fabric is not rail-optimized). Raises FatTreeError, with the flag to
    change, when the request cannot be built.
    """
    catalog = catalog or default_catalog()
    named = _named_switch(catalog, switch_model, fabric, nic_gbps)
    if switch_radix is None:  # the named model's ports at the NICs' speed (an 800G port as 2 x 400G), else 64
        switch_radix = named.radix * round(named.port_gbps / float(nic_gbps)) if named else 64
    check_numbers(nodes, gpus_per_node, nics_per_node, nic_gbps, fabric, tiers, switch_radix)
    r = ratio_of(oversubscription)
    acc = _accelerator(catalog, gpu, gpus_per_node)
    nic_gbps = float(nic_gbps)
    rail = bool(rail_optimized)
    lay = lay_out(nodes, nics_per_node, tiers, switch_radix, r, rail, _catalog_radices(catalog, fabric, nic_gbps))
    spr = _servers_per_rack(servers_per_rack, gpus_per_node)
    trays = _trays_per_domain(acc, gpus_per_node, nvlink_domain_gpus)
    builder = FatTreeBuilder(lay, acc, gpus_per_node, nic_gbps, fabric, catalog, spr)
    builder.nic_model = _nic_model(catalog, nic_model, fabric, nic_gbps)
    builder.routing = _routing(routing)
    builder.named_switch = named
    if trays > 1:  # a rack-scale domain: racks of its trays with its NVLink switch trays (nvlink_trays.py)
        builder.domain_trays = trays
        builder.tray_model = nvlink_switch_model(catalog, acc, trays * gpus_per_node)
    return builder.build(name)


def _named_switch(catalog: Catalog, name: str | None, fabric: str, nic_gbps: float):
    """The catalog switch asked for by name (--switch-model), checked against the fabric and the NICs'
    speed: its native port must carry a whole number of NIC links (an 800G port as 2 x 400G)."""
    if not name:
        return None
    resolved = catalog.resolve("switches", name)
    if resolved is None:
        raise FatTreeError(f"--switch-model {name!r} is not in the catalog; {catalog.suggest('switches', name)}")
    model = catalog.switches[resolved]
    if model.kind != fabric:
        raise FatTreeError(f"--switch-model {model.name} is an {model.kind} switch; use --fabric {model.kind}, "
                           "or another switch model")
    try:
        ratio = model.port_gbps / float(nic_gbps)
    except (TypeError, ValueError, ZeroDivisionError):
        return model  # the NIC speed's own check names it
    if ratio < 1 or abs(ratio - round(ratio)) > 1e-9:
        raise FatTreeError(f"--switch-model {model.name} has {model.port_gbps:g} Gb/s ports, which do not split into "
                           f"{float(nic_gbps):g} Gb/s NIC links; use --nic-gbps {model.port_gbps:g} (or a divisor of it)")
    return model


def _routing(routing: str | None) -> str | None:
    """The switches' routing (None: their catalog model's default)."""
    if routing is not None and routing not in SWITCH_ROUTINGS:
        raise FatTreeError(f"--routing {routing!r} is not one of {', '.join(SWITCH_ROUTINGS)}; use --routing static "
                           "(or leave it out for the switch model's own)")
    return routing


def _nic_model(catalog: Catalog, name: str | None, fabric: str, nic_gbps: float):
    """The catalog NIC the servers get: the one named (of the fabric's kind and speed), else the
    default NIC of that kind and speed."""
    if not name:
        return catalog.nic_for(fabric, nic_gbps)
    resolved = catalog.resolve("nics", name)
    if resolved is None:
        raise FatTreeError(f"--nic-model {name!r} is not in the catalog; {catalog.suggest('nics', name)}")
    nic = catalog.nics[resolved]
    if nic.kind != fabric or nic.gbps != nic_gbps:
        raise FatTreeError(f"--nic-model {nic.name} is a {nic.gbps:g} Gb/s {nic.kind} NIC; use --fabric {nic.kind} "
                           f"--nic-gbps {nic.gbps:g}, or another NIC model")
    return nic


def _trays_per_domain(acc, gpus_per_node: int, domain_gpus: int | None) -> int:
    """Servers (trays) per NVLink domain; 1 = each server is its own domain."""
    if domain_gpus is None:
        return 1
    most = max(acc.scale_up_domain_max, gpus_per_node)
    if isinstance(domain_gpus, bool) or not isinstance(domain_gpus, int) or domain_gpus < 1:
        raise FatTreeError(f"--nvlink-domain-gpus must be a whole number of GPUs, not {domain_gpus!r}; "
                           f"use --nvlink-domain-gpus {gpus_per_node}")
    if domain_gpus % gpus_per_node:
        fit = max(gpus_per_node, min(most, domain_gpus) // gpus_per_node * gpus_per_node)
        raise FatTreeError(f"--nvlink-domain-gpus {domain_gpus} is not a whole number of {gpus_per_node}-GPU "
                           f"servers (trays); use --nvlink-domain-gpus {fit}")
    if domain_gpus > most:
        raise FatTreeError(f"--nvlink-domain-gpus {domain_gpus} is more than one {acc.name} NVLink domain holds "
                           f"({most}); use --nvlink-domain-gpus {most // gpus_per_node * gpus_per_node}")
    return domain_gpus // gpus_per_node
