"""Stage 5: per-layer phases. Each (straggler pattern, stage, chunk) gets the seconds of one
micro-batch's forward and backward: compute, recompute and the TP/CP/EP communication."""
from __future__ import annotations

from collections import Counter
from typing import NamedTuple

import numpy as np

from ..compute import (CommFn, LayerCost, OpCoster, Phase, Sharding, embedding_cost, gemm_operand_bytes, layer_cost,
                       mtp_cost, output_cost)
from ..constants import EngineConstants, uses_flash_attention
from ..memory import activation_bytes_per_layer
from ..moe import FlexPath, ep_overlap_share, wire_bytes
from .job import Hardware, Job
from .layout import Layout

LAYER_COSTS_KEPT = 256  # layer costs of earlier plans kept per Hardware and constants (engine/cache.py)


class LayerPhases:
    """Each stage's per-chunk forward and backward phases, per straggler pattern."""
    sharding: Sharding
    peak_tflops: float  # at the job's precision: what MFU is measured against
    chunks: list[list[list[tuple[Phase, Phase]]]]  # [pattern][stage][chunk] -> (forward, backward)

    __slots__ = ("sharding", "peak_tflops", "chunks")

    def __init__(self, sharding: Sharding, peak_tflops: float, chunks: list[list[list[tuple[Phase, Phase]]]]) -> None:
        self.sharding = sharding
        self.peak_tflops = peak_tflops
        self.chunks = chunks


def sharding_of(job: Job, hw: Hardware, flex: FlexPath | None = None) -> Sharding:
    par, plan = job.parallelism, job.plan
    flash = uses_flash_attention(hw.ac, par.attention_backend)
    return Sharding(tp=plan.tp, cp=plan.cp, ep=plan.ep, etp=plan.etp, sequence_parallel=par.sequence_parallel,
                    recompute=par.recompute_granularity, tp_comm_overlap=par.tp_comm_overlap, flash_attention=flash,
                    zero3=par.zero_stage >= 3,
                    # DualPipe pairs forward and backward chunks to hide the all-to-all by design
                    ep_comm_overlap=bool(par.overlap_moe_expert_parallel_comm) or par.pipeline_schedule == "dualpipe",
                    recompute_modules=tuple(par.recompute_modules or ("core_attn",)),
                    grouped_gemm=bool(par.moe_grouped_gemm), cp_comm=par.cp_comm_type or "p2p",
                    moe_dispatcher=par.moe_token_dispatcher_type or "alltoall",
                    flex=flex or FlexPath(par.moe_flex_dispatcher_backend or "deepep",
                                          num_sms=par.moe_flex_dispatcher_num_sms),
                    framework=par.framework or "megatron", moe_balance=router_balance(par), moe_capacity_factor=par.moe_expert_capacity_factor,
                    moe_pad_to_capacity=bool(par.moe_pad_expert_input_to_capacity),
                    ep_overlap_share=ep_overlap_share(plan.num_microbatches, plan.pp, plan.vp, par.pipeline_schedule),
                    router_groups=(job.workload.moe_router_num_groups or 0, job.workload.moe_router_group_topk or 0),
                    dispatch_fwd_bytes=wire_bytes(par.moe_dispatch_fwd_dtype),
                    combine_bwd_bytes=wire_bytes(par.moe_combine_bwd_dtype),
                    grad_reduce_in_bf16=bool(par.grad_reduce_in_bf16),
                    moe_host_sync=moe_host_sync(job), te_op_fuser=bool(par.use_transformer_engine_op_fuser))


def moe_host_sync(job: Job) -> bool:
    """Whether each MoE layer's forward waits on the host for its routed token counts: Megatron's
    dropless dispatchers copy them to the host to size the all-to-all and the grouped GEMM. Padding
    every expert to its capacity fixes the sizes, and a CUDA graph that captures the MoE layer (a
    full-iteration or whole-layer graph, or the `moe` scope) replays without the host."""
    par = job.parallelism
    if not job.shape.experts or par.moe_pad_expert_input_to_capacity:
        return False
    impl, scope = par.cuda_graph_impl, par.cuda_graph_scope
    if impl in (None, "none"):
        return True
    return not (impl == "full_iteration" or not scope or "full" in scope or "moe" in scope)


