"""The experts' clamped quick-GeGLU (gpt-oss: --quick-geglu --activation-func-clamp-value 7): outside
Transformer Engine's op fuser Megatron-Core clamps the FC1 output in eager PyTorch passes before its
compiled activation (fused_bias_geglu.weighted_bias_quick_geglu_impl), forward, backward and again
where moe_act is recomputed. Each test fails on the engine without those passes."""
import dataclasses
import json

import pytest

from designer.core.engine.compute import Sharding, layer_cost, routed_load
from designer.core.engine.constants import EngineConstants
from designer.core.engine.flops import ModelShape
from designer.core.model.job import Workload
from tests.conftest import EXAMPLES, run_cli
from tests.core.engine_ops import NO_COMM, ops_of

def _shape(**kw) -> ModelShape:
    """gpt-oss-120b's layer: 128 experts of width 2880, top-4, quick-GeGLU, biased linears."""
    base = dict(num_layers=36, hidden_size=2880, moe_ffn_hidden_size=2880, num_experts=128, moe_router_topk=4,
                num_attention_heads=64, num_query_groups=8, kv_channels=64, seq_length=4096, vocab_size=201088,
                quick_geglu=True, disable_bias_linear=False, global_batch_size=1280, micro_batch_size=2)
    base.update(kw)
    return ModelShape.of(Workload(**base))


def _sharding(**kw) -> Sharding:
    return Sharding(tp=1, cp=1, ep=8, etp=1, sequence_parallel=False, recompute="none", tp_comm_overlap=False,
                    moe_dispatcher="flex", **kw)


def test_the_clamp_adds_its_eager_passes_and_kernels_each_way():
    """8 bytes forward (two clamps over the halves, the cat) and 10 backward (the masked gradients,
    the chunk's cat) per element of the FC1 output, three kernels each way; none without a clamp."""
    k, ops, sh = EngineConstants(), ops_of(), _sharding()
    clamped, plain = _shape(activation_func_clamp_value=7.0), _shape()
    assert clamped.expert_act_clamp and not plain.expert_act_clamp and clamped.phi == 3
    with_clamp = layer_cost(clamped, sh, 2, True, ops, NO_COMM, k)
    without = layer_cost(plain, sh, 2, True, ops, NO_COMM, k)
    busiest = routed_load(clamped, sh, 2 * clamped.s, ops.ac.gemm_tile_m, k).load_factor
    elements = 2 * clamped.s * clamped.topk * 2 * clamped.f_expert * busiest
    fwd = ops.memory(elements * 8) + 3 * ops.overhead_s
    bwd = ops.memory(elements * 10) + 3 * ops.overhead_s
    assert with_clamp.fwd.busy["compute"] - without.fwd.busy["compute"] == pytest.approx(fwd, rel=1e-6)
    assert with_clamp.bwd.busy["compute"] - without.bwd.busy["compute"] == pytest.approx(bwd, rel=1e-6)
    # the calibration's constants are what is charged
    off = EngineConstants(expert_clamp_fwd_bytes_per_element=0, expert_clamp_bwd_bytes_per_element=0,
                          expert_clamp_kernels=0)
    zeroed = layer_cost(clamped, sh, 2, True, ops, NO_COMM, off)
    assert zeroed.fwd.busy["compute"] == pytest.approx(without.fwd.busy["compute"], rel=1e-9)


