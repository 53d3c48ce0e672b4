"""Costs the step pays whatever its DP size or token count (for accuracy on the modern runs):
the gradient-buffer zeroing and the FP8 weight quantization once per step, the input embedding's
dense gradient once per micro-batch and its bucket gathered first and reduced last, the alltoall
dispatcher's chunk sorts in every MoE layer, and the merges of context-parallel ring attention.
Each test fails on the engine without the term."""
import json

import pytest

from designer.core.engine.compute import (ACT_BYTES, Sharding, attention_kernels, embedding_cost,
                                          layer_cost, routed_load)
from designer.core.engine.constants import EngineConstants, accelerator_constants
from designer.core.engine.flops import ModelShape
from designer.core.model.catalog import load_catalog
from designer.core.model.job import Workload
from tests.conftest import EXAMPLES, run_cli
from tests.core.engine_ops import NO_COMM, ops_of

CLUSTER = EXAMPLES / "h100-64gpu-infiniband.yaml"  # 64 H100 (3.35 TB/s HBM)
# Llama 3 8B on 64 GPUs, one micro-batch per step (the shape of the MLPerf Llama 3.1 8B runs)
SMALL_MODEL_ONE_MICROBATCH = ["workload.preset=llama3-8b", "workload.global_batch_size=64",
                              "workload.micro_batch_size=1", "parallelism.tensor_model_parallel_size=1",
                              "parallelism.pipeline_model_parallel_size=1",
                              "parallelism.use_distributed_optimizer=true"]


def evaluate(*sets: str) -> dict:
    args = ["evaluate", CLUSTER, "--json"]
    for kv in SMALL_MODEL_ONE_MICROBATCH + list(sets):
        args += ["--set", kv]
    code, out, err = run_cli(*args)
    assert code == 0, err
    return json.loads(out)


def hbm_bytes_per_s() -> float:
    catalog = load_catalog()
    acc = catalog.accelerator("H100-SXM5-80GB")
    return acc.hbm_tbps * 1e12 * accelerator_constants(acc, None, catalog).hbm_efficiency


def llama3_8b_params() -> float:
    out = evaluate()
    return out["memory_gib_per_gpu"]["params"] * 2**30 / 2  # bf16 parameters, all on one GPU (TP 1, PP 1)


def test_the_whole_gradient_buffer_is_zeroed_every_step():
    """Megatron zeroes every local fp32 gradient before each step, not the optimizer's 1/64 shard:
    for 8B parameters that is 32 GB written, about 11 ms on an H100, where the sharded Adam step
    takes about 1.4 ms."""
    with_zeroing = evaluate()["breakdown_s"]["optimizer"]
    without = evaluate("calibration.zero_grad_bytes_per_param=0")["breakdown_s"]["optimizer"]
    expected = llama3_8b_params() * 4 / hbm_bytes_per_s()
    assert with_zeroing - without == pytest.approx(expected, rel=0.01)
    assert with_zeroing > 5 * without  # it dwarfs the sharded optimizer step at DP 64


def test_fp8_weights_kept_in_bf16_are_quantized_once_per_step():
    """Without --fp8-param-gather Transformer Engine reads each BF16 weight and writes its FP8
    copies once per step (delayed scaling: 2 bytes read, 2 written); with FP8 parameters the
    weights arrive quantized. The embedding and the LM head stay BF16 and are not cast."""
    fp8 = ["workload.precision=fp8", "parallelism.fp8_recipe=delayed"]
    bf16_weights = evaluate(*fp8, "parallelism.fp8_param_gather=false")["breakdown_s"]["optimizer"]
    fp8_weights = evaluate(*fp8, "parallelism.fp8_param_gather=true")["breakdown_s"]["optimizer"]
    linear = llama3_8b_params() - 2 * 128256 * 4096  # minus the untied embedding and output layer
    assert bf16_weights - fp8_weights == pytest.approx(linear * (2 + 2) / hbm_bytes_per_s(), rel=0.01)
    # a BF16 run quantizes nothing
    assert evaluate()["breakdown_s"]["optimizer"] == pytest.approx(fp8_weights, rel=1e-6)


