"""The physical parts of a cluster design: racks, nodes (servers), switches and links.

Plain dataclasses without behaviour; `Document` owns them and announces changes. With slots: a
131k-GPU design holds 320k of them (a third less memory, built a third faster); no other
attribute can be set on them. Made, compared and shown by methods written once (their __init__ here, with the same
parameters and defaults as their fields; __eq__ and __repr__ by core/by_name.compared_by_value):
dataclass would compile them for each class at every start.
Ports are named: a node's NICs are `nic0..nic{n-1}`; a switch's ports `p0..p{radix-1}`.
A link endpoint is `DEVICE:PORT`, or just `DEVICE` when any free port will do.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from operator import attrgetter

from ..by_name import NEW, compared_by_value
from .spec import spec_field

LINK_KINDS = ("nvlink", "pcie", "ethernet", "infiniband")
NETWORK_KINDS = ("ethernet", "infiniband")
SWITCH_TIERS = ("leaf", "spine", "core")
# How a switch spreads flows over its equal-cost up-links: ecmp (a hash puts each flow on one path), static
# (InfiniBand's linear forwarding tables without adaptive routing: one path per destination), adaptive
# (InfiniBand AR; per-packet on Spectrum-4 for NICs that reorder) or scheduled (a cell-sprayed, credit-
# scheduled fabric such as Broadcom Jericho3-AI: no flow collisions).
SWITCH_ROUTINGS = ("ecmp", "static", "adaptive", "scheduled")
SCALE_UP_KINDS = ("nvswitch", "nvlink", "pcie")
# An NVLink switch tray (GB200/GB300 NVL72) is a switch of fabric and tier "nvlink": it joins the GPUs
# of one NVLink domain and is no part of the scale-out Clos (the engine leaves it out of the network).
NVLINK_SWITCH = "nvlink"
SWITCH_FABRICS = NETWORK_KINDS + (NVLINK_SWITCH,)
SWITCH_TIER_CHOICES = SWITCH_TIERS + (NVLINK_SWITCH,)
# A part that failed or is taken out for service: the engine routes around a link or switch that is
# down (ECMP over the rest) and the placer gives no job a GPU of a server that is down.
ELEMENT_STATES = ("up", "down")
# What a server on the fabric is for. compute: a GPU server jobs run on. storage, login, service
# (a cache, UFM, Slurm-controller or other management host): an endpoint that holds switch ports and
# cables but no job; its accelerator fields are not used and its GPUs are not counted.
NODE_ROLES = ("compute", "storage", "login", "service")

# Physical ranges of the numbers (the schema shows them, the loader enforces them).
MIN_GBPS = 0.1  # 100 Mb/s: slower than any cable a training cluster uses
MAX_GBPS = 100_000.0  # 100 Tb/s per port or per accelerator, well above NVLink 5's 7.2 Tb/s
MAX_LATENCY_US = 1_000_000.0  # one second per hop
MAX_SLOWDOWN = 100.0  # a part 100 times slower than its rating is broken, not slow
MAX_PORTS = 4096  # NICs of a server, ports of a switch, cables in one bundle
MAX_ACCELERATORS_PER_NODE = 1024  # above NVL576, the largest scale-up domain sold
MAX_RACK_UNITS = 100
MAX_PODS = 1_000_000
MAX_CANVAS_PX = 1e9


def _by_fields(cls):
    """Copied and pickled as the constructor's arguments: with slots, the default way builds a dict of
    each element's state (a copy a third slower, pickling twice as slow as without slots)."""
    values = attrgetter(*(f.name for f in dataclasses.fields(cls)))
    cls.__reduce__ = lambda self: (type(self), values(self))
    return cls


@compared_by_value
@dataclass(eq=False, repr=False, init=False)
class Metadata:
    """The `metadata` section of a design: its name and description."""
    name: str = spec_field("untitled", doc="Name of the design", omit_default=False)
    description: str = spec_field("", doc="Free text: purpose, assumptions, sources")

    def __init__(self, name: str = "untitled", description: str = "") -> None:
        self.name = name
        self.description = description


@_by_fields
@compared_by_value
@dataclass(slots=True, eq=False, repr=False, init=False)
class Rack:
    """A rack on the canvas: its height in units and its position; servers and switches sit in it."""
    id: str = spec_field(doc="Unique id")
    name: str = spec_field("", doc="Display name (defaults to the id)")
    units: int = spec_field(42, doc="Height in rack units (slots)", minimum=1, maximum=MAX_RACK_UNITS, unit="U")
    x: float = spec_field(0.0, doc="Canvas position, left edge", minimum=-MAX_CANVAS_PX, maximum=MAX_CANVAS_PX,
                          unit="px")
    y: float = spec_field(0.0, doc="Canvas position, top edge", minimum=-MAX_CANVAS_PX, maximum=MAX_CANVAS_PX,
                          unit="px")
    row: str = spec_field("", doc="Data-hall row or pod label, for grouping")

    def __init__(self, id: str, name: str = "", units: int = 42, x: float = 0.0, y: float = 0.0,
                 row: str = "") -> None:
        self.id = id
        self.name = name
        self.units = units
        self.x = x
        self.y = y
        self.row = row


