"""The logical fabric picture of a design, computed without Qt: tiers top to bottom (core, spine,
leaf, then the compute row of servers and NVLink domains), pods and rails grouped, the parallel
cables between two blocks bundled with their count and capacity, and the oversubscription of
each switch tier (its down capacity over its up capacity).

The rack canvas draws where things stand; this draws how they are wired, the way vendor
reference architectures do. A tier with more blocks than fit a screen (`max_blocks_per_tier`)
is aggregated: leaves by pod and rail, spines by pod, cores by the spines they serve, servers by
the leaves they share or by pod, so 16,384 GPUs read as 16 pods rather than 2,048 boxes.

Positions are in scene pixels; the Qt widget (designer/ui/logical) only draws them.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .document import Document

TIERS_TOP_DOWN = ("core", "spine", "leaf", "compute")
TIER_RANK = {"compute": 0, "leaf": 1, "spine": 2, "core": 3}
PLURAL = {"core": "cores", "spine": "spines", "leaf": "leaves", "compute": "servers"}
MAX_BLOCKS_PER_TIER = 16  # more than this in one row and the row is aggregated (pod, rail, ...): a
# block then keeps ~60 px of a 1,000 px view, room for its name
SCALE_UP_LINK_KINDS = ("nvlink", "pcie")  # inside a server or an NVLink domain: not drawn as a bundle

# Geometry (scene px)
SLOT_PX = 150.0  # horizontal room per block in the fullest row
MIN_WIDTH_PX = 1200.0
SWITCH_HEIGHT_PX = 44.0
COMPUTE_HEIGHT_PX = 64.0
ROW_GAP_PX = 170.0  # between two rows: room for the bundles, their labels and the tier's ratio
BLOCK_FILL = 0.9  # share of its slot a block's width takes


@dataclass
class Block:
    """One box of the picture: a switch, a server, an NVLink domain, or a group of them."""

    id: str  # the element's id, or "domain:NAME" / "group:TIER:KEY"
    tier: str  # core | spine | leaf | compute
    kind: str  # switch | server | domain | group
    label: str
    detail: str  # one line or more ("\n")
    members: tuple[str, ...]  # ids of the servers and switches it stands for
    gpus: int = 0
    pod: int | None = None
    rail: int | None = None
    x: float = 0.0  # left edge
    y: float = 0.0  # top edge
    width: float = 0.0
    height: float = 0.0

    @property
    def center(self) -> tuple[float, float]:
        return self.x + self.width / 2, self.y + self.height / 2


@dataclass(eq=False)
class Bundle:
    """Every cable between two blocks, as one line."""

    upper: int  # block index (the higher tier; the left one within a tier)
    lower: int
    cables: int
    capacity_gbps: float  # per direction, the cables' line rates summed
    rate_gbps: float | None  # each cable's rate; None when they differ
    kind: str  # the cables' kind, or "mixed"
    link_rows: np.ndarray  # positions of its links in doc.links

    @property
    def label(self) -> str:
        total = format_gbps(self.capacity_gbps)
        if self.cables == 1:
            return total
        if self.rate_gbps is None:
            return f"{self.cables:,} cables = {total}"
        return f"{self.cables:,} x {format_gbps(self.rate_gbps)} = {total}"


@dataclass
class TierRatio:
    """Oversubscription of one switch tier: what its switches take from below over what they can
    send above. A tier at the top (nothing above it) has none."""

    tier: str
    upper: str  # the tier above
    down_gbps: float
    up_gbps: float
    worst: str | None = None  # the switch with the highest ratio, when it is worse than the tier's
    worst_ratio: float | None = None
    without_uplinks: int = 0  # switches of the tier with cables down and none up

    @property
    def ratio(self) -> float | None:
        return self.down_gbps / self.up_gbps if self.up_gbps > 0 else None

    @property
    def label(self) -> str:
        text = f"{self.tier} -> {self.upper} {format_ratio(self.ratio)}"
        if self.worst is not None:
            text += f" (worst {self.worst} {format_ratio(self.worst_ratio)})"
        if self.without_uplinks:
            text += f", {self.without_uplinks} without uplinks"
        return text


@dataclass
class Band:
    """A frame behind blocks that belong together: a pod (several rows) or a rail (leaf row)."""

    kind: str  # pod | rail
    label: str
    x: float
    y: float
    width: float
    height: float


@dataclass
class LogicalLayout:
    """The logical view of a fabric: tiers as rows of blocks joined by cable bundles, with ratios."""
    tiers: list[str]  # present, top to bottom
    tier_y: dict[str, float]  # top edge of each row
    blocks: list[Block]
    bundles: list[Bundle]
    ratios: dict[str, TierRatio]  # by tier (leaf, spine, ...)
    bands: list[Band]
    aggregated: dict[str, bool]  # per tier: shown as groups
    block_of: dict[str, int]  # element id (server, switch) -> block index
    link_ids: list[str]  # doc.links' ids in order (bundle.link_rows index it)
    width: float
    height: float
    gpus: int = 0
    internal_links: int = 0  # links inside one block (scale-up, or within a group): not drawn
    blocks_of_rack: dict[str, list[int]] = field(default_factory=dict)

    def bundle_link_ids(self, bundle: Bundle) -> list[str]:
        return [self.link_ids[i] for i in bundle.link_rows]

    def blocks_for(self, ids) -> set[int]:
        """Blocks standing for any of these elements (a rack: the blocks of what it holds)."""
        out: set[int] = set()
        for element_id in ids:
            index = self.block_of.get(element_id)
            if index is not None:
                out.add(index)
            else:
                out.update(self.blocks_of_rack.get(element_id, ()))
        return out

    def bundles_for(self, ids) -> set[int]:
        """Bundles holding any of these links."""
        wanted = set(ids)
        if not wanted:
            return set()
        rows = {i for i, link_id in enumerate(self.link_ids) if link_id in wanted}
        if not rows:
            return set()
        return {k for k, b in enumerate(self.bundles) if not rows.isdisjoint(b.link_rows.tolist())}


def format_gbps(gbps: float) -> str:
    """400 -> '400G', 12800 -> '12.8T', 1.6e6 -> '1.6P' (bits per second, as cables are sold)."""
    for limit, unit in ((1e6, "P"), (1e3, "T")):
        if gbps >= limit:
            return f"{gbps / limit:.4g}{unit}"
    return f"{gbps:.4g}G"


def format_ratio(ratio: float | None) -> str:
    """2 -> '2:1', 1 -> '1:1', 0.5 -> '1:2' (more up than down), None -> 'no uplinks'."""
    if ratio is None:
        return "no uplinks"
    if ratio >= 1:
        return f"{round(ratio, 2):g}:1"
    return f"1:{round(1 / ratio, 2):g}"


# ---- the computation --------------------------------------------------------------------------
@dataclass
class _Unit:
    """What the compute row holds before aggregation: a server, or an NVLink domain, or a tray
    that names no domain and joins no server."""

    key: str
    kind: str  # server | domain | switch
    devices: list[int]  # device indices (servers first, switches after them)
    name: str


@dataclass(eq=False)
class _LinkColumns:
    """The links as columns: each one's two devices as indices (-1: not a device of the design),
    cables, rate and kind, and which ones join two devices through the scale-out fabric."""

    dev_a: np.ndarray
    dev_b: np.ndarray
    cables: np.ndarray
    rate: np.ndarray
    kinds: list[str]
    capacity: np.ndarray  # cables x rate
    valid: np.ndarray  # two different devices of the design
    scale_up: np.ndarray  # inside a server or an NVLink domain (not drawn as a bundle)
    fabric: np.ndarray  # valid and not scale-up


@dataclass
class _Neighbours:
    """Who each device connects to through the scale-out fabric, a tier up and a tier down."""

    up: dict[int, set[int]]
    down: dict[int, set[int]]


@dataclass
class _Rows:
    """The blocks of the rows, top down, each with the devices it holds, and which rows were aggregated."""

    blocks: list[Block] = field(default_factory=list)
    devices: list[list[int]] = field(default_factory=list)
    aggregated: dict[str, bool] = field(default_factory=dict)


def build_logical_layout(doc: Document, max_blocks_per_tier: int = MAX_BLOCKS_PER_TIER) -> LogicalLayout:
    nodes, switches, links = doc.nodes, doc.switches, doc.links
    n_nodes = len(nodes)
    n_dev = n_nodes + len(switches)
    device_ids = [n.id for n in nodes] + [s.id for s in switches]
    cols = _link_columns(doc)
    tier_of = _device_tiers(doc)
    rank = np.fromiter((TIER_RANK[t] for t in tier_of), dtype=np.int64, count=n_dev)
    units = _compute_units(doc, cols.dev_a, cols.dev_b, cols.valid & cols.scale_up)
    near = _fabric_neighbours(cols, rank)

    # ---- rows of blocks, aggregated where a row holds too many ----
    rows = _switch_rows(doc, tier_of, near, device_ids, max_blocks_per_tier)
    compute = _compute_row(doc, units, near, device_ids, max_blocks_per_tier)
    rows.blocks += compute.blocks
    rows.devices += compute.devices
    rows.aggregated.update(compute.aggregated)
    blocks = rows.blocks
    block_of_device = np.full(n_dev, -1, dtype=np.int64)
    for i, devs in enumerate(rows.devices):
        block_of_device[devs] = i

    # ---- bundles: every link between two blocks, summed ----
    dev_a, dev_b, valid = cols.dev_a, cols.dev_b, cols.valid
    ba = np.where(dev_a >= 0, block_of_device[np.maximum(dev_a, 0)], -1)
    bb = np.where(dev_b >= 0, block_of_device[np.maximum(dev_b, 0)], -1)
    drawn = valid & (ba >= 0) & (bb >= 0) & (ba != bb)
    internal = int(np.count_nonzero(valid & (ba == bb)))
    bundles = _bundles(blocks, ba, bb, drawn, cols.cables, cols.rate, cols.capacity, cols.kinds)

    ratios = _ratios(tier_of, device_ids, rank, dev_a, dev_b, cols.fabric, cols.capacity)

    tiers = [t for t in TIERS_TOP_DOWN if any(b.tier == t for b in blocks)]
    tier_y, bands, width, height = _place(blocks, tiers, rows.aggregated)

    block_of = {device_ids[d]: int(block_of_device[d]) for d in range(n_dev) if block_of_device[d] >= 0}
    return LogicalLayout(
        tiers=tiers, tier_y=tier_y, blocks=blocks, bundles=bundles, ratios=ratios, bands=bands,
        aggregated=rows.aggregated, block_of=block_of, link_ids=[l.id for l in links], width=width, height=height,
        gpus=doc.num_gpus(), internal_links=internal, blocks_of_rack=_blocks_of_rack(doc, block_of))


def _link_columns(doc: Document) -> _LinkColumns:
    links = doc.links
    n_nodes = len(doc.nodes)
    a, b = doc.link_ends.sides(doc)  # the check's parse
    kind, index = np.concatenate([a.kind, b.kind]), np.concatenate([a.index, b.index])
    device = np.where(kind == 1, index, np.where(kind == 2, index + n_nodes, -1))
    n_links = len(links)
    dev_a, dev_b = device[:n_links], device[n_links:]
    cables = np.fromiter((l.count for l in links), dtype=np.int64, count=n_links)
    rate = np.fromiter((l.bandwidth_gbps for l in links), dtype=np.float64, count=n_links)
    kinds = [l.kind for l in links]
    scale_up = np.fromiter((k in SCALE_UP_LINK_KINDS for k in kinds), dtype=bool, count=n_links)
    valid = (dev_a >= 0) & (dev_b >= 0) & (dev_a != dev_b)
    return _LinkColumns(dev_a, dev_b, cables, rate, kinds, cables * rate, valid, scale_up, valid & ~scale_up)


def _device_tiers(doc: Document) -> list[str]:
    """Tier of every device (servers, then switches); NVLink trays belong to the compute row (inside
    their domain)."""
    tier_of = ["compute"] * len(doc.nodes)
    for s in doc.switches:
        tier_of.append("compute" if s.is_nvlink_tray or s.tier not in TIER_RANK else s.tier)
    return tier_of


def _fabric_neighbours(cols: _LinkColumns, rank: np.ndarray) -> _Neighbours:
    """Neighbours through the scale-out fabric, for grouping by "who they connect to"."""
    up_neighbours: dict[int, set[int]] = defaultdict(set)
    down_neighbours: dict[int, set[int]] = defaultdict(set)
    fa, fb = cols.dev_a[cols.fabric], cols.dev_b[cols.fabric]
    ra, rb = rank[fa], rank[fb]
    for lo, hi in ((fa[ra < rb], fb[ra < rb]), (fb[rb < ra], fa[rb < ra])):
        for x, y in zip(lo.tolist(), hi.tolist()):
            up_neighbours[x].add(y)
            down_neighbours[y].add(x)
    return _Neighbours(up_neighbours, down_neighbours)


def _switch_rows(doc: Document, tier_of: list[str], near: _Neighbours, device_ids: list[str],
                 max_blocks_per_tier: int) -> _Rows:
    """The core, spine and leaf rows: one block per switch, or groups of them when a row holds too
    many (leaves by pod and rail, spines by pod or what they serve, cores by what they serve)."""
    n_nodes, n_dev = len(doc.nodes), len(tier_of)
    pod_of_device = [None] * n_nodes + [s.pod for s in doc.switches]
    rail_of_device = [None] * n_nodes + [s.rail for s in doc.switches]
    rows = _Rows()
    for tier in ("core", "spine", "leaf"):
        members = [d for d in range(n_nodes, n_dev) if tier_of[d] == tier]
        if not members:
            continue
        pods = [pod_of_device[d] for d in members]
        rails = [rail_of_device[d] for d in members]
        ups = [frozenset(near.up.get(d, ())) for d in members]
        downs = [frozenset(near.down.get(d, ())) for d in members]
        keys: list[tuple[str, Callable[[int], object]]] = []
        if tier == "leaf":
            keys = [("pod-rail", lambda i: (pods[i], rails[i])), ("pod", lambda i: pods[i]),
                    ("rail", lambda i: rails[i])]
        elif tier == "spine":
            keys = [("pod", lambda i: pods[i]), ("below", lambda i: downs[i])]
        else:
            keys = [("below", lambda i: downs[i]), ("above", lambda i: ups[i])]
        groups, how = _group(len(members), keys, max_blocks_per_tier, pods if tier != "core" else None)
        rows.aggregated[tier] = how is not None
        for ordinal, group in enumerate(groups):
            devs = [members[i] for i in group]
            rows.blocks.append(_switch_block(doc, tier, devs, how, device_ids, pods, rails, group, n_nodes, ordinal,
                                             len(groups) == 1))
            rows.devices.append(devs)
    return rows


def _compute_row(doc: Document, units: list[_Unit], near: _Neighbours, device_ids: list[str],
                 max_blocks_per_tier: int) -> _Rows:
    """The compute row: one block per server or NVLink domain, or groups of them by the leaves they
    share or by pod when the row holds too many."""
    rows = _Rows()
    if not units:
        return rows
    n_nodes = len(doc.nodes)
    pod_of_device = [None] * n_nodes + [s.pod for s in doc.switches]

    def leaf_pod(devs: list[int]) -> int | None:
        pods = Counter(pod_of_device[y] for d in devs for y in near.up.get(d, ())
                       if pod_of_device[y] is not None)
        return pods.most_common(1)[0][0] if pods else None

    unit_pods = [leaf_pod(u.devices) for u in units]
    unit_leaves = [frozenset(y for d in u.devices for y in near.up.get(d, ())) for u in units]
    keys = [("leaves", lambda i: unit_leaves[i]), ("pod", lambda i: unit_pods[i])]
    groups, how = _group(len(units), keys, max_blocks_per_tier, unit_pods)
    rows.aggregated["compute"] = how is not None
    for group in groups:
        group_units = [units[i] for i in group]
        pod = unit_pods[group[0]] if how != "chunk" else None  # the pod of its leaves (pod frames)
        rows.blocks.append(_compute_block(doc, group_units, how, pod, n_nodes, device_ids))
        rows.devices.append([d for u in group_units for d in u.devices])
    return rows


def _blocks_of_rack(doc: Document, block_of: dict[str, int]) -> dict[str, list[int]]:
    """The blocks that hold each rack's servers and switches."""
    blocks_of_rack: dict[str, set[int]] = defaultdict(set)
    for element in list(doc.nodes) + list(doc.switches):
        if element.rack is not None and element.id in block_of:
            blocks_of_rack[element.rack].add(block_of[element.id])
    return {k: sorted(v) for k, v in blocks_of_rack.items()}