def router_balance(par) -> str:
    """How evenly the router spreads tokens (engine/moe.py): forced for benchmarks, DeepSeek's bias
    balancing, or Megatron's default auxiliary loss (also taken for sinkhorn and none)."""
    if par.moe_router_force_load_balancing:
        return "forced"
    if par.moe_router_enable_expert_bias:
        return "bias"
    return "none" if par.moe_router_load_balancing_type == "none" else "aux_loss"


def flex_path(comm, backend: str, k: EngineConstants, num_sms: int | None = None) -> FlexPath:
    """The flex dispatcher's units and rates for the job's EP groups (engine/moe.py FlexPath): HybridEP
    dedups over NVLink domains; DeepEP over servers of at most `deepep_max_nvl_peers` GPUs, and crosses
    between servers over the NICs even inside one NVLink domain (no multi-node NVLink in its kernels)."""
    model = getattr(comm, "dims", {}).get("ep")
    if model is None or model.shape.members.size == 0 or model.shape.members.shape[1] < 2:
        return FlexPath(backend, num_sms=num_sms)
    f, members = model.fabric, model.shape.members
    ep = members.shape[1]

    def span(index: np.ndarray) -> float:
        ordered = np.sort(index[members], axis=1)
        return float(np.mean(1 + np.count_nonzero(np.diff(ordered, axis=1), axis=1)))

    domains, servers = span(f.gpu_domain), span(f.gpu_node)
    if backend == "hybridep":
        units, rdma_inside = domains, False
    else:
        units = max(servers, ep / k.deepep_max_nvl_peers)
        rdma_inside = units > domains + 1e-9
    nodes = f.gpu_node[members]
    nvlink = float(f.node_scale_up_Bps[nodes].min())
    nics = f.gpu_nic[members]
    nic = float((f.nic_cap_Bps[np.maximum(nics, 0)] * f.node_nics_per_gpu[nodes]).min()) \
        if len(f.nic_cap_Bps) and np.all(nics >= 0) else 0.0
    return FlexPath(backend, units, ep / units, rdma_inside, nvlink, nic, num_sms)


def precision_gemm_efficiency(acc, ac, precision: str) -> float | None:
    """GEMM efficiency at a precision other than BF16: the calibrated BF16 efficiency scaled by the
    measured ratio of the two (catalog measured_gemm_tflops; H100 FP8 1402.6 of 1979 = 70.9 % against
    BF16 794.5 of 989 = 80.3 %), and by how much more of it the part holds under its power limit
    (low_precision_sustained_gain). None (BF16 calibration) where nothing is measured."""
    if precision in ("bf16", "fp16"):
        return None
    measured, measured16 = acc.gemm_efficiency(precision), acc.gemm_efficiency("bf16")
    if not measured and precision == "fp4":  # no FP4 GEMM benchmark published (the job warns)
        fp8 = acc.gemm_efficiency("fp8") or measured16
        measured = fp8 * ac.fp4_gemm_share_of_fp8 if fp8 else None
    if not measured or not measured16:
        return None
    return ac.gemm_efficiency_best * measured / measured16 * ac.low_precision_sustained_gain


def fp8_costs(job: Job, k: EngineConstants) -> tuple[float, str | None]:
    """(HBM bytes per quantized element, FP8 attention format) of a low-precision job: the recipe's
    cast traffic (Megatron's default recipe is delayed scaling), and with FP8 attention kernels
    (fp8_dot_product_attention) "mxfp8" under the mxfp8 recipe, else "fp8" (per-tensor scales).
    A BF16 job, or attention kept in BF16: None."""
    par = job.parallelism
    if job.shape.precision == "fp4":  # attention stays BF16 (or FP8 kernels when asked)
        recipe = par.fp4_recipe or "nvfp4"
        cast = getattr(k, f"fp4_cast_bytes_{recipe}") + (k.nvfp4_rht_cast_bytes if recipe == "nvfp4" else 0.0)
        return cast, ("fp8" if par.fp8_dot_product_attention else None)
    if job.shape.precision != "fp8":
        return 0.0, None
    recipe = par.fp8_recipe or "delayed"
    cast = getattr(k, f"fp8_cast_bytes_{recipe}")
    return cast, (("mxfp8" if recipe == "mxfp8" else "fp8") if par.fp8_dot_product_attention else None)