def _shape(**kw) -> ModelShape:
    """Qwen3-30B-A3B-like: 128 experts of width 768, top-8 (or a Llama 3 8B table with kw)."""
    base = dict(num_layers=48, hidden_size=2048, ffn_hidden_size=6144, moe_ffn_hidden_size=768, num_experts=128,
                moe_router_topk=8, num_attention_heads=32, num_query_groups=4, kv_channels=128, seq_length=4096,
                vocab_size=151936, swiglu=True, global_batch_size=512, micro_batch_size=2)
    base.update(kw)
    return ModelShape.of(Workload(**base))


def _sharding(dispatcher: str, ep: int = 8) -> Sharding:
    return Sharding(tp=1, cp=1, ep=ep, etp=1, sequence_parallel=False, recompute="none", tp_comm_overlap=False,
                    moe_dispatcher=dispatcher)


def test_the_alltoall_dispatcher_sorts_the_received_tokens_by_local_expert():
    """Megatron's alltoall dispatcher regroups what it receives by local expert before the grouped
    GEMM and back after it (sort_chunks_by_idxs): a read and a write of every routed token copy
    each way, forward and again in backward. The flex dispatcher (DeepEP/HybridEP) writes the
    expert-major layout as it receives, and one expert per GPU needs no sort."""
    m, k, ops = _shape(), EngineConstants(), ops_of()
    tokens = 2 * m.s
    alltoall = layer_cost(m, _sharding("alltoall"), 2, True, ops, NO_COMM, k)
    flex = layer_cost(m, _sharding("flex"), 2, True, ops, NO_COMM, k)
    # two sorts, read + write, bf16, of the rows the busiest GPU of the EP group receives
    busiest = routed_load(m, _sharding("alltoall"), tokens, ops.ac.gemm_tile_m, k).load_factor
    sort_s = ops.memory(tokens * m.topk * m.h * 2 * 2 * ACT_BYTES * busiest)
    assert alltoall.fwd.busy["compute"] - flex.fwd.busy["compute"] == pytest.approx(sort_s, rel=1e-6)
    assert alltoall.bwd.busy["compute"] - flex.bwd.busy["compute"] == pytest.approx(sort_s, rel=1e-6)
    for ep in (128, 1):  # one local expert, or no all-to-all: nothing to sort
        same = [layer_cost(m, _sharding(d, ep), 2, True, ops, NO_COMM, k).fwd.busy["compute"]
                for d in ("alltoall", "flex")]
        assert same[0] == pytest.approx(same[1], rel=1e-9)


def test_expert_biases_add_the_eager_fc2_bias_passes_and_kernels():
    """Experts with biases (gpt-oss; disable_bias_linear: false) have their FC2 bias, scaled by the
    router probability, added by eager per-expert PyTorch operations in FP32 (Megatron-Core
    TEGroupedMLP._apply_bias): 28 bytes forward and 36 backward per routed element of h, and a few
    kernels per local expert. Experts without biases (the default of these recipes) pay nothing."""
    k, ops = EngineConstants(), ops_of()
    sh = _sharding("flex")
    plain, biased = _shape(), _shape(disable_bias_linear=False)
    assert not plain.expert_bias and biased.expert_bias and not _shape(disable_bias_linear=True).expert_bias
    without = layer_cost(plain, sh, 2, True, ops, NO_COMM, k)
    with_bias = layer_cost(biased, sh, 2, True, ops, NO_COMM, k)
    busiest = routed_load(biased, sh, 2 * biased.s, ops.ac.gemm_tile_m, k).load_factor
    elements = 2 * biased.s * biased.topk * biased.h * busiest
    local = biased.experts // sh.ep
    fwd = ops.memory(elements * 28) + (local * 2 + 2) * ops.overhead_s
    bwd = ops.memory(elements * 36) + (local * 5 + 1) * ops.overhead_s
    assert with_bias.fwd.busy["compute"] - without.fwd.busy["compute"] == pytest.approx(fwd, rel=1e-6)
    assert with_bias.bwd.busy["compute"] - without.bwd.busy["compute"] == pytest.approx(bwd, rel=1e-6)
    # the calibration's constants are what is charged
    off = EngineConstants(expert_bias_fwd_bytes_per_element=0, expert_bias_bwd_bytes_per_element=0,
                          expert_bias_fwd_kernels_per_expert=0, expert_bias_bwd_kernels_per_expert=0)
    zeroed = layer_cost(biased, sh, 2, True, ops, NO_COMM, off)
    assert zeroed.fwd.busy["compute"] - without.fwd.busy["compute"] == pytest.approx(2 * ops.overhead_s, rel=1e-6)


