"""The busiest GPU of an expert-parallel group sets each MoE layer's pace: the routed rows it gets
(sampling, a trained router's preferences), the capacity factor's drops and padding, and the
grouped GEMM's whole tiles (engine/moe.py)."""
from __future__ import annotations

import json

import pytest

from designer.core.engine.constants import EngineConstants
from designer.core.engine.moe import dropped_share, expected_max_of_normals, expert_load, rank_load_cv
from tests.conftest import run_cli

K = EngineConstants()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    path = tmp_path_factory.mktemp("moe-load") / "c.yaml"
    code, _, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", "4", "--gpu", "H100")
    assert code == 0, err
    return path


def _evaluate(cluster, *sets: str) -> dict:
    args = ["evaluate", cluster, "--json", "--set", "workload.preset=qwen3-30b-a3b",
            "--set", "workload.global_batch_size=64", "--set", "workload.micro_batch_size=1",
            "--set", "parallelism.expert_model_parallel_size=16"]
    for s in sets:
        args += ["--set", s]
    code, out, err = run_cli(*args)
    assert code == 0, err
    return json.loads(out)


def test_expected_maximum_of_normals():
    assert expected_max_of_normals(1) == 0.0
    assert expected_max_of_normals(2) == pytest.approx(0.5642, abs=0.03)  # exact 1/sqrt(pi)
    assert expected_max_of_normals(8) == pytest.approx(1.4236, abs=0.02)
    assert expected_max_of_normals(64) == pytest.approx(2.4075, abs=0.08)


def test_forced_routing_spreads_only_by_sampling():
    # 1000 tokens, top-2 of 8 experts on 2 GPUs: each GPU's count is hypergeometric per token
    cv = rank_load_cv(8, 2, 2, 1000, 0.0)
    mean = 1000 * 2 / 2
    var = 1000 * 2 * 0.5 * 0.5 * 6 / 7
    assert cv == pytest.approx(var ** 0.5 / mean)
    # more tokens: a smaller spread; a router's preference adds to it
    assert rank_load_cv(8, 2, 2, 100_000, 0.0) < cv < rank_load_cv(8, 2, 2, 1000, 0.3)
    assert rank_load_cv(128, 8, 1, 1000, 0.3) == 0.0  # one GPU holds every expert


def test_capacity_caps_the_busiest_gpu_and_padding_costs_the_capacity():
    free = expert_load(128, 8, 16, 8192, 16 * 1024, 8, "aux_loss", None, False, 128, K)
    assert free.load_factor > 1.15  # an auxiliary loss leaves the busiest of 16 GPUs well above the mean
    capped = expert_load(128, 8, 16, 8192, 16 * 1024, 8, "aux_loss", 1.1, False, 128, K)
    assert capped.load_factor == pytest.approx(1.1) and capped.dropped_share > 0
    padded = expert_load(128, 8, 16, 8192, 16 * 1024, 8, "forced", 2.0, True, 128, K)
    assert padded.load_factor == 2.0 and padded.padded_rows_per_expert % 128 == 0
    assert dropped_share(1.0, 0.0) == 0.0 and dropped_share(0.5, 0.0) == 0.5
    assert dropped_share(1.25, 0.3) < dropped_share(1.0, 0.3)


def test_grouped_gemm_computes_whole_tiles():
    # 4 tokens x top-1 of 64 experts on one GPU: each expert gets a few rows, each costs a 128-row tile
    few = expert_load(64, 1, 1, 256, 256, 64, "forced", None, False, 128, K)
    assert few.rows_per_expert == pytest.approx(4)
    assert few.padded_rows_per_expert == 128 and few.gemm_factor == pytest.approx(32)
    many = expert_load(64, 1, 1, 64 * 8192, 64 * 8192, 64, "forced", None, False, 128, K)
    assert many.gemm_factor == pytest.approx(1 + 64 / 8192)