def attention_kernel_rate(job: Job, k: EngineConstants) -> float:
    """Rate of the job's fused attention kernel generation (plan key attention_kernels) as a share
    of the current kernels' that the accelerator's attention constants are fitted to."""
    kernels = job.parallelism.attention_kernels
    return 1.0 if kernels == "current" else getattr(k, "attention_rate_" + kernels.replace("-", "_").replace(".", "_"))


def job_operand_bytes(job: Job) -> float:
    """Bytes per element of the job's GEMM operands: its precision's, with its recipe's scales."""
    par, precision = job.parallelism, job.shape.precision
    return gemm_operand_bytes(precision, par.fp4_recipe if precision == "fp4" else par.fp8_recipe)


def bf16_layers(job: Job) -> set[int]:
    """Decoder layers an FP8/FP4 run keeps in BF16 (Megatron --first-last-layers-bf16 with
    --num-layers-at-start-in-bf16 / --num-layers-at-end-in-bf16, 1 and 1 by default)."""
    par, m = job.parallelism, job.shape
    if not par.first_last_layers_bf16 or m.precision not in ("fp8", "fp4"):
        return set()
    start = 1 if par.num_layers_at_start_in_bf16 is None else par.num_layers_at_start_in_bf16
    end = 1 if par.num_layers_at_end_in_bf16 is None else par.num_layers_at_end_in_bf16
    return set(range(min(start, m.layers))) | set(range(max(0, m.layers - end), m.layers))


def launch_gap_share(job: Job, k: EngineConstants) -> float:
    """Share of the kernel launch gaps left: CUDA graphs replay captured kernels without the
    host launching each one (Megatron --cuda-graph-impl / --cuda-graph-scope)."""
    impl = job.parallelism.cuda_graph_impl
    if impl in (None, "none"):
        return 1.0
    scope = job.parallelism.cuda_graph_scope
    if impl == "full_iteration" or not scope or "full" in scope:
        return 0.0
    return 1.0 - k.cuda_graph_partial_capture


class HashedOnce:
    """A memo's key that works out its hash once: a memo that misses looks the key up, then stores
    it, and hashing the model shape and the sharding (~60 fields) twice cost more than the lookups."""

    __slots__ = ("values", "_hash")

    def __init__(self, values: tuple) -> None:
        self.values = values
        self._hash = hash(values)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        return isinstance(other, HashedOnce) and self._hash == other._hash and self.values == other.values


class RecordingComm:
    """A comm function that remembers every question (dimension, primitive, bytes) and answer.

    One made around another records into the same log from where that one stands (its `calls`:
    the log from there on): the questions of a layer cost, of a plan's phases and of a view's
    phases, each recorded for its own memo, pass through one function, not one per memo."""

    def __init__(self, comm: CommFn):
        if isinstance(comm, RecordingComm):
            self._comm, self._log, self._start = comm._comm, comm._log, len(comm._log)
        else:
            self._comm, self._log, self._start = comm, [], 0
        self.dims = getattr(comm, "dims", {})  # the groups' structure, which the phases may read

    def __call__(self, dim: str, primitive: str, nbytes: float) -> float:
        seconds = self._comm(dim, primitive, nbytes)
        self._log.append((dim, primitive, nbytes, seconds))
        return seconds

    @property
    def calls(self) -> list[tuple[str, str, float, float]]:
        """The questions and answers since this recording began, as a list of their own."""
        return self._log[self._start:]


