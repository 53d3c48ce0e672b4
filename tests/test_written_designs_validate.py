"""Every command that writes a design saves it through cli.common.save_validated: when the design
it would write does not pass `designer validate` (an error the input did not have), it exits 65,
names the problem, and leaves the target as it was. Covered: import megatron --into, generate,
calibrate -o, connect (the imports of fabrics and NCCL topologies have their own tests:
test_import_sites.py, test_nccl_topo.py)."""
import re
import types

import pytest

from designer.core.generate import generate_fat_tree
from designer.core.io import load_document, save_document
from tests.conftest import run_cli

LINE = ("--tensor-model-parallel-size 3 --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
        "--seq-length 4096 --micro-batch-size 1 --global-batch-size 128 --bf16 --vocab-size 32000")


@pytest.fixture
def design(tmp_path):
    path = tmp_path / "c.yaml"
    save_document(generate_fat_tree(nodes=8, gpu="H100", name="written"), path)
    return path


def test_import_megatron_does_not_write_a_plan_that_cannot_run(design):
    before = design.read_bytes()
    code, _, err = run_cli("import", "megatron", LINE, "--into", design)
    assert code == 65, err
    assert f"would not validate, so {design} was not written" in err and "TP 3 does not divide" in err
    assert design.read_bytes() == before and "wrote" not in err
    # a line that gives no vocabulary into a design with no workload: no vocab_size to cost it with
    code, _, err = run_cli("import", "megatron", LINE.replace(" --vocab-size 32000", "").replace("size 3 ", "size 4 "),
                           "--into", design)
    assert code == 65 and "spec.workload.vocab_size" in err and design.read_bytes() == before, err
    code, _, err = run_cli("import", "megatron", LINE.replace("size 3 ", "size 4 "), "--into", design)
    assert code == 0 and "wrote" in err, err
    assert run_cli("validate", design)[0] == 0


def test_generate_checks_what_it_built(tmp_path, monkeypatch):
    import designer.core.generate as generate

    def leaf0_cut_off(**kwargs):  # a generator that lost leaf0's spine cables
        doc = generate_fat_tree(**kwargs)
        doc.spec.links = [link for link in doc.spec.links if not re.match(r"leaf0:", link.a) or "spine" not in link.b]
        return doc

    monkeypatch.setattr(generate, "generate_fat_tree", leaf0_cut_off)
    out = tmp_path / "g.yaml"
    code, _, err = run_cli("generate", "fat-tree", "--nodes", "16", "--gpu", "H100", "--no-rail-optimized", "-o", out)
    assert code == 65 and not out.exists(), err
    assert "the generated design would not validate" in err and "leaf switch leaf0 has no up-links" in err


def test_calibrate_does_not_write_values_validate_refuses(design, tmp_path, monkeypatch):
    import designer.core.analysis.calibrate as calibrate

    wrong = types.SimpleNamespace(accepted=True, calibration={"infiniband_nic_efficiency": 1.7}, constants=[],
                                  refusals=[], notes=[], partial=None)
    monkeypatch.setattr(calibrate, "read_logs", lambda logs, op: [])
    monkeypatch.setattr(calibrate, "calibrate", lambda *a, **k: wrong)
    monkeypatch.setattr(calibrate, "format_result", lambda result: "")
    out = tmp_path / "calibrated.yaml"
    code, _, err = run_cli("calibrate", design, tmp_path / "log.txt", "-o", out)
    assert code == 65 and not out.exists(), err
    assert "the calibrated design would not validate" in err and "infiniband_nic_efficiency" in err


def test_connect_does_not_write_a_cabling_validate_refuses(design, monkeypatch):
    import designer.core.model.auto_cable as auto_cable
    from designer.core.model.elements import Link

    doc = load_document(design)
    node = doc.nodes[0].id
    bad = types.SimpleNamespace(links=[Link(id="x1", a=f"{node}:nic0", b="leaf0:p999", kind="infiniband",
                                            bandwidth_gbps=400)], summary=lambda: "1 cable")
    monkeypatch.setattr(auto_cable, "plan_connection", lambda doc, name: bad)
    before = design.read_bytes()
    code, _, err = run_cli("connect", design, "--node", node)
    assert code == 65 and design.read_bytes() == before, err
    assert f"the design with {node} cabled would not validate" in err
