"""A found fabric (switches, hosts, cables) as a Designer document: tiers, racks, canvas places.

The importers (ibnetdiscover, Slurm topology.conf) read their format into `FoundFabric`;
`build_document` turns it into nodes, switches, links and racks the way the fat-tree generator
lays out its own designs, so an imported cluster looks and validates like a generated one.
"""
from __future__ import annotations

import re
from collections import defaultdict, deque
from dataclasses import dataclass, field

from ...generate.fat_tree_geometry import (
    DEFAULT_SWITCH_LATENCY_US, LEAF_SPINE_CABLE_LATENCY_US, NIC_CABLE_LATENCY_US, RACK_PITCH_X_PX, RACK_UNITS,
    RACKS_PER_ROW, ROW_PITCH_Y_PX, SERVER_UNITS_PER_8_GPUS, SERVERS_PER_RACK, SPINE_CORE_CABLE_LATENCY_US,
    SWITCH_LARGE_RADIX, SWITCH_SLOT_PITCH_UNITS, SWITCH_UNITS_LARGE, SWITCH_UNITS_SMALL, SWITCHES_PER_NETWORK_RACK,
)
from ...model.catalog import Accelerator, Catalog, default_catalog
from ...model.document import ClusterSpec, Document
from ...model.elements import MAX_PORTS, SCALE_UP_KINDS, Link, Metadata, Node, Rack, Switch
from ...problems import DesignerError, Problem

# Most GPUs one server takes when the count is guessed from its HCAs (an HGX board has 8).
MAX_GUESSED_GPUS_PER_NODE = 8
BLOCK_GAP_PX = 120.0


@dataclass
class FoundSwitch:
    """A switch an importer found, under the source's handle, with a name for the user."""
    key: str  # the source's handle (a GUID, a Slurm switch name)
    name: str  # shown to the user
    radix: int = 0  # 0: as many ports as cables use
    preferred_id: str | None = None  # a readable unique id from the source, when it has one


@dataclass
class FoundLink:
    """One cable. Ends are ("switch", key, port) or ("host", name, nic); ports count from 0."""

    a: tuple[str, str, int]
    b: tuple[str, str, int]
    gbps: float
    note: str = ""


@dataclass
class FoundFabric:
    """The switches, hosts and cables an importer read from a source, before it becomes a design."""
    switches: dict[str, FoundSwitch] = field(default_factory=dict)
    hosts: dict[str, int] = field(default_factory=dict)  # host name -> number of NICs
    links: list[FoundLink] = field(default_factory=list)
    fabric: str = "infiniband"


def rename_found_hosts(found: FoundFabric, renamed: dict[str, str]) -> None:
    """Give hosts the names a --hosts MAP set (old name -> new), in its hosts and its cables' ends."""
    if not renamed:
        return
    found.hosts = {renamed.get(h, h): n for h, n in found.hosts.items()}
    for link in found.links:
        for end in ("a", "b"):
            kind, key, port = getattr(link, end)
            if kind == "host" and key in renamed:
                setattr(link, end, (kind, renamed[key], port))


def safe_id(text: str) -> str:
    """An id usable in DEVICE:PORT endpoints: no ':' or spaces."""
    out = re.sub(r"[^A-Za-z0-9_.\-]+", "-", text).strip("-")
    return out or "x"


