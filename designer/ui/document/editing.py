"""What an editing gesture means for the document, without Qt: new parts from the palette,
a validated link between two devices, copy and paste of a selection with its inner links.

The canvas and the menus turn these into undo commands; tests can call them directly.
"""
from __future__ import annotations

import copy
import dataclasses

from ...core.io.files import dumps, parse
from ...core.model import ClusterSpec, Document, Link, Metadata, Node, Rack, Switch, default_catalog
from ...core.model.elements import split_endpoint
from ...core.problems import DesignerError


class Refused(Exception):
    """A gesture that would make the design wrong; the message says why and what to do."""


PART_KINDS = ("rack", "server", "accelerator", "nic", "ethernet-switch", "infiniband-switch")
LINK_KINDS = ("ethernet", "infiniband", "nvlink", "pcie")


def new_rack(doc: Document, x: float, y: float, units: int = 42) -> Rack:
    return Rack(id=doc.new_id("rack"), x=float(x), y=float(y), units=units)


def new_server(doc: Document, accelerator: str = "H100-SXM5-80GB", count: int = 8, rack: str | None = None,
               slot: int | None = None, nic_gbps: float = 400.0, nic_kind: str = "infiniband") -> Node:
    catalog = default_catalog()
    acc = catalog.accelerator(accelerator)
    scale_up = acc.scale_up if acc.scale_up in ("nvswitch", "nvlink", "pcie") else "nvlink"
    nic = catalog.nic_for(nic_kind, nic_gbps)
    return Node(id=doc.new_id("node"), accelerator=acc.name, accelerator_count=count, scale_up=scale_up,
                nic_count=count, nic_gbps=float(nic_gbps), nic_kind=nic_kind, nic_model=nic.name if nic else "",
                rack=rack, slot=slot, height_units=4 if count >= 4 else 2)


def new_switch(doc: Document, fabric: str, tier: str = "leaf", rack: str | None = None, slot: int | None = None,
               radix: int = 64, port_gbps: float = 400.0) -> Switch:
    model = default_catalog().switch_for(fabric, port_gbps)
    return Switch(id=doc.new_id("leaf" if tier == "leaf" else tier), fabric=fabric, tier=tier,
                  radix=model.radix if model else radix, port_gbps=port_gbps,
                  latency_us=model.latency_us if model else (0.13 if fabric == "infiniband" else 0.6),
                  model=model.name if model else "", rack=rack, slot=slot, height_units=1)


def used_ports(doc: Document, device_id: str) -> set[str]:
    used = set()
    for link in doc.links:
        for end in (link.a, link.b):
            dev, port = split_endpoint(end)
            if dev == device_id and port:
                prefix = port.rstrip("0123456789")
                start = int(port[len(prefix):]) if port[len(prefix):].isdigit() else 0
                used.update(f"{prefix}{start + k}" for k in range(link.count))
    return used


def _free_port(doc: Document, device, kind: str) -> str:
    used = used_ports(doc, device.id)
    if isinstance(device, Switch):
        for i in range(device.radix):
            if f"p{i}" not in used:
                return f"p{i}"
        raise Refused(f"switch {device.id} has no free port ({device.radix} of {device.radix} in use): "
                      f"use a switch with a larger radix, or free a port")
    if kind in ("ethernet", "infiniband"):
        for i in range(device.nic_count):
            if f"nic{i}" not in used:
                return f"nic{i}"
        raise Refused(f"server {device.id} has no free NIC ({device.nic_count} in use): raise its nic_count "
                      f"(or drop a NIC onto it)")
    prefix = "nvl" if kind == "nvlink" else "pcie"
    for i in range(device.accelerator_count):
        if f"{prefix}{i}" not in used:
            return f"{prefix}{i}"
    raise Refused(f"server {device.id} has no free {kind} port")


