"""Mixture-of-experts constants: the token dispatchers' sorts and expert-bias passes, DeepEP's and
HybridEP's kernels (their SMs, their rate per SM, their reach over NVLink), and the experts' load spread.
HybridEP's rate falloff with the ranks of an NVLink domain is HybridEpScalingConstants, declared apart:
it follows the memory constants in the calibration's order.
"""
from dataclasses import dataclass

from . import Frozen, constant as _c  # the declarations' short name


@dataclass(eq=False, repr=False, init=False)
class MoeConstants(Frozen):
    """The MoE layer's dispatch kernels, expert passes and expert load spread."""
    moe_sort_bytes_per_element: float = _c(
        8.0, "HBM bytes per element of the routed tokens (tokens x top-k x hidden) in one MoE layer's forward for "
        "the alltoall dispatcher's two chunk sorts (sort_chunks_by_idxs: regroup the received tokens by local "
        "expert before the grouped GEMM and back after it; each reads and writes 2-byte values), the same again in "
        "backward; only with more than one local expert and EP > 1. Source: Megatron-LM "
        "megatron/core/transformer/moe/token_dispatcher.py (MoEAlltoAllTokenDispatcher)",
        unit="bytes", minimum=0, maximum=1024)
    expert_bias_fwd_bytes_per_element: float = _c(
        28.0, "HBM bytes per element of the experts' FC2 output (tokens x top-k x hidden) for adding the FC2 "
        "bias scaled by the router probability in forward, where the experts have biases (gpt-oss). Megatron-Core "
        "0.17-0.18 TEGroupedMLP._apply_bias runs it eagerly per local expert: bias x prob writes an FP32 "
        "tensor (4), the add reads the BF16 output and it and writes FP32 (10), torch.cat copies it (8), the cast "
        "to BF16 reads and writes (6). Source: Megatron-LM megatron/core/transformer/moe/experts.py "
        "(core_r0.17.0, core_r0.18.0); counted from the code, not fitted",
        unit="bytes", minimum=0, maximum=1024)
    expert_bias_bwd_bytes_per_element: float = _c(
        36.0, "HBM bytes per element of the experts' FC2 output for the backward of the eager bias add above: "
        "autograd casts the BF16 gradient to FP32 (6) and back for the output (6), and each side of bias x prob "
        "multiplies the FP32 gradient into a new FP32 tensor and reduces it (12 each: the bias gradient over "
        "the rows, the probability gradient over the hidden units). Same source, counted from the code",
        unit="bytes", minimum=0, maximum=1024)
    expert_bias_fwd_kernels_per_expert: float = _c(
        2.0, "Kernels per local expert of the eager FC2 bias add in forward (bias x prob, the add; the final "
        "torch.cat and cast are two more per layer), each at the kernel fixed cost gemm_overhead_us. Source: "
        "Megatron-LM experts.py TEGroupedMLP._apply_bias (core_r0.17.0, core_r0.18.0)",
        unit="kernels", minimum=0, maximum=100)
    expert_bias_bwd_kernels_per_expert: float = _c(
        5.0, "Kernels per local expert of that bias add's backward (the output gradient's cast, two multiplies "
        "and two reductions for the bias and probability gradients; one more per layer for the cast). Same source",
        unit="kernels", minimum=0, maximum=100)
    # ---- the experts' clamped quick-GeGLU (gpt-oss) outside Transformer Engine's op fuser ----
    expert_clamp_fwd_bytes_per_element: float = _c(
        8.0, "HBM bytes per element of the experts' FC1 output (tokens x top-k x 2 x expert FFN width) for clamping "
        "it before a quick-GeGLU with activation_func_clamp_value, in forward (and again where moe_act is "
        "recomputed). Megatron-Core 0.17-0.18 weighted_bias_quick_geglu_impl runs it eagerly before the compiled "
        "activation: two clamps each read and write their half (4) and torch.cat reads both and writes the whole "
        "(4). Source: Megatron-LM megatron/core/fusions/fused_bias_geglu.py (core_r0.17.0, core_r0.18.0), called "
        "from experts.py TEGroupedMLP.bias_act_func; counted from the code, not fitted",
        unit="bytes", minimum=0, maximum=1024)
    expert_clamp_bwd_bytes_per_element: float = _c(
        10.0, "HBM bytes per element of the experts' FC1 output for the backward of that clamp: each clamp's "
        "gradient reads the incoming gradient and its input and writes the masked gradient (6 over the whole "
        "width), and the chunk's backward concatenates the two halves (4); the cat's backward is views. Same "
        "source, counted from the code",
        unit="bytes", minimum=0, maximum=1024)
    expert_clamp_kernels: float = _c(
        3.0, "Kernels of that clamp each way, each at the kernel fixed cost gemm_overhead_us: forward two clamps "
        "and the cat; backward two masked gradients and the cat. Same source",
        unit="kernels", minimum=0, maximum=100)
    # ---- YaRN rotary embeddings as eager passes ----
    rope_eager_fwd_bytes_per_element: float = _c(
        20.0, "HBM bytes per element of the query and key tensors that YaRN's rotary embedding moves in "
        "forward beyond a fused RoPE kernel's read and write (4). Megatron-Core 0.17-0.18 apply_rotary_pos_emb "
        "falls back to _apply_rotary_pos_emb_bshd whenever mscale != 1, which YaRN's concentration factor "
        "(0.1 ln(scaling factor) + 1) is; Megatron-Bridge also turns apply_rope_fusion off for any "
        "position_embedding_type but rope (utils/fusions.py). Eager: t x cos (4), the negated half (2), "
        "rotate_half's cat (4), x sin (4), the add (6), the final cat with the empty pass-through (4): 24. "
        "Source: Megatron-LM megatron/core/models/common/embeddings/rope_utils.py (core_r0.17.0, core_r0.18.0); "
        "counted from the code, not fitted",
        unit="bytes", minimum=0, maximum=1024)
    rope_eager_bwd_bytes_per_element: float = _c(
        16.0, "The same in backward beyond a fused kernel's 4: the gradient x sin (4), its negated half (2), the "
        "chunk's cat (4), the gradient x cos (4) and the sum of the two paths' gradients (6): 20. Same source",
        unit="bytes", minimum=0, maximum=1024)
    rope_eager_fwd_kernels: float = _c(
        22.0, "Kernels of that eager RoPE in forward beyond the fused kernels (one for the query, one for the "
        "key): 6 for each tensor's cos / sin tables (cos, x mscale, cast; sin, x mscale, cast) and 6 for the "
        "passes above, each at gemm_overhead_us. Same source",
        unit="kernels", minimum=0, maximum=1000)
    rope_eager_bwd_kernels: float = _c(
        8.0, "Kernels of its backward beyond the fused ones: 5 per tensor, less the fused kernel's one. Same "
        "source", unit="kernels", minimum=0, maximum=1000)
    deepep_num_sms: int = _c(
        20, "SMs DeepEP's normal dispatch/combine kernels occupy while they run (deep_ep/buffer.py "
        "Buffer.num_sms = 20; Megatron --moe-flex-dispatcher-num-sms, 'historical default 20'): taken from the "
        "compute they overlap", unit="SMs", minimum=1, maximum=1024)
    hybridep_num_sms: int = _c(
        16, "SMs HybridEP's TMA dispatch/combine kernels occupy (DeepEP hybrid-ep branch, docs/Hybrid-EP.md: "
        "its measurements on H100, B200 and GB200 run 16 SMs)", unit="SMs", minimum=1, maximum=1024)
    deepep_dispatch_GBps_per_sm: float = _c(
        20.5, "DeepEP normal-kernel dispatch rate per SM it occupies, GB/s of BF16 tokens (algorithm bandwidth): "
        "B200, 8 ranks, 4096 tokens x 7168, top-8, 348/494/619 GB/s on 16/24/32 SMs (DeepEP hybrid-ep branch, "
        "docs/Hybrid-EP.md, DeepEP Torch API rows); the kernels copy with SM load/store instructions, so the rate "
        "grows with the SMs until the link is the limit", unit="GB/s", minimum=0.1, maximum=1000)
    deepep_combine_GBps_per_sm: float = _c(
        17.5, "The same for DeepEP's combine (302/420/524 GB/s on 16/24/32 SMs, same table)",
        unit="GB/s", minimum=0.1, maximum=1000)
    hybridep_dispatch_GBps_per_sm: float = _c(
        33.5, "HybridEP dispatch rate per SM, GB/s of BF16 tokens: 535.94 GB/s on 16 SMs, B200, 8 ranks (same "
        "document, HybridEP Torch API row); TMA copies need fewer SMs for the same rate",
        unit="GB/s", minimum=0.1, maximum=1000)
    hybridep_combine_GBps_per_sm: float = _c(
        33.2, "The same for HybridEP's combine (530.86 GB/s on 16 SMs)", unit="GB/s", minimum=0.1, maximum=1000)
    deepep_max_nvl_peers: int = _c(
        8, "GPUs DeepEP's normal kernels reach over NVLink (csrc/kernels/configs.cuh NUM_MAX_NVL_PEERS 8; CUDA "
        "IPC inside one server, no multi-node NVLink: Megatron's transformer_config.py 'only hybridep supports "
        "the MNNVL case'): beyond them it sends over RDMA to the same-index GPU of each other server, which "
        "forwards over NVLink", unit="GPUs", minimum=1, maximum=1024)
    moe_expert_load_cv_aux_loss: float = _c(
        0.31, "Per-expert coefficient of variation of a trained router's load beyond sampling noise, with an "
        "auxiliary load-balancing loss (Megatron --moe-router-load-balancing-type aux_loss, its default; also "
        "taken for 'none'): the published maximal violation MaxVio_global = max load / mean - 1 = 0.72 over 64 "
        "experts (Wang et al., 'Auxiliary-Loss-Free Load Balancing Strategy for Mixture-of-Experts', "
        "arXiv:2408.15664, 1B model) divided by the expected maximum of 64 standard normals (2.34)",
        unit="fraction", minimum=0, maximum=5)
    moe_expert_load_cv_bias: float = _c(
        0.017, "The same with DeepSeek's bias balancing (auxiliary-loss-free, Megatron "
        "--moe-router-enable-expert-bias): MaxVio_global 0.04 over 64 experts (same paper) / 2.34",
        unit="fraction", minimum=0, maximum=5)