def infer_tiers(found: FoundFabric, roles: dict[str, str] | None = None) -> dict[str, str]:
    """Tiers by distance from the GPU servers, not from "has servers".

    leaf: a switch with a compute host; spine: one cable above such a leaf, whatever hosts it also
    carries (a spine that also carries storage hosts stays a spine); core: further up. A switch two
    or more cables away whose hosts are all storage, login or service hosts is a leaf of its own (a
    storage leaf under the spines). A switch no leaf reaches (a management island) is a leaf when it
    has hosts, else a spine; islands() names them."""
    roles = roles or {}
    neighbours: dict[str, set[str]] = defaultdict(set)
    compute_leaves: set[str] = set()
    with_hosts: set[str] = set()
    for link in found.links:
        ends = (link.a, link.b)
        kinds = [e[0] for e in ends]
        if kinds == ["switch", "switch"]:
            neighbours[link.a[1]].add(link.b[1])
            neighbours[link.b[1]].add(link.a[1])
        else:
            host = next((e[1] for e in ends if e[0] == "host"), None)
            for e in ends:
                if e[0] == "switch":
                    with_hosts.add(e[1])
                    if roles.get(host, "compute") == "compute":
                        compute_leaves.add(e[1])
    if not compute_leaves:  # no GPU server at all: every switch with hosts is a leaf, as before
        compute_leaves = set(with_hosts)
    level = {key: 0 for key in compute_leaves}
    queue = deque(compute_leaves)
    while queue:
        here = queue.popleft()
        for other in neighbours[here]:
            if other not in level:
                level[other] = level[here] + 1
                queue.append(other)
    tiers = {}
    for key in found.switches:
        n = level.get(key)
        if n is None:
            n = 0 if key in with_hosts else 1
        elif n >= 2 and key in with_hosts:
            n = 0  # only storage/service hosts, beside the GPU servers' leaves: a leaf of its own
        tiers[key] = "leaf" if n == 0 else ("spine" if n == 1 else "core")
    return tiers


def islands(found: FoundFabric, roles: dict[str, str] | None = None) -> list[str]:
    """Switches no GPU server's leaf reaches (a management network beside the compute fabric)."""
    roles = roles or {}
    neighbours: dict[str, set[str]] = defaultdict(set)
    start: set[str] = set()
    for link in found.links:
        if link.a[0] == link.b[0] == "switch":
            neighbours[link.a[1]].add(link.b[1])
            neighbours[link.b[1]].add(link.a[1])
        else:
            host = link.a[1] if link.a[0] == "host" else link.b[1]
            if roles.get(host, "compute") == "compute":
                start.update(e[1] for e in (link.a, link.b) if e[0] == "switch")
    seen, queue = set(start), deque(start)
    while queue:
        for other in neighbours[queue.popleft()]:
            if other not in seen:
                seen.add(other)
                queue.append(other)
    return [key for key in found.switches if key not in seen] if start else []


_RACK_TOKEN = re.compile(r"(?:^|[-_.])(r|rack)(\d+)(?=[-_.]|$)", re.IGNORECASE)


def rack_token(host: str) -> str | None:
    """'r3-1014' -> 'r3', 'a01-rack12-n3' -> 'rack12', 'gpu045' -> None."""
    m = _RACK_TOKEN.search(host)
    return f"{m.group(1).lower()}{m.group(2)}" if m else None


def natural_key(text: str):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