@_by_fields
@compared_by_value
@dataclass(slots=True, eq=False, repr=False, init=False)
class Node:
    """A server: accelerators on a scale-up fabric, NICs to the scale-out fabric."""

    id: str = spec_field(doc="Unique id")
    accelerator: str = spec_field(doc="Accelerator model from the catalog (A100, H100-SXM5-80GB, ...)")
    accelerator_count: int = spec_field(8, doc="Accelerators in this server", minimum=1,
                                        maximum=MAX_ACCELERATORS_PER_NODE)
    scale_up: str = spec_field(
        "nvswitch", doc="How the accelerators reach each other inside the server", enum=SCALE_UP_KINDS
    )
    scale_up_gbps: float | None = spec_field(
        None,
        doc="Scale-up bandwidth per accelerator per direction; default: the catalog's figure",
        minimum=MIN_GBPS, maximum=MAX_GBPS, unit="Gb/s",
    )
    nic_count: int = spec_field(8, doc="Scale-out NICs; ports nic0..nic{n-1}", minimum=0, maximum=MAX_PORTS)
    nic_model: str = spec_field("", doc="NIC model from the catalog (sets speed and kind when given). Its "
                           "transport sets how the engine costs the network: InfiniBand adaptive routing, RoCE "
                           "hashed per flow (ECMP), Spectrum-X or packet spraying, EFA's SRD (docs/collectives.md)")
    nic_gbps: float = spec_field(400.0, doc="Line rate of each NIC per direction", minimum=MIN_GBPS,
                                 maximum=MAX_GBPS, unit="Gb/s")
    nic_kind: str = spec_field("infiniband", doc="Network the NICs speak", enum=NETWORK_KINDS)
    gpus_per_nic: int = spec_field(1, doc="Accelerators sharing one NIC (2 on many PCIe servers)", minimum=1,
                                   maximum=MAX_ACCELERATORS_PER_NODE)
    gpudirect_rdma: bool = spec_field(True, doc="NICs read accelerator memory directly (off: bounce via host)")
    gpu_nic_affinity: list[int] = spec_field(
        doc="Per accelerator, by local index: the NIC (nicK) nearest it in the PCIe tree, e.g. from NCCL's "
            "topology dump ([7, 6, 5, ...]: GPU 0 sits behind the switch of nic7); empty: GPU i uses "
            "nic(i // gpus_per_nic)", factory=list, minimum=0, maximum=MAX_PORTS - 1,
    )
    rack: str | None = spec_field(None, doc="Id of the rack the server sits in")
    nvlink_domain: str | None = spec_field(
        None, doc="NVLink domain the server (tray) shares with others, e.g. one NVL72 rack; none: its own"
    )
    slot: int | None = spec_field(None, doc="Lowest rack unit the server occupies", minimum=0,
                                  maximum=MAX_RACK_UNITS, unit="U")
    height_units: int = spec_field(4, doc="Rack units the server occupies", minimum=1, maximum=MAX_RACK_UNITS,
                                   unit="U")
    slowdown: float = spec_field(
        1.0, doc="Straggler factor on this server's compute (1.25 = 25% slower)", minimum=1.0,
        maximum=MAX_SLOWDOWN, unit="x"
    )
    gpu_slowdown: list[float] = spec_field(
        doc="Per-accelerator straggler factors, by local index ([1, 1, 1.5] = GPU 2 is 50% slower)",
        factory=list, minimum=1.0, maximum=MAX_SLOWDOWN, unit="x",
    )
    state: str = spec_field("up", doc="up, or down: the server is out (failed or in service); no job gets its GPUs",
                            enum=ELEMENT_STATES)
    gpus_down: int = spec_field(0, doc="Accelerators of this server that are out (the highest local indices); "
                                       "no job gets them", minimum=0, maximum=MAX_ACCELERATORS_PER_NODE)
    name: str = spec_field("", doc="Display name (defaults to the id)")
    role: str = spec_field("compute", doc="compute: a GPU server jobs run on; storage, login or service: a host "
                                          "on the fabric that no job is placed on and whose GPUs are not counted",
                           enum=NODE_ROLES)

    def __init__(self, id: str, accelerator: str, accelerator_count: int = 8, scale_up: str = "nvswitch",
                 scale_up_gbps: float | None = None, nic_count: int = 8, nic_model: str = "",
                 nic_gbps: float = 400.0, nic_kind: str = "infiniband", gpus_per_nic: int = 1,
                 gpudirect_rdma: bool = True, gpu_nic_affinity: list[int] = NEW, rack: str | None = None,
                 nvlink_domain: str | None = None, slot: int | None = None, height_units: int = 4,
                 slowdown: float = 1.0, gpu_slowdown: list[float] = NEW, state: str = "up", gpus_down: int = 0,
                 name: str = "", role: str = "compute") -> None:
        self.id = id
        self.accelerator = accelerator
        self.accelerator_count = accelerator_count
        self.scale_up = scale_up
        self.scale_up_gbps = scale_up_gbps
        self.nic_count = nic_count
        self.nic_model = nic_model
        self.nic_gbps = nic_gbps
        self.nic_kind = nic_kind
        self.gpus_per_nic = gpus_per_nic
        self.gpudirect_rdma = gpudirect_rdma
        self.gpu_nic_affinity = [] if gpu_nic_affinity is NEW else gpu_nic_affinity
        self.rack = rack
        self.nvlink_domain = nvlink_domain
        self.slot = slot
        self.height_units = height_units
        self.slowdown = slowdown
        self.gpu_slowdown = [] if gpu_slowdown is NEW else gpu_slowdown
        self.state = state
        self.gpus_down = gpus_down
        self.name = name
        self.role = role

    @property
    def computes(self) -> bool:
        return self.role == "compute"

    def nic_ports(self) -> list[str]:
        return [f"nic{i}" for i in range(self.nic_count)]


