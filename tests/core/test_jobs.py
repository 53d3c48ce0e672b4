"""Several jobs on one fabric, and parts down: spec.jobs, the placer, interference, state."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from designer.core.engine.evaluate import Engine
from designer.core.generate import generate_fat_tree
from designer.core.io.files import load_document, save_document
from designer.core.model import Parallelism, Workload
from designer.core.model.jobs import JobPlacement, JobSpec
from designer.core.problems import DesignerError
from tests.conftest import run_cli

EXAMPLES = Path(__file__).resolve().parents[2] / "resources" / "examples"
DP_HEAVY = Parallelism(tensor_model_parallel_size=1, use_distributed_optimizer=True)


def _small_job(name: str, placement: JobPlacement, gbs: int = 64) -> JobSpec:
    return JobSpec(name, Workload(preset="llama3-8b", global_batch_size=gbs, micro_batch_size=1), DP_HEAVY, placement)


def _tor(nodes=64, oversubscription=1.0, fabric="ethernet", **kw):
    return generate_fat_tree(nodes=nodes, gpu="H100", fabric=fabric, oversubscription=oversubscription,
                             rail_optimized=False, **kw)


def _nodes_under_leaves(doc) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for link in doc.links:
        a, b = link.a.split(":")[0], link.b.split(":")[0]
        if doc.find("nodes", a) and doc.find("switches", b):
            out.setdefault(b, [])
            if a not in out[b]:
                out[b].append(a)
    return out


def test_two_jobs_on_disjoint_leaves_of_a_non_blocking_fabric_do_not_slow_each_other():
    doc = _tor(nodes=16)
    leaves = list(_nodes_under_leaves(doc).values())
    a_nodes, b_nodes = leaves[0] + leaves[1], leaves[2] + leaves[3]
    doc.set_jobs([_small_job("a", JobPlacement(nodes=a_nodes)), _small_job("b", JobPlacement(nodes=b_nodes))])
    result = Engine().evaluate(doc)
    for job in result.jobs:
        assert abs(job.slowdown_vs_alone) <= 0.001
        assert job.interference == []
    # and alone means alone: the same job as the only one of the design
    only = _tor(nodes=16)
    only.set_jobs([_small_job("a", JobPlacement(nodes=a_nodes))])
    assert Engine().evaluate(only).step_time_s == pytest.approx(result.jobs[0].result.step_time_s, rel=1e-3)


def _interleaved(oversubscription: float):
    doc = _tor(nodes=64, oversubscription=oversubscription)
    ids = [n.id for n in doc.nodes][32:]  # the two jobs alternate servers under the same leaves
    doc.set_jobs([_small_job("a", JobPlacement(nodes=ids[0::2]), gbs=128),
                  _small_job("b", JobPlacement(nodes=ids[1::2]), gbs=128)])
    return Engine().evaluate(doc)


def test_jobs_sharing_oversubscribed_up_links_both_slow_down_and_more_when_oversubscription_grows():
    at4, at8 = _interleaved(4.0), _interleaved(8.0)
    for result in (at4, at8):
        assert all(job.slowdown_vs_alone > 0.005 for job in result.jobs)
        for job in result.jobs:
            other = "b" if job.name == "a" else "a"
            assert job.interference[0]["job"] == other and job.interference[0]["resource"] == "leaf up-links"
            assert sum(r["share"] for r in job.interference) == pytest.approx(job.slowdown_vs_alone, rel=1e-6)
    for j4, j8 in zip(at4.jobs, at8.jobs):
        assert j8.slowdown_vs_alone > j4.slowdown_vs_alone


def test_a_spine_down_slows_an_up_link_bound_all_reduce_by_the_lost_capacity():
    doc = _tor(nodes=32, oversubscription=4.0, fabric="infiniband", switch_radix=32)
    doc.set_job(Workload(preset="llama3-8b", global_batch_size=256, micro_batch_size=1), DP_HEAVY)
    engine = Engine()
    before = engine.evaluate(doc)
    assert "up-links of leaf" in before.bottlenecks[0]["resource"] + before.bottlenecks[1]["resource"]
    spines = [s.id for s in doc.switches if s.tier == "spine"]
    doc.update(spines[0], state="down")
    after = engine.evaluate(doc)
    predicted = len(spines) / (len(spines) - 1)  # every leaf keeps (S-1)/S of its up-links
    ratio = after.breakdown_s["dp_comm"] / before.breakdown_s["dp_comm"]
    assert ratio == pytest.approx(predicted, rel=0.08)
    assert after.step_time_s > before.step_time_s
    # and the same from a file with --set, as a user would ask it
    doc.update(spines[0], state="up")


def test_a_link_down_on_a_path_without_redundancy_names_the_job_and_the_link(tmp_path):
    doc = _tor(nodes=16)
    ids = [n.id for n in doc.nodes]
    doc.set_jobs([_small_job("train", JobPlacement(nodes=ids[:8])), _small_job("other", JobPlacement(nodes=ids[8:]))])
    nic_cable = next(l for l in doc.links if l.a.startswith(ids[3] + ":") or l.b.startswith(ids[3] + ":"))
    path = tmp_path / "jobs.yaml"
    save_document(doc, path)
    code, out, err = run_cli("evaluate", str(path), "--set", f"links[{nic_cable.id}].state=down")
    assert code == 65
    assert "job train" in err and nic_cable.id in err and "down" in err


def test_more_jobs_never_make_a_job_faster():
    doc = _tor(nodes=64, oversubscription=4.0)
    ids = [n.id for n in doc.nodes][32:]
    jobs = [_small_job("a", JobPlacement(nodes=ids[0::4]), gbs=64), _small_job("b", JobPlacement(nodes=ids[1::4]), gbs=64),
            _small_job("c", JobPlacement(nodes=ids[2::4]), gbs=64), _small_job("d", JobPlacement(nodes=ids[3::4]), gbs=64)]
    steps = []
    for n in range(1, 5):
        doc.set_jobs(jobs[:n])
        result = Engine().evaluate(doc)
        steps.append(result.jobs[0].result.step_time_s)
    assert all(later >= earlier * (1 - 1e-9) for earlier, later in zip(steps, steps[1:]))
    assert steps[-1] > steps[0]


def test_the_placer_never_gives_a_gpu_twice_and_says_which_job_did_not_fit():
    doc = _tor(nodes=16)
    doc.set_jobs([_small_job("a", JobPlacement(policy="packed", gpus=64)),
                  _small_job("b", JobPlacement(policy="spread", gpus=32)),
                  _small_job("c", JobPlacement(policy="packed", gpus=64))])
    with pytest.raises(DesignerError) as exc:
        Engine().evaluate(doc)
    text = str(exc.value)
    assert "job c does not fit" in text and "64 GPUs" in text and "32 are free" in text
    doc.set_jobs(doc.spec.jobs[:2])
    result = Engine().evaluate(doc)
    seen = set()
    for job in result.jobs:
        gpus = set(job.placed.gpus.tolist())
        assert not gpus & seen
        seen |= gpus
    assert [len(job.placed.gpus) for job in result.jobs] == [64, 32]


def test_a_server_down_removes_its_gpus_and_the_placer_names_the_job_that_lost_it():
    doc = _tor(nodes=16)
    ids = [n.id for n in doc.nodes]
    doc.set_jobs([_small_job("a", JobPlacement(nodes=ids[:8])), _small_job("b", JobPlacement(policy="packed", gpus=64))])
    doc.update(ids[2], state="down")
    with pytest.raises(DesignerError) as exc:
        Engine().evaluate(doc)
    assert f"job a lost server {ids[2]}" in str(exc.value)
    # a policy job simply avoids it
    doc.set_jobs([_small_job("b", JobPlacement(policy="packed", gpus=64))])
    result = Engine().evaluate(doc)
    assert ids[2] not in result.jobs[0].node_ids
    # one job on the whole cluster (no spec.jobs): it lost GPUs, and says so
    single = _tor(nodes=16)
    single.set_job(Workload(preset="llama3-8b", global_batch_size=128, micro_batch_size=1), DP_HEAVY)
    single.update(ids[5], gpus_down=2)
    with pytest.raises(DesignerError) as exc:
        Engine().evaluate(single)
    assert "needs 128 GPUs but 126 are up" in str(exc.value) and ids[5] in str(exc.value)


def test_jobs_survive_save_and_reopen_and_evaluate_json_lists_them(tmp_path):
    path = EXAMPLES / "shared-roce-512gpu-3jobs.yaml"
    doc = load_document(path)
    assert [j.name for j in doc.spec.jobs] == ["llama3-70b", "llama3-8b", "qwen3-30b-moe"]
    again = tmp_path / "again.yaml"
    save_document(doc, again)
    assert load_document(again).spec.jobs == doc.spec.jobs
    code, out, err = run_cli("evaluate", str(again), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert [j["name"] for j in data["jobs"]] == ["llama3-70b", "llama3-8b", "qwen3-30b-moe"]
    assert data["step_time_s"] == data["jobs"][0]["step_time_s"]  # today's fields are the first job's
    for job in data["jobs"]:
        assert set(job) >= {"name", "gpus", "step_time_s", "breakdown_s", "slowdown_vs_alone", "interference"}
        assert job["slowdown_vs_alone"] >= 0
    moe = data["jobs"][2]
    assert moe["slowdown_vs_alone"] > 0.005 and moe["interference"][0]["resource"] == "leaf up-links"
    code, out, err = run_cli("evaluate", str(again))
    assert code == 0 and out.count("\njob ") + out.startswith("job ") == 3 and "3 jobs on 512 of 512 GPUs" in out


def test_the_spine_down_example_costs_the_moe_job_more_than_the_shared_one():
    up = json.loads(run_cli("evaluate", str(EXAMPLES / "shared-roce-512gpu-3jobs.yaml"), "--json")[1])
    down = json.loads(run_cli("evaluate", str(EXAMPLES / "shared-roce-512gpu-3jobs-spine-down.yaml"), "--json")[1])
    for a, b in zip(up["jobs"], down["jobs"]):
        assert b["step_time_s"] >= a["step_time_s"] * (1 - 1e-9)
    assert down["jobs"][2]["step_time_s"] > up["jobs"][2]["step_time_s"] * 1.05
    # the same question with --set on the shared file
    code, out, _ = run_cli("evaluate", str(EXAMPLES / "shared-roce-512gpu-3jobs.yaml"), "--json",
                           "--set", "switches[spine0].state=down")
    assert code == 0
    assert json.loads(out)["jobs"][2]["step_time_s"] == pytest.approx(down["jobs"][2]["step_time_s"], rel=1e-9)


def test_validate_names_each_jobs_problem_at_its_line(tmp_path):
    text = (EXAMPLES / "shared-roce-512gpu-3jobs.yaml").read_text().replace("        gpus: 128", "        gpus: 200")
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    code, _, err = run_cli("validate", str(bad))
    assert code == 65
    assert "spec.jobs[2].parallelism.expert_model_parallel_size: job qwen3-30b-moe" in err
    assert "the jobs ask for 656 GPUs but the design has 512 that are up" in err
    assert f"{bad}:" in err  # FILE:LINE of the key
    code, _, err = run_cli("validate", str(EXAMPLES / "shared-roce-512gpu-3jobs-spine-down.yaml"))
    assert code == 0, err


@pytest.mark.slow
def test_plan_level_commands_take_one_job_and_report_lists_them_all(tmp_path):
    example = str(EXAMPLES / "shared-roce-512gpu-3jobs.yaml")
    code, out, err = run_cli("advise", example, "--job", "qwen3-30b-moe", "--no-scale")
    assert code == 0, err
    assert "job qwen3-30b-moe alone on 128 GPUs" in err and "EP 32" in out
    code, _, err = run_cli("advise", example, "--job", "nope")
    assert code == 65 and "no job named 'nope'" in err and "llama3-8b" in err
    code, _, err = run_cli("report", example, "-o", str(tmp_path / "r.pdf"))
    assert code == 0, err
    assert (tmp_path / "r.pdf").read_bytes().startswith(b"%PDF")


def test_marking_parts_down_and_editing_jobs_are_checked_incrementally_and_agree_with_the_full_check():
    from designer.core.design_check import check_document
    from designer.core.live_check import DesignChecker

    doc = load_document(EXAMPLES / "shared-roce-512gpu-3jobs.yaml")
    checker = DesignChecker()
    checker.check(doc)
    doc.update("spine1", state="down")
    doc.update("node3", gpus_down=9)  # more than it has: the jobs' check names it
    jobs = list(doc.spec.jobs)
    jobs[1] = JobSpec("llama3-8b", jobs[1].workload, jobs[1].parallelism, JobPlacement(policy="packed", gpus=4096))
    doc.set_jobs(jobs)
    got = checker.check(doc)
    assert checker.full_checks == 1  # no full check for these edits
    assert [p.format() for p in got] == [p.format() for p in check_document(doc)]
    assert any("node3 has 9 GPUs down" in p.message for p in got)
    assert any("the jobs ask for" in p.message for p in got)


def test_a_dropped_result_is_freed_without_the_cycle_collector():
    """The first job's evaluation lists every job; the list must not keep it alive in a cycle, or the
    window's dropped results (70k timeline events each) wait for a long collector pass."""
    import gc
    import weakref

    for path in (EXAMPLES / "h100-64gpu-infiniband.yaml", EXAMPLES / "shared-roce-512gpu-3jobs.yaml"):
        engine = Engine()
        result = engine.evaluate(load_document(path))
        listed_first = result.jobs[0].result is result  # (not in an assert: pytest keeps its operands)
        assert listed_first and len(result.events) > 0
        gone = weakref.ref(result)
        gc.disable()
        try:
            del result, engine  # (the engine keeps each job's last costing for the next edit)
            assert gone() is None  # freed by its reference count alone
        finally:
            gc.enable()


