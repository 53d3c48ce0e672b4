"""A server's insides from NCCL's topology dump (`NCCL_TOPO_DUMP_FILE=topo.xml`).

The format is NCCL's own (src/graph/xml.cc ncclTopoDumpXmlToFile, topo.cc ncclTopoGetSystem):

    <system version="1">
      <cpu numaid="0" affinity="0000ffff,..." arch="x86_64" vendor="GenuineIntel" ...>
        <pci busid="0000:16:00.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">  a PCIe switch
          <pci busid="0000:18:00.0" class="0x030200" vendor="0x10de" device="0x2335" ...>
            <gpu dev="0" sm="90" rank="0" gdr="1">
              <nvlink target="0000:07:00.0" count="5" tclass="0x068000"/>                   to an NVSwitch
            </gpu>
          </pci>
          <pci busid="0000:19:00.0" class="0x020000" ...>
            <nic><net name="mlx5_0" dev="0" speed="400000" port="1" guid="0x..." maxconn="131072" gdr="1"/></nic>
          </pci>
        </pci>
      </cpu>
    </system>

`speed` is in Mb/s. A `<nic>` may also hang directly under a `<cpu>` (NICs NCCL merged,
`mlx5_0+mlx5_1`). NVLink targets of class 0x0680xx are NVSwitches, of class 0x03xxxx GPUs.

What a Designer server takes from it: the GPU count, the NIC count and speed, GPUs per NIC,
GPUDirect RDMA (every GPU and NIC says gdr="1"), the scale-up kind (NVSwitch, direct NVLink or
PCIe only) and each GPU's nearest NIC in the PCIe tree (`gpu_nic_affinity`): the NIC behind the
same PCIe switch, else under the same CPU (NUMA node), else any (ties: the lower NIC number).
"""
from __future__ import annotations

import xml.parsers.expat
from collections import Counter
from dataclasses import dataclass, field

from ...problems import DesignerError, Problem

FIX = "give the file NCCL writes with NCCL_TOPO_DUMP_FILE=topo.xml (NCCL_DEBUG=INFO shows where)"
NVSWITCH_CLASS_PREFIX = "0x0680"  # PCI class "bridge, other": what NCCL reports for an NVSwitch
BRIDGE_CLASS_PREFIX = "0x0604"  # PCI-to-PCI bridge: a PCIe switch port
# NVLink rate per link per direction, Gb/s, by SM generation (NVLink 2/3/4/5: 25, 25, 25, 50 GB/s)
NVLINK_GBPS_PER_LINK = {70: 200.0, 80: 200.0, 90: 200.0, 100: 400.0, 103: 400.0}
# which catalog accelerators an SM version fits (a warning when the design names another)
# NVIDIA GPUs by PCI device id (the <pci device=...> holding a <gpu>; names: the PCI ID Repository,
# vendor 10de): the form factor matters, a PCIe card has the SXM part's chip at a lower power and
# memory bandwidth (A100 80GB: 300 W and 1935 GB/s PCIe, 400 W and 2039 GB/s SXM4; NVIDIA datasheets).
GPU_DEVICES = {
    0x1DB1: ("Tesla V100 SXM2 16GB", "SXM"), 0x1DB5: ("Tesla V100 SXM2 32GB", "SXM"),
    0x1DB4: ("Tesla V100 PCIe 16GB", "PCIe"), 0x1DB6: ("Tesla V100 PCIe 32GB", "PCIe"),
    0x20B0: ("A100 SXM4 40GB", "SXM"), 0x20B2: ("A100 SXM4 80GB", "SXM"),
    0x20F1: ("A100 PCIe 40GB", "PCIe"), 0x20B5: ("A100 PCIe 80GB", "PCIe"),
    0x2330: ("H100 SXM5 80GB", "SXM"), 0x2331: ("H100 PCIe", "PCIe"), 0x2321: ("H100 NVL", "PCIe"),
    0x2335: ("H200 SXM 141GB", "SXM"), 0x233B: ("H200 NVL", "PCIe"),
}
SM_FAMILIES = {70: ("V100",), 80: ("A100", "A800"), 86: ("A10", "A40", "A6000"), 89: ("L40", "L4"),
               90: ("H100", "H200", "H800", "H20", "GH200"), 100: ("B200", "GB200", "B100"), 103: ("B300", "GB300")}


