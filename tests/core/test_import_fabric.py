"""`designer import ibnetdiscover`, `designer import slurm-topology`, `designer export slurm-topology`
on real public outputs (tests/data/ibnetdiscover, tests/data/slurm; sources in their README.md)."""
import json
from collections import Counter
from pathlib import Path

import pytest

from designer.core.io import load_document
from designer.core.io.importers.fabric import rack_token
from designer.core.io.importers.hostlist import HostlistError, compress, expand
from designer.core.model.elements import split_endpoint
from tests.conftest import run_cli

DATA = Path(__file__).resolve().parent.parent / "data"
IB = DATA / "ibnetdiscover"
SLURM = DATA / "slurm"


def _import_ib(tmp_path, name, *extra):
    out = tmp_path / "c.yaml"
    code, _, err = run_cli("import", "ibnetdiscover", IB / name, "-o", out, *extra)
    assert code == 0, err
    return load_document(out), err, out


# ---- ibnetdiscover ------------------------------------------------------------------------------

def test_two_tier_edr_fabric_counts_tiers_and_speeds(tmp_path):
    doc, err, _ = _import_ib(tmp_path, "edr-two-tier-ddr-link.topo")
    assert len(doc.switches) == 6 and len(doc.nodes) == 96 and len(doc.links) == 144
    assert Counter(s.tier for s in doc.switches) == {"leaf": 4, "spine": 2}
    # every spine cable goes to a leaf; 24 servers on each leaf; 36-port SwitchIB at 4xEDR = 100 Gb/s
    spines = {s.id for s in doc.switches if s.tier == "spine"}
    assert all(s.radix == 36 and s.port_gbps == 100 for s in doc.switches)
    speeds = Counter(link.bandwidth_gbps for link in doc.links)
    assert speeds == {100: 143, 20: 1}
    assert sum(1 for link in doc.links for end in (link.a, link.b) if split_endpoint(end)[0] in spines) == 48
    assert all(n.nic_gbps == 100 and n.nic_count == 1 for n in doc.nodes)


def test_a_cable_trained_at_ddr_on_an_edr_fabric_is_imported_slow_and_flagged(tmp_path):
    doc, err, out = _import_ib(tmp_path, "edr-two-tier-ddr-link.topo")
    slow = [link for link in doc.links if link.bandwidth_gbps == 20]
    assert len(slow) == 1
    link = slow[0]
    ends = {split_endpoint(link.a)[0], split_endpoint(link.b)[0]}
    assert {doc.device(e).tier for e in ends} == {"leaf", "spine"}
    assert "4xDDR (20 Gb/s)" in link.note and "4xEDR (100 Gb/s)" in link.note and "line 61" in link.note
    # the warning names both ends and both speeds; the flag survives a save and reload
    warning = next(line for line in err.splitlines() if "degraded" in line)
    assert link.a in warning and link.b in warning and "4xDDR" in warning and "4xEDR" in warning
    assert "1 link(s) flagged as degraded" in err
    assert load_document(out).find("links", link.id).note == link.note
    assert all(not other.note for other in doc.links if other is not link)


def test_imported_fabric_validates_and_evaluates(tmp_path):
    _, _, out = _import_ib(tmp_path, "edr-two-tier-ddr-link.topo")
    code, _, err = run_cli("validate", out)
    assert code == 0, err
    code, stdout, err = run_cli("evaluate", out, "--set", "workload.preset=llama3-8b",
                                "--set", "workload.global_batch_size=92", "--set", "workload.micro_batch_size=1",
                                "--json")
    assert code == 0, err
    result = json.loads(stdout)
    # 96 hosts, of which bee01, bee02, controller and login01 are not GPU servers
    assert result["num_gpus"] == 92 and result["step_time_s"] > 0


def test_man_page_example_one_x_cable_and_a_two_port_hca(tmp_path):
    doc, err, _ = _import_ib(tmp_path, "man-page-voltaire-sdr.topo")
    assert len(doc.switches) == 2 and len(doc.links) == 7
    # four InfiniHost HCAs, one of them cabled on both ports: 4 servers, one with 2 NICs
    assert sorted(n.nic_count for n in doc.nodes) == [1, 1, 1, 2]
    assert all(s.tier == "leaf" and s.port_gbps == 10 for s in doc.switches)  # 4xSDR
    flagged = [link for link in doc.links if link.note]
    # the switch-switch cable reported 1xSDR by one end and 4xSDR by the other carries 1x: 2.5 Gb/s
    assert any(link.bandwidth_gbps == 2.5 and all(doc.device(split_endpoint(e)[0]).__class__.__name__ == "Switch"
                                                  for e in (link.a, link.b)) for link in flagged)
    assert all("1xSDR" in link.note for link in flagged)


