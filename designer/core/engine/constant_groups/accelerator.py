"""One accelerator kind's compute constants: GEMM efficiency and kernel costs, the power-limited clock,
HBM streaming, flash attention's rates and tile costs (FP8 and MXFP8 included), and what its scale-up
links and collective library add. The catalog's `calibration:` of the kind gives its values, then a
file's `calibration.accelerators`; the defaults are these.
"""
import dataclasses
from dataclasses import dataclass

from . import FRACTION, set_constants
from . import constant as _c  # the declarations' short name


# Its __init__ is written rather than generated, as EngineConstants': one of ~45 parameters compiled at
# every start of the program, for an object made a few times per evaluation.
@dataclass(eq=False, repr=False, init=False)
class AcceleratorConstants:
    """Compute efficiencies of one accelerator kind (catalog `calibration`, then these)."""

    def __init__(self, **values):
        """Every constant at its default, or at the value `values` gives it by name (TypeError for a
        name that is no constant, as a dataclass's own __init__)."""
        set_constants(self, _FIELD_LIST, _FIELDS, values)

    gemm_efficiency_best: float = _c(
        0.80, "Large-GEMM throughput / dense peak: the catalog's best_gemm_tflops / peak_tflops", **FRACTION)
    gemm_overhead_us: float = _c(
        5.0, "Fixed cost of one GEMM kernel (launch, prologue, tail wave), us. Fitted to XLA's H100 "
        "matmul table (tests/validation/data/published-cases.yaml, hardware.gemm_shape_dependence_h100): t = max(F/P, B/BW) + 5 us",
        unit="us", minimum=0, maximum=10_000)
    gemm_tile_m: int = _c(128, "GEMM tile rows; M below a tile multiple wastes tensor-core work (wave quantisation)",
        unit="elements", minimum=1, maximum=4096)
    gemm_tile_n: int = _c(256, "GEMM tile columns", unit="elements", minimum=1, maximum=4096)
    num_sms: int = _c(132, "Streaming multiprocessors (compute units on AMD) the part enables: attention "
        "tiles run in waves of this many, and the flex dispatcher's kernels take deepep_num_sms or "
        "hybridep_num_sms of them from the compute they overlap. Each catalog entry gives its own with its "
        "source (A100 108, H100/H200 132, B200/B300 148, GB200/GB300 152, MI300X 304, MI355X 256); 132 where none is given",
        unit="SMs", minimum=1, maximum=4096)
    sustained_clock_factor: float = _c(
        1.0, "Tensor-core throughput under sustained training load / in a short GEMM benchmark (power and "
        "thermal limits lower the clock in a long run). Derived from the power model (gemm_power_w_per_pflops3) "
        "where the part has one; given here, it overrides the model",
        unit="fraction", minimum=0.1, maximum=1.0)
    gemm_power_w_per_pflops3: float = _c(
        0.0, "Dynamic power of one die design's training GEMMs per (PFLOP/s)^3: P = static + this x R^3 "
        "(f V^2 with V ~ f near the top of the DVFS curve), so a part sustains ((tdp_w x (1 - "
        "static_power_fraction)) / this)^(1/3) PFLOP/s, as a share of best_gemm_tflops its "
        "sustained_clock_factor. Hopper 1798: the layer GEMMs of tests/validation/data/h200-kernels.json "
        "hold 701.8 TFLOP/s at the 700 W cap. 0: no power model, sustained_clock_factor as given",
        unit="W/(PFLOP/s)^3", minimum=0, maximum=1e6)
    static_power_fraction: float = _c(
        0.112, "Share of the power limit that does not scale with the clock (leakage, HBM, links): the "
        "H200's 78.35 W idle at its 700 W limit (tests/validation/data/h200-kernels.json meta.smi_start)",
        unit="fraction", minimum=0, maximum=0.9)
    low_precision_sustained_gain: float = _c(
        1.0, "Sustained share of an FP8/FP4 GEMM's cold rate under the power limit / BF16's "
        "(sustained_clock_factor): fewer joules per FLOP hold a higher clock. Hopper at 700 W: 1.026 "
        "(tests/validation/data/h200-kernels.json layer GEMMs, operands read at 1 byte); 1 = as BF16",
        unit="x", minimum=0.5, maximum=2.0)
    fp4_gemm_share_of_fp8: float = _c(
        1.0, "Best FP4 (NVFP4/MXFP4) GEMM's share of the FP4 dense peak / the best FP8 GEMM's share of the FP8 "
        "peak, where no FP4 GEMM of the part is measured (catalog measured_gemm_tflops.fp4). 1: a large FP4 "
        "GEMM keeps FP8's share; NVIDIA's cuBLAS 12.9 post ('Boosting Matrix Multiplication Speed and "
        "Flexibility with NVIDIA cuBLAS 12.9') measures block-scaled FP4 matmuls up to 2.3 x FP8 on "
        "Blackwell, whose FP4 peak is 2 x FP8: at least FP8's share on large shapes. Lower it where a "
        "measurement (designer microbench) shows the 4-bit tiles losing more to their scale loads and "
        "epilogue", unit="x", minimum=0.1, maximum=2.0)
    wgrad_output_bytes: float = _c(
        8.0, "HBM bytes per element of a weight-gradient GEMM's output: fp32 main_grad read + write "
        "(Megatron's gradient_accumulation_fusion)", unit="bytes per element", minimum=0, maximum=64)
    hbm_efficiency: float = _c(
        0.85, "Achievable / peak HBM bandwidth for streaming kernels (STREAM-like copy reaches 85-90%)", **FRACTION)
    attention_efficiency: float = _c(
        0.70, "Flash-attention forward: MMA rate inside a tile's key/value blocks / dense BF16 peak (the "
        "kernel's rate on a long sequence with many heads; short sequences and few heads per GPU lose to "
        "the tile and kernel costs below, engine/attention.py). Fitted with them to the cuDNN rows of "
        "tests/validation/data/h200-kernels.json (every row within 1 %)", **FRACTION)
    attention_backward_efficiency: float = _c(
        0.62, "Flash-attention backward: MMA rate inside a block / dense BF16 peak, counting 2.5 x the "
        "forward FLOPs; fitted with the backward tile and kernel costs to the cuDNN 9.19 backward rows of "
        "tests/validation/data/h200-kernels.json (2k-16k) and h200-cudnn-sdpa-llama3.1.csv (2k-32k, causal and "
        "unmasked): the backward's rate stops rising past 16k (581 TFLOP/s at 16k and 32k), every row within 6 %",
        **FRACTION)
    attention_tile_q: int = _c(128, "Query rows of a flash-attention tile (cuDNN / FlashAttention-3 on Hopper, "
        "head dim 128)", unit="rows", minimum=1, maximum=4096)
    attention_tile_k: int = _c(128, "Key/value rows of a flash-attention block", unit="rows", minimum=1,
        maximum=4096)
    attention_tile_overhead_blocks: float = _c(
        0.0, "Fixed cost of one forward attention tile that scales with its blocks' MMA time, in key blocks, "
        "beside attention_tile_latency_us; 0: the H200's fitted tile cost (h200-kernels.json, cuDNN forward: "
        "1.25 blocks at head dims 128 + 128) is all latency",
        unit="blocks", minimum=0, maximum=1000)
    attention_backward_tile_overhead_blocks: float = _c(
        1.36, "Fixed cost of one backward attention tile (load K and V, write dK and dV, accumulate dQ) that "
        "scales with its blocks' MMA time, in blocks, beside attention_backward_tile_latency_us: with it the "
        "2.25 blocks fitted with attention_backward_efficiency at head dim 128 on the H200 (h200-kernels.json, "
        "h200-cudnn-sdpa-llama3.1.csv)", unit="blocks", minimum=0, maximum=1000)
    attention_kernel_overhead_us: float = _c(
        12.0, "Fixed cost of a forward attention launch (launch, prologue, last wave's drain), us; fitted to "
        "h200-kernels.json (cuDNN forward)", unit="us", minimum=0, maximum=10_000)
    attention_backward_kernel_overhead_us: float = _c(
        40.0, "Fixed cost of a backward attention call (its O.dO preprocessing and dQ conversion kernels "
        "besides the main one), us; fitted with attention_backward_efficiency (h200-kernels.json, "
        "h200-cudnn-sdpa-llama3.1.csv)", unit="us", minimum=0,
        maximum=10_000)
    attention_tail_share: float = _c(
        0.5, "Share of the longest attention tile the last wave leaves the other SMs idle for, on average "
        "(tiles end uniformly spread over the last tile's length)", unit="fraction", minimum=0, maximum=1.0)
    attention_flops_per_exponential: float = _c(
        0.0, "Dense BF16 tensor-core FLOPs per exponential the special-function units (MUFU.EX2) evaluate in "
        "the same SM clock: softmax needs one exponential per attention score, so a flash kernel whose "
        "score needs fewer MMA FLOPs than this (small head dimensions, FP8 attention) waits on the "
        "exponentials. Hopper 4096 / 16 = 256, Blackwell B200/GB200 8192 / 16 = 512 (FlashAttention-4, "
        "Zadouri, Dao et al. 2026: tensor cores doubled, SFU unchanged), Blackwell Ultra B300/GB300 256 "
        "(NVIDIA, 'Making Softmax More Efficient with NVIDIA Blackwell Ultra': SFU throughput doubled); "
        "0 = not limiting (no published figure)", unit="FLOPs per exponential", minimum=0, maximum=100_000)
    # ---- FP8 attention kernels (fp8_dot_product_attention): measured time of cuDNN's fused attention
    # in BF16 / in FP8, same shape and GPU. Source: cudnn-frontend benchmark/sdpa_benchmark_training/
    # results (cuDNN 9.22, April 2026), median over causal and unmasked, 2k-32k tokens, forward and
    # non-deterministic backward apart: llama3.1 (head dim 128, 64 query / 8 KV heads, batch 2) and dsv3
    # (query.key dim 192, value dim 128, 128 heads, batch 2). These defaults are the GB200 rows (B200
    # has the same die and SFUs); the catalog gives GB300/B300 (GB300 rows) and Hopper (H200 rows).
    # Between head dims 128 and 192 the engine interpolates; outside it holds the nearer one.
    attention_fp8_speedup_forward: float = _c(
        1.31, "FP8 attention forward at head dim 128 (per-tensor scaled FP8, the delayed/tensorwise/blockwise "
        "recipes): BF16 kernel time / FP8 kernel time of cuDNN's fused attention. GB200 median 1.31 (1.26-1.36 "
        "over 10 shapes; cudnn-frontend sdpa_benchmark_training results/llama3.1/gb200)",
        unit="x", minimum=0.1, maximum=4.0)
    attention_fp8_speedup_backward: float = _c(
        1.20, "FP8 attention backward at head dim 128: BF16 / FP8 kernel time. GB200 median 1.20 (0.94-1.45; "
        "results/llama3.1/gb200)", unit="x", minimum=0.1, maximum=4.0)
    attention_fp8_speedup_forward_192: float = _c(
        1.48, "FP8 attention forward at query.key head dim 192 (value 128): BF16 / FP8 kernel time. GB200 "
        "median 1.48 (1.40-1.55 over 20 shapes; results/dsv3/gb200)", unit="x", minimum=0.1, maximum=4.0)
    attention_fp8_speedup_backward_192: float = _c(
        1.74, "FP8 attention backward at query.key head dim 192: BF16 / FP8 kernel time. GB200 median 1.74 "
        "(1.51-1.89; results/dsv3/gb200)", unit="x", minimum=0.1, maximum=4.0)
    attention_mxfp8_speedup_forward: float = _c(
        1.22, "MXFP8 attention forward at head dim 128 (the mxfp8 recipe: E8M0 scales per 32 values): BF16 / "
        "MXFP8 kernel time. GB200 median 1.22 (1.17-1.27; results/llama3.1/gb200)", unit="x", minimum=0.1, maximum=4.0)
    attention_mxfp8_speedup_backward: float = _c(
        1.03, "MXFP8 attention backward at head dim 128: BF16 / MXFP8 kernel time. GB200 median 1.03 (0.84-1.17; "
        "results/llama3.1/gb200)", unit="x", minimum=0.1, maximum=4.0)
    attention_mxfp8_speedup_forward_192: float = _c(
        1.37, "MXFP8 attention forward at query.key head dim 192: BF16 / MXFP8 kernel time. GB200 median 1.37 "
        "(1.33-1.43; results/dsv3/gb200)", unit="x", minimum=0.1, maximum=4.0)
    attention_mxfp8_speedup_backward_192: float = _c(
        1.43, "MXFP8 attention backward at query.key head dim 192: BF16 / MXFP8 kernel time. GB200 median 1.43 "
        "(1.21-1.51; results/dsv3/gb200)", unit="x", minimum=0.1, maximum=4.0)
    attention_backward_flops_factor: float = _c(
        2.5, "Backward / forward FLOPs of flash attention counted in hardware FLOPs (recomputes QK^T in "
        "backward; FlashAttention-2 paper); its time is engine/attention.py's",
        unit="x forward", minimum=1, maximum=10)
    memory_bound_bytes_per_token_layer: float = _c(
        0.0, "Extra HBM traffic per token per layer per unit of hidden size, bytes (LayerNorm, dropout, "
        "residual, activation, RoPE); 0 = use the op-by-op count of compute.py",
        unit="bytes", minimum=0, maximum=10_000)
    kernel_gap_fraction: float = _c(
        0.03, "Idle share of compute between kernels (launch gaps, host sync); fitted",
        unit="fraction", minimum=0, maximum=0.9)
    flash_attention: bool = _c(
        True, "Attention kernel assumed when the plan says attention_backend: auto. False for data taken "
        "with Megatron's fused-softmax kernels (scores in HBM), as the 2021-22 A100 runs were", unit="true/false")
    attention_dropout: bool = _c(True, "Unfused attention applies dropout to the scores (GPT-3-style models)",
        unit="true/false")
    nvls_supported: bool = _c(
        False, "NVSwitch with NVLink SHARP (third-generation NVSwitch, Hopper and later): NCCL's NVLS algorithm",
        unit="true/false")
    host_link_gbps: float = _c(
        512.0, "Accelerator <-> host memory bandwidth per direction, Gb/s, for activation offloading: PCIe "
        "Gen5 x16 (64 GB/s); Grace-Blackwell parts override it with NVLink-C2C",
        unit="Gb/s", minimum=1, maximum=100_000)
    nvls_link_efficiency: float = _c(
        0.0, "NVLS all-reduce rate / one-way line rate on this accelerator's NVSwitch board, as the engine's "
        "nvls_efficiency (which 0 keeps): B200 0.605 (8x B200, 6 GPUs: busbw 778.2, stas00/ml-engineering), "
        "B300 0.604 (8x B300: algbw 483, nccl#2140)", unit="fraction", minimum=0, maximum=1.0)
    nvls_domain_efficiency: float = _c(
        0.0, "NVLS all-reduce rate / one-way line rate when the NVLink domain spans several servers through "
        "NVLink switch trays (NVL72); 0: as nvls_link_efficiency. GB200 NVL72, 72 GPUs: 8 GiB in 20299 us "
        "(coreweave/nccl-tests README, single rack) less the 525 us fixed cost (collective_latency_us 5, NVLS 25, "
        "72 x nvls_rank_latency_us): algbw 434.4 x 73/72 / 900 = 0.489", unit="fraction", minimum=0, maximum=1.0)
    scale_up_efficiency: float = _c(
        0.0, "Ring busbw / scale-up line rate measured on this accelerator's own links (NVLink 5: about 0.75, "
        "673-680 of 900 GB/s); 0: the engine-wide nvlink_efficiency", unit="fraction", minimum=0, maximum=1.0)
    collective_latency_us: float = _c(
        0.0, "Fixed cost the collective library adds per call on this accelerator beyond NCCL's Hopper "
        "latency tables (RCCL on MI300X, NVLink through NVL72 switch trays), us", unit="us", minimum=0,
        maximum=100_000)
    nccl_ll_max_bus_gbps: float = _c(
        141.0, "NCCL's cap on the LL protocol's estimated bus bandwidth inside one server, GB/s, by GPU "
        "architecture (tuning.cc llMaxBws, N1 column): Volta 39, Ampere 87.7, Hopper 141 (2.21 and later; 87.7 "
        "before), Blackwell 282 (2.25 and later; Hopper's before)", unit="GB/s", minimum=0.1, maximum=100_000)
    comm_compute_slowdown: float = _c(
        0.10, "Compute slowdown while a collective shares the SMs and HBM (arXiv:2507.03114 measures 10-19%)",
        unit="fraction", minimum=0, maximum=1.0)
    attention_tile_latency_us: float = _c(
        2.0, "Fixed time of one forward attention tile that does not shrink with the tensor rate or the head "
        "dim (pipeline fill and drain: the Q load's and the O store's round trips), us at the burst clock, "
        "beside attention_tile_overhead_blocks. The H200's fitted tile cost at head dim 128 (h200-kernels.json) "
        "as a latency: it carries to Blackwell, where the tiles of a 128-key sliding window at head dim 64 "
        "take 2x what a cost in blocks gives (cudnn-frontend gpt_oss rows, GB200, cuDNN 9.22: median "
        "+1 % instead of -46 % when GB200 was costed with 132 SMs; -7 % at its own 152, whose extra SMs "
        "share the tiles' latency; tests/validation/data/blackwell-cudnn-sdpa-gpt-oss.csv)",
        unit="us", minimum=0, maximum=10_000)
    attention_backward_tile_latency_us: float = _c(
        4.0, "Fixed time of one backward attention tile that does not shrink with the tensor rate or the head "
        "dim, us at the burst clock, beside attention_backward_tile_overhead_blocks; the split of the H200's "
        "fitted backward tile cost (head dim 128) that fits GB200's cuDNN 9.22 backward at head dim 64 with a "
        "128-key window (median +0 % instead of -44 %) and at head dim 128 (-2 %) when GB200 was costed with "
        "132 SMs; at its own 152: -7 % and -3 %",
        unit="us", minimum=0, maximum=10_000)


_FIELD_LIST = dataclasses.fields(AcceleratorConstants)
_FIELDS = frozenset(f.name for f in _FIELD_LIST)
