"""What a design costs: bill of materials, capex, power, and with a predicted throughput the
tokens per second per MW and the dollars per million tokens (docs/cost.md).

Parts are counted from the document as it is (the same elements the generator made, so the
counts are the generator's): one accelerator line and one server-host line per accelerator kind,
the servers' NICs, every switch, and every network cable by reach. A cable between two devices in
the same rack is direct-attach copper (DAC); between racks, or where a device has no rack, it is
an optical link: a transceiver at each end and a fibre. NVLink and PCIe links are inside the
servers (NVL72 racks: inside the trays' price) and cost nothing extra. Prices and power come from
resources/catalog/prices.yaml with the design's `spec.prices` over them (model/prices.py).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from ..model.catalog import Catalog, default_catalog
from ..model.document import Document
from ..model.elements import NETWORK_KINDS, Node, Switch, split_endpoint
from ..model.prices import PriceBook, price_book
from ..problems import DesignerError, Problem

# Power-usage effectiveness (facility power / IT power) of the energy bill. Uptime Institute: the
# industry average was 1.58 in 2023 (journal.uptimeinstitute.com, "Large data centers are mostly
# more efficient, analysis confirms", 2024-02); its 14th Global Data Center Survey (2024) finds
# new large facilities at 1.3 or better. An AI training hall is new and large, so 1.3. A design
# overrides it with spec.prices.pue.
PUE = 1.3
PUE_SOURCE = ("Uptime Institute: industry average 1.58 in 2023 (journal.uptimeinstitute.com, 2024-02); "
              "new large facilities 1.3 or better (14th Global Data Center Survey, 2024)")
HOURS_PER_YEAR = 8766.0  # 365.25 days
DEFAULT_USD_PER_KWH = 0.08  # a US industrial rate; the CLI's --usd-per-kwh changes it
DEFAULT_AMORTISATION_YEARS = 4.0  # a common depreciation period of GPU servers; --years changes it

FABRIC_KINDS = ("nic", "switch", "transceiver", "cable")
KIND_ORDER = ("accelerator", "server", "nic", "switch", "transceiver", "cable", "rack")
TIER_ORDER = {"nic": 0, "leaf": 1, "spine": 2, "core": 3}


@dataclass(frozen=True)
class BomLine:
    """One line of the bill of materials: a part, how many, its price and power."""
    part: str
    kind: str  # accelerator | server | nic | switch | transceiver | cable | rack
    count: int
    unit_price_usd: float
    subtotal_usd: float
    power_w: float  # the whole line: count x unit_power_w
    unit_power_w: float = 0.0
    detail: str = ""  # where the parts go: "nic-leaf, between racks", "per port as QM9700-NDR", ...
    source: str = ""
    estimate: bool = False  # priced by analogy (another speed or radix), not the part's own figure
    priced_as: str = ""  # "switches.QM9700-NDR": the spec.prices entry its figures come from (and override)


@dataclass(frozen=True)
class CostEstimate:
    """What a design costs to buy and run: bill of materials, capex, power and energy price."""
    bom: list[BomLine]
    capex_usd: float
    fabric_capex_usd: float
    fabric_share: float  # fabric (NICs, switches, optics, cables) / capex
    power_kw: float  # IT power: the parts' maximum
    facility_power_kw: float = 0.0  # power_kw x PUE
    pue: float = PUE
    pue_source: str = PUE_SOURCE
    usd_per_kwh: float = DEFAULT_USD_PER_KWH
    amortisation_years: float = DEFAULT_AMORTISATION_YEARS
    usd_per_hour: float = 0.0  # capex over the period plus energy
    tokens_per_s: float | None = None
    tokens_per_s_per_mw: float | None = None  # per MW of IT power
    usd_per_million_tokens: float | None = None
    tokens_per_usd: float | None = None
    job_share: float = 1.0  # the job's GPUs / the cluster's: its share of cost and power
    notes: list[str] = field(default_factory=list)

    def count(self, kind: str) -> int:
        return sum(line.count for line in self.bom if line.kind == kind)

    def as_json(self) -> dict:
        out = asdict(self)
        out["bom"] = [asdict(line) for line in self.bom]
        return out


def _speed_class(gbps: float, classes: list[float]) -> tuple[float, float]:
    """(class, multiple): the smallest priced class that carries `gbps`, or the largest times the
    number of them a faster link needs."""
    for c in sorted(classes):
        if gbps <= c + 1e-9:
            return c, 1.0
    top = max(classes)
    return top, gbps / top


class _Bom:
    def __init__(self):
        self.lines: dict[tuple, list] = {}

    def add(self, kind: str, part: str, count: int, unit_usd: float, unit_w: float | None, detail: str = "",
            source: str = "", estimate: bool = False, priced=None) -> None:
        """`priced`: the Price the figures come from (its section.part is the line's priced_as)."""
        key = (kind, part, detail, unit_usd, unit_w or 0.0)
        line = self.lines.setdefault(key, [0, source, estimate, f"{priced.section}.{priced.part}" if priced else ""])
        line[0] += count

    def result(self) -> list[BomLine]:
        out = []
        for (kind, part, detail, unit_usd, unit_w), (count, source, estimate, priced) in self.lines.items():
            out.append(BomLine(part=part, kind=kind, count=count, unit_price_usd=unit_usd,
                               subtotal_usd=unit_usd * count, power_w=unit_w * count, unit_power_w=unit_w,
                               detail=detail, source=source, estimate=estimate, priced_as=priced))
        out.sort(key=lambda b: (KIND_ORDER.index(b.kind), b.part, b.detail))
        return out


def _missing(section: str, name: str, where: str) -> DesignerError:
    return DesignerError([Problem(f"no price for {section[:-1]} {name!r} ({where})", path=f"spec.prices.{section}",
                                  fix=f"add spec.prices.{section}.{name}: {{price_usd: ..., power_w: ...}}")])


def _servers(doc: Document, book: PriceBook, catalog: Catalog, bom: _Bom) -> None:
    for node in doc.nodes:
        name = catalog.resolve("accelerators", node.accelerator) or node.accelerator
        acc = book.get("accelerators", name)
        host = book.get("servers", name)
        if acc is None:
            raise _missing("accelerators", name, f"server {node.id}")
        if host is None:
            raise _missing("servers", name, f"server {node.id}")
        tdp = acc.power_w if acc.power_w is not None else (
            catalog.accelerators[name].tdp_w if name in catalog.accelerators else 0.0)
        bom.add("accelerator", name, node.accelerator_count, acc.price_usd, tdp, source=acc.source, priced=acc)
        per_host = host.gpus or node.accelerator_count
        hosts = max(1, math.ceil(node.accelerator_count / per_host))
        bom.add("server", f"{name} server host", hosts, host.price_usd, host.power_w,
                detail=f"{per_host} GPUs each (GPUs, NICs apart)", source=host.source, priced=host)


def _nic_price(node: Node, book: PriceBook, catalog: Catalog):
    """(price, estimate?) of a node's NIC: its model when the model's speed is the NIC's, else the
    catalog NIC of that kind and speed, else the nearest speed of that kind."""
    model = catalog.resolve("nics", node.nic_model) if node.nic_model else None
    if model is not None and catalog.nics[model].gbps == node.nic_gbps:
        return book.get("nics", model), False
    match = catalog.nic_for(node.nic_kind, node.nic_gbps)
    if match is not None:
        return book.get("nics", match.name), False
    same_kind = [n for n in catalog.nics.values() if n.kind == node.nic_kind and n.default]
    if not same_kind:
        return None, True
    near = min(same_kind, key=lambda n: abs(math.log(n.gbps / node.nic_gbps)))
    return book.get("nics", near.name), True


def _nics(doc: Document, book: PriceBook, catalog: Catalog, bom: _Bom) -> None:
    for node in doc.nodes:
        if node.nic_count == 0:
            continue
        price, estimate = _nic_price(node, book, catalog)
        if price is None:
            raise _missing("nics", node.nic_model or f"{node.nic_kind} {node.nic_gbps:g}G", f"server {node.id}")
        detail = f"as {price.part} ({node.nic_gbps:g} Gb/s {node.nic_kind})" if estimate else ""
        bom.add("nic", price.part if not estimate else f"{node.nic_kind} {node.nic_gbps:g}G NIC", node.nic_count,
                price.price_usd, price.power_w, detail=detail, source=price.source, estimate=estimate, priced=price)


def _switches(doc: Document, book: PriceBook, catalog: Catalog, bom: _Bom) -> None:
    for sw in doc.switches:
        model = catalog.resolve("switches", sw.model) if sw.model else None
        part = catalog.switches[model] if model is not None else None
        exact = part is not None and (part.kind, part.port_gbps, part.radix) == (sw.fabric, sw.port_gbps, sw.radix)
        if exact:
            price = book.get("switches", model)
            if price is None:
                raise _missing("switches", model, f"switch {sw.id}")
            bom.add("switch", model, 1, price.price_usd, price.power_w, detail=sw.tier, source=price.source,
                    priced=price)
            continue
        # No catalog part of this radix and speed: priced per port as the catalog switch of the
        # same fabric and speed (or the nearest speed), scaled to the radix.
        like = catalog.switch_for(sw.fabric, sw.port_gbps)
        if like is None:
            same = [s for s in catalog.switches.values() if s.kind == sw.fabric]
            if not same:
                raise _missing("switches", sw.model or f"{sw.fabric} {sw.port_gbps:g}G", f"switch {sw.id}")
            like = min(same, key=lambda s: abs(math.log(s.port_gbps / sw.port_gbps)))
        price = book.get("switches", like.name)
        if price is None:
            raise _missing("switches", like.name, f"switch {sw.id} (priced per port as {like.name})")
        scale = sw.radix / like.radix * (sw.port_gbps / like.port_gbps)
        bom.add("switch", f"{sw.fabric} {sw.radix} x {sw.port_gbps:g}G switch", 1, price.price_usd * scale,
                (price.power_w or 0.0) * scale, detail=f"{sw.tier}, per port as {like.name}", source=price.source,
                estimate=True, priced=price)


def _device_rack(doc: Document, device_id: str) -> tuple[str, str | None]:
    """(role, rack) of a link end: role is nic for a server, the tier for a switch."""
    device = doc.device(device_id)
    if isinstance(device, Switch):
        return device.tier, device.rack
    if isinstance(device, Node):
        return "nic", device.rack
    return "?", None


def _cables(doc: Document, book: PriceBook, bom: _Bom) -> int:
    """Every network cable by reach and tier; returns the NVLink/PCIe links left to the servers."""
    optics = {float(k): p for k, p in book.section("transceivers").items()}
    dacs = {p.speed_gbps: p for p in book.section("cables").values() if p.speed_gbps}
    fibre = book.get("cables", "fibre")
    inside = 0
    for link in doc.links:
        if link.kind not in NETWORK_KINDS:
            inside += 1
            continue
        (role_a, rack_a), (role_b, rack_b) = (_device_rack(doc, split_endpoint(e)[0]) for e in (link.a, link.b))
        tier = "-".join(sorted((role_a, role_b), key=lambda r: TIER_ORDER.get(r, 9)))
        if rack_a is not None and rack_a == rack_b:
            speed, multiple = _speed_class(link.bandwidth_gbps, list(dacs))
            dac = dacs[speed]
            bom.add("cable", dac.part, link.count, dac.price_usd * multiple, (dac.power_w or 0.0) * multiple,
                    detail=f"{tier}, within a rack", source=dac.source, estimate=multiple > 1, priced=dac)
            continue
        speed, multiple = _speed_class(link.bandwidth_gbps, list(optics))
        xcvr = optics[speed]
        bom.add("transceiver", f"transceiver {speed:g}G", 2 * link.count, xcvr.price_usd * multiple,
                (xcvr.power_w or 0.0) * multiple, detail=f"{tier}, between racks", source=xcvr.source,
                estimate=multiple > 1, priced=xcvr)
        bom.add("cable", "fibre", link.count, fibre.price_usd, fibre.power_w, detail=f"{tier}, between racks",
                source=fibre.source, priced=fibre)
    return inside


def estimate_cost(document: Document, evaluation=None, *, catalog: Catalog | None = None,
                  usd_per_kwh: float | None = None,
                  amortisation_years: float = DEFAULT_AMORTISATION_YEARS,
                  prices: PriceBook | None = None) -> CostEstimate:
    """The bill of materials, capex and power of `document`; with an `evaluation` (the engine's
    Evaluation, or its as_json dict) also tokens/s per MW and $ per million tokens.

    The whole cluster is priced (what is bought), whatever share of it the job uses. Raises
    DesignerError (exit 65) when spec.prices is wrong or a part has no price. `usd_per_kwh`: None
    takes the file's spec.prices.usd_per_kwh, else DEFAULT_USD_PER_KWH."""
    catalog = catalog or default_catalog()
    book = prices or price_book(document.spec.prices, catalog)
    if usd_per_kwh is None:
        usd_per_kwh = book.usd_per_kwh if book.usd_per_kwh is not None else DEFAULT_USD_PER_KWH
    if not (usd_per_kwh >= 0 and math.isfinite(usd_per_kwh)):
        raise DesignerError([Problem(f"the energy price must be 0 or more, got {usd_per_kwh!r}",
                                     fix="e.g. --usd-per-kwh 0.08")])
    if not (amortisation_years > 0 and math.isfinite(amortisation_years)):
        raise DesignerError([Problem(f"the amortisation period must be above 0 years, got {amortisation_years!r}",
                                     fix="e.g. --years 4")])
    bom = _Bom()
    _servers(document, book, catalog, bom)
    _nics(document, book, catalog, bom)
    _switches(document, book, catalog, bom)
    inside = _cables(document, book, bom)
    if document.racks:
        rack = book.get("racks", "rack")
        bom.add("rack", "rack", len(document.racks), rack.price_usd, rack.power_w, source=rack.source, priced=rack)
    lines = bom.result()
    capex = sum(b.subtotal_usd for b in lines)
    fabric = sum(b.subtotal_usd for b in lines if b.kind in FABRIC_KINDS)
    power_kw = sum(b.power_w for b in lines) / 1000.0
    pue = book.pue or PUE
    facility_kw = power_kw * pue
    usd_per_hour = capex / (amortisation_years * HOURS_PER_YEAR) + facility_kw * usd_per_kwh
    notes = []
    if inside:
        notes.append(f"{inside} NVLink/PCIe links are inside the servers and priced with them")
    if any(b.estimate for b in lines):
        notes.append("lines marked estimate are priced by analogy (another radix or speed): override them "
                     "under spec.prices")
    tokens, share = None, 1.0
    if evaluation is not None:
        get = evaluation.get if isinstance(evaluation, dict) else lambda k: getattr(evaluation, k, None)
        tokens = get("tokens_per_s")
        # A job on part of the cluster pays its share (the rest can run other jobs).
        job_gpus, cluster_gpus = get("num_gpus"), document.num_gpus()
        if job_gpus and cluster_gpus and job_gpus < cluster_gpus:
            share = job_gpus / cluster_gpus
            notes.append(f"the job uses {job_gpus} of the {cluster_gpus} GPUs: its tokens are charged "
                         f"{share:.0%} of the cost and power")
    per_mw = per_million = per_usd = None
    if tokens:
        per_mw = tokens / (power_kw * share / 1000.0) if power_kw > 0 else None
        per_usd = tokens * 3600.0 / (usd_per_hour * share) if usd_per_hour > 0 else None
        per_million = usd_per_hour * share / (tokens * 3600.0) * 1e6
    return CostEstimate(bom=lines, capex_usd=capex, fabric_capex_usd=fabric,
                        fabric_share=fabric / capex if capex > 0 else 0.0, power_kw=power_kw,
                        facility_power_kw=facility_kw, pue=pue,
                        pue_source=PUE_SOURCE if book.pue is None else "the design's spec.prices.pue",
                        usd_per_kwh=usd_per_kwh,
                        amortisation_years=amortisation_years, usd_per_hour=usd_per_hour,
                        tokens_per_s=tokens, tokens_per_s_per_mw=per_mw, usd_per_million_tokens=per_million,
                        tokens_per_usd=per_usd, job_share=share, notes=notes)