def _same_answers(comm, calls) -> bool:
    """Whether the groups answer every recorded question as before, asked of the groups directly
    (not of the ledger, which keeps the costliest call: only a reuse may record there)."""
    dims = getattr(comm, "dims", None)
    if dims is None:
        return False
    for dim, primitive, nbytes, seconds in calls:
        model = dims.get(dim)
        if (0.0 if model is None else model.cost(primitive, nbytes).time_s) != seconds:
            return False
    return True


class PhaseInputs:
    """What every layer cost of a job reads besides the model shape: the sharding and the rates."""
    sharding: Sharding
    peak: float  # at the job's precision
    peak16: float
    gemm_eff: float | None
    cast_bytes: float
    attn_fp8: str | None  # FP8 attention kernels' format, None in BF16
    attn_rate: float
    operand_bytes: float
    high_precision: set[int]  # the layers kept in BF16
    gap: float  # the kernel launch gaps' stretch of compute
    offload: int | None  # the layers whose activations go to host memory

    __slots__ = ("sharding", "peak", "peak16", "gemm_eff", "cast_bytes", "attn_fp8", "attn_rate",
                 "operand_bytes", "high_precision", "gap", "offload")

    def __init__(self, sharding: Sharding, peak: float, peak16: float, gemm_eff: float | None, cast_bytes: float,
                 attn_fp8: str | None, attn_rate: float, operand_bytes: float, high_precision: set[int], gap: float,
                 offload: int | None) -> None:
        self.sharding = sharding
        self.peak = peak
        self.peak16 = peak16
        self.gemm_eff = gemm_eff
        self.cast_bytes = cast_bytes
        self.attn_fp8 = attn_fp8
        self.attn_rate = attn_rate
        self.operand_bytes = operand_bytes
        self.high_precision = high_precision
        self.gap = gap
        self.offload = offload


def phase_inputs(job: Job, hw: Hardware, k: EngineConstants, comm: CommFn) -> PhaseInputs:
    acc, ac, par = hw.acc, hw.ac, job.parallelism
    flex = par.moe_token_dispatcher_type == "flex"
    sharding = sharding_of(job, hw, flex_path(comm, par.moe_flex_dispatcher_backend or "deepep", k,
                                              par.moe_flex_dispatcher_num_sms) if flex else None)
    peak = acc.peak_for(job.shape.precision)
    peak16 = acc.peak_for("bf16")
    gemm_eff = precision_gemm_efficiency(acc, ac, job.shape.precision)
    cast_bytes, attn_fp8 = fp8_costs(job, k)
    return PhaseInputs(sharding, peak, peak16, gemm_eff, cast_bytes, attn_fp8, attention_kernel_rate(job, k),
                       job_operand_bytes(job), bf16_layers(job),
                       1.0 + ac.kernel_gap_fraction * launch_gap_share(job, k),
                       par.cpu_offloading_num_layers)


class LayerCosts(NamedTuple):
    """One micro-batch's layer costs at one slowdown; the BF16 ones only when some layers keep BF16."""
    dense: LayerCost
    moe: LayerCost | None
    embedding: LayerCost
    output: LayerCost
    dense16: LayerCost | None
    moe16: LayerCost | None


def layer_costs(job: Job, hw: Hardware, k: EngineConstants, inputs: PhaseInputs, slowdown: float,
                comm: CommFn) -> LayerCosts:
    m, ac, sharding = job.shape, hw.ac, inputs.sharding
    ops = OpCoster(inputs.peak, inputs.peak16, hw.acc.hbm_tbps, ac, slowdown, inputs.gemm_eff, inputs.cast_bytes,
                   inputs.attn_fp8, inputs.operand_bytes, inputs.attn_rate)
    dense = layer_cost(m, sharding, m.micro_batch, False, ops, comm, k)
    moe = layer_cost(m, sharding, m.micro_batch, True, ops, comm, k) if m.experts else None
    if inputs.high_precision:  # the layers kept in BF16 run at the BF16 rate, without casts
        ops16 = ops.bf16()
        dense16 = layer_cost(m, sharding, m.micro_batch, False, ops16, comm, k)
        moe16 = layer_cost(m, sharding, m.micro_batch, True, ops16, comm, k) if m.experts else None
    else:
        dense16 = moe16 = None
    emb = embedding_cost(m, sharding, m.micro_batch, ops, comm, k)
    out = output_cost(m, sharding, m.micro_batch, ops, comm)
    if m.mtp_layers:  # Megatron places the MTP modules with the loss, on the last stage
        mtp = mtp_cost(m, sharding, m.micro_batch, ops, comm, k)
        out.fwd.add(mtp.fwd, m.mtp_layers)
        out.bwd.add(mtp.bwd, m.mtp_layers)
    return LayerCosts(dense, moe, emb, out, dense16, moe16)