def _compute_units(doc: Document, dev_a, dev_b, scale_up_links) -> list[_Unit]:
    """Servers and NVLink domains (servers + their switch trays) of the compute row."""
    nodes, switches = doc.nodes, doc.switches
    n_nodes = len(nodes)
    units: list[_Unit] = []
    by_domain: dict[str, int] = {}
    unit_of = np.full(n_nodes + len(switches), -1, dtype=np.int64)
    for i, node in enumerate(nodes):
        if node.nvlink_domain:
            k = by_domain.get(node.nvlink_domain)
            if k is None:
                k = by_domain[node.nvlink_domain] = len(units)
                units.append(_Unit(f"domain:{node.nvlink_domain}", "domain", [], node.nvlink_domain))
            units[k].devices.append(i)
            unit_of[i] = k
        else:
            unit_of[i] = len(units)
            units.append(_Unit(node.id, "server", [i], node.name or node.id))
    # A tray without a domain of its own joins the domain (or server) it is cabled to.
    linked: dict[int, int] = {}
    for x, y in zip(dev_a[scale_up_links].tolist(), dev_b[scale_up_links].tolist()):
        if x < n_nodes <= y:
            linked.setdefault(y, x)
        elif y < n_nodes <= x:
            linked.setdefault(x, y)
    for j, switch in enumerate(switches):
        d = n_nodes + j
        if not (switch.is_nvlink_tray or switch.tier not in TIER_RANK):
            continue
        k = by_domain.get(switch.nvlink_domain) if switch.nvlink_domain else None
        if k is None and d in linked:
            k = int(unit_of[linked[d]])
        if k is None:
            k = len(units)
            units.append(_Unit(switch.id, "switch", [], switch.name or switch.id))
        units[k].devices.append(d)
        unit_of[d] = k
    return units


