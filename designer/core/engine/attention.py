"""Time of a fused (flash) attention kernel from its shape: tiles, waves and fixed costs.

A flash-attention kernel (cuDNN's fused attention, which Transformer Engine calls, and
FlashAttention-2/3) splits each (sequence, head) into query tiles of `attention_tile_q` rows; one
thread block walks a tile's row of key/value blocks of `attention_tile_k` columns. Forward, a block
costs 2 x tile_q x tile_k x (qk_dim + v_dim) MMA FLOPs and tile_q x tile_k softmax exponentials;
backward (one thread block per key/value tile walking the query blocks) 2.5 times the MMA FLOPs
and the exponentials again. A causal mask skips the blocks above the diagonal, a sliding window
those left of it: the tiles have unequal lengths. The kernel time is

    t = overhead + t_block x (work / SMs + tail x longest tile)

with work = sum over tiles of (their blocks + a fixed tile cost: loading Q, writing O and the
softmax statistics forward; the dQ accumulation and dK/dV writes backward), `tail` the share of
the longest tile the last wave leaves idle on average (a half), and t_block a block at the
kernel's MMA rate on one SM (or at its exponential rate where that is slower: small head
dimensions, FP8 attention). Short sequences and few heads per GPU lose to the fixed tile and
kernel costs and the last wave; long ones approach the MMA rate.

Fitted to the cuDNN rows of tests/validation/data/h200-kernels.json (one H200, causal, head dim
128, sequence 2k-16k, 8-64 heads per GPU, batch 1-2; every forward row within 1 %) and, backward,
also to cudnn-frontend's SDPA benchmark on an H200 (h200-cudnn-sdpa-llama3.1.csv, 2k-32k, causal
and unmasked; every backward row of both within 6 %); one rate (the former model) misses them by
up to 44 %.
"""
from __future__ import annotations

import math

BACKWARD_FLOPS_FACTOR = 2.5  # backward / forward MMA FLOPs (dQ, dK, dV, dP and the recomputed S)


class AttentionKernel:
    """One attention kernel launch on one GPU."""

    batch: float  # sequences (or independent chunks) in the launch
    heads: float  # query heads on this GPU
    s_q: float  # query rows per sequence
    s_k: float  # key/value rows per sequence
    qk_dim: int  # query.key width per head
    v_dim: int  # value width per head
    mask: str  # causal (bottom-right aligned), window (causal, `window` keys back) or full
    window: int

    __slots__ = ("batch", "heads", "s_q", "s_k", "qk_dim", "v_dim", "mask", "window")

    def __init__(self, batch: float, heads: float, s_q: float, s_k: float, qk_dim: int = 128, v_dim: int = 128,
                 mask: str = "causal", window: int = -1) -> None:
        self.batch = batch
        self.heads = heads
        self.s_q = s_q
        self.s_k = s_k
        self.qk_dim = qk_dim
        self.v_dim = v_dim
        self.mask = mask
        self.window = window

    @property
    def flops(self) -> float:
        """Forward MMA FLOPs of the scores the mask keeps (what a model FLOP count charges)."""
        return 2.0 * self.batch * self.heads * (self.qk_dim + self.v_dim) * self.s_q * _keys_per_query(self)


class AttentionRates:
    """One direction's kernel constants on one accelerator (AcceleratorConstants' attention_* fields)."""

    mma_flops_per_s: float  # per GPU, at the kernel's MMA efficiency and the sustained clock
    exp_per_s: float | None  # softmax exponentials per second per GPU; None when not limiting
    sms: int
    tile_q: int
    tile_k: int
    tile_overhead_blocks: float  # fixed cost of a tile, in its own blocks' MMA time
    kernel_overhead_s: float
    tail_share: float
    tile_latency_s: float  # fixed cost of a tile that does not scale with the MMA rate or head dim

    __slots__ = ("mma_flops_per_s", "exp_per_s", "sms", "tile_q", "tile_k", "tile_overhead_blocks",
                 "kernel_overhead_s", "tail_share", "tile_latency_s")

    def __init__(self, mma_flops_per_s: float, exp_per_s: float | None, sms: int, tile_q: int, tile_k: int,
                 tile_overhead_blocks: float, kernel_overhead_s: float, tail_share: float,
                 tile_latency_s: float = 0.0) -> None:
        self.mma_flops_per_s = mma_flops_per_s
        self.exp_per_s = exp_per_s
        self.sms = sms
        self.tile_q = tile_q
        self.tile_k = tile_k
        self.tile_overhead_blocks = tile_overhead_blocks
        self.kernel_overhead_s = kernel_overhead_s
        self.tail_share = tail_share
        self.tile_latency_s = tile_latency_s


