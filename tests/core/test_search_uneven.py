"""The plan search and the Advisor propose Megatron's uneven pipeline splits, and
the Advisor offers the largest NVLink domain the accelerator allows."""
import json

import pytest

from designer.core.analysis.search import search
from designer.core.analysis.space import SpaceOptions, enumerate_space
from designer.core.analysis.splits import MAX_UNEVEN, EVEN, Split, splits_for, stage_layer_counts
from designer.core.analysis.whatif import advise
from designer.core.engine.constants import engine_constants
from designer.core.engine.evaluate import Engine, resolve_job
from designer.core.generate.fat_tree import generate_fat_tree
from designer.core.io import load_document
from designer.core.io.overrides import apply_overrides
from designer.core.model.catalog import default_catalog
from designer.core.model.pipeline_split import split_layers
from designer.core.model.plan import check_job
from tests.conftest import EXAMPLES, run_cli

# A Llama-3-8B-wide model with Llama 3.1 405B's 126 layers: PP 16 does not divide them.
LAYERS_126 = ["workload.preset=llama3-8b", "workload.num_layers=126", "workload.global_batch_size=256",
              "workload.seq_length=4096", "parallelism.tensor_model_parallel_size=4",
              "parallelism.pipeline_model_parallel_size=16", "parallelism.pipeline_schedule=1f1b",
              "parallelism.virtual_pipeline_model_parallel_size=null"]


def h100_64(*settings):
    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    apply_overrides(doc, list(settings))
    return doc


# ---- the splits offered ------------------------------------------------------------------------

@pytest.mark.parametrize("layers, pp, vp, expected", [
    (126, 16, 1, Split(last_layers=6)),  # Llama 3.1 405B on PP 16, the loss stage lighter
    (126, 16, 1, Split(account_embedding=True, account_loss=True)),  # 7 | 8 x 14 | 7
    (126, 8, 8, Split(account_embedding=True, account_loss=True)),  # the NeMo 405B recipe: PP 8 x VP 8
    (61, 16, 1, Split(first_layers=3, last_layers=2)),  # DeepSeek-V3's 61 layers on PP 16
    (94, 8, 1, Split(account_embedding=True, account_loss=True)),  # Qwen3-235B on PP 8
])
def test_flagship_splits_are_offered_and_megatron_accepts_them(layers, pp, vp, expected):
    offered = splits_for(layers, pp, vp)
    assert expected in offered
    assert 1 <= len(offered) <= MAX_UNEVEN
    for s in offered:
        stages = split_layers(layers, pp, vp, **s.kwargs())  # raises if Megatron would refuse
        assert sum(v.decoder_layers for v in stages) == layers


def test_even_layers_get_uneven_splits_only_when_the_loss_stage_is_heavy():
    assert splits_for(32, 4, 1, loss_layers=0.2) == [EVEN]
    heavy = splits_for(32, 4, 1, loss_layers=2.0)
    assert heavy[0] == EVEN and Split(first_layers=7, last_layers=7) in heavy
    assert stage_layer_counts(32, 4, 1, Split(first_layers=7, last_layers=7)) == (7, 9, 9, 7)


# ---- the search --------------------------------------------------------------------------------

def test_search_finds_and_ranks_uneven_plans_for_126_layers_on_pp16():
    doc = h100_64(*LAYERS_126)
    opts = SpaceOptions(tp=[1, 2, 4], pp=[16], cp=[1], micro_batch=[1, 2])
    result = search(doc, top=5, workers=1, opts=opts)
    assert result.top, result.verdict  # without uneven splits PP 16 was "impossible", nothing to rank
    assert result.top == sorted(result.top, key=lambda r: r["step_time_s"])
    assert all(r["point"].pp == 16 and not r["point"].split.even for r in result.top)
    assert result.bound_violations == 0 and result.failed == 0
    row = result.as_json()["top"][0]
    assert row["split"] and set(row["split"]) <= {"decoder_first_pipeline_num_layers",
                                                  "decoder_last_pipeline_num_layers",
                                                  "account_for_embedding_in_pipeline_split",
                                                  "account_for_loss_in_pipeline_split"}
    assert any(k in result.top[0]["point"].label() for k in row["split"])