@_by_fields
@compared_by_value
@dataclass(slots=True, eq=False, repr=False, init=False)
class Switch:
    """A network switch (leaf, spine, core) or NVLink switch tray, with its ports' rate and latency."""
    id: str = spec_field(doc="Unique id")
    fabric: str = spec_field(doc="ethernet or infiniband; nvlink for an NVLink switch tray", enum=SWITCH_FABRICS)
    tier: str = spec_field(doc="Place in the Clos: leaf, spine or core; nvlink for an NVLink switch tray",
                           enum=SWITCH_TIER_CHOICES)
    radix: int = spec_field(64, doc="Number of ports; ports p0..p{radix-1}", minimum=1, maximum=MAX_PORTS)
    port_gbps: float = spec_field(400.0, doc="Line rate of each port per direction", minimum=MIN_GBPS,
                                  maximum=MAX_GBPS, unit="Gb/s")
    latency_us: float = spec_field(0.6, doc="Port-to-port forwarding latency", minimum=0, maximum=MAX_LATENCY_US,
                                   unit="us")
    model: str = spec_field("", doc="Switch model from the catalog")
    sharp: bool = spec_field(False, doc="In-network reduction (InfiniBand SHARP) enabled")
    routing: str | None = spec_field(
        None, doc="How it spreads flows over its up-links: ecmp (one hashed path per flow), static (InfiniBand "
        "without adaptive routing: one path per destination), adaptive or scheduled (a cell-scheduled fabric); "
        "default: its catalog model's, else adaptive on InfiniBand and ecmp on Ethernet", enum=SWITCH_ROUTINGS)
    rail: int | None = spec_field(None, doc="Rail served by this leaf in a rail-optimized fabric", minimum=0,
                                  maximum=MAX_PORTS)
    pod: int | None = spec_field(None, doc="Pod (scalable unit) of a three-tier fabric", minimum=0,
                                 maximum=MAX_PODS)
    rack: str | None = spec_field(None, doc="Id of the rack the switch sits in")
    nvlink_domain: str | None = spec_field(
        None, doc="NVLink switch tray only: the NVLink domain (servers' nvlink_domain) whose GPUs it joins"
    )
    slot: int | None = spec_field(None, doc="Lowest rack unit the switch occupies", minimum=0,
                                  maximum=MAX_RACK_UNITS, unit="U")
    height_units: int = spec_field(1, doc="Rack units the switch occupies", minimum=1, maximum=MAX_RACK_UNITS,
                                   unit="U")
    state: str = spec_field("up", doc="up, or down: the switch is out and traffic takes the other paths (ECMP)",
                            enum=ELEMENT_STATES)
    name: str = spec_field("", doc="Display name (defaults to the id)")

    def __init__(self, id: str, fabric: str, tier: str, radix: int = 64, port_gbps: float = 400.0,
                 latency_us: float = 0.6, model: str = "", sharp: bool = False, routing: str | None = None,
                 rail: int | None = None, pod: int | None = None, rack: str | None = None,
                 nvlink_domain: str | None = None, slot: int | None = None, height_units: int = 1,
                 state: str = "up", name: str = "") -> None:
        self.id = id
        self.fabric = fabric
        self.tier = tier
        self.radix = radix
        self.port_gbps = port_gbps
        self.latency_us = latency_us
        self.model = model
        self.sharp = sharp
        self.routing = routing
        self.rail = rail
        self.pod = pod
        self.rack = rack
        self.nvlink_domain = nvlink_domain
        self.slot = slot
        self.height_units = height_units
        self.state = state
        self.name = name

    def ports(self) -> list[str]:
        return [f"p{i}" for i in range(self.radix)]

    @property
    def is_nvlink_tray(self) -> bool:
        return self.fabric == NVLINK_SWITCH


