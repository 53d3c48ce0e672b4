"""Cable a server into a fabric the way the servers around it are cabled ("Connect to fabric").

A server dropped or duplicated into a rail-optimized fabric has no NIC cables. Its cabling is
read off the other servers of its kind (same NIC kind and NIC count): each such server maps
NIC k to one leaf, and the tuple of leaves is a *leaf group* (in a rail-optimized fabric, rail
k's leaf of one scalable unit or pod; without rails, one leaf for every NIC). The new server
joins the group of its nearest neighbours (same rack first, then the nearest racks) that still
has a free port on every leaf it needs, takes the lowest free port of each, and gets one link
per NIC. When no group has room, the refusal names the full leaf of the nearest group and the fix.

A compute tray of an NVLink domain that has NVLink switch trays also gets the NVLink links a
tray of the same domain has (same counts, consecutive free ports on each switch tray); a domain
whose switch trays are full refuses, since the engine would count the extra tray's GPUs in it.

Pure: reads the document, returns new Link elements; the caller adds them (one undo step in the
app, `designer connect` on the command line).
"""
from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from .document import Document
from .elements import NETWORK_KINDS, NVLINK_SWITCH, Link, Node, Switch, port_index, split_endpoint


class CablingRefused(ValueError):
    """The server cannot be connected: what is wrong, the fix, and the element it is about (the
    server, or the full leaf) with its collection, so a caller can point at its place in the file."""

    def __init__(self, message: str, fix: str, element: str | None = None, collection: str = "nodes"):
        super().__init__(f"{message}: {fix}")
        self.message, self.fix, self.element, self.collection = message, fix, element, collection


@dataclass
class Cabling:
    """The cables auto-cabling proposes for one server, following the nearest server already cabled."""
    node: str
    links: list[Link]
    leaves: tuple[str, ...]  # leaf of each NIC, nic0 first
    like: str  # the nearest server whose cabling was followed
    nvlink_links: int = 0  # of `links`, those to NVLink switch trays
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        nics = len(self.leaves)
        shown = ", ".join(self.leaves[:4]) + (", ..." if nics > 4 else "")
        text = f"{self.node}: {nics} NIC cable(s) to {shown} (like {self.like})"
        if self.nvlink_links:
            text += f", {self.nvlink_links} NVLink link(s) to its domain's switch trays"
        return text


@dataclass
class _Ports:
    """The ports of one switch that links take: named ones, and links naming no port."""

    used: set[int] = field(default_factory=set)
    anonymous: int = 0  # cables on the switch without a port: each takes some free port

    def free(self, radix: int) -> list[int]:
        free = [i for i in range(radix) if i not in self.used]
        return free[self.anonymous:]  # the anonymous cables hold the lowest free ones (as the check counts)