@pytest.mark.slow
def test_every_uneven_plan_of_the_space_passes_the_checks_and_evaluates():
    doc = h100_64(*LAYERS_126, "parallelism.account_for_embedding_in_pipeline_split=true",
                  "parallelism.account_for_loss_in_pipeline_split=true")
    job = resolve_job(doc, default_catalog())
    acc = default_catalog().accelerator(doc.nodes[0].accelerator)
    opts = SpaceOptions(tp=[2, 4], pp=[8, 16], cp=[1], micro_batch=[1], rank_orders=("tp-cp-ep-dp-pp",))
    points, counts = enumerate_space(job.workload, job.shape, 64, 8, acc.hbm_gib, None, opts)
    uneven = [p for p in points if not p.split.even]
    assert uneven and {p.pp for p in uneven} == {8, 16}
    assert {p.schedule for p in uneven} >= {"1f1b", "interleaved"}
    assert counts.total == counts.invalid + counts.no_memory + counts.dominated + counts.candidates
    engine = Engine(detail=False, schedule_max_ops=1024)  # as the search's workers (sweep.py)
    w, par = doc.spec.workload, doc.spec.parallelism
    fitting = []
    for p in uneven:
        new_w, new_par = p.workload(w), p.parallelism(par)
        plan, problems = check_job(new_w, new_par, 64)
        assert not problems, (p.label(), problems)
        doc.replace_job(new_w, new_par)
        r = engine.evaluate(doc)
        assert r.step_time_s > 0
        layers = [s["layers"] for s in r.stages]
        assert tuple(layers) == stage_layer_counts(126, p.pp, p.vp, p.split)
        if r.fits_in_memory:
            fitting.append(r.step_time_s)
    # the lower bound never cut a better uneven plan: the search's best are the brute force's best
    # (the space and the file's own plan, which a search always costs)
    doc.replace_job(w, par)
    own = engine.evaluate(doc)
    if own.fits_in_memory:
        fitting.append(own.step_time_s)
    result = search(doc, top=3, workers=1, opts=opts)
    assert [r["step_time_s"] for r in result.top] == pytest.approx(sorted(fitting)[:3], rel=1e-12)
    assert result.bound_violations == 0 and result.cut_by_bound > 0


@pytest.mark.slow
def test_search_cli_shows_the_split_keys_and_they_reproduce_the_plan():
    path = EXAMPLES / "h100-64gpu-infiniband.yaml"
    sets = [a for s in LAYERS_126 for a in ("--set", s)]
    code, out, err = run_cli("search", path, *sets, "--top", "3", "--workers", "1", "--json")
    assert code == 0, err
    top = json.loads(out)["top"]
    uneven = [r for r in top if r["split"]]
    assert uneven, [r["plan"] for r in top]
    best = uneven[0]
    assert all(f"{k}=" in best["plan"] for k in best["split"])
    assert any(s.startswith("parallelism.decoder_last_pipeline_num_layers=") for s in best["set"])
    code, out, err = run_cli("evaluate", path, *sets, *[a for s in best["set"] for a in ("--set", s)], "--json")
    assert code == 0, err
    assert json.loads(out)["step_time_s"] == pytest.approx(best["step_time_s"], rel=1e-9)
    code, out, err = run_cli("search", path, *sets, "--top", "3", "--workers", "1")
    assert code == 0 and "_pipeline_" in out  # the plan text names Megatron's keys


# ---- the Advisor -------------------------------------------------------------------------------

def test_advisor_offers_an_uneven_split_when_the_last_stage_is_the_bottleneck():
    # Llama 3 8B on PP 4: a 128K-token vocabulary makes the loss stage ~2 layers heavier
    doc = h100_64("workload.preset=llama3-8b", "workload.global_batch_size=128", "workload.seq_length=4096",
                  "parallelism.tensor_model_parallel_size=8", "parallelism.pipeline_model_parallel_size=4",
                  "parallelism.pipeline_schedule=1f1b", "parallelism.virtual_pipeline_model_parallel_size=null")
    base = Engine().evaluate(doc)
    stage_ends = [st for st in base.stages]
    assert stage_ends[-1]["layers"] == stage_ends[0]["layers"]  # even today
    report = advise(doc, include_scale=False)
    splits = [a for a in report["ranked"] if a.id.startswith("split-")]
    assert splits, [a.id for a in report["ranked"]]
    best = max(splits, key=lambda a: a.speedup)
    assert best.speedup > 0.01 and "decoder_last_pipeline_num_layers" in best.title
    assert any(s.startswith("parallelism.decoder_last_pipeline_num_layers=") for s in best.set)


def test_advisor_pp_change_to_a_non_dividing_pp_carries_a_split():
    # the file's split (decoder_last 6 on PP 16) does not work on PP 8 or 32: the change takes one that does
    doc = h100_64(*LAYERS_126, "parallelism.tensor_model_parallel_size=2",
                  "parallelism.decoder_last_pipeline_num_layers=6")
    report = advise(doc, include_scale=False)
    skipped = {a.id: a.error for a in report["not_applicable"]}
    ranked = {a.id: a for a in report["ranked"]}
    assert "pp-8" in ranked and "pp-32" in ranked, skipped
    assert "parallelism.decoder_last_pipeline_num_layers=null" in ranked["pp-8"].set
    assert any(a.startswith("vp-") for a in ranked), skipped


def gb200(domain_gpus):
    doc = generate_fat_tree(36, "GB200", gpus_per_node=4, nics_per_node=4, nic_gbps=400,
                            nvlink_domain_gpus=domain_gpus)
    apply_overrides(doc, ["workload.preset=llama3-70b", "workload.global_batch_size=144",
                          "parallelism.tensor_model_parallel_size=8", "parallelism.pipeline_model_parallel_size=2"])
    return doc


