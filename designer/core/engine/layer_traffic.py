"""A layer's TP, EP and CP communication on one GPU: the collectives it asks of the caller's `comm`
function, then split into what its forward and backward wait for and what runs hidden under
compute, by Megatron's overlap rules (docs/engine-model.md, "Overlap")."""
from __future__ import annotations

from .constants import EngineConstants
from .flops import ModelShape
from .moe import ExpertLoad, flex_pass_s
from .phase import ACT_BYTES, CommFn, GemmTimes, Phase, Sharding


class LayerTraffic:
    """Seconds of a layer's TP, EP and CP communication in forward and backward, before overlap."""
    tp_f: float
    tp_b: float
    tp_first_f: float | None  # the part of the TP traffic no GEMM can hide (None: a quarter)
    tp_first_b: float | None
    ep_f: float  # forward: dispatch + combine
    ep_b: float  # backward: the combine's backward (out to the experts) + the dispatch's (back)
    cp_f: float  # the p2p ring's steps, which run under attention
    cp_b: float
    cp_exposed_f: float  # CP traffic that cannot run under attention
    cp_exposed_b: float
    ep_combine_f: float  # of ep_f: the forward's combine
    ep_combine_b: float  # of ep_b: the combine's backward (the first all-to-all of the backward)

    __slots__ = ("tp_f", "tp_b", "tp_first_f", "tp_first_b", "ep_f", "ep_b", "cp_f", "cp_b", "cp_exposed_f",
                 "cp_exposed_b", "ep_combine_f", "ep_combine_b")

    def __init__(self, tp_f: float, tp_b: float, tp_first_f: float | None, tp_first_b: float | None, ep_f: float,
                 ep_b: float, cp_f: float, cp_b: float, cp_exposed_f: float, cp_exposed_b: float,
                 ep_combine_f: float = 0.0, ep_combine_b: float = 0.0) -> None:
        self.tp_f = tp_f
        self.tp_b = tp_b
        self.tp_first_f = tp_first_f
        self.tp_first_b = tp_first_b
        self.ep_f = ep_f
        self.ep_b = ep_b
        self.cp_f = cp_f
        self.cp_b = cp_b
        self.cp_exposed_f = cp_exposed_f
        self.cp_exposed_b = cp_exposed_b
        self.ep_combine_f = ep_combine_f
        self.ep_combine_b = ep_combine_b


def layer_traffic(m: ModelShape, sh: Sharding, T: float, X: float, moe: bool, load: ExpertLoad, comm: CommFn,
                  k: EngineConstants) -> LayerTraffic:
    """The layer's TP, EP and CP communication, asked of `comm` in that order."""
    tp_f, tp_b, tp_first_f, tp_first_b = tp_traffic(sh, X, moe, comm, k)
    ep_f, ep_b, ep_combine_f, ep_combine_b = ep_traffic(m, sh, T, load, comm, k) if moe and sh.ep > 1 else \
        (0.0, 0.0, 0.0, 0.0)
    cp_f, cp_b, cp_exposed_f, cp_exposed_b = cp_traffic(m, sh, T, comm) if sh.cp > 1 else (0.0, 0.0, 0.0, 0.0)
    return LayerTraffic(tp_f, tp_b, tp_first_f, tp_first_b, ep_f, ep_b, cp_f, cp_b, cp_exposed_f, cp_exposed_b,
                        ep_combine_f, ep_combine_b)


def tp_traffic(sh: Sharding, X: float, moe: bool, comm: CommFn,
               k: EngineConstants) -> tuple[float, float, float | None, float | None]:
    """(forward, backward, first forward step, first backward step) of the layer's TP collectives."""
    t = sh.tp
    if t <= 1:
        return 0.0, 0.0, None, None
    points = 1 if moe else 2  # attention block and (dense) MLP block
    if not sh.sequence_parallel:
        ar = comm("tp", "all_reduce", X)
        return points * ar, points * ar, None, None
    ag, rs = comm("tp", "all_gather", X), comm("tp", "reduce_scatter", X)
    tp_f = points * (ag + rs)
    tp_b = points * (ag + rs) + points * ag  # + the re-gather of inputs for wgrad
    # Transformer Engine's userbuffers (initialize_ub defaults): an all-gather feeding a GEMM
    # runs as a ring exchange in tp steps (its first step exposed), a GEMM's reduce-scatter is
    # pipelined in 4 splits (the last exposed); in backward the input re-gather and the dgrad
    # reduce-scatter of QKV/FC1 are bulk overlaps under the other GEMM, so only the
    # ring-exchanged gathers of the output-projection and FC2 dgrads have a first step.
    tp_first_f = points * (ag / t + rs / k.tp_overlap_pipeline_splits)
    tp_first_b = points * ag / t
    return tp_f, tp_b, tp_first_f, tp_first_b


