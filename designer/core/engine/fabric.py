"""The cluster's network as arrays the collective model can route over quickly.

Levels a byte can cross, each with a capacity per direction:
  scale-up  inside a server: NVSwitch/NVLink, or PCIe (GPUs behind PCIe switches)
  NIC       the GPU's NIC (shared by `gpus_per_nic` GPUs) and its cable to a leaf
  leaf      the up-links of a leaf switch (traffic to another leaf)
  pod       the up-links from a pod's spines to the core (traffic to another pod)
A pod is a set of leaves joined by spines. Traffic between two leaves spreads over all
up-links of the source leaf (ECMP, or adaptive routing on InfiniBand) and arrives over
the up-links of the destination leaf; across pods, likewise at the spine tier. Inter-node
traffic leaves from the NIC on the destination GPU's rail (NCCL's PXN), so rings and
all-to-all stay rail-aligned.
"""
# No `from __future__ import annotations`: Fabric's field types as objects, not texts, spare dataclass
# two pattern matches per field (is it a ClassVar, an InitVar?) as the class is made, at every start.

import copy
from dataclasses import dataclass, field
from operator import attrgetter, is_

import numpy as np

from ..model.catalog import Catalog
from ..model.document import Document, column_codes
from ..model.link_columns import per_value
from ..model.network_reach import TIER_RANK
from ..problems import DesignerError, Problem
from ..units import gbps_to_bytes_per_s
from ..by_name import FieldsByName
from .constants import EngineConstants, accelerator_constants

LINK_KIND_CODE = {"infiniband": 0, "ethernet": 1, "nvlink": 2, "pcie": 3}


