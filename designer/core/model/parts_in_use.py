"""The parts a design is built from: its most common accelerator, server shape, NIC, switch
and fabric.

New parts (the palette) and a generated fabric (the Generate dialog) start from these, so
that adding to an A100 / HDR 200G design offers A100 and HDR 200G, not the catalog's newest
parts. Ties go to the part that comes first in the file.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from .catalog import Catalog, default_catalog
from .document import Document


@dataclass(frozen=True)
class PartsInUse:
    """None: the design has no such part (an empty design), keep the tool's own default."""

    servers: int = 0
    accelerator: str | None = None  # canonical catalog name when the catalog knows it
    gpus_per_node: int | None = None
    nics_per_node: int | None = None
    fabric: str | None = None  # infiniband | ethernet: the kind most NICs (else switches) speak
    nic_gbps: float | None = None
    nic_model: str | None = None
    switch_model: str | None = None
    switch_radix: int | None = None
    switch_gbps: float | None = None
    rail_optimized: bool | None = None  # None: no leaf switches to tell


def _most_common(values):
    counts = Counter(v for v in values if v not in (None, ""))
    return counts.most_common(1)[0][0] if counts else None


def parts_in_use(doc: Document, catalog: Catalog | None = None) -> PartsInUse:
    catalog = catalog or default_catalog()
    # NVLink switch trays (fabric nvlink) are part of a domain, not of the scale-out parts
    nodes, switches = list(doc.nodes), [s for s in doc.switches if s.fabric != "nvlink"]
    accelerator = _most_common(n.accelerator for n in nodes)
    if accelerator is not None:
        accelerator = catalog.resolve("accelerators", accelerator) or accelerator

    nic_ports: Counter = Counter()
    for n in nodes:
        if n.nic_count > 0:
            nic_ports[n.nic_kind] += n.nic_count
    fabric = nic_ports.most_common(1)[0][0] if nic_ports else _most_common(s.fabric for s in switches)

    cabled = [n for n in nodes if n.nic_kind == fabric and n.nic_count > 0]
    nic_gbps = _most_common(n.nic_gbps for n in cabled)
    nic_model = _most_common(n.nic_model for n in cabled if n.nic_gbps == nic_gbps)
    if nic_model is None and fabric and nic_gbps:
        found = catalog.nic_for(fabric, nic_gbps)
        nic_model = found.name if found else None
    elif nic_model is not None:
        nic_model = catalog.resolve("nics", nic_model) or nic_model

    same_fabric = [s for s in switches if s.fabric == fabric] or switches
    leaves = [s for s in same_fabric if s.tier == "leaf"]
    shape = _most_common((s.model, s.radix, s.port_gbps) for s in (leaves or same_fabric))
    switch_model = switch_radix = switch_gbps = None
    if shape is not None:
        switch_model, switch_radix, switch_gbps = shape
        switch_model = (catalog.resolve("switches", switch_model) or switch_model) if switch_model else None
        if switch_model is None:
            found = catalog.switch_for(fabric, switch_gbps) if fabric else None
            switch_model = found.name if found and found.radix == switch_radix else None

    return PartsInUse(
        servers=len(nodes),
        accelerator=accelerator,
        gpus_per_node=_most_common(n.accelerator_count for n in nodes),
        nics_per_node=_most_common(n.nic_count for n in cabled),
        fabric=fabric,
        nic_gbps=float(nic_gbps) if nic_gbps is not None else None,
        nic_model=nic_model,
        switch_model=switch_model,
        switch_radix=switch_radix,
        switch_gbps=float(switch_gbps) if switch_gbps is not None else None,
        rail_optimized=any(s.rail is not None for s in leaves) if leaves else None,
    )
