"""`designer generate fat-tree`: the generated fabric is wired the way a network engineer expects."""
from __future__ import annotations

import math
from collections import Counter, defaultdict

import networkx as nx
import pytest

from designer.core.generate import FatTreeError, generate_fat_tree, plan_fat_tree
from designer.core.generate import fat_tree_geometry
from designer.core.io import load_document, save_document
from designer.core.model.catalog import Accelerator, Catalog, Nic, SwitchModel
from designer.core.model.elements import port_index, split_endpoint


def _accelerator(name, aliases, scale_up="nvswitch", max_per_node=8):
    return Accelerator(name=name, vendor="test", aliases=aliases, peak_tflops={"bf16": 1.0}, best_gemm_tflops=1.0,
                       hbm_gib=80.0, hbm_tbps=3.0, scale_up=scale_up, scale_up_gbps=3600.0,
                       max_per_node=max_per_node, tdp_w=700.0)


@pytest.fixture(scope="module")
def catalog():
    """A small catalog of our own, so that the tests do not depend on the shipped figures."""
    return Catalog(
        accelerators={
            "H100-SXM5-80GB": _accelerator("H100-SXM5-80GB", ("H100",)),
            "A100-SXM4-80GB": _accelerator("A100-SXM4-80GB", ("A100",)),
            "MI300X": _accelerator("MI300X", (), scale_up="infinity-fabric"),
            "GB200": _accelerator("GB200", (), max_per_node=4),
        },
        nics={"CX7-NDR": Nic("CX7-NDR", "infiniband", 400.0, ())},
        switches={"QM9700": SwitchModel("QM9700", "infiniband", 64, 400.0, 0.2, True, ())},
        models={},
    )


@pytest.fixture(scope="module")
def bare_catalog():
    """Accelerators only: no NIC or switch the generator could take figures from."""
    return Catalog(accelerators={"H100-SXM5-80GB": _accelerator("H100-SXM5-80GB", ("H100",))},
                   nics={}, switches={}, models={})


def gen(catalog, nodes, **kw):
    kw.setdefault("gpu", "H100")
    return generate_fat_tree(nodes, catalog=catalog, **kw)


class Wiring:
    """What the links of a document plug into, port by port."""

    def __init__(self, doc):
        self.doc = doc
        self.switch = {s.id: s for s in doc.switches}
        self.node = {n.id: n for n in doc.nodes}
        self.port_users: Counter = Counter()  # (switch, port index) -> cables
        self.nic_users: Counter = Counter()  # (node, nic) -> links
        self.nic_leaf: dict[tuple[str, str], str] = {}
        self.down = Counter()  # switch -> cables towards the servers
        self.up = Counter()  # switch -> cables towards the top
        self.cables = Counter()  # switch -> all cables
        self.pairs = defaultdict(set)  # lower switch -> upper switches it reaches
        for link in doc.links:
            a_dev, a_port = split_endpoint(link.a)
            b_dev, b_port = split_endpoint(link.b)
            for dev, port in ((a_dev, a_port), (b_dev, b_port)):
                if dev in self.switch:
                    start = port_index(port)
                    for k in range(start, start + link.count):
                        self.port_users[dev, k] += 1
                    self.cables[dev] += link.count
            if a_dev in self.node:
                assert link.count == 1
                self.nic_users[a_dev, a_port] += 1
                self.nic_leaf[a_dev, a_port] = b_dev
                self.down[b_dev] += 1
            else:  # a is the lower switch, b the upper one
                self.up[a_dev] += link.count
                self.down[b_dev] += link.count
                self.pairs[a_dev].add(b_dev)

    def tier(self, name):
        return [s for s in self.doc.switches if s.tier == name]