def test_mixed_speed_lab_fabric_skips_loopbacks_and_the_error_line(tmp_path):
    doc, err, out = _import_ib(tmp_path, "nvidia-ufm-lab-edr-fdr.topo")
    assert "loopback" in err and "line 1" in err
    assert sorted(s.port_gbps for s in doc.switches) == [56.25, 100]  # SX6012 FDR, SwitchIB EDR
    by_name = {n.name or n.id: n for n in doc.nodes}
    assert by_name["r-ufm101"].nic_count == 2  # HCA-1 and HCA-2 of one host are one server's NICs
    sdr = [link for link in doc.links if link.bandwidth_gbps == 10]
    assert len(sdr) == 1 and "4xSDR" in sdr[0].note
    assert run_cli("validate", out)[0] == 0


def test_gpu_model_and_count_come_from_the_flags_and_are_said(tmp_path):
    doc, err, _ = _import_ib(tmp_path, "ibm-pcm-2009-sdr.topo", "--gpu", "H200", "--gpus-per-node", "4")
    assert all(n.accelerator == "H200-SXM5-141GB" and n.accelerator_count == 4 for n in doc.nodes)
    assert "GPUs are not in the input" in err and "4 x H200" in err
    doc, err, _ = _import_ib(tmp_path, "ibm-pcm-2009-sdr.topo")
    assert all(n.accelerator.startswith("H100") and n.accelerator_count == 1 for n in doc.nodes)
    assert "one GPU per HCA port" in err


def test_racks_follow_the_leaf_when_names_carry_no_rack(tmp_path):
    doc, err, _ = _import_ib(tmp_path, "edr-two-tier-ddr-link.topo")
    leaf_of = {}
    for link in doc.links:
        a, b = split_endpoint(link.a)[0], split_endpoint(link.b)[0]
        if doc.find("nodes", a) is not None:
            leaf_of[a] = b
    racks = {}
    for n in doc.nodes:
        racks.setdefault(n.rack, set()).add(leaf_of[n.id])
    assert all(len(leaves) == 1 for leaves in racks.values())
    assert max(Counter(n.rack for n in doc.nodes).values()) == 4
    assert "grouped by their leaf switch" in err


def test_racks_follow_rack_numbers_in_host_names(tmp_path):
    # the same real fabric, its hosts renamed r1-..., r2-... by their number: racks by name
    text = (IB / "edr-two-tier-ddr-link.topo").read_text()
    import re

    text = re.sub(r'"(node|gpu)0(\d)(\d) HCA-1"', lambda m: f'"r{m.group(2)}-{m.group(1)}{m.group(3)} HCA-1"',
                  text)
    src = tmp_path / "renamed.topo"
    src.write_text(text)
    out = tmp_path / "c.yaml"
    code, _, err = run_cli("import", "ibnetdiscover", src, "-o", out)
    assert code == 0, err
    doc = load_document(out)
    assert "from the rack numbers in the host names" in err
    for n in doc.nodes:
        token = rack_token(n.name or n.id)
        if token:
            rack = doc.find("racks", n.rack)
            assert rack.row == token
    assert rack_token("r3-1014") == "r3" and rack_token("a01-rack12-n3") == "rack12" and rack_token("gpu045") is None


def test_ports_report_form(tmp_path):
    # lines in the printf format of ibnetdiscover.c's ports report (-p): "%2s %5d %2d 0x%016x %s %s - ..."
    text = ("SW     2 19 0x0008f10400410015 4X SDR - CA    16  1 0x0008f10403960985 "
            "( 'SW-6IB4 Voltaire' - 'node1 HCA-1' )\n"
            "SW     2 20 0x0008f10400410015 4X DDR - SW     6 10 0x005442ba00003080 "
            "( 'SW-6IB4 Voltaire' - 'ISR9024 Voltaire' )\n"
            "SW     2 21 0x0008f10400410015 4X SDR                                    'SW-6IB4 Voltaire'\n"
            "CA    16  1 0x0008f10403960985 4X SDR - SW     2 19 0x0008f10400410015 "
            "( 'node1 HCA-1' - 'SW-6IB4 Voltaire' )\n")
    src = tmp_path / "ports.txt"
    src.write_text(text)
    out = tmp_path / "c.yaml"
    code, _, err = run_cli("import", "ibnetdiscover", src, "-o", out)
    assert code == 0, err
    doc = load_document(out)
    assert len(doc.nodes) == 1 and len(doc.switches) == 2 and len(doc.links) == 2
    assert sorted(link.bandwidth_gbps for link in doc.links) == [10, 20]