def _group(count: int, keys, limit: int, pods) -> tuple[list[list[int]], str | None]:
    """Items 0..count-1 as groups: each alone when they fit the row, else by the first key that
    gives few enough groups, else in equal runs. Groups keep the items' order; the pod (when
    known) orders them first so that a pod's blocks stand together in every row."""
    def ordered(groups: list[list[int]]) -> list[list[int]]:
        if pods is None:
            return groups
        return sorted(groups, key=lambda g: (pods[g[0]] is None, pods[g[0]] or 0, g[0]))

    if count <= limit:
        return ordered([[i] for i in range(count)]), None
    for name, key in keys:
        found: dict[object, list[int]] = {}
        for i in range(count):
            found.setdefault(key(i), []).append(i)
        if len(found) <= limit and not (len(found) == 1 and None in found):
            return ordered(list(found.values())), name
    size = -(-count // limit)
    return [list(range(s, min(count, s + size))) for s in range(0, count, size)], "chunk"


def _span(values) -> str:
    """'0-7' for 0..7, '0, 2, 5' otherwise (values sorted, Nones left out)."""
    values = sorted({v for v in values if v is not None})
    if not values:
        return ""
    if values == list(range(values[0], values[-1] + 1)) and len(values) > 2:
        return f"{values[0]}-{values[-1]}"
    return ", ".join(str(v) for v in values)


def _switch_block(doc, tier, devs, how, device_ids, pods, rails, group, n_nodes, ordinal, single) -> Block:
    switches = [doc.switches[d - n_nodes] for d in devs]
    first = switches[0]
    pod, rail = pods[group[0]], rails[group[0]]
    if how is None:
        ports = f"{first.radix} x {format_gbps(first.port_gbps)}"
        where = [f"rail {first.rail}"] if first.rail is not None else []  # first: a narrow box shows it
        where += [f"pod {first.pod}"] if first.pod is not None else []
        return Block(first.id, tier, "switch", first.name or first.id, ", ".join(where + [ports]),
                     (first.id,), pod=first.pod, rail=first.rail)
    n = len(switches)
    if how == "pod-rail":
        label = f"pod {pod} rail {rail}" if pod is not None and rail is not None else \
            f"pod {pod}" if pod is not None else f"rail {rail}" if rail is not None else "other"
    elif how == "pod":
        label = f"pod {pod}" if pod is not None else f"{PLURAL[tier]} in no pod"
    elif how == "rail":
        label = f"rail {rail}" if rail is not None else f"{PLURAL[tier]} on no rail"
    elif single:
        label = f"all {PLURAL[tier]}"
    elif tier == "core" and how in ("below", "above"):
        label = f"core group {ordinal}"
    else:
        label = f"{first.id} .. {switches[-1].id}"
    rails_text = _span(s.rail for s in switches)
    detail = f"{n} switch{'es' if n != 1 else ''}"
    if rails_text and how not in ("rail", "pod-rail"):
        detail += f", rail{'s' if len(rails_text) > 1 else ''} {rails_text}"
    return Block(f"group:{tier}:{first.id}", tier, "group", label, detail, tuple(device_ids[d] for d in devs),
                 pod=pod if how in ("pod", "pod-rail") or tier != "core" else None,
                 rail=rail if how in ("pod-rail", "rail") else None)


def _compute_block(doc, units: list[_Unit], how, pod, n_nodes, device_ids) -> Block:
    devs = [d for u in units for d in u.devices]
    servers = [doc.nodes[d] for d in devs if d < n_nodes]
    trays = [doc.switches[d - n_nodes] for d in devs if d >= n_nodes]
    gpus = sum(s.accelerator_count for s in servers)
    members = tuple(device_ids[d] for d in devs)
    if how is None:
        u = units[0]
        if u.kind == "server":
            s = servers[0]
            return Block(s.id, "compute", "server", u.name, f"{s.accelerator_count} x {s.accelerator}, "
                         f"{s.nic_count} x {format_gbps(s.nic_gbps)}", members, gpus=gpus, pod=pod)
        if u.kind == "domain":
            accel = servers[0].accelerator if servers else ""
            return Block(u.key, "compute", "domain", u.name,
                         f"NVLink domain of {gpus} x {accel}\n{len(servers)} trays, {len(trays)} NVLink switches",
                         members, gpus=gpus, pod=pod)
        return Block(trays[0].id, "compute", "switch", u.name, "NVLink switch (no domain)", members)
    domains = sum(u.kind == "domain" for u in units)
    if how == "pod" and pod is not None:
        label = f"pod {pod}"
    else:
        label = f"{units[0].name} .. {units[-1].name}"
    what = f"{domains} NVLink domains, " if domains else ""
    return Block(f"group:compute:{units[0].key}", "compute", "group", label,
                 f"{what}{len(servers):,} servers, {gpus:,} GPUs", members, gpus=gpus,
                 pod=pod if how in ("pod", "leaves") else None)


def _bundles(blocks, ba, bb, drawn, cables, rate, capacity, kinds) -> list[Bundle]:
    rows = np.flatnonzero(drawn)
    if rows.size == 0:
        return []
    a, b = ba[rows], bb[rows]
    tier_rank = np.array([TIER_RANK[bl.tier] for bl in blocks])
    a_upper = (tier_rank[a] > tier_rank[b]) | ((tier_rank[a] == tier_rank[b]) & (a < b))
    upper, lower = np.where(a_upper, a, b), np.where(a_upper, b, a)
    pair = upper * len(blocks) + lower
    keys, inverse = np.unique(pair, return_inverse=True)
    n = len(keys)
    count = np.bincount(inverse, weights=cables[rows], minlength=n).astype(np.int64)
    total = np.bincount(inverse, weights=capacity[rows], minlength=n)
    lo = np.full(n, np.inf)
    hi = np.full(n, -np.inf)
    np.minimum.at(lo, inverse, rate[rows])
    np.maximum.at(hi, inverse, rate[rows])
    kind_codes = {k: i for i, k in enumerate(sorted(set(kinds)))}
    kind_of = np.fromiter((kind_codes[kinds[r]] for r in rows.tolist()), dtype=np.int64, count=rows.size)
    kmin = np.full(n, np.iinfo(np.int64).max)
    kmax = np.full(n, -1)
    np.minimum.at(kmin, inverse, kind_of)
    np.maximum.at(kmax, inverse, kind_of)
    names = sorted(kind_codes)
    order = np.argsort(inverse, kind="stable")
    splits = np.split(rows[order], np.cumsum(np.bincount(inverse, minlength=n))[:-1])
    out = []
    for k in range(n):
        out.append(Bundle(int(keys[k] // len(blocks)), int(keys[k] % len(blocks)), int(count[k]), float(total[k]),
                          float(lo[k]) if lo[k] == hi[k] else None,
                          names[kmin[k]] if kmin[k] == kmax[k] else "mixed", splits[k]))
    return out


def _ratios(tier_of, device_ids, rank, dev_a, dev_b, fabric, capacity) -> dict[str, TierRatio]:
    """Per switch tier: down capacity (to lower tiers) over up capacity (to higher ones)."""
    n_dev = len(tier_of)
    a, b, cap = dev_a[fabric], dev_b[fabric], capacity[fabric]
    ra, rb = rank[a], rank[b]
    differ = ra != rb
    a, b, cap, ra, rb = a[differ], b[differ], cap[differ], ra[differ], rb[differ]
    low = np.where(ra < rb, a, b)
    high = np.where(ra < rb, b, a)
    up = np.bincount(low, weights=cap, minlength=n_dev)  # each device's capacity towards higher tiers
    down = np.bincount(high, weights=cap, minlength=n_dev)
    present = {t for t in tier_of}
    out: dict[str, TierRatio] = {}
    for tier in ("leaf", "spine", "core"):
        above = [t for t in ("spine", "core") if TIER_RANK[t] > TIER_RANK[tier] and t in present]
        if tier not in present or not above:
            continue
        mine = np.array([i for i, t in enumerate(tier_of) if t == tier and rank[i] == TIER_RANK[tier]])
        d, u = down[mine], up[mine]
        ratio = TierRatio(tier, above[0], float(d.sum()), float(u.sum()))
        with np.errstate(divide="ignore", invalid="ignore"):
            each = np.where(u > 0, d / np.where(u > 0, u, 1), 0.0)
        ratio.without_uplinks = int(np.count_nonzero((u == 0) & (d > 0)))
        if each.size and ratio.ratio is not None and each.max() > ratio.ratio * 1.01:
            worst = int(np.argmax(each))
            ratio.worst, ratio.worst_ratio = device_ids[mine[worst]], float(each[worst])
        out[tier] = ratio
    return out


def _place(blocks: list[Block], tiers: list[str], aggregated) -> tuple[dict, list[Band], float, float]:
    """Rows top to bottom; within a row, blocks in order, a pod's blocks under one another."""
    rows = {t: [i for i, b in enumerate(blocks) if b.tier == t] for t in tiers}
    widest = max((len(r) for r in rows.values()), default=1)
    width = max(MIN_WIDTH_PX, widest * SLOT_PX)
    # Pods: one column each, as wide as the pod's fullest row needs.
    pods = sorted({b.pod for b in blocks if b.pod is not None})
    pod_need = {p: max(sum(1 for i in rows[t] if blocks[i].pod == p) for t in tiers) for p in pods}
    pod_x: dict[int, tuple[float, float]] = {}
    x = 0.0
    total_need = sum(pod_need.values()) or 1
    for p in pods:
        w = width * pod_need[p] / total_need
        pod_x[p] = (x, w)
        x += w
    tier_y: dict[str, float] = {}
    y = 0.0
    for t in tiers:
        tier_y[t] = y
        height = COMPUTE_HEIGHT_PX if t == "compute" else SWITCH_HEIGHT_PX
        row = rows[t]
        by_pod = pods and all(blocks[i].pod is not None for i in row)
        if by_pod:
            for p in pods:
                mine = [i for i in row if blocks[i].pod == p]
                _spread(blocks, mine, *pod_x[p], y, height)
        else:
            _spread(blocks, row, 0.0, width, y, height)
        y += height + ROW_GAP_PX
    height_total = y - ROW_GAP_PX if tiers else 0.0
    bands: list[Band] = []
    for p in pods:
        mine = [b for b in blocks if b.pod == p]
        if not mine:
            continue
        x0, w = pod_x[p]
        top = min(b.y for b in mine) - 22
        bottom = max(b.y + b.height for b in mine) + 10
        bands.append(Band("pod", f"pod {p}", x0 + 4, top, w - 8, bottom - top))
    if not aggregated.get("leaf", True):
        leaves = sorted((b for b in blocks if b.tier == "leaf" and b.rail is not None), key=lambda b: b.x)
        run: list[Block] = []
        for b in leaves + [None]:
            if run and (b is None or (b.rail, b.pod) != (run[0].rail, run[0].pod)) and len(run) == 1:
                run = []  # a rail of one leaf: its box says "rail k" already
            if run and (b is None or (b.rail, b.pod) != (run[0].rail, run[0].pod)):
                x0 = run[0].x - 6
                x1 = run[-1].x + run[-1].width + 6
                bands.append(Band("rail", f"rail {run[0].rail}", x0, run[0].y - 6, x1 - x0, run[0].height + 24))
                run = []
            if b is not None:
                run.append(b)
    return tier_y, bands, width, height_total


def _spread(blocks: list[Block], row: list[int], x0: float, width: float, y: float, height: float) -> None:
    if not row:
        return
    slot = width / len(row)
    w = min(slot * BLOCK_FILL, max(SLOT_PX * 2.2, width * 0.25))  # a lone block is wide enough for its name
    for k, i in enumerate(row):
        b = blocks[i]
        b.x = x0 + slot * (k + 0.5) - w / 2
        b.y = y
        b.width = w
        b.height = height