def assert_well_formed(doc):
    w = Wiring(doc)
    # every NIC connected exactly once
    expected = {(n.id, f"nic{k}") for n in doc.nodes for k in range(n.nic_count)}
    assert set(w.nic_users) == expected
    assert set(w.nic_users.values()) == {1}
    # no switch port used twice, none beyond the radix
    assert all(v == 1 for v in w.port_users.values())
    for (sw, k) in w.port_users:
        assert 0 <= k < w.switch[sw].radix, (sw, k)
    for sw in doc.switches:
        assert w.cables[sw.id] <= sw.radix
    # unique ids everywhere
    for items in (doc.racks, doc.nodes, doc.switches, doc.links):
        ids = [e.id for e in items]
        assert len(ids) == len(set(ids))
    # every server and switch sits in an existing rack, inside it, without overlap
    racks = {r.id: r for r in doc.racks}
    spans = defaultdict(list)
    for e in list(doc.nodes) + list(doc.switches):
        rack = racks[e.rack]
        assert 0 <= e.slot and e.slot + e.height_units <= rack.units
        spans[e.rack].append((e.slot, e.slot + e.height_units))
    for s in spans.values():
        s.sort()
        assert all(hi1 <= lo2 for (_, hi1), (lo2, _) in zip(s, s[1:]))
    return w


def device_graph(doc):
    g = nx.Graph()
    g.add_nodes_from(n.id for n in doc.nodes)
    g.add_nodes_from(s.id for s in doc.switches)
    for link in doc.links:
        g.add_edge(split_endpoint(link.a)[0], split_endpoint(link.b)[0])
    return g


# ---- the shape --------------------------------------------------------------------------------

@pytest.mark.parametrize("nodes,kw", [
    (4, dict(switch_radix=40, nic_gbps=200)),
    (37, {}),
    (128, {}),
    (100, dict(rail_optimized=False)),
    (384, dict(switch_radix=40, nic_gbps=200)),  # Selene-like: 3 tiers
    (50, dict(tiers=3, switch_radix=16)),
    (61, dict(tiers=3, switch_radix=32, rail_optimized=False, nics_per_node=4)),
])
def test_non_blocking_up_capacity_equals_down_capacity(catalog, nodes, kw):
    doc = gen(catalog, nodes, **kw)
    w = assert_well_formed(doc)
    for leaf in w.tier("leaf"):
        assert w.up[leaf.id] == w.down[leaf.id] > 0, leaf.id
    top = "core" if w.tier("core") else "spine"
    for spine in w.tier("spine"):
        if top == "core":
            assert w.up[spine.id] == w.down[spine.id] > 0, spine.id
        else:  # the top tier uses its ports downward only
            assert w.up[spine.id] == 0 and w.down[spine.id] > 0
    for core in w.tier("core"):
        assert w.up[core.id] == 0 and w.down[core.id] > 0


@pytest.mark.parametrize("ratio", [2, 3, 1.5])
@pytest.mark.parametrize("nodes,kw", [(100, {}), (300, dict(tiers=3)), (90, dict(rail_optimized=False))])
def test_oversubscribed_leaf_sends_ceil_down_over_r_up(catalog, nodes, kw, ratio):
    doc = gen(catalog, nodes, oversubscription=ratio, **kw)
    w = assert_well_formed(doc)
    radix = 64
    for leaf in w.tier("leaf"):
        assert w.down[leaf.id] <= math.floor(radix * ratio / (ratio + 1))
        assert w.up[leaf.id] == math.ceil(w.down[leaf.id] / ratio), leaf.id
    for spine in w.tier("spine"):
        if w.tier("core"):
            assert w.up[spine.id] == w.down[spine.id]


def test_leaf_ports_follow_the_down_up_split(catalog):
    # radix 64 at 2:1: 42 ports down, 22 up
    doc = gen(catalog, 100, oversubscription=2)
    w = Wiring(doc)
    for link in doc.links:
        a_dev, a_port = split_endpoint(link.a)
        b_dev, b_port = split_endpoint(link.b)
        if a_dev in w.node:
            assert port_index(b_port) < 42
        elif w.switch[a_dev].tier == "leaf":
            assert port_index(a_port) >= 42


