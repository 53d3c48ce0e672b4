"""The logical fabric layout (designer/core/model/logical_layout.py): tiers, pods, rails, NVLink
domains, bundles with count and capacity, oversubscription per tier, aggregation of large fabrics,
and that it mirrors the document after edits."""
import time

import pytest

from designer.core.generate.fat_tree import generate_fat_tree
from designer.core.io import load_document
from designer.core.model import Link, Node
from designer.core.model.logical_layout import build_logical_layout, format_gbps, format_ratio
from tests.conftest import EXAMPLES


def _fabric_capacity_gbps(doc) -> float:
    return sum(l.bandwidth_gbps * l.count for l in doc.links if l.kind not in ("nvlink", "pcie"))


def test_64_gpus_one_block_per_device_with_rails_and_a_1_to_1_leaf_tier():
    doc = generate_fat_tree(8, "H100")
    layout = build_logical_layout(doc)
    assert layout.tiers == ["spine", "leaf", "compute"]
    assert not any(layout.aggregated.values())
    leaves = [b for b in layout.blocks if b.tier == "leaf"]
    assert len(leaves) == 8 and sorted(b.rail for b in leaves) == list(range(8))
    assert [b.label for b in layout.blocks if b.tier == "compute"] == [f"node{i}" for i in range(8)]
    ratio = layout.ratios["leaf"]
    assert ratio.down_gbps == ratio.up_gbps == 8 * 8 * 400  # 64 NICs down, as much up
    assert ratio.label == "leaf -> spine 1:1"
    # every cable is in exactly one bundle; a leaf's 8 cables to the spine are one line
    assert sum(b.cables for b in layout.bundles) == sum(l.count for l in doc.links)
    assert sum(len(b.link_rows) for b in layout.bundles) == len(doc.links)
    up = [b for b in layout.bundles if layout.blocks[b.upper].tier == "spine"]
    assert len(up) == 8 and {b.label for b in up} == {"8 x 400G = 3.2T"}


def test_oversubscribed_leaves_say_2_to_1():
    doc = generate_fat_tree(64, "H100", oversubscription=2, rail_optimized=False)
    ratio = build_logical_layout(doc).ratios["leaf"]
    assert ratio.ratio == pytest.approx(2.0)
    assert ratio.label.startswith("leaf -> spine 2:1")


def test_1024_gpus_group_leaves_by_rail_and_servers_by_the_leaves_they_share():
    doc = generate_fat_tree(128, "H100")
    layout = build_logical_layout(doc)
    assert layout.aggregated == {"spine": False, "leaf": True, "compute": True}
    rails = [b for b in layout.blocks if b.tier == "leaf"]
    assert [b.label for b in rails] == [f"rail {r}" for r in range(8)]
    assert all(len(b.members) == 4 for b in rails)
    servers = [b for b in layout.blocks if b.tier == "compute"]
    assert [len(b.members) for b in servers] == [32] * 4 and sum(b.gpus for b in servers) == 1024
    down = [b for b in layout.bundles if layout.blocks[b.lower].tier == "compute"]
    assert {b.label for b in down} == {"32 x 400G = 12.8T"}  # 32 servers' NIC k to rail k
    # nothing lost to the aggregation: all capacity is drawn between blocks
    assert sum(b.capacity_gbps for b in layout.bundles) == _fabric_capacity_gbps(doc)


def test_16384_gpus_aggregate_by_pod_in_well_under_a_second():
    doc = generate_fat_tree(2048, "H100")
    build_logical_layout(doc)  # endpoints parsed once (shared with the check and the engine)
    start = time.perf_counter()
    layout = build_logical_layout(doc)
    elapsed_s = time.perf_counter() - start
    assert elapsed_s < 1.0, f"{elapsed_s:.2f} s"
    assert layout.tiers == ["core", "spine", "leaf", "compute"]
    for tier in ("spine", "leaf", "compute"):
        blocks = [b for b in layout.blocks if b.tier == tier]
        assert [b.pod for b in blocks] == list(range(16)), tier
    assert sum(b.gpus for b in layout.blocks) == 16384
    assert {b.label for b in layout.blocks if b.tier == "compute"} == {f"pod {p}" for p in range(16)}
    assert len([b for b in layout.bands if b.kind == "pod"]) == 16
    assert set(layout.ratios) == {"leaf", "spine"}
    assert sum(b.cables for b in layout.bundles) == sum(l.count for l in doc.links)
    # a pod's blocks stand under one another
    for p in range(16):
        xs = [b.center[0] for b in layout.blocks if b.pod == p]
        assert max(xs) - min(xs) < 1e-6