def test_megatron_lines_of_one_job_out_and_back_in(tmp_path):
    import shutil

    path = tmp_path / "jobs.yaml"
    shutil.copy(EXAMPLES / "shared-roce-512gpu-3jobs.yaml", path)
    code, line, err = run_cli("export", "megatron", path, "--one-line", "--job", "qwen3-30b-moe")
    assert code == 0, err
    assert "--expert-model-parallel-size 32" in line
    changed = line.replace("--expert-model-parallel-size 32", "--expert-model-parallel-size 16")
    code, _, err = run_cli("import", "megatron", changed.strip(), "--into", path, "--job", "qwen3-30b-moe")
    assert code == 0, err
    before, after = load_document(EXAMPLES / "shared-roce-512gpu-3jobs.yaml"), load_document(path)
    assert after.spec.jobs[2].parallelism.expert_model_parallel_size == 16
    assert after.spec.jobs[:2] == before.spec.jobs[:2] and after.spec.workload is None
    code, _, err = run_cli("export", "megatron", path, "--job", "nope")
    assert code == 65 and "llama3-8b" in err


def _phases_always_costed(monkeypatch):
    """The engine with its phase memo turned off: every costing runs layer_phases."""
    from designer.core.engine import cache

    def costed(self, view_key, job, hw, k, layout, comm):
        return cache.layer_phases(job, hw, k, layout, comm)
    monkeypatch.setattr(cache.EngineCache, "layer_phases", costed)