# NCCL's dump nests about ten levels (system > cpu > pci switches > gpu > nvlink); a deeper file is
# not a topology dump, and refusing it keeps every walk below short.
MAX_NESTING = 64


@dataclass
class _Element:
    """One XML element of an NCCL topology dump, with its line and parent."""
    tag: str
    attrs: dict
    line: int
    parent: "_Element | None" = None
    children: list = field(default_factory=list)

    def ancestors(self) -> list["_Element"]:
        out, e = [], self.parent
        while e is not None:
            out.append(e)
            e = e.parent
        return out


@dataclass
class TopoGpu:
    """A GPU of an NCCL topology dump: its NVLinks and its place in the PCIe tree."""
    dev: int
    busid: str
    numa: str
    sm: int | None
    gdr: bool
    nvlinks: int  # NVLink count, all targets
    nvswitch: bool  # at least one link goes to an NVSwitch
    switch: str | None  # busid of the nearest PCIe switch above it
    path: list  # its ancestors, nearest first (for the distance to each NIC)
    pci_device: int | None = None  # the PCI device id of its <pci> (GPU_DEVICES)


@dataclass
class TopoNic:
    """A NIC of an NCCL topology dump: its rate, PCIe slot and place in the PCIe tree."""
    dev: int
    name: str
    speed_gbps: float  # the port's line rate (<net speed>)
    numa: str
    gdr: bool
    switch: str | None
    path: list
    slot_gbps: float | None = None  # what the card's PCIe link carries (link_speed x width x encoding)
    slot_ports: int = 1  # ports of the card sharing that link

    @property
    def usable_gbps(self) -> float:
        """The line rate, or the port's share of its card's PCIe link when that is less (a dual-port
        100G card in a PCIe 4.0 x8 slot: 126 Gb/s for both ports, 63 each)."""
        if self.slot_gbps:
            return min(self.speed_gbps, self.slot_gbps / self.slot_ports)
        return self.speed_gbps


@dataclass
class NcclTopology:
    """A server's GPUs and NICs as NCCL's topology dump (NCCL_TOPO_DUMP_FILE) describes them."""
    gpus: list[TopoGpu]  # by dev
    nics: list[TopoNic]  # by dev
    line: int  # of <system>

    def nic_speed_gbps(self) -> float:
        return Counter(round(n.usable_gbps, 3) for n in self.nics).most_common(1)[0][0] if self.nics else 0.0

    def scale_up(self) -> str:
        if any(g.nvswitch for g in self.gpus):
            return "nvswitch"
        return "nvlink" if any(g.nvlinks for g in self.gpus) else "pcie"

    def nvlink_gbps(self) -> float | None:
        """Per GPU per direction: its NVLink count x the link rate of its generation (the least-linked GPU)."""
        rates = [g.nvlinks * NVLINK_GBPS_PER_LINK[g.sm] for g in self.gpus if g.sm in NVLINK_GBPS_PER_LINK]
        return min(rates) if rates and len(rates) == len(self.gpus) and min(rates) > 0 else None

    def nearest_nic(self) -> list[int]:
        """Per GPU (by dev order): the index (in dev order) of the NIC closest to it in the PCIe tree."""
        out = []
        for g in self.gpus:
            def distance(n: TopoNic) -> tuple:
                common = next((k for k, a in enumerate(g.path) if any(a is b for b in n.path)), len(g.path))
                shared = g.path[common] if common < len(g.path) else None
                up_nic = next((k for k, b in enumerate(n.path) if b is shared), len(n.path))
                return (common + up_nic, n.numa != g.numa, n.dev)
            out.append(min(range(len(self.nics)), key=lambda i: distance(self.nics[i])) if self.nics else 0)
        return out

    def switch_groups(self) -> list[tuple[str, list[int], list[int]]]:
        """(switch busid, GPU devs, NIC devs) of each PCIe switch holding a GPU."""
        groups: dict[str, tuple[list, list]] = {}
        for g in self.gpus:
            if g.switch:
                groups.setdefault(g.switch, ([], []))[0].append(g.dev)
        for n in self.nics:
            if n.switch in groups:
                groups[n.switch][1].append(n.dev)
        return [(k, v[0], v[1]) for k, v in groups.items()]


def _bad(file: str, line: int, message: str, fix: str = FIX) -> DesignerError:
    return DesignerError([Problem(message, file=file, line=line, fix=fix)])


