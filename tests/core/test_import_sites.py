"""Fabric files as sites write them (tests/data/slurm, tests/data/ibnetdiscover; sources in their
README.md): topology.conf read as a graph, and an export Slurm's plugins accept."""
from collections import Counter
from pathlib import Path

import pytest

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
    assert "128 of 128 nodes are named by a GUID (0x155dfffd33ff7d, ...)" in err and "HCA ports, not hosts" in err
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


# ---- hosts that are not GPU servers ------------------------------------------------------------

IB = DATA / "ibnetdiscover"


def test_storage_login_and_controller_hosts_are_not_gpu_servers(tmp_path):
    # the real two-tier EDR fabric: 92 GPU servers (gpu*, node*) and bee01, bee02 (BeeGFS),
    # controller and login01, each with one HCA
    doc, err, out = _import(tmp_path, IB / "edr-two-tier-ddr-link.topo", "ibnetdiscover", "--gpus-per-node", "8")
    roles = {(n.name or n.id): n.role for n in doc.nodes}
    assert {h: r for h, r in roles.items() if r != "compute"} == {
        "bee01": "storage", "bee02": "storage", "controller": "service", "login01": "login"}
    assert doc.num_gpus() == 92 * 8  # not 96 x 8: no phantom GPUs
    assert "92 GPU servers + 2 storage, 1 login, 1 service host(s), 736 GPUs" in err
    assert "bee01 (storage: its name)" in err and "controller (service: its name)" in err
    assert run_cli("validate", out)[0] == 0


def test_no_job_is_placed_on_a_service_host(tmp_path):
    from designer.core.engine.constants import engine_constants
    from designer.core.engine.fabric import build_fabric
    from designer.core.engine.job_placement import place_jobs
    from designer.core.model import Parallelism, Workload
    from designer.core.model.catalog import default_catalog
    from designer.core.model.jobs import JobPlacement, JobSpec

    doc, _, _ = _import(tmp_path, IB / "edr-two-tier-ddr-link.topo", "ibnetdiscover", "--gpus-per-node", "8")
    doc.spec.jobs = [JobSpec("all", Workload(preset="llama3-8b", global_batch_size=736, micro_batch_size=1),
                             Parallelism(tensor_model_parallel_size=8), JobPlacement(policy="spread", gpus=736))]
    fabric = build_fabric(doc, default_catalog(), engine_constants(None))
    placement = place_jobs(doc, fabric)
    assert not [p for p in placement.problems if p.severity == "error"], placement.problems
    used = {int(fabric.gpu_node[g]) for g in placement.jobs[0].gpus}
    assert {doc.nodes[i].role for i in used} == {"compute"} and len(used) == 92
    service = next(n.id for n in doc.nodes if n.role == "storage")
    doc.spec.jobs[0].placement = JobPlacement(nodes=[service])
    problems = place_jobs(doc, fabric).problems
    assert any("a storage host: no job runs there" in p.message for p in problems)


def test_compute_regex_and_host_map_name_the_roles(tmp_path):
    doc, err, _ = _import(tmp_path, IB / "edr-two-tier-ddr-link.topo", "ibnetdiscover", "--compute", "^gpu")
    roles = Counter(n.role for n in doc.nodes)
    assert roles["compute"] == 45 and "--compute does not match it" in err
    rules = tmp_path / "hosts.map"
    rules.write_text("# site naming\nbee* storage\ncontroller compute\n")
    doc, err, _ = _import(tmp_path, IB / "edr-two-tier-ddr-link.topo", "ibnetdiscover", "--hosts", rules)
    roles = {(n.name or n.id): n.role for n in doc.nodes}
    assert roles["controller"] == "compute" and roles["bee02"] == "storage" and roles["login01"] == "login"
    assert f"bee01 (storage: {rules}:2)" in err
    rules.write_text("bee* storge\n")
    code, _, err = run_cli("import", "ibnetdiscover", IB / "edr-two-tier-ddr-link.topo", "-o", tmp_path / "x.yaml",
                           "--hosts", rules)
    assert code == 65 and f"{rules}:1:" in err and "PATTERN ROLE" in err
    code, _, err = run_cli("import", "ibnetdiscover", IB / "edr-two-tier-ddr-link.topo", "-o", tmp_path / "x.yaml",
                           "--compute", "gpu[")
    assert code in (2, 64) and "--compute" in err and "Traceback" not in err


