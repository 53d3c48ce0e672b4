"""Builds the document of a fat-tree laid out by fat_tree_sizing: servers, switches, cables and the
racks they stand in, placed on the canvas."""
from __future__ import annotations

import math

from ..model.catalog import Catalog
from ..model.document import ClusterSpec, Document
from ..model.elements import SCALE_UP_KINDS, Link, Metadata, Node, Rack, Switch
from .fat_tree_geometry import (
    BLOCK_GAP_PX, DEFAULT_SWITCH_LATENCY_US, FABRIC_NAMES, LEAF_SPINE_CABLE_LATENCY_US, NIC_CABLE_LATENCY_US,
    RACK_PITCH_X_PX, RACK_UNITS, RACKS_PER_ROW, ROW_PITCH_Y_PX, SPINE_CORE_CABLE_LATENCY_US, server_units,
    switch_pitch, switch_units, switches_per_rack,
)
from .fat_tree_sizing import FatTreeLayout, count_text, ratio_text
from .nvlink_trays import TRAY_UNITS, add_switch_trays, domain_racks, domain_runs


# ---- building -----------------------------------------------------------------------------------

class FatTreeBuilder:
    def __init__(self, lay: FatTreeLayout, acc, gpus_per_node: int, nic_gbps: float, fabric: str,
                 catalog: Catalog, servers_per_rack: int):
        self.lay = lay
        self.acc = acc
        self.gpus_per_node = gpus_per_node
        self.nic_gbps = nic_gbps
        self.fabric = fabric
        self.catalog = catalog
        self.spr = servers_per_rack
        self.links: list[Link] = []
        self.switches: list[Switch] = []
        self.racks: list[Rack] = []
        self.domain_trays = 1  # servers (trays) per NVLink domain; 1: each server is its own
        self.tray_model = None  # the catalog's NVLink switch tray of a multi-server domain
        self.nic_model = catalog.nic_for(fabric, nic_gbps)  # the servers' catalog NIC (or None)
        self.routing: str | None = None  # every scale-out switch's routing; None: its model's
        self.named_switch = None  # the catalog switch named by --switch-model (its ports maybe split)

    # -- parts from the catalog --
    def _switch_model(self) -> tuple[str, float, bool]:
        """(model, latency_us, sharp) of the switches."""
        lay = self.lay
        if self.named_switch is not None:
            s = self.named_switch
            return s.name, float(s.latency_us), bool(s.sharp) and self.fabric == "infiniband"
        exact = [s for s in self.catalog.switches.values()
                 if s.kind == self.fabric and s.port_gbps == self.nic_gbps and s.radix == lay.radix]
        if exact:
            s = exact[0]
            return s.name, float(s.latency_us), bool(s.sharp) and self.fabric == "infiniband"
        near = self.catalog.switch_for(self.fabric, self.nic_gbps)
        if near is not None:
            # Same fabric and speed but another radix: its latency and SHARP support are the
            # best guess for the chip generation, but naming the model would claim a radix
            # that it does not have.
            return "", float(near.latency_us), bool(near.sharp) and self.fabric == "infiniband"
        return "", DEFAULT_SWITCH_LATENCY_US[self.fabric], False

    def _scale_up(self) -> str:
        # The document knows nvswitch, nvlink and pcie. Anything else (MI300X's Infinity Fabric
        # mesh) is a set of direct GPU-to-GPU links without a switch, which is what "nvlink"
        # describes; its bandwidth still comes from the catalog entry (scale_up_gbps=None).
        return self.acc.scale_up if self.acc.scale_up in SCALE_UP_KINDS else "nvlink"

    # -- the whole document --
    def build(self, name: str | None) -> Document:
        lay = self.lay
        node_rack, node_slot = self._compute_racks()
        nodes = self._nodes(node_rack, node_slot)
        leaf_names = self._switches()
        self._nic_links(leaf_names)
        if lay.tiers > 1:
            self._leaf_spine_links()
        if lay.tiers == 3:
            self._spine_core_links()
        if self.domain_trays > 1:  # servers in file order, `domain_trays` at a time, share one domain
            for i, node in enumerate(nodes):
                node.nvlink_domain = f"nvl{i // self.domain_trays}"
            if self.tray_model is not None:
                add_switch_trays(nodes, self.switches, self.links, self.tray_model,
                                 self.domain_trays * self.gpus_per_node, self.domain_switch_places)
        self._network_racks()
        self._place_racks()
        spec = ClusterSpec(racks=self.racks, nodes=nodes, switches=self.switches, links=self.links)
        return Document(spec, Metadata(name=name or self._default_name(), description=self._description()))

    def _default_name(self) -> str:
        return f"fat-tree-{self.lay.nodes}x{self.gpus_per_node}-{self.acc.name.lower()}"

    def _description(self) -> str:
        lay = self.lay
        fabric = FABRIC_NAMES[self.fabric]
        servers = f"{lay.nodes:,} x {self.gpus_per_node} {self.acc.name}"
        speed = f"{self.nic_gbps:g} Gb/s"
        if lay.tiers == 1:
            return f"single-switch {fabric} network, {servers}, {lay.nics} x {speed} NICs each, radix {lay.radix}"
        rail = "rail-optimized " if lay.rail else ""
        parts = [f"{lay.tiers}-tier {rail}{fabric} fat-tree, {servers}, {ratio_text(lay.ratio)}",
                 f"{lay.nics} x {speed} NICs per server, radix {lay.radix}",
                 f"{count_text(lay.num_leaves, 'leaf', 'leaves')}, {count_text(lay.num_spines, 'spine')}"]
        if lay.tiers == 3:
            parts[-1] += f", {count_text(lay.num_cores, 'core')} in {count_text(len(lay.pods), 'pod')}"
        return "; ".join(parts)

    # -- racks --
    def _compute_racks(self) -> tuple[list[str], list[int]]:
        """Racks for the servers, pod by pod; returns each server's rack id and slot."""
        lay = self.lay
        if self.domain_trays > 1:
            return self._domain_racks()
        units = server_units(self.gpus_per_node)
        rack_units = max(RACK_UNITS, units)
        node_rack: list[str] = []
        node_slot: list[int] = []
        self.pod_compute: list[list[Rack]] = []
        n = 0
        for p in range(len(lay.pods)):
            row = f"pod{p}" if lay.tiers == 3 else "compute"
            racks = []
            left = lay.pod_nodes(p)
            while left > 0:
                rack = Rack(id=f"rack{n}", units=rack_units, row=row)
                n += 1
                racks.append(rack)
                here = min(left, self.spr)
                node_rack.extend([rack.id] * here)
                node_slot.extend(range(0, here * units, units))  # from the bottom up
                left -= here
            self.pod_compute.append(racks)
        self.server_units = units
        return node_rack, node_slot

    def _domain_racks(self) -> tuple[list[str], list[int]]:
        """Racks of NVLink domains: each domain's 1U trays and its switch trays share rack(s), pod by pod."""
        lay = self.lay
        switch_trays = self.tray_model.trays_for(self.domain_trays * self.gpus_per_node) if self.tray_model else 0
        node_rack: list[str] = []
        node_slot: list[int] = []
        self.domain_switch_places: dict[str, tuple[str, list[int]]] = {}
        n = 0
        self.pod_compute = [[] for _ in lay.pods]
        # one domain (or the part of it in this pod) at a time; its first rack holds its switch trays
        for p, domain, here in domain_runs([lay.pod_nodes(p) for p in range(len(lay.pods))], self.domain_trays):
            row = f"pod{p}" if lay.tiers == 3 else "compute"
            first_rack = f"nvl{domain}" not in self.domain_switch_places
            for compute, switch_slots in domain_racks(here, switch_trays if first_rack else 0, RACK_UNITS):
                rack = Rack(id=f"rack{n}", units=RACK_UNITS, row=row)
                n += 1
                self.pod_compute[p].append(rack)
                node_rack.extend([rack.id] * len(compute))
                node_slot.extend(compute)
                if first_rack:
                    self.domain_switch_places[f"nvl{domain}"] = (rack.id, switch_slots)
                    first_rack = False
        self.server_units = TRAY_UNITS
        return node_rack, node_slot

    def _network_racks(self) -> None:
        lay = self.lay
        units = switch_units(lay.radix)
        pitch = switch_pitch(lay.radix)
        per_rack = switches_per_rack(lay.radix)
        self.pod_network: list[list[Rack]] = []
        self.core_racks: list[Rack] = []
        counter = [0]

        def fill(switches: list[Switch], row: str) -> list[Rack]:
            racks = []
            for start in range(0, len(switches), per_rack):
                rack = Rack(id=f"net{counter[0]}", row=row)
                counter[0] += 1
                racks.append(rack)
                for j, sw in enumerate(switches[start:start + per_rack]):
                    sw.rack = rack.id
                    sw.slot = j * pitch
                    sw.height_units = units
            return racks

        for p in range(len(lay.pods)):
            row = f"pod{p}" if lay.tiers == 3 else ("leaf-spine" if lay.tiers == 2 else "network")
            self.pod_network.append(fill(self.pod_switch_lists[p], row))
        if lay.tiers == 3:
            self.core_racks = fill(self.core_list, "core")

    def _place_racks(self) -> None:
        """Canvas grid: core racks on top, then one block per pod (network row(s) above compute)."""
        lay = self.lay

        def rows(count: int) -> int:
            return -(-count // RACKS_PER_ROW)

        def put(racks: list[Rack], x0: float, y0: float) -> None:
            for i, rack in enumerate(racks):
                rack.x = x0 + (i % RACKS_PER_ROW) * RACK_PITCH_X_PX
                rack.y = y0 + (i // RACKS_PER_ROW) * ROW_PITCH_Y_PX

        n_pods = len(lay.pods)
        columns = math.ceil(math.sqrt(n_pods)) if lay.tiers == 3 else 1
        widest = max(max(len(c), len(n)) for c, n in zip(self.pod_compute, self.pod_network))
        block_w = min(RACKS_PER_ROW, widest) * RACK_PITCH_X_PX + BLOCK_GAP_PX
        block_h = max(rows(len(n)) + rows(len(c)) for c, n in zip(self.pod_compute, self.pod_network))
        block_h = block_h * ROW_PITCH_Y_PX + BLOCK_GAP_PX
        y_top = 0.0
        if self.core_racks:
            put(self.core_racks, 0.0, 0.0)
            y_top = rows(len(self.core_racks)) * ROW_PITCH_Y_PX + BLOCK_GAP_PX
        ordered: list[Rack] = list(self.core_racks)
        for p in range(n_pods):
            x0 = (p % columns) * block_w
            y0 = y_top + (p // columns) * block_h
            net, comp = self.pod_network[p], self.pod_compute[p]
            put(net, x0, y0)
            put(comp, x0, y0 + rows(len(net)) * ROW_PITCH_Y_PX)
            ordered.extend(net)
            ordered.extend(comp)
        self.racks = ordered

    # -- servers --
    def _nodes(self, node_rack: list[str], node_slot: list[int]) -> list[Node]:
        lay = self.lay
        nic = self.nic_model
        nic_model = nic.name if nic is not None else ""
        scale_up = self._scale_up()
        g, k, units = self.gpus_per_node, lay.nics, self.server_units
        gpus_per_nic = max(1, -(-g // k))
        acc, gbps, fabric = self.acc.name, self.nic_gbps, self.fabric
        return [
            Node(id=f"node{i}", accelerator=acc, accelerator_count=g, scale_up=scale_up, scale_up_gbps=None,
                 nic_count=k, nic_model=nic_model, nic_gbps=gbps, nic_kind=fabric, gpus_per_nic=gpus_per_nic,
                 rack=node_rack[i], slot=node_slot[i], height_units=units)
            for i in range(lay.nodes)
        ]

    # -- switches --
    def _switches(self) -> list[list[str]]:
        """All switches; returns the leaf ids of each group, one per rail (or one)."""
        lay = self.lay
        model, latency, sharp_capable = self._switch_model()
        # SHARP needs the aggregation manager and NCCL's CollNet plugin (NCCL_COLLNET_ENABLE=1);
        # it is off unless the user turns it on per switch, even where the switch can do it.
        sharp = False
        radix, gbps, fabric = lay.radix, self.nic_gbps, self.fabric
        three = lay.tiers == 3
        lpg = lay.leaves_per_group
        group_leaves: list[list[str]] = [[""] * lpg for _ in lay.group_sizes]
        self.pod_leaves: list[list[str]] = []
        self.pod_spines: list[list[str]] = []
        self.pod_switch_lists: list[list[Switch]] = []
        n_leaf = n_spine = 0
        for p, (g0, g1) in enumerate(lay.pods):
            pod = p if three else None
            here: list[Switch] = []
            names = []
            for k in range(lpg):
                rail = k if lay.rail else None
                for gi in range(g0, g1):
                    leaf_id = f"leaf{n_leaf}"
                    n_leaf += 1
                    here.append(Switch(id=leaf_id, fabric=fabric, tier="leaf", radix=radix, port_gbps=gbps,
                                       latency_us=latency, model=model, sharp=sharp, rail=rail, pod=pod,
                                       routing=self.routing))
                    group_leaves[gi][k] = leaf_id
                    names.append(leaf_id)
            self.pod_leaves.append(names)
            spines = []
            for _ in range(lay.spines_per_pod if lay.tiers > 1 else 0):
                spine_id = f"spine{n_spine}"
                n_spine += 1
                here.append(Switch(id=spine_id, fabric=fabric, tier="spine", radix=radix, port_gbps=gbps,
                                   latency_us=latency, model=model, sharp=sharp, pod=pod, routing=self.routing))
                spines.append(spine_id)
            self.pod_spines.append(spines)
            self.pod_switch_lists.append(here)
            self.switches.extend(here)
        self.core_list: list[Switch] = []
        self.core_groups: list[list[str]] = []
        if three:
            n_core = 0
            for _ in range(lay.spines_per_pod):
                group = []
                for _ in range(lay.cores_per_group):
                    core_id = f"core{n_core}"
                    n_core += 1
                    self.core_list.append(Switch(id=core_id, fabric=fabric, tier="core", radix=radix,
                                                 port_gbps=gbps, latency_us=latency, model=model, sharp=sharp,
                                                 routing=self.routing))
                    group.append(core_id)
                self.core_groups.append(group)
            self.switches.extend(self.core_list)
        return group_leaves

    # -- cables --
    def _nic_links(self, group_leaves: list[list[str]]) -> None:
        lay = self.lay
        links = self.links
        kind, gbps, k_nics = self.fabric, self.nic_gbps, lay.nics
        biggest = max(lay.group_sizes) * (1 if lay.rail else k_nics)
        ports = [f"p{q}" for q in range(biggest)]
        nic_ports = [f"nic{k}" for k in range(k_nics)]
        n = len(links)
        i = 0
        for gi, size in enumerate(lay.group_sizes):
            leaves = group_leaves[gi]
            for q in range(size):
                node = f"node{i}:"
                for k in range(k_nics):
                    if lay.rail:
                        b = f"{leaves[k]}:{ports[q]}"
                    else:
                        b = f"{leaves[0]}:{ports[q * k_nics + k]}"
                    links.append(Link(id=f"l{n}", a=node + nic_ports[k], b=b, kind=kind, bandwidth_gbps=gbps,
                                      latency_us=NIC_CABLE_LATENCY_US))
                    n += 1
                i += 1

    def _deal(self, lowers: list[str], counts: list[int], lower_port0: int, uppers: list[str],
              upper_next: list[int], latency: float) -> None:
        """Cables from each lower switch spread over all `uppers`, as `_deal_loads` counts them.

        Lower ports start at `lower_port0` on each lower switch; `upper_next` holds the next
        free port of each upper switch and is advanced.
        """
        links = self.links
        kind, gbps = self.fabric, self.nic_gbps
        n = len(links)
        s = len(uppers)
        offset = 0
        for low, c in zip(lowers, counts):
            base, extra = divmod(c, s)
            port = lower_port0
            for j in range(s):
                cnt = base + (1 if (j - offset) % s < extra else 0)
                if not cnt:
                    continue
                links.append(Link(id=f"l{n}", a=f"{low}:p{port}", b=f"{uppers[j]}:p{upper_next[j]}", kind=kind,
                                  bandwidth_gbps=gbps, latency_us=latency, count=cnt))
                n += 1
                port += cnt
                upper_next[j] += cnt
            offset = (offset + extra) % s

    def _leaf_spine_links(self) -> None:
        lay = self.lay
        for p in range(len(lay.pods)):
            spines = self.pod_spines[p]
            self._deal(self.pod_leaves[p], lay.leaf_ups[p], lay.down, spines, [0] * len(spines),
                       LEAF_SPINE_CABLE_LATENCY_US)

    def _spine_core_links(self) -> None:
        lay = self.lay
        half = lay.radix // 2
        for j, cores in enumerate(self.core_groups):
            spines = [self.pod_spines[p][j] for p in range(len(lay.pods))]
            ups = [lay.spine_loads[p][j] for p in range(len(lay.pods))]
            self._deal(spines, ups, half, cores, [0] * len(cores), SPINE_CORE_CABLE_LATENCY_US)