def _parse_tree(text: str, file: str) -> _Element:
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        line = text[: max(text.find("<!DOCTYPE"), text.find("<!ENTITY"))].count("\n") + 1
        raise _bad(file, line, "a DOCTYPE or ENTITY declaration: NCCL's topology dump has none")
    parser = xml.parsers.expat.ParserCreate()
    root: list[_Element] = []
    stack: list[_Element] = []

    def start(tag, attrs):
        if len(stack) >= MAX_NESTING:
            raise _bad(file, parser.CurrentLineNumber,
                       f"<{tag}> is nested more than {MAX_NESTING} elements deep: NCCL's topology nests about ten "
                       "(system, cpu, pci switches, gpu, nvlink)", fix="give the XML that NCCL_TOPO_DUMP_FILE wrote")
        e = _Element(tag, dict(attrs), parser.CurrentLineNumber, stack[-1] if stack else None)
        if stack:
            stack[-1].children.append(e)
        else:
            root.append(e)
        stack.append(e)

    def end(tag):
        stack.pop()

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    try:
        parser.Parse(text, True)
    except xml.parsers.expat.ExpatError as exc:
        lines = text.count("\n") + 1
        reason = xml.parsers.expat.ErrorString(exc.code)
        if exc.code == xml.parsers.expat.errors.codes[xml.parsers.expat.errors.XML_ERROR_NO_ELEMENTS] or \
                (stack and exc.lineno >= lines - 1):
            reason = f"the XML ends inside <{stack[-1].tag}> (line {stack[-1].line}): truncated?" if stack \
                else "no XML elements: empty or not XML"
        raise _bad(file, exc.lineno, f"cannot read the topology: {reason}") from None
    if not root or root[0].tag != "system":
        raise _bad(file, root[0].line if root else 1,
                   f"the top element is <{root[0].tag if root else ''}>, not NCCL's <system version=...>")
    return root[0]


def _int(e: _Element, name: str, file: str, default: int | None = None) -> int | None:
    raw = e.attrs.get(name)
    if raw is None:
        return default
    try:
        return int(raw, 0) if raw.lower().startswith("0x") else int(float(raw))
    except ValueError:
        raise _bad(file, e.line, f"<{e.tag} {name}={raw!r}>: not a number") from None


def _walk(e: _Element):
    """Every element below e, e first, in document order (no recursion)."""
    stack = [e]
    while stack:
        item = stack.pop()
        yield item
        stack.extend(reversed(item.children))


def _context(e: _Element) -> tuple[str, str | None, list]:
    """(NUMA node, nearest PCIe switch busid, ancestors) of a GPU or NIC element."""
    ancestors = e.ancestors()
    cpu = next((a for a in ancestors if a.tag == "cpu"), None)
    numa = cpu.attrs.get("numaid", "?") if cpu is not None else "?"
    pcis = [a for a in ancestors if a.tag == "pci"]
    # the device's own <pci> is pcis[0]; the switch is the nearest bridge above it
    switch = next((a.attrs.get("busid") for a in pcis[1:] if a.attrs.get("class", "").startswith(BRIDGE_CLASS_PREFIX)),
                  None)
    return numa, switch, ancestors


def _pcie_gbps(pci: _Element) -> float | None:
    """Data rate of a PCIe link, per direction, from NCCL's link_speed ("16.0 GT/s PCIe") and link_width:
    8b/10b below 8 GT/s (PCIe 1-2), 128b/130b at 8-32 GT/s (PCIe 3-5), 242/256 FLIT at 64 GT/s (PCIe 6)."""
    speed, width = pci.attrs.get("link_speed", ""), pci.attrs.get("link_width", "")
    try:
        gts, lanes = float(speed.split()[0]), int(width)
    except (ValueError, IndexError):
        return None
    if gts <= 0 or lanes <= 0:
        return None
    encoding = 0.8 if gts < 8 else (128 / 130 if gts < 64 else 242 / 256)
    return gts * lanes * encoding


def _hex(text: str) -> bool:
    try:
        int(text, 16)
    except ValueError:
        return False
    return True