def cost_terms(job: Job, inputs: PhaseInputs) -> HashedOnce:
    """What a layer cost reads besides the pace, as one key: the model shape, the sharding and the
    precision terms (hashed once, for the layer costs' keys and the whole answer's)."""
    return HashedOnce((job.shape, inputs.sharding, inputs.gemm_eff, inputs.cast_bytes, inputs.operand_bytes,
                       inputs.attn_fp8, inputs.attn_rate, tuple(sorted(inputs.high_precision))))


def memoized_layer_costs(job: Job, hw: Hardware, k: EngineConstants, inputs: PhaseInputs, slowdown: float,
                         comm: CommFn, memo, terms: HashedOnce | None = None) -> LayerCosts:
    """The same layer costs for every plan of a search that shares the sharding, micro-batch and
    pace (most differ only in PP, VP, DP or the overlaps of the gradients): kept with the
    collectives they asked for, and reused when every answer is the same again. `terms`: the
    job's cost_terms, when the caller has them."""
    if memo is None:
        return layer_costs(job, hw, k, inputs, slowdown, comm)
    key = HashedOnce((slowdown, terms or cost_terms(job, inputs)))
    hit = memo.get(key)
    if hit is not None and _same_answers(comm, hit[1]):
        for dim, primitive, nbytes, _ in hit[1]:  # ask again: the ledger records them as costing would
            comm(dim, primitive, nbytes)
        return hit[0]
    recording = RecordingComm(comm)
    costs = layer_costs(job, hw, k, inputs, slowdown, recording)
    memo.put(key, (costs, recording.calls))
    return costs


def chunk_phase(job: Job, hw: Hardware, inputs: PhaseInputs, costs: LayerCosts, kinds, n_layers: int,
                first: bool, last: bool) -> tuple[Phase, Phase]:
    """One chunk's (forward, backward): its layers by (MoE, kept in BF16), with the embedding on the
    first chunk, the output on the last, the offload stalls and the launch gaps."""
    m, plan, ac, sharding = job.shape, job.plan, hw.ac, inputs.sharding
    fwd, bwd = Phase(), Phase()
    for kind_moe in (False, True):
        for kept16 in (False, True):
            n = kinds.get((kind_moe, kept16), 0)
            if not n:
                continue
            cost = ((costs.moe16 if kind_moe else costs.dense16) if kept16
                    else (costs.moe if kind_moe else costs.dense))
            fwd.add(cost.fwd, n)
            bwd.add(cost.bwd, n)
    if first:
        fwd.add(costs.embedding.fwd)
        bwd.add(costs.embedding.bwd)
    if last:
        fwd.add(costs.output.fwd)
        bwd.add(costs.output.bwd)
    offloaded = min(inputs.offload or 0, max(0, n_layers - 1))
    if offloaded:
        # each offloaded layer's activations go to host memory during the next layer's
        # forward and come back during the previous layer's backward: only what that
        # layer's compute cannot cover stalls it
        xfer = activation_bytes_per_layer(m, plan.tp, plan.cp, sharding.sequence_parallel,
                                          sharding.recompute, m.micro_batch, sharding.flash_attention)
        xfer_s = xfer / (ac.host_link_gbps * 1e9 / 8)
        fwd.busy["compute"] += offloaded * max(0.0, xfer_s - costs.dense.fwd.total_s)
        bwd.busy["compute"] += offloaded * max(0.0, xfer_s - costs.dense.bwd.total_s)
    for ph in (fwd, bwd):
        ph.busy["compute"] *= inputs.gap
        ph.busy["recompute"] *= inputs.gap
    return fwd, bwd


