"""Fabric files as sites write them (tests/data/slurm, tests/data/ibnetdiscover; sources in their
README.md): topology.conf read as a graph, and an export Slurm's plugins accept."""
from collections import Counter
from pathlib import Path

from designer.core.io import load_document
from designer.core.io.importers.slurm_topology import parse_topology_conf
from designer.core.model.elements import split_endpoint
from tests.conftest import run_cli

DATA = Path(__file__).resolve().parent.parent / "data"
SLURM = DATA / "slurm"


def _import(tmp_path, path, kind="slurm-topology", *extra):
    out = tmp_path / f"{Path(path).stem}.yaml"
    code, _, err = run_cli("import", kind, path, "-o", out, *extra)
    assert code == 0, err
    return load_document(out), err, out


def _switch_pairs(doc):
    switches = {s.id for s in doc.switches}
    pairs = Counter()
    for link in doc.links:
        a, b = split_endpoint(link.a)[0], split_endpoint(link.b)[0]
        if a in switches and b in switches:
            pairs[frozenset((a, b))] += 1
    return pairs


def test_sharp_cmd_topology_listing_each_pair_from_both_ends_imports_each_cable_once(tmp_path):
    # NVIDIA's `sharp_cmd topology` on an Azure cluster: 49 switches, 128 HCA GUIDs; every
    # spine - top pair is listed by both switches
    doc, err, out = _import(tmp_path, SLURM / "azure-sharp-cmd-topology.conf", "slurm-topology",
                            "--gpus-per-node", "1")
    pairs = _switch_pairs(doc)
    assert set(pairs.values()) == {1}  # each pair of switches one cable
    assert len(pairs) == 48 and len(doc.switches) == 49 and len(doc.nodes) == 128
    assert Counter(s.tier for s in doc.switches) == {"leaf": 40, "spine": 8, "core": 1}
    assert "8 switch pair(s) listed from both ends" in err and "ibsw14 (line 14) - ibsw47 (line 47)" in err
    assert "Slurm's topology/tree" in err
    assert run_cli("validate", out)[0] == 0


def test_export_of_a_both_ways_file_is_a_tree_slurm_accepts(tmp_path):
    _, _, out = _import(tmp_path, SLURM / "azure-sharp-cmd-topology.conf", "slurm-topology", "--gpus-per-node", "1")
    conf = tmp_path / "topology.conf"
    code, _, err = run_cli("export", "slurm-topology", out, "-o", conf)
    assert code == 0, err
    topo = parse_topology_conf(conf.read_text(), str(conf))
    assert topo.not_a_tree == []
    listed = Counter(child for sw in topo.switches.values() for child in sw.switches)
    assert set(listed.values()) == {1}  # every switch under one parent
    assert sum(len(sw.nodes) for sw in topo.switches.values()) == 128
    code, _, err = run_cli("export", "slurm-topology", out, "--form", "block", "-o", tmp_path / "block.conf")
    assert code == 0 and "40 blocks" in err
    block = parse_topology_conf((tmp_path / "block.conf").read_text())
    assert block.form == "block" and sum(len(b.nodes) for b in block.switches.values()) == 128


def test_spine_to_spine_cables_import_and_the_export_names_what_it_leaves_out(tmp_path):
    # a site generator's shape: two spines over two leaves, and a cable between the spines
    src = tmp_path / "topology.conf"
    src.write_text("SwitchName=leaf1 Nodes=gpu[01-04]\nSwitchName=leaf2 Nodes=gpu[05-08]\n"
                   "SwitchName=spine1 Switches=leaf[1-2],spine2\nSwitchName=spine2 Switches=leaf[1-2]\n")
    doc, err, out = _import(tmp_path, src)
    assert Counter(s.tier for s in doc.switches) == {"leaf": 2, "spine": 2}
    assert frozenset(("spine1", "spine2")) in _switch_pairs(doc)
    assert "1 cable(s) between two spine switches, e.g. spine1 - spine2 (line 3)" in err
    assert run_cli("validate", out)[0] == 0
    code, stdout, err = run_cli("export", "slurm-topology", out)
    assert code == 0 and "left out 1 cable(s)" in err and "spine2 - spine1" in err
    topo = parse_topology_conf(stdout)
    assert topo.not_a_tree == [] and topo.switches["spine1"].switches == ["leaf1", "leaf2"]


def test_a_parent_child_loop_is_read_as_cables_and_said(tmp_path):
    src = tmp_path / "topology.conf"
    src.write_text("SwitchName=a Switches=b Nodes=x\nSwitchName=b Switches=c Nodes=y\nSwitchName=c Switches=a Nodes=z\n")
    doc, err, out = _import(tmp_path, src)
    assert len(_switch_pairs(doc)) == 3 and "a -> b -> c -> a" in err
    assert run_cli("validate", out)[0] == 0
