"""Switches a site names l1, l2 (leaf 1, leaf 2) do not collide with the imported cables' ids."""
from designer.core.io import load_document
from tests.conftest import run_cli


def test_leaves_named_l1_l2_import_and_validate(tmp_path):
    src = tmp_path / "topology.conf"
    src.write_text("SwitchName=s1 Switches=l1,l2\nSwitchName=l1 Nodes=x[1-2]\nSwitchName=l2 Nodes=y[1-2]\n")
    out = tmp_path / "c.yaml"
    code, _, err = run_cli("import", "slurm-topology", src, "-o", out)
    assert code == 0, err  # was exit 65: duplicate id 'l1' (a switch and a cable)
    doc = load_document(out)
    ids = [x.id for x in doc.switches] + [x.id for x in doc.nodes] + [x.id for x in doc.links]
    assert len(ids) == len(set(ids)) and {"l1", "l2"} <= {s.id for s in doc.switches}
    assert run_cli("validate", out)[0] == 0