def plan_connection(doc: Document, node_id: str) -> Cabling:
    """The links that connect server `node_id` like its neighbours; CablingRefused says why not."""
    node = doc.find("nodes", node_id)
    if node is None:
        shown = ", ".join(n.id for n in doc.nodes[:3]) + (", ..." if len(doc.nodes) > 3 else "")
        raise CablingRefused(f"no server {node_id!r} in the design",
                             f"give the id of a server ({shown or 'there are none yet'})")
    switches = {s.id: s for s in doc.switches}
    nodes = {n.id: n for n in doc.nodes}
    nic_leaf: dict[str, dict[int, str]] = defaultdict(dict)  # server -> NIC number -> switch
    nic_link: dict[tuple[str, int], Link] = {}
    own_nic_cables = 0
    ports: dict[str, _Ports] = defaultdict(_Ports)
    tray_links: dict[str, list[Link]] = defaultdict(list)  # server -> its NVLink links to switch trays
    for link in doc.links:
        ends = (split_endpoint(link.a), split_endpoint(link.b))
        for (dev, port), (other, _) in (ends, ends[::-1]):
            if dev in switches:
                _take(ports[dev], port, link.count)
            elif dev in nodes:
                if link.kind in NETWORK_KINDS:
                    if dev == node_id:
                        own_nic_cables += link.count
                    sw = switches.get(other)
                    k = port_index(port) if port and port.startswith("nic") else None
                    if sw is not None and k is not None and sw.fabric == link.kind:
                        nic_leaf[dev][k] = other
                        nic_link[(dev, k)] = link
                elif link.kind == "nvlink" and other in switches and switches[other].fabric == NVLINK_SWITCH:
                    tray_links[dev].append(link)
    if own_nic_cables:
        raise CablingRefused(f"{node_id} already has {own_nic_cables} of {node.nic_count} NIC cable(s)",
                             "Connect to fabric cables a server without NIC cables (delete its cables first, "
                             "or draw the rest with a link tool)", node_id)
    new_links: list[Link] = []
    ids = _id_maker(doc)
    leaves: tuple[str, ...] = ()
    like = ""
    if node.nic_count:
        leaves, like = _pick_group(doc, node, nodes, switches, nic_leaf, ports)
        taken: dict[str, list[int]] = {leaf: ports[leaf].free(switches[leaf].radix) for leaf in set(leaves)}
        for k, leaf in enumerate(leaves):
            sw = switches[leaf]
            port = taken[leaf].pop(0)
            template = nic_link[(like, k)]
            new_links.append(Link(id=ids(), a=f"{node.id}:nic{k}", b=f"{leaf}:p{port}", kind=node.nic_kind,
                                  bandwidth_gbps=min(node.nic_gbps, sw.port_gbps), latency_us=template.latency_us))
    nvlink, tray_peer = _tray_links(node, nodes, switches, tray_links, ports, ids)
    if not new_links and not nvlink:
        raise CablingRefused(f"{node_id} has no NICs and no NVLink switch trays to reach",
                             "raise its nic_count first", node_id)
    return Cabling(node=node.id, links=new_links + nvlink, leaves=leaves, like=like or tray_peer,
                   nvlink_links=len(nvlink))


def _take(ports: _Ports, port: str | None, count: int) -> None:
    if port is None:
        ports.anonymous += count
        return
    start = port_index(port)
    if start is not None:
        ports.used.update(range(start, start + count))


def _pick_group(doc, node: Node, nodes, switches, nic_leaf, ports) -> tuple[tuple[str, ...], str]:
    """(leaf of each NIC, the server followed): the nearest group of servers of this kind with room."""
    k_nics = node.nic_count
    groups: dict[tuple[str, ...], list[str]] = {}
    for other, leaves in nic_leaf.items():
        peer = nodes[other]
        if other == node.id or peer.nic_kind != node.nic_kind or peer.nic_count != k_nics:
            continue
        if len(leaves) != k_nics:
            continue  # partly cabled: no pattern to follow
        groups.setdefault(tuple(leaves[k] for k in range(k_nics)), []).append(other)
    if not groups:
        raise CablingRefused(
            f"no other server with {k_nics} {node.nic_kind} NIC(s) is cabled to a leaf, so there is no rail "
            f"pattern for {node.id} to follow",
            "cable one such server with a link tool, or generate the fabric (Tools > Generate Fat-Tree)", node.id)
    here = _position(doc, node)
    ranked = sorted(groups.items(), key=lambda item: min(_distance(here, _position(doc, nodes[m])) for m in item[1]))
    first_full = None
    for leaves, members in ranked:
        need = Counter(leaves)
        full = next((leaf for leaf in leaves
                     if len(ports[leaf].free(switches[leaf].radix)) < need[leaf]), None)
        if full is None:
            nearest = min(members, key=lambda m: _distance(here, _position(doc, nodes[m])))
            return leaves, nearest
        first_full = first_full or (full, leaves)
    leaf, leaves = first_full
    sw = switches[leaf]
    in_use = sw.radix - len(ports[leaf].free(sw.radix))
    where = [f"rail {sw.rail}"] if sw.rail is not None else []
    where += [f"pod {sw.pod}"] if sw.pod is not None else []
    detail = f" ({', '.join(where)})" if where else ""
    nic = leaves.index(leaf)
    others = f" (and the other {len(ranked) - 1} leaf group(s))" if len(ranked) > 1 else ""
    # short: the status bar shows the start of it (the fix last, so the words before it are few)
    raise CablingRefused(f"{leaf}{detail} is full ({in_use} of {sw.radix} ports in use) for {node.id}'s nic{nic}"
                         f"{others}", f"add a leaf or free a port on {leaf}", leaf, "switches")


