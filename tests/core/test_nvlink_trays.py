"""NVLink switch trays as elements of a rack-scale NVLink domain: generator, checks, engine."""
from __future__ import annotations

import copy
from collections import Counter

import pytest

from tests.conftest import run_cli

from designer.core.engine.evaluate import Engine
from designer.core.generate import generate_fat_tree
from designer.core.io import load_document, save_document
from designer.core.io.overrides import apply_overrides
from designer.core.design_check import check_document
from designer.core.model.document import ClusterSpec, Document


def _nvl72(nodes=36, **kw) -> Document:
    return generate_fat_tree(nodes, "GB200", gpus_per_node=4, nics_per_node=4, nic_gbps=400,
                             nvlink_domain_gpus=kw.pop("domain", 72), **kw)


def test_nvl72_rack_holds_18_compute_trays_and_9_switch_trays():
    doc = _nvl72()
    trays = [s for s in doc.switches if s.fabric == "nvlink"]
    assert len(trays) == 18  # 9 per NVL72 rack, 2 racks
    assert {(s.tier, s.model, s.radix, s.port_gbps) for s in trays} == {("nvlink", "NVLink5-Switch-Tray", 144, 400)}
    for d in ("nvl0", "nvl1"):
        mine = [s for s in trays if s.nvlink_domain == d]
        servers = [n for n in doc.nodes if n.nvlink_domain == d]
        assert len(mine) == 9 and len(servers) == 18
        assert {s.rack for s in mine} == {n.rack for n in servers}  # one rack per domain
        slots = [n.slot for n in servers] + [s.slot for s in mine]
        assert len(set(slots)) == 27  # 27 x 1U, no overlap
    nvlinks = [l for l in doc.links if l.kind == "nvlink"]
    # one link per (compute tray, switch tray) pair: 18 x 9 per rack, 8 NVLink 5 links of 400 Gb/s each
    assert len(nvlinks) == 2 * 18 * 9
    assert {(l.count, l.bandwidth_gbps) for l in nvlinks} == {(8, 400)}
    per_tray = Counter(l.a for l in nvlinks)
    assert set(per_tray.values()) == {9}
    # 4 GPUs x 1.8 TB/s both ways (7,200 Gb/s per direction each) per compute tray
    assert sum(l.count * l.bandwidth_gbps for l in nvlinks if l.a == "node0") == 4 * 7200
    # every port of every switch tray used once: 18 trays x 8 = 144
    assert Counter(l.b.split(":")[0] for l in nvlinks for _ in range(l.count))["nvl0-switch0"] == 144
    assert [p for p in check_document(doc) if p.severity == "error"] == []


def test_partial_domain_and_small_domain_use_catalog_tray_count():
    doc = _nvl72(nodes=20)  # 18 trays in nvl0, 2 in nvl1: the second rack is still built for 72 GPUs
    assert Counter(s.nvlink_domain for s in doc.switches if s.fabric == "nvlink") == {"nvl0": 9, "nvl1": 9}
    doc16 = _nvl72(nodes=8, domain=16)  # 16 x 18 / 144 = 2 trays per domain
    assert Counter(s.nvlink_domain for s in doc16.switches if s.fabric == "nvlink") == {"nvl0": 2, "nvl1": 2}
    # a 4-GPU tray's 72 links over 2 switch trays: 36 each
    assert {l.count for l in doc16.links if l.kind == "nvlink"} == {36}
    assert not [p for p in check_document(doc16) if p.severity == "error"]


def test_hgx_servers_get_no_trays():
    doc = generate_fat_tree(8, "H100", gpus_per_node=8, nvlink_domain_gpus=8)
    assert not [s for s in doc.switches if s.fabric == "nvlink"]
    assert not [l for l in doc.links if l.kind == "nvlink"]
    assert all(n.nvlink_domain is None for n in doc.nodes)


def _without_trays(doc: Document) -> Document:
    spec = copy.deepcopy(doc.spec)
    trays = {s.id for s in spec.switches if s.fabric == "nvlink"}
    spec = ClusterSpec(racks=spec.racks, nodes=spec.nodes, switches=[s for s in spec.switches if s.id not in trays],
                       links=[l for l in spec.links if l.b.split(":")[0] not in trays])
    return Document(spec, copy.deepcopy(doc.metadata))


