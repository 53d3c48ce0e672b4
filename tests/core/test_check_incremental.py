"""The live window's checker (design_check.DesignChecker) always returns check_document's list,
in its order, while redoing only the parts an edit can change."""
import dataclasses
import math

from designer.core.io import load_document
from designer.core.design_check import check_document
from designer.core.design_check import DesignChecker
from tests.conftest import EXAMPLES


def test_the_incremental_check_equals_the_full_check_edit_after_edit():
    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    checker = DesignChecker()
    assert checker.check(doc.snapshot()) == check_document(doc)
    switches = {s.id: s for s in doc.switches}
    uplink = next(l for l in doc.links if l.a.split(":")[0] in switches and l.b.split(":")[0] in switches)
    port = switches[uplink.a.split(":")[0]].port_gbps
    edits = [
        ("links", uplink.id, {"bandwidth_gbps": port * 2}),  # a warning appears on that link
        ("links", uplink.id, {"latency_us": 1.5}),
        ("links", uplink.id, {"bandwidth_gbps": math.inf}),  # NaN/inf: named by the NaN check
        ("links", uplink.id, {"bandwidth_gbps": port}),  # and gone again
        ("links", uplink.id, {"kind": "ethernet"}),  # a kind: the full check
        ("links", uplink.id, {"kind": "infiniband"}),
        ("job", None, {"tensor_model_parallel_size": 3}),  # a plan error
        ("job", None, {"tensor_model_parallel_size": 8}),
    ]
    full_before = checker.full_checks
    for collection, element_id, change in edits:
        if collection == "job":
            doc.set_job(parallelism=dataclasses.replace(doc.spec.parallelism, **change))
        else:
            doc.update(element_id, **change)
        assert checker.check(doc.snapshot()) == check_document(doc), change
        if change.get("bandwidth_gbps") in (port * 2, math.inf):  # the edit did make a problem
            assert any(p.element == uplink.id for p in check_document(doc))
    assert checker.full_checks == full_before + 2  # only the two kind edits needed the whole design


def test_a_new_design_gets_a_full_check():
    a = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    b = load_document(EXAMPLES / "h100-roce-2to1-ethernet.yaml")
    checker = DesignChecker()
    checker.check(a.snapshot())
    assert checker.check(b.snapshot()) == check_document(b)
    assert checker.full_checks == 2