def test_a_single_hca_host_among_eight_hca_servers_is_a_service_host():
    from designer.core.io.importers.host_roles import classify_hosts

    hcas = {f"dgx{i:02d}": 8 for i in range(16)} | {"cache-a": 1, "r-7": 1, "dgx16": 7}
    roles, why = classify_hosts(hcas)
    assert roles["r-7"] == "service" and "1 HCA port(s) where most hosts have 8" in why["r-7"]
    assert roles["cache-a"] == "storage" and roles["dgx16"] == "compute"
    # the UFM lab: every host named r-ufm*, one HCA each: nothing to set apart, all compute
    roles, _ = classify_hosts({f"r-ufm{i}": 1 for i in range(6)})
    assert set(roles.values()) == {"compute"}


# ---- tiers from the graph ----------------------------------------------------------------------

def test_a_spine_that_carries_storage_stays_a_spine_and_tiers_show_oversubscription(tmp_path):
    src = tmp_path / "topology.conf"
    src.write_text("SwitchName=leaf1 Nodes=gpu[01-04]\nSwitchName=leaf2 Nodes=gpu[05-08]\n"
                   "SwitchName=spine1 Switches=leaf[1-2],stor1 Nodes=bee01\nSwitchName=spine2 Switches=leaf[1-2],stor1\n"
                   "SwitchName=stor1 Nodes=bee[02-03]\nSwitchName=mgmt Nodes=ufm01\n")
    doc, err, out = _import(tmp_path, src)
    tiers = {s.id: s.tier for s in doc.switches}
    assert tiers == {"leaf1": "leaf", "leaf2": "leaf", "spine1": "spine", "spine2": "spine", "stor1": "leaf",
                     "mgmt": "leaf"}
    assert "1 switch(es) no GPU server reaches (a management network?): mgmt" in err
    assert run_cli("validate", out)[0] == 0  # the island holds no GPU server: nothing is cut off
    # leaves 2:1 (4 x 400 down, 2 up), the storage leaf 1:1, the management island without up-links
    assert ("tiers (from the graph, by distance from the GPU servers): 4 leaf at 1.83:1 (4400:2400 Gb/s down:up; "
            "1:1 to 2:1 by switch), 1 without up-links, 2 spine") in err
    # the Slurm export keeps bee01 under spine1, so the storage host stays reachable
    code, stdout, _ = run_cli("export", "slurm-topology", out)
    assert "SwitchName=spine1 Switches=leaf[1-2],stor1 Nodes=bee01" in stdout


def test_real_fabrics_show_each_tiers_oversubscription(tmp_path):
    _, err, _ = _import(tmp_path, IB / "edr-two-tier-ddr-link.topo", "ibnetdiscover")
    # 24 x 100G down and 12 up per leaf (2:1); the leaf with the 4xDDR up-link 2.14:1
    assert "4 leaf at 2.03:1 (9600:4720 Gb/s down:up; 2:1 to 2.14:1 by switch), 2 spine" in err
    _, err, _ = _import(tmp_path, SLURM / "azure-sharp-cmd-topology.conf", "slurm-topology", "--gpus-per-node", "1")
    assert "40 leaf at 3.2:1" in err and "8 spine at 5:1" in err and "1 core" in err


def test_an_import_that_would_not_validate_is_not_written(tmp_path):
    # the guide's two-level file with its spine lines cut off: leaves with no up-links
    lines = (SLURM / "topology-guide-two-level-linkspeed.conf").read_text().splitlines()
    src = tmp_path / "topology.conf"
    src.write_text("\n".join(line for line in lines if "Switches=" not in line) + "\n")
    target = tmp_path / "c.yaml"
    target.write_text("precious\n")
    code, _, err = run_cli("import", "slurm-topology", src, "-o", target)
    assert code == 65 and f"{src}:1:" in err and "would not validate" in err and "no up-links" in err
    assert target.read_text() == "precious\n" and "wrote" not in err


# ---- speeds that are real -----------------------------------------------------------------------