def _position(doc: Document, node: Node) -> tuple[float, float, float] | None:
    """(x, y, slot) of a server on the canvas: its rack's place and its slot, else where it lies loose."""
    rack = doc.find("racks", node.rack) if node.rack else None
    if rack is not None:
        return rack.x, rack.y, float(node.slot or 0)
    loose = doc.spec.layout.get("positions", {}).get(node.id)
    if loose:
        return float(loose[0]), float(loose[1]), 0.0
    return None


def _distance(a, b) -> tuple[float, float]:
    """Racks apart first, then slots apart; a server with no place is near nothing (file order decides)."""
    if a is None or b is None:
        return math.inf, 0.0
    return math.hypot(a[0] - b[0], a[1] - b[1]), abs(a[2] - b[2])


def _tray_links(node: Node, nodes, switches, tray_links, ports, ids) -> tuple[list[Link], str]:
    """The NVLink links of a compute tray to its domain's switch trays, as a tray of that domain has them."""
    if not node.nvlink_domain or tray_links.get(node.id):
        return [], ""
    trays = {s.id for s in switches.values() if s.fabric == NVLINK_SWITCH and s.nvlink_domain == node.nvlink_domain}
    if not trays:
        return [], ""  # a domain named only by its servers: nothing to cable
    peers = [n for n, links in tray_links.items()
             if n != node.id and nodes[n].nvlink_domain == node.nvlink_domain
             and nodes[n].accelerator_count == node.accelerator_count
             and all(split_endpoint(l.b)[0] in trays or split_endpoint(l.a)[0] in trays for l in links)]
    if not peers:
        return [], ""
    out = []
    used = {tray: set(ports[tray].used) for tray in trays}
    for template in tray_links[peers[0]]:
        tray = template.b if split_endpoint(template.b)[0] in trays else template.a
        tray = split_endpoint(tray)[0]
        sw = switches[tray]
        start = _free_run(used[tray], sw.radix - ports[tray].anonymous, template.count)
        if start is None:
            in_use = len(used[tray]) + ports[tray].anonymous
            raise CablingRefused(
                f"NVLink switch tray {tray} has no {template.count} free ports in a row ({in_use} of {sw.radix} in "
                f"use), so {node.id} cannot join NVLink domain {node.nvlink_domain!r}",
                f"put {node.id} in another domain (its nvlink_domain), or free ports on {tray}", tray, "switches")
        used[tray].update(range(start, start + template.count))
        out.append(Link(id=ids(), a=node.id, b=f"{tray}:p{start}", kind="nvlink",
                        bandwidth_gbps=template.bandwidth_gbps, latency_us=template.latency_us, count=template.count))
    return out, peers[0]


def _free_run(used: set[int], radix: int, count: int) -> int | None:
    run = 0
    for i in range(radix):
        run = 0 if i in used else run + 1
        if run == count:
            return i - count + 1
    return None


_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def _id_maker(doc: Document):
    """Fresh link ids in the file's own style: its most common stem ("l" of l0..l99), numbered on
    from the highest, zero-padded when the file pads."""
    stems: Counter[str] = Counter()
    numbers: dict[str, list[str]] = defaultdict(list)
    for link in doc.links:
        match = _NUMBERED.match(link.id)
        if match:
            stems[match.group(1)] += 1
            numbers[match.group(1)].append(match.group(2))
    stem = stems.most_common(1)[0][0] if stems else "l"
    digits = numbers.get(stem, [])
    widths = {len(d) for d in digits}
    width = widths.pop() if len(widths) == 1 and any(d.startswith("0") and len(d) > 1 for d in digits) else 0
    counter = [max((int(d) for d in digits), default=-1) + 1]
    taken = {e.id for e in doc.racks} | {e.id for e in doc.nodes} | {e.id for e in doc.switches} | {
        e.id for e in doc.links}

    def fresh() -> str:
        while True:
            candidate = f"{stem}{counter[0]:0{width}d}"
            counter[0] += 1
            if candidate not in taken:
                taken.add(candidate)
                return candidate
    return fresh
