"""validate and evaluate apply the same fabric rules (model/network_reach.py): what validate
accepts, evaluate costs; what evaluate cannot route, validate names at the switch."""
import pytest

from tests.conftest import run_cli

HEAD = """\
apiVersion: designer/v1
kind: Cluster
metadata: {name: reach}
spec:
  nodes:
  - {id: node0, accelerator: H100-SXM5-80GB, nic_count: 1, gpus_per_nic: 8}
  - {id: node1, accelerator: H100-SXM5-80GB, nic_count: 1, gpus_per_nic: 8}
  - {id: node2, accelerator: H100-SXM5-80GB, nic_count: 1, gpus_per_nic: 8}
  - {id: node3, accelerator: H100-SXM5-80GB, nic_count: 1, gpus_per_nic: 8}
  switches:
"""
SERVERS = """\
  - {id: n0, a: "node0:nic0", b: "A:p0", kind: infiniband, bandwidth_gbps: 400}
  - {id: n1, a: "node1:nic0", b: "A:p1", kind: infiniband, bandwidth_gbps: 400}
  - {id: n2, a: "node2:nic0", b: "B:p0", kind: infiniband, bandwidth_gbps: 400}
  - {id: n3, a: "node3:nic0", b: "B:p1", kind: infiniband, bandwidth_gbps: 400}
"""
JOB = """\
  workload: {preset: llama3-8b}
  parallelism: {tensor_model_parallel_size: 8, data_parallel_size: 4}
"""


def sw(name, tier):
    return f"  - {{id: {name}, fabric: infiniband, tier: {tier}, radix: 8}}\n"


def cable(name, a, b):
    return f'  - {{id: {name}, a: "{a}", b: "{b}", kind: infiniband, bandwidth_gbps: 400}}\n'


# switches, switch-to-switch cables, and what validate says (None: ok)
CASES = {
    "leaf-spine": (sw("A", "leaf") + sw("B", "leaf") + sw("S", "spine"),
                   cable("u0", "A:p4", "S:p0") + cable("u1", "B:p4", "S:p1"), None),
    # a lab's two leaves cabled to each other: the cable is the way out of each
    "two leaves cabled": (sw("A", "leaf") + sw("B", "leaf"), cable("u0", "A:p4", "B:p4"), None),
    "leaves to a core": (sw("A", "leaf") + sw("B", "leaf") + sw("C", "core"),
                         cable("u0", "A:p4", "C:p0") + cable("u1", "B:p4", "C:p1"), None),
    # servers on a switch marked spine whose only cable goes down to a leaf: no up-link
    "servers on a spine": (sw("A", "spine") + sw("B", "leaf") + sw("S", "spine"),
                           cable("u0", "A:p4", "B:p5") + cable("u1", "B:p4", "S:p1"), "spine switch A has no up-links"),
    "two pods, no core": (sw("A", "leaf") + sw("B", "leaf") + sw("S", "spine") + sw("T", "spine"),
                          cable("u0", "A:p4", "S:p0") + cable("u1", "B:p4", "T:p1"),
                          "the pod of S (its leaves and spines) has no cable to a core switch"),
    "one pod off the core": (sw("A", "leaf") + sw("B", "leaf") + sw("S", "spine") + sw("T", "spine") + sw("C", "core"),
                             cable("u0", "A:p4", "S:p0") + cable("u1", "B:p4", "T:p1") + cable("c0", "S:p5", "C:p0"),
                             "the pod of T (its leaves and spines) has no cable to a core switch"),
    "two cores not joined": (sw("A", "leaf") + sw("B", "leaf") + sw("S", "spine") + sw("T", "spine")
                             + sw("C", "core") + sw("D", "core"),
                             cable("u0", "A:p4", "S:p0") + cable("u1", "B:p4", "T:p1") + cable("c0", "S:p5", "C:p0")
                             + cable("c1", "T:p5", "D:p0"), "core switch(es) C reach no other core switch"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_validate_and_evaluate_agree(case, tmp_path):
    switches, cables, refusal = CASES[case]
    path = tmp_path / "reach.yaml"
    path.write_text(HEAD + switches + "  links:\n" + SERVERS + cables + JOB)
    v_code, _, v_err = run_cli("validate", path)
    e_code, out, e_err = run_cli("evaluate", path, "--json")
    if refusal is None:
        assert ": 0 error(s)" in v_err or v_code == 0, v_err  # (warnings: no racks in this sketch)
        assert e_code == 0 and '"step_time_s"' in out, e_err
    else:
        assert v_code == 65 and e_code == 65 and out == "", (v_err, e_err)
        assert refusal in v_err and "cannot reach the other 2 server(s)" in v_err
        assert f"{path}:" in v_err  # located at the switch's line


def test_the_engine_alone_routes_the_two_leaves(tmp_path):
    """The API, no check in front: the engine costs a step over the cable that joins two leaves."""
    from designer.core.engine.evaluate import Engine
    from designer.core.io import load_document

    switches, cables, _ = CASES["two leaves cabled"]
    path = tmp_path / "reach.yaml"
    path.write_text(HEAD + switches + "  links:\n" + SERVERS + cables + JOB)
    result = Engine().evaluate(load_document(path))
    assert 0 < result.step_time_s < float("inf")