def test_an_hca_at_its_own_best_rate_is_not_a_degraded_cable(tmp_path):
    # the real UFM lab output, with r-ufm101's second HCA (its port line on the SX6012 and its Ca
    # record) taken out: r-ufm101 HCA-1, a ConnectX MT26428 (devid 0x673c, QDR at most), then has one
    # port, at 4xQDR on the FDR switch. Judged by what its ports reach it looked degraded; its
    # device id says QDR is its best. r-ufm96's ConnectX-4 (EDR) at 4xSDR on that FDR switch stays flagged.
    lines = (IB / "nvidia-ufm-lab-edr-fdr.topo").read_text().splitlines()
    assert "r-ufm101 HCA-2" in lines[28] and lines[46:53][4].startswith('Ca 2 "H-0002c9030006ba5a"')
    src = tmp_path / "ufm-lab-one-hca.topo"
    src.write_text("\n".join(lines[:28] + lines[29:46] + lines[53:]) + "\n")
    doc, err, out = _import(tmp_path, src, "ibnetdiscover")
    flagged = [link for link in doc.links if link.note.startswith("degraded")]
    assert len(flagged) == 1 and "r-ufm96" in flagged[0].a + flagged[0].b
    assert ("r-ufm101 HCA-1: ConnectX MT26428 (IB QDR, PCIe 2.0) (devid 0x673c) reaches at most 4xQDR; it runs at "
            "4xQDR (40 Gb/s), its best, not a bad cable") in err
    assert "rates: the fastest rate of 7 of 7 devices from their device id" in err


def test_the_real_fabrics_keep_their_flags_with_device_ids(tmp_path):
    _, err, _ = _import(tmp_path, IB / "nvidia-ufm-lab-edr-fdr.topo", "ibnetdiscover")
    assert err.count("degraded: trained at") == 1 and "r-ufm101 HCA-2: ConnectX MT26428" in err
    doc, err, _ = _import(tmp_path, IB / "edr-two-tier-ddr-link.topo", "ibnetdiscover")  # Switch-IB both ends
    assert err.count("degraded: trained at 4xDDR") == 1


# ---- other real formats --------------------------------------------------------------------------

def test_iblinkinfo_of_a_real_edr_switch_with_a_management_host(tmp_path):
    # one SB7700 EDR switch, n01 and n02 (compute) and mgt; the listing stops at switch port 18, so
    # mgt's cable (port 36) is in mgt's own block only, n01's in the switch's only
    doc, err, out = _import(tmp_path, DATA / "iblinkinfo" / "edr-sb7700-hpl-2node.txt", "iblinkinfo")
    assert [s.id for s in doc.switches] == ["SB7700"] and doc.switches[0].radix == 36
    assert {(n.name or n.id): n.role for n in doc.nodes} == {"n01": "compute", "n02": "compute", "mgt": "service"}
    assert len(doc.links) == 3 and {link.bandwidth_gbps for link in doc.links} == {100}
    ports = sorted(e for link in doc.links for e in (link.a, link.b) if e.startswith("SB7700"))
    assert ports == ["SB7700:p16", "SB7700:p17", "SB7700:p35"]
    assert "2 GPU servers + 1 service host(s)" in err and run_cli("validate", out)[0] == 0


def test_iblinkinfo_of_a_qdr_infiniscale_switch_with_32_ports_polling(tmp_path):
    # an InfiniScale IV (36 ports, QDR) with four single-HCA hosts at 4X 10.0 Gbps and 32 ports Down/Polling;
    # the hosts' blocks print "Active/ LinkUp" with one space, the switch's with two
    doc, err, out = _import(tmp_path, DATA / "iblinkinfo" / "infiniscale-iv-qdr-4host.txt", "iblinkinfo")
    assert len(doc.switches) == 1 and doc.switches[0].radix == 36 and doc.switches[0].port_gbps == 40
    assert sorted(n.id for n in doc.nodes) == ["centos-data-200", "centos-data-201", "centos-data-202",
                                               "kube-node-100"]
    assert len(doc.links) == 4 and {link.bandwidth_gbps for link in doc.links} == {40}
    ports = sorted(e for link in doc.links for e in (link.a, link.b) if e.startswith(doc.switches[0].id))
    assert ports == [f"{doc.switches[0].id}:p{k}" for k in range(4)]  # switch ports 1-4, numbered from 0
    assert "1 switches, 4 hosts, 4 cables" in err and run_cli("validate", out)[0] == 0