def test_exact_server_and_gpu_counts(catalog):
    doc = gen(catalog, 77, gpus_per_node=4, nics_per_node=4)
    counts = doc.counts()
    assert counts["nodes"] == 77 and counts["gpus"] == 77 * 4
    assert all(n.accelerator == "H100-SXM5-80GB" and n.accelerator_count == 4 and n.nic_count == 4
               for n in doc.nodes)
    assert [n.id for n in doc.nodes] == [f"node{i}" for i in range(77)]


def test_endpoints_spread_evenly_over_leaves(catalog):
    for nodes, kw in ((37, {}), (300, dict(tiers=3)), (90, dict(rail_optimized=False)), (1000, {})):
        w = Wiring(gen(catalog, nodes, **kw))
        sizes = [w.down[leaf.id] for leaf in w.tier("leaf")]
        step = 1 if kw.get("rail_optimized", True) else 8  # whole servers per leaf when not rail-optimized
        assert max(sizes) - min(sizes) <= step, (nodes, Counter(sizes))


def test_rail_optimized_puts_nic_i_on_a_leaf_of_rail_i(catalog):
    for nodes, kw in ((37, {}), (300, dict(tiers=3)), (384, dict(switch_radix=40, nic_gbps=200))):
        doc = gen(catalog, nodes, **kw)
        w = Wiring(doc)
        for (node, nic), leaf in w.nic_leaf.items():
            assert w.switch[leaf].tier == "leaf"
            assert w.switch[leaf].rail == int(nic[3:])
        # and a leaf serves a single rail
        assert all(s.rail is None for s in doc.switches if s.tier != "leaf")


def test_not_rail_optimized_keeps_a_servers_nics_on_one_leaf(catalog):
    doc = gen(catalog, 100, rail_optimized=False)
    w = assert_well_formed(doc)
    leaves_of = defaultdict(set)
    for (node, _), leaf in w.nic_leaf.items():
        leaves_of[node].add(leaf)
    assert len(leaves_of) == 100 and all(len(v) == 1 for v in leaves_of.values())
    assert all(s.rail is None for s in doc.switches)


def test_two_tiers_every_leaf_reaches_every_spine_and_spines_stay_balanced(catalog):
    for nodes, kw in ((128, {}), (37, {}), (100, dict(oversubscription=2)), (4, dict(switch_radix=40))):
        doc = gen(catalog, nodes, **kw)
        w = Wiring(doc)
        spines = {s.id for s in w.tier("spine")}
        for leaf in w.tier("leaf"):
            assert w.pairs[leaf.id] == spines or len(w.pairs[leaf.id]) == w.up[leaf.id]
        loads = [w.down[s] for s in spines]
        assert max(loads) - min(loads) <= 1
        # the fewest spines: one less would overflow a spine
        total = sum(loads)
        radix = kw.get("switch_radix", 64)
        assert math.ceil(total / radix) == len(spines)


def test_bundles_use_consecutive_ports_and_count_over_one(catalog):
    # 4 servers, radix 40: 8 leaves with 4 up-links each, all to one spine -> bundles of 4
    doc = gen(catalog, 4, switch_radix=40, nic_gbps=200)
    bundles = [link for link in doc.links if split_endpoint(link.a)[0].startswith("leaf")]
    assert len(bundles) == 8 and all(link.count == 4 for link in bundles)
    assert sorted(port_index(split_endpoint(link.b)[1]) for link in bundles) == list(range(0, 32, 4))