def ep_traffic(m: ModelShape, sh: Sharding, T: float, load: ExpertLoad, comm: CommFn,
               k: EngineConstants) -> tuple[float, float, float, float]:
    """(forward, backward, forward's combine, combine's backward) seconds of a MoE layer's token
    dispatch and combine over the EP group."""
    tokens = T / sh.tp if sh.sequence_parallel else T
    if sh.moe_dispatcher == "allgather":
        # every rank gathers the whole EP group's tokens and keeps its experts' (dispatch), then
        # reduce-scatters the results (combine); backward is the same pair the other way round
        gathered = tokens * sh.ep * m.h * ACT_BYTES
        gather, scatter = comm("ep", "all_gather", gathered), comm("ep", "reduce_scatter", gathered)
        return gather + scatter, gather + scatter, scatter, gather
    copy_bytes = tokens * m.h * ACT_BYTES * load.load_factor  # one copy of the busiest GPU's tokens
    if sh.moe_dispatcher == "flex":
        # DeepEP / HybridEP: once per remote unit and per destination GPU (moe.flex_pass_s)
        def one_pass(nbytes: float, combine: bool) -> float:
            return flex_pass_s(sh.flex, k, sh.ep, m.experts, m.topk, sh.router_groups, nbytes,
                               lambda b: comm("ep", "all_to_all", b), combine)
        combine = one_pass(copy_bytes, True)
        # forward: dispatch + combine; backward: the combine's gradient goes out to the experts
        # as a dispatch (DeepEP's combine backward calls dispatch), the dispatch's comes back
        # as a combine
        out_b = one_pass(copy_bytes * sh.combine_bwd_bytes / ACT_BYTES, False)
        return one_pass(copy_bytes * sh.dispatch_fwd_bytes / ACT_BYTES, False) + combine, out_b + combine, \
            combine, out_b
    tokens_bytes = copy_bytes * m.topk  # one copy per expert
    a2a = comm("ep", "all_to_all", tokens_bytes)
    # dispatch + combine; Megatron can send the forward dispatch and the combine's backward
    # (the gradients going out to the experts) quantized (moe_dispatch_fwd_dtype, ...)
    wire_f = comm("ep", "all_to_all", tokens_bytes * sh.dispatch_fwd_bytes / ACT_BYTES)
    wire_b = comm("ep", "all_to_all", tokens_bytes * sh.combine_bwd_bytes / ACT_BYTES)
    return wire_f + a2a, wire_b + a2a, a2a, wire_b


def cp_traffic(m: ModelShape, sh: Sharding, T: float, comm: CommFn) -> tuple[float, float, float, float]:
    """(ring forward, ring backward, exposed forward, exposed backward) of the CP exchange."""
    c = sh.cp
    kv_block = T * m.kv_comm_width * ACT_BYTES / sh.tp
    if sh.cp_comm == "a2a":
        # Ulysses: all-to-all Q, K, V to head-sharded full sequences and the output back
        qkv = T * (m.heads * m.qk_dim / sh.tp) * ACT_BYTES + kv_block
        out_bytes = T * m.heads * m.v_dim / sh.tp * ACT_BYTES
        exposed = comm("cp", "all_to_all", qkv) + comm("cp", "all_to_all", out_bytes)
        return 0.0, 0.0, exposed, exposed
    if sh.cp_comm == "allgather":
        # gather every rank's K and V before attention; reduce-scatter their gradients after
        exposed_f = comm("cp", "all_gather", kv_block * c)
        return 0.0, 0.0, exposed_f, exposed_f + comm("cp", "reduce_scatter", kv_block * c)
    # p2p ring (and a2a+p2p, costed as its ring across the groups)
    step = comm("cp", "send_recv", kv_block)
    return (c - 1) * step, 2 * (c - 1) * step, 0.0, 0.0


