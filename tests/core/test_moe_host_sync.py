"""The host synchronisation of each MoE layer's forward: Megatron's dropless token dispatchers copy
the routed token counts to the host (to size the all-to-all and the grouped GEMM) and wait for them,
so the GPU drains once per MoE layer forward and idles while the host issues the next kernels."""
from __future__ import annotations

import json

import pytest

from designer.core.engine.compute import layer_cost
from designer.core.engine.constants import EngineConstants
from tests.conftest import EXAMPLES, run_cli
from tests.core.engine_ops import NO_COMM, ops_of
from tests.core.test_per_step_passes import _shape, _sharding

CLUSTER = EXAMPLES / "h100-64gpu-infiniband.yaml"
# a 4-layer Qwen3-30B-A3B-like MoE on 64 H100, EP 8, one micro-batch of 4096 tokens per step
MOE = ["workload.preset=", "workload.num_layers=4", "workload.hidden_size=2048", "workload.ffn_hidden_size=768",
       "workload.num_attention_heads=32", "workload.num_query_groups=4", "workload.kv_channels=128",
       "workload.seq_length=4096", "workload.vocab_size=151936", "workload.swiglu=true",
       "workload.num_experts=128", "workload.moe_router_topk=8", "workload.moe_ffn_hidden_size=768",
       "workload.global_batch_size=64", "workload.micro_batch_size=1",
       "parallelism.tensor_model_parallel_size=1", "parallelism.pipeline_model_parallel_size=1",
       "parallelism.expert_model_parallel_size=8"]
GAP = "calibration.host_sync_gap_us=1000"  # 1 ms per sync: far above the run-to-run noise of the step


def evaluate(*sets: str) -> dict:
    args = ["evaluate", CLUSTER, "--json"]
    for kv in MOE + list(sets):
        args += ["--set", kv]
    code, out, err = run_cli(*args)
    assert code == 0, err
    return json.loads(out)


def test_each_moe_layer_forward_pays_one_host_sync():
    k, ops = EngineConstants(), ops_of()
    m = _shape()
    eager = _sharding("alltoall")
    synced = type(eager)(**{**eager.__dict__, "moe_host_sync": True})
    without = layer_cost(m, eager, 2, True, ops, NO_COMM, k)
    with_sync = layer_cost(m, synced, 2, True, ops, NO_COMM, k)
    gap = k.moe_host_syncs_per_layer * k.host_sync_gap_us * 1e-6
    assert with_sync.fwd.busy["compute"] - without.fwd.busy["compute"] == pytest.approx(gap, rel=1e-9)
    assert with_sync.bwd.busy["compute"] == without.bwd.busy["compute"]  # the backward reuses the sizes
    dense = layer_cost(m, synced, 2, False, ops, NO_COMM, k)
    assert dense.fwd.busy["compute"] == layer_cost(m, eager, 2, False, ops, NO_COMM, k).fwd.busy["compute"]


def test_the_sync_reaches_the_step_and_the_calibration_sets_it():
    synced = evaluate(GAP)
    unsynced = evaluate(GAP, "calibration.moe_host_syncs_per_layer=0")
    # 4 MoE layers x 1 micro-batch x 1 ms, and the slowest-rank wait and launch gaps that scale with compute
    assert 4e-3 <= synced["step_time_s"] - unsynced["step_time_s"] <= 4.6e-3
    assert synced["breakdown_s"]["compute"] > unsynced["breakdown_s"]["compute"]


@pytest.mark.parametrize("settings", [
    ("parallelism.cuda_graph_impl=full_iteration",),  # the graph replays without the host
    ("parallelism.moe_expert_capacity_factor=1.0", "parallelism.moe_pad_expert_input_to_capacity=true"),
])
def test_no_sync_when_the_sizes_are_fixed_or_the_layer_is_captured(settings):
    synced = evaluate(GAP, *settings)
    unsynced = evaluate(GAP, *settings, "calibration.moe_host_syncs_per_layer=0")
    assert synced["step_time_s"] == unsynced["step_time_s"]


def test_a_partial_cuda_graph_keeps_the_dispatcher_sync():
    scope = ("parallelism.cuda_graph_impl=transformer_engine", "parallelism.cuda_graph_scope=[attn, moe_router]")
    synced = evaluate(GAP, *scope)
    unsynced = evaluate(GAP, *scope, "calibration.moe_host_syncs_per_layer=0")
    assert 4e-3 <= synced["step_time_s"] - unsynced["step_time_s"] <= 4.6e-3
