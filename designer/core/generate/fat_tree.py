"""Fat-tree (folded Clos) generator: servers, leaf/spine/core switches, cables and racks.

`generate_fat_tree` builds a whole `Document`; `plan_fat_tree` returns only the counts, fast
enough for a dialog to show them while the user types. Both share `_layout`, so the counts
of the plan are the counts of the document.

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

import math
from dataclasses import asdict, dataclass
from fractions import Fraction

from ..model.geometry import RACK_LABEL_PX, RACK_WIDTH_PX, rack_height_px
from ..model.catalog import Catalog, default_catalog
from ..model.document import ClusterSpec, Document
from ..model.elements import MAX_GBPS, MIN_GBPS, NETWORK_KINDS, SCALE_UP_KINDS, SWITCH_ROUTINGS, Link, Metadata, Node, Rack, Switch
from .nvlink_trays import (
    TRAY_UNITS, add_switch_trays, domain_racks, domain_runs, nvlink_switch_model, tray_counts,
)

# ---- physical and drawing constants -------------------------------------------------------------

# 4 x 8-GPU servers per 42U rack: a DGX/HGX H100 server draws up to ~10.2 kW, so four fill a
# ~40 kW air-cooled rack; this is the usual density of NVIDIA's DGX SuperPOD reference layouts.
SERVERS_PER_RACK = 4
RACK_UNITS = 42
# Height of an 8-GPU HGX-class server; other sizes scale with the GPU count (4 GPUs -> 2U).
SERVER_UNITS_PER_8_GPUS = 4
# Network racks: 16 switches per rack, each followed by one unit for cable management
# (a 64-port switch has 64 cables on its front). 16 x 2U = 32U of a 42U rack.
SWITCHES_PER_NETWORK_RACK = 16
SWITCH_SLOT_PITCH_UNITS = 2
# 1U up to 64 ports (e.g. Quantum-2 QM9700, 32 OSFP cages = 64 x 400G); larger radix 2U.
SWITCH_UNITS_SMALL = 1
SWITCH_UNITS_LARGE = 2
SWITCH_LARGE_RADIX = 64

# Canvas grid, in scene pixels: racks side by side in rows, network racks above compute racks.
RACKS_PER_ROW = 16
RACK_PITCH_X_PX = RACK_WIDTH_PX + 12.0  # a rack plus a 12 px aisle
ROW_PITCH_Y_PX = rack_height_px(RACK_UNITS) + RACK_LABEL_PX + 16.0  # a 42U rack, its label, a gap
BLOCK_GAP_PX = 120.0  # between pods (and between the core row and the pods)

# Cable latencies. Light and signal in copper/fibre take ~5 ns per metre. A NIC-to-leaf
# cable runs ~2 m (server to a network rack in the same row): 0.01 us. Leaf-spine cables
# cross a row (~10 m): 0.05 us; spine-core cables cross the hall (~20 m): 0.1 us.
NIC_CABLE_LATENCY_US = 0.01
LEAF_SPINE_CABLE_LATENCY_US = 0.05
SPINE_CORE_CABLE_LATENCY_US = 0.1

# Port-to-port latency when the catalog has no switch of this fabric and speed:
# InfiniBand cut-through ~130 ns (Quantum-2 class), Ethernet store-and-forward ~600 ns.
DEFAULT_SWITCH_LATENCY_US = {"infiniband": 0.13, "ethernet": 0.6}

# Radices that exist as products, offered in error messages when more ports are needed.
COMMON_RADICES = (32, 36, 40, 48, 64, 128, 256, 512)
# Oversubscriptions offered in error messages.
OVERSUBSCRIPTION_CHOICES = (1.5, 2, 3, 4, 6, 8)

FABRIC_NAMES = {"infiniband": "InfiniBand", "ethernet": "Ethernet"}


class FatTreeError(ValueError):
    """The request cannot be built; the message says what to change."""


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


# ---- arithmetic of the tree ---------------------------------------------------------------------

def _ratio(oversubscription) -> Fraction:
    try:
        value = float(oversubscription)
    except (TypeError, ValueError):
        raise FatTreeError(f"oversubscription must be a number, got {oversubscription!r}; "
                           "use e.g. --oversubscription 1 (non-blocking) or 2") from None
    if not math.isfinite(value) or value <= 0:
        raise FatTreeError(f"oversubscription must be above 0, got {oversubscription!r}; "
                           "use --oversubscription 1 for a non-blocking fabric")
    # Exact arithmetic, so that ceil(m / r) is exactly m at 1:1 and 1.1 means 11/10.
    return Fraction(value).limit_denominator(1000)


def _ratio_text(r: Fraction) -> str:
    return f"{float(r):g}:1"


def _leaf_down(radix: int, r: Fraction) -> int:
    """d = floor(radix * r / (r + 1))."""
    return (radix * r.numerator) // (r.numerator + r.denominator)


def _up_links(m: int, r: Fraction) -> int:
    """ceil(m / r): up-links of a leaf with m NIC ports attached."""
    return -(-m * r.denominator // r.numerator)


def _one_tier_allowed(rail: bool, nics: int) -> bool:
    # Rails on a single switch would be one switch per rail, not connected to each other.
    return not rail or nics == 1


def _max_nodes(tiers: int, radix: int, r: Fraction, nics: int, rail: bool) -> int:
    """The most servers a fat-tree of these tiers can hold."""
    d = _leaf_down(radix, r)
    half = radix // 2
    if tiers == 1:
        return radix // nics if _one_tier_allowed(rail, nics) else 0
    if tiers == 2:  # at most `radix` leaves, so that every spine takes a cable from every leaf
        return (radix // nics) * d if rail else radix * (d // nics)
    # 3 tiers: at most radix/2 leaves per pod, at most `radix` pods
    return radix * (half // nics) * d if rail else radix * half * (d // nics)


def _min_radix(tiers: int, nodes: int, r: Fraction, nics: int, rail: bool, start: int) -> int | None:
    """The smallest radix >= start that holds `nodes` (capacity grows with the radix)."""
    hi = max(start, 2)
    while _max_nodes(tiers, hi, r, nics, rail) < nodes:
        hi *= 2
        if hi > 1 << 24:
            return None
    lo = start
    while lo < hi:
        mid = (lo + hi) // 2
        if _max_nodes(tiers, mid, r, nics, rail) >= nodes:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _suggest_radix(need: int, catalog_radices=()) -> int:
    choices = sorted(set(COMMON_RADICES) | set(catalog_radices))
    return next((c for c in choices if c >= need), need)


def _suggest_ratio(tiers: int, nodes: int, radix: int, r: Fraction, nics: int, rail: bool) -> float | None:
    for choice in OVERSUBSCRIPTION_CHOICES:
        if choice > r and _max_nodes(tiers, radix, _ratio(choice), nics, rail) >= nodes:
            return choice
    return None


def _deal_loads(counts: list[int], uppers: int) -> tuple[list[int], int]:
    """Loads of `uppers` switches when each lower one spreads its cables over all of them.

    Each lower switch gives every upper one count // uppers cables and the remainder to the
    next uppers in turn (the turn goes on from where the previous lower switch stopped), so
    the loads differ by at most one. Returns (loads, number of bundles).
    """
    diff = [0] * (uppers + 1)
    base_total = offset = bundles = 0
    for c in counts:
        base, extra = divmod(c, uppers)
        base_total += base
        bundles += uppers if base else extra
        if extra:
            end = offset + extra
            diff[offset] += 1
            if end <= uppers:
                diff[end] -= 1
            else:
                diff[uppers] -= 1
                diff[0] += 1
                diff[end - uppers] -= 1
            offset = end % uppers
    loads, run = [], base_total
    for j in range(uppers):
        run += diff[j]
        loads.append(run)
    return loads, bundles


def _even(total: int, parts: int) -> list[int]:
    """`total` split into `parts` sizes that differ by at most one, larger first."""
    base, extra = divmod(total, parts)
    return [base + 1] * extra + [base] * (parts - extra)


@dataclass
class _Layout:
    """Everything the builder needs, computed without creating any element."""

    tiers: int
    rail: bool
    radix: int
    ratio: Fraction
    down: int  # leaf ports facing servers
    nodes: int
    nics: int
    group_sizes: list[int]  # servers per leaf group (a group is served by 1 leaf, or 1 per rail)
    pods: list[tuple[int, int]]  # [first group, end group) of each pod (one block below 3 tiers)
    leaf_sizes: list[list[int]]  # per pod, per leaf (rail-major): NIC ports attached
    leaf_ups: list[list[int]]  # per pod, per leaf: up-links
    spines_per_pod: int  # 2 tiers: all spines (one block)
    spine_loads: list[list[int]]  # per pod, per spine: down cables (= up cables in 3 tiers)
    cores_per_group: int
    max_nodes: int
    links: int = 0
    cables: int = 0

    @property
    def leaves_per_group(self) -> int:
        return self.nics if self.rail else 1

    def pod_nodes(self, p: int) -> int:
        g0, g1 = self.pods[p]
        return sum(self.group_sizes[g0:g1])

    def pod_switches(self, p: int) -> int:
        return len(self.leaf_sizes[p]) + (self.spines_per_pod if self.tiers > 1 else 0)

    @property
    def num_leaves(self) -> int:
        return sum(len(s) for s in self.leaf_sizes)

    @property
    def num_spines(self) -> int:
        return self.spines_per_pod * len(self.pods) if self.tiers > 1 else 0

    @property
    def num_cores(self) -> int:
        return self.cores_per_group * self.spines_per_pod if self.tiers == 3 else 0


def _check_numbers(nodes, gpus_per_node, nics_per_node, nic_gbps, fabric, tiers, switch_radix) -> None:
    def whole(value, flag, minimum):
        if isinstance(value, bool) or not hasattr(value, "__index__") or value < minimum:
            raise FatTreeError(f"{flag.lstrip('-').replace('-', ' ')} must be a whole number >= {minimum}, "
                               f"got {value!r}; use {flag} {max(minimum, 1)} or more")

    whole(nodes, "--nodes", 1)
    whole(gpus_per_node, "--gpus-per-node", 1)
    whole(nics_per_node, "--nics-per-node", 1)
    whole(switch_radix, "--switch-radix", 2)
    try:
        gbps_ok = float(nic_gbps) > 0 and math.isfinite(float(nic_gbps))
    except (TypeError, ValueError):
        gbps_ok = False
    if not gbps_ok:
        raise FatTreeError(f"NIC speed must be a positive number of Gb/s, got {nic_gbps!r}; use e.g. --nic-gbps 400")
    if not MIN_GBPS <= float(nic_gbps) <= MAX_GBPS:  # what a design file may hold: the file must validate
        raise FatTreeError(f"NIC speed must be between {MIN_GBPS:g} and {MAX_GBPS:,.0f} Gb/s per port, "
                           f"got {float(nic_gbps):,.6g}; use e.g. --nic-gbps 400")
    if fabric not in NETWORK_KINDS:
        raise FatTreeError(f"unknown fabric {fabric!r}; use --fabric infiniband or --fabric ethernet")
    if tiers is not None and tiers not in (2, 3):
        raise FatTreeError(f"a fat-tree has 2 or 3 tiers, got {tiers!r}; use --tiers 2 or --tiers 3 "
                           "(or leave --tiers out to choose automatically)")


def _layout(nodes, nics, tiers, radix, r: Fraction, rail: bool, catalog_radices=()) -> _Layout:
    d = _leaf_down(radix, r)
    "rail-optimized" if rail else "non-rail-optimized"
    if d < 1:
        raise FatTreeError(f"at {_ratio_text(r)} a radix-{radix} leaf has no port left for servers; "
                           "use a larger --oversubscription (1 is non-blocking) or --switch-radix")
    if not rail and d < nics and not (tiers is None and nodes * nics <= radix):
        raise FatTreeError(f"a server's {nics} NICs must share one leaf when not rail-optimized, but a "
                           f"radix-{radix} leaf at {_ratio_text(r)} has only {d} ports for servers; use "
                           f"--rail-optimized, --switch-radix {_suggest_radix(2 * nics, catalog_radices)} "
                           f"or fewer --nics-per-node")
    if tiers is None:
        if _one_tier_allowed(rail, nics) and nodes * nics <= radix:
            tiers = 1
        elif nodes <= _max_nodes(2, radix, r, nics, rail):
            tiers = 2
        else:
            tiers = 3
    max_nodes = _max_nodes(tiers, radix, r, nics, rail)
    if nodes > max_nodes:
        raise FatTreeError(_too_big_message(nodes, nics, tiers, radix, r, rail, max_nodes, catalog_radices))

    # Leaf groups: servers that share a leaf (or, rail-optimized, one leaf per rail).
    if tiers == 1:
        cap = nodes
    else:
        cap = d if rail else d // nics
    n_groups = -(-nodes // cap)
    group_sizes = _even(nodes, n_groups)
    lpg = nics if rail else 1
    if tiers == 3:
        groups_per_pod = (radix // 2) // lpg
        n_pods = -(-n_groups // groups_per_pod)
        pod_group_counts = _even(n_groups, n_pods)
    else:
        pod_group_counts = [n_groups]
    pods, g = [], 0
    for count in pod_group_counts:
        pods.append((g, g + count))
        g += count

    per_port = 1 if rail else nics
    leaf_sizes, leaf_ups = [], []
    for g0, g1 in pods:
        sizes = [group_sizes[gi] * per_port for gi in range(g0, g1)] * lpg  # rail-major
        leaf_sizes.append(sizes)
        leaf_ups.append([_up_links(m, r) for m in sizes] if tiers > 1 else [0] * len(sizes))

    lay = _Layout(tiers, rail, radix, r, d, nodes, nics, group_sizes, pods, leaf_sizes, leaf_ups,
                  0, [], 0, max_nodes)
    links = nodes * nics
    cables = links
    if tiers == 1:
        lay.links, lay.cables = links, cables
        return lay
    spine_down_ports = radix if tiers == 2 else radix // 2
    spines = max(-(-sum(ups) // spine_down_ports) for ups in leaf_ups)
    lay.spines_per_pod = spines
    for ups in leaf_ups:
        loads, bundles = _deal_loads(ups, spines)
        lay.spine_loads.append(loads)
        links += bundles
        cables += sum(ups)
    if tiers == 3:
        # Spine j of every pod sends as many cables up as it has down, to core group j.
        cores = max(-(-sum(loads[j] for loads in lay.spine_loads) // radix) for j in range(spines))
        lay.cores_per_group = cores
        for j in range(spines):
            ups = [loads[j] for loads in lay.spine_loads]
            _, bundles = _deal_loads(ups, cores)
            links += bundles
            cables += sum(ups)
    lay.links, lay.cables = links, cables
    return lay


def _too_big_message(nodes, nics, tiers, radix, r, rail, max_nodes, catalog_radices) -> str:
    ports = nodes * nics
    kind = "rail-optimized " if rail else ""
    if tiers == 2:
        text = (f"{nodes:,} servers ({ports:,} NIC ports) do not fit in 2 tiers: a {kind}2-tier fat-tree of "
                f"radix {radix} at {_ratio_text(r)} holds at most {max_nodes:,} servers; use")
        options = []
        if nodes <= _max_nodes(3, radix, r, nics, rail):
            options.append("--tiers 3")
    else:
        need = _min_radix(3, nodes, r, nics, rail, radix + 1)
        need_text = f"radix >= {need}" if need else "a larger radix"
        text = (f"{ports:,} NIC ports need 3 tiers of {need_text} at {_ratio_text(r)} ({kind}radix {radix} "
                f"holds at most {max_nodes:,} servers of {nics} NICs); use")
        options = []
    need = _min_radix(tiers, nodes, r, nics, rail, radix + 1)
    if need:
        hint = f" ({tiers} tiers need radix >= {need})" if tiers == 2 else ""
        options.append(f"--switch-radix {_suggest_radix(need, catalog_radices)}{hint}")
    ratio = _suggest_ratio(tiers, nodes, radix, r, nics, rail)
    if ratio is not None:
        options.append(f"--oversubscription {ratio:g}")
    if rail and nodes <= _max_nodes(tiers, radix, r, nics, False):
        options.append("--no-rail-optimized")
    if not options:
        options.append("fewer --nodes")
    return f"{text} {', '.join(options[:-1]) + ' or ' if len(options) > 1 else ''}{options[-1]}"


def _catalog_radices(catalog: Catalog | None, fabric: str, nic_gbps: float) -> tuple[int, ...]:
    if catalog is None:
        return ()
    return tuple(s.radix for s in catalog.switches.values() if s.kind == fabric and s.port_gbps == nic_gbps)


def _many(n: int, one: str, more: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else (more or one + 's')}"


def _server_units(gpus_per_node: int) -> int:
    return max(1, -(-gpus_per_node * SERVER_UNITS_PER_8_GPUS // 8))


def _switch_units(radix: int) -> int:
    return SWITCH_UNITS_SMALL if radix <= SWITCH_LARGE_RADIX else SWITCH_UNITS_LARGE


def _switch_pitch(radix: int) -> int:
    """Rack units from one switch to the next: the switch plus one unit of cable management."""
    return max(SWITCH_SLOT_PITCH_UNITS, _switch_units(radix) + 1)


def _switches_per_rack(radix: int) -> int:
    return min(SWITCHES_PER_NETWORK_RACK, max(1, RACK_UNITS // _switch_pitch(radix)))


def _rack_counts(lay: _Layout, servers_per_rack: int) -> tuple[list[int], list[int], int]:
    """(compute racks per pod, network racks per pod, core racks)."""
    per_rack = _switches_per_rack(lay.radix)
    compute = [-(-lay.pod_nodes(p) // servers_per_rack) for p in range(len(lay.pods))]
    network = [-(-lay.pod_switches(p) // per_rack) for p in range(len(lay.pods))]
    core = -(-lay.num_cores // per_rack)
    return compute, network, core


def _servers_per_rack(servers_per_rack: int, gpus_per_node: int) -> int:
    if isinstance(servers_per_rack, bool) or not isinstance(servers_per_rack, int) or servers_per_rack < 1:
        raise FatTreeError(f"servers per rack must be a whole number >= 1, got {servers_per_rack!r}")
    return max(1, min(servers_per_rack, RACK_UNITS // _server_units(gpus_per_node)))


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
    _check_numbers(nodes, gpus_per_node, nics_per_node, nic_gbps, fabric, tiers, switch_radix)
    r = _ratio(oversubscription)
    trays, tray_model = 1, None
    if gpu is not None:
        acc = _accelerator(catalog or default_catalog(), gpu, gpus_per_node)
        trays = _trays_per_domain(acc, gpus_per_node, nvlink_domain_gpus)
        if trays > 1:
            tray_model = nvlink_switch_model(catalog or default_catalog(), acc, trays * gpus_per_node)
    lay = _layout(nodes, nics_per_node, tiers, switch_radix, r, bool(rail_optimized),
                  _catalog_radices(catalog, fabric, float(nic_gbps)))
    spr = _servers_per_rack(servers_per_rack, gpus_per_node)
    compute, network, core = _rack_counts(lay, spr)
    if trays > 1:  # racks of NVLink domains (as _Builder._domain_racks fills them)
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
    _check_numbers(nodes, gpus_per_node, nics_per_node, nic_gbps, fabric, tiers, switch_radix)
    r = _ratio(oversubscription)
    acc = _accelerator(catalog, gpu, gpus_per_node)
    nic_gbps = float(nic_gbps)
    rail = bool(rail_optimized)
    lay = _layout(nodes, nics_per_node, tiers, switch_radix, r, rail, _catalog_radices(catalog, fabric, nic_gbps))
    spr = _servers_per_rack(servers_per_rack, gpus_per_node)
    trays = _trays_per_domain(acc, gpus_per_node, nvlink_domain_gpus)
    builder = _Builder(lay, acc, gpus_per_node, nic_gbps, fabric, catalog, spr)
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


# ---- building -----------------------------------------------------------------------------------

class _Builder:
    def __init__(self, lay: _Layout, acc, gpus_per_node: int, nic_gbps: float, fabric: str,
                 catalog: Catalog, servers_per_rack: int):
        self.lay = lay
        self.acc = acc
        self.gpus_per_node = gpus_per_node
        self.nic_gbps = nic_gbps
        self.fabric = fabric
        self.catalog = catalog
        self.spr = servers_per_rack
        self.links: list[Link] = []
        self.switches: list[Switch] = []
        self.racks: list[Rack] = []
        self.domain_trays = 1  # servers (trays) per NVLink domain; 1: each server is its own
        self.tray_model = None  # the catalog's NVLink switch tray of a multi-server domain
        self.nic_model = catalog.nic_for(fabric, nic_gbps)  # the servers' catalog NIC (or None)
        self.routing: str | None = None  # every scale-out switch's routing; None: its model's
        self.named_switch = None  # the catalog switch named by --switch-model (its ports maybe split)

    # -- parts from the catalog --
    def _switch_model(self) -> tuple[str, float, bool]:
        """(model, latency_us, sharp) of the switches."""
        lay = self.lay
        if self.named_switch is not None:
            s = self.named_switch
            return s.name, float(s.latency_us), bool(s.sharp) and self.fabric == "infiniband"
        exact = [s for s in self.catalog.switches.values()
                 if s.kind == self.fabric and s.port_gbps == self.nic_gbps and s.radix == lay.radix]
        if exact:
            s = exact[0]
            return s.name, float(s.latency_us), bool(s.sharp) and self.fabric == "infiniband"
        near = self.catalog.switch_for(self.fabric, self.nic_gbps)
        if near is not None:
            # Same fabric and speed but another radix: its latency and SHARP support are the
            # best guess for the chip generation, but naming the model would claim a radix
            # that it does not have.
            return "", float(near.latency_us), bool(near.sharp) and self.fabric == "infiniband"
        return "", DEFAULT_SWITCH_LATENCY_US[self.fabric], False

    def _scale_up(self) -> str:
        # The document knows nvswitch, nvlink and pcie. Anything else (MI300X's Infinity Fabric
        # mesh) is a set of direct GPU-to-GPU links without a switch, which is what "nvlink"
        # describes; its bandwidth still comes from the catalog entry (scale_up_gbps=None).
        return self.acc.scale_up if self.acc.scale_up in SCALE_UP_KINDS else "nvlink"

    # -- the whole document --
    def build(self, name: str | None) -> Document:
        lay = self.lay
        node_rack, node_slot = self._compute_racks()
        nodes = self._nodes(node_rack, node_slot)
        leaf_names = self._switches()
        self._nic_links(leaf_names)
        if lay.tiers > 1:
            self._leaf_spine_links()
        if lay.tiers == 3:
            self._spine_core_links()
        if self.domain_trays > 1:  # servers in file order, `domain_trays` at a time, share one domain
            for i, node in enumerate(nodes):
                node.nvlink_domain = f"nvl{i // self.domain_trays}"
            if self.tray_model is not None:
                add_switch_trays(nodes, self.switches, self.links, self.tray_model,
                                 self.domain_trays * self.gpus_per_node, self.domain_switch_places)
        self._network_racks()
        self._place_racks()
        spec = ClusterSpec(racks=self.racks, nodes=nodes, switches=self.switches, links=self.links)
        return Document(spec, Metadata(name=name or self._default_name(), description=self._description()))

    def _default_name(self) -> str:
        return f"fat-tree-{self.lay.nodes}x{self.gpus_per_node}-{self.acc.name.lower()}"

    def _description(self) -> str:
        lay = self.lay
        fabric = FABRIC_NAMES[self.fabric]
        servers = f"{lay.nodes:,} x {self.gpus_per_node} {self.acc.name}"
        speed = f"{self.nic_gbps:g} Gb/s"
        if lay.tiers == 1:
            return f"single-switch {fabric} network, {servers}, {lay.nics} x {speed} NICs each, radix {lay.radix}"
        rail = "rail-optimized " if lay.rail else ""
        parts = [f"{lay.tiers}-tier {rail}{fabric} fat-tree, {servers}, {_ratio_text(lay.ratio)}",
                 f"{lay.nics} x {speed} NICs per server, radix {lay.radix}",
                 f"{_many(lay.num_leaves, 'leaf', 'leaves')}, {_many(lay.num_spines, 'spine')}"]
        if lay.tiers == 3:
            parts[-1] += f", {_many(lay.num_cores, 'core')} in {_many(len(lay.pods), 'pod')}"
        return "; ".join(parts)

    # -- racks --
    def _compute_racks(self) -> tuple[list[str], list[int]]:
        """Racks for the servers, pod by pod; returns each server's rack id and slot."""
        lay = self.lay
        if self.domain_trays > 1:
            return self._domain_racks()
        units = _server_units(self.gpus_per_node)
        rack_units = max(RACK_UNITS, units)
        node_rack: list[str] = []
        node_slot: list[int] = []
        self.pod_compute: list[list[Rack]] = []
        n = 0
        for p in range(len(lay.pods)):
            row = f"pod{p}" if lay.tiers == 3 else "compute"
            racks = []
            left = lay.pod_nodes(p)
            while left > 0:
                rack = Rack(id=f"rack{n}", units=rack_units, row=row)
                n += 1
                racks.append(rack)
                here = min(left, self.spr)
                node_rack.extend([rack.id] * here)
                node_slot.extend(range(0, here * units, units))  # from the bottom up
                left -= here
            self.pod_compute.append(racks)
        self.server_units = units
        return node_rack, node_slot

    def _domain_racks(self) -> tuple[list[str], list[int]]:
        """Racks of NVLink domains: each domain's 1U trays and its switch trays share rack(s), pod by pod."""
        lay = self.lay
        switch_trays = self.tray_model.trays_for(self.domain_trays * self.gpus_per_node) if self.tray_model else 0
        node_rack: list[str] = []
        node_slot: list[int] = []
        self.domain_switch_places: dict[str, tuple[str, list[int]]] = {}
        n = 0
        self.pod_compute = [[] for _ in lay.pods]
        # one domain (or the part of it in this pod) at a time; its first rack holds its switch trays
        for p, domain, here in domain_runs([lay.pod_nodes(p) for p in range(len(lay.pods))], self.domain_trays):
            row = f"pod{p}" if lay.tiers == 3 else "compute"
            first_rack = f"nvl{domain}" not in self.domain_switch_places
            for compute, switch_slots in domain_racks(here, switch_trays if first_rack else 0, RACK_UNITS):
                rack = Rack(id=f"rack{n}", units=RACK_UNITS, row=row)
                n += 1
                self.pod_compute[p].append(rack)
                node_rack.extend([rack.id] * len(compute))
                node_slot.extend(compute)
                if first_rack:
                    self.domain_switch_places[f"nvl{domain}"] = (rack.id, switch_slots)
                    first_rack = False
        self.server_units = TRAY_UNITS
        return node_rack, node_slot

    def _network_racks(self) -> None:
        lay = self.lay
        units = _switch_units(lay.radix)
        pitch = _switch_pitch(lay.radix)
        per_rack = _switches_per_rack(lay.radix)
        self.pod_network: list[list[Rack]] = []
        self.core_racks: list[Rack] = []
        counter = [0]

        def fill(switches: list[Switch], row: str) -> list[Rack]:
            racks = []
            for start in range(0, len(switches), per_rack):
                rack = Rack(id=f"net{counter[0]}", row=row)
                counter[0] += 1
                racks.append(rack)
                for j, sw in enumerate(switches[start:start + per_rack]):
                    sw.rack = rack.id
                    sw.slot = j * pitch
                    sw.height_units = units
            return racks

        for p in range(len(lay.pods)):
            row = f"pod{p}" if lay.tiers == 3 else ("leaf-spine" if lay.tiers == 2 else "network")
            self.pod_network.append(fill(self.pod_switch_lists[p], row))
        if lay.tiers == 3:
            self.core_racks = fill(self.core_list, "core")

    def _place_racks(self) -> None:
        """Canvas grid: core racks on top, then one block per pod (network row(s) above compute)."""
        lay = self.lay

        def rows(count: int) -> int:
            return -(-count // RACKS_PER_ROW)

        def put(racks: list[Rack], x0: float, y0: float) -> None:
            for i, rack in enumerate(racks):
                rack.x = x0 + (i % RACKS_PER_ROW) * RACK_PITCH_X_PX
                rack.y = y0 + (i // RACKS_PER_ROW) * ROW_PITCH_Y_PX

        n_pods = len(lay.pods)
        columns = math.ceil(math.sqrt(n_pods)) if lay.tiers == 3 else 1
        widest = max(max(len(c), len(n)) for c, n in zip(self.pod_compute, self.pod_network))
        block_w = min(RACKS_PER_ROW, widest) * RACK_PITCH_X_PX + BLOCK_GAP_PX
        block_h = max(rows(len(n)) + rows(len(c)) for c, n in zip(self.pod_compute, self.pod_network))
        block_h = block_h * ROW_PITCH_Y_PX + BLOCK_GAP_PX
        y_top = 0.0
        if self.core_racks:
            put(self.core_racks, 0.0, 0.0)
            y_top = rows(len(self.core_racks)) * ROW_PITCH_Y_PX + BLOCK_GAP_PX
        ordered: list[Rack] = list(self.core_racks)
        for p in range(n_pods):
            x0 = (p % columns) * block_w
            y0 = y_top + (p // columns) * block_h
            net, comp = self.pod_network[p], self.pod_compute[p]
            put(net, x0, y0)
            put(comp, x0, y0 + rows(len(net)) * ROW_PITCH_Y_PX)
            ordered.extend(net)
            ordered.extend(comp)
        self.racks = ordered

    # -- servers --
    def _nodes(self, node_rack: list[str], node_slot: list[int]) -> list[Node]:
        lay = self.lay
        nic = self.nic_model
        nic_model = nic.name if nic is not None else ""
        scale_up = self._scale_up()
        g, k, units = self.gpus_per_node, lay.nics, self.server_units
        gpus_per_nic = max(1, -(-g // k))
        acc, gbps, fabric = self.acc.name, self.nic_gbps, self.fabric
        return [
            Node(id=f"node{i}", accelerator=acc, accelerator_count=g, scale_up=scale_up, scale_up_gbps=None,
                 nic_count=k, nic_model=nic_model, nic_gbps=gbps, nic_kind=fabric, gpus_per_nic=gpus_per_nic,
                 rack=node_rack[i], slot=node_slot[i], height_units=units)
            for i in range(lay.nodes)
        ]

    # -- switches --
    def _switches(self) -> list[list[str]]:
        """All switches; returns the leaf ids of each group, one per rail (or one)."""
        lay = self.lay
        model, latency, sharp_capable = self._switch_model()
        # SHARP needs the aggregation manager and NCCL's CollNet plugin (NCCL_COLLNET_ENABLE=1);
        # it is off unless the user turns it on per switch, even where the switch can do it.
        sharp = False
        radix, gbps, fabric = lay.radix, self.nic_gbps, self.fabric
        three = lay.tiers == 3
        lpg = lay.leaves_per_group
        group_leaves: list[list[str]] = [[""] * lpg for _ in lay.group_sizes]
        self.pod_leaves: list[list[str]] = []
        self.pod_spines: list[list[str]] = []
        self.pod_switch_lists: list[list[Switch]] = []
        n_leaf = n_spine = 0
        for p, (g0, g1) in enumerate(lay.pods):
            pod = p if three else None
            here: list[Switch] = []
            names = []
            for k in range(lpg):
                rail = k if lay.rail else None
                for gi in range(g0, g1):
                    leaf_id = f"leaf{n_leaf}"
                    n_leaf += 1
                    here.append(Switch(id=leaf_id, fabric=fabric, tier="leaf", radix=radix, port_gbps=gbps,
                                       latency_us=latency, model=model, sharp=sharp, rail=rail, pod=pod,
                                       routing=self.routing))
                    group_leaves[gi][k] = leaf_id
                    names.append(leaf_id)
            self.pod_leaves.append(names)
            spines = []
            for _ in range(lay.spines_per_pod if lay.tiers > 1 else 0):
                spine_id = f"spine{n_spine}"
                n_spine += 1
                here.append(Switch(id=spine_id, fabric=fabric, tier="spine", radix=radix, port_gbps=gbps,
                                   latency_us=latency, model=model, sharp=sharp, pod=pod, routing=self.routing))
                spines.append(spine_id)
            self.pod_spines.append(spines)
            self.pod_switch_lists.append(here)
            self.switches.extend(here)
        self.core_list: list[Switch] = []
        self.core_groups: list[list[str]] = []
        if three:
            n_core = 0
            for _ in range(lay.spines_per_pod):
                group = []
                for _ in range(lay.cores_per_group):
                    core_id = f"core{n_core}"
                    n_core += 1
                    self.core_list.append(Switch(id=core_id, fabric=fabric, tier="core", radix=radix,
                                                 port_gbps=gbps, latency_us=latency, model=model, sharp=sharp,
                                                 routing=self.routing))
                    group.append(core_id)
                self.core_groups.append(group)
            self.switches.extend(self.core_list)
        return group_leaves

    # -- cables --
    def _nic_links(self, group_leaves: list[list[str]]) -> None:
        lay = self.lay
        links = self.links
        kind, gbps, k_nics = self.fabric, self.nic_gbps, lay.nics
        biggest = max(lay.group_sizes) * (1 if lay.rail else k_nics)
        ports = [f"p{q}" for q in range(biggest)]
        nic_ports = [f"nic{k}" for k in range(k_nics)]
        n = len(links)
        i = 0
        for gi, size in enumerate(lay.group_sizes):
            leaves = group_leaves[gi]
            for q in range(size):
                node = f"node{i}:"
                for k in range(k_nics):
                    if lay.rail:
                        b = f"{leaves[k]}:{ports[q]}"
                    else:
                        b = f"{leaves[0]}:{ports[q * k_nics + k]}"
                    links.append(Link(id=f"l{n}", a=node + nic_ports[k], b=b, kind=kind, bandwidth_gbps=gbps,
                                      latency_us=NIC_CABLE_LATENCY_US))
                    n += 1
                i += 1

    def _deal(self, lowers: list[str], counts: list[int], lower_port0: int, uppers: list[str],
              upper_next: list[int], latency: float) -> None:
        """Cables from each lower switch spread over all `uppers`, as `_deal_loads` counts them.

        Lower ports start at `lower_port0` on each lower switch; `upper_next` holds the next
        free port of each upper switch and is advanced.
        """
        links = self.links
        kind, gbps = self.fabric, self.nic_gbps
        n = len(links)
        s = len(uppers)
        offset = 0
        for low, c in zip(lowers, counts):
            base, extra = divmod(c, s)
            port = lower_port0
            for j in range(s):
                cnt = base + (1 if (j - offset) % s < extra else 0)
                if not cnt:
                    continue
                links.append(Link(id=f"l{n}", a=f"{low}:p{port}", b=f"{uppers[j]}:p{upper_next[j]}", kind=kind,
                                  bandwidth_gbps=gbps, latency_us=latency, count=cnt))
                n += 1
                port += cnt
                upper_next[j] += cnt
            offset = (offset + extra) % s

    def _leaf_spine_links(self) -> None:
        lay = self.lay
        for p in range(len(lay.pods)):
            spines = self.pod_spines[p]
            self._deal(self.pod_leaves[p], lay.leaf_ups[p], lay.down, spines, [0] * len(spines),
                       LEAF_SPINE_CABLE_LATENCY_US)

    def _spine_core_links(self) -> None:
        lay = self.lay
        half = lay.radix // 2
        for j, cores in enumerate(self.core_groups):
            spines = [self.pod_spines[p][j] for p in range(len(lay.pods))]
            ups = [lay.spine_loads[p][j] for p in range(len(lay.pods))]
            self._deal(spines, ups, half, cores, [0] * len(cores), SPINE_CORE_CABLE_LATENCY_US)
