"""A cable that trained below the others changes the step where the flows cannot avoid it: a hashed
(RoCE ECMP) flow on it drains at its rate; adaptive routing moves traffic off it."""
from pathlib import Path

import pytest

from tests.conftest import run_cli

JOB = ["--set", "workload.preset=llama3-8b", "--set", "parallelism.tensor_model_parallel_size=8",
       "--set", "workload.global_batch_size=256"]


def split_one_cable(path: Path, kind: str) -> Path:
    """leaf0's first spine bundle of 16 cables as 15, plus one cable of its own (l999) to set apart."""
    text = path.read_text(encoding="utf-8")
    old = (f'  - {{"id": "l128", "a": "leaf0:p32", "b": "spine0:p0", "kind": "{kind}", "bandwidth_gbps": 400, '
           f'"latency_us": 0.05, "count": 16}}')
    assert old in text
    new = (old.replace('"count": 16', '"count": 15') + "\n" + f'  - {{"id": "l999", "a": "leaf0:p47", "b": '
           f'"spine0:p15", "kind": "{kind}", "bandwidth_gbps": 400, "latency_us": 0.05}}')
    out = path.with_name(path.stem + "-split.yaml")
    out.write_text(text.replace(old, new), encoding="utf-8")
    assert run_cli("validate", out)[0] == 0
    return out


def step(path: Path, gbps: float) -> float:
    import json

    code, out, err = run_cli("evaluate", path, *JOB, "--set", f"links[l999].bandwidth_gbps={gbps}", "--json")
    assert code == 0, err
    return json.loads(out)["step_time_s"]


@pytest.fixture(scope="module")
def fabrics(tmp_path_factory):
    folder = tmp_path_factory.mktemp("slow")
    made = {}
    for fabric in ("ethernet", "infiniband"):
        path = folder / f"{fabric}.yaml"
        assert run_cli("generate", "fat-tree", "-o", path, "--nodes", "16", "--gpu", "H100", "--fabric", fabric,
                       "--no-rail-optimized")[0] == 0
        made[fabric] = split_one_cable(path, fabric)
    return made


def test_a_roce_up_link_trained_at_20g_slows_the_step_its_hashed_flows_cross(fabrics):
    full, slow = step(fabrics["ethernet"], 400), step(fabrics["ethernet"], 20)
    assert slow > 1.05 * full  # one of leaf0's 32 up-links at 20 Gb/s: its flows finish last


def test_adaptive_routing_pays_only_the_slow_cables_share_of_the_capacity(fabrics):
    full, slow = step(fabrics["infiniband"], 400), step(fabrics["infiniband"], 20)
    assert slow == pytest.approx(full, rel=0.01)


def test_the_drag_follows_the_expected_share_of_flows_on_the_slow_cable():
    import numpy as np

    from designer.core.engine.flows import slow_cable_drag

    cables, capacity = np.array([32.0]), np.array([31 * 400.0 + 20.0])
    few, many = (slow_cable_drag(np.array([f]), cables, capacity, np.array([20.0]))[0] for f in (1.0, 256.0))
    assert 1.0 < few < many  # one flow rarely lands on the slow cable; 256 almost surely do
    assert many == pytest.approx(capacity[0] / 32 / 20, rel=0.01)
    even = slow_cable_drag(np.array([256.0]), cables, np.array([32 * 400.0]), np.array([400.0]))[0]
    assert even == 1.0


def test_the_advisor_names_the_slow_cable_and_what_re_seating_it_buys(fabrics):
    import json

    code, out, err = run_cli("advise", fabrics["ethernet"], *JOB, "--set", "links[l999].bandwidth_gbps=20", "--json")
    assert code == 0, err
    change = next(c for c in json.loads(out)["ranked"] if c["id"] == "slow-cables")
    assert change["title"] == "re-seat l999 (trained at 20 Gb/s, its peers 400)"
    assert change["speedup"] > 0.05
    code, out, err = run_cli("advise", fabrics["ethernet"], *JOB, "--json")
    assert not any(c["id"] == "slow-cables" for c in json.loads(out)["ranked"])  # nothing slow, nothing said


