"""--hosts MAP names and sorts hosts by their HCA's GUID (plain, or as the import named a redacted
one), not only by the name in their node description: the real Voltaire output in
tests/data/ibnetdiscover (its four hosts say only "MT23108 InfiniHost")."""
import re
from pathlib import Path

from designer.core.io import load_document
from tests.conftest import run_cli

IB = Path(__file__).resolve().parent.parent / "data" / "ibnetdiscover"
VOLTAIRE = IB / "man-page-voltaire-sdr.topo"


def _import(tmp_path, src, host_map):
    (tmp_path / "hosts.map").write_text(host_map)
    out = tmp_path / "fabric.yaml"
    code, _, err = run_cli("import", "ibnetdiscover", src, "-o", out, "--hosts", tmp_path / "hosts.map")
    return code, err, out


def test_hosts_named_by_their_guid(tmp_path):
    code, err, out = _import(tmp_path, VOLTAIRE, "0x0008f10403960984 compute gpu-a\n"  # caguid= form
                                                 "H-005442b100004900 storage nas1\n"  # the record's name
                                                 "0008f10403961354 login\n")  # bare hex: a role, no new name
    assert code == 0, err
    doc = load_document(out)
    roles = {n.id: n.role for n in doc.nodes}
    assert roles["gpu-a"] == "compute" and roles["nas1"] == "storage" and roles["H-0008f10403961354"] == "login"
    assert "H-0008f10403960984" not in roles and "H-005442b100004900" not in roles
    assert any(link.a == "gpu-a:nic0" or link.b == "gpu-a:nic0" for link in doc.links)
    assert "renamed 2 host(s): H-0008f10403960984 -> gpu-a, H-005442b100004900 -> nas1" in err
    assert run_cli("validate", out)[0] == 0


def test_redacted_guids_are_named_by_the_names_the_import_gave_them(tmp_path):
    """The UFM lab output shared with its GUIDs cut to the vendor's prefix (0xe41d<redacted>): the
    import names each fffe000000000001, ...; the map renames a host by that name."""
    src = tmp_path / "redacted.topo"
    src.write_text(re.sub(r"(0x|[SH]-|\()([0-9a-fA-F]{12,16})", lambda m: m.group(1) + m.group(2)[:4] + "<redacted>",
                          (IB / "nvidia-ufm-lab-edr-fdr.topo").read_text()))
    code, err, out = _import(tmp_path, src, "# nothing yet\n")
    assert code == 0 and "redacted GUID(s)" in err, err
    code, err, out = _import(tmp_path, src, "".join(f"fffe{i + 1:012x} service mgmt{i}\n" for i in range(12)))
    assert code == 0, err
    roles = {n.id: n.role for n in load_document(out).nodes}
    renamed = [h for h in roles if h.startswith("mgmt")]
    assert renamed and all(roles[h] == "service" for h in renamed)
    assert not any(h.startswith("r-ufm") for h in roles)  # each host came by its GUID, named or not


def test_a_name_for_several_hosts_or_a_taken_name_is_refused_at_its_line(tmp_path):
    code, err, out = _import(tmp_path, VOLTAIRE, "# hosts\nH-* compute gpu\n")
    assert code == 65 and re.search(r"hosts\.map:2:\d+: 'H-\*' matches 4 hosts", err) and not out.exists(), err
    code, err, _ = _import(tmp_path, VOLTAIRE, "0x0008f10403960984 compute a\n0x005442b100004900 compute a\n")
    assert code == 65 and "hosts.map:2:" in err and "'a' is already the name of another host" in err, err
    code, err, _ = _import(tmp_path, VOLTAIRE, "0x0008f10403960984 compute gpu:1\n")
    assert code == 65 and "hosts.map:1:28:" in err and "cannot name a host" in err, err


def test_the_other_fabric_imports_take_the_same_map(tmp_path):
    """import iblinkinfo and import slurm-topology read a MAP with a NAME column too (they exited 70
    on it): by host name, and by the GUID a sharp_cmd topology.conf names its nodes with."""
    data = IB.parent
    (tmp_path / "hosts.map").write_text("n01 compute gpu01\nmgt service\n")
    out = tmp_path / "ib.yaml"
    code, _, err = run_cli("import", "iblinkinfo", data / "iblinkinfo" / "edr-sb7700-hpl-2node.txt", "-o", out,
                           "--hosts", tmp_path / "hosts.map")
    assert code == 0 and "renamed 1 host(s): n01 -> gpu01" in err, err
    assert {n.id: n.role for n in load_document(out).nodes} == {"gpu01": "compute", "n02": "compute", "mgt": "service"}
    (tmp_path / "hosts.map").write_text("0x155dfffd33ff7d compute node-a\n")
    out = tmp_path / "slurm.yaml"
    code, _, err = run_cli("import", "slurm-topology", data / "slurm" / "azure-sharp-cmd-topology.conf", "-o", out,
                           "--hosts", tmp_path / "hosts.map", "--gpus-per-node", "1")
    assert code == 0 and "renamed 1 host(s): 0x155dfffd33ff7d -> node-a" in err, err
    assert "node-a" in {n.id for n in load_document(out).nodes}
    assert run_cli("validate", out)[0] == 0
