"""Connect to fabric: a server copied into a generated rail-optimized fat-tree is cabled to the
rail leaves its neighbours use (designer/core/model/auto_cable.py, `designer connect`)."""
from __future__ import annotations

import dataclasses
import json

import pytest

from designer.core.engine.constants import EngineConstants
from designer.core.engine.fabric import build_fabric
from designer.core.io import load_document, loads_document, save_document
from designer.core.model import default_catalog
from designer.core.model.auto_cable import CablingRefused, plan_connection
from designer.core.design_check import check_document
from designer.core.model.elements import Link, Switch, split_endpoint
from tests.conftest import SMALL, run_cli


def _generate(tmp_path, nodes: int, *extra: str):
    out = tmp_path / f"fat-tree-{nodes}.yaml"
    code, _, err = run_cli("generate", "fat-tree", "-o", out, "--nodes", str(nodes), "--gpu", "H100", *extra)
    assert code == 0, err
    return out


def _copy_of(doc, original: str, new_id: str, **where):
    """A server copied without its cables, as Duplicate makes it (then placed by `where`)."""
    node = dataclasses.replace(doc.find("nodes", original), id=new_id, **where)
    doc.add(node)
    return node


def _leaves_of(doc, node_id: str) -> list[str]:
    ends = {}
    for link in doc.links:
        (a, pa), (b, _) = split_endpoint(link.a), split_endpoint(link.b)
        if a == node_id and pa and pa.startswith("nic"):
            ends[int(pa[3:])] = b
    return [ends[k] for k in sorted(ends)]


def test_copied_server_joins_its_rack_neighbours_rails_and_the_engine_runs_it(tmp_path):
    path = _generate(tmp_path, 15)
    doc = load_document(path)
    neighbour = doc.find("nodes", "node13")
    _copy_of(doc, "node13", "node15", slot=12)  # rack3 holds node12..node14 at slots 0, 4, 8
    uncabled = tmp_path / "uncabled.yaml"
    save_document(doc, uncabled)
    code, _, err = run_cli("evaluate", uncabled, "--set", "workload.preset=llama3-8b",
                           "--set", "parallelism.tensor_model_parallel_size=8")
    assert code == 65 and "node15: GPU 0's NIC nic0 is not cabled" in err, err  # what Connect to fabric fixes

    cabling = plan_connection(doc, "node15")
    assert len(cabling.links) == neighbour.nic_count == 8
    assert [l.id for l in cabling.links] == [f"l{136 + k}" for k in range(8)]  # the file's l{n}, numbered on
    with doc.batch():
        for link in cabling.links:
            doc.add(link)
    switches = {s.id: s for s in doc.switches}
    leaves = _leaves_of(doc, "node15")
    assert leaves == _leaves_of(doc, "node13")
    assert [switches[leaf].rail for leaf in leaves] == list(range(8))
    used = {}
    for link in doc.links:  # no port taken twice
        for end in (link.a, link.b):
            dev, port = split_endpoint(end)
            assert (dev, port) not in used, f"{end} used by {used[(dev, port)]} and {link.id}"
            used[(dev, port)] = link.id

    out = tmp_path / "connected.yaml"
    save_document(doc, out)
    code, _, err = run_cli("validate", out)
    assert code == 0, err
    fabric = build_fabric(load_document(out), default_catalog(), EngineConstants())
    index = fabric.node_ids.index("node15")
    base, mate = fabric.node_nic_base[index], fabric.node_nic_base[fabric.node_ids.index("node13")]
    assert list(fabric.nic_leaf[base:base + 8]) == list(fabric.nic_leaf[mate:mate + 8])
    assert all(fabric.nic_leaf[base:base + 8] >= 0)
    code, stdout, err = run_cli("evaluate", out, "--json", "--set", "workload.preset=llama3-8b",
                                "--set", "parallelism.tensor_model_parallel_size=8")
    assert code == 0, err
    result = json.loads(stdout)
    assert result["num_gpus"] == 128 and result["plan"]["dp"] == 16


def test_the_nearest_group_with_room_is_chosen(tmp_path):
    doc = load_document(_generate(tmp_path, 40))  # two leaf groups: node0-19 and node20-39
    group_of = {tuple(_leaves_of(doc, n)) for n in ("node0", "node25")}
    assert len(group_of) == 2
    _copy_of(doc, "node25", "node40", slot=30)
    assert _leaves_of(doc, "node25")[0] in plan_connection(doc, "node40").leaves  # its rack's group
    # rail 0's leaf of that group fills up: the other group takes the server
    full = _leaves_of(doc, "node25")[0]  # 20 servers on p0-p19, 20 up-links on p32-p51 of 64
    doc.add(Switch(id="spare", fabric="infiniband", tier="spine", radix=64))
    doc.add(Link(id="fill", a=f"{full}:p20", b="spare:p0", kind="infiniband", bandwidth_gbps=400, count=12))
    doc.update(full, radix=52)
    cabling = plan_connection(doc, "node40")
    assert list(cabling.leaves) == _leaves_of(doc, "node0")