@pytest.mark.parametrize("keep_lines, where", [(40, "ends early"), (100, "ends early")])
def test_truncated_output_exits_65_with_the_line(tmp_path, keep_lines, where):
    name = "man-page-voltaire-sdr.topo" if keep_lines == 40 else "edr-two-tier-ddr-link.topo"
    lines = (IB / name).read_text().splitlines(keepends=True)[:keep_lines]
    src = tmp_path / "cut.topo"
    src.write_text("".join(lines))
    code, _, err = run_cli("import", "ibnetdiscover", src, "-o", tmp_path / "c.yaml")
    assert code == 65
    assert f"{src}:{keep_lines}:" in err and where in err and "whole output" in err
    assert "Traceback" not in err and not (tmp_path / "c.yaml").exists()


def test_output_cut_inside_a_line_names_that_line(tmp_path):
    text = (IB / "edr-two-tier-ddr-link.topo").read_text()
    cut = text[: text.index('"S-ec0d9a0300ec81e0"[19]') + 12]  # mid-GUID of line 22
    src = tmp_path / "cut.topo"
    src.write_text(cut)
    code, _, err = run_cli("import", "ibnetdiscover", src, "-o", tmp_path / "c.yaml")
    assert code == 65 and f"{src}:22:" in err and "cannot read this port line" in err


@pytest.mark.parametrize("content, message", [
    ("hello world\nthis is not a fabric\n", "not a line of ibnetdiscover output"),
    ("# only a comment\n", "no Switch or Ca record"),
    ("", "empty"),
])
def test_garbage_exits_65_and_never_loses_the_target(tmp_path, content, message):
    src = tmp_path / "bad.txt"
    src.write_text(content)
    target = tmp_path / "c.yaml"
    target.write_text("precious\n")
    code, _, err = run_cli("import", "ibnetdiscover", src, "-o", target)
    assert code == 65 and message in err and f"{src}:" in err and "Traceback" not in err
    assert target.read_text() == "precious\n"
    assert not list(tmp_path.glob(".c.yaml.*"))


def test_missing_input_is_66(tmp_path):
    code, _, err = run_cli("import", "ibnetdiscover", tmp_path / "nope.topo", "-o", tmp_path / "c.yaml")
    assert code == 66 and "no such file" in err


# ---- Slurm topology.conf ------------------------------------------------------------------------

def _import_slurm(tmp_path, path, *extra):
    out = tmp_path / f"{Path(path).stem}.yaml"
    code, _, err = run_cli("import", "slurm-topology", path, "-o", out, *extra)
    assert code == 0, err
    return load_document(out), err, out


def _tree(doc):
    """{switch: (child switches, child nodes)} from the cables, by tier."""
    rank = {"leaf": 0, "spine": 1, "core": 2}
    tree = {s.id: (set(), set()) for s in doc.switches}
    for link in doc.links:
        a, b = split_endpoint(link.a)[0], split_endpoint(link.b)[0]
        da, db = doc.device(a), doc.device(b)
        if doc.find("nodes", a) is not None:
            tree[b][1].add(da.name or a)
        elif rank[da.tier] > rank[db.tier]:
            tree[a][0].add(b)
        else:
            tree[b][0].add(a)
    return tree


@pytest.mark.parametrize("name, switches, nodes, tiers", [
    ("topology-guide-three-level.conf", 7, 8, {"leaf": 4, "spine": 2, "core": 1}),
    ("topology-guide-two-level-linkspeed.conf", 8, 16, {"leaf": 4, "spine": 4}),
    ("topology-conf5-tree.conf", 4, 18, {"leaf": 3, "spine": 1}),
    ("topograph-tree.conf", 3, 6, {"leaf": 2, "spine": 1}),
])
def test_tree_files_import_with_their_tiers_and_validate(tmp_path, name, switches, nodes, tiers):
    doc, err, out = _import_slurm(tmp_path, SLURM / name)
    assert len(doc.switches) == switches and len(doc.nodes) == nodes
    assert Counter(s.tier for s in doc.switches) == tiers
    assert all(link.bandwidth_gbps == 400 for link in doc.links) and "--link-gbps" in err
    assert run_cli("validate", out)[0] == 0


