"""Attribution, what-if advice, plan search and scaling (designer/core/analysis)."""
import dataclasses
import json
import random

import pytest

from designer.core.analysis import fabric_edits as fx
from designer.core.analysis.attribution import attribute
from designer.core.analysis.bounds import ComputeFloor
from designer.core.analysis.scaling import scale
from designer.core.analysis.search import search
from designer.core.analysis.space import SpaceOptions, enumerate_space
from designer.core.analysis.whatif import advise
from designer.core.engine.constants import accelerator_constants, engine_constants
from designer.core.engine.evaluate import Engine, resolve_job
from designer.core.generate.fat_tree import generate_fat_tree
from designer.core.io import load_document
from designer.core.io.overrides import apply_overrides
from designer.core.model.catalog import default_catalog
from tests.conftest import EXAMPLES, local_dask_cluster, run_cli


def job(doc, *settings):
    apply_overrides(doc, list(settings))
    return doc


LLAMA8 = ["workload.preset=llama3-8b", "workload.global_batch_size=128", "workload.micro_batch_size=1",
          "workload.seq_length=4096", "parallelism.tensor_model_parallel_size=8"]


def oversubscribed_dp_cluster():
    """DP rings strided across leaves (PP is the faster dimension) on 4:1 leaves."""
    doc = generate_fat_tree(nodes=64, gpu="H100", oversubscription=4, rail_optimized=False, tiers=2)
    return job(doc, *LLAMA8, "parallelism.pipeline_model_parallel_size=8", "parallelism.rank_order=tp-cp-ep-pp-dp",
               "parallelism.overlap_grad_reduce=false")


# ---- attribution ------------------------------------------------------------------------------

def test_attribution_adds_up_and_names_the_oversubscribed_uplinks():
    doc = oversubscribed_dp_cluster()
    r = Engine().evaluate(doc)
    why = attribute(r, doc)
    assert sum(c["seconds"] for c in why["causes"]) == pytest.approx(r.step_time_s, rel=1e-9)
    assert why["critical"]["kind"] == "dp_comm" and why["critical"]["link_class"] == "leaf-spine"
    assert why["critical_resource"].startswith("up-links of leaf")


def test_attribution_names_the_straggler():
    doc = generate_fat_tree(nodes=8, gpu="H100")
    job(doc, *LLAMA8, "parallelism.pipeline_model_parallel_size=1", "nodes[node3].slowdown=1.3")
    r = Engine().evaluate(doc)
    why = attribute(r, doc)
    wait = next(c for c in why["causes"] if c["kind"] == "imbalance_wait")
    assert "node3" in wait["detail"] and wait["share"] > 0.1


def test_recompute_forced_by_memory_is_told_apart():
    doc = load_document(EXAMPLES / "a100-1024gpu-rail-infiniband.yaml")  # GPT-3 175B, selective
    why = attribute(Engine().evaluate(doc), doc)
    rec = next(c for c in why["causes"] if c["kind"] == "recompute")
    assert rec["cause"].startswith("recompute (optional")  # fits without it on 80 GB
    doc = job(doc, "parallelism.recompute_granularity=full", "workload.micro_batch_size=4",
              "parallelism.pipeline_schedule=1f1b", "parallelism.virtual_pipeline_model_parallel_size=null")
    why = attribute(Engine().evaluate(doc), doc)
    rec = next(c for c in why["causes"] if c["kind"] == "recompute")
    assert rec["cause"] == "recompute (forced by memory)"


# ---- what-if ----------------------------------------------------------------------------------

def test_oversubscribed_dp_ranks_no_oversubscription_or_rank_order_first():
    report = advise(oversubscribed_dp_cluster())
    top = report["ranked"][0]
    assert top.id in ("no-oversubscription",) or top.id.startswith("order-"), [a.id for a in report["ranked"][:5]]
    assert top.speedup > 0.1
    assert "no-oversubscription" in [a.id for a in report["ranked"][:3]]
    # putting DP inside the servers moves PP onto the NICs, where 1F1B waits on each exchange
    assert any(a.id.startswith("order-") and a.speedup > 0.1 for a in report["ranked"][:5])