def test_an_imported_cable_that_trained_at_ddr_among_edr_is_named(tmp_path):
    from designer.core.analysis.fabric_edits import slow_cables
    from designer.core.io import load_document

    data = Path(__file__).parents[1] / "data" / "ibnetdiscover" / "edr-two-tier-ddr-link.topo"
    out = tmp_path / "edr.yaml"
    code, _, err = run_cli("import", "ibnetdiscover", data, "-o", out)
    assert code == 0, err
    assert [(gbps, usual) for _, gbps, usual in slow_cables(load_document(out))] == [(20.0, 100.0)]


@pytest.fixture(scope="module")
def static_ib(tmp_path_factory):
    """The InfiniBand fabric as many sites run it: adaptive routing off (`generate --routing static`)."""
    path = tmp_path_factory.mktemp("static") / "static.yaml"
    code, _, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", "16", "--gpu", "H100", "--fabric",
                           "infiniband", "--no-rail-optimized", "--routing", "static")
    assert code == 0, err
    return split_one_cable(path, "infiniband")


def test_infiniband_static_routing_keeps_flows_on_a_slow_cable(static_ib, fabrics):
    full, slow = step(static_ib, 400), step(static_ib, 20)
    assert slow > 1.01 * full  # a destination's path is fixed: the flows routed over l999 run at 20 Gb/s
    assert full == pytest.approx(step(fabrics["infiniband"], 400), rel=1e-9)  # healthy cables: as adaptive


def test_static_routing_is_a_switch_setting(fabrics):
    import json

    code, out, err = run_cli("evaluate", fabrics["infiniband"], *JOB, "--set", "links[l999].bandwidth_gbps=20",
                             "--set", "switches[leaf0].routing=static", "--json")
    assert code == 0, err
    assert json.loads(out)["step_time_s"] > 1.01 * step(fabrics["infiniband"], 400)


def test_the_advisor_names_the_cable_and_adaptive_routing_under_static_routing(static_ib, fabrics):
    import json

    code, out, err = run_cli("advise", static_ib, *JOB, "--set", "links[l999].bandwidth_gbps=20", "--json")
    assert code == 0, err
    ranked = {c["id"]: c for c in json.loads(out)["ranked"]}
    assert ranked["slow-cables"]["title"] == "re-seat l999 (trained at 20 Gb/s, its peers 400)"
    assert ranked["slow-cables"]["speedup"] > 0.01
    assert ranked["adaptive-routing"]["title"] == "adaptive routing on 6 InfiniBand switches"
    assert ranked["adaptive-routing"]["speedup"] > 0.01
    code, out, err = run_cli("advise", fabrics["infiniband"], *JOB, "--json")
    assert not any(c["id"] == "adaptive-routing" for c in json.loads(out)["ranked"])


def test_a_routing_the_format_does_not_know_is_refused_where_it_is(tmp_path, fabrics):
    text = fabrics["infiniband"].read_text(encoding="utf-8").replace('"tier": "leaf",', '"tier": "leaf", "routing": "statik",', 1)
    bad = tmp_path / "bad.yaml"
    bad.write_text(text, encoding="utf-8")
    code, _, err = run_cli("validate", bad)
    assert code == 65 and "routing: 'statik' is not one of ecmp, static, adaptive, scheduled" in err
    assert f"{bad}:" in err and "did you mean static?" in err
    with pytest.raises(SystemExit) as exc:  # argparse: usage error, exit 2
        run_cli("generate", "fat-tree", "-o", tmp_path / "x.yaml", "--nodes", "2", "--gpu", "H100",
                "--routing", "statik")
    assert exc.value.code != 0 and not (tmp_path / "x.yaml").exists()