def test_a_full_leaf_is_refused_by_name(tmp_path):
    doc = load_document(_generate(tmp_path, 32))  # 32 servers fill each radix-64 leaf at 1:1
    _copy_of(doc, "node3", "node32", rack=None, slot=None)
    with pytest.raises(CablingRefused) as refused:
        plan_connection(doc, "node32")
    text = str(refused.value)
    assert "leaf0" in text and "full (64 of 64 ports in use)" in text
    assert "add a leaf or free a port on leaf0" in text
    assert refused.value.element == "leaf0"


def test_refusals_name_the_server_and_the_fix(small_doc):
    with pytest.raises(CablingRefused, match="n0 already has 2 of 2 NIC cable"):
        plan_connection(small_doc, "n0")
    with pytest.raises(CablingRefused, match="no server 'n9'.*give the id of a server \\(n0, n1\\)"):
        plan_connection(small_doc, "n9")
    _copy_of(small_doc, "n0", "n2", nic_count=4, rack=None, slot=None)
    with pytest.raises(CablingRefused, match="no other server with 4 infiniband NIC"):
        plan_connection(small_doc, "n2")


def test_ids_follow_the_file_style():
    text = SMALL
    for k in range(4):
        text = text.replace(f"id: l{k},", f"id: cable-00{k},")
    doc = loads_document(text.replace("global_batch_size: 64", "global_batch_size: 48"), "padded.yaml")
    _copy_of(doc, "n1", "n2", slot=8)
    cabling = plan_connection(doc, "n2")
    assert [l.id for l in cabling.links] == ["cable-004", "cable-005"]
    assert [l.b for l in cabling.links] == ["leaf0:p4", "leaf0:p5"]  # one leaf for both NICs: no rails here
    for link in cabling.links:
        doc.add(link)
    assert not [p for p in check_document(doc) if p.severity == "error"]


def test_nvlink_tray_gets_its_domain_links_and_a_full_domain_refuses(tmp_path):
    path = _generate(tmp_path, 36, "--gpu", "GB200", "--gpus-per-node", "4", "--nics-per-node", "4",
                     "--nvlink-domain-gpus", "72")
    doc = load_document(path)
    before = [l for l in doc.links_of("node5")]
    with doc.batch():
        for link in before:
            doc.remove(link.id)
    cabling = plan_connection(doc, "node5")
    assert cabling.nvlink_links == 9 and len(cabling.links) == 4 + 9
    with doc.batch():
        for link in cabling.links:
            doc.add(link)
    assert not check_document(doc)
    assert sorted((split_endpoint(l.b)[0], l.count) for l in cabling.links if l.kind == "nvlink") == sorted(
        (split_endpoint(l.b)[0], l.count) for l in before if l.kind == "nvlink")

    _copy_of(doc, "node3", "node36", rack=None, slot=None)  # a 19th tray in an NVL72 rack
    with pytest.raises(CablingRefused, match="nvl0-switch0 has no 8 free ports in a row .*144 of 144"):
        plan_connection(doc, "node36")


def test_cli_connect_writes_the_cables_and_refuses_at_the_line(tmp_path):
    path = _generate(tmp_path, 15)
    doc = load_document(path)
    _copy_of(doc, "node13", "node15", slot=12)
    save_document(doc, path)
    out = tmp_path / "out.yaml"
    code, stdout, err = run_cli("connect", path, "--node", "node15", "-o", out)
    assert code == 0, err
    assert stdout == "" and "node15: 8 NIC cable(s)" in err
    assert len(load_document(out).links_of("node15")) == 8
    assert len(load_document(path).links_of("node15")) == 0  # -o leaves FILE as it was
    code, _, err = run_cli("validate", out)
    assert code == 0, err

    code, _, err = run_cli("connect", out, "--node", "node15")
    assert code == 65
    assert f"{out}:" in err and "node15 already has 8 of 8 NIC cable(s)" in err and "Traceback" not in err
    line = int(err.split(f"{out}:")[1].split(":")[0])
    assert '"id": "node15"' in out.read_text().splitlines()[line - 1]
