"""The training framework's constants: data-parallel buckets and gradient bytes, the optimizer's and
the quantisation casts' HBM traffic, and the attention kernels of older software stacks.
"""
from dataclasses import dataclass

from . import FRACTION, Frozen, constant as _c  # the declarations' short name


@dataclass(eq=False, repr=False, init=False)
class FrameworkConstants(Frozen):
    """Bytes the framework moves per parameter and per quantized element; attention kernel generations."""
    # ---- training framework ----
    dp_bucket_params: int = _c(
        40_000_000, "Megatron DDP bucket size in parameters: max(4e7, 1e6 x dp) "
        "(DistributedDataParallelConfig.bucket_size), unless the plan gives ddp_bucket_size", unit="parameters", minimum=1, maximum=10**12)
    grad_reduce_bytes_per_param: int = _c(
        4, "Gradient bytes per parameter in the DP reduction: fp32 main grads (Megatron default; "
        "2 with the plan's grad_reduce_in_bf16)",
        unit="bytes", minimum=1, maximum=8)
    param_gather_bytes_per_param: int = _c(2, "Bytes per parameter in the distributed optimizer's all-gather (bf16)",
        unit="bytes", minimum=1, maximum=8)
    optimizer_bytes_per_param: float = _c(
        32.0, "HBM bytes moved per local parameter by the fused Adam step: read fp32 param, grad, m, v "
        "(16) and write param, m, v (12) and the bf16 copy (2), rounded up", unit="bytes", minimum=0, maximum=1024)
    zero_grad_bytes_per_param: float = _c(
        4.0, "HBM bytes written per parameter a GPU holds (all of them, not its optimizer shard) when Megatron "
        "zeroes the gradient buffer before each step (DistributedDataParallel.zero_grad_buffer: grad_data.zero_(); "
        "fp32 main grads, as grad_reduce_bytes_per_param; half of it with the plan's grad_reduce_in_bf16)", unit="bytes", minimum=0, maximum=64)
    # FP8 quantization traffic per element of a GEMM input, by Transformer Engine recipe, beyond
    # what the BF16 run moves. TE fuses the cast into the kernel that produces the tensor
    # (LayerNorm, activation, dgrad) when the scale is known beforehand, so that kernel writes
    # the FP8 copy and the transposed copy for the weight-gradient GEMM (1 + 1 bytes). Current
    # scaling must see the whole tensor's amax first: the producer writes BF16 and a separate
    # pass reads it (2) and writes both copies (1 + 1). Block and MX scaling compute their scales
    # inside the quantize kernel (fused) and add one scale per 128 / 32 values. Sources: TE's
    # recipe documentation and its cast_transpose / quantize kernels.
    fp8_cast_bytes_delayed: float = _c(
        2.0, "Extra HBM bytes per element quantized with delayed scaling (amax from history, fused cast)",
        unit="bytes", minimum=0, maximum=64)
    fp8_cast_bytes_tensorwise: float = _c(
        4.0, "Extra HBM bytes per element with current (per-tensor) scaling: a separate cast pass after the amax",
        unit="bytes", minimum=0, maximum=64)
    fp8_cast_bytes_blockwise: float = _c(
        2.1, "Extra HBM bytes per element with block scaling (one fp32 scale per 128 values, both layouts)",
        unit="bytes", minimum=0, maximum=64)
    fp8_cast_bytes_mxfp8: float = _c(
        2.1, "Extra HBM bytes per element with MXFP8 (one E8M0 scale per 32 values, row- and column-wise copies)",
        unit="bytes", minimum=0, maximum=64)
    # NVFP4 (Transformer Engine NVFP4Quantizer::quantize_impl, pytorch/csrc/quantizer.cpp): the
    # second-level scale is per tensor, so the whole tensor's amax comes first, in its own pass
    # (nvte_compute_amax, or nvte_hadamard_transform_amax giving the row-wise amax and the
    # column-wise one after the Hadamard transform in one read); then the cast. Stochastic
    # rounding of the gradients happens inside the cast (Blackwell's cvt.rs conversion): the
    # pass stays HBM-bound and adds no bytes.
    fp4_cast_bytes_nvfp4: float = _c(
        5.125, "Extra HBM bytes per element quantized to NVFP4: the amax pass reads the BF16 tensor (2), the cast "
        "reads it again (2) and writes both 4-bit copies (0.5 + 0.5) with an E4M3 scale per 16 values each "
        "(2 / 16); Transformer Engine NVFP4Quantizer (nvte_compute_amax, then nvte_quantize_v2)",
        unit="bytes", minimum=0, maximum=64)
    nvfp4_rht_cast_bytes: float = _c(
        2.0, "Extra HBM bytes per element NVIDIA's NVFP4 recipe adds for the random Hadamard transform of the "
        "weight-gradient GEMM's inputs (activations and output gradients): their column-wise copy is cast by "
        "its own kernel (nvte_hadamard_transform_cast_fusion_columnwise), which reads the BF16 tensor once "
        "more; the amax after the transform shares the amax pass. 0: a recipe without the transform",
        unit="bytes", minimum=0, maximum=64)
    fp4_cast_bytes_mxfp4: float = _c(
        1.1, "Extra HBM bytes per element quantized to MXFP4: both 4-bit copies and an E8M0 scale per 32 values",
        unit="bytes", minimum=0, maximum=64)
    # ---- fused attention kernel generations (plan key attention_kernels) ----
    # The accelerator's attention_* constants are fitted to current kernels (cuDNN 9.19,
    # h200-kernels.json). Older software stacks ran slower kernels: each generation's share of that
    # rate scales the kernels' MMA rate (tile work and tile fixed costs alike).
    attention_rate_flash_attn_2: float = _c(
        0.52, "FlashAttention-2 kernels' rate / the current cuDNN kernels' on Hopper: forward + backward time "
        "of PyTorch's flash SDPA backend (FlashAttention-2) against cuDNN 9.19 on the same H200, causal, head dim "
        "128, 2k-16k tokens, 8-64 heads: 0.50-0.54 (tests/validation/data/h200-kernels.json `attention`, "
        "median 0.52)", **FRACTION)
    attention_rate_cudnn_9_0: float = _c(
        0.78, "cuDNN 9.0 fused attention's rate (Transformer Engine 1.4-1.7, NeMo and PyTorch containers of early "
        "2024) / the current cuDNN kernels' on Hopper: Transformer Engine's attention guide (docs/examples/"
        "attention/attention.ipynb, June 2024: 'As of Transformer Engine 1.7, cuDNN 9.0 and flash-attn 2.4.2') "
        "measures cuDNN 1.38 x and 1.59 x faster than flash-attn forward + backward on H100 (causal, head dim "
        "128, 2k tokens 16 heads and 8k tokens 32 heads); cuDNN 9.19 is 1.85 x and 1.96 x FlashAttention-2 on "
        "the same shapes (h200-kernels.json): 1.38 / 1.85 = 0.75 and 1.59 / 1.96 = 0.81, mean 0.78",
        **FRACTION)
    fp8_weight_read_bytes: float = _c(
        2.0, "HBM bytes per weight read when Transformer Engine quantizes an FP8/FP4 run's BF16 weights, once per "
        "step on the first micro-batch (the writes are the recipe's fp8_cast_bytes_*); 0 with --fp8-param-gather, "
        "whose parameters arrive quantized. Source: TE Linear/LayerNormLinear is_first_microbatch weight caching",
        unit="bytes", minimum=0, maximum=64)