def test_two_level_guide_every_spine_reaches_every_leaf(tmp_path):
    doc, _, _ = _import_slurm(tmp_path, SLURM / "topology-guide-two-level-linkspeed.conf")
    tree = _tree(doc)
    assert all(tree[s][0] == {"s0", "s1", "s2", "s3"} for s in ("s4", "s5", "s6", "s7"))
    assert tree["s3"][1] == {f"tux{i}" for i in range(12, 16)}


def test_block_form_becomes_leaves_under_one_switch(tmp_path):
    doc, err, out = _import_slurm(tmp_path, SLURM / "topology-conf5-block.conf", "--gpus-per-node", "4")
    assert len(doc.nodes) == 128 and {n.accelerator_count for n in doc.nodes} == {4}
    tree = _tree(doc)
    assert tree["block-top"][0] == {"block1", "block2", "block3", "block4"}
    assert tree["block4"][1] == {f"node{i}" for i in range(97, 129)}
    assert "BlockSizes=30,120" in doc.metadata.description and "block-top" in err
    assert run_cli("validate", out)[0] == 0


@pytest.mark.parametrize("name", ["topology-guide-three-level.conf", "topology-guide-two-level-linkspeed.conf",
                                  "topology-conf5-tree.conf", "topograph-tree.conf", "topograph-block.conf"])
def test_export_then_import_keeps_the_switch_tree_and_the_nodes(tmp_path, name):
    doc, _, out = _import_slurm(tmp_path, SLURM / name)
    conf = tmp_path / "exported.conf"
    code, _, err = run_cli("export", "slurm-topology", out, "-o", conf)
    assert code == 0, err
    again, _, _ = _import_slurm(tmp_path, conf)
    assert _tree(again) == _tree(doc)
    code, stdout, _ = run_cli("export", "slurm-topology", out)
    assert code == 0 and stdout == conf.read_text()


def test_export_of_an_imported_fabric_compresses_hostlists(tmp_path):
    _, _, out = _import_ib(tmp_path, "edr-two-tier-ddr-link.topo")
    code, stdout, _ = run_cli("export", "slurm-topology", out)
    assert code == 0
    assert "SwitchName=leaf3 Nodes=gpu[021-044]" in stdout
    assert "SwitchName=spine0 Switches=leaf[0-3]" in stdout


def test_hostlist_expansion():
    assert expand("node[001-128]")[:2] == ["node001", "node002"] and len(expand("node[001-128]")) == 128
    assert expand("node[01-04,07]") == ["node01", "node02", "node03", "node04", "node07"]
    assert expand("tux[0-3,12,18-20],login") == ["tux0", "tux1", "tux2", "tux3", "tux12", "tux18", "tux19", "tux20",
                                                 "login"]
    assert expand("rack[1-2]-n[1-2]") == ["rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"]
    assert compress(expand("node[001-128]")) == "node[001-128]"
    assert compress(["node07", "node01", "node02"]) == "node[01-02,07]"
    for text in ("node[1-", "node[3-1]", "node[a-b]", "n[1-99999999]"):
        with pytest.raises(HostlistError):
            expand(text)


def test_unknown_switch_exits_65_with_its_line(tmp_path):
    src = tmp_path / "topology.conf"
    src.write_text("SwitchName=s0 Nodes=tux[0-1]\nSwitchName=s1 Nodes=tux[2-3]\n"
                   "SwitchName=top Switches=s[0-2]\n")
    target = tmp_path / "c.yaml"
    target.write_text("precious\n")
    code, _, err = run_cli("import", "slurm-topology", src, "-o", target)
    assert code == 65 and f"{src}:3:" in err and "'s2'" in err and "SwitchName=s2" in err
    assert target.read_text() == "precious\n" and "Traceback" not in err