def test_advisor_offers_nvl72_for_gb200_trays_and_not_for_h100():
    report = advise(gb200(4), include_scale=False)
    domain = [a for a in report["ranked"] if a.id.startswith("nvlink-domain")]
    assert len(domain) == 1, [a.id for a in report["ranked"]]
    a = domain[0]
    assert a.title == "NVL72 instead of 4-GPU servers"
    assert a.speedup > 0.05  # TP 8 no longer spans two trays over the NICs
    assert {n.nvlink_domain for n in a.document.nodes[:18]} == {"nvl0"}
    assert a.document.nodes[18].nvlink_domain == "nvl1"
    # already NVL72: nothing to offer
    assert not [a for a in advise(gb200(72), include_scale=False)["ranked"] if a.id.startswith("nvlink-domain")]
    h100 = h100_64("workload.preset=llama3-8b", "workload.global_batch_size=128",
                   "parallelism.tensor_model_parallel_size=8", "parallelism.pipeline_model_parallel_size=1")
    report = advise(h100, include_scale=False)
    assert not [a for a in report["ranked"] + report["not_applicable"] if a.id.startswith("nvlink-domain")]


def test_advisor_cli_lists_the_domain_choice(tmp_path):
    path = tmp_path / "gb200.yaml"
    code, out, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", "36", "--gpu", "GB200",
                             "--gpus-per-node", "4", "--nics-per-node", "4", "--nvlink-domain-gpus", "4")
    assert code == 0, err
    code, out, err = run_cli("advise", path, "--set", "workload.preset=llama3-70b",
                             "--set", "workload.global_batch_size=144", "--set", "parallelism.tensor_model_parallel_size=8",
                             "--set", "parallelism.pipeline_model_parallel_size=2", "--no-scale", "--json")
    assert code == 0, err
    ids = {a["id"]: a for a in json.loads(out)["ranked"]}
    assert ids["nvlink-domain-72"]["title"] == "NVL72 instead of 4-GPU servers"
    assert ids["nvlink-domain-72"]["speedup"] > 0


@pytest.mark.slow
def test_search_cli_takes_the_domain_size_as_a_dimension(tmp_path):
    path = tmp_path / "gb200.yaml"
    code, out, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", "36", "--gpu", "GB200",
                             "--gpus-per-node", "4", "--nics-per-node", "4", "--nvlink-domain-gpus", "4")
    assert code == 0, err
    job = ["--set", "workload.preset=llama3-70b", "--set", "workload.global_batch_size=144",
           "--set", "parallelism.tensor_model_parallel_size=8", "--set", "parallelism.pipeline_model_parallel_size=2"]
    code, out, err = run_cli("search", path, *job, "--nvlink-domain-gpus", "4,72", "--top", "3", "--workers", "1",
                             "--json")
    assert code == 0, err
    data = json.loads(out)
    sizes = [r["nvlink_domain_gpus"] for r in data["top"]]
    assert set(sizes) <= {4, 72} and sizes[0] == 72, sizes  # one NVLink domain beats 4-GPU trays over NICs
    assert data["current"]["nvlink_domain_gpus"] == 4 and data["top"][0]["step_time_s"] < data["current"]["step_time_s"]
    code, out, err = run_cli("search", path, *job, "--nvlink-domain-gpus", "4,80")
    assert code == 65 and "--nvlink-domain-gpus" in err and "up to 72" in err and "Traceback" not in err


def test_domain_candidate_is_a_valid_design_generated_or_hand_drawn():
    from designer.core.analysis.advice_design import with_nvlink_domains
    from designer.core.design_check import check_document

    nvl36 = generate_fat_tree(36, "GB200", gpus_per_node=4, nics_per_node=4, nvlink_domain_gpus=36)
    new = with_nvlink_domains(nvl36, 72)  # the generator's design: generated again, with NVL72 switch trays
    trays = [s for s in new.switches if s.fabric == "nvlink"]
    assert trays and {s.nvlink_domain for s in trays} == {"nvl0", "nvl1"}
    assert not [p for p in check_document(new) if p.severity == "error"]
    # a hand-edited fabric (one cable less) keeps its fabric: servers relabelled, old switch trays left out
    nvl36.spec.links.pop(0)
    edited = type(nvl36)(nvl36.spec, nvl36.metadata)
    new = with_nvlink_domains(edited, 72)
    assert len(new.links) < len(edited.links) and not [s for s in new.switches if s.fabric == "nvlink"]
    assert {n.nvlink_domain for n in new.nodes} == {"nvl0", "nvl1"}
    assert not [p for p in check_document(new) if p.severity == "error"]


def test_regenerated_what_ifs_keep_nvl72_racks():
    # NVLink switch trays are no part of the scale-out fabric: "2x servers" and "leaves 2:1" on an
    # NVL72 design were refused ("unknown fabric 'nvlink'") and would have lost the domains
    report = advise(gb200(72), include_scale=True)
    skipped = {a.id: a.error for a in report["not_applicable"]}
    assert "nodes-2x" not in skipped and "leaves-2to1" not in skipped, skipped
    bigger = next(a for a in report["ranked"] if a.id == "nodes-2x").document
    assert len(bigger.nodes) == 72 and {n.nvlink_domain for n in bigger.nodes} == {"nvl0", "nvl1", "nvl2", "nvl3"}
    assert sum(s.fabric == "nvlink" for s in bigger.switches) == 4 * 9