@_by_fields
@compared_by_value
@dataclass(slots=True, eq=False, repr=False, init=False)
class Link:
    """`count` parallel cables between two endpoints, each `bandwidth_gbps` per direction.

    With count > 1 and a port given, the cables use `count` consecutive ports from it.
    """

    id: str = spec_field(doc="Unique id")
    a: str = spec_field(doc="First endpoint, DEVICE:PORT (or DEVICE: any free port)")
    b: str = spec_field(doc="Second endpoint, DEVICE:PORT (or DEVICE: any free port)")
    kind: str = spec_field(doc="nvlink, pcie, ethernet or infiniband", enum=LINK_KINDS)
    bandwidth_gbps: float = spec_field(doc="Per cable, per direction", minimum=MIN_GBPS, maximum=MAX_GBPS,
                                       unit="Gb/s")
    latency_us: float = spec_field(0.0, doc="Propagation and SerDes latency of the cable", minimum=0,
                                   maximum=MAX_LATENCY_US, unit="us")
    count: int = spec_field(1, doc="Parallel cables", minimum=1, maximum=MAX_PORTS)
    slowdown: float = spec_field(
        1.0, doc="Degradation factor on this link's bandwidth (2 = half speed)", minimum=1.0,
        maximum=MAX_SLOWDOWN, unit="x"
    )
    note: str = spec_field("", doc="Free text about this cable, e.g. why an import flagged it (trained below "
                                   "the fabric's speed)")
    state: str = spec_field("up", doc="up, or down: the cables are out and traffic takes the other paths (ECMP)",
                            enum=ELEMENT_STATES)

    def __init__(self, id: str, a: str, b: str, kind: str, bandwidth_gbps: float, latency_us: float = 0.0,
                 count: int = 1, slowdown: float = 1.0, note: str = "", state: str = "up") -> None:
        self.id = id
        self.a = a
        self.b = b
        self.kind = kind
        self.bandwidth_gbps = bandwidth_gbps
        self.latency_us = latency_us
        self.count = count
        self.slowdown = slowdown
        self.note = note
        self.state = state


def split_endpoint(endpoint: str) -> tuple[str, str | None]:
    """'leaf3:p17' -> ('leaf3', 'p17'); 'leaf3' -> ('leaf3', None)."""
    device, sep, port = endpoint.partition(":")
    return device, (port if sep else None)


def port_index(port: str) -> int | None:
    """'p17' -> 17, 'nic3' -> 3; None when the name has no trailing number."""
    digits = ""
    for ch in reversed(port):
        if ch.isdigit():
            digits = ch + digits
        else:
            break
    return int(digits) if digits else None


class UnknownChoice(ValueError):
    """A field set to a value outside its declared choices (a link of kind '', a tier 'top').

    The loader refuses such a file, so the document refuses the edit: what it holds can always
    be saved and opened again."""


@lru_cache(maxsize=None)
def _choice_fields(cls) -> dict[str, tuple]:
    # an optional field (default None, e.g. a switch's routing) may also be left unset
    return {f.name: tuple(f.metadata["enum"]) + ((None,) if f.default is None else ())
            for f in dataclasses.fields(cls) if f.metadata.get("enum")}


def refuse_unknown_choices(element, values: dict | None = None) -> None:
    """UnknownChoice when `values` (default: the element's own fields) put a field with declared
    choices (link kind, switch fabric and tier, NIC kind, scale-up) outside them."""
    choices = _choice_fields(type(element))
    items = values.items() if values is not None else ((n, getattr(element, n)) for n in choices)
    for name, value in items:
        allowed = choices.get(name)
        if allowed is not None and value not in allowed:
            kind = type(element).__name__.lower()
            raise UnknownChoice(f"{kind} {getattr(element, 'id', '?')}: {name} {value!r} is not one of "
                                f"{', '.join(a for a in allowed if a is not None)} (pick one of them)")
