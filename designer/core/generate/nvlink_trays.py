"""The NVLink switch trays of rack-scale NVLink domains (GB200 / GB300 NVL72) as elements of a design.

A domain of D GPUs on trays of g GPUs is T = D / g compute trays (servers with one nvlink_domain)
and S = catalog `trays_for(D)` NVLink switch trays (9 for NVL72), racked together. Each switch
tray is a Switch of fabric and tier "nvlink" naming its domain. The cabling is aggregated:
one Link per (compute tray, switch tray) pair, `count` NVLink links of the switch's port speed.

NVL72, from the catalog (resources/catalog/switches.yaml, NVLink5-Switch-Tray, and its sources):
a Blackwell GPU has 18 NVLink 5 links of 100 GB/s both ways (1.8 TB/s = 50 GB/s = 400 Gb/s per
direction per link); each goes to a different one of the rack's 18 switch chips, 2 chips per tray.
So each GPU has 2 links to each of the 9 trays, a 4-GPU compute tray has 8 links (8 x 400 Gb/s)
to each switch tray, and each switch tray uses 18 x 8 = 144 = all its ports. Per rack: 18 x 9 =
162 Link elements holding 1,296 NVLink links (72 GPUs x 18).

The trays are no part of the scale-out network: engine/fabric.py leaves them out, so a design
evaluates the same with or without them. Their links name no server port (a compute tray has no
numbered NVLink ports in the format); the switch end uses consecutive ports p0.. of the tray.
"""
from __future__ import annotations

from ..model.catalog import Catalog, SwitchModel
from ..model.elements import NVLINK_SWITCH, Link, Node, Switch

# GB200 / GB300 NVL72 compute trays and NVLink switch trays are 1U each (NVIDIA GB200 NVL72
# specifications: 18 1U compute trays, 9 1U NVLink switch trays in one rack).
TRAY_UNITS = 1
# The NVL72 rack puts its switch trays in the middle: 10 compute trays above, 8 below
# (NVIDIA GB200 NVL72 rack diagrams). A domain of T trays keeps T * 8 // 18 below.
LOWER_TRAYS_OF_18 = 8
# Copper NVLink spine inside the rack: about 1 m, ~5 ns (the cable latency is tiny next to the switch's).
NVLINK_CABLE_LATENCY_US = 0.005


def nvlink_switch_model(catalog: Catalog, acc, domain_gpus: int) -> SwitchModel | None:
    """The catalog's NVLink switch tray for a domain of `domain_gpus` GPUs of `acc`.

    Prefers a tray whose links add up to the GPU's scale-up bandwidth (18 x 400 Gb/s = 7,200 for
    Blackwell); None when the catalog has none (the domain is then only the servers' names)."""
    fits = [s for s in catalog.switches.values()
            if s.kind == NVLINK_SWITCH and s.links_per_gpu and (s.max_domain_gpus or domain_gpus) >= domain_gpus]
    exact = [s for s in fits if abs(s.links_per_gpu * s.port_gbps - acc.scale_up_gbps) < 1e-6]
    return (exact or fits or [None])[0]


def domain_racks(trays: int, switch_trays: int, rack_units: int) -> list[tuple[list[int], list[int]]]:
    """Slots of one domain's racks: per rack (compute tray slots, switch tray slots), bottom up.

    The first rack holds the switch trays between its lower and upper compute trays (as NVL72
    does); a domain too tall for one rack continues with compute trays in the next ones."""
    out: list[tuple[list[int], list[int]]] = []
    first = max(1, (rack_units - switch_trays * TRAY_UNITS) // TRAY_UNITS)
    here = min(trays, first)
    lower = here * LOWER_TRAYS_OF_18 // 18
    compute = [k * TRAY_UNITS for k in range(lower)]
    switches = [(lower + k) * TRAY_UNITS for k in range(switch_trays)]
    compute += [(lower + switch_trays + k) * TRAY_UNITS for k in range(here - lower)]
    out.append((compute, switches))
    left = trays - here
    per_rack = max(1, rack_units // TRAY_UNITS)
    while left > 0:
        n = min(left, per_rack)
        out.append(([k * TRAY_UNITS for k in range(n)], []))
        left -= n
    return out


def add_switch_trays(nodes: list[Node], switches: list[Switch], links: list[Link], model: SwitchModel,
                     domain_gpus: int, places: dict[str, tuple[str, list[int]]]) -> None:
    """Append each domain's switch trays (at `places[domain]` = rack id, slots) and their NVLink links.

    Switches and links go after the scale-out ones, so the ids and positions of those stay as
    they were without trays."""
    trays_per_domain = model.trays_for(domain_gpus)
    members: dict[str, list[str]] = {}
    gpus_per_tray: dict[str, int] = {}
    for node in nodes:
        if node.nvlink_domain:
            members.setdefault(node.nvlink_domain, []).append(node.id)
            gpus_per_tray[node.nvlink_domain] = node.accelerator_count
    n = len(links)
    for domain, servers in members.items():
        rack, slots = places[domain]
        ids = [f"{domain}-switch{k}" for k in range(trays_per_domain)]
        for k, sw_id in enumerate(ids):
            switches.append(Switch(
                id=sw_id, fabric=NVLINK_SWITCH, tier=NVLINK_SWITCH, radix=model.radix, port_gbps=model.port_gbps,
                latency_us=model.latency_us, model=model.name, sharp=bool(model.sharp), rack=rack,
                nvlink_domain=domain, slot=slots[k], height_units=TRAY_UNITS))
        # each GPU's links spread evenly over the switch trays; the remainder rotates (like _deal)
        base, extra = divmod(gpus_per_tray[domain] * model.links_per_gpu, trays_per_domain)
        next_port = [0] * trays_per_domain
        offset = 0
        for server in servers:
            for j, sw_id in enumerate(ids):
                count = base + (1 if (j - offset) % trays_per_domain < extra else 0)
                if not count:
                    continue
                links.append(Link(id=f"l{n}", a=server, b=f"{sw_id}:p{next_port[j]}", kind="nvlink",
                                  bandwidth_gbps=model.port_gbps, latency_us=NVLINK_CABLE_LATENCY_US, count=count))
                n += 1
                next_port[j] += count
            offset = (offset + extra) % trays_per_domain


def domain_runs(pod_nodes: list[int], trays: int):
    """(pod, domain index, servers) runs: servers in file order, `trays` per domain, cut at pod ends."""
    i = 0
    for p, size in enumerate(pod_nodes):
        end = i + size
        while i < end:
            domain = i // trays
            here = min(end, (domain + 1) * trays) - i
            yield p, domain, here
            i += here


def tray_counts(nodes: int, gpus_per_node: int, trays: int, model: SwitchModel | None) -> tuple[int, int, int]:
    """(switch trays, NVLink Link elements, NVLink cables) that `add_switch_trays` builds."""
    if model is None or trays <= 1:
        return 0, 0, 0
    per_domain = model.trays_for(trays * gpus_per_node)
    domains = -(-nodes // trays)
    base, extra = divmod(gpus_per_node * model.links_per_gpu, per_domain)
    pairs = per_domain if base else extra  # switch trays each compute tray is cabled to
    return per_domain * domains, nodes * pairs, nodes * gpus_per_node * model.links_per_gpu