# init=False: its __init__ takes the fields by name (core/by_name.py), not a generated one of 46 parameters.
@dataclass(eq=False, repr=False, init=False)
class Fabric:
    """The design's network as arrays (GPUs, NICs, links, routes) that the collective model costs on."""
    node_ids: list[str]
    gpu_node: np.ndarray  # node index of each GPU (file order)
    gpu_local: np.ndarray
    gpu_nic: np.ndarray  # global NIC index of each GPU's own NIC (-1: none)
    node_nic_base: np.ndarray  # first global NIC index of each node
    node_nic_count: np.ndarray
    node_gpus: np.ndarray
    node_scale_up_Bps: np.ndarray  # per GPU per direction, after efficiency
    node_scale_up_efficiency: np.ndarray  # the efficiency in node_scale_up_Bps
    node_collective_latency_us: np.ndarray  # the collective library's extra cost per call on this node's GPUs
    node_nics_per_gpu: np.ndarray  # NICs each GPU drives at once (1, or k of a k-NICs-per-GPU server)

    def spread_over_nics(self, src, dst, nbytes, gid):
        """Flows from GPUs that own several NICs, split evenly over them (the j-th NIC of the
        sender to the j-th of the receiver, as NCCL's channels pair them)."""
        if src.size == 0 or not self.remembered("several_nics_per_gpu", (self.node_nics_per_gpu,),
                                                lambda: bool((self.node_nics_per_gpu > 1).any())):
            return src, dst, nbytes, gid
        k_src = self.node_nics_per_gpu[self.nic_node[src]]
        k_dst = self.node_nics_per_gpu[self.nic_node[dst]]
        k = np.minimum(k_src, k_dst)
        if np.all(k == 1):
            return src, dst, nbytes, gid
        reps = k
        idx = np.repeat(np.arange(src.size), reps)
        j = np.arange(idx.size) - np.repeat(np.cumsum(reps) - reps, reps)
        return src[idx] + j, dst[idx] + j, nbytes[idx] / reps[idx], gid[idx]
    node_scale_up_kind: list[str]
    node_slowdown: np.ndarray
    node_accelerator: list[str]
    nic_node: np.ndarray
    nic_cap_Bps: np.ndarray  # per direction, after efficiency and slowdown; 0 when not cabled
    nic_leaf: np.ndarray  # switch index of the leaf (-1 when not cabled)
    nic_link: np.ndarray  # link index of the NIC's cable (-1 when not cabled)
    nic_kind: list[str]
    switch_ids: list[str]
    switch_latency_us: np.ndarray
    switch_fabric: list[str]
    switch_sharp: np.ndarray
    leaf_up_Bps: np.ndarray  # per switch: capacity towards other leaves
    leaf_up_cables: np.ndarray
    leaf_up_links: None  # see uplinks_of()
    switch_pod: np.ndarray  # pod index of each leaf/spine (-1 for core or unknown)
    pod_up_Bps: np.ndarray
    pod_up_cables: np.ndarray
    pod_up_links: None  # see pod_links_of()
    link_ids: list[str]
    link_cap_Bps: np.ndarray
    has_core: bool
    gpu_slowdown: np.ndarray | None = None  # per GPU: its server's factor x its own
    # per switch (per pod): the rate of its slowest usable up-link cable, B/s (inf without up-links): a
    # hashed flow on a cable that trained below the others drains at that cable's rate
    leaf_up_slowest_Bps: np.ndarray | None = None
    pod_up_slowest_Bps: np.ndarray | None = None
    warnings: list[str] = field(default_factory=list)
    link_ids_version: object = None  # Document.link_ids_version of `link_ids` (SharedIdIndex.of)
    # scale-up island of each GPU: its NVLink domain (all GPUs of the domain's trays), else its server
    gpu_domain_index: np.ndarray | None = None
    # per node: NVLS all-reduce rate / line rate (its board's, or its NVLink domain's across switch trays)
    node_nvls_efficiency: np.ndarray | None = None
    # per node: NCCL's cap on its LL estimate inside the server, GB/s (accelerator nccl_ll_max_bus_gbps)
    node_nccl_ll_max_bus_gbps: np.ndarray | None = None
    # per node: its NICs' transport (catalog NIC_TRANSPORTS) and the latency it adds per network step, us
    node_transport: list[str] | None = None
    node_message_latency_us: np.ndarray | None = None
    # per switch: some NIC under it hashes its flows onto one path each (RoCE ECMP); None: every Ethernet one
    switch_hashes: np.ndarray | None = None
    # a job's view of the cluster (Fabric.view): the engine's key for its groups and phases; None: the cluster
    view_key: int | None = field(default=None, compare=False)
    # values worked out from this fabric's arrays, each with the arrays it was made from (remembered)
    _derived: dict = field(default_factory=dict, repr=False, compare=False)

    def __init__(self, **values):
        _FABRIC_INIT.set(self, values)

    def remembered(self, name, inputs: tuple, make):
        """`make()`, kept under `name` while `inputs` are the very objects it was made from: a
        re-rating or a rebuild makes new arrays, so a stale value is never handed back."""
        hit = self._derived.get(name)
        # (map over operator.is_: a generator per call cost more than the comparisons, ~40 calls a plan)
        if hit is not None and len(hit[0]) == len(inputs) and all(map(is_, hit[0], inputs)):
            return hit[1]
        value = make()
        self._derived[name] = (inputs, value)
        return value

    @property
    def num_gpus(self) -> int:
        return len(self.gpu_node)

    @property
    def gpu_domain(self) -> np.ndarray:
        return self.gpu_node if self.gpu_domain_index is None else self.gpu_domain_index

    def view(self, gpus: np.ndarray, key: int | None = None) -> "Fabric":
        """This fabric as one job sees it: its GPU i is `gpus[i]` of the cluster (a job's ranks run on
        its own GPUs, not on the cluster's first ones); NICs, switches and links stay the cluster's.
        `key`: the view's `view_key`, under which the engine keeps what it costed on it."""
        v = copy.copy(self)
        v.view_key = key
        v._base, v._gpus = self, np.asarray(gpus, dtype=np.int64)
        v._contention = None
        v._derived = {}  # its own: a view's rates differ from the cluster's under contention
        sync_view(v)
        return v

    def uplinks_of(self, switch: int) -> list[int]:
        links, owner = self._uplink
        return links[owner == switch].tolist()

    def pod_links_of(self, pod: int) -> list[int]:
        links, owner = self._podlink
        return links[owner == pod].tolist()


_FABRIC_INIT = FieldsByName(Fabric)  # its __init__


GPU_FIELDS = ("gpu_node", "gpu_local", "gpu_nic", "gpu_slowdown", "gpu_domain_index")
_VIEW_OWN = GPU_FIELDS + ("view_key", "_base", "_gpus", "_contention", "_synced", "_derived")


def sync_view(view: Fabric) -> bool:
    """Bring a job's view up to its cluster fabric's current ratings, with the other jobs' share of
    the up-links taken off (`_contention`: per leaf and per pod, the factor its capacity is divided
    by). True when the rates it costs with changed (its cached collective costs are then stale)."""
    base = view._base
    token = (base._rating_revision, None if view._contention is None else view._contention[2])
    if getattr(view, "_synced", None) == token:
        return False
    for name, value in vars(base).items():  # the cluster's arrays (the same objects): all but the view's own
        if name not in _VIEW_OWN:
            setattr(view, name, value)
    for name in GPU_FIELDS:
        value = getattr(base, name)
        setattr(view, name, None if value is None else value[view._gpus])
    if view._contention is not None:
        leaf_factor, pod_factor, _ = view._contention
        view.leaf_up_Bps = base.leaf_up_Bps / leaf_factor
        view.pod_up_Bps = base.pod_up_Bps / pod_factor
    view._synced = token
    return True