def test_nic_upgrade_is_no_gain_where_tp_over_nvlink_dominates():
    doc = generate_fat_tree(nodes=4, gpu="H100")
    job(doc, "workload.preset=llama3-70b", "workload.global_batch_size=64", "workload.seq_length=4096",
        "workload.micro_batch_size=1", "parallelism.tensor_model_parallel_size=8",
        "parallelism.pipeline_model_parallel_size=4", "parallelism.sequence_parallel=true",
        "parallelism.use_distributed_optimizer=true", "parallelism.recompute_granularity=selective")
    report = advise(doc)
    assert report["attribution"]["critical"]["cause"].startswith("tp_comm over NVLink")
    nic = next(a for a in report["ranked"] if a.id == "nic-2x")
    assert abs(nic.speedup) < 0.01 and "not the bottleneck" in nic.note
    nvlink = next(a for a in report["ranked"] if a.id == "scale-up-2x")
    assert nvlink.speedup > 0.03


def test_every_candidate_is_a_real_evaluation_of_its_changed_design():
    doc = load_document(EXAMPLES / "h100-roce-2to1-ethernet.yaml")
    report = advise(doc)
    for a in report["ranked"][:6]:
        again = Engine().evaluate(a.document)
        assert again.step_time_s == pytest.approx(a.step_time_s, rel=1e-9), a.id
    swap = next(a for a in report["ranked"] if a.id == "network-kind")
    assert swap.title == "InfiniBand instead of Ethernet"
    assert {s.fabric for s in swap.document.switches} == {"infiniband"}
    assert doc.switches[0].fabric == "ethernet"  # the original is untouched
    no_over = fx.no_oversubscription(doc)
    assert fx.worst_oversubscription(no_over) == pytest.approx(1.0)
    ids = {a.id for a in report["not_applicable"]}
    assert "spine-core-2x" in ids  # a two-tier fabric: said so, not silently skipped