def _server_units(gpus: int) -> int:
    return max(1, -(-gpus * SERVER_UNITS_PER_8_GPUS // 8))


@dataclass
class _PortFacts:
    """What the cables say about the ports: each switch's highest port used and fastest cable, each
    host's fastest cable, and the speed most cables run at."""

    top_port: dict[str, int]
    switch_gbps: dict[str, float]
    host_gbps: dict[str, float]
    usual_gbps: float


def build_document(found: FoundFabric, *, gpu: str, gpus_per_node: int | None, name: str, description: str,
                   catalog: Catalog | None = None, source: str = "",
                   roles: dict[str, str] | None = None) -> tuple[Document, list[str]]:
    """The document and the lines to tell the user (racks chosen, GPUs assumed). `roles`: each
    host's role (host_roles.classify_hosts); hosts that are not compute come after the GPU servers."""
    roles = roles or {}
    catalog = catalog or default_catalog()
    said: list[str] = []
    acc = _accelerator(catalog, gpu, gpus_per_node)
    tiers = infer_tiers(found, roles)
    apart = islands(found, roles)
    if apart:
        shown = ", ".join(found.switches[k].name for k in apart[:6]) + (" ..." if len(apart) > 6 else "")
        said.append(f"{len(apart)} switch(es) no GPU server reaches (a management network?): {shown}; "
                    "kept apart from the tiers above the GPU servers")
    switch_id = _switch_ids(found, tiers)
    ports = _port_facts(found)
    switches = _switches(found, tiers, switch_id, ports, catalog)
    host_names = sorted(found.hosts, key=lambda h: (roles.get(h, "compute") != "compute", natural_key(h)))
    node_id = _node_ids(host_names, set(switch_id.values()))
    said.append(_gpus_assumed(found, host_names, roles, acc, gpus_per_node))
    nodes = _nodes(found, host_names, node_id, roles, acc, gpus_per_node, ports, catalog)
    links = _links(found, tiers, switch_id, node_id)
    racks = _racks(found, nodes, node_id, switches, switch_id, said)
    spec = ClusterSpec(racks=racks, nodes=nodes, switches=switches, links=links)
    return Document(spec, Metadata(name=name, description=description)), said


def _accelerator(catalog: Catalog, gpu: str, gpus_per_node: int | None) -> Accelerator:
    """The catalog's accelerator `gpu`, refused when unknown or when a server cannot hold `gpus_per_node`."""
    canonical = catalog.resolve("accelerators", gpu)
    if canonical is None:
        raise DesignerError([Problem(f"unknown accelerator {gpu!r}", fix=f"{catalog.suggest('accelerators', gpu)} "
                                     "(use --gpu with a name from `designer catalog`)")])
    acc = catalog.accelerators[canonical]
    if gpus_per_node is not None and acc.max_per_node and gpus_per_node > acc.max_per_node:
        raise DesignerError([Problem(f"a {acc.name} server holds at most {acc.max_per_node} accelerators, not "
                                     f"{gpus_per_node}", fix=f"use --gpus-per-node {acc.max_per_node} or less")])
    return acc


def _switch_ids(found: FoundFabric, tiers: dict[str, str]) -> dict[str, str]:
    """Each switch's id, in the order the switches are written (core, spine, leaf; by name): the
    source's own when it is unique, else tier and number (leaf0, leaf1, ...)."""
    used_ids: set[str] = set()
    switch_id: dict[str, str] = {}
    counters: dict[str, int] = defaultdict(int)
    order = {"core": 0, "spine": 1, "leaf": 2}
    switch_keys = sorted(found.switches, key=lambda k: (order[tiers[k]], natural_key(found.switches[k].name)))
    preferred = [found.switches[k].preferred_id for k in switch_keys]
    for key in switch_keys:
        pid = found.switches[key].preferred_id
        if pid and preferred.count(pid) == 1 and pid not in used_ids:
            switch_id[key] = pid
        else:
            while f"{tiers[key]}{counters[tiers[key]]}" in used_ids or \
                    f"{tiers[key]}{counters[tiers[key]]}" in preferred:
                counters[tiers[key]] += 1
            switch_id[key] = f"{tiers[key]}{counters[tiers[key]]}"
            counters[tiers[key]] += 1
        used_ids.add(switch_id[key])
    return switch_id


def _port_facts(found: FoundFabric) -> _PortFacts:
    top_port: dict[str, int] = defaultdict(lambda: -1)
    switch_gbps: dict[str, float] = defaultdict(float)
    host_gbps: dict[str, float] = defaultdict(float)
    for link in found.links:
        for kind, key, port in (link.a, link.b):
            if kind == "switch":
                top_port[key] = max(top_port[key], port)
                switch_gbps[key] = max(switch_gbps[key], link.gbps)
            else:
                host_gbps[key] = max(host_gbps[key], link.gbps)
    return _PortFacts(top_port, switch_gbps, host_gbps, _usual_gbps(found))


def _switches(found: FoundFabric, tiers: dict[str, str], switch_id: dict[str, str], ports: _PortFacts,
              catalog: Catalog) -> list[Switch]:
    """The switches, ports and speed from the cables on them; the catalog's model when one matches."""
    switches = []
    for key in switch_id:
        fs = found.switches[key]
        radix = min(MAX_PORTS, max(fs.radix, ports.top_port[key] + 1, 1))
        gbps = ports.switch_gbps[key] or ports.usual_gbps
        exact = [s for s in catalog.switches.values()
                 if s.kind == found.fabric and s.port_gbps == gbps and s.radix == radix]
        near = catalog.switch_for(found.fabric, gbps)
        latency = float((exact[0] if exact else near).latency_us) if (exact or near) \
            else DEFAULT_SWITCH_LATENCY_US[found.fabric]
        switches.append(Switch(id=switch_id[key], fabric=found.fabric, tier=tiers[key], radix=radix, port_gbps=gbps,
                               latency_us=latency, model=exact[0].name if exact else "",
                               name=fs.name if fs.name != switch_id[key] else ""))
    return switches


def _node_ids(host_names: list[str], used_ids: set[str]) -> dict[str, str]:
    """Each host's id: its name made safe, '-host' added while a switch or another host has it."""
    used_ids = set(used_ids)
    node_id: dict[str, str] = {}
    for host in host_names:
        nid = safe_id(host)
        while nid in used_ids:
            nid += "-host"
        node_id[host] = nid
        used_ids.add(nid)
    return node_id


def _gpus_assumed(found: FoundFabric, host_names: list[str], roles: dict[str, str], acc: Accelerator,
                  gpus_per_node: int | None) -> str:
    """What the user is told of the GPUs per server, which the input does not hold."""
    if gpus_per_node is not None:
        return (f"GPUs are not in the input: assumed {gpus_per_node} x {acc.name} per server "
                f"(from --gpu and --gpus-per-node)")
    computing = [h for h in host_names if roles.get(h, "compute") == "compute"]
    counts = {min(max(found.hosts[h], 1), MAX_GUESSED_GPUS_PER_NODE) for h in computing}
    shown = "/".join(str(c) for c in sorted(counts)) or "1"
    return (f"GPUs are not in the input: assumed {acc.name} servers with one GPU per HCA port "
            f"(at most {MAX_GUESSED_GPUS_PER_NODE}): {shown} per server (set --gpu and --gpus-per-node)")


def _nodes(found: FoundFabric, host_names: list[str], node_id: dict[str, str], roles: dict[str, str],
           acc: Accelerator, gpus_per_node: int | None, ports: _PortFacts, catalog: Catalog) -> list[Node]:
    """The servers: GPUs as given (or one per HCA port), a NIC of the catalog at their cables' speed."""
    scale_up = acc.scale_up if acc.scale_up in SCALE_UP_KINDS else "nvlink"
    nodes = []
    for host in host_names:
        nics = found.hosts[host]
        role = roles.get(host, "compute")
        gpus = gpus_per_node or min(max(nics, 1), MAX_GUESSED_GPUS_PER_NODE)
        if acc.max_per_node:
            gpus = min(gpus, acc.max_per_node)
        if role != "compute":
            gpus = 1  # the schema's least; a non-compute host's GPUs are neither counted nor used
        gbps = ports.host_gbps[host] or ports.usual_gbps
        nic = catalog.nic_for(found.fabric, gbps)
        nodes.append(Node(id=node_id[host], accelerator=acc.name, accelerator_count=gpus, scale_up=scale_up,
                          nic_count=nics, nic_model=nic.name if nic else "", nic_gbps=gbps, nic_kind=found.fabric,
                          gpus_per_nic=max(1, -(-gpus // nics)) if nics else 1,
                          height_units=_server_units(gpus), name=host if host != node_id[host] else "",
                          role=role))
    return nodes


def _links(found: FoundFabric, tiers: dict[str, str], switch_id: dict[str, str],
           node_id: dict[str, str]) -> list[Link]:
    """The cables, servers' ends first, with the latency of their tier."""
    used_ids = set(switch_id.values()) | set(node_id.values())
    tier_of = {switch_id[k]: tiers[k] for k in found.switches}
    # cables are l0, l1, ... unless a switch or host already has such a name (a site's leaf "l1")
    prefix = next(p for p in ("l", "link", "cable", "link-") if not any(re.fullmatch(rf"{re.escape(p)}\d+", x)
                                                                       for x in used_ids))
    links = []
    for i, fl in enumerate(found.links):
        ends = []
        for kind, key, port in (fl.a, fl.b):
            ends.append(f"{switch_id[key]}:p{port}" if kind == "switch" else f"{node_id[key]}:nic{port}")
        if fl.a[0] == "host" or fl.b[0] == "host":
            latency = NIC_CABLE_LATENCY_US
            if fl.a[0] == "switch" and fl.b[0] == "host":
                ends.reverse()  # servers first, as the generator writes them
        else:
            up = {tier_of[switch_id[fl.a[1]]], tier_of[switch_id[fl.b[1]]]}
            latency = SPINE_CORE_CABLE_LATENCY_US if "core" in up else LEAF_SPINE_CABLE_LATENCY_US
        links.append(Link(id=f"{prefix}{i}", a=ends[0], b=ends[1], kind=found.fabric, bandwidth_gbps=fl.gbps,
                          latency_us=latency, note=fl.note))
    return links


def _usual_gbps(found: FoundFabric) -> float:
    """The speed most cables run at (ties: the faster): what the fabric was built for."""
    count: dict[float, int] = defaultdict(int)
    for link in found.links:
        count[link.gbps] += 1
    if not count:
        return 400.0
    return max(count, key=lambda g: (count[g], g))


def _racks(found, nodes, node_id, switches, switch_id, said) -> list[Rack]:
    """Servers by the rack their names give (r3-..., rack12-...), else by the leaf they hang off."""
    by_id = {n.id: n for n in nodes}
    host_of = {v: k for k, v in node_id.items()}
    tokens = {n.id: rack_token(host_of[n.id]) for n in nodes}
    first_leaf: dict[str, str] = {}
    for fl in found.links:
        for mine, other in ((fl.a, fl.b), (fl.b, fl.a)):
            if mine[0] == "host" and other[0] == "switch":
                nid = node_id[mine[1]]
                if nid not in first_leaf or mine[2] == 0:
                    first_leaf[nid] = switch_id[other[1]]
    named = sum(1 for t in tokens.values() if t)
    groups: dict[str, list[str]] = defaultdict(list)
    if nodes and named * 2 >= len(nodes):
        for n in nodes:
            groups[tokens[n.id] or "unnamed"].append(n.id)
        said.append(f"racks: {len(groups)} from the rack numbers in the host names")
        per_rack_default = None
    else:
        for n in nodes:
            groups[first_leaf.get(n.id, "unconnected")].append(n.id)
        per_rack_default = SERVERS_PER_RACK
        if nodes:
            said.append(f"racks: the host names carry no rack number; servers grouped by their leaf switch, "
                        f"{SERVERS_PER_RACK} to a rack")
    compute: list[Rack] = []
    for group in sorted(groups, key=natural_key):
        members = sorted(groups[group], key=natural_key)
        units = max(by_id[m].height_units for m in members)
        per_rack = max(1, min(per_rack_default or RACK_UNITS, RACK_UNITS // units))
        for start in range(0, len(members), per_rack):
            chunk = members[start:start + per_rack]
            rack = Rack(id=f"rack{len(compute)}", row=group,
                        name=group if per_rack_default is None and start == 0 and len(members) <= per_rack
                        else "")
            compute.append(rack)
            slot = 0
            for m in chunk:
                by_id[m].rack, by_id[m].slot = rack.id, slot
                slot += by_id[m].height_units
    network: list[Rack] = []
    units = [SWITCH_UNITS_SMALL if sw.radix <= SWITCH_LARGE_RADIX else SWITCH_UNITS_LARGE for sw in switches]
    pitch = max([SWITCH_SLOT_PITCH_UNITS] + [u + 1 for u in units])  # a switch and a unit of cable management
    per_rack = max(1, min(SWITCHES_PER_NETWORK_RACK, RACK_UNITS // pitch))
    for j, sw in enumerate(switches):
        if j % per_rack == 0:
            network.append(Rack(id=f"net{len(network)}", row="network"))
        sw.rack, sw.slot, sw.height_units = network[-1].id, (j % per_rack) * pitch, units[j]
    _place(network, 0.0)
    rows = -(-len(network) // RACKS_PER_ROW) if network else 0
    _place(compute, rows * ROW_PITCH_Y_PX + (BLOCK_GAP_PX if network else 0.0))
    return network + compute


def _place(racks: list[Rack], y0: float) -> None:
    for i, rack in enumerate(racks):
        rack.x = (i % RACKS_PER_ROW) * RACK_PITCH_X_PX
        rack.y = y0 + (i // RACKS_PER_ROW) * ROW_PITCH_Y_PX


def describe_tiers(doc: Document) -> str:
    """The tiers as imported and each tier's oversubscription: capacity down (servers and lower
    tiers) over capacity up (higher tiers), summed over the tier, with the range over its switches."""
    rank = {"leaf": 0, "spine": 1, "core": 2}
    switches = {s.id: s for s in doc.switches if s.tier in rank}
    nodes = {n.id for n in doc.nodes}
    down: dict[str, float] = defaultdict(float)
    up: dict[str, float] = defaultdict(float)
    for link in doc.links:
        a, b = link.a.split(":", 1)[0], link.b.split(":", 1)[0]
        gbps = link.bandwidth_gbps * link.count
        for mine, other in ((a, b), (b, a)):
            if mine not in switches:
                continue
            if other in nodes or (other in switches and rank[switches[other].tier] < rank[switches[mine].tier]):
                down[mine] += gbps
            elif other in switches and rank[switches[other].tier] > rank[switches[mine].tier]:
                up[mine] += gbps
    parts = []
    for tier in ("leaf", "spine", "core"):
        members = [k for k, s in switches.items() if s.tier == tier]
        if not members:
            continue
        text = f"{len(members)} {tier}"
        total_down, total_up = sum(down[k] for k in members), sum(up[k] for k in members)
        if total_up > 0:
            ratios = [down[k] / up[k] for k in members if up[k] > 0]
            text += f" at {total_down / total_up:.3g}:1 ({total_down:g}:{total_up:g} Gb/s down:up"
            if ratios and max(ratios) - min(ratios) > 0.005:
                text += f"; {min(ratios):.3g}:1 to {max(ratios):.3g}:1 by switch"
            text += ")"
            without = [k for k in members if up[k] == 0 and down[k] > 0]
            if without:
                text += f", {len(without)} without up-links"
        parts.append(text)
    return "tiers (from the graph, by distance from the GPU servers): " + ", ".join(parts) if parts else ""


def provenance(doc: Document, said: list[str], *, rates: str, roles_why: dict[str, str],
               device_rates: int = 0) -> str:
    """One line for the import summary: what was read from the file, what was inferred from it, and
    what was guessed (and which flag sets it). `rates`: how the cable speeds came ("read" or the flag)."""
    read = [f"{len(doc.switches)} switches", f"{len(doc.nodes)} hosts", f"{len(doc.links)} cables"]
    inferred = ["tiers (by distance from the GPU servers)"]
    guessed = []
    if rates == "read":
        read.append("each cable's trained rate")
    else:
        guessed.append(f"cable rates ({rates})")
    if device_rates:
        inferred.append(f"the fastest rate of {device_rates} devices (their device id)")
    by_rule = sum(1 for why in roles_why.values() if why.startswith("--") or ":" in why)
    by_guess = len(roles_why) - by_rule
    if by_rule:
        read.append(f"{by_rule} hosts' roles (your --compute/--hosts)")
    if by_guess:
        guessed.append(f"{by_guess} hosts' roles (by name or HCA count: --compute, --hosts)")
    if any(line.startswith("racks:") and "rack numbers" in line for line in said):
        inferred.append("racks (rack numbers in the host names)")
    else:
        guessed.append("racks (servers of one leaf, 4 to a rack)")
    computing = [n for n in doc.nodes if n.role == "compute"]
    if computing:
        counts = sorted({n.accelerator_count for n in computing})
        guessed.append(f"GPUs ({'/'.join(map(str, counts))} x {computing[0].accelerator} per server: --gpu, "
                       "--gpus-per-node)")
    return f"read: {', '.join(read)}; inferred: {', '.join(inferred)}; guessed: {', '.join(guessed)}"