def test_three_tiers_pods_and_core_groups(catalog):
    doc = gen(catalog, 384, switch_radix=40, nic_gbps=200)
    w = assert_well_formed(doc)
    pods = sorted({s.pod for s in doc.switches if s.tier != "core"})
    assert pods == list(range(10))
    assert all(s.pod is None for s in w.tier("core"))
    # all rails of a server's group are in the same pod (scalable unit)
    node_pod = defaultdict(set)
    for (node, _), leaf in w.nic_leaf.items():
        node_pod[node].add(w.switch[leaf].pod)
    assert all(len(p) == 1 for p in node_pod.values())
    # leaves reach every spine of their own pod only
    spines_of_pod = defaultdict(set)
    for s in w.tier("spine"):
        spines_of_pod[s.pod].add(s.id)
    for leaf in w.tier("leaf"):
        assert w.pairs[leaf.id] == spines_of_pod[leaf.pod]
    # spine j of every pod reaches exactly the cores of group j; each core is in one group
    per_pod = len(spines_of_pod[0])
    group_of_core = {}
    for s in w.tier("spine"):
        j = int(s.id[5:]) % per_pod
        for core in w.pairs[s.id]:
            assert group_of_core.setdefault(core, j) == j
    assert len(group_of_core) == len(w.tier("core"))
    groups = defaultdict(set)
    for core, j in group_of_core.items():
        groups[j].add(core)
    for s in w.tier("spine"):
        assert w.pairs[s.id] == groups[int(s.id[5:]) % per_pod]


def test_devices_form_one_connected_fabric(catalog):
    for nodes, kw in ((1, {}), (4, dict(switch_radix=40)), (3, dict(rail_optimized=False)), (128, {}),
                      (300, dict(tiers=3)), (100, dict(rail_optimized=False, oversubscription=3))):
        doc = gen(catalog, nodes, **kw)
        g = device_graph(doc)
        assert g.number_of_nodes() == len(doc.nodes) + len(doc.switches)
        assert nx.is_connected(g), (nodes, kw)


def test_one_server(catalog):
    doc = gen(catalog, 1)
    assert_well_formed(doc)
    assert doc.counts()["nodes"] == 1 and doc.counts()["gpus"] == 8
    single = gen(catalog, 1, rail_optimized=False)
    assert [s.tier for s in single.switches] == ["leaf"] and len(single.links) == 8


# ---- choosing the tiers -------------------------------------------------------------------------

def test_automatic_tiers(catalog):
    assert {s.tier for s in gen(catalog, 4, rail_optimized=False).switches} == {"leaf"}  # 32 NICs on one switch
    assert {s.tier for s in gen(catalog, 4).switches} == {"leaf", "spine"}  # rails need a spine
    assert {s.tier for s in gen(catalog, 9, rail_optimized=False).switches} == {"leaf", "spine"}
    assert plan_fat_tree(256).tiers == 2  # the most radix 64 holds in 2 tiers, rail-optimized
    assert plan_fat_tree(257).tiers == 3
    assert plan_fat_tree(2048).tiers == 3
    assert plan_fat_tree(100, switch_radix=40).tiers == 2 and plan_fat_tree(101, switch_radix=40).tiers == 3


def test_explicit_tiers_never_gives_a_single_switch(catalog):
    doc = gen(catalog, 2, rail_optimized=False, tiers=2)
    assert {s.tier for s in doc.switches} == {"leaf", "spine"}
    assert_well_formed(doc)
    doc3 = gen(catalog, 2, tiers=3)
    assert {s.tier for s in doc3.switches} == {"leaf", "spine", "core"}
    w = assert_well_formed(doc3)
    for spine in w.tier("spine"):
        assert w.up[spine.id] == w.down[spine.id]


def test_two_tiers_too_small_names_the_limit_and_the_flags(catalog):
    with pytest.raises(FatTreeError) as exc:
        gen(catalog, 384, switch_radix=40, nic_gbps=200, tiers=2)
    text = str(exc.value)
    assert "at most 100 servers" in text and "--tiers 3" in text and "--switch-radix" in text


def test_impossible_even_in_three_tiers(catalog):
    with pytest.raises(FatTreeError) as exc:
        gen(catalog, 16384)  # 131,072 NIC ports, radix 64
    text = str(exc.value)
    assert "131,072 NIC ports" in text and "3 tiers" in text and "--switch-radix 128" in text
    # and the suggestion works
    assert plan_fat_tree(16384, switch_radix=128).tiers == 3