def _scale_up(scale_up_gbps: float, kind: str, accelerator, k: EngineConstants,
              link_efficiency: float = 0.0) -> tuple[float, str]:
    """Per-GPU scale-up rate after efficiency of a server of this scale-up (its own rate, else its
    accelerator's): the accelerator's own measured ring efficiency (its calibration's
    scale_up_efficiency) where it has one, else the engine-wide NVLink figure."""
    gbps = scale_up_gbps or accelerator.scale_up_gbps
    eff = k.pcie_efficiency if kind == "pcie" else (link_efficiency or k.nvlink_efficiency)
    return gbps_to_bytes_per_s(gbps) * eff, kind


def _gpu_domains(nodes, gpu_node: np.ndarray) -> np.ndarray | None:
    """Domain index of each GPU, numbered in file order (None: every server is its own domain).

    A server names its domain with nvlink_domain; the servers of one domain sit next to each
    other in file order (the generator and the checks see to it), so the index grows with the GPU index."""
    if not any(map(attrgetter("nvlink_domain"), nodes)):
        return None
    index: dict[str, int] = {}
    node_domain = np.empty(len(nodes), dtype=np.int64)
    for i, n in enumerate(nodes):
        key = n.nvlink_domain or f"\0server {i}"
        node_domain[i] = index.setdefault(key, len(index))
    return node_domain[gpu_node]


def node_transports(nodes, catalog: Catalog) -> list[str]:
    """Each server's NIC transport: its catalog NIC's (nic_model), else its NIC kind's (InfiniBand, or
    RoCE on Ethernet)."""
    cache: dict[tuple, str] = {}
    out = []
    for n in nodes:
        key = (n.nic_model, n.nic_kind)
        hit = cache.get(key)
        if hit is None:
            name = catalog.resolve("nics", n.nic_model) if n.nic_model else None
            hit = cache[key] = (catalog.nics[name].transport if name else
                                "infiniband" if n.nic_kind == "infiniband" else "roce")
        out.append(hit)
    return out


def _hashing_switches(switches, catalog: Catalog, transport: list[str], nic_node, nic_leaf) -> np.ndarray:
    """Per switch: some NIC under it has its flows put on one up-link each (ECMP's hash, or InfiniBand's
    static routing tables). A RoCE NIC always does, unless the fabric schedules cells itself; a Spectrum-X
    SuperNIC does unless its leaf routes adaptively (Spectrum-4: the catalog model's routing); an InfiniBand
    NIC does under a leaf with static routing; EFA's SRD and Pollara spray their packets themselves."""
    hashes = np.zeros(len(switches), dtype=bool)
    if not len(nic_node):
        return hashes
    # each test made once per distinct transport and routing, then gathered per NIC
    switch_keys = _codes(list(map(attrgetter("routing", "model", "fabric"), switches)))
    routing = np.array([_routing(key, catalog) for key in switch_keys.values] + [""], dtype=object)  # "": no leaf
    transports = _codes(transport)
    kind = transports.values[:, None]
    table = (((kind == "roce") | ((kind == "spectrum-x") & (routing != "adaptive"))
              | ((kind == "infiniband") & (routing == "static"))) & (routing != "scheduled"))
    cabled = nic_leaf >= 0
    leaf_routing = np.full(len(nic_leaf), len(routing) - 1, dtype=np.int64)
    leaf_routing[cabled] = switch_keys.place[nic_leaf[cabled]]
    hashed = table[transports.place[nic_node], leaf_routing]
    hashes[nic_leaf[hashed & cabled]] = True
    return hashes


def _routing(switch: tuple, catalog: Catalog) -> str:
    """A switch's routing from its (routing, model, fabric): its own `routing`, else its catalog model's;
    InfiniBand adaptive; an Ethernet switch of no known model ECMP."""
    routing, model, switch_fabric = switch
    if routing:
        return routing
    name = catalog.resolve("switches", model) if model else None
    if name is not None:
        return catalog.switches[name].routing
    return "adaptive" if switch_fabric == "infiniband" else "ecmp"


class _Codes:
    place: np.ndarray  # per item: its value's place in `values`
    values: np.ndarray  # the distinct values (objects), in the order they come

    __slots__ = ("place", "values")

    def __init__(self, place: np.ndarray, values: np.ndarray) -> None:
        self.place = place
        self.values = values


