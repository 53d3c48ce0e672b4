"""The ibnetdiscover-format file ibdiagnet writes on a real NDR cluster (tests/data/ibnetdiscover/
ibdiagnet-ndr-quantum2-32x8.topo): Quantum-2 ports print their cage label after the port number
(`[1](1/1/1)`), HCA ports a label and a GUID (`[1](1)(5c2573...)`); the fabric comes in whole."""
from collections import Counter
from pathlib import Path

from designer.core.io import load_document
from tests.conftest import run_cli

SRC = Path(__file__).resolve().parent.parent / "data" / "ibnetdiscover" / "ibdiagnet-ndr-quantum2-32x8.topo"


def test_an_ibdiagnet_ndr_fabric_comes_in_as_the_file_holds_it(tmp_path):
    out = tmp_path / "ndr.yaml"
    code, _, err = run_cli("import", "ibnetdiscover", SRC, "-o", out)
    assert code == 0, err  # was exit 65 at line 20: "cannot read this port line: '[1](1/1/1) ...'"
    doc = load_document(out)
    # what the file holds: 8 Quantum-2 leaves (one per rail) and a QM9700 spine; 32 servers with 8
    # ConnectX-7 NDR HCAs each; 256 HCA cables and one cable from each leaf to the spine; 7 SHARP nodes
    assert Counter(s.tier for s in doc.switches) == {"leaf": 8, "spine": 1}
    assert len(doc.nodes) == 32 and {n.nic_count for n in doc.nodes} == {8} and doc.num_gpus() == 256
    assert len(doc.links) == 264 and {l.bandwidth_gbps for l in doc.links} == {400}
    assert "left out 7 router(s) and SHARP aggregation node(s)" in err
    assert "8 leaf at 32:1 (102400:3200 Gb/s down:up), 1 spine" in err  # what an architect must see
    assert run_cli("validate", out)[0] == 0