def test_advise_cli_json_and_text():
    path = EXAMPLES / "h100-64gpu-infiniband.yaml"
    code, out, err = run_cli("advise", path, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["ranked"] and data["attribution"]["causes"]
    best = data["ranked"][0]
    # the --set of a job-only change reproduces its predicted step
    if best["job_only"]:
        code, out2, _ = run_cli("evaluate", path, *sum((["--set", s] for s in best["set"]), []), "--json")
        assert json.loads(out2)["step_time_s"] == pytest.approx(best["step_time_s"], rel=1e-9)
    code, out, _ = run_cli("advise", path)
    assert code == 0 and "changes, best first" in out and "where the step goes" in out


# ---- plan search ------------------------------------------------------------------------------

def _space(doc, opts=None):
    cat = default_catalog()
    j = resolve_job(doc, cat)
    acc = cat.accelerator(doc.nodes[0].accelerator)
    return j, acc, enumerate_space(j.workload, j.shape, j.plan.num_gpus, 8, acc.hbm_gib, {}, opts)


def test_space_counts_account_for_every_plan():
    doc = load_document(EXAMPLES / "a100-1024gpu-rail-infiniband.yaml")
    _, _, (cands, counts) = _space(doc)
    assert counts.total >= 10_000
    assert counts.invalid + counts.no_memory + counts.dominated + counts.candidates == counts.total
    assert len(cands) == counts.candidates == len(set(cands))


@pytest.fixture(scope="module")
def sampled():
    """Random plans of the 1,024-GPU example's space, costed by the engine."""
    doc = load_document(EXAMPLES / "a100-1024gpu-rail-infiniband.yaml")
    j, acc, (cands, _) = _space(doc)
    random.seed(7)
    return doc, j, acc, random.sample(cands, 60)


def test_lower_bound_never_exceeds_the_engine(sampled):
    doc, j, acc, points = sampled
    cat = default_catalog()
    engine = Engine(detail=False)
    ac = accelerator_constants(acc, {}, cat)
    floor = ComputeFloor(j.shape, acc, ac, engine_constants({}), ac.flash_attention)
    w, p = doc.spec.workload, doc.spec.parallelism
    for pt in points:
        doc.replace_job(pt.workload(w), pt.parallelism(p))
        assert floor.step_floor_s(pt) <= engine.evaluate(doc).step_time_s, pt.label()


def test_dominance_rules_hold_in_the_engine(sampled):
    """Turning an overlap off never helps; DualPipe costs what ZB-H1 costs."""
    doc, _, _, points = sampled
    engine = Engine(detail=False)
    w, p = doc.spec.workload, doc.spec.parallelism
    for pt in points[:25]:
        doc.replace_job(pt.workload(w), pt.parallelism(p))
        on = engine.evaluate(doc).step_time_s
        for flag in ("overlap_grad_reduce", "overlap_param_gather", "tp_comm_overlap"):
            if getattr(pt, flag):
                off = dataclasses.replace(pt, **{flag: False})
                doc.replace_job(off.workload(w), off.parallelism(p))
                assert engine.evaluate(doc).step_time_s >= on * (1 - 1e-12), (flag, pt.label())
        if pt.schedule == "zb-h1":
            dual = dataclasses.replace(pt, schedule="dualpipe")
            doc.replace_job(dual.workload(w), dual.parallelism(p))
            assert engine.evaluate(doc).step_time_s == pytest.approx(on, rel=1e-12)


@pytest.mark.slow
def test_search_agrees_with_brute_force_on_a_small_space():
    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    opts = SpaceOptions(tp=[1, 2, 4], pp=[1, 2, 4], cp=[1, 2], micro_batch=[1, 2])
    result = search(doc, top=5, workers=1, opts=opts)
    j, acc, (cands, _) = _space(doc, opts)
    engine = Engine(detail=False)
    w, p = doc.spec.workload, doc.spec.parallelism
    costed = {}  # plans that differ only in rank order and cost the same are one answer
    for pt in cands:
        doc.replace_job(pt.workload(w), pt.parallelism(p))
        r = engine.evaluate(doc)
        if r.fits_in_memory:
            costed.setdefault((dataclasses.replace(pt, rank_order=""), round(r.step_time_s, 9)), r.step_time_s)
    brute = sorted(costed.values())[:5]
    assert [r["step_time_s"] for r in result.top] == pytest.approx(brute, rel=1e-12)
    assert result.cut_by_bound > 0 and result.evaluated < len(cands)  # the bound did cut
    assert result.bound_violations == 0


@pytest.mark.slow
def test_search_is_at_least_as_fast_as_the_files_plan():
    doc = load_document(EXAMPLES / "a100-1024gpu-rail-infiniband.yaml")
    result = search(doc, top=3, workers=2)
    assert result.current is not None
    assert result.top[0]["step_time_s"] <= result.current["step_time_s"]
    assert result.counts.total >= 10_000 and result.bound_violations == 0
    assert result.top == sorted(result.top, key=lambda r: r["step_time_s"])
    assert "faster than the file's plan" in result.verdict or "already the fastest" in result.verdict


@pytest.mark.slow
def test_search_cli(tmp_path):
    path = EXAMPLES / "h100-64gpu-infiniband.yaml"
    code, out, err = run_cli("search", path, "--top", "3", "--workers", "1", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert len(data["top"]) == 3 and data["space"]["total"] > 0
    best = data["top"][0]
    code, out2, err = run_cli("evaluate", path, *sum((["--set", s] for s in best["set"]), []), "--json")
    assert code == 0, err
    assert json.loads(out2)["step_time_s"] == pytest.approx(best["step_time_s"], rel=1e-9)
    code, out, _ = run_cli("search", path, "--top", "2", "--workers", "1")
    assert code == 0 and "cut by the lower bound" in out and "apply it: --set" in out


def test_search_without_a_workload_says_what_to_add(tmp_path):
    doc = generate_fat_tree(nodes=2, gpu="H100")
    from designer.core.io import save_document

    save_document(doc, tmp_path / "c.yaml")
    code, _, err = run_cli("search", tmp_path / "c.yaml")
    assert code == 65 and "workload" in err


@pytest.mark.slow
def test_search_with_an_unreachable_scheduler_is_a_clear_error():
    pytest.importorskip("distributed")
    code, _, err = run_cli("search", EXAMPLES / "h100-64gpu-infiniband.yaml", "--scheduler", "tcp://127.0.0.1:9")
    assert code == 65 and "cannot reach the Dask scheduler" in err and "--scheduler" in err


@pytest.mark.slow
def test_search_on_a_dask_local_cluster():
    pytest.importorskip("distributed")
    path = EXAMPLES / "h100-64gpu-infiniband.yaml"
    with local_dask_cluster(n_workers=2, threads_per_worker=1, processes=True) as c:
        code, out, err = run_cli("search", path, "--top", "3", "--scheduler", c.scheduler_address, "--json")
    assert code == 0, err
    dask = json.loads(out)
    assert dask["runner"].startswith("Dask at tcp://")
    code, out, err = run_cli("search", path, "--top", "3", "--workers", "1", "--json")
    local = json.loads(out)
    assert [r["step_time_s"] for r in dask["top"]] == pytest.approx([r["step_time_s"] for r in local["top"]])


# ---- scaling ----------------------------------------------------------------------------------

def test_strong_scaling_extends_the_fabric_and_finds_where_it_stops_paying():
    doc = generate_fat_tree(nodes=4, gpu="H100", nic_gbps=100, nics_per_node=1, rail_optimized=False)
    job(doc, "workload.preset=llama3-8b", "workload.global_batch_size=256", "workload.micro_batch_size=1",
        "parallelism.tensor_model_parallel_size=8", "parallelism.overlap_grad_reduce=false")
    report = scale(doc, [8, 16, 32, 64, 128, 256], mode="strong")
    rows = [r for r in report["rows"] if "error" not in r]
    assert [r["gpus"] for r in rows] == [8, 16, 32, 64, 128, 256]
    assert rows[-1]["extended_fabric"] and not rows[1]["extended_fabric"]
    assert all(a["efficiency"] >= b["efficiency"] - 1e-9 for a, b in zip(rows, rows[1:]))
    assert report["stops_paying_at"] is not None and "stop paying" in report["verdict"]


def test_weak_scaling_keeps_the_batch_per_replica():
    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    report = scale(doc, [16, 64, 256], mode="weak")
    rows = report["rows"]
    assert [r["global_batch_size"] // r["dp"] for r in rows] == [rows[0]["global_batch_size"] // rows[0]["dp"]] * 3
    assert rows[-1]["efficiency"] > 0.9


def test_scale_cli():
    path = EXAMPLES / "h100-64gpu-infiniband.yaml"
    code, out, err = run_cli("scale", path, "--gpus", "16,64,128", "--json")
    assert code == 0, err
    assert [r["gpus"] for r in json.loads(out)["rows"]] == [16, 64, 128]
    code, out, err = run_cli("scale", path, "--gpus", "16,20")
    assert code == 0, err
    assert "20  -- the global batch" in out  # a count the batch cannot spread over: said, not skipped
    with pytest.raises(SystemExit) as exc:
        run_cli("scale", path, "--gpus", "sixty")
    assert exc.value.code == 2


@pytest.mark.slow
def test_search_finds_a_valid_plan_when_the_files_plan_is_impossible():
    code, out, err = run_cli("search", EXAMPLES / "h100-64gpu-infiniband.yaml", "--set",
                             "parallelism.tensor_model_parallel_size=3", "--top", "2", "--workers", "1", "--json")
    assert code == 0, err
    assert "warning:" in err and "TP 3 does not divide the 32 attention heads" in err  # said, then searched
    data = json.loads(out)
    assert data["current"] is None and data["top"] and "not valid" in data["verdict"]


def test_search_with_a_malformed_scheduler_address_says_the_form():
    pytest.importorskip("distributed")
    code, _, err = run_cli("search", EXAMPLES / "h100-64gpu-infiniband.yaml", "--scheduler", "foo")
    assert code == 65 and "tcp://HOST:PORT" in err
