"""Context-parallel ring attention's per-step kernels besides the attention itself.

Transformer Engine's AttnFuncWithCPAndKVP2P (pytorch/attention/dot_product_attention/
context_parallel.py; BF16, sbhd or bshd, causal) runs, per ring step and beside the step's
attention kernel (costed in engine/attention.py):
- forward: the KV send/recv to the next rank (batch_isend_irecv: one NCCL kernel; the last step
  sends nothing), the softmax-LSE correction into the running LSE (flash_attn_fwd_softmax_lse
  _correction, or the clone of the first step's), and the output correction of the step's partial
  output into the result (flash_attn_fwd_out_correction, one fused elementwise kernel each);
- backward: the KV and dKV send/recv (one NCCL kernel per step, the last returning dKV to its
  owner), the step's dQ written or added into dQ (copy_ / add_) and its dK and dV into dK and dV.
Each is a small kernel whose time is mostly its fixed cost; the bytes they move are costed with
the ring's copies and merges (compute.cp_ring_merge_bytes). At short per-rank sequences (Llama 3.1
8B on 8k tokens over CP 4: 2k tokens a rank) these fixed costs are a visible share of the layer.
"""
from __future__ import annotations

from .constants import EngineConstants


def cp_ring_kernels(cp: int, k: EngineConstants) -> tuple[float, float]:
    """Small kernels (forward, backward) of one layer's p2p ring besides its attention kernels."""
    if cp <= 1:
        return 0.0, 0.0
    forward = cp * k.cp_ring_fwd_kernels_per_step - 1  # the last step receives no further KV block
    backward = cp * k.cp_ring_bwd_kernels_per_step
    return max(0.0, forward), max(0.0, backward)


def cp_ring_fixed_s(cp: int, k: EngineConstants, kernel_overhead_us: float) -> tuple[float, float]:
    """Seconds (forward, backward) of those kernels' fixed costs in one layer: each pays the
    accelerator's kernel fixed cost (`gemm_overhead_us`: launch, prologue, tail)."""
    forward, backward = cp_ring_kernels(cp, k)
    return forward * kernel_overhead_us * 1e-6, backward * kernel_overhead_us * 1e-6