def test_a_trained_router_makes_the_step_slower_than_forced_balance(cluster):
    forced = _evaluate(cluster, "parallelism.moe_router_force_load_balancing=true")
    aux = _evaluate(cluster, "parallelism.moe_router_load_balancing_type=aux_loss")
    bias = _evaluate(cluster, "parallelism.moe_router_enable_expert_bias=true")
    assert forced["step_time_s"] < bias["step_time_s"] < aux["step_time_s"]
    assert aux["step_time_s"] > 1.03 * forced["step_time_s"]
    assert not any("costed as balanced" in w for w in aux["warnings"])
    # the spread is a named constant a calibration overrides
    even = _evaluate(cluster, "parallelism.moe_router_load_balancing_type=aux_loss",
                     "calibration.moe_expert_load_cv_aux_loss=0")
    assert even["step_time_s"] == pytest.approx(forced["step_time_s"], rel=1e-9)


def test_capacity_factor_drops_and_pads(cluster):
    aux = _evaluate(cluster)
    dropping = _evaluate(cluster, "parallelism.moe_expert_capacity_factor=1.0")
    padded = _evaluate(cluster, "parallelism.moe_expert_capacity_factor=2.0",
                       "parallelism.moe_pad_expert_input_to_capacity=true")
    assert dropping["step_time_s"] < aux["step_time_s"] < padded["step_time_s"]


def test_unbalanced_router_is_said(cluster):
    data = _evaluate(cluster, "parallelism.moe_router_load_balancing_type=none")
    assert any("load_balancing_type none" in w for w in data["warnings"])


def test_bad_capacity_factor_is_refused_with_its_place(cluster):
    code, _, err = run_cli("evaluate", cluster, "--set", "workload.preset=qwen3-30b-a3b",
                           "--set", "parallelism.moe_expert_capacity_factor=0")
    assert code != 0 and "moe_expert_capacity_factor" in err and "Traceback" not in err


def test_ep_overlap_pairs_only_the_steady_state_micro_batches():
    from designer.core.engine.moe import ep_overlap_share
    assert ep_overlap_share(5, 1, 1) == pytest.approx(4 / 5)  # the first forward, the last backward alone
    assert ep_overlap_share(1, 1, 1) == 0.0
    assert ep_overlap_share(64, 4, 4) == pytest.approx(1 - (3 + 3 * 4 + 1) / 256)
    assert ep_overlap_share(16, 4, 1) < ep_overlap_share(64, 4, 1) < 1.0


def test_few_micro_batches_leave_more_of_the_all_to_all_exposed(cluster):
    def exposed_share(gbs: int) -> float:
        data = _evaluate(cluster, "parallelism.moe_router_force_load_balancing=true",
                         "parallelism.overlap_moe_expert_parallel_comm=true", f"workload.global_batch_size={gbs}")
        ep = data["breakdown_s"]["ep_comm"]
        return ep / (ep + data["hidden_comm_s"]["ep_comm"])
    two, sixteen = exposed_share(64), exposed_share(512)  # DP 32: 2 and 16 micro-batches
    assert two > sixteen + 0.2
    assert two >= 0.5  # one of the two forwards (and backwards) has no partner


def test_node_limited_routing_reaches_fewer_domains():
    from designer.core.engine.compute import flex_dedup
    from designer.core.engine.moe import domains_reached
    # DeepSeek-V3 over 8 servers: top-8 of 256 experts reach 8 (1 - (7/8)^8) = 5.25 servers freely,
    # exactly 4 when each token's experts come from 4 of 8 groups (one group per server)
    assert domains_reached(8, 8) == pytest.approx(8 * (1 - (7 / 8) ** 8))
    assert domains_reached(8, 8, 8, 4) == pytest.approx(4.0)
    # groups coarser than domains (2 servers a group): the 4 groups' 8 servers, not all 16
    assert domains_reached(8, 16, 8, 4) == pytest.approx(8 * (1 - (7 / 8) ** 8))
    assert flex_dedup(8, 8, 8, 4) == pytest.approx(0.5)
    assert flex_dedup(8, 8, 8, 4) < flex_dedup(8, 8)