def _keys_per_query(k: AttentionKernel) -> float:
    """Keys each query attends to, averaged over the queries (bottom-right aligned masks)."""
    if k.mask == "full":
        return k.s_k
    off = max(0.0, k.s_k - k.s_q)  # queries are the last s_q positions of the keys
    n = k.s_q
    causal = off + (n + 1) / 2  # query i sees off + i + 1 keys
    if k.mask == "window" and 0 <= k.window:
        w = k.window + 1
        return sum_min_linear(n, off + 1, w) / n if n else 0.0
    return causal


def sum_min_linear(n: float, a: float, cap: float) -> float:
    """Sum over i = 0 .. n-1 of min(cap, i + a): a triangle cut flat at `cap`, in closed form."""
    if n <= 0:
        return 0.0
    k0 = min(n, max(0.0, math.ceil(cap - a)))  # terms below the cap
    return k0 * a + k0 * (k0 - 1) / 2 + (n - k0) * cap


def tile_blocks(k: AttentionKernel, tile_q: int, tile_k: int) -> tuple[float, float, float]:
    """(query tiles per sequence-head, key blocks summed over them, blocks of the longest tile)."""
    tq = math.ceil(k.s_q / tile_q)
    tk = math.ceil(k.s_k / tile_k)
    if k.mask == "full":
        return tq, tq * tk, tk
    offset = max(0.0, k.s_k - k.s_q) / tile_k  # whole blocks every tile sees before its diagonal
    cap = float(tk)
    if k.mask == "window" and k.window >= 0:
        cap = min(cap, math.ceil(k.window / tile_k) + 1)
    a = 1 + math.floor(offset)
    total = sum_min_linear(tq, a, cap)
    longest = min(cap, tq - 1 + a)
    return tq, total, longest


def fp8_backward_kernel(k: AttentionKernel) -> AttentionKernel:
    """The kernel cuDNN's FP8 (and MXFP8) attention backward runs for `k`: it does not skip the key
    blocks left of a sliding window, so a window kernel costs as an unmasked one (its forward does
    skip them). cudnn-frontend benchmark/sdpa_benchmark_training/results/gpt_oss (GB200, GB300; cuDNN
    9.22 and 9.26; head dim 64, window 128): the FP8 backward grows with the square of the sequence
    (1.49, 5.20, 19.4, 74.9 ms at 4k-32k) while the BF16 one grows linearly (0.44 to 3.45 ms), and at
    4k it takes what the unmasked FP8 backward of the same FLOPs takes (results/llama3.1 GB300, head
    dim 128, no_mask: 1.50 ms FP8, 1.91 ms MXFP8; the window kernel 1.49 and 1.84 ms)."""
    return AttentionKernel(k.batch, k.heads, k.s_q, k.s_k, k.qk_dim, k.v_dim, "full", -1) \
        if k.mask == "window" and k.window >= 0 else k


def kernel_seconds(k: AttentionKernel, rates: AttentionRates, backward: bool = False) -> float:
    """Seconds of one forward (or backward) attention kernel."""
    if k.batch <= 0 or k.heads <= 0 or k.s_q <= 0 or k.s_k <= 0:
        return 0.0
    # a backward tile walks query blocks for one key/value tile: the same blocks, transposed
    shape = AttentionKernel(k.batch, k.heads, k.s_k, k.s_q, k.qk_dim, k.v_dim, k.mask, k.window) if backward and \
        k.mask == "full" else k
    tiles, blocks, longest = tile_blocks(shape, rates.tile_q, rates.tile_k)
    factor = BACKWARD_FLOPS_FACTOR if backward else 1.0
    block_flops = 2.0 * rates.tile_q * rates.tile_k * (k.qk_dim + k.v_dim) * factor
    t_mma = block_flops / (rates.mma_flops_per_s / rates.sms)
    t_block = t_mma
    if rates.exp_per_s:  # the softmax exponentials of a block, where the SFUs are slower than the MMAs
        t_block = max(t_mma, rates.tile_q * rates.tile_k / (rates.exp_per_s / rates.sms))
    # a tile's fixed part: a latency (pipeline fill and drain) and a share that grows with the head dims
    # (moving Q/O, or K/V and their gradients), not with the exponentials
    fixed = rates.tile_latency_s + rates.tile_overhead_blocks * t_mma
    work = k.batch * k.heads * (blocks * t_block + tiles * fixed)
    return rates.kernel_overhead_s + work / rates.sms + rates.tail_share * (longest * t_block + fixed)


def efficiency(k: AttentionKernel, rates: AttentionRates, peak_flops_per_s: float, backward: bool = False) -> float:
    """Useful FLOPs per second / peak: what the kernel reaches on this shape."""
    t = kernel_seconds(k, rates, backward)
    factor = BACKWARD_FLOPS_FACTOR if backward else 1.0
    return k.flops * factor / t / peak_flops_per_s if t > 0 else 0.0