def test_the_op_fuser_and_a_silu_gate_have_no_eager_clamp():
    """Transformer Engine's fused experts' MLP clamps inside ScaledClampedQGeGLU; Megatron's fused
    SwiGLU takes no clamp. SequentialMLP (no grouped GEMM) clamps per expert: the same bytes in
    three kernels per local expert."""
    k, ops = EngineConstants(), ops_of()
    clamped, plain = _shape(activation_func_clamp_value=7.0), _shape()
    fused = _sharding(te_op_fuser=True)
    assert layer_cost(clamped, fused, 2, True, ops, NO_COMM, k).fwd.busy["compute"] == pytest.approx(
        layer_cost(plain, fused, 2, True, ops, NO_COMM, k).fwd.busy["compute"], rel=1e-9)
    grouped, sequential = _sharding(), _sharding(grouped_gemm=False)
    extra = [layer_cost(clamped, sh, 2, True, ops, NO_COMM, k).fwd.busy["compute"]
             - layer_cost(plain, sh, 2, True, ops, NO_COMM, k).fwd.busy["compute"] for sh in (grouped, sequential)]
    assert extra[1] - extra[0] == pytest.approx(3 * (128 // 8 - 1) * ops.overhead_s, rel=1e-6)
    silu = _shape(quick_geglu=None, swiglu=True, activation_func_clamp_value=7.0)
    assert not silu.expert_act_clamp and silu.phi == 3


def test_recomputing_moe_act_runs_the_clamp_again():
    """Selective recompute of moe_act re-runs the activation function, clamp included."""
    k, ops = EngineConstants(), ops_of()
    sh = dataclasses.replace(_sharding(), recompute="selective", recompute_modules=("moe_act",))
    clamped, plain = _shape(activation_func_clamp_value=7.0), _shape()
    busiest = routed_load(clamped, sh, 2 * clamped.s, ops.ac.gemm_tile_m, k).load_factor
    elements = 2 * clamped.s * clamped.topk * 2 * clamped.f_expert * busiest
    extra = (layer_cost(clamped, sh, 2, True, ops, NO_COMM, k).bwd.busy["recompute"]
             - layer_cost(plain, sh, 2, True, ops, NO_COMM, k).bwd.busy["recompute"])
    assert extra == pytest.approx(ops.memory(elements * 8) + 3 * ops.overhead_s, rel=1e-6)


GPT_OSS_LIKE = ["workload.preset=", "workload.num_layers=4", "workload.hidden_size=2880",
                "workload.num_attention_heads=64", "workload.num_query_groups=8", "workload.kv_channels=64",
                "workload.seq_length=4096", "workload.vocab_size=201088", "workload.quick_geglu=true",
                "workload.num_experts=128", "workload.moe_router_topk=4", "workload.moe_ffn_hidden_size=2880",
                "workload.disable_bias_linear=false", "workload.window_size=[127, 0]",
                "workload.window_attn_skip_freq=2", "workload.global_batch_size=64", "workload.micro_batch_size=1",
                "parallelism.tensor_model_parallel_size=1", "parallelism.pipeline_model_parallel_size=1",
                "parallelism.expert_model_parallel_size=8", "parallelism.moe_grouped_gemm=true",
                "parallelism.use_distributed_optimizer=true"]


def evaluate(*sets: str) -> dict:
    args = ["evaluate", EXAMPLES / "h100-64gpu-infiniband.yaml", "--json"]
    for kv in GPT_OSS_LIKE + list(sets):
        args += ["--set", kv]
    code, out, err = run_cli(*args)
    assert code == 0, err
    return json.loads(out)


def test_a_gpt_oss_like_job_pays_the_clamp_unless_te_fuses_its_experts():
    """Through `designer evaluate`: the clamp value lengthens the step's compute; the op fuser takes it away."""
    plain = evaluate()
    clamped = evaluate("workload.activation_func_clamp_value=7")
    fuser = "parallelism.use_transformer_engine_op_fuser=true"
    fused, fused_plain = evaluate("workload.activation_func_clamp_value=7", fuser), evaluate(fuser)
    assert clamped["breakdown_s"]["compute"] > plain["breakdown_s"]["compute"] * 1.005
    assert fused["breakdown_s"]["compute"] == pytest.approx(fused_plain["breakdown_s"]["compute"], rel=1e-9)


def test_the_op_fuser_runs_no_eager_expert_bias_passes():
    """With Transformer Engine's op fuser Megatron-Core's TEGroupedMLP.forward returns from
    _fused_forward and never calls _apply_bias: TE's GroupedLinear op adds the FC2 bias, so the
    eager per-expert bias passes and kernels are not charged."""
    k, ops = EngineConstants(), ops_of()
    biased, unbiased = _shape(), _shape(disable_bias_linear=True)
    eager, fused = _sharding(), _sharding(te_op_fuser=True)
    cost = lambda m, sh: layer_cost(m, sh, 2, True, ops, NO_COMM, k)  # noqa: E731
    for phase in ("fwd", "bwd"):
        assert getattr(cost(biased, fused), phase).busy["compute"] == pytest.approx(
            getattr(cost(unbiased, fused), phase).busy["compute"], rel=1e-9)
        assert getattr(cost(biased, eager), phase).busy["compute"] > \
            getattr(cost(unbiased, eager), phase).busy["compute"] * 1.01