def test_an_nvlink_domain_is_one_block_and_its_nvlink_cables_stay_inside():
    doc = load_document(EXAMPLES / "gb200-nvl72-144gpu.yaml")
    layout = build_logical_layout(doc)
    domains = [b for b in layout.blocks if b.tier == "compute"]
    assert [(b.kind, b.label, b.gpus) for b in domains] == [("domain", "nvl0", 72), ("domain", "nvl1", 72)]
    assert sum(m.startswith("nvl0-switch") for m in domains[0].members) == 9
    assert sum(m.startswith("node") for m in domains[0].members) == 18
    assert all(b.kind == "infiniband" for b in layout.bundles)
    nvlink_links = sum(l.kind == "nvlink" for l in doc.links)
    assert layout.internal_links == nvlink_links
    assert layout.block_of["nvl1-switch3"] == layout.block_of["node20"]


def test_the_layout_follows_edits_of_the_document():
    doc = generate_fat_tree(8, "H100")
    before = build_logical_layout(doc)
    server = Node(id="node8", accelerator="H100-SXM5-80GB", nic_count=1)
    doc.add(server)
    doc.add(Link(id="new-cable", a="node8:nic0", b="leaf0:p40", kind="infiniband", bandwidth_gbps=400))
    after = build_logical_layout(doc)
    assert "node8" in after.block_of and "node8" not in before.block_of
    k = next(i for i, b in enumerate(after.bundles) if "new-cable" in after.bundle_link_ids(b))
    assert {after.blocks[after.bundles[k].upper].label, after.blocks[after.bundles[k].lower].label} == \
        {"leaf0", "node8"}
    assert after.ratios["leaf"].down_gbps == before.ratios["leaf"].down_gbps + 400
    doc.remove("new-cable")
    doc.remove("node8")
    again = build_logical_layout(doc)
    assert "node8" not in again.block_of
    assert len(again.bundles) == len(before.bundles)


def test_a_leaf_without_uplinks_is_named():
    doc = generate_fat_tree(8, "H100")
    for link in [l for l in doc.links if l.a.startswith("leaf3:") or l.b.startswith("leaf3:")]:
        if "spine" in link.a or "spine" in link.b:
            doc.remove(link.id)
    ratio = build_logical_layout(doc).ratios["leaf"]
    assert ratio.without_uplinks == 1
    assert "1 without uplinks" in ratio.label


def test_selection_maps_elements_racks_and_links_to_blocks_and_bundles():
    doc = generate_fat_tree(8, "H100")
    layout = build_logical_layout(doc)
    leaf = layout.block_of["leaf2"]
    assert layout.blocks_for(["leaf2"]) == {leaf}
    rack = doc.find("switches", "leaf2").rack
    assert leaf in layout.blocks_for([rack])
    link = next(l for l in doc.links if l.a.startswith("leaf2:") and "spine" in l.b)
    (k,) = layout.bundles_for([link.id])
    assert {layout.bundles[k].upper, layout.bundles[k].lower} == {leaf, layout.block_of["spine0"]}


def test_figures_read_as_an_engineer_writes_them():
    assert format_gbps(400) == "400G"
    assert format_gbps(12800) == "12.8T"
    assert format_gbps(409600) == "409.6T"
    assert format_gbps(6.5536e6) == "6.554P"
    assert format_ratio(2) == "2:1"
    assert format_ratio(1.0) == "1:1"
    assert format_ratio(0.5) == "1:2"
    assert format_ratio(None) == "no uplinks"


def test_an_empty_design_has_no_rows():
    from designer.core.model import Document

    layout = build_logical_layout(Document())
    assert layout.tiers == [] and layout.blocks == [] and layout.bundles == []