def overlap_layer_comm(fwd: Phase, bwd: Phase, tr: LayerTraffic, sh: Sharding, gt: GemmTimes, attn_fwd: float,
                       attn_bwd: float, fwd_compute: float, bwd_compute: float, num_sms: int,
                       k: EngineConstants, attn_block: tuple[float, float] | None = None) -> None:
    """`attn_block`: (forward, backward) seconds of the attention block (its GEMMs and the core
    attention), the node the EP overlap pairs a combine with; None: the core attention alone."""
    """Split the layer's TP, CP and EP traffic into what its phases wait for and what runs hidden."""
    c = sh.cp
    # TP: blocking in forward; in backward the dgrad all-reduce (or SP reduce-scatter) runs under
    # the wgrad GEMM and the SP re-gather under dgrad (Megatron's async TP backward).
    if sh.tp_comm_overlap:
        e, h = _overlapped(tr.tp_f, gt.fwd, first=tr.tp_first_f)
        fwd.busy["tp_comm"], fwd.hidden["tp_comm"] = e, h
        e, h = _overlapped(tr.tp_b, gt.dgrad + gt.wgrad, first=tr.tp_first_b)
        bwd.busy["tp_comm"], bwd.hidden["tp_comm"] = e, h
    else:
        fwd.busy["tp_comm"] = tr.tp_f
        e, h = _overlapped(tr.tp_b, gt.wgrad, chunks=2)
        bwd.busy["tp_comm"], bwd.hidden["tp_comm"] = e, h
    # CP p2p ring: each step's exchange runs under that step's attention kernel
    e, h = cp_ring_overlap(tr.cp_f, attn_fwd, c, backward=False) if c > 1 else (0.0, 0.0)
    fwd.busy["cp_comm"], fwd.hidden["cp_comm"] = e, h
    e, h = cp_ring_overlap(tr.cp_b, attn_bwd, c, backward=True) if c > 1 else (0.0, 0.0)
    bwd.busy["cp_comm"], bwd.hidden["cp_comm"] = e, h
    fwd.busy["cp_comm"] += tr.cp_exposed_f
    bwd.busy["cp_comm"] += tr.cp_exposed_b
    if sh.ep_comm_overlap:
        # Megatron's overlap_moe_expert_parallel_comm pairs the forward of one micro-batch with the
        # backward of another, node by node (schedule_layer_1f1b in megatron/core/models/common/
        # model_chunk_schedule_plan.py): the backward's combine runs on the communication stream under
        # the forward's attention, the forward's dispatch under the backward's MLP, the backward's
        # dispatch under the forward's MLP, the forward's combine under the backward's attention. No
        # piece of an all-to-all runs before its window opens, so only what its paired node cannot
        # cover stays exposed (DualPipe pairs the same four); the warm-up forwards and cool-down
        # backwards have no partner (ep_overlap_share).
        # The flex backends' kernels hold SMs while they run: the compute under them runs on the rest,
        # h x sms / num_sms longer (a compute of C under h seconds of them: C + h sms / num_sms).
        sm_share = min(1.0, sh.flex.sms(k) / num_sms) if sh.moe_dispatcher == "flex" else 0.0
        attn_f, attn_b = attn_block or (attn_fwd, attn_bwd)
        attn_f, attn_b = min(attn_f, fwd_compute), min(attn_b, bwd_compute)
        pairs = ((fwd, tr.ep_f - tr.ep_combine_f, bwd_compute - attn_b, tr.ep_combine_f, attn_b),
                 (bwd, tr.ep_b - tr.ep_combine_b, fwd_compute - attn_f, tr.ep_combine_b, attn_f))
        for ph, to_mlp, mlp_window, to_attn, attn_window in pairs:
            comm_s = to_mlp + to_attn
            h = _overlapped(to_mlp, mlp_window, first=0.0)[1] + _overlapped(to_attn, attn_window, first=0.0)[1]
            h *= sh.ep_overlap_share
            ph.busy["ep_comm"], ph.hidden["ep_comm"] = comm_s - h, h
            ph.busy["compute"] += h * sm_share
    else:
        fwd.busy["ep_comm"], bwd.busy["ep_comm"] = tr.ep_f, tr.ep_b  # token dispatch is on the critical path


def cp_ring_overlap(ring_s: float, attn_s: float, c: int, backward: bool) -> tuple[float, float]:
    """(exposed, hidden) of a context-parallel p2p ring's exchange over a layer's attention.

    Transformer Engine's ring (AttnFuncWithCPAndKVP2P; AttnFuncWithCP in 1.x) posts each step's
    send/recv before that step's attention kernel and waits for it after, so every transfer,
    the first included, runs under one step's kernel (attn_s / c each). Forward: steps 0..c-2 each
    carry one KV block (ring_s / (c - 1)); the last sends nothing. Backward: the first step carries
    the KV block, the last the accumulated dK/dV, each step between both (ring_s = 2 (c - 1) blocks).
    A step waits only for what its transfer takes beyond its kernel."""
    if ring_s <= 0:
        return 0.0, 0.0
    step_attn = attn_s / c
    if not backward:
        exposed = ring_s - (c - 1) * min(ring_s / (c - 1), step_attn)
    else:
        block = ring_s / (2 * (c - 1))
        exposed = 2 * max(0.0, block - step_attn) + (c - 2) * max(0.0, 2 * block - step_attn)
    exposed = max(0.0, exposed)
    return exposed, ring_s - exposed


def _overlapped(comm_s: float, window_s: float, chunks: int = 4, first: float | None = None) -> tuple[float, float]:
    """(exposed, hidden) of a communication pipelined against `window_s` of compute.

    The first chunk cannot overlap (Calculon's tile model; `first` when the pipeline's own chunking
    is known); the rest hides up to the window.
    """
    if comm_s <= 0:
        return 0.0, 0.0
    first = comm_s / chunks if first is None else min(first, comm_s)
    rest = comm_s - first
    hidden = min(rest, window_s)
    return first + rest - hidden, hidden