@pytest.mark.parametrize("tp", [1, 16])
def test_the_shared_costing_reuses_the_phases_only_when_every_answer_is_the_same(monkeypatch, tp):
    """Each job is costed alone, then again with the others' traffic on the up-links: the second
    costing reuses the layer phases when the collectives they ask for cost the same (DP-only
    layers: no collective at all) and costs them again when not (TP 16 spans two servers under
    shared leaves): either way the answer is the one of a full costing."""
    from designer.core.engine import cache

    doc = _tor(nodes=64, oversubscription=3.0)
    ids = [n.id for n in doc.nodes][32:]
    plan = Parallelism(tensor_model_parallel_size=tp, use_distributed_optimizer=True)
    doc.set_jobs([JobSpec(name, Workload(preset="llama3-8b", global_batch_size=128, micro_batch_size=1), plan,
                          JobPlacement(nodes=ids[i::2])) for i, name in enumerate("ab")])
    calls = []
    real = cache.layer_phases
    monkeypatch.setattr(cache, "layer_phases", lambda *a: calls.append(1) or real(*a))
    remembered = Engine().evaluate(doc)
    assert max(j.slowdown_vs_alone for j in remembered.jobs) > 0  # the jobs do slow each other
    costings = 2 + sum(j.result is not j.alone for j in remembered.jobs)
    if tp == 1:
        assert len(calls) < costings  # the shared costings reused the phases of the alone ones
    else:
        assert len(calls) == costings  # TP's answers changed under contention: costed again
    _phases_always_costed(monkeypatch)
    full = Engine().evaluate(doc)
    for a, b in zip(remembered.jobs, full.jobs):
        assert a.result.step_time_s == b.result.step_time_s
        assert a.result.breakdown_s == b.result.breakdown_s


