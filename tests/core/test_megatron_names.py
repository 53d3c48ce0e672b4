"""Megatron-LM's own spellings of the job keys Designer names differently.

Driven as a user drives them: files loaded by `designer validate` / `evaluate --scenario`,
and `--set` on the command line. Each Megatron form must cost the same as Designer's own key.
"""
import json
import re

import pytest
import yaml

from designer.core.io import load_document, save_document
from designer.core.model.megatron_names import PatternError, parse_layer_pattern
from tests.conftest import EXAMPLES, run_cli

CLUSTER = EXAMPLES / "h100-64gpu-infiniband.yaml"
LOCATED = re.compile(r"\.yaml:(\d+):(\d+): ")


def scenario(tmp_path, name: str, workload: dict, parallelism: dict | None = None):
    spec = {"workload": workload}
    if parallelism is not None:
        spec["parallelism"] = parallelism
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "designer/v1", "kind": "Scenario", "metadata": {"name": name},
                                    "spec": spec}, sort_keys=False))
    return path


def evaluate(*args):
    code, out, err = run_cli("evaluate", CLUSTER, "--json", *args)
    assert code == 0, err
    data = json.loads(out)
    return data["plan"], data["step_time_s"]


def failure(*args):
    code, out, err = run_cli(*args)
    assert code == 65, (code, out, err)
    return err


LLAMA70 = {"preset": "llama3-70b", "global_batch_size": 1024}
PLAN = {"tensor_model_parallel_size": 8, "pipeline_model_parallel_size": 4}


def test_a_file_in_megatron_spellings_costs_the_same_as_designers_names(tmp_path):
    megatron = scenario(tmp_path, "megatron", {**LLAMA70, "bf16": True, "fp8_format": "hybrid"},
                        {**PLAN, "num_layers_per_virtual_pipeline_stage": 5, "use_tp_pp_dp_mapping": True})
    own = scenario(tmp_path, "own", {**LLAMA70, "precision": "fp8"},
                   {**PLAN, "pipeline_schedule": "interleaved", "virtual_pipeline_model_parallel_size": 4,
                    "rank_order": "tp-cp-ep-pp-dp"})
    plan, step = evaluate("--scenario", megatron)
    assert (plan["precision"], plan["vp"], plan["schedule"], plan["rank_order"]) == (
        "fp8", 4, "interleaved", "tp-cp-ep-pp-dp")  # 80 layers / PP 4 / 5 per virtual stage
    assert (plan, step) == evaluate("--scenario", own)


@pytest.mark.parametrize("megatron, own", [
    ({"bf16": True}, {"precision": "bf16"}),
    ({"fp16": True}, {"precision": "fp16"}),
    ({"fp8_format": "e4m3"}, {"precision": "fp8"}),
    ({"fp16": True, "fp8": "hybrid"}, {"precision": "fp8"}),
    ({"precision": "fp8", "bf16": True}, {"precision": "fp8"}),  # bf16 is the base of an fp8 run
])
def test_precision_flags(tmp_path, megatron, own):
    assert evaluate("--scenario", scenario(tmp_path, "m", {**LLAMA70, **megatron}, PLAN)) == \
        evaluate("--scenario", scenario(tmp_path, "o", {**LLAMA70, **own}, PLAN))


def test_virtual_stages_per_rank_and_the_plain_mapping_flag(tmp_path):
    a = scenario(tmp_path, "a", LLAMA70, {**PLAN, "num_virtual_stages_per_pipeline_rank": 2,
                                          "use_tp_pp_dp_mapping": False})
    b = scenario(tmp_path, "b", LLAMA70, {**PLAN, "pipeline_schedule": "interleaved",
                                          "virtual_pipeline_model_parallel_size": 2})
    plan, step = evaluate("--scenario", a)
    assert plan["vp"] == 2 and plan["rank_order"] == "tp-cp-ep-dp-pp"
    assert (plan, step) == evaluate("--scenario", b)


def test_the_moe_layer_pattern_means_k_dense_layers_first(tmp_path):
    """Megatron writes DeepSeek-V3's 3 dense layers then 58 MoE layers as [0]*3+[1]*58; here on
    Mixtral's 32 layers (all MoE in the preset), 5 dense then 27 MoE."""
    mixtral = {"preset": "mixtral-8x7b", "global_batch_size": 64}
    plan = {"tensor_model_parallel_size": 8, "pipeline_model_parallel_size": 1, "expert_model_parallel_size": 8}
    by_string = scenario(tmp_path, "s", {**mixtral, "moe_layer_freq": "[0]*5+[1]*27"}, plan)
    by_list = scenario(tmp_path, "l", {**mixtral, "moe_layer_freq": [0] * 5 + [1] * 27}, plan)
    own = scenario(tmp_path, "o", {**mixtral, "first_k_dense_replace": 5}, plan)
    preset = scenario(tmp_path, "p", mixtral, plan)  # the preset: every layer MoE
    want = evaluate("--scenario", own)
    assert evaluate("--scenario", by_string) == want
    assert evaluate("--scenario", by_list) == want
    assert evaluate("--scenario", preset)[1] != want[1]  # the pattern changed the model
    # Megatron's int form (and "N" as text) is every N-th layer, as before
    every2 = scenario(tmp_path, "e", {**mixtral, "moe_layer_freq": "([1]+[0])*16"}, plan)
    assert evaluate("--scenario", every2) == evaluate(
        "--scenario", scenario(tmp_path, "n", {**mixtral, "moe_layer_freq": 2}, plan))
    assert evaluate("--scenario", scenario(tmp_path, "t", {**mixtral, "moe_layer_freq": "2"}, plan)) == \
        evaluate("--scenario", scenario(tmp_path, "n", {**mixtral, "moe_layer_freq": 2}, plan))