@pytest.mark.parametrize("settings", [
    ["workload.preset=llama3-8b", "parallelism.tensor_model_parallel_size=4", "workload.global_batch_size=288"],
    ["workload.preset=llama3-8b", "parallelism.tensor_model_parallel_size=8", "workload.global_batch_size=144",
     "parallelism.pipeline_model_parallel_size=2"],
])
def test_trays_change_no_prediction(settings):
    with_trays = _nvl72()
    plain = _without_trays(with_trays)
    assert len(plain.switches) < len(with_trays.switches) and len(plain.links) < len(with_trays.links)
    results = []
    for doc in (with_trays, plain):
        apply_overrides(doc, list(settings))
        results.append(Engine().evaluate(doc))
    a, b = results
    assert a.step_time_s == b.step_time_s
    assert a.breakdown_s == b.breakdown_s
    assert a.hidden_comm_s == b.hidden_comm_s
    assert a.bottlenecks == b.bottlenecks


def _problems(path):
    code, out, err = run_cli("validate", path)
    return code, err


def test_tray_cabled_to_two_domains_is_refused(tmp_path):
    doc = _nvl72()
    link = next(l for l in doc.links if l.kind == "nvlink" and l.b.startswith("nvl0-switch3:"))
    link.a = "node20"  # a tray of nvl1 cabled to nvl0's switch tray
    path = tmp_path / "two.yaml"
    save_document(doc, path)
    code, err = _problems(path)
    assert code == 65
    index = next(i for i, s in enumerate(doc.switches) if s.id == "nvl0-switch3")
    assert f"spec.switches[{index}].nvlink_domain" in err
    assert "node20" in err and "nvl1" in err


def test_tray_naming_a_domain_without_servers_is_refused(tmp_path):
    doc = _nvl72()
    tray = next(s for s in doc.switches if s.id == "nvl1-switch0")
    tray.nvlink_domain = "nvl7"
    path = tmp_path / "ghost.yaml"
    save_document(doc, path)
    code, err = _problems(path)
    assert code == 65
    index = doc.switches.index(tray)
    assert f"spec.switches[{index}].nvlink_domain" in err and "nvl7" in err and "nvl1" in err  # the fix names nvl1


def test_nvlink_domain_on_a_leaf_is_refused(tmp_path):
    doc = _nvl72(nodes=18)
    doc.switches[0].nvlink_domain = "nvl0"
    path = tmp_path / "leaf.yaml"
    save_document(doc, path)
    code, err = _problems(path)
    assert code == 65 and "spec.switches[0].nvlink_domain" in err


def test_trays_round_trip_and_cli_generate(tmp_path):
    path = tmp_path / "nvl.yaml"
    code, out, err = run_cli("generate", "fat-tree", "--gpu", "GB200", "--gpus-per-node", 4, "--nics-per-node", 4,
                             "--nodes", 36, "--nvlink-domain-gpus", 72, "-o", path)
    assert code == 0, err
    doc = load_document(path)
    assert sum(s.fabric == "nvlink" for s in doc.switches) == 18
    assert '"nvlink_domain": "nvl1"' in path.read_text()
    again = tmp_path / "again.yaml"
    save_document(doc, again)
    assert again.read_text() == path.read_text()
    code, out, err = run_cli("validate", again)
    assert code == 0, err


def test_trays_change_no_nccl_prediction():
    """The switch trays' latency is no hop of the scale-out network (small messages show it)."""
    from designer.core.engine.nccl import nccl_run

    with_trays = _nvl72()
    plain = _without_trays(with_trays)
    a = nccl_run(with_trays, "all_reduce", 144, min_bytes=8, max_bytes=1 << 20)
    b = nccl_run(plain, "all_reduce", 144, min_bytes=8, max_bytes=1 << 20)
    assert [r.time_us for r in a.rows] == [r.time_us for r in b.rows]


def test_parts_in_use_ignore_the_trays():
    from designer.core.model.parts_in_use import parts_in_use

    parts = parts_in_use(_nvl72())
    assert parts.fabric == "infiniband" and parts.switch_radix == 64


def test_tier_nvlink_only_on_nvlink_trays(tmp_path):
    doc = _nvl72(nodes=18)
    doc.switches[0].tier = "nvlink"  # a leaf marked as a tray tier
    path = tmp_path / "tier.yaml"
    save_document(doc, path)
    code, err = _problems(path)
    assert code == 65 and "spec.switches[0].tier" in err and "use tier leaf, spine or core" in err