def parse_nccl_topo(text: str, file: str) -> NcclTopology:
    system = _parse_tree(text, file)
    gpus, nics = [], []
    for e in _walk(system):
        if e.tag == "gpu":
            numa, switch, path = _context(e)
            own = e.parent.attrs.get("busid", "") if e.parent is not None and e.parent.tag == "pci" else ""
            links = [c for c in e.children if c.tag == "nvlink"]
            count = sum(_int(c, "count", file, 1) or 0 for c in links)
            nvswitch = any(c.attrs.get("tclass", "").startswith(NVSWITCH_CLASS_PREFIX) for c in links)
            dev = _int(e, "dev", file)
            if dev is None:
                raise _bad(file, e.line, "a <gpu> without dev=")
            device = e.parent.attrs.get("device", "") if e.parent is not None and e.parent.tag == "pci" else ""
            gpus.append(TopoGpu(dev, own, numa, _int(e, "sm", file), e.attrs.get("gdr", "0") == "1", count,
                                nvswitch, switch, path,
                                int(device, 16) if device.lower().startswith("0x") and _hex(device) else None))
        elif e.tag == "net":
            numa, switch, path = _context(e)
            speed = _int(e, "speed", file)
            if speed is None or speed <= 0:
                raise _bad(file, e.line, f"<net name={e.attrs.get('name', '?')!r}> without a speed (Mb/s)")
            card = next((a for a in path if a.tag == "pci"), None)
            nic = e.parent if e.parent is not None and e.parent.tag == "nic" else None
            ports = sum(1 for c in nic.children if c.tag == "net") if nic is not None else 1
            nics.append(TopoNic(_int(e, "dev", file, len(nics)), e.attrs.get("name", f"net{len(nics)}"),
                                speed / 1000.0, numa, e.attrs.get("gdr", "0") == "1", switch, path,
                                _pcie_gbps(card) if card is not None else None, max(1, ports)))
    if not gpus:
        raise _bad(file, system.line, "the topology has no <gpu>: NCCL wrote it on a host without GPUs, or it was "
                   "cut", "dump it from a GPU job (NCCL_TOPO_DUMP_FILE set for rank 0 of an nccl-tests run)")
    devs = Counter(g.dev for g in gpus)
    if max(devs.values()) > 1:  # a fused multi-host dump (an MNNVL rack) lists each host's GPUs
        dup = next(d for d, c in devs.items() if c > 1)
        raise _bad(file, system.line, f"GPU dev {dup} appears {devs[dup]} times: a dump of several hosts",
                   "dump one server's topology (the file of one rank)")
    gpus.sort(key=lambda g: g.dev)
    nics.sort(key=lambda n: n.dev)
    return NcclTopology(gpus, nics, system.line)


@dataclass
class Applied:
    """The servers an NCCL topology was written into, with the messages for the user."""
    node_ids: list[str]
    messages: list[str]