def test_the_deepseek_preset_limits_its_routing_to_four_nodes(tmp_path):
    path = tmp_path / "c.yaml"
    code, _, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", "8", "--gpu", "H100")
    assert code == 0, err

    def ep_comm(*sets):
        args = ["evaluate", path, "--json", "--set", "workload.preset=deepseek-v3", "--set", "workload.num_layers=8",
                "--set", "workload.global_batch_size=64", "--set", "parallelism.expert_model_parallel_size=64",
                "--set", "parallelism.moe_token_dispatcher_type=flex",
                "--set", "parallelism.moe_router_force_load_balancing=true"]
        for s in sets:
            args += ["--set", s]
        code, out, err = run_cli(*args)
        assert code == 0, err
        data = json.loads(out)
        return data["breakdown_s"]["ep_comm"] + data["hidden_comm_s"]["ep_comm"]
    limited = ep_comm()
    free = ep_comm("workload.moe_router_num_groups=1")
    assert limited < 0.85 * free


def test_dualpipe_hides_the_all_to_all_in_its_main_steps(tmp_path):
    from designer.core.engine.moe import ep_overlap_share
    # 8 ranks, 32 chunks: n - 1.25 pp + 0.75 = 22.75 of 32 forwards run beside a backward
    assert ep_overlap_share(32, 8, 1, "dualpipe") == pytest.approx(22.75 / 32)
    assert ep_overlap_share(16, 8, 1, "dualpipe") < ep_overlap_share(64, 8, 1, "dualpipe") < 1.0
    path = tmp_path / "c.yaml"
    code, _, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", "4", "--gpu", "H100")
    assert code == 0, err

    def hidden(schedule: str) -> float:
        code, out, err = run_cli("evaluate", path, "--json", "--set", "workload.preset=qwen3-30b-a3b",
                                 "--set", "workload.global_batch_size=64", "--set", "workload.micro_batch_size=1",
                                 "--set", "parallelism.pipeline_model_parallel_size=2",
                                 "--set", "parallelism.expert_model_parallel_size=16",
                                 "--set", "parallelism.moe_router_force_load_balancing=true",
                                 "--set", f"parallelism.pipeline_schedule={schedule}")
        assert code == 0, err
        return json.loads(out)["hidden_comm_s"]["ep_comm"]
    assert hidden("1f1b") == 0.0 < hidden("dualpipe")


def test_megatron_line_sets_the_router_balance_capacity_and_groups(tmp_path):
    """The keys are Megatron's own flags: `designer import megatron` reads them from a launch line."""
    import shutil

    from designer.core.io import load_document
    from tests.test_megatron_args import EXAMPLES
    path = tmp_path / "c.yaml"
    shutil.copy(EXAMPLES / "h100-64gpu-infiniband.yaml", path)
    line = tmp_path / "run.sh"
    line.write_text("torchrun pretrain_gpt.py --moe-router-load-balancing-type seq_aux_loss "
                    "--moe-router-enable-expert-bias --moe-expert-capacity-factor 1.25 "
                    "--moe-pad-expert-input-to-capacity --moe-router-num-groups 8 --moe-router-group-topk 4\n")
    code, _, err = run_cli("import", "megatron", line, "--into", path)
    assert code == 0, err
    doc = load_document(path)
    p, w = doc.spec.parallelism, doc.spec.workload
    assert (p.moe_router_load_balancing_type, p.moe_router_enable_expert_bias) == ("seq_aux_loss", True)
    assert (p.moe_expert_capacity_factor, p.moe_pad_expert_input_to_capacity) == (1.25, True)
    assert (w.moe_router_num_groups, w.moe_router_group_topk) == (8, 4)


def test_mxfp8_dispatch_sends_about_half_the_bytes(cluster):
    from designer.core.engine.moe import wire_bytes
    assert wire_bytes("mxfp8") == pytest.approx(1 + 1 / 32) and wire_bytes(None) == wire_bytes("bf16") == 2

    def ep(*sets):
        data = _evaluate(cluster, "parallelism.moe_router_force_load_balancing=true", *sets)
        return data["breakdown_s"]["ep_comm"]
    bf16 = ep()
    fwd = ep("parallelism.moe_dispatch_fwd_dtype=mxfp8")
    both = ep("parallelism.moe_dispatch_fwd_dtype=mxfp8", "parallelism.moe_combine_bwd_dtype=mxfp8")
    # four all-to-alls per layer and micro-batch; each quantized one moves about half the bytes
    assert both < fwd < bf16
    assert bf16 - both == pytest.approx(2 * (bf16 - fwd), rel=0.02)
    assert 0.08 * bf16 < bf16 - fwd < 0.13 * bf16  # half of one of the four: at most an eighth