@pytest.mark.parametrize("workload, parallelism, words", [
    ({**LLAMA70, "precision": "bf16", "fp16": True}, PLAN, ["precision: bf16", "fp16: true", "disagree"]),
    ({**LLAMA70, "bf16": True, "fp16": True}, PLAN, ["bf16: true and fp16: true"]),
    ({**LLAMA70, "bf16": False}, PLAN, ["fp32"]),
    ({**LLAMA70, "fp8_format": "e5m2"}, PLAN, ["e4m3 or hybrid"]),
    (LLAMA70, {**PLAN, "rank_order": "tp-cp-ep-dp-pp", "use_tp_pp_dp_mapping": True},
     ["rank_order: tp-cp-ep-dp-pp", "use_tp_pp_dp_mapping: true", "disagree"]),
    (LLAMA70, {**PLAN, "virtual_pipeline_model_parallel_size": 2, "num_layers_per_virtual_pipeline_stage": 5},
     ["virtual_pipeline_model_parallel_size: 2", "num_layers_per_virtual_pipeline_stage: 5", "disagree"]),
    (LLAMA70, {**PLAN, "num_layers_per_virtual_pipeline_stage": 3}, ["do not divide the 20 layers"]),
    (LLAMA70, {**PLAN, "num_layers_per_virtual_pipeline_stage": 5, "pipeline_schedule": "1f1b"},
     ["need the interleaved schedule"]),
    ({"preset": "deepseek-v3", "global_batch_size": 64, "moe_layer_freq": "[0]*3+[1]*50"}, None,
     ["lists 53 layers", "num_layers 61"]),  # the layer count of the preset
    ({"preset": "mixtral-8x7b", "num_layers": 40, "moe_layer_freq": "[0]*3+[1]*29"}, None,
     ["lists 32 layers", "num_layers 40"]),  # the file's own layer count
    ({"preset": "mixtral-8x7b", "global_batch_size": 64, "moe_layer_freq": "[1]*3+[0]*29"}, None,
     ["dense layer after an MoE layer"]),
    ({"preset": "mixtral-8x7b", "global_batch_size": 64, "first_k_dense_replace": 1, "moe_layer_freq": "[0]*3+[1]*29"},
     None, ["first_k_dense_replace: 1", "moe_layer_freq", "disagree"]),
    ({"preset": "mixtral-8x7b", "global_batch_size": 64, "moe_layer_freq": "__import__('os').system('x')"}, None,
     ["not a layer pattern"]),
])
def test_refused_forms_name_the_place_and_the_reason(tmp_path, workload, parallelism, words):
    path = scenario(tmp_path, "bad", workload, parallelism)
    err = failure("evaluate", CLUSTER, "--scenario", path)
    assert LOCATED.search(err), err  # FILE:LINE:COLUMN
    assert "Traceback" not in err
    for w in words:
        assert w in err, err


def test_a_cluster_file_with_megatron_spellings_validates_saves_in_designers_names_and_reloads(tmp_path):
    data = yaml.safe_load(CLUSTER.read_text())
    data["spec"]["workload"].update({"bf16": True})
    data["spec"]["parallelism"].update({"pipeline_model_parallel_size": 2, "num_layers_per_virtual_pipeline_stage": 4,
                                        "use_tp_pp_dp_mapping": True})
    path = tmp_path / "megatron.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    code, out, err = run_cli("validate", path)
    assert code == 0, err
    doc = load_document(path)
    par = doc.spec.parallelism
    assert (doc.spec.workload.precision, par.virtual_pipeline_model_parallel_size, par.pipeline_schedule,
            par.rank_order) == ("bf16", 4, "interleaved", "tp-cp-ep-pp-dp")  # 32 layers / PP 2 / 4
    save_document(doc, tmp_path / "saved.yaml")
    saved = yaml.safe_load((tmp_path / "saved.yaml").read_text())["spec"]
    assert "bf16" not in saved["workload"] and "use_tp_pp_dp_mapping" not in saved["parallelism"]
    assert saved["parallelism"]["virtual_pipeline_model_parallel_size"] == 4
    assert load_document(tmp_path / "saved.yaml").spec == doc.spec


