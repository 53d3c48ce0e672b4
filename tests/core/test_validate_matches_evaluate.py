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


# A leaf-spine fabric with two spines, leaves A (node0, node1) and B (node2, node3) and C (node4, node5),
# each leaf with one up-link to each spine.
SIX = HEAD.replace("  switches:\n", """\
  - {id: node4, accelerator: H100-SXM5-80GB, nic_count: 1, gpus_per_nic: 8}
  - {id: node5, accelerator: H100-SXM5-80GB, nic_count: 1, gpus_per_nic: 8}
  switches:
""") + sw("A", "leaf") + sw("B", "leaf") + sw("C", "leaf") + sw("S", "spine") + sw("T", "spine") + "  links:\n"
SIX_SERVERS = SERVERS + cable("n4", "node4:nic0", "C:p0") + cable("n5", "node5:nic0", "C:p1")
SIX_UPLINKS = {f"u{leaf}{spine}": (f"{leaf}:p{4 + k}", f"{spine}:p{2 * i + k}")
               for i, leaf in enumerate("ABC") for k, spine in enumerate("ST")}


def six(gpus: int, down: tuple[str, ...] = (), servers: str = SIX_SERVERS) -> str:
    ups = "".join(cable(name, a, b).replace("}\n", ", state: down}\n") if name in down else cable(name, a, b)
                  for name, (a, b) in SIX_UPLINKS.items())
    return SIX + servers + ups + f"""\
  workload: {{preset: llama3-8b, global_batch_size: 96}}
  parallelism: {{tensor_model_parallel_size: 8, num_gpus: {gpus}}}
"""


def test_a_leaf_cut_off_by_down_uplinks_is_skipped(tmp_path):
    """Leaf A's two up-links marked down: a state, not a design error. validate passes; evaluate costs the
    32-GPU job on the four servers of B and C and says it skipped node0 and node1, and why."""
    path = tmp_path / "down.yaml"
    path.write_text(six(32, down=("uAS", "uAT")))
    v_code, _, v_err = run_cli("validate", path)
    assert ": 0 error(s)" in v_err or v_code == 0, v_err
    e_code, out, e_err = run_cli("evaluate", path, "--json")
    assert e_code == 0, e_err
    assert "skipped" in e_err and "node0, node1" in e_err and "uAS, uAT" in e_err, e_err
    import json

    job = json.loads(out)
    assert job["num_gpus"] == 32 and 0 < job["step_time_s"] < float("inf")


def test_too_few_servers_left_is_refused_by_validate_at_the_line(tmp_path):
    """Spine S down and T's cables to B and C down: each leaf alone; a 32-GPU job does not fit on any
    two servers. validate refuses at num_gpus' FILE:LINE:COLUMN naming the elements marked down and the
    fix; evaluate says the same, never an error about a leaf's traffic."""
    text = six(32, down=("uBT", "uCT")).replace("{id: S, fabric: infiniband, tier: spine, radix: 8}",
                                                 "{id: S, fabric: infiniband, tier: spine, radix: 8, state: down}")
    path = tmp_path / "down.yaml"
    path.write_text(text)
    line = 1 + text.splitlines().index(next(x for x in text.splitlines() if "num_gpus" in x))
    v_code, _, v_err = run_cli("validate", path)
    e_code, out, e_err = run_cli("evaluate", path)
    assert v_code == 65 and e_code == 65 and out == "", (v_err, e_err)
    for said in (v_err, e_err):
        assert f"{path}:{line}:" in said and "32 GPUs across servers but 16" in said, said
        assert "uBT" in said and "mark the elements named up" in said, said


def test_a_server_whose_gpu_has_no_cabled_nic_is_skipped(tmp_path):
    """node0's only NIC not cabled: validate warns about the NIC; a job across servers runs on the
    others and evaluate says it skipped node0 (it used to refuse: 'GPU 0 of node0 has no connected NIC')."""
    servers = SIX_SERVERS.replace(cable("n0", "node0:nic0", "A:p0"), "")
    path = tmp_path / "nic.yaml"
    path.write_text(six(32, servers=servers))
    v_code, _, v_err = run_cli("validate", path)
    assert ": 0 error(s)" in v_err and "1 NIC(s) of node0 not connected" in v_err, v_err
    e_code, out, e_err = run_cli("evaluate", path)
    assert e_code == 0, e_err
    assert "skipped" in e_err and "node0: GPU 0's NIC nic0 is not cabled" in e_err, e_err