@dataclass(eq=False, repr=False, init=False)
class HybridEpScalingConstants(Frozen):
    """HybridEP's rate falloff with the GPUs of the NVLink domain it exchanges among, and the most it
    reaches with more SMs."""
    hybridep_dispatch_rank_falloff: float = _c(
        0.097, "Growth of HybridEP's dispatch time per byte for each doubling of the GPUs of one NVLink domain it "
        "exchanges among, beyond the 8 its per-SM rate was measured on: the rate is hybridep_dispatch_GBps_per_sm "
        "/ (1 + falloff x log2(ranks / 8)). Fitted (least squares through 8 ranks) to HybridEP's own PyTorch-level "
        "table on GB200, 16 SMs, BF16, 4096 tokens x 7168, top-8, 8 local experts: 550/473/442/486/470 GB/s on "
        "8/16/24/32/36 ranks (DeepEP hybrid-ep branch, docs/README_Hybrid-EP.md; the rates count the rows each "
        "rank receives, so the extra destinations a token reaches are already outside it); within 8 % of each "
        "row, beyond 36 ranks extrapolated",
        unit="fraction", minimum=0, maximum=10)
    hybridep_combine_rank_falloff: float = _c(
        0.134, "The same for HybridEP's combine: 538/474/444/423/418 GB/s on 8/16/24/32/36 ranks (same table), "
        "within 0.3 % of each row", unit="fraction", minimum=0, maximum=10)
    hybridep_dispatch_max_GBps: float = _c(
        545.7, "The most HybridEP's dispatch reaches however many SMs it holds, GB/s of BF16 tokens at the PyTorch "
        "level on 8 ranks (before the rank falloff above): its TMA copies stop gaining from SMs past about 16, "
        "the rest is the link and its host-side preparation. GB200, 4096 tokens x 7168, top-8: 550.10 GB/s on 16 "
        "SMs, 545.71 on 32 (DeepEP hybrid-ep branch, docs/README_Hybrid-EP.md); with the falloff, within 7 % of the "
        "32-SM rows on 16-36 ranks. Megatron-Bridge's performance scripts run HybridEP on 32 SMs "
        "(scripts/performance/utils/overrides.py, v0.4.0 and v0.5.0: moe_hybridep_num_sms = 32)",
        unit="GB/s", minimum=0.1, maximum=100000)
    hybridep_combine_max_GBps: float = _c(
        568.9, "The same for HybridEP's combine: 538.44 GB/s on 16 SMs, 568.94 on 32 (same table); with the "
        "falloff, within 4 % of the 32-SM rows on 16-36 ranks", unit="GB/s", minimum=0.1, maximum=100000)