def test_the_json_schema_accepts_megatron_spellings(tmp_path):
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema (a dev dependency) is not installed")
    code, out, _ = run_cli("schema")
    schema = json.loads(out)
    path = scenario(tmp_path, "m", {**LLAMA70, "bf16": True, "fp8_format": "hybrid", "moe_layer_freq": "[0]*3+[1]*77"},
                    {**PLAN, "num_layers_per_virtual_pipeline_stage": 5, "use_tp_pp_dp_mapping": True})
    jsonschema.validate(yaml.safe_load(path.read_text()), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(yaml.safe_load(scenario(tmp_path, "b", {**LLAMA70, "fp8_format": "e5m2"}).read_text()),
                            schema)


def test_set_accepts_megatron_spellings():
    llama = ["--set", "workload.preset=llama3-70b", "--set", "workload.global_batch_size=1024",
             "--set", "parallelism.tensor_model_parallel_size=8", "--set", "parallelism.pipeline_model_parallel_size=4"]
    own = evaluate(*llama, "--set", "workload.precision=fp8", "--set", "parallelism.pipeline_schedule=interleaved",
                   "--set", "parallelism.virtual_pipeline_model_parallel_size=4",
                   "--set", "parallelism.rank_order=tp-cp-ep-pp-dp")
    # Megatron's forms, with the layers-per-stage one given before PP: it is read after it, as Megatron does
    megatron = evaluate("--set", "parallelism.num_layers_per_virtual_pipeline_stage=5", *llama,
                        "--set", "workload.bf16=true", "--set", "workload.fp8_format=hybrid",
                        "--set", "parallelism.use_tp_pp_dp_mapping=true")
    assert megatron == own
    assert evaluate(*llama, "--set", "workload.fp8_format=hybrid", "--set", "workload.bf16=true") == \
        evaluate(*llama, "--set", "workload.precision=fp8")


def test_set_moe_layer_pattern():
    mixtral = ["--set", "workload.preset=mixtral-8x7b", "--set", "workload.global_batch_size=64",
               "--set", "parallelism.tensor_model_parallel_size=8", "--set", "parallelism.expert_model_parallel_size=8"]
    assert evaluate(*mixtral, "--set", "workload.moe_layer_freq=[0]*5+[1]*27") == \
        evaluate(*mixtral, "--set", "workload.first_k_dense_replace=5")


def test_set_conflicts_and_bad_forms_name_both_keys():
    err = failure("evaluate", CLUSTER, "--set", "workload.precision=bf16", "--set", "workload.fp16=true")
    assert "workload.fp16" in err and "workload.precision" in err and "disagree" in err
    err = failure("evaluate", CLUSTER, "--set", "parallelism.rank_order=tp-cp-ep-dp-pp",
                  "--set", "parallelism.use_tp_pp_dp_mapping=true")
    assert "use_tp_pp_dp_mapping" in err and "rank_order" in err
    err = failure("evaluate", CLUSTER, "--set", "workload.moe_layer_freq=[1]*3+[0]*29")
    assert "--set workload.moe_layer_freq" in err and "dense layer after an MoE layer" in err
    err = failure("evaluate", CLUSTER, "--set", "workload.fp8_format=e5m2")
    assert "e4m3 or hybrid" in err
    err = failure("evaluate", CLUSTER, "--set", "workload.bf61=true")
    assert "did you mean bf16" in err


@pytest.mark.parametrize("text, layers", [
    ("[0]*3+[1]*58", [0] * 3 + [1] * 58),
    ("([1]*3+[0]*1)*3", [1, 1, 1, 0] * 3),
    ("([0]+[1]*23)", [0] + [1] * 23),
    ("[0, 1, 1]", [0, 1, 1]),
    ("2*[1]", [1, 1]),
])
def test_the_pattern_reader_reads_megatrons_language(text, layers):
    assert parse_layer_pattern(text) == layers


@pytest.mark.parametrize("text", ["__import__('os')", "[0]*", "[0]*[1]", "[1]*99999999", "(" * 100 + "[1]" + ")" * 100,
                                  "[0]]", "3", "[1,]*2+", "[" + "1," * 20000 + "]"])
def test_the_pattern_reader_refuses_what_is_not_a_bounded_pattern(text):
    with pytest.raises(PatternError):
        parse_layer_pattern(text)


def test_a_rank_order_without_ep_places_ep_inside_dp_as_megatron_carves_experts_from_dp():
    """tp-cp-pp-dp (how TP_PP_DP_MAPPING runs write it) is Megatron's tp-cp-pp-ep-dp."""
    import json

    from tests.conftest import EXAMPLES, run_cli

    code, out, err = run_cli("evaluate", EXAMPLES / "h100-64gpu-infiniband.yaml", "--json",
                             "--set", "parallelism.rank_order=tp-cp-pp-dp")
    assert code == 0, err
    assert json.loads(out)["plan"]["rank_order"] == "tp-cp-pp-ep-dp"
    code, _, err = run_cli("evaluate", EXAMPLES / "h100-64gpu-infiniband.yaml", "--set", "parallelism.rank_order=tp-pp-dp")
    assert code == 65 and "is not an order" in err