def test_a_site_topology_conf_whose_top_switch_names_other_switches_is_refused_at_its_line(tmp_path):
    # a site's documented topology.conf: the core lists ibswitch0[1-2], the leaves are cf-ibswitch01/02
    src = DATA / "slurm" / "site-howto-core-names-no-leaf.conf"
    code, _, err = run_cli("import", "slurm-topology", src, "-o", tmp_path / "c.yaml")
    assert code == 65 and not (tmp_path / "c.yaml").exists()
    assert f"{src}:8:1: switch ibcore names switch 'ibswitch01'" in err and "did you mean cf-ibswitch01?" in err


def test_iblinkinfo_garbled_lines_are_located(tmp_path):
    lines = (DATA / "iblinkinfo" / "edr-sb7700-hpl-2node.txt").read_text().splitlines()
    src = tmp_path / "links.txt"
    for i, line in enumerate(lines):
        for garbled in (line[: len(line) // 2], line.replace("Gbps", "Gbit", 1), line.replace("[", "", 1)):
            src.write_text("\n".join(lines[:i] + [garbled] + lines[i + 1:]) + "\n")
            code, _, err = run_cli("import", "iblinkinfo", src, "-o", tmp_path / "c.yaml")
            assert code in (0, 65), (i, garbled, err)
            assert "Traceback" not in err and "internal error" not in err
            if code == 65:
                assert f"{src}:" in err


def _redact(text: str, keep: int) -> str:
    """GUIDs as users share them: the first `keep` hex digits, then <redacted>."""
    import re

    return re.sub(r"(0x|[SH]-|\()([0-9a-fA-F]{12,16})", lambda m: m.group(1) + m.group(2)[:keep] + "<redacted>", text)


@pytest.mark.parametrize("name", ["nvidia-ufm-lab-edr-fdr.topo", "edr-two-tier-ddr-link.topo",
                                  "oracle-sun-dcs36-qdr.topo"])
def test_redacted_guids_are_named_and_the_fabric_comes_in_whole(tmp_path, name):
    whole, _, _ = _import(tmp_path, IB / name, "ibnetdiscover")
    src = tmp_path / f"redacted-{name}"
    src.write_text(_redact((IB / name).read_text(), 4))  # 0x9c05<redacted>: the vendor's prefix only
    assert "<redacted>" in src.read_text()
    doc, err, out = _import(tmp_path, src, "ibnetdiscover")
    assert "redacted GUID(s)" in err
    assert (len(doc.nodes), len(doc.switches), len(doc.links)) == (len(whole.nodes), len(whole.switches),
                                                                   len(whole.links))
    assert sorted(l.bandwidth_gbps for l in doc.links) == sorted(l.bandwidth_gbps for l in whole.links)
    assert sorted(n.name or n.id for n in doc.nodes) == sorted(n.name or n.id for n in whole.nodes)
    assert run_cli("validate", out)[0] == 0


def test_the_summary_says_what_was_read_inferred_and_guessed(tmp_path):
    _, err, _ = _import(tmp_path, IB / "edr-two-tier-ddr-link.topo", "ibnetdiscover", "--gpus-per-node", "8")
    assert ("read: 6 switches, 96 hosts, 144 cables, each cable's trained rate; inferred: tiers (by distance from "
            "the GPU servers), the fastest rate of 6 devices (their device id); guessed: 4 hosts' roles (by name or "
            "HCA count: --compute, --hosts), racks (servers of one leaf, 4 to a rack), GPUs (8 x H100-SXM5-80GB "
            "per server: --gpu, --gpus-per-node)") in err
    _, err, _ = _import(tmp_path, SLURM / "topology-conf5-tree.conf")
    assert "guessed: cable rates (--link-gbps 400: topology.conf has none)" in err
    _, err, _ = _import(tmp_path, DATA / "iblinkinfo" / "edr-sb7700-hpl-2node.txt", "iblinkinfo")
    assert "read: 1 switches, 3 hosts, 3 cables, each cable's trained rate" in err