def test_oversubscription_can_be_the_suggested_fix(catalog):
    # 2 tiers of radix 64 at 1:1 hold 256 servers; at 3:1 a leaf has 48 down ports -> 384
    with pytest.raises(FatTreeError) as exc:
        gen(catalog, 300, tiers=2)
    assert "--oversubscription" in str(exc.value)
    doc = gen(catalog, 300, tiers=2, oversubscription=3)
    assert_well_formed(doc)


@pytest.mark.parametrize("kw,flag", [
    (dict(nodes=0), "--nodes"),
    (dict(nodes=4, tiers=1), "--tiers"),
    (dict(nodes=4, tiers=4), "--tiers"),
    (dict(nodes=4, fabric="omnipath"), "--fabric"),
    (dict(nodes=4, oversubscription=0), "--oversubscription"),
    (dict(nodes=4, nic_gbps=-1), "--nic-gbps"),
    (dict(nodes=4, nics_per_node=0), "--nics-per-node"),
    (dict(nodes=4, gpus_per_node=16), "--gpus-per-node"),
    (dict(nodes=4, switch_radix=1), "--switch-radix"),
    (dict(nodes=40, switch_radix=8, rail_optimized=False), "--rail-optimized"),
])
def test_bad_requests_say_which_flag_to_change(catalog, kw, flag):
    with pytest.raises(FatTreeError) as exc:
        generate_fat_tree(gpu="H100", catalog=catalog, **kw)
    assert flag in str(exc.value)
    assert isinstance(exc.value, ValueError)


def test_unknown_gpu_suggests_a_name(catalog):
    with pytest.raises(FatTreeError) as exc:
        gen(catalog, 4, gpu="H10O")
    assert "H10O" in str(exc.value) and "H100-SXM5-80GB" in str(exc.value)


# ---- parts --------------------------------------------------------------------------------------

def test_parts_come_from_the_catalog(catalog):
    doc = gen(catalog, 8)
    node = doc.nodes[0]
    assert node.accelerator == "H100-SXM5-80GB" and node.scale_up == "nvswitch" and node.scale_up_gbps is None
    assert node.nic_model == "CX7-NDR" and node.nic_kind == "infiniband" and node.nic_gbps == 400
    assert node.height_units == 4
    leaf = doc.switches[0]
    assert (leaf.model, leaf.latency_us, leaf.sharp, leaf.port_gbps) == ("QM9700", 0.2, False, 400)  # SHARP capable, off by default
    # another radix: keep the chip's latency, but do not claim the 64-port model
    big = gen(catalog, 8, switch_radix=128).switches[0]
    assert (big.model, big.latency_us, big.radix) == ("", 0.2, 128)


def test_works_without_catalog_nics_and_switches(bare_catalog):
    doc = generate_fat_tree(16, "H100", catalog=bare_catalog, fabric="ethernet", nic_gbps=200)
    assert_well_formed(doc)
    assert all(n.nic_model == "" and n.nic_kind == "ethernet" for n in doc.nodes)
    assert all(s.model == "" and s.latency_us == 0.6 and not s.sharp and s.fabric == "ethernet"
               for s in doc.switches)
    assert all(link.kind == "ethernet" and link.bandwidth_gbps == 200 for link in doc.links)
    ib = generate_fat_tree(16, "H100", catalog=bare_catalog)
    assert all(s.latency_us == 0.13 for s in ib.switches)


def test_scale_up_outside_the_document_kinds_becomes_nvlink(catalog):
    doc = gen(catalog, 2, gpu="MI300X")
    assert all(n.scale_up == "nvlink" and n.accelerator == "MI300X" for n in doc.nodes)