def test_a_job_needing_the_uncabled_server_is_refused_by_validate(tmp_path):
    """The same with a 48-GPU job: five usable servers hold 40 GPUs. validate refuses (an error, not only
    the NIC warning) and names node0's NIC and the fix; evaluate the same."""
    servers = SIX_SERVERS.replace(cable("n0", "node0:nic0", "A:p0"), "")
    path = tmp_path / "nic.yaml"
    path.write_text(six(48, servers=servers))
    v_code, _, v_err = run_cli("validate", path)
    e_code, _, e_err = run_cli("evaluate", path)
    assert v_code == 65 and e_code == 65, (v_err, e_err)
    for said in (v_err, e_err):
        assert "48 GPUs across servers but 40" in said and "nic0 is not cabled" in said, said
        assert "cable the NICs named" in said and f"{path}:" in said, said
    assert "1 error(s)" in v_err


def test_a_one_server_job_still_runs_on_a_cut_off_server(tmp_path):
    """A job of one server needs no network: nothing is skipped."""
    path = tmp_path / "small.yaml"
    path.write_text(six(8, down=("uAS", "uAT")))
    e_code, _, e_err = run_cli("evaluate", path)
    assert e_code == 0 and "skipped" not in e_err, e_err


def test_the_windows_engine_follows_parts_going_down_and_up(tmp_path):
    """One Engine across edits, as the window keeps it: the servers a job skips follow each state edit
    (the placement it remembers is not reused once other cables are out of service)."""
    from designer.core.engine.evaluate import Engine
    from designer.core.io import load_document
    from designer.core.problems import DesignerError

    path = tmp_path / "live.yaml"
    path.write_text(six(32))
    doc, engine = load_document(path), Engine()
    assert engine.evaluate(doc).warnings == []
    for name in ("uAS", "uAT"):
        doc.update(name, state="down")
    result = engine.evaluate(doc)
    assert any("skipped" in w and "node0, node1" in w for w in result.warnings)
    assert result.jobs[0].node_ids == ["node2", "node3", "node4", "node5"]
    for name in ("uAS", "uAT"):
        doc.update(name, state="up")
    engine.evaluate(doc)
    for name in ("S", "uBT", "uCT"):
        doc.update(name, state="down")
    with pytest.raises(DesignerError, match="32 GPUs across servers but 16"):
        engine.evaluate(doc)


def _jobs(text: str, jobs: list[tuple[str, str]]) -> str:
    """`six`'s design with spec.jobs (name, placement) in place of its one job."""
    head = text[:text.index("  workload:")]
    return head + "  jobs:\n" + "".join(
        f"  - name: {name}\n    workload: {{preset: llama3-8b, global_batch_size: 96}}\n"
        f"    parallelism: {{tensor_model_parallel_size: 8}}\n    placement: {placement}\n" for name, placement in jobs)


@pytest.mark.parametrize("jobs, refusal", [
    ([("a", "{gpus: 16}"), ("b", "{gpus: 16}")], None),  # both fit on B's and C's four servers
    ([("a", "{gpus: 24}"), ("b", "{gpus: 16}")], "the jobs larger than one server need 40 GPUs but 32"),
    ([("a", "{gpus: 16}"), ("c", "{nodes: [node0, node1]}")], "job c lists server node0, which it cannot reach"),
])
def test_several_jobs_around_a_leaf_cut_off(jobs, refusal, tmp_path):
    path = tmp_path / "jobs.yaml"
    path.write_text(_jobs(six(32, down=("uAS", "uAT")), jobs))
    v_code, _, v_err = run_cli("validate", path)
    e_code, _, e_err = run_cli("evaluate", path)
    if refusal is None:
        assert ": 0 error(s)" in v_err and e_code == 0, (v_err, e_err)
        assert "skipped servers it cannot reach: node0, node1" in e_err
    else:
        assert v_code == 65 and e_code == 65 and refusal in v_err and refusal in e_err, (v_err, e_err)
        assert f"{path}:" in v_err and "uAS, uAT" in v_err