@pytest.mark.parametrize("content, line, message", [
    ("SwitchName=s0 Nodes=tux[0-1]\nSwitchNmae=s1 Nodes=tux[2-3]\n", 2, "unknown key"),
    ("SwitchName=s0 Nodes=tux[0-\n", 1, "host list"),
    ("just some words\n", 1, "not KEY=VALUE"),
    ("SwitchName=a Switches=b\nSwitchName=b Switches=a\n", 1, "no nodes"),  # one cable, listed from both ends
    ("SwitchName=a Switches=a Nodes=x\n", 1, "lists itself"),
    ("SwitchName=s0 Nodes=a\nBlockName=b0 Nodes=b\n", 1, "mixes"),
    ("SwitchName=s0 Nodes=a\nSwitchName=s0 Nodes=b\n", 2, "defined twice"),
    ("# nothing\n", 1, "not a topology.conf"),
])
def test_bad_topology_conf_exits_65_with_file_and_line(tmp_path, content, line, message):
    src = tmp_path / "topology.conf"
    src.write_text(content)
    code, _, err = run_cli("import", "slurm-topology", src, "-o", tmp_path / "c.yaml")
    assert code == 65 and f"{src}:{line}:" in err and message in err and "Traceback" not in err


@pytest.mark.slow
def test_every_line_of_a_real_output_garbled_is_a_clear_message_never_a_crash(tmp_path):
    """Each line in turn cut in half, doubled in a number, or given a stray character: exit 0 or 65,
    never an internal error."""
    lines = (IB / "man-page-voltaire-sdr.topo").read_text().splitlines()
    src = tmp_path / "bad.topo"
    seen = set()
    for i, line in enumerate(lines):
        for garbled in (line[: len(line) // 2], line.replace("[", "[9999", 1), line.replace('"', "", 1),
                        line.replace("0x", "0xZ", 1), "\x7f" + line):
            src.write_text("\n".join(lines[:i] + [garbled] + lines[i + 1:]) + "\n")
            code, _, err = run_cli("import", "ibnetdiscover", src, "-o", tmp_path / "c.yaml")
            assert code in (0, 65), (i, garbled, err)
            assert "internal error" not in err and "Traceback" not in err
            if code == 65:
                assert f"{src}:" in err
            seen.add(code)
    assert seen == {0, 65}


@pytest.mark.slow
def test_every_line_of_a_real_topology_conf_garbled_is_a_clear_message_never_a_crash(tmp_path):
    lines = (SLURM / "topology-guide-two-level-linkspeed.conf").read_text().splitlines()
    src = tmp_path / "topology.conf"
    for i, line in enumerate(lines):
        for garbled in (line[: len(line) // 2], line.replace("[", "[[", 1), line.replace("=", " ", 1),
                        line.replace("-", "-x", 1), line.replace("s0", "s9", 1)):
            src.write_text("\n".join(lines[:i] + [garbled] + lines[i + 1:]) + "\n")
            code, _, err = run_cli("import", "slurm-topology", src, "-o", tmp_path / "c.yaml")
            assert code in (0, 65), (i, garbled, err)
            assert "internal error" not in err and "Traceback" not in err
            if code == 65:
                assert f"{src}:" in err


def test_rail_optimized_design_round_trips_through_slurm_with_every_nic(tmp_path):
    design = tmp_path / "c.yaml"
    assert run_cli("generate", "fat-tree", "-o", design, "--nodes", "16", "--gpu", "H100")[0] == 0
    conf = tmp_path / "topology.conf"
    assert run_cli("export", "slurm-topology", design, "-o", conf)[0] == 0
    back, _, _ = _import_slurm(tmp_path, conf)
    original = load_document(design)
    assert _tree(back) == _tree(original)
    assert {n.id: n.nic_count for n in back.nodes} == {n.id: n.nic_count for n in original.nodes}


def test_an_output_without_speeds_takes_link_gbps_and_says_so(tmp_path):
    # the real 2009 output with its width/speed columns removed, as ibnetdiscover before 1.5 printed it
    text = (IB / "ibm-pcm-2009-sdr.topo").read_text().replace(" 4xSDR", "")
    src = tmp_path / "old.topo"
    src.write_text(text)
    out = tmp_path / "c.yaml"
    code, _, err = run_cli("import", "ibnetdiscover", src, "-o", out, "--link-gbps", "20")
    assert code == 0, err
    assert {link.bandwidth_gbps for link in load_document(out).links} == {20}
    assert "show no width and speed" in err and "--link-gbps" in err