def plan_link(doc: Document, a_id: str, b_id: str, kind: str) -> Link:
    """The link a user drew from device a to device b, or Refused with the reason."""
    if a_id == b_id:
        raise Refused("a link needs two different devices")
    a, b = doc.device(a_id), doc.device(b_id)
    if a is None or b is None:
        raise Refused("a link goes from a server or switch to another")
    for device in (a, b):
        if isinstance(device, Switch) and kind in ("ethernet", "infiniband") and device.fabric != kind:
            other = b if device is a else a
            raise Refused(f"an {kind} link cannot plug into {device.fabric} switch {device.id}"
                          + (f" ({other.id} has {other.nic_kind} NICs)" if isinstance(other, Node) else "")
                          + f": draw an {device.fabric} link, or use an {kind} switch")
        if isinstance(device, Switch) and kind in ("nvlink", "pcie"):
            raise Refused(f"{kind} connects accelerators inside or between servers, not switch {device.id}")
        if isinstance(device, Node) and kind in ("ethernet", "infiniband") and device.nic_kind != kind:
            raise Refused(f"server {device.id} has {device.nic_kind} NICs, not {kind}: draw an {device.nic_kind} "
                          f"link, or change its nic_kind")
    if kind in ("ethernet", "infiniband") and isinstance(a, Node) and isinstance(b, Node):
        raise Refused(f"{kind} NICs connect to a switch, not straight to another server")
    port_a, port_b = _free_port(doc, a, kind), _free_port(doc, b, kind)
    if kind in ("ethernet", "infiniband"):
        rates = [d.nic_gbps if isinstance(d, Node) else d.port_gbps for d in (a, b)]
        bandwidth = min(rates)
    elif kind == "nvlink":
        bandwidth = default_catalog().accelerator(a.accelerator).scale_up_gbps
    else:
        bandwidth = 512.0  # PCIe Gen5 x16, per direction
    return Link(id=doc.new_id("l"), a=f"{a_id}:{port_a}", b=f"{b_id}:{port_b}", kind=kind,
                bandwidth_gbps=float(bandwidth), latency_us=0.01)


# ---- copy and paste ----------------------------------------------------------------------

def copy_text(doc: Document, ids: list[str]) -> str:
    """The selection as a small Cluster document: racks with their contents, devices, and the
    links whose two ends are both copied (the inner links)."""
    wanted = set(ids)
    racks = [r for r in doc.racks if r.id in wanted]
    rack_ids = {r.id for r in racks}
    devices = [e for e in list(doc.nodes) + list(doc.switches) if e.id in wanted or e.rack in rack_ids]
    device_ids = {e.id for e in devices}
    links = [l for l in doc.links
             if split_endpoint(l.a)[0] in device_ids and split_endpoint(l.b)[0] in device_ids]
    spec = ClusterSpec(racks=copy.deepcopy(racks), nodes=[copy.deepcopy(e) for e in devices if isinstance(e, Node)],
                       switches=[copy.deepcopy(e) for e in devices if isinstance(e, Switch)],
                       links=copy.deepcopy(links))
    return dumps("Cluster", Metadata(name="clipboard"), spec)


def paste_elements(doc: Document, text: str, dx: float = 60.0, dy: float = 0.0) -> list:
    """New elements for pasted text: fresh ids, racks shifted by (dx, dy), links re-pointed."""
    try:
        kind, _, spec = parse(text, "<clipboard>")
    except DesignerError as exc:
        raise Refused("the clipboard holds no design: " + str(exc).splitlines()[0]) from None
    if kind != "Cluster":
        raise Refused("the clipboard holds a scenario, not cluster parts")
    taken = {e.id for e in list(doc.racks) + list(doc.nodes) + list(doc.switches) + list(doc.links)}
    renames: dict[str, str] = {}
    next_index: dict[str, int] = {}

    def fresh(old: str) -> str:
        stem = old.rstrip("0123456789") or "x"
        n = next_index.get(stem, 0)
        while f"{stem}{n}" in taken:
            n += 1
        next_index[stem] = n + 1
        new = f"{stem}{n}"
        taken.add(new)
        renames[old] = new
        return new

    out = []
    for rack in spec.racks:
        out.append(dataclasses.replace(rack, id=fresh(rack.id), x=rack.x + dx, y=rack.y + dy))
    rack_map = dict(renames)
    for e in list(spec.nodes) + list(spec.switches):
        new_rack = rack_map.get(e.rack)
        out.append(dataclasses.replace(e, id=fresh(e.id), rack=new_rack,
                                       slot=e.slot if new_rack else None))
    for link in spec.links:
        (a, pa), (b, pb) = split_endpoint(link.a), split_endpoint(link.b)
        out.append(dataclasses.replace(link, id=fresh(link.id), a=renames[a] + (f":{pa}" if pa else ""),
                                       b=renames[b] + (f":{pb}" if pb else "")))
    return out
