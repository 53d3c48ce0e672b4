"""Hardware what-ifs as edits of a copy of the design: faster link classes, no
oversubscription, the other network kind, more servers.

Each function takes a document and returns a changed copy, or raises `NotApplicable` with
the reason a user would want ("no spine-core links: the fabric has two tiers").
"""
from __future__ import annotations

import copy

from collections import Counter

from ..generate.fat_tree import FatTreeError, generate_fat_tree
from ..model.catalog import Catalog, default_catalog
from ..model.document import Document
from ..model.elements import NVLINK_SWITCH, Node, Switch


class NotApplicable(ValueError):
    pass


def detached_copy(doc: Document) -> Document:
    """A copy whose elements may be edited in place (each is copied one level; their fields
    are scalars), cheap enough for 16k GPUs, and a new design for any engine's caches."""
    out = doc.snapshot()
    # a snapshot shares its elements (copy-on-write through Document.update); the what-if edits
    # change elements in place, so each gets its own one-level copy
    spec = out.spec
    spec.racks = [copy.copy(e) for e in spec.racks]
    spec.nodes = [copy.copy(e) for e in spec.nodes]
    spec.switches = [copy.copy(e) for e in spec.switches]
    spec.links = [copy.copy(e) for e in spec.links]
    out._reindex()
    out.lineage = object()
    out.revision = 0
    out.change_log = []
    return out


def _ends(doc: Document, link):
    return doc.device(link.a.split(":")[0]), doc.device(link.b.split(":")[0])


def _switch_pair(doc: Document, link, lower: str, upper: str) -> bool:
    a, b = _ends(doc, link)
    if not (isinstance(a, Switch) and isinstance(b, Switch)):
        return False
    return {a.tier, b.tier} == {lower, upper}


def _nic_link(doc: Document, link) -> bool:
    a, b = _ends(doc, link)
    return (isinstance(a, Node) and isinstance(b, Switch)) or (isinstance(b, Node) and isinstance(a, Switch))


def _raise_ports(doc: Document, link, gbps: float) -> None:
    for end in _ends(doc, link):
        if isinstance(end, Switch) and end.port_gbps < gbps:
            end.port_gbps = gbps


def scale_up_2x(doc: Document, catalog: Catalog | None = None) -> Document:
    catalog = catalog or default_catalog()
    out = detached_copy(doc)
    if not out.nodes:
        raise NotApplicable("the design has no servers")
    for node in out.nodes:
        acc = catalog.accelerator(node.accelerator)
        node.scale_up_gbps = 2 * (node.scale_up_gbps or acc.scale_up_gbps)
    for link in out.links:
        if link.kind == "nvlink":
            link.bandwidth_gbps *= 2
    return out


def nic_2x(doc: Document) -> Document:
    out = detached_copy(doc)
    if not any(n.nic_count for n in out.nodes):
        raise NotApplicable("the servers have no NICs")
    for node in out.nodes:
        node.nic_gbps *= 2
        node.nic_model = ""  # a catalog model would pin the old speed
    for link in out.links:
        if _nic_link(out, link):
            link.bandwidth_gbps *= 2
            _raise_ports(out, link, link.bandwidth_gbps)
    return out


def slow_cables(doc: Document) -> list[tuple[str, float, float]]:
    """(link id, its speed, its peers' speed) of each cable slower than most cables of its tier pair
    (a cable that trained at 4xDDR among 4xEDR ones, a `bandwidth_gbps` set lower): where it hurts,
    re-seating or replacing it is the cheapest change there is."""
    from collections import Counter

    def tier(end) -> str:
        return end.tier if isinstance(end, Switch) else "server"

    groups: dict[tuple, Counter] = {}
    keyed = []
    for link in doc.links:
        a, b = _ends(doc, link)
        if a is None or b is None or link.kind not in ("infiniband", "ethernet"):
            continue
        key = tuple(sorted((tier(a), tier(b))))
        groups.setdefault(key, Counter())[link.bandwidth_gbps] += link.count
        keyed.append((key, link))
    out = []
    for key, link in keyed:
        usual = groups[key].most_common(1)[0][0]
        if link.bandwidth_gbps < 0.99 * usual:
            out.append((link.id, link.bandwidth_gbps, usual))
    return out


def restore_slow_cables(doc: Document) -> Document:
    """The design with every slow cable (slow_cables) at its peers' speed."""
    slow = slow_cables(doc)
    if not slow:
        raise NotApplicable("every cable runs at the speed of its tier's other cables")
    out = detached_copy(doc)
    for link_id, _, usual in slow:
        out.find("links", link_id).bandwidth_gbps = usual
    return out


def static_switches(doc: Document) -> list[str]:
    """Ids of the InfiniBand switches set to static routing (one path per destination)."""
    return [s.id for s in doc.switches if s.fabric == "infiniband" and s.routing == "static"]


def adaptive_routing(doc: Document) -> Document:
    """The design with adaptive routing on every InfiniBand switch that routes statically."""
    static = set(static_switches(doc))
    if not static:
        raise NotApplicable("no InfiniBand switch routes statically")
    out = detached_copy(doc)
    for sw in out.switches:
        if sw.id in static:
            sw.routing = "adaptive"
    return out


def tier_links_2x(doc: Document, lower: str, upper: str) -> Document:
    out = detached_copy(doc)
    hits = [link for link in out.links if _switch_pair(out, link, lower, upper)]
    if not hits:
        raise NotApplicable(f"no {lower}-{upper} links in this fabric")
    for link in hits:
        link.bandwidth_gbps *= 2
        _raise_ports(out, link, link.bandwidth_gbps)
    return out