def test_a_link_edit_re_costs_only_the_jobs_whose_nics_or_leaves_it_changes():
    """Work proportional to the edit: halving a cable of job a's server re-costs job a (slower now);
    job b, on other leaves, keeps its costing; marking a spine down re-costs both (every leaf's
    up-links lose a share)."""
    doc = _tor(nodes=16)
    leaves = list(_nodes_under_leaves(doc).values())
    a_nodes, b_nodes = leaves[0] + leaves[1], leaves[2] + leaves[3]
    doc.set_jobs([_small_job("a", JobPlacement(nodes=a_nodes)), _small_job("b", JobPlacement(nodes=b_nodes))])
    engine = Engine()
    first = engine.evaluate(doc)
    before = {j.name: j.result.step_time_s for j in first.jobs}
    cable = next(link for link in doc.links if link.a.split(":")[0] == a_nodes[0] or link.b.split(":")[0] == a_nodes[0])
    doc.update(cable.id, bandwidth_gbps=cable.bandwidth_gbps / 4)
    second = engine.evaluate(doc)
    after = {j.name: j.result.step_time_s for j in second.jobs}
    assert "job b" in engine.reused and "job a" not in engine.reused
    assert after["a"] > before["a"] and after["b"] == before["b"]
    fresh = Engine().evaluate(doc)
    assert after == {j.name: j.result.step_time_s for j in fresh.jobs}  # as costed afresh
    spine = next(s.id for s in doc.switches if s.tier == "spine")
    doc.update(spine, state="down")
    engine.evaluate(doc)
    assert not any(r.startswith("job ") for r in engine.reused)


