"""Time of one micro-batch through one model chunk on one GPU, op by op.

GEMMs after TP/CP/EP sharding take a soft roofline, sqrt(t_flops^2 + t_bytes^2) + overhead,
with t_flops at the accelerator's best GEMM throughput. Fitted to XLA's measured H100 matmul
table (tests/validation/data/published-cases.yaml, gemm_shape_dependence_h100): every row within 10%, where a plain
max() roofline is 20% optimistic for thin GEMMs. Core attention runs as flash kernels costed from
their tiles (attention.py: sequence, heads per GPU, head dims, mask); norms, activations and
dropout are HBM-bound (slower as eager kernels: torchtitan, deepspeed). TP, CP and EP communication of the
layer is costed by the caller's `comm` function and split into exposed and hidden parts by
Megatron's overlap rules (layer_traffic.py; docs/engine-model.md, "Overlap").
"""
from __future__ import annotations

import math

from .attention import AttentionKernel, AttentionRates, fp8_backward_kernel, kernel_seconds
from .constants import AcceleratorConstants, EngineConstants
from .cp_ring import cp_ring_fixed_s
from .flops import ModelShape, core_attention_flops_per_token
from .layer_traffic import layer_traffic, overlap_layer_comm
from .memory import grad_bytes_per_param
from .moe import ExpertLoad, domains_reached, expert_load
from .phase import ACT_BYTES, CommFn, GemmTimes, Phase, Sharding

# Bytes per element of a low-precision GEMM operand as the kernel reads it from HBM: the value and
# its share of the scales, as each format defines them (OCP Microscaling Formats (MX) v1.0: an E8M0
# scale per 32 values; NVIDIA NVFP4: an E4M3 scale per 16 values; Transformer Engine's FP8
# block scaling: an fp32 scale per 1 x 128 tile of activations and gradients, per 128 x 128 block
# of weights; delayed and current scaling: one fp32 scale per tensor, nothing per element).
GEMM_OPERAND_BYTES = {
    ("fp8", "delayed"): 1.0,
    ("fp8", "tensorwise"): 1.0,
    ("fp8", "blockwise"): 1.0 + 4 / 128,
    ("fp8", "mxfp8"): 1.0 + 1 / 32,
    ("fp4", "nvfp4"): 0.5 + 1 / 16,
    ("fp4", "mxfp4"): 0.5 + 1 / 32,
}


def gemm_operand_bytes(precision: str, recipe: str | None) -> float:
    """HBM bytes per element of a GEMM's A and B operands at the job's precision and scaling recipe
    (None: Megatron's default, delayed FP8 scaling / NVFP4). BF16 and FP16: 2."""
    default = {"fp8": "delayed", "fp4": "nvfp4"}.get(precision)
    if default is None:
        return float(ACT_BYTES)
    return GEMM_OPERAND_BYTES.get((precision, recipe or default), GEMM_OPERAND_BYTES[(precision, default)])


def flex_dedup(topk: int, domains: float, groups: int = 0, group_topk: int = 0) -> float:
    """Share of the all-to-all's cross-domain bytes a domain-aware dispatcher (DeepEP, HybridEP:
    Megatron --moe-token-dispatcher-type flex) still sends. A token whose top-k experts sit in
    several GPUs of one remote domain crosses the network once and is forwarded there over NVLink:
    with the experts spread evenly over D domains, a token reaches k (D-1)/D remote experts but only
    (D-1)(1 - (1 - 1/D)^k) distinct remote domains (DeepSeek-V3 report, section 3.2.2); fewer with
    group-limited routing (moe.domains_reached)."""
    if domains <= 1 or topk <= 0:
        return 1.0
    return min(1.0, domains_reached(topk, domains, groups, group_topk) / topk)


def moe_sort_bytes(m: ModelShape, sh: Sharding, tokens: float, k: EngineConstants) -> float:
    """HBM bytes of the alltoall dispatcher's two chunk sorts in one MoE layer's forward.
    Megatron's MoEAlltoAllTokenDispatcher receives the tokens of each source rank grouped by
    expert and, when a GPU holds more than one expert, regroups them by local expert before the
    grouped GEMM (sort_chunks_by_idxs) and back after it, before the combine all-to-all: each a
    read and a write of every routed token copy (tokens x top-k rows of h). The allgather and
    flex dispatchers have no such step (flex's DeepEP/HybridEP kernels write the expert-major
    layout as they receive)."""
    local_experts = m.experts // sh.ep if sh.ep else m.experts
    if sh.moe_dispatcher != "alltoall" or sh.ep <= 1 or local_experts <= 1:
        return 0.0
    copies = tokens * m.topk / sh.tp  # routed token rows on this GPU (the layer's 1/t, as the permute above)
    return copies * m.h * k.moe_sort_bytes_per_element


def expert_bias_bytes(m: ModelShape, sh: Sharding, tokens: float, k: EngineConstants) -> tuple[float, float]:
    """HBM bytes (forward, backward) of adding the experts' FC2 bias in one MoE layer, where the
    experts have biases. Megatron-Core adds it after the grouped GEMM, scaled by each row's router
    probability, as eager PyTorch operations per local expert in FP32 (TEGroupedMLP._apply_bias):
    several full passes over every routed token row of h, where a fused epilogue would take none.
    With Transformer Engine's op fuser the experts' MLP never reaches that code: TE's GroupedLinear
    op adds the probability-scaled bias itself (scale_bias, its grouped bias-gradient kernels)."""
    if not m.expert_bias or sh.te_op_fuser:
        return 0.0, 0.0
    elements = tokens * m.topk / sh.tp * m.h  # routed token rows on this GPU, as the chunk sorts
    return elements * k.expert_bias_fwd_bytes_per_element, elements * k.expert_bias_bwd_bytes_per_element