def _codes(items: list) -> _Codes:
    """`items` as places among their distinct (hashable) values."""
    place, distinct = column_codes(items)
    values = np.empty(len(distinct), dtype=object)
    for k, value in enumerate(distinct):  # (one by one: a tuple value stays one object)
        values[k] = value
    return _Codes(place, values)


def _spans_servers(nodes) -> np.ndarray:
    """Per node: whether its NVLink domain holds other servers too (switch trays join them, as in NVL72)."""
    if not any(map(attrgetter("nvlink_domain"), nodes)):  # (most designs: one look per server)
        return np.zeros(len(nodes), dtype=bool)
    servers: dict[str, int] = {}
    for n in nodes:
        if n.nvlink_domain:
            servers[n.nvlink_domain] = servers.get(n.nvlink_domain, 0) + 1
    return np.array([servers.get(n.nvlink_domain, 0) > 1 if n.nvlink_domain else False for n in nodes], dtype=bool)


class LinkColumns:
    """The fields of every link the fabric reads, as arrays of its own (Document.link_array and
    link_codes: of a design held still, the arrays the check made already, copied where a re-rating
    writes into them)."""

    __slots__ = ("ids", "kind", "bandwidth_gbps", "count", "slowdown")

    def __init__(self, doc: Document):
        self.ids = doc.link_list("id")
        self.kind = per_value(doc, "kind", LINK_KIND_CODE.__getitem__, np.int8)
        self.bandwidth_gbps = doc.link_array("bandwidth_gbps", float).copy()
        self.count = doc.link_array("count", np.int64)
        self.slowdown = doc.link_array("slowdown", float).copy()


def build_fabric(doc: Document, catalog: Catalog, k: EngineConstants) -> Fabric:
    """The design's fabric: its servers' GPUs and NICs, their scale-up rates, the NIC cables and
    the switches' up-links, rated (refresh_capacities)."""
    nodes, switches = doc.nodes, doc.switches
    links = LinkColumns(doc)
    # (device kind: 0 none, 1 node, 2 switch; device index; NIC number or -1) per end: the design's
    # parse, which the check has usually made already (model/endpoints.py)
    a, b = doc.link_ends.sides(doc)
    layout = _gpu_layout(nodes)
    # NVLink switch trays (fabric "nvlink") join the GPUs of a domain; the domain's bandwidth is the
    # servers' scale-up figure (gpu_domain). They are no part of the scale-out network: no NIC cable,
    # up-link, pod, latency or SHARP of theirs may enter it, so a design evaluates the same with or
    # without its trays. They keep their index (switch positions match spec.switches).
    tray = np.array([s.fabric == "nvlink" for s in switches], dtype=bool)
    on_tray = _on_trays(tray, a, b)
    network = (links.kind <= 1) & ~on_tray
    nic_leaf, nic_link = _nic_cables(a, b, links.count, network, layout["node_nic_base"], layout["node_nic_count"])
    transport = node_transports(nodes, catalog)
    srd = np.array([t == "srd" for t in transport], dtype=bool)
    fabric = Fabric(
        node_ids=list(map(attrgetter("id"), nodes)), **layout,
        **_scale_up_rates(nodes, catalog, doc.spec.calibration, k),
        node_slowdown=np.zeros(0), node_accelerator=list(map(attrgetter("accelerator"), nodes)),
        nic_cap_Bps=np.zeros(len(nic_leaf)), nic_leaf=nic_leaf, nic_link=nic_link, nic_kind=[],
        switch_ids=[s.id for s in switches],
        switch_latency_us=np.where(tray, 0.0, np.array([s.latency_us for s in switches], dtype=float)),  # trays: 0
        switch_fabric=[s.fabric for s in switches],
        switch_sharp=np.array([s.sharp for s in switches], dtype=bool) & ~tray,
        leaf_up_Bps=np.zeros(len(switches)), leaf_up_cables=np.zeros(len(switches), dtype=np.int64),
        leaf_up_links=None, switch_pod=np.full(len(switches), -1, dtype=np.int32), pod_up_Bps=np.zeros(0),
        pod_up_cables=np.zeros(0, dtype=np.int64), pod_up_links=None, link_ids=links.ids,
        link_cap_Bps=np.zeros(0), has_core=False,  # (this and node_slowdown: refresh_capacities rates them)
        node_transport=transport, node_message_latency_us=np.where(srd, k.srd_message_latency_us, 0.0),
    )
    fabric.gpu_domain_index = _gpu_domains(nodes, fabric.gpu_node)
    fabric.link_ids_version = doc.link_ids_version  # the version of the design's link ids it read
    fabric.gpu_up = gpus_up(doc, fabric)  # servers (or some of their GPUs) down: no job gets them
    fabric.switch_hashes = _hashing_switches(switches, catalog, transport, fabric.nic_node, nic_leaf)
    # the NIC's own efficiency where its transport has one (SRD), else its cable kind's
    eff_by_kind = {"infiniband": k.infiniband_nic_efficiency, "ethernet": k.ethernet_nic_efficiency}
    link_eff = np.array([eff_by_kind["infiniband"], eff_by_kind["ethernet"], 1.0, 1.0])[links.kind]
    fabric._nic_line = (np.array(list(map(attrgetter("nic_gbps"), nodes)), dtype=float),
                        np.array(list(map(attrgetter("gpudirect_rdma"), nodes)), dtype=bool),
                        np.array([s.port_gbps for s in switches], dtype=float) if switches else np.zeros(0),
                        link_eff, np.where(srd, k.srd_nic_efficiency, 0.0))
    fabric._host_bounce = k.host_bounce_efficiency
    _switch_routes(fabric, doc, tray, on_tray, a, b, links.count)
    fabric._link_arrays = (links.bandwidth_gbps, links.count.astype(float), links.slowdown)
    fabric._link_ends = (a.kind, a.index, b.kind, b.index)
    refresh_capacities(fabric, doc, arrays=fabric._link_arrays)
    return fabric


