"""Every workload/parallelism key of the 2025-26 recipes is accepted by a
file and by --set; the ones the engine does not cost yet are named in the result's warnings."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import run_cli

DATA = Path(__file__).resolve().parents[1] / "validation" / "data" / "published-cases-modern.yaml"
# The model and parallelism keys; the FP8, pipeline-split and rank-order keys belong to other parts.
THIS_PART = {
    "workload": ("multi_latent_attention", "q_lora_rank", "kv_lora_rank", "qk_head_dim", "qk_pos_emb_head_dim",
                 "v_head_dim", "moe_layer_freq", "mtp_num_layers", "qk_layernorm", "window_size",
                 "window_attn_skip_freq"),
    "parallelism": ("moe_token_dispatcher_type", "moe_flex_dispatcher_backend", "moe_router_force_load_balancing",
                    "moe_grouped_gemm", "overlap_moe_expert_parallel_comm", "recompute_modules", "cuda_graph_impl",
                    "cuda_graph_scope", "use_megatron_fsdp", "data_parallel_sharding_strategy", "fsdp_double_buffer",
                    "cpu_offloading_num_layers", "cp_comm_type"),
}


def _new_keys_with_values() -> list[tuple[str, str, object]]:
    """(section, key, the first value a published case gives it) for every new key of this part."""
    data = yaml.safe_load(DATA.read_text())
    wanted = {(s, k) for s, keys in THIS_PART.items() for k in keys}
    found: dict[tuple[str, str], object] = {}
    for case in data["training"]:
        for section in ("workload", "parallelism"):
            for key, value in (case.get(section) or {}).items():
                found.setdefault((section, key), value)
    assert wanted <= set(found), f"no case gives {sorted(wanted - set(found))}"
    return sorted((s, k, found[(s, k)]) for s, k in wanted)


NEW_KEYS = _new_keys_with_values()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    path = tmp_path_factory.mktemp("c") / "c.yaml"
    code, out, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", "2", "--gpu", "H100")
    assert code == 0, err
    return path


def _flow(value) -> str:
    return yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("...").strip()


def _base_sets():
    return ["--set", "workload.preset=llama3-8b", "--set", "parallelism.tensor_model_parallel_size=2"]


@pytest.mark.parametrize("section,key,value", NEW_KEYS, ids=[k for _, k, _ in NEW_KEYS])
def test_new_key_accepted_by_set(cluster, section, key, value):
    layers = ["--set", "workload.num_layers=61"] if key == "moe_layer_freq" else []  # DeepSeek-V3's pattern
    code, out, err = run_cli("evaluate", cluster, *_base_sets(), *layers,
                             "--set", f"{section}.{key}={_flow(value)}", "--json")
    assert code == 0, err
    assert json.loads(out)["step_time_s"] > 0


def test_every_new_key_accepted_by_a_file_and_unmodelled_ones_warned(cluster, tmp_path):
    doc = yaml.safe_load(Path(cluster).read_text())
    spec = doc["spec"]
    spec["workload"] = {"preset": "llama3-8b"}
    spec["parallelism"] = {"tensor_model_parallel_size": 2}
    for section, key, value in NEW_KEYS:
        if key != "moe_layer_freq":  # a dense preset: the MoE pattern is checked against num_layers elsewhere
            spec[section][key] = value
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    code, out, err = run_cli("evaluate", path, "--json")
    assert code == 0, err
    warnings = json.loads(out)["warnings"]
    said = [w for w in warnings if w.startswith("accepted, not modelled: ")]
    assert said, warnings
    for key in ("fsdp_double_buffer",):  # still not costed: named
        assert key in said[0]
    for key in ("window_size", "mtp_num_layers", "cuda_graph_impl", "cp_comm_type", "multi_latent_attention",
                "recompute_modules", "cpu_offloading_num_layers", "moe_grouped_gemm", "fp8_recipe",
                "moe_token_dispatcher_type", "moe_flex_dispatcher_backend", "moe_router_force_load_balancing"):
        assert key not in said[0]  # costed: not in the warning
    # saved and reopened: the keys survive
    code, _, err = run_cli("validate", path)
    assert code == 0, err


def test_bad_values_are_refused_with_the_place(cluster):
    code, _, err = run_cli("evaluate", cluster, *_base_sets(), "--set", "parallelism.cp_comm_type=ring")
    assert code == 65 and "cp_comm_type" in err
    code, _, err = run_cli("evaluate", cluster, *_base_sets(), "--set", "workload.window_size='[127]'")
    assert code == 65 and "window_size" in err


def test_no_new_key_no_warning(cluster):
    code, out, err = run_cli("evaluate", cluster, *_base_sets(), "--json")
    assert code == 0, err
    assert not any("not modelled" in w for w in json.loads(out)["warnings"])


def test_megatron_fsdp_is_costed_as_the_zero_stage_it_equals(cluster):
    fsdp = ["--set", "parallelism.use_megatron_fsdp=true",
            "--set", "parallelism.data_parallel_sharding_strategy=optim_grads_params"]
    code, out, err = run_cli("evaluate", cluster, *_base_sets(), *fsdp, "--set", "parallelism.zero_stage=3", "--json")
    assert code == 0, err
    assert not any("not modelled" in w for w in json.loads(out)["warnings"])
    code, out, err = run_cli("evaluate", cluster, *_base_sets(), *fsdp, "--json")  # zero_stage 0: not what it says
    assert code == 0, err
    said = [w for w in json.loads(out)["warnings"] if "not modelled" in w]
    assert said and "data_parallel_sharding_strategy" in said[0]


@pytest.mark.parametrize("preset", ["deepseek-v3", "qwen3-235b-a22b", "qwen3-30b-a3b", "gpt-oss-120b",
                                    "llama3.1-405b"])
def test_presets_of_2025_26_evaluate(tmp_path, preset):
    path = tmp_path / "c.yaml"
    code, _, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", "16", "--gpu", "H100")
    assert code == 0, err
    code, out, err = run_cli("evaluate", path, "--set", f"workload.preset={preset}",
                             "--set", "workload.num_layers=8",  # small enough to fit: the dims are the point
                             "--set", "parallelism.expert_model_parallel_size=1",
                             "--set", "parallelism.tensor_model_parallel_size=8", "--json")
    assert code == 0, err
    assert json.loads(out)["step_time_s"] > 0


def test_gpt_oss_preset_costs_its_sliding_window(cluster):
    def run(*extra):
        code, out, err = run_cli("evaluate", cluster, "--set", "workload.preset=gpt-oss-120b",
                                 "--set", "workload.num_layers=2", "--set", "parallelism.expert_model_parallel_size=16",
                                 *extra, "--json")
        assert code == 0, err
        return json.loads(out)
    windowed, full = run(), run("--set", "workload.window_size=[-1, 0]")
    assert not any("window_size" in w for w in windowed["warnings"])
    assert windowed["breakdown_s"]["compute"] < full["breakdown_s"]["compute"]


def _run(cluster, *sets):
    args = []
    for kv in sets:
        args += ["--set", kv]
    code, out, err = run_cli("evaluate", cluster, *_base_sets(), *args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_the_costed_keys_change_the_prediction_for_their_physical_reason(cluster):
    base = _run(cluster)
    # a sliding window attends to fewer keys: less core-attention work
    window = _run(cluster, "workload.window_size=[127, 0]", "workload.window_attn_skip_freq=2")
    assert window["breakdown_s"]["compute"] < base["breakdown_s"]["compute"]
    # an MTP module is one more layer and one more logits head on the last stage
    mtp = _run(cluster, "workload.mtp_num_layers=1")
    assert mtp["step_time_s"] > base["step_time_s"]
    # CUDA graphs remove the launch gaps between kernels
    graphs = _run(cluster, "parallelism.cuda_graph_impl=full_iteration")
    assert graphs["breakdown_s"]["compute"] < base["breakdown_s"]["compute"]
    # selective recompute of more modules recomputes more
    attn_only = _run(cluster, "parallelism.recompute_granularity=selective")
    more = _run(cluster, "parallelism.recompute_granularity=selective",
                "parallelism.recompute_modules=[core_attn, layernorm, mlp]")
    assert more["breakdown_s"]["recompute"] > attn_only["breakdown_s"]["recompute"] > 0
    # offloaded activations leave GPU memory
    offload = _run(cluster, "parallelism.cpu_offloading_num_layers=16")
    assert offload["memory_gib_per_gpu"]["activations"] < base["memory_gib_per_gpu"]["activations"]
    # Ulysses all-to-all is exposed where the ring hides behind attention
    ring = _run(cluster, "parallelism.context_parallel_size=2", "parallelism.cp_comm_type=p2p")
    ulysses = _run(cluster, "parallelism.context_parallel_size=2", "parallelism.cp_comm_type=a2a")
    assert ulysses["breakdown_s"]["cp_comm"] != ring["breakdown_s"]["cp_comm"]


def test_mla_shrinks_the_attention_weights_and_refuses_unknown_recompute_modules(cluster):
    small = ["workload.preset=deepseek-v3", "workload.num_layers=4", "workload.first_k_dense_replace=1",
             "parallelism.expert_model_parallel_size=16", "parallelism.tensor_model_parallel_size=1"]
    mha = _run(cluster, *small, "workload.multi_latent_attention=false")
    mla = _run(cluster, *small)
    # MLA's low-rank projections hold fewer weights than 128 full heads of 128
    assert mla["memory_gib_per_gpu"]["params"] < mha["memory_gib_per_gpu"]["params"]
    code, _, err = run_cli("evaluate", cluster, *_base_sets(), "--set", "parallelism.recompute_granularity=selective",
                           "--set", "parallelism.recompute_modules=[attention]")
    assert code == 65 and "recompute_modules" in err and "core_attn" in err


def test_gpt_oss_preset_has_the_checkpoints_linear_biases(cluster):
    """gpt-oss-120b's attention and expert layers carry biases (its config.json attention_bias, the
    experts' gate_up_proj_bias / down_proj_bias; Megatron-Bridge GPTOSSProvider add_bias_linear): the
    preset costs the experts' eager bias passes as a job that spells the biases out does."""
    def run(*extra):
        code, out, err = run_cli("evaluate", cluster, "--set", "workload.preset=gpt-oss-120b",
                                 "--set", "workload.num_layers=2", "--set", "parallelism.expert_model_parallel_size=16",
                                 *extra, "--json")
        assert code == 0, err
        return json.loads(out)["step_time_s"]
    preset, spelled, unbiased = run(), run("--set", "workload.disable_bias_linear=false"), run(
        "--set", "workload.disable_bias_linear=true")
    assert preset == spelled
    assert preset > unbiased
