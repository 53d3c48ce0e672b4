"""`designer advise FILE` on a design of several jobs adds the placement moves that pay and the top 5
failure groups (text and --json keys `job_moves`, `failures`); alike failures are grouped as one row."""
import json

import pytest

from tests.conftest import EXAMPLES, run_cli

THREE_JOBS = EXAMPLES / "shared-roce-512gpu-3jobs.yaml"


@pytest.fixture(scope="module")
def advised_json():
    code, out, err = run_cli("advise", THREE_JOBS, "--json", "--no-scale")
    assert code == 0, err
    return json.loads(out)


def test_advise_json_adds_job_moves_and_the_top_failure_groups(advised_json):
    data = advised_json
    for key in ("current", "attribution", "ranked", "not_applicable"):  # nothing renamed
        assert key in data
    failures = data["failures"]
    assert 1 <= len(failures) <= 5
    shares = [f["lost_gpu_share"] for f in failures]
    assert shares == sorted(shares, reverse=True)
    stops = [f for f in failures if f["kind"] == "leaf switch" and f["stopped"]]
    assert stops and stops[0]["lost_gpu_share"] > 0 and "stops" in stops[0]["text"]
    # one server of each job: each stops the job that has it (not one group of "alike" servers)
    servers = [f for f in failures if f["kind"] == "server"]
    assert len(servers) == 3 and sorted(f["stopped"][0] for f in servers) == ["llama3-70b", "llama3-8b",
                                                                               "qwen3-30b-moe"]
    moves = data["job_moves"]
    assert moves and moves[0]["text"].startswith("move ") and min(moves[0]["step_change"].values()) < 0


def test_advise_text_has_the_jobs_section():
    code, out, err = run_cli("advise", THREE_JOBS, "--no-scale")
    assert code == 0, err
    assert "changes, best first" in out  # the per-job advice stays first
    moves_at = out.index("placement moves that pay")
    fails_at = out.index("what if one part fails: the 5 costliest of")
    assert moves_at < fails_at
    assert "\n    move qwen3-30b-moe" in out[moves_at:fails_at]
    rows = out[fails_at:].splitlines()[1:]
    assert len(rows) == 5 and any("server node16 down: stops llama3-70b" in r for r in rows)
    assert any("leaf switch" in r and "stops" in r for r in rows)


def test_advise_on_one_job_has_no_jobs_section():
    code, out, err = run_cli("advise", EXAMPLES / "h100-64gpu-infiniband.yaml", "--json", "--no-scale")
    assert code == 0, err
    data = json.loads(out)
    assert "job_moves" not in data and "failures" not in data


def test_alike_failures_are_one_group_costliest_first():
    from designer.core.analysis.failure_groups import group_failures
    from designer.core.analysis.failures import Failure

    ranked = [Failure("leaf0", "leaf switch", stopped=["a"], lost_gpu_share=0.5),
              Failure("leaf1", "leaf switch", stopped=["a"], lost_gpu_share=0.5),
              Failure("spine0", "spine switch", slowdown={"a": 0.1, "b": 0.02}, lost_gpu_share=0.06),
              Failure("node3", "server", stopped=["b"], lost_gpu_share=0.5),
              Failure("l9", "leaf-spine link", slowdown={"a": 0.0}, lost_gpu_share=0.0)]
    groups = group_failures(ranked)
    assert [g.elements for g in groups] == [["leaf0", "leaf1"], ["node3"], ["spine0"], ["l9"]]
    assert groups[0].text == "2 leaf switches (leaf0, leaf1), each down: stops a"
    assert groups[2].text == "spine switch spine0 down: a +10.0%, b +2.0%"
    assert groups[3].effect == "costs nothing"
    assert groups[1].set_argument() == "nodes[node3].state=down"
    assert groups[3].set_argument() == "links[l9].state=down"