def pattern_chunks(job: Job, hw: Hardware, inputs: PhaseInputs, layout: Layout, pattern,
                   costs_at, cache_chunk: dict) -> list[list[tuple[Phase, Phase]]]:
    """One straggler pattern's [stage][chunk] -> (forward, backward). Chunks of equal slowdown and
    layers cost the same: one pair each in `cache_chunk` (the later stages only read them), not one
    per chunk (96 per stage pattern at PP 8 x VP 12)."""
    m, plan, high_precision = job.shape, job.plan, inputs.high_precision
    per_stage = []
    for s, (f, stage) in enumerate(zip(pattern.tolist(), layout.stage_layers)):  # (a pattern holds floats)
        costs = costs_at(f)
        chunks = []
        for c, layers in enumerate(stage):
            first, last = s == 0 and c == 0, s == plan.pp - 1 and c == plan.vp - 1
            if m.experts or high_precision:  # the chunk's layers by (MoE, kept in BF16), counted once
                kinds = Counter(((bool(m.experts) and i >= m.dense_layers), i in high_precision) for i in layers)
                key = (f, tuple(sorted(kinds.items())), first, last)
            else:  # all dense, none kept in BF16: the layer count says it all
                kinds = None
                key = (f, len(layers), first, last)
            pair = cache_chunk.get(key)
            if pair is None:
                if kinds is None:
                    kinds = {(False, False): len(layers)}
                pair = cache_chunk[key] = chunk_phase(job, hw, inputs, costs, kinds, len(layers), first, last)
            chunks.append(pair)
        per_stage.append(chunks)
    return per_stage


def layer_phases(job: Job, hw: Hardware, k: EngineConstants, layout: Layout, comm: CommFn,
                 memo=None) -> LayerPhases:
    """`memo`: the layer costs of earlier plans on the same hardware `hw` with the same constants `k`
    (a BoundedMemo of engine/cache.py, one per such pair): (pace, shape, sharding, precision terms)
    -> ((dense, moe, embedding, output, dense16, moe16), the collectives they asked for with the
    answers); and the whole answer of a plan, by everything the phases read."""
    plan = job.plan
    inputs = phase_inputs(job, hw, k, comm)

    # The whole answer for a plan of a search that differs from an earlier one only in what the
    # phases do not read (DP, ZeRO-1 or not, the gradient overlaps, the rank order): reused when
    # the groups answer every collective it asked for as before, and those asked again
    whole_key = terms = None
    if memo is not None:
        terms = cost_terms(job, inputs)
        whole_key = HashedOnce(("phases", terms, inputs.peak, inputs.peak16, inputs.gap, inputs.offload, plan.pp,
                                plan.vp, plan.tp, plan.cp, layout.layers_key, layout.patterns.shape,
                                layout.patterns.tobytes()))
        hit = memo.get(whole_key)
        if hit is not None and _same_answers(comm, hit[1]):
            for dim, primitive, nbytes, _ in hit[1]:
                comm(dim, primitive, nbytes)
            return hit[0]
        comm = whole_recording = RecordingComm(comm)

    costs_by_slowdown: dict[float, LayerCosts] = {}  # stages of equal slowdown cost the same

    def costs_at(slowdown: float) -> LayerCosts:
        if slowdown not in costs_by_slowdown:
            costs_by_slowdown[slowdown] = memoized_layer_costs(job, hw, k, inputs, slowdown, comm, memo, terms)
        return costs_by_slowdown[slowdown]

    cache_chunk: dict[tuple, tuple[Phase, Phase]] = {}
    chunk_phases = [pattern_chunks(job, hw, inputs, layout, pat, costs_at, cache_chunk) for pat in layout.patterns]
    phases = LayerPhases(inputs.sharding, inputs.peak, chunk_phases)
    if whole_key is not None:
        memo.put(whole_key, (phases, whole_recording.calls))
    return phases