def apply_topology(doc, topo: NcclTopology, node_ids: list[str] | None, catalog=None) -> Applied:
    """Write the topology into the targeted servers: `node_ids`, or every server with as many GPUs."""
    from ...model.catalog import default_catalog

    catalog = catalog or default_catalog()
    n_gpus, n_nics = len(topo.gpus), len(topo.nics)
    if node_ids:
        known = {n.id: n for n in doc.nodes}
        missing = [i for i in node_ids if i not in known]
        if missing:
            raise DesignerError([Problem(f"no server {missing[0]!r} in the design", "--node",
                                         fix="known: " + ", ".join(list(known)[:8]) + (" ..." if len(known) > 8 else ""))])
        targets = [known[i] for i in dict.fromkeys(node_ids)]
    else:
        targets = [n for n in doc.nodes if n.accelerator_count == n_gpus]
        if not targets:
            counts = sorted({n.accelerator_count for n in doc.nodes})
            raise DesignerError([Problem(f"no server has {n_gpus} GPUs like the topology (the design's have "
                                         f"{', '.join(map(str, counts)) or 'none'})", "--node",
                                         fix="name the servers to change with --node ID")], 1)
    messages = []
    speed = topo.nic_speed_gbps()
    gpus_per_nic = n_gpus // n_nics if n_nics and n_gpus % n_nics == 0 and n_gpus >= n_nics else 1
    gdr = all(g.gdr for g in topo.gpus) and all(n.gdr for n in topo.nics)
    scale_up = topo.scale_up()
    nvlink_gbps = topo.nvlink_gbps() if scale_up != "pcie" else None
    sms = {g.sm for g in topo.gpus if g.sm}
    for node in targets:
        changes = dict(accelerator_count=n_gpus, nic_count=n_nics, scale_up=scale_up, gpudirect_rdma=gdr,
                       gpus_per_nic=gpus_per_nic, gpu_nic_affinity=topo.nearest_nic() if n_nics else [])
        if n_nics:
            changes["nic_gbps"] = speed
            model = catalog.resolve("nics", node.nic_model) if node.nic_model else None
            if model is not None and catalog.nics[model].gbps != speed:
                changes["nic_model"] = ""  # the catalog part runs at another speed: the measured one wins
                messages.append(f"{node.id}: nic_model {node.nic_model} cleared (it runs at "
                                f"{catalog.nics[model].gbps:g} Gb/s; the topology says {speed:g})")
        accel = catalog.resolve("accelerators", node.accelerator)
        if accel is not None and nvlink_gbps and abs(nvlink_gbps - catalog.accelerator(accel).scale_up_gbps) > 1:
            changes["scale_up_gbps"] = nvlink_gbps
        elif node.scale_up_gbps is not None and nvlink_gbps and abs(nvlink_gbps - node.scale_up_gbps) > 1:
            changes["scale_up_gbps"] = None
        cards = {GPU_DEVICES[g.pci_device]: g.pci_device for g in topo.gpus if g.pci_device in GPU_DEVICES}
        for (product, form), pci_device in sorted(cards.items()):
            if accel and form == "PCIe" and "SXM" in accel.upper():
                messages.append(f"{node.id}: warning: the topology's GPUs are {product} cards (PCI device "
                                f"{pci_device:#x}); the design's {accel} is the SXM part, with its power and memory "
                                "bandwidth (a PCIe card runs the same chip lower): the catalog has no PCIe part, "
                                "so the SXM figures stay")
        for sm in sms:
            family = SM_FAMILIES.get(sm)
            if family and accel and not any(f.lower() in accel.lower() for f in family):
                messages.append(f"{node.id}: the topology's GPUs are SM {sm} ({'/'.join(family)}); the design "
                                f"says {accel}")
        if getattr(node, "gpus_down", 0) and node.gpus_down > n_gpus:  # never more GPUs down than the server has
            changes["gpus_down"] = n_gpus
        changed = {k: v for k, v in changes.items() if getattr(node, k) != v}
        if changed:
            doc.update(node.id, **changed)
    return Applied([n.id for n in targets], messages)


def describe(topo: NcclTopology) -> list[str]:
    """What the topology holds, for stderr: GPUs, NICs, PCIe switches, NUMA nodes, NVLinks."""
    nic_speeds = Counter(f"{n.speed_gbps:g}" for n in topo.nics)
    lines = [f"{len(topo.gpus)} GPUs (SM {', '.join(sorted({str(g.sm) for g in topo.gpus}))}), "
             f"{len(topo.nics)} NICs ({', '.join(f'{c} x {s} Gb/s' for s, c in nic_speeds.items()) or 'none'}), "
             f"scale-up {topo.scale_up()}"
             + (f", {min(g.nvlinks for g in topo.gpus)} NVLinks per GPU" if topo.scale_up() != "pcie" else "")]
    numa = Counter(g.numa for g in topo.gpus)
    lines.append("NUMA nodes: " + ", ".join(f"{k}: {v} GPUs" for k, v in sorted(numa.items())))
    for busid, g, n in topo.switch_groups():
        lines.append(f"PCIe switch {busid}: GPU {', '.join(map(str, g))}; NIC {', '.join(map(str, n)) or 'none'}")
    for n in topo.nics:
        if n.usable_gbps < n.speed_gbps:
            card = next((a for a in n.path if a.tag == "pci"), None)
            lane = card.attrs.get("link_speed", "?").split()[0] if card is not None else "?"
            width = card.attrs.get("link_width", "?") if card is not None else "?"
            lines.append(f"{n.name}: one of {n.slot_ports} ports of a card in a PCIe {lane} GT/s x{width} slot "
                         f"({n.slot_gbps:.0f} Gb/s for all of them): {n.usable_gbps:.0f} Gb/s, not "
                         f"{n.speed_gbps:g}")
    nearest = topo.nearest_nic()
    if topo.nics:
        lines.append("nearest NIC per GPU: " + ", ".join(f"GPU{g.dev}->nic{nearest[i]} ({topo.nics[nearest[i]].name})"
                                                          for i, g in enumerate(topo.gpus)))
    return lines