def test_a_failure_that_stops_one_job_costs_the_others_without_it_on_their_servers(tmp_path):
    """`designer failures`: a's server down stops a (the engine's problem names it); b, which shared
    oversubscribed leaves with a, runs on, faster without a's traffic, on the servers it has today."""
    doc = _tor(nodes=64, oversubscription=8.0)
    ids = [n.id for n in doc.nodes][32:]  # the two jobs alternate servers under the same leaves
    doc.set_jobs([_small_job("a", JobPlacement(nodes=ids[0::2]), gbs=128),
                  _small_job("b", JobPlacement(nodes=ids[1::2]), gbs=128)])
    path = tmp_path / "two.yaml"
    save_document(doc, path)
    code, out, err = run_cli("failures", path, "--json")
    assert code == 0, err
    servers = [f for f in json.loads(out)["failures"] if f["kind"] == "server"]
    a_down = next(f for f in servers if f["stopped"] == ["a"])
    assert a_down["slowdown"]["b"] < -0.01  # a's share of the up-links is b's again
    assert "job a" in a_down["reason"]


def test_a_failure_stops_the_job_on_the_part_not_a_job_placed_again_around_it(tmp_path):
    """`designer failures` on two jobs placed by policy: a leaf down stops both (their servers hang
    from it), not one job moved around the leaf; a server down stops the job that has that server."""
    example = Path(__file__).resolve().parents[2] / "resources" / "examples" / "shared-roce-256gpu-2jobs.yaml"
    code, out, err = run_cli("failures", example, "--json")
    assert code == 0, err
    failures = json.loads(out)["failures"]
    leaves = [f for f in failures if f["kind"] == "leaf switch"]
    assert leaves and all(sorted(f["stopped"]) == ["llama3-8b-dp", "qwen3-30b-moe"] for f in leaves)
    owner = {n: job.name for job in Engine().evaluate(load_document(example)).jobs for n in job.node_ids}
    servers = [f for f in failures if f["kind"] == "server"]
    assert len(servers) == 2 and all(f["stopped"] == [owner[f["element"]]] for f in servers), servers