def expert_clamp_elements(m: ModelShape, sh: Sharding, tokens: float) -> float:
    """Elements of the experts' FC1 output that Megatron-Core clamps in eager passes before a
    quick-GeGLU with a clamp value (gpt-oss; TEGroupedMLP and SequentialMLP's per-expert MLP alike),
    0 where it does not: without an expert clamp, or with Transformer Engine's op fuser, whose fused
    activation (ScaledClampedQGeGLU) clamps inside its own kernel."""
    if not m.expert_act_clamp or sh.te_op_fuser:
        return 0.0
    return tokens * m.topk / sh.tp * (m.phi - 1) * m.f_expert  # the FC1 GEMMs' outputs: rows x etp, width / etp


def routed_load(m: ModelShape, sh: Sharding, tokens: float, tile_m: int, k: EngineConstants) -> ExpertLoad:
    """The busiest EP GPU's routed rows in one MoE layer (engine/moe.py): `tokens` of this GPU's
    micro-batch, each GPU of the EP group routing its own."""
    local_experts = max(1, m.experts // sh.ep)
    rows_per_gpu = tokens * m.topk * sh.etp / sh.tp
    group_tokens = tokens * sh.ep * sh.etp / sh.tp
    return expert_load(m.experts, m.topk, sh.ep, rows_per_gpu, group_tokens, local_experts, sh.moe_balance,
                       sh.moe_capacity_factor, sh.moe_pad_to_capacity, tile_m, k)


def cp_ring_merge_bytes(m: ModelShape, sh: Sharding, tokens: float, k: EngineConstants) -> tuple[float, float]:
    """HBM bytes (forward, backward) of one layer's context-parallel ring attention beyond the
    attention kernels, on the rank with the most (the last: every ring step after the first is a
    full-row, half-KV block). Transformer Engine's AttnFuncWithCPAndKVP2P (sbhd, causal) runs one
    attention kernel per ring step and merges the partial results in separate kernels:
    forward, it packs K and V into the send buffer (torch.cat), copies the half of each received KV
    block the step attends to (.contiguous()), and merges each step's partial output into the
    output rescaled by the softmax statistics (flash_attn_fwd_out_correction: read the output and
    the step's part, write the output); backward, it copies K and V into the ring buffer, copies
    the KV halves again, and accumulates each step's dQ and dK/dV into the gradients (add_: read
    both, write one). `cp_merge_bytes_per_element` is the bytes of one merge per element of the
    merged tensor, a copy moves 2 + 2."""
    c, t = sh.cp, sh.tp
    out_w = m.heads * m.v_dim / t  # attention output (and its gradient) per token on this rank
    q_w = m.heads * m.qk_dim / t
    kv_w = m.kv_comm_width / t
    copy = 2 * ACT_BYTES
    merge = k.cp_merge_bytes_per_element
    fwd = kv_w * (copy + (c - 1) * copy) + out_w * (copy + (c - 1) * merge)
    bwd = kv_w * (copy + (c - 1) * copy + c * merge) + q_w * c * merge
    return tokens * fwd, tokens * bwd


def fp8_attention_speedup(ac: AcceleratorConstants, fmt: str, head_dim: int, backward: bool) -> float:
    """BF16 / FP8 time of cuDNN's fused attention (format "fp8" or "mxfp8") at a query.key head dim:
    the accelerator's measured speed-ups at 128 and 192, linear between, the nearer one outside."""
    prefix = f"attention_{fmt}_speedup_{'backward' if backward else 'forward'}"
    at128, at192 = getattr(ac, prefix), getattr(ac, prefix + "_192")
    share = min(1.0, max(0.0, (head_dim - 128) / 64))
    return at128 + share * (at192 - at128)


class OpCoster:
    """Roofline times of GEMMs, attention and memory-bound kernels on one accelerator."""

    def __init__(self, peak_tflops: float, peak16_tflops: float, hbm_tbps: float, ac: AcceleratorConstants,
                 slowdown: float = 1.0, gemm_efficiency: float | None = None, fp8_cast_bytes: float = 0.0,
                 fp8_attention: str | None = None, operand_bytes: float = ACT_BYTES,
                 attention_rate: float = 1.0):
        clock = ac.sustained_clock_factor
        # `gemm_efficiency`: measured best GEMM / peak at the job's precision (FP8 reaches a smaller
        # share of its peak than BF16 does); None keeps the BF16 calibration.
        efficiency = ac.gemm_efficiency_best if gemm_efficiency is None else gemm_efficiency
        self.flops_per_s = peak_tflops * 1e12 * efficiency * clock
        # core attention runs in BF16 unless FP8 attention kernels are asked for (fp8_dot_product_attention):
        # `fp8_attention` "fp8" (per-tensor scales) or "mxfp8" (block scales); they run the BF16 kernel's
        # tiles faster by cuDNN's measured FP8 speed-up (attention_fp8_speedup_*), not by the FP8 peak
        self.fp8_attention = fp8_attention
        # `attention_rate`: the software's kernel generation against the current kernels the
        # attention_* constants are fitted to (EngineConstants.attention_rate_*)
        # softmax exponentials per second (the SFUs run at the BF16 tensor rate / flops-per-exponential,
        # whatever precision the attention MMAs use); None where the part gives no figure
        fpe = ac.attention_flops_per_exponential
        self.attention_rates = tuple(
            AttentionRates(
                mma_flops_per_s=peak16_tflops * 1e12 * eff * clock * attention_rate,
                exp_per_s=peak16_tflops * 1e12 * eff * clock / fpe if fpe else None,
                sms=ac.num_sms, tile_q=ac.attention_tile_q, tile_k=ac.attention_tile_k,
                tile_overhead_blocks=tile, kernel_overhead_s=launch_us * 1e-6, tail_share=ac.attention_tail_share,
                # the latency runs at the kernel's clock and generation, as its blocks do
                tile_latency_s=latency_us * 1e-6 / (clock * attention_rate))
            for eff, tile, latency_us, launch_us in (
                (ac.attention_efficiency, ac.attention_tile_overhead_blocks, ac.attention_tile_latency_us,
                 ac.attention_kernel_overhead_us),
                (ac.attention_backward_efficiency, ac.attention_backward_tile_overhead_blocks,
                 ac.attention_backward_tile_latency_us, ac.attention_backward_kernel_overhead_us)))
        # FP8: HBM bytes per element Transformer Engine moves to quantize a GEMM input (0 in BF16)
        self.fp8_cast_bytes = fp8_cast_bytes
        self._bf16_args = (peak16_tflops, peak16_tflops, hbm_tbps, ac, slowdown, None, 0.0, None, ACT_BYTES,
                           attention_rate) if fp8_cast_bytes else None
        # (a low-precision job is one with cast traffic; its LM head and BF16-kept layers use bf16())
        self._bf16: OpCoster | None = None
        self.wgrad_out_bytes = ac.wgrad_output_bytes
        # bytes per element of a GEMM's A and B operands as the kernel reads them: BF16 2; FP8 1 and
        # FP4 0.5, plus their block scales (gemm_operand_bytes); the output stays BF16
        self.operand_bytes = operand_bytes
        self.bytes_per_s = hbm_tbps * 1e12 * ac.hbm_efficiency
        self.overhead_s = ac.gemm_overhead_us * 1e-6
        self.slowdown = slowdown  # a straggler's factor
        self.ac = ac

    def gemm(self, m: float, n: float, k: float, batch: float = 1.0, out_bytes: float = ACT_BYTES) -> float:
        """One (batched) GEMM C[m,n] = A[m,k] B[k,n]; `out_bytes` per element of C (a weight
        gradient accumulated into fp32 main_grad reads and writes 4 + 4)."""
        if m <= 0 or n <= 0 or k <= 0:
            return 0.0
        flops = 2.0 * m * n * k * batch
        moved = ((m * k + k * n) * self.operand_bytes + m * n * out_bytes) * batch
        t = math.hypot(flops / self.flops_per_s, moved / self.bytes_per_s) + self.overhead_s
        return t * self.slowdown

    def bf16(self) -> "OpCoster":
        """The same accelerator at BF16: what an FP8 job runs outside Transformer Engine's FP8
        GEMMs (Megatron's LM head is a plain BF16 linear layer)."""
        if self._bf16_args is None:
            return self
        if self._bf16 is None:
            self._bf16 = OpCoster(*self._bf16_args)
        return self._bf16

    def fp8_cast(self, elements: float) -> float:
        """Quantizing `elements` BF16 values for FP8 GEMMs (amax, scale, cast and the transposed
        copy the weight-gradient GEMM reads), HBM-bound."""
        return self.memory(elements * self.fp8_cast_bytes) if self.fp8_cast_bytes else 0.0

    def attention(self, kernels: "list[tuple[AttentionKernel, float]]", backward: bool = False) -> float:
        """Fused attention kernels, each (shape, launches): engine/attention.py's tile model at this
        accelerator's attention constants (tensor cores and softmax exponentials in the same tiles:
        the slower sets a block's pace, FlashAttention-4)."""
        return sum(self.attention_kernel_seconds(kern, backward) * n for kern, n in kernels) * self.slowdown

    def attention_kernel_seconds(self, kern: AttentionKernel, backward: bool = False) -> float:
        """One fused attention kernel at this accelerator's constants; FP8 attention takes the BF16
        kernel's time over the measured speed-up, its backward for the kernel cuDNN runs for it
        (engine/attention.py fp8_backward_kernel)."""
        if not self.fp8_attention:
            return kernel_seconds(kern, self.attention_rates[1 if backward else 0], backward)
        if backward:
            kern = fp8_backward_kernel(kern)
        return kernel_seconds(kern, self.attention_rates[1 if backward else 0], backward) / \
            fp8_attention_speedup(self.ac, self.fp8_attention, kern.qk_dim, backward)

    def memory(self, nbytes: float) -> float:
        return nbytes / self.bytes_per_s * self.slowdown


class LayerCost:
    """One layer's forward and backward phases on one GPU."""
    fwd: Phase
    bwd: Phase  # includes the recomputed forward when recompute is on

    __slots__ = ("fwd", "bwd")

    def __init__(self, fwd: Phase, bwd: Phase) -> None:
        self.fwd = fwd
        self.bwd = bwd


class LayerGemms:
    """A layer's GEMMs on one GPU as (M, N, K): attention's first, then the router and shared experts
    (MoE) or the MLP; the routed experts' grouped GEMMs as (rows per expert, N, K, local experts)."""
    gemms: list[tuple[float, float, float]]
    n_attn: int  # how many of `gemms` are attention's
    router: int  # 1 when gemms[n_attn] is the router (kept in BF16: no FP8 casts)
    experts: list[tuple[float, float, float, float]]
    load: ExpertLoad  # the busiest EP GPU's routed rows

    __slots__ = ("gemms", "n_attn", "router", "experts", "load")

    def __init__(self, gemms: list[tuple[float, float, float]], n_attn: int, router: int,
                 experts: list[tuple[float, float, float, float]], load: ExpertLoad) -> None:
        self.gemms = gemms
        self.n_attn = n_attn
        self.router = router
        self.experts = experts
        self.load = load

    @property
    def mlp(self) -> list[tuple[float, float, float]]:
        """The dense MLP's GEMMs, or the shared experts' in a MoE layer."""
        return self.gemms[self.n_attn + self.router:]


class LayerPasses:
    """Seconds of a layer's HBM-bound passes (norms, activation, residuals, MoE sorts and bias adds),
    the activation's bytes (what recomputing it re-reads) and the eager passes that recomputing it
    runs again (the experts' clamp)."""
    fwd: float
    bwd: float
    act_bytes: float
    act_extra_s: float

    __slots__ = ("fwd", "bwd", "act_bytes", "act_extra_s")

    def __init__(self, fwd: float, bwd: float, act_bytes: float, act_extra_s: float = 0.0) -> None:
        self.fwd = fwd
        self.bwd = bwd
        self.act_bytes = act_bytes
        self.act_extra_s = act_extra_s


def layer_cost(m: ModelShape, sh: Sharding, micro_batch: int, moe: bool, ops: OpCoster, comm: CommFn,
               k: EngineConstants) -> LayerCost:
    """Forward and backward of one transformer layer for one micro-batch on one GPU."""
    T = micro_batch * m.s / sh.cp  # tokens of this GPU's sequence chunk
    X = T * m.h * ACT_BYTES  # one activation tensor, all hidden units
    X_sp = X / sh.tp if sh.sequence_parallel else X

    g = layer_gemms(m, sh, T, moe, ops, k)
    gt = gemm_times(g, sh, ops)
    attn_fwd, attn_bwd, attn_flops = attention_times(m, sh, micro_batch, T, ops)
    passes = layer_passes(m, sh, T, X_sp, moe, g.load, ops, k)
    fwd_compute = gt.fwd + attn_fwd + passes.fwd + ops.fp8_cast(gt.fp8_inputs)
    bwd_compute = gt.dgrad + gt.wgrad + attn_bwd + passes.bwd + ops.fp8_cast(gt.fp8_grads)
    traffic = layer_traffic(m, sh, T, X, moe, g.load, comm, k)

    fwd = Phase()
    bwd = Phase()
    fwd.busy["compute"] = fwd_compute
    fwd.flops = gt.flops + attn_flops
    bwd.flops = 2 * gt.flops + attn_flops * ops.ac.attention_backward_flops_factor
    bwd.busy["compute"] = bwd_compute
    bwd.wgrad_s = gt.wgrad
    overlap_layer_comm(fwd, bwd, traffic, sh, gt, attn_fwd, attn_bwd, fwd_compute, bwd_compute, ops.ac.num_sms,
                       k, attention_block_times(g, attn_fwd, attn_bwd, ops) if moe and sh.ep_comm_overlap else None)
    if sh.zero3:
        gather_layer_params(fwd, bwd, g, sh, fwd_compute, bwd_compute, ops, comm, k)

    # Hidden communication still takes SMs and HBM from the compute it hides behind.
    for ph in (fwd, bwd):
        ph.busy["compute"] += k_slowdown(ops) * sum(ph.hidden.values())
    add_recompute(fwd, bwd, m, sh, g, X_sp, attn_fwd, attn_flops, passes.act_bytes, moe, ops, passes.act_extra_s)
    return LayerCost(fwd, bwd)


def layer_gemms(m: ModelShape, sh: Sharding, T: float, moe: bool, ops: OpCoster, k: EngineConstants) -> LayerGemms:
    """The forward GEMMs of a layer of T tokens on one GPU (each has a dgrad and a wgrad pair)."""
    t = sh.tp
    gemms = attention_gemms(m, T, t)  # QKV (or MLA's down/up projections), output projection
    n_attn = len(gemms)
    expert_gemms: list[tuple[float, float, float, float]] = []  # (M, N, K, count)
    load = routed_load(m, sh, T, ops.ac.gemm_tile_m, k) if moe else ExpertLoad(1.0, 0.0, 0.0, 0.0)
    if moe:
        gemms.append((T, m.experts, m.h))  # router (replicated)
        if m.f_shared:
            gemms += [(T, m.f_shared * (m.phi - 1) / t, m.h), (T, m.h, m.f_shared / t)]
        local_experts = max(1, m.experts // sh.ep)
        # rows of each local expert on the busiest GPU of the EP group, in whole GEMM tiles
        tokens_per_expert = T * m.topk * sh.etp * sh.ep / (t * m.experts) * load.gemm_factor
        expert_gemms = [(tokens_per_expert, m.f_expert * (m.phi - 1) / sh.etp, m.h, local_experts),
                        (tokens_per_expert, m.h, m.f_expert / sh.etp, local_experts)]
    else:
        gemms += [(T, m.f * (m.phi - 1) / t, m.h), (T, m.h, m.f / t)]
    return LayerGemms(gemms, n_attn, 1 if moe else 0, expert_gemms, load)


def gemm_times(g: LayerGemms, sh: Sharding, ops: OpCoster) -> GemmTimes:
    """Forward, dgrad and wgrad seconds of the layer's GEMMs, and what FP8 quantizes."""
    gemms, expert_gemms = g.gemms, g.experts
    # FP8: Transformer Engine quantizes each GEMM's activation input in forward and its output
    # gradient in backward (weights once per step: not charged); the router stays in BF16.
    router = g.n_attn if g.router else -1

    # Without grouped GEMM (Megatron's SequentialMLP) each local expert's GEMM is its own kernel:
    # one fixed GEMM cost per expert instead of one per group, three GEMMs each way.
    per_expert_launch = 0.0 if sh.grouped_gemm or not expert_gemms else (
        len(expert_gemms) * (expert_gemms[0][3] - 1) * ops.overhead_s * ops.slowdown)

    # each pass's sum in one walk over the GEMMs, added in the same order as a sum() per pass
    gemm, wgrad_bytes = ops.gemm, ops.wgrad_out_bytes
    fwd = dgrad = wgrad = flops = fp8_inputs = fp8_grads = 0
    for i, (M, N, K) in enumerate(gemms):
        fwd += gemm(M, N, K)
        dgrad += gemm(M, K, N)
        wgrad += gemm(K, N, M, out_bytes=wgrad_bytes)
        flops += 2 * M * N * K
        if i != router:
            fp8_inputs += M * K
            fp8_grads += M * N
    e_fwd = e_dgrad = e_wgrad = e_flops = e_inputs = e_grads = 0
    for M, N, K, batch in expert_gemms:
        e_fwd += gemm(M, N, K, batch)
        e_dgrad += gemm(M, K, N, batch)
        e_wgrad += gemm(K, N, M, batch, out_bytes=wgrad_bytes)
        e_flops += 2 * M * N * K * batch
        e_inputs += M * K * batch
        e_grads += M * N * batch
    return GemmTimes(per_expert_launch + fwd + e_fwd, per_expert_launch + dgrad + e_dgrad,
                     per_expert_launch + wgrad + e_wgrad, flops + e_flops, fp8_inputs + e_inputs, fp8_grads + e_grads)


def attention_block_times(g: LayerGemms, attn_fwd: float, attn_bwd: float, ops: OpCoster) -> tuple[float, float]:
    """(forward, backward) seconds of the attention block: its GEMMs and the core attention (the node
    Megatron's EP overlap runs a combine under)."""
    attn = g.gemms[:g.n_attn]
    fwd = sum(ops.gemm(M, N, K) for M, N, K in attn)
    bwd = sum(ops.gemm(M, K, N) + ops.gemm(K, N, M, out_bytes=ops.wgrad_out_bytes) for M, N, K in attn)
    return fwd + attn_fwd, bwd + attn_bwd


def attention_times(m: ModelShape, sh: Sharding, micro_batch: int, T: float,
                    ops: OpCoster) -> tuple[float, float, float]:
    """(forward s, backward s, forward FLOPs) of the layer's core attention on one GPU."""
    attn_flops = T * core_attention_flops_per_token(m) / sh.tp  # CP balances the causal halves
    if sh.flash_attention:
        kernels = attention_kernels(m, sh, micro_batch)
        attn_fwd = ops.attention(kernels)
        attn_bwd = ops.attention(kernels, backward=True)
    else:
        attn_fwd, attn_bwd = unfused_attention(m, sh, micro_batch, ops)
    return attn_fwd, attn_bwd, attn_flops


def layer_passes(m: ModelShape, sh: Sharding, T: float, X_sp: float, moe: bool, load: ExpertLoad,
                 ops: OpCoster, k: EngineConstants) -> LayerPasses:
    """The layer's HBM-bound passes and the fixed costs that ride with them."""
    t, c = sh.tp, sh.cp
    width = (m.f_shared + m.f_expert * m.topk * sh.etp / t * load.load_factor) if moe else m.f
    act_bytes = (3 if m.phi == 3 else 2) * T * width * ACT_BYTES / t
    qk_norm = 2 * T * (m.heads * m.qk_dim + m.groups * m.qk_dim) * ACT_BYTES / t if m.qk_norm else 0.0
    norm_factor, act_factor = (k.eager_norm_slowdown, k.eager_activation_slowdown) if sh.eager else (1.0, 1.0)
    mem_fwd = ops.memory(norm_factor * (11 * X_sp + qk_norm) + act_factor * act_bytes
                         + (4 * T * m.h * ACT_BYTES * m.topk / t * load.load_factor if moe else 0))
    mem_bwd = 2 * mem_fwd
    if m.rope_eager:  # the query and key through eager RoPE passes (YaRN), beyond a fused kernel's
        qk = T * (m.heads + m.groups) * m.head_dim / t
        mem_fwd += ops.memory(qk * k.rope_eager_fwd_bytes_per_element) + k.rope_eager_fwd_kernels * ops.overhead_s
        mem_bwd += ops.memory(qk * k.rope_eager_bwd_bytes_per_element) + k.rope_eager_bwd_kernels * ops.overhead_s
    if c > 1 and sh.cp_comm == "p2p" and sh.flash_attention:  # the ring's per-step merges and copies
        merge_f, merge_b = cp_ring_merge_bytes(m, sh, T, k)
        fixed_f, fixed_b = cp_ring_fixed_s(c, k, ops.ac.gemm_overhead_us)
        mem_fwd += ops.memory(merge_f) + fixed_f
        mem_bwd += ops.memory(merge_b) + fixed_b
    if moe:  # the alltoall dispatcher's chunk sorts: a pass each way in forward, mirrored in backward
        sort_s = ops.memory(moe_sort_bytes(m, sh, T, k) * load.load_factor)
        bias_f, bias_b = expert_bias_bytes(m, sh, T, k)
        mem_fwd += sort_s + ops.memory(bias_f * load.load_factor)
        mem_bwd += sort_s + ops.memory(bias_b * load.load_factor)
        if m.expert_bias and not sh.te_op_fuser:  # the eager bias add's kernels: a few per local expert, two (one) per layer
            local = max(1, m.experts // sh.ep)
            mem_fwd += (local * k.expert_bias_fwd_kernels_per_expert + 2) * ops.overhead_s
            mem_bwd += (local * k.expert_bias_bwd_kernels_per_expert + 1) * ops.overhead_s
        if sh.moe_host_sync:  # the GPU drains and idles while the host sizes the dispatch (host time: no slowdown)
            mem_fwd += k.moe_host_syncs_per_layer * k.host_sync_gap_us * 1e-6
        clamp = expert_clamp_elements(m, sh, T) * load.load_factor
        if clamp:  # the eager clamp before the compiled quick-GeGLU (per expert without grouped GEMM), and its backward
            kernels = k.expert_clamp_kernels * (1 if sh.grouped_gemm else max(1, m.experts // sh.ep)) * ops.overhead_s
            clamp_fwd = ops.memory(clamp * k.expert_clamp_fwd_bytes_per_element) + kernels
            mem_fwd += clamp_fwd
            mem_bwd += ops.memory(clamp * k.expert_clamp_bwd_bytes_per_element) + kernels
            return LayerPasses(mem_fwd, mem_bwd, act_bytes, clamp_fwd)
    return LayerPasses(mem_fwd, mem_bwd, act_bytes)


def gather_layer_params(fwd: Phase, bwd: Phase, g: LayerGemms, sh: Sharding, fwd_compute: float,
                        bwd_compute: float, ops: OpCoster, comm: CommFn, k: EngineConstants) -> None:
    """ZeRO-3 / FSDP: all-gather the layer's parameters before its forward and again before its
    backward, reduce-scatter its gradients after; prefetched one layer ahead, so only what the
    layer's own compute cannot cover is exposed."""
    weights = [N * K for _, N, K in g.gemms] + [N * K * b for _, N, K, b in g.experts]
    layer_params = sum(weights)
    grad_bytes = grad_bytes_per_param(sh.grad_reduce_in_bf16, k.grad_reduce_bytes_per_param)
    if sh.framework == "deepspeed":
        # DeepSpeed ZeRO-3 gathers and reduces parameter by parameter: one latency-bound call per
        # weight, each paying the ring's per-rank steps
        ag = sum(comm("dp", "all_gather", w * ACT_BYTES) for w in weights)
        rs = sum(comm("dp", "reduce_scatter", w * grad_bytes) for w in weights)
    else:
        ag = comm("dp", "all_gather", layer_params * ACT_BYTES)
        rs = comm("dp", "reduce_scatter", layer_params * grad_bytes)
    if sh.framework == "torchtitan":  # FSDP2's copy-in / copy-out around each gather, copy-in of the grads
        copy = k.fsdp2_copy_bytes_per_param * layer_params
        fwd_compute += ops.memory(copy)
        bwd_compute += ops.memory(copy * 1.5)
        fwd.busy["compute"] = fwd_compute
        bwd.busy["compute"] = bwd_compute
    # the prefetch runs on its own stream through the whole layer: under its compute and under
    # the TP / CP / EP communication the layer waits for. Hiding it behind the compute alone
    # counted the window of an overlapped collective twice, so a slower GPU (longer windows)
    # came out faster.
    exposed_f = max(0.0, ag - fwd_compute - _exposed_comm(fwd))
    exposed_b = max(0.0, ag + rs - bwd_compute - _exposed_comm(bwd))
    fwd.busy["dp_comm"], fwd.hidden["dp_comm"] = exposed_f, ag - exposed_f
    bwd.busy["dp_comm"], bwd.hidden["dp_comm"] = exposed_b, ag + rs - exposed_b


def add_recompute(fwd: Phase, bwd: Phase, m: ModelShape, sh: Sharding, g: LayerGemms, X_sp: float,
                  attn_fwd: float, attn_flops: float, act_bytes: float, moe: bool, ops: OpCoster,
                  act_extra_s: float = 0.0) -> None:
    """Recomputation in backward: full re-runs the layer's forward (with its TP comm); selective the
    modules Megatron's --recompute-modules lists (the core attention by default)."""
    if sh.recompute == "full":
        bwd.busy["recompute"] = fwd.busy["compute"]
        bwd.busy["tp_comm"] += fwd.busy["tp_comm"]
        bwd.busy["cp_comm"] += fwd.busy["cp_comm"]
        bwd.busy["ep_comm"] += fwd.busy["ep_comm"]
        bwd.busy["dp_comm"] += fwd.busy["dp_comm"]
        bwd.flops += fwd.flops
        return
    if sh.recompute != "selective":
        return
    for name in sh.recompute_modules:
        seconds, flops = recomputed_module(name, m, g, X_sp, attn_fwd, attn_flops, act_bytes, moe, ops, act_extra_s)
        bwd.busy["recompute"] += seconds
        bwd.flops += flops


def recomputed_module(name: str, m: ModelShape, g: LayerGemms, X_sp: float, attn_fwd: float, attn_flops: float,
                      act_bytes: float, moe: bool, ops: OpCoster, act_extra_s: float) -> tuple[float, float]:
    """(seconds, FLOPs) of recomputing one module Megatron's --recompute-modules names (an unknown one:
    none), worked out for the modules a plan names only (the core attention alone by default)."""
    if name == "core_attn":
        return attn_fwd, attn_flops
    if name == "layernorm":  # two norms: read and write the hidden state
        return ops.memory(2 * 2 * X_sp), 0.0
    if name == "moe_act":
        return (ops.memory(act_bytes) + act_extra_s if moe else 0.0), 0.0
    if name == "mla_up_proj":
        up_proj = [gm for gm, (_, k_in, shard) in zip(g.gemms, m.attn_weights) if shard == "col" and k_in != m.h]
        return sum(ops.gemm(*gm) for gm in up_proj), sum(2 * M * N * K for M, N, K in up_proj)
    if name == "mlp":
        return (0.0 if moe else sum(ops.gemm(*gm) for gm in g.mlp) + ops.memory(act_bytes),
                0.0 if moe else sum(2 * M * N * K for M, N, K in g.mlp))
    if name == "moe":
        return (sum(ops.gemm(M, N, K, b) for M, N, K, b in g.experts) + ops.memory(act_bytes) if moe else 0.0,
                sum(2 * M * N * K * b for M, N, K, b in g.experts))
    if name == "shared_experts":
        return (sum(ops.gemm(*gm) for gm in g.mlp) if moe else 0.0,
                sum(2 * M * N * K for M, N, K in g.mlp) if moe else 0.0)
    return 0.0, 0.0


def attention_kernels(m: ModelShape, sh: Sharding, micro_batch: int) -> list[tuple[AttentionKernel, float]]:
    """The fused attention kernels of one layer's forward on one GPU, each (shape, launches per
    layer), weighted over the model's full-attention and sliding-window layers.

    Context parallelism (Transformer Engine's load-balanced layout: each rank holds two chunks of
    s / 2c, one from each end): the p2p ring runs one kernel per ring step, the first causal over
    the rank's own s / c tokens, the other c - 1 unmasked between s / c queries and s / 2c keys (or
    the reverse); Ulysses (a2a) runs one causal kernel over the whole sequence with heads / c;
    all-gather one causal kernel per chunk against the keys up to its end (the first rank's)."""
    t, c = sh.tp, sh.cp
    heads = m.heads / t
    dims = dict(qk_dim=m.qk_dim, v_dim=m.v_dim)
    if m.window >= 0 and m.window + 1 < m.s:
        masks = [("window", 1 - m.full_share), ("causal", m.full_share)]
    else:
        masks = [("causal", 1.0)]
    out: list[tuple[AttentionKernel, float]] = []
    for mask, share in masks:
        if share <= 0:
            continue
        w = dict(mask=mask, window=m.window if mask == "window" else -1)
        if c <= 1:
            out.append((AttentionKernel(micro_batch, heads, m.s, m.s, **dims, **w), share))
        elif sh.cp_comm == "a2a":
            out.append((AttentionKernel(micro_batch, heads / c, m.s, m.s, **dims, **w), share))
        elif sh.cp_comm == "allgather":
            chunk = m.s / (2 * c)
            for end in (chunk, m.s):  # rank 0 holds the first and the last chunk
                out.append((AttentionKernel(micro_batch, heads, chunk, end, **dims, **w), share))
        else:
            local = m.s / c
            out.append((AttentionKernel(micro_batch, heads, local, local, **dims, **w), share))
            if mask == "causal" or m.window >= local:
                out.append((AttentionKernel(micro_batch, heads, local, local / 2, **dims, mask="full"),
                            share * (c - 1)))
    return out


def attention_gemms(m: ModelShape, tokens: float, t: int) -> list[tuple[float, float, float]]:
    """(M, N, K) of the attention block's projections on one TP rank."""
    out = []
    for n, k, shard in m.attn_weights:
        out.append((tokens, n / t if shard == "col" else n, k / t if shard == "row" else k))
    return out


def mtp_cost(m: ModelShape, sh: Sharding, micro_batch: int, ops: "OpCoster", comm: CommFn,
             k: EngineConstants) -> LayerCost:
    """One multi-token-prediction module on the last stage: norms and the [embedding; hidden]
    -> h projection, a decoder layer (MoE when the model's last layers are) and its own logits
    and loss (Megatron MultiTokenPredictionLayer)."""
    T = micro_batch * m.s / sh.cp
    layer = layer_cost(m, sh, micro_batch, m.moe_layers > 0, ops, comm, k)
    head = output_cost(m, sh, micro_batch, ops, comm)
    fwd, bwd = Phase(), Phase()
    fwd.add(layer.fwd)
    bwd.add(layer.bwd)
    fwd.add(head.fwd)
    bwd.add(head.bwd)
    proj_f = ops.gemm(T, m.h / sh.tp, 2 * m.h)
    proj_b = ops.gemm(T, 2 * m.h, m.h / sh.tp) + ops.gemm(2 * m.h, m.h / sh.tp, T, out_bytes=ops.wgrad_out_bytes)
    fwd.busy["compute"] += proj_f
    bwd.busy["compute"] += proj_b
    fwd.flops += 2 * T * 2 * m.h * m.h / sh.tp
    bwd.flops += 4 * T * 2 * m.h * m.h / sh.tp
    return LayerCost(fwd, bwd)


def unfused_attention(m: ModelShape, sh: Sharding, micro_batch: int, ops: OpCoster) -> tuple[float, float]:
    """Attention without a flash kernel: two batched GEMMs over the full s x s scores (the mask
    does not skip work) and the scaled-masked softmax and dropout streaming the scores through
    HBM: 2+2 bytes per score for the softmax, 2+2+1 for dropout and its mask forward; 2+2+2
    and 2+1+2 backward (Megatron's FusedScaleMaskSoftmax)."""
    heads = micro_batch * m.heads / sh.tp
    s_q = m.s / sh.cp
    s_k = m.s
    scores = heads * s_q * s_k
    per_fwd = 4 + (5 if ops.ac.attention_dropout else 0)
    per_bwd = 6 + (5 if ops.ac.attention_dropout else 0)
    fwd = ops.gemm(s_q, s_k, m.head_dim, heads) + ops.gemm(s_q, m.head_dim, s_k, heads) + ops.memory(scores * per_fwd)
    bwd = (ops.gemm(s_q, m.head_dim, s_k, heads) + ops.gemm(s_k, m.head_dim, s_q, heads)  # dQ, dK
           + ops.gemm(s_q, s_k, m.head_dim, heads) + ops.gemm(s_k, m.head_dim, s_q, heads)  # dP, dV
           + ops.memory(scores * per_bwd))
    return fwd, bwd


def _exposed_comm(phase: Phase) -> float:
    """The TP, CP and EP communication a phase waits for (not hidden under its compute)."""
    return phase.busy.get("tp_comm", 0.0) + phase.busy.get("cp_comm", 0.0) + phase.busy.get("ep_comm", 0.0)


def k_slowdown(ops: OpCoster) -> float:
    return ops.ac.comm_compute_slowdown


def embedding_cost(m: ModelShape, sh: Sharding, micro_batch: int, ops: OpCoster, comm: CommFn,
                   k: EngineConstants | None = None) -> LayerCost:
    """The vocabulary-parallel input embedding on the first stage."""
    T = micro_batch * m.s / sh.cp
    X = T * m.h * ACT_BYTES
    fwd, bwd = Phase(), Phase()
    fwd.busy["compute"] = ops.memory(2 * X) + ops.overhead_s
    # two kernels backward: the lookup's dense gradient, then its addition to main_grad
    bwd.busy["compute"] = ops.memory(3 * X + embedding_grad_bytes(m, sh, k or EngineConstants())) + 2 * ops.overhead_s
    if sh.tp > 1:
        fwd.busy["tp_comm"] = comm("tp", "reduce_scatter" if sh.sequence_parallel else "all_reduce", X)
    return LayerCost(fwd, bwd)


def embedding_grad_bytes(m: ModelShape, sh: Sharding, k: EngineConstants) -> float:
    """HBM bytes of the input embedding's weight gradient in one micro-batch's backward. The
    lookup's backward (PyTorch embedding_dense_backward) writes a dense gradient of the whole
    vocabulary shard, zero-filled then scattered into, and Megatron's DDP hook adds it to the
    fp32 main_grad (param.main_grad.add_(param.grad): read both, write the sum): the embedding
    is not a Transformer Engine layer, so no fused gradient accumulation. The table shard is
    vocab / TP rows of h, however few tokens the micro-batch has."""
    return m.vocab / sh.tp * m.h * k.embedding_grad_bytes_per_element


def output_cost(m: ModelShape, sh: Sharding, micro_batch: int, ops: OpCoster, comm: CommFn) -> LayerCost:
    """Final norm, the LM head (logits) and the vocabulary-parallel cross-entropy on the last stage."""
    T = micro_batch * m.s / sh.cp
    X = T * m.h * ACT_BYTES
    v = m.vocab / sh.tp
    fwd, bwd = Phase(), Phase()
    head = ops.bf16()  # the LM head is not an FP8 layer
    logits_fwd = head.gemm(T, v, m.h)
    logits_wgrad = head.gemm(m.h, v, T, out_bytes=ops.wgrad_out_bytes)
    logits_bwd = head.gemm(T, m.h, v) + logits_wgrad
    ce_bytes = T * v * 4 * 3  # fp32 logits: softmax read, write, and the gradient
    fwd.busy["compute"] = logits_fwd + ops.memory(2 * X + ce_bytes / 2)
    bwd.busy["compute"] = logits_bwd + ops.memory(3 * X + ce_bytes)
    bwd.wgrad_s = logits_wgrad
    fwd.flops = 2 * T * v * m.h
    bwd.flops = 4 * T * v * m.h
    if sh.tp > 1:
        if sh.sequence_parallel:
            fwd.busy["tp_comm"] = comm("tp", "all_gather", X)
            bwd.busy["tp_comm"] = comm("tp", "reduce_scatter", X)
        else:
            bwd.busy["tp_comm"] = comm("tp", "all_reduce", X)
        fwd.busy["tp_comm"] += 2 * comm("tp", "all_reduce", T * 4 * 2)  # max and sum of the softmax
    return LayerCost(fwd, bwd)


def pp_message_bytes(m: ModelShape, sh: Sharding, micro_batch: int) -> float:
    """Activation (or its gradient) each GPU sends to the next stage per micro-batch.

    Each TP rank sends 1/t of it (sequence-parallel shards, or Megatron's scatter-gather
    optimisation, SC'21 section 4.1, which re-gathers over NVLink on arrival)."""
    X = micro_batch * m.s / sh.cp * m.h * ACT_BYTES
    return X / sh.tp