def oversubscription(doc: Document) -> dict[str, float]:
    """Down:up capacity ratio of each leaf and spine that has up-links."""
    down: Counter = Counter()
    up: Counter = Counter()
    rank = {"leaf": 0, "spine": 1, "core": 2}
    for link in doc.links:
        a, b = _ends(doc, link)
        cap = link.bandwidth_gbps * link.count
        if isinstance(a, Switch) and isinstance(b, Switch):
            lo, hi = (a, b) if rank.get(a.tier, 0) <= rank.get(b.tier, 0) else (b, a)
            if lo.tier == hi.tier:
                continue
            up[lo.id] += cap
            down[hi.id] += cap
        elif isinstance(a, Switch) or isinstance(b, Switch):
            sw = a if isinstance(a, Switch) else b
            down[sw.id] += cap
    return {sw: down[sw] / up[sw] for sw in up if up[sw] > 0}


def no_oversubscription(doc: Document) -> Document:
    """Every leaf and spine with as much up-link as down-link capacity (faster up-links)."""
    ratios = oversubscription(doc)
    over = {sw: r for sw, r in ratios.items() if r > 1 + 1e-9}
    if not over:
        raise NotApplicable("no switch is oversubscribed: every leaf and spine has as much capacity up as down")
    out = detached_copy(doc)
    rank = {"leaf": 0, "spine": 1, "core": 2}
    for link in out.links:
        a, b = _ends(out, link)
        if not (isinstance(a, Switch) and isinstance(b, Switch)) or a.tier == b.tier:
            continue
        lo = a if rank.get(a.tier, 0) < rank.get(b.tier, 0) else b
        if lo.id in over:
            link.bandwidth_gbps *= over[lo.id]
            _raise_ports(out, link, link.bandwidth_gbps)
    return out


def worst_oversubscription(doc: Document) -> float:
    ratios = oversubscription(doc)
    return max(ratios.values()) if ratios else 1.0


def network_kind(doc: Document) -> str | None:
    """The network most switches and NICs speak (None: no network)."""
    kinds = Counter(s.fabric for s in doc.switches) + Counter(n.nic_kind for n in doc.nodes if n.nic_count)
    return kinds.most_common(1)[0][0] if kinds else None


def swap_network(doc: Document) -> tuple[Document, str]:
    """InfiniBand becomes Ethernet (RoCE) and back: switches, cables and NICs."""
    current = network_kind(doc)
    if current is None:
        raise NotApplicable("the design has no network")
    target = "ethernet" if current == "infiniband" else "infiniband"
    out = detached_copy(doc)
    for sw in out.switches:
        if sw.fabric == current:
            sw.fabric = target
            sw.model = ""
            if target == "ethernet":
                sw.sharp = False
    for node in out.nodes:
        if node.nic_kind == current:
            node.nic_kind = target
            node.nic_model = ""
    for link in out.links:
        if link.kind == current:
            link.kind = target
    return out, target


def fabric_parameters(doc: Document) -> dict:
    """The generator's parameters that would draw a fabric like this one (for extending it)."""
    if not doc.nodes:
        raise NotApplicable("the design has no servers to extend")
    node = doc.nodes[0]
    scale_out = [s for s in doc.switches if s.fabric != NVLINK_SWITCH]  # NVLink switch trays are generated apart
    leaves = [s for s in scale_out if s.tier == "leaf"]
    kinds = Counter(s.fabric for s in scale_out)
    rails = {s.rail for s in leaves if s.rail is not None}
    over = [r for sw, r in oversubscription(doc).items() if (s := doc.find("switches", sw)) and s.tier == "leaf"]
    domains = Counter(n.nvlink_domain for n in doc.nodes if n.nvlink_domain)
    out = {
        "gpu": node.accelerator, "gpus_per_node": node.accelerator_count, "nics_per_node": max(1, node.nic_count),
        "nic_gbps": node.nic_gbps, "fabric": kinds.most_common(1)[0][0] if kinds else node.nic_kind,
        "switch_radix": max((s.radix for s in scale_out), default=64),
        "oversubscription": max(1.0, round(max(over), 3)) if over else 1.0,
        "rail_optimized": bool(rails) or not leaves,
    }
    if domains:  # servers that share NVLink domains: the generator's --nvlink-domain-gpus
        out["nvlink_domain_gpus"] = max(domains.values()) * node.accelerator_count
    return out


def extended(doc: Document, nodes: int, catalog: Catalog | None = None) -> Document:
    """The design with `nodes` servers of the same kind on a generated fabric like its own;
    the job (workload, plan, calibration) carries over."""
    params = fabric_parameters(doc)
    try:
        out = generate_fat_tree(nodes, catalog=catalog, name=f"{doc.metadata.name} x{nodes} servers", **params)
    except FatTreeError as exc:
        raise NotApplicable(str(exc)) from exc
    src = doc.nodes[0]
    for node in out.nodes:  # keep the server's own settings (scale-up rate, GPUDirect, ...)
        node.scale_up = src.scale_up
        node.scale_up_gbps = src.scale_up_gbps
        node.gpus_per_nic = src.gpus_per_nic
        node.gpudirect_rdma = src.gpudirect_rdma
    out.spec.workload = doc.spec.workload
    out.spec.parallelism = doc.spec.parallelism
    out.spec.calibration = dict(doc.spec.calibration)
    return Document(out.spec, out.metadata)