def _gpu_layout(nodes) -> dict:
    """The Fabric's fields of where GPUs and NICs sit: each GPU's server, its place in it and its own
    NIC; each server's GPUs and NICs; each NIC's server."""
    gpus = np.array(list(map(attrgetter("accelerator_count"), nodes)), dtype=np.int64)
    gpu_node = np.repeat(np.arange(len(nodes)), gpus)
    starts = np.concatenate([[0], np.cumsum(gpus)[:-1]]) if len(nodes) else np.zeros(0, dtype=np.int64)
    gpu_local = np.arange(len(gpu_node)) - np.repeat(starts, gpus)

    nic_counts = np.array(list(map(attrgetter("nic_count"), nodes)), dtype=np.int64)
    nic_base = np.concatenate([[0], np.cumsum(nic_counts)[:-1]]) if len(nodes) else np.zeros(0, dtype=np.int64)
    per_nic = np.array(list(map(attrgetter("gpus_per_nic"), nodes)), dtype=np.int64)
    # Several NICs per GPU (p5en: 16 x 200G for 8 GPUs): GPU l owns NICs l*k .. l*k+k-1 and NCCL
    # spreads its traffic over all k (nics_per_gpu); one NIC per GPU or fewer: k = 1.
    nics_per_gpu = np.where((per_nic == 1) & (nic_counts >= 2 * np.maximum(gpus, 1)),
                            nic_counts // np.maximum(gpus, 1), 1)
    local_nic = gpu_local // per_nic[gpu_node] * nics_per_gpu[gpu_node] if len(gpu_node) else gpu_local
    # an imported NCCL topology names each GPU's nearest NIC (a server's GPUs are one run of gpu_node)
    for i, affinity in enumerate(map(attrgetter("gpu_nic_affinity"), nodes)):
        if affinity and len(affinity) == gpus[i] and nics_per_gpu[i] == 1:
            local_nic[starts[i]: starts[i] + gpus[i]] = np.asarray(affinity, dtype=np.int64)
    has_nic = local_nic < nic_counts[gpu_node]
    gpu_nic = np.where(has_nic, nic_base[gpu_node] + np.minimum(local_nic, np.maximum(nic_counts[gpu_node] - 1, 0)), -1)
    return dict(gpu_node=gpu_node, gpu_local=gpu_local, gpu_nic=gpu_nic, node_nic_base=nic_base,
                node_nic_count=nic_counts, node_gpus=gpus, node_nics_per_gpu=nics_per_gpu,
                nic_node=np.repeat(np.arange(len(nodes)), nic_counts))


def _scale_up_rates(nodes, catalog: Catalog, calibration: dict, k: EngineConstants) -> dict:
    """The Fabric's fields of each server's scale-up network: its rate per GPU after efficiency, that
    efficiency, its kind, the collective library's fixed cost per call, NVLS's efficiency and NCCL's
    LL cap, from the server's accelerator (its catalog entry and calibration)."""
    # servers alike in what sets their rates share one working-out (a large design has a few kinds)
    node_place, alike = column_codes(list(map(attrgetter("accelerator", "scale_up_gbps", "scale_up"), nodes)))
    accel_cache: dict[str, tuple] = {}
    rows = []
    for accelerator, scale_up_gbps, scale_up in alike:
        hit = accel_cache.get(accelerator)
        if hit is None:
            acc = catalog.accelerator(accelerator)
            hit = accel_cache[accelerator] = (acc, accelerator_constants(acc, calibration, catalog))
        acc, ac = hit
        bw, kind = _scale_up(scale_up_gbps, scale_up, acc, k, ac.scale_up_efficiency)
        eff = k.pcie_efficiency if kind == "pcie" else (ac.scale_up_efficiency or k.nvlink_efficiency)
        nvls = ac.nvls_link_efficiency or k.nvls_efficiency
        rows.append((bw, eff, ac.collective_latency_us, nvls, ac.nvls_domain_efficiency or nvls,
                     ac.nccl_ll_max_bus_gbps))
    table = np.array(rows, dtype=float).reshape(len(rows), 6)[node_place]
    node_bw, node_eff, node_latency, node_nvls, node_nvls_domain, node_ll_cap = table.T.copy()
    kinds = [scale_up for _, _, scale_up in alike]
    node_kind = list(map(kinds.__getitem__, node_place.tolist()))
    return dict(node_scale_up_Bps=node_bw, node_scale_up_efficiency=node_eff, node_collective_latency_us=node_latency,
                node_scale_up_kind=node_kind, node_nccl_ll_max_bus_gbps=node_ll_cap,
                node_nvls_efficiency=np.where(_spans_servers(nodes), node_nvls_domain, node_nvls))


def _on_trays(tray: np.ndarray, a, b) -> np.ndarray:
    """Per link: whether it ends on an NVLink switch tray (`tray`, per switch)."""
    if not tray.any():
        return np.zeros(len(a.kind), dtype=bool)
    return (((a.kind == 2) & tray[np.where(a.kind == 2, a.index, 0)])
            | ((b.kind == 2) & tray[np.where(b.kind == 2, b.index, 0)]))


def _nic_cables(a, b, count: np.ndarray, network: np.ndarray, nic_base: np.ndarray,
                nic_counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(leaf switch, link) of each NIC (-1: not cabled): the network links with a server on one end and
    a switch on the other. A cable naming its NIC takes that one; bundles and port-less cables take the
    server's next free NICs, in file order."""
    swap = (a.kind == 2) & (b.kind == 1)
    cables = np.flatnonzero(network & (((a.kind == 1) & (b.kind == 2)) | swap))  # only these read further
    swap = swap[cables]
    a_index, b_index = a.index[cables], b.index[cables]
    n_idx = np.where(swap, b_index, a_index)
    n_port = np.where(swap, b.nic[cables], a.nic[cables])
    s_idx = np.where(swap, a_index, b_index)
    total_nics = int(nic_counts.sum())
    nic_leaf = np.full(total_nics, -1, dtype=np.int32)  # 32-bit: read into every flow's route
    nic_link = np.full(total_nics, -1, dtype=np.int64)
    simple = (count[cables] == 1) & (n_port >= 0) & (n_port < nic_counts[n_idx])
    g = nic_base[n_idx[simple]] + n_port[simple]
    nic_leaf[g] = s_idx[simple]
    nic_link[g] = cables[simple]
    for j in np.flatnonzero(~simple):
        l, ni, si = int(cables[j]), int(n_idx[j]), int(s_idx[j])
        for c in range(int(count[l])):
            if n_port[j] >= 0:
                local = int(n_port[j]) + c
            else:
                free = np.flatnonzero(nic_link[nic_base[ni]: nic_base[ni] + nic_counts[ni]] < 0)
                if not free.size:
                    break
                local = int(free[0])
            if local >= nic_counts[ni]:
                break
            nic_leaf[nic_base[ni] + local] = si
            nic_link[nic_base[ni] + local] = l
    return nic_leaf, nic_link


def _switch_routes(fabric: Fabric, doc: Document, tray: np.ndarray, on_tray: np.ndarray, a, b,
                   count: np.ndarray) -> None:
    """The switch-to-switch links' roles in the routes (network_reach.switch_links, the design check's
    rules too): each leaf's up-links, the pods, each pod's links to the core."""
    switches = doc.switches
    n_sw = len(switches)
    tier = np.array([TIER_RANK.get(s.tier, 0) for s in switches], dtype=np.int64)
    ss = np.flatnonzero((a.kind == 2) & (b.kind == 2) & (a.index != b.index) & ~on_tray)
    is_leaf = np.zeros(n_sw, dtype=bool)
    is_leaf[fabric.nic_leaf[fabric.nic_leaf >= 0]] = True
    routes = doc.switch_links.of(tier, is_leaf, tray, ss, a.index[ss], b.index[ss])  # (the check's, usually)
    lower, to_core = routes.lower, routes.to_core
    fabric._uplink = (np.concatenate([ss[routes.uplink], ss[routes.upper_uplink]]),
                      np.concatenate([lower[routes.uplink], routes.upper[routes.upper_uplink]]))
    switch_pod = fabric.switch_pod = routes.pod
    n_pods = int(switch_pod.max(initial=-1)) + 1  # numbered 0 .. n-1 (switch_links)
    fabric._podlink = (ss[to_core], switch_pod[lower[to_core]])
    fabric.has_core = bool(np.any(to_core))
    fabric.leaf_up_cables = np.bincount(fabric._uplink[1], count[fabric._uplink[0]], minlength=n_sw).astype(np.int64)
    fabric.pod_up_cables = np.bincount(fabric._podlink[1], count[fabric._podlink[0]], minlength=n_pods).astype(np.int64)


def refresh_capacities(fabric: Fabric, doc: Document, changed_links: list[int] | None = None,
                       arrays: tuple | None = None) -> None:
    """Recompute every capacity from the links' (cables x rate / slowdown) and the servers'
    slowdowns: after such a change nothing else needs rebuilding. `changed_links` limits
    the re-reading of the document to those links."""
    links = doc.links
    n = len(links)
    if arrays is None:
        bw, count, slowdown = fabric._link_arrays
        todo = range(n) if changed_links is None else changed_links
        if changed_links is None:
            bw[:] = doc.link_array("bandwidth_gbps", float)
            count[:] = doc.link_array("count", float)
            slowdown[:] = doc.link_array("slowdown", float)
        else:
            for i in todo:
                bw[i], count[i], slowdown[i] = links[i].bandwidth_gbps, links[i].count, links[i].slowdown
    else:
        bw, count, slowdown = arrays
    usable = _usable_links(fabric, doc, changed_links if arrays is None else None)
    link_cap = bw * 1e9 / 8 * count / slowdown * usable
    cables_up = count * usable  # per link: its cables that carry traffic
    fabric._rating_revision = getattr(fabric, "_rating_revision", 0) + 1
    fabric.node_slowdown = np.fromiter(map(attrgetter("slowdown"), doc.nodes), float, len(doc.nodes))
    fabric.gpu_slowdown = _gpu_slowdowns(doc.nodes, fabric.node_slowdown[fabric.gpu_node])
    fabric.link_cap_Bps = link_cap
    node_gbps, node_gdr, sw_gbps, link_eff, node_nic_eff = fabric._nic_line
    has = fabric.nic_link >= 0
    cap = np.zeros(len(fabric.nic_link))
    li = fabric.nic_link[has]
    node = fabric.nic_node[has]
    leaf = fabric.nic_leaf[has]
    line = np.minimum(np.minimum(bw[li], node_gbps[node]), sw_gbps[leaf] if len(sw_gbps) else np.inf)
    bounce = np.where(node_gdr[node], 1.0, fabric._host_bounce)
    eff = np.where(node_nic_eff[node] > 0, node_nic_eff[node], link_eff[li])
    cap[has] = line * 1e9 / 8 * eff * bounce / slowdown[li] * usable[li]
    fabric.nic_cap_Bps = cap
    up_links, up_owner = fabric._uplink
    fabric.leaf_up_Bps = np.bincount(up_owner, link_cap[up_links], minlength=len(fabric.switch_ids))
    # ECMP spreads over the cables that are up: a leaf with a dead up-link carries its traffic on the rest
    fabric.leaf_up_cables = np.bincount(up_owner, cables_up[up_links], minlength=len(fabric.switch_ids)
                                        ).astype(np.int64)
    pod_links, pod_owner = fabric._podlink
    fabric.pod_up_cables = np.bincount(pod_owner, cables_up[pod_links], minlength=len(fabric.pod_up_cables)
                                       ).astype(np.int64)
    fabric.pod_up_Bps = np.bincount(pod_owner, link_cap[pod_links], minlength=int(fabric.switch_pod.max(initial=-1)) + 1)
    per_cable = np.divide(link_cap, np.maximum(count, 1))
    fabric.leaf_up_slowest_Bps = _slowest_cable(per_cable, usable, up_links, up_owner, len(fabric.switch_ids))
    fabric.pod_up_slowest_Bps = _slowest_cable(per_cable, usable, pod_links, pod_owner, len(fabric.pod_up_Bps))


def _gpu_slowdowns(nodes, gpu_slow: np.ndarray) -> np.ndarray:
    """Per GPU: its server's slowdown (`gpu_slow`, a new array this fills) times its own (gpu_slowdown)."""
    if not any(map(attrgetter("gpu_slowdown"), nodes)):  # (most designs: one look per server)
        return gpu_slow
    base = 0
    for x in nodes:
        if x.gpu_slowdown:
            for i, factor in enumerate(x.gpu_slowdown[: x.accelerator_count]):
                gpu_slow[base + i] *= max(1.0, float(factor))
        base += x.accelerator_count
    return gpu_slow


def _slowest_cable(per_cable: np.ndarray, usable: np.ndarray, links: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    """Per owner (leaf or pod): the rate of its slowest usable up-link cable (inf where it has none)."""
    slowest = np.full(n, np.inf)
    up = usable[links] > 0
    np.minimum.at(slowest, owner[up], per_cable[links[up]])
    return slowest


def gpus_up(doc: Document, fabric: "Fabric") -> np.ndarray:
    """True for each GPU whose server is up and computes (a storage, login or service host gets no
    job) and that is not among its server's `gpus_down`."""
    up = np.ones(fabric.num_gpus, dtype=bool)
    base = 0
    for node in doc.nodes:
        n = node.accelerator_count
        if node.state == "down" or node.role != "compute":
            up[base: base + n] = False
        elif node.gpus_down:
            up[base + max(0, n - node.gpus_down): base + n] = False
        base += n
    return up


def _usable_links(fabric: Fabric, doc: Document, changed_links: list[int] | None) -> np.ndarray:
    """1.0 for a link that carries traffic, 0.0 for one that is down or ends on a switch that is down."""
    links = doc.links
    if changed_links is None:
        fabric._link_up = per_value(doc, "state", "down".__ne__)
    else:
        for i in changed_links:
            fabric._link_up[i] = links[i].state != "down"
    switch_down = np.fromiter((s.state == "down" for s in doc.switches), bool, len(doc.switches))
    usable = fabric._link_up.copy()
    if switch_down.any():
        a_kind, a_idx, b_kind, b_idx = fabric._link_ends
        usable &= ~((a_kind == 2) & switch_down[np.where(a_kind == 2, a_idx, 0)])
        usable &= ~((b_kind == 2) & switch_down[np.where(b_kind == 2, b_idx, 0)])
    fabric.switch_down = switch_down
    return usable.astype(float)


def down_links_of(fabric: Fabric, links: list[int]) -> list[str]:
    """The ids of those links that are down (or end on a switch that is down)."""
    return [fabric.link_ids[i] for i in links if fabric.link_cap_Bps[i] <= 0]


def require_routes(fabric: Fabric, gpus: np.ndarray, what: str) -> None:
    """A clear error when GPUs that must talk have no NIC or no cable."""
    nics = fabric.gpu_nic[gpus]
    bad = np.flatnonzero((nics < 0) | (fabric.nic_cap_Bps[np.maximum(nics, 0)] <= 0))
    if bad.size:
        g = int(gpus[bad[0]])
        node = fabric.node_ids[fabric.gpu_node[g]]
        link = int(fabric.nic_link[nics[bad[0]]]) if nics[bad[0]] >= 0 else -1
        if link >= 0:  # cabled, but the cable or its leaf is down: no other path (a NIC has one cable)
            leaf = int(fabric.nic_leaf[nics[bad[0]]])
            leaf_down = leaf >= 0 and bool(getattr(fabric, "switch_down", np.zeros(0))[leaf:leaf + 1].any())
            cause = (f"its leaf {fabric.switch_ids[leaf]} is down" if leaf_down
                     else f"its cable {fabric.link_ids[link]} is down")
            raise DesignerError([Problem(
                f"{what} needs the network, but GPU {fabric.gpu_local[g]} of {node} is cut off: {cause} and "
                "its NIC has no other path", "spec.links", element=fabric.link_ids[link],
                fix=f"mark {fabric.switch_ids[leaf] if leaf_down else fabric.link_ids[link]} up, or place the job "
                    f"on servers that are reachable")])
        raise DesignerError([Problem(
            f"{what} needs the network, but GPU {fabric.gpu_local[g]} of {node} has no connected NIC",
            "spec.links", element=node, fix=f"connect the NICs of {node} to a leaf switch")])