def test_the_expert_bias_passes_reach_the_step_through_the_cli():
    """Through `designer evaluate`: a MoE job whose experts have biases takes longer by the bias passes."""
    moe = ["workload.preset=", "workload.num_layers=4", "workload.hidden_size=2048", "workload.ffn_hidden_size=768",
           "workload.num_attention_heads=32", "workload.num_query_groups=4", "workload.kv_channels=128",
           "workload.seq_length=4096", "workload.vocab_size=151936", "workload.swiglu=true",
           "workload.num_experts=128", "workload.moe_router_topk=8", "workload.moe_ffn_hidden_size=768",
           "parallelism.expert_model_parallel_size=8"]
    plain = evaluate(*moe)
    biased = evaluate(*moe, "workload.disable_bias_linear=false")
    assert biased["step_time_s"] > plain["step_time_s"] * 1.005
    assert biased["breakdown_s"]["compute"] > plain["breakdown_s"]["compute"]


def test_the_embedding_gradient_covers_the_whole_vocabulary_shard():
    """The lookup's backward writes a dense gradient of the table shard and the DDP hook adds it to
    the fp32 main_grad: 12 bytes per element of vocab / TP x h, however few tokens the micro-batch
    has (a Llama 3 table of 525M elements: about 2 ms per micro-batch on an H100)."""
    m, ops = _shape(vocab_size=128256, hidden_size=4096), ops_of()
    sh = Sharding(tp=2, cp=1, ep=1, etp=1, sequence_parallel=True, recompute="none", tp_comm_overlap=False)
    with_grad = embedding_cost(m, sh, 1, ops, NO_COMM, EngineConstants()).bwd.busy["compute"]
    no_grad = EngineConstants(embedding_grad_bytes_per_element=0)
    without = embedding_cost(m, sh, 1, ops, NO_COMM, no_grad).bwd.busy["compute"]
    assert with_grad - without == pytest.approx(ops.memory(128256 / 2 * 4096 * 12), rel=1e-6)
    assert with_grad > 10 * without


def nccl_time_s(op: str, nbytes: int) -> float:
    """`designer nccl` on the same 64 GPUs: the time of one collective of `nbytes`."""
    code, out, err = run_cli("nccl", CLUSTER, "--op", op, "--num-gpus", "64", "--min-bytes", str(nbytes),
                             "--max-bytes", str(nbytes), "--json")
    assert code == 0, err
    return json.loads(out)["results"][0]["out_of_place"]["time"] * 1e-6