def test_racks_metadata_and_positions(catalog):
    doc = gen(catalog, 384, switch_radix=40, nic_gbps=200, name="selene")
    assert doc.metadata.name == "selene"
    assert doc.metadata.description.startswith(
        "3-tier rail-optimized InfiniBand fat-tree, 384 x 8 H100-SXM5-80GB, 1:1")
    compute = {r.id: r for r in doc.racks if r.id.startswith("rack")}
    per_rack = Counter(n.rack for n in doc.nodes)
    assert set(per_rack) == set(compute) and max(per_rack.values()) == fat_tree_geometry.SERVERS_PER_RACK
    # racks do not mix pods: a pod of 38 or 39 servers fills 10 racks
    pod_of_node = {}
    w = Wiring(doc)
    for (node, _), leaf in w.nic_leaf.items():
        pod_of_node[node] = w.switch[leaf].pod
    for rack in compute.values():
        assert {pod_of_node[n.id] for n in doc.nodes if n.rack == rack.id} == {int(rack.row[3:])}
    assert len(compute) == 100
    # network racks hold only switches of their own pod (or the cores)
    for sw in doc.switches:
        rack = next(r for r in doc.racks if r.id == sw.rack)
        assert rack.id.startswith("net") and rack.row == ("core" if sw.pod is None else f"pod{sw.pod}")
    assert {r.row for r in doc.racks} == {f"pod{p}" for p in range(10)} | {"core"}
    positions = [(r.x, r.y) for r in doc.racks]
    assert len(set(positions)) == len(positions)  # no two racks on top of each other
    # servers fill racks from the bottom
    assert sorted(n.slot for n in doc.nodes if n.rack == "rack0") == [0, 4, 8, 12]
    assert gen(catalog, 8).metadata.description.startswith(
        "2-tier rail-optimized InfiniBand fat-tree, 8 x 8 H100-SXM5-80GB, 1:1")


def test_deterministic(catalog):
    a = gen(catalog, 300, tiers=3, oversubscription=1.5)
    b = gen(catalog, 300, tiers=3, oversubscription=1.5)
    assert a == b
    assert [l.id for l in a.links] == [f"l{i}" for i in range(len(a.links))]


@pytest.mark.parametrize("nodes,kw", [
    (1, {}), (4, dict(rail_optimized=False)), (4, dict(switch_radix=40)), (128, {}), (384, dict(switch_radix=40)),
    (300, dict(tiers=3, oversubscription=2)), (97, dict(rail_optimized=False, oversubscription=1.5)),
    (2048, {}), (10, dict(gpus_per_node=4, nics_per_node=2)),
])
def test_plan_counts_match_the_generated_document(catalog, nodes, kw):
    doc = gen(catalog, nodes, **kw)
    plan = plan_fat_tree(nodes, **kw)
    counts = doc.counts()
    assert (plan.nodes, plan.gpus, plan.switches, plan.links, plan.cables, plan.racks) == (
        counts["nodes"], counts["gpus"], counts["switches"], counts["links"], counts["cables"], counts["racks"])
    tiers = Counter(s.tier for s in doc.switches)
    assert (plan.leaves, plan.spines, plan.cores) == (tiers["leaf"], tiers["spine"], tiers["core"])
    assert plan.pods == len({s.pod for s in doc.switches if s.pod is not None})


def test_save_and_load_give_the_same_design(catalog, tmp_path):
    doc = gen(catalog, 300, tiers=3, oversubscription=2)
    path = tmp_path / "fat.yaml"
    save_document(doc, path)
    assert load_document(path) == doc


def test_16k_gpus_three_tiers(catalog):
    doc = gen(catalog, 2048)
    w = assert_well_formed(doc)
    assert doc.counts()["gpus"] == 16384
    tiers = Counter(s.tier for s in doc.switches)
    assert tiers == {"leaf": 512, "spine": 512, "core": 256}
    for s in doc.switches:
        if s.tier != "core":
            assert w.up[s.id] == w.down[s.id] == 32
        else:
            assert w.down[s.id] == 64
    assert nx.is_connected(device_graph(doc))


def test_shipped_catalog_names(tmp_path):
    from designer.core.model.catalog import default_catalog

    cat = default_catalog()
    if cat.resolve("accelerators", "H100") is None:
        pytest.skip("the shipped catalog has no H100 yet")
    doc = generate_fat_tree(4, "H100")
    assert doc.nodes[0].accelerator == cat.resolve("accelerators", "H100")
    nic = cat.nic_for("infiniband", 400.0)
    assert doc.nodes[0].nic_model == (nic.name if nic else "")