def test_the_embedding_bucket_is_gathered_first_and_reduced_last_in_full_view():
    """Megatron fills its gradient buckets in reverse model order and gives a parameter larger than a
    bucket a bucket of its own: the input embedding (1 GB in BF16 for Llama 3's 128,256 x 4,096, even
    with FP8 parameters) is the bucket the forward needs first and the backward fills last. With one
    micro-batch nothing hides its all-gather before the first layer or its reduce-scatter after the
    last, so a larger vocabulary shows in dp_comm by the time of those two collectives (before, one
    average 40M-parameter bucket stood for the first and the last whatever the table's size)."""
    sets = ["workload.precision=fp8", "parallelism.fp8_param_gather=true", "parallelism.overlap_grad_reduce=true",
            "parallelism.overlap_param_gather=true"]
    llama3 = evaluate(*sets)["breakdown_s"]["dp_comm"]
    llama2_vocab = evaluate(*sets, "workload.vocab_size=32000")["breakdown_s"]["dp_comm"]
    big, small = 128256 * 4096 * 2, 32000 * 4096 * 2  # BF16 tables
    expected = (nccl_time_s("all_gather", big) - nccl_time_s("all_gather", small)
                + nccl_time_s("reduce_scatter", 2 * big) - nccl_time_s("reduce_scatter", 2 * small))  # fp32 grads
    assert llama3 - llama2_vocab >= 0.9 * expected, (llama3, llama2_vocab, expected)


def test_context_parallel_ring_attention_pays_its_merge_passes():
    """Transformer Engine's p2p ring runs one attention kernel per ring step and merges the partial
    outputs (forward) and dQ, dK/dV (backward) into the running result in separate kernels, besides
    packing and copying the KV blocks; Ulysses (a2a) attends to whole sequences and merges nothing.
    Llama 3 8B, CP 2, one 8,192-token sequence: 4,096 tokens per rank, output width 4,096, K+V 2,048."""
    m, ops, k = _shape(num_layers=32, hidden_size=4096, ffn_hidden_size=14336, num_experts=None,
                       moe_ffn_hidden_size=None, moe_router_topk=None, num_query_groups=8, seq_length=8192,
                       vocab_size=128256, micro_batch_size=1), ops_of(), EngineConstants()

    def layer(cp_comm):
        sh = Sharding(tp=1, cp=2, ep=1, etp=1, sequence_parallel=False, recompute="none", tp_comm_overlap=False,
                      cp_comm=cp_comm)
        return layer_cost(m, sh, 1, False, ops, NO_COMM, k)

    ring, ulysses = layer("p2p"), layer("a2a")
    # the ring's attention kernels (one per step, smaller) differ from Ulysses' one: not merge traffic
    kernels = {c: attention_kernels(m, Sharding(tp=1, cp=2, ep=1, etp=1, sequence_parallel=False, recompute="none",
                                                tp_comm_overlap=False, cp_comm=c), 1) for c in ("p2p", "a2a")}
    attn_f = ops.attention(kernels["p2p"]) - ops.attention(kernels["a2a"])
    attn_b = ops.attention(kernels["p2p"], backward=True) - ops.attention(kernels["a2a"], backward=True)
    tokens, out_w, kv_w = 4096, 4096, 2048
    # forward: pack K,V (copy) + copy the half KV of the second step (copy), first output (copy) + one merge
    fwd_bytes = tokens * (kv_w * (4 + 4) + out_w * (4 + 6))
    # backward: K,V into the ring buffer, the half-KV copy again, dK/dV merged twice, dQ merged twice
    bwd_bytes = tokens * (kv_w * (4 + 4 + 2 * 6) + out_w * 2 * 6)
    # and the ring's small kernels' fixed costs (engine/cp_ring.py): 3 x 2 - 1 forward, 4 x 2 backward
    kernel_s = ops.ac.gemm_overhead_us * 1e-6
    assert ring.fwd.busy["compute"] - ulysses.fwd.busy["compute"] - attn_f == pytest.approx(
        ops.memory(fwd_bytes) + 5 * kernel_s, rel=1e-6)
    assert ring.bwd.busy["compute"] - ulysses.bwd.busy["compute"] - attn_b == pytest.approx(
        ops.memory(bwd_bytes) + 8 * kernel_s, rel=1e-6)
