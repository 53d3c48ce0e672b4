"""Stage 7: data parallelism and the optimizer. Each stage reduces its gradients (bucketed,
chunk by chunk as backward finishes when overlapped), then the optimizer steps on its shard
and, with a sharded optimizer, the parameters are gathered again."""
from __future__ import annotations

import math

from ..constants import EngineConstants
from ..flops import parameter_count
from ..memory import AlikeStageParameters, grad_bytes_per_param
from .comm import CommLedger
from .job import Hardware, Job
from .layout import Layout
from .phases import LayerPhases, fp8_costs
from .pipeline import PipelineRun


class StageDP:
    """One pipeline stage of one straggler pattern."""

    last_compute: float  # when its last backward finished
    dp_end: float  # when its gradient reduction finished (never before last_compute)
    dp_busy: float  # seconds of gradient reduction, hidden or not

    __slots__ = ("last_compute", "dp_end", "dp_busy")

    def __init__(self, last_compute: float, dp_end: float, dp_busy: float) -> None:
        self.last_compute = last_compute
        self.dp_end = dp_end
        self.dp_busy = dp_busy


class DataParallel:
    """The gradient reduction, parameter all-gather and optimizer at the end of a step, and the step time."""
    per_pattern: list[list[StageDP]]  # [pattern][stage]
    step_end: float  # the last gradient reduction of any replica and stage
    ag_s: list[float]  # per stage: the parameter all-gather
    optimizer_s: float  # the slowest stage's optimizer step, the gradient norm and the step overhead
    ag_exposed: float  # the part of the all-gather that follows the optimizer
    step_time: float
    tail_s: float  # the expected wait for the slowest rank (imbalance_wait in the breakdown)

    __slots__ = ("per_pattern", "step_end", "ag_s", "optimizer_s", "ag_exposed", "step_time", "tail_s")

    def __init__(self, per_pattern: list[list[StageDP]], step_end: float, ag_s: list[float], optimizer_s: float,
                 ag_exposed: float, step_time: float, tail_s: float = 0.0) -> None:
        self.per_pattern = per_pattern
        self.step_end = step_end
        self.ag_s = ag_s
        self.optimizer_s = optimizer_s
        self.ag_exposed = ag_exposed
        self.step_time = step_time
        self.tail_s = tail_s


def stage_params(job: Job, layout: Layout, memo=None) -> list[dict[str, list[float]]]:
    """Per stage: the dense and expert parameters of each chunk (embedding and output only in
    the first and last chunk, where they sit). Shared between plans of one shape and split:
    do not edit the lists. `memo` (EngineCache.stage_params): (stage layers, tp, ep, etp, pp, vp)
    -> (shape, answer), as a search's plans repeat a few hundred shapes."""
    m, plan = job.shape, job.plan
    if memo is None:
        return _stage_params(job, layout)
    key = (layout.layers_key, plan.tp, plan.ep, plan.etp, plan.pp, plan.vp)
    hit = memo.get(key)
    if hit is not None and (hit[0] is m or hit[0] == m):
        return hit[1]
    return memo.put(key, (m, _stage_params(job, layout)))[1]


def _stage_params(job: Job, layout: Layout) -> list[dict[str, list[float]]]:
    m, plan = job.shape, job.plan
    out: list[dict] = []
    parameters_of = AlikeStageParameters(m, plan)  # (chunks alike summed once)
    for s in range(plan.pp):
        # stage_parameters adds the embedding/output to every call of stage 0 / the last stage
        dense_chunks, expert_chunks = [], []
        for c, layers in enumerate(layout.stage_layers[s]):
            d, e = parameters_of(s, layers)
            if c > 0 and s == 0:
                d -= m.vocab * m.h / plan.tp
            if c < plan.vp - 1 and s == plan.pp - 1 and (m.untied or plan.pp > 1):
                d -= m.vocab * m.h / plan.tp
            dense_chunks.append(d)
            expert_chunks.append(e)
        out.append({"dense": dense_chunks, "expert": expert_chunks})
    return out


def param_gather_bytes(job: Job, k: EngineConstants) -> float:
    """Bytes per parameter of the distributed optimizer's all-gather: FP8 parameters
    (Megatron --fp8-param-gather, FP8 training only) are gathered in one byte, half of BF16."""
    if job.parallelism.fp8_param_gather and job.shape.precision == "fp8":
        return min(k.param_gather_bytes_per_param, FP8_BYTES)
    if job.parallelism.fp4_param_gather and job.shape.precision == "fp4":
        return min(k.param_gather_bytes_per_param, FP4_BYTES)
    return k.param_gather_bytes_per_param


FP8_BYTES = 1
FP4_BYTES = 0.5 + 1 / 16  # 4-bit values and one 8-bit scale per 16 (NVFP4)


def dp_bucket_params(job: Job, k: EngineConstants) -> float:
    """Parameters per gradient bucket: the plan's --ddp-bucket-size, else Megatron's default
    max(4e7, 1e6 x DP) (distributed_data_parallel.py: larger DP, larger buckets, so that the
    collectives stay bandwidth-bound)."""
    given = job.parallelism.ddp_bucket_size
    return given if given else max(k.dp_bucket_params, 1_000_000 * job.plan.dp)


def _buckets(dense_params: float, expert_params: float, bucket_params: float) -> int:
    dense = math.ceil(dense_params / bucket_params)
    expert = math.ceil(expert_params / bucket_params)
    return ((dense if dense > 0 else 0) + (expert if expert > 0 else 0)) or 1


def bucketed_reduction_end(backward_end: float, backward_s: float, reduce_s: float, buckets: int,
                           comm_free: float, rate_during_backward: float = 1.0,
                           last_bucket_s: float | None = None) -> float:
    """When a chunk's overlapped gradient reduction ends. Megatron's DDP launches a bucket's
    reduce-scatter as soon as the last micro-batch's backward has produced its gradients, so the
    buckets become ready evenly through that backward (the last one at its end) and run one after
    another on the communication stream: the reduction starts when the first bucket is ready and
    ends no earlier than the last bucket's own share after the backward. While the backward runs
    the reduction gets `rate_during_backward` of the links (the backward's own traffic takes the
    rest); after it, all of them. `last_bucket_s`: the reduction of the bucket the backward
    fills last, when it is not an average one (the first stage's embedding bucket)."""
    if reduce_s <= 0:
        return max(comm_free, 0.0)
    share = reduce_s / buckets if last_bucket_s is None else min(reduce_s, last_bucket_s)
    start = max(comm_free, backward_end - backward_s * (buckets - 1) / buckets)
    if start >= backward_end or rate_during_backward >= 1.0:
        end = start + reduce_s
    else:
        done = min(reduce_s, (backward_end - start) * rate_during_backward)
        end = start + done / rate_during_backward if done >= reduce_s else backward_end + (reduce_s - done)
    return max(end, backward_end + share)


# The most the other dimensions' traffic may take of a NIC the gradient reduction shares
MAX_NIC_SHARE = 0.9


def nic_crossing_dims(comm: CommLedger) -> set[str]:
    """Dimensions whose groups leave the NVLink domain (their traffic uses the NICs). Empty
    when the gradient reduction itself stays inside the domain: nothing to share."""
    def crosses(dim: str) -> bool:
        model = comm.dims.get(dim)
        return model is not None and model.shape.spans_servers
    if not (crosses("dp") or crosses("edp")):
        return set()
    return {dim for dim in ("ep", "cp", "pp", "tp") if crosses(dim)}


def nic_share_of_other_dims(backward, p2p_s: float, crossing: set[str]) -> float:
    """Share of the NICs' time that a chunk's backward spends on its own EP / CP / TP / PP
    traffic: while the gradient buckets drain under that backward they get only the rest
    (contention across dimensions, costed together rather than each dimension alone)."""
    if not crossing or backward.total_s <= 0:
        return 0.0
    busy = sum(backward.busy.get(f"{d}_comm", 0.0) + backward.hidden.get(f"{d}_comm", 0.0)
               for d in ("ep", "cp", "tp") if d in crossing)
    if "pp" in crossing:
        busy += p2p_s
    return min(MAX_NIC_SHARE, busy / backward.total_s)


class BucketedDP:
    """The seconds of one chunk's bucketed DP collective: ceil(params / bucket) collectives of one
    bucket each, over a dimension's groups (dp: the dense gradient group, edp: the expert one);
    each question answered once."""

    def __init__(self, comm: CommLedger, bucket_params: float):
        self._comm = comm
        self._bucket_params = bucket_params
        self._known: dict[tuple, float] = {}

    def __call__(self, params: float, dim: str, primitive: str, nbytes_per_param: float) -> float:
        key = (params, dim, primitive, nbytes_per_param)
        hit = self._known.get(key)
        if hit is not None:
            return hit
        if params <= 0 or self._comm.dims[dim].shape.members.shape[1] <= 1:
            value = 0.0
        else:
            buckets = max(1, math.ceil(params / self._bucket_params))
            size = params / buckets * nbytes_per_param
            value = buckets * self._comm(dim, primitive, size)
        self._known[key] = value
        return value


def chunk_reductions(stage_dp: list[dict[str, list[float]]], dp_time: BucketedDP, experts: bool, zero3: bool,
                     grad_prim: str, gb: float, bucket_params: float | None) -> list[list[tuple[float, int]]]:
    """Per stage and chunk: (seconds of its gradient reduction, its buckets; 0 without `bucket_params`,
    when the reduction is not overlapped), the same for every straggler pattern (`dp_time` answers a
    chunk of the same parameter counts as an earlier one from what it knows)."""
    out = []
    for params in stage_dp:
        dense_chunks, expert_chunks = params["dense"], params["expert"]
        row: list = [None] * len(dense_chunks)
        for c in range(len(dense_chunks) - 1, -1, -1):  # as the backward finishes them: the ledger keeps the first of equal costs
            dense, expert = dense_chunks[c], expert_chunks[c]
            dur = 0.0 if zero3 else dp_time(dense, "dp", grad_prim, gb)
            if experts and not zero3:
                dur += dp_time(expert, "edp", grad_prim, gb)
            row[c] = (dur, 0 if bucket_params is None else _buckets(dense, expert, bucket_params))
        out.append(row)
    return out


class GradientReduction:
    """When each stage of each straggler pattern finished reducing its gradients."""
    per_pattern: list[list[StageDP]]  # [pattern][stage]
    step_end: float  # the last gradient reduction of any replica and stage

    __slots__ = ("per_pattern", "step_end")

    def __init__(self, per_pattern: list[list[StageDP]], step_end: float) -> None:
        self.per_pattern = per_pattern
        self.step_end = step_end


def gradient_reduction(job: Job, hw: Hardware, phases: LayerPhases, pipe: PipelineRun, comm: CommLedger,
                       stage_dp: list[dict[str, list[float]]], dp_time: BucketedDP, bucket_params: float,
                       grad_prim: str, gb: float) -> GradientReduction:
    m, plan, par, ac = job.shape, job.plan, job.parallelism, hw.ac
    zero3 = phases.sharding.zero3
    crossing = nic_crossing_dims(comm)
    # chunks of equal slowdown and layers share one backward Phase (stages/phases.py): its NIC
    # share worked out once per object (they live as long as `phases`, so their ids stay theirs)
    share_of: dict[int, float] = {}

    # the input embedding's gradient comes last in the backward and fills the last bucket, its own
    # when it is larger than a bucket (first_bucket_gather_bytes): its reduction follows the backward
    embedding_bucket_s = None
    if not zero3 and comm.dims["dp"].shape.members.shape[1] > 1:
        embedding_bucket_s = comm("dp", grad_prim, embedding_bucket_params(job, bucket_params, stage_dp) * gb)

    overlap, slowdown, vp = par.overlap_grad_reduce, ac.comm_compute_slowdown, plan.vp
    reductions = chunk_reductions(stage_dp, dp_time, bool(m.experts), zero3, grad_prim, gb,
                                  bucket_params if overlap else None) if pipe.schedules else []
    step_end = 0.0
    per_pattern: list[list[StageDP]] = []
    for pattern, sched in enumerate(pipe.schedules):
        stage_info = []
        chunks, stage_times = phases.chunks[pattern], pipe.stage_times[pattern]
        for s in range(plan.pp):
            last_compute = sched.stage_end[s]
            t_free = 0.0
            dp_busy = 0.0
            stage_reductions, stage_chunks = reductions[s], chunks[s]
            backward_ends, backward_s = sched.last_backward_end[s], stage_times[s].bwd
            for c in range(vp - 1, -1, -1):  # chunks finish backward in reverse order
                dur, buckets = stage_reductions[c]
                if overlap:
                    # under the backward the NICs also carry that backward's own EP/CP/PP traffic
                    backward = stage_chunks[c][1]
                    share = share_of.get(id(backward))
                    if share is None:
                        share = share_of[id(backward)] = nic_share_of_other_dims(backward, pipe.p2p_s, crossing)
                    # (rate during the backward, the embedding's last bucket: by position)
                    t_free = bucketed_reduction_end(backward_ends[c], backward_s[c], dur, buckets, t_free, 1.0 - share,
                                                    embedding_bucket_s if s == c == 0 else None)
                else:
                    t_free = max(last_compute, t_free) + dur
                dp_busy += dur
            # the part of the reduction hidden under backward still takes SMs and HBM from it
            hidden = max(0.0, dp_busy - max(0.0, t_free - last_compute))
            stage_info.append(StageDP(last_compute, max(t_free, last_compute) + slowdown * hidden, dp_busy))
        per_pattern.append(stage_info)
        step_end = max(step_end, max(si.dp_end for si in stage_info))
    return GradientReduction(per_pattern, step_end)


class OptimizerStep:
    """Per stage, the optimizer's pass over its (sharded) parameters and the parameter all-gather."""
    opt_s: list[float]
    ag_s: list[float]

    __slots__ = ("opt_s", "ag_s")

    def __init__(self, opt_s: list[float], ag_s: list[float]) -> None:
        self.opt_s = opt_s
        self.ag_s = ag_s


def optimizer_step(job: Job, hw: Hardware, k: EngineConstants, stage_dp: list[dict[str, list[float]]],
                   dp_time: BucketedDP, zero: int, zero3: bool, pb: float) -> OptimizerStep:
    plan, acc, ac = job.plan, hw.acc, hw.ac
    opt_s = []
    ag_s = []
    hbm_bytes_per_s = acc.hbm_tbps * 1e12 * ac.hbm_efficiency
    experts = job.shape.experts
    for s in range(plan.pp):
        dense, expert = stage_dp[s]["dense"], stage_dp[s]["expert"]
        dense_total = sum(dense)
        expert_total = sum(expert)
        shard = (dense_total / (plan.dp * plan.cp) + expert_total / max(1, plan.num_gpus // (plan.etp * plan.ep * plan.pp))) \
            if zero >= 1 else dense_total + expert_total
        opt_s.append((shard * k.optimizer_bytes_per_param
                       + per_step_pass_bytes(job, k, dense_total + expert_total, s, zero3)) / hbm_bytes_per_s)
        ag = 0.0
        if 1 <= zero < 3:  # the distributed optimizer gathers its dense and its expert shards
            for c in range(plan.vp):
                ag += dp_time(dense[c], "dp", "all_gather", pb)
                if experts:  # over the expert data-parallel group, as the gradients were reduced
                    ag += dp_time(expert[c], "edp", "all_gather", pb)
        ag_s.append(ag)
    return OptimizerStep(opt_s, ag_s)


def exposed_param_gather(job: Job, hw: Hardware, k: EngineConstants, comm: CommLedger, ag_s: list[float],
                         stage_dp: list[dict[str, list[float]]], zero: int, bucket_params: float, pb: float,
                         window_s: list[float] | None = None) -> float:
    """The seconds of the parameter all-gather the step waits for. overlap_param_gather gathers
    bucket after bucket under the next step's first forward (each forward pre-hook waits for its
    bucket and starts the next), so it hides all but the first chunk's first bucket, and no more
    than that forward lasts (`window_s`, per stage); without it the gather follows the optimizer."""
    plan = job.plan
    if not (zero >= 1 and job.parallelism.overlap_param_gather):
        return max(ag_s)
    first = [ag_s[s] / max(1, plan.vp) / max(1, math.ceil(sum(stage_dp[s]["dense"]) / plan.vp / bucket_params))
             for s in range(plan.pp)]
    if ag_s[0] > 0:  # the first stage's first bucket holds the input embedding
        first[0] = max(first[0], comm("dp", "all_gather",
                                      first_bucket_gather_bytes(job, k, bucket_params, pb, stage_dp)))
    if window_s is not None:  # a gather longer than the forward it runs under holds that forward
        first = [max(f, ag_s[s] - window_s[s]) for s, f in enumerate(first)]
    ag_exposed = max(first)
    # the hidden rest slows the forward it runs under, as hidden TP/EP traffic does
    ag_exposed += hw.ac.comm_compute_slowdown * max(a - first[s] for s, a in enumerate(ag_s))
    return ag_exposed


def first_forward_window_s(job: Job, pipe: PipelineRun) -> list[float] | None:
    """Per stage, the seconds from the step's start until its first micro-batch has gone forward
    through it: the earlier stages' forward of it, then its own (the fastest replica's, where a
    gather has the least to hide under). None with interleaving, where a later chunk's first forward
    waits for the warm-up's forwards of the earlier chunks and its gather has longer to run."""
    if job.plan.vp > 1:
        return None
    windows = []
    for times in pipe.stage_times:
        before, per_stage = 0.0, []
        for stage in times:
            per_stage.append(before + sum(stage.fwd))
            before += sum(stage.fwd)
        windows.append(per_stage)
    return [min(w[s] for w in windows) for s in range(len(windows[0]))] if windows else None


def reduce_and_step(job: Job, hw: Hardware, k: EngineConstants, layout: Layout, phases: LayerPhases,
                    pipe: PipelineRun, comm: CommLedger, stage_params_memo=None) -> DataParallel:
    """`stage_params_memo`: EngineCache.stage_params (see stage_params)."""
    plan, par = job.plan, job.parallelism
    zero3 = phases.sharding.zero3
    zero = par.zero_stage or (1 if par.use_distributed_optimizer else 0)
    stage_dp = stage_params(job, layout, stage_params_memo)
    grad_prim = "reduce_scatter" if zero >= 1 else "all_reduce"
    gb, pb = grad_bytes_per_param(par.grad_reduce_in_bf16, k.grad_reduce_bytes_per_param), param_gather_bytes(job, k)
    bucket_params = dp_bucket_params(job, k)
    dp_time = BucketedDP(comm, bucket_params)

    reduction = gradient_reduction(job, hw, phases, pipe, comm, stage_dp, dp_time, bucket_params, grad_prim, gb)
    opt = optimizer_step(job, hw, k, stage_dp, dp_time, zero, zero3, pb)
    grad_norm_s = comm("dp", "all_reduce", 8.0) + (comm("pp", pipe.p2p_primitive, 8.0) if plan.pp > 1 else 0.0)
    optimizer_s = max(opt.opt_s) + grad_norm_s + k.step_overhead_s + per_step_fixed_s(job, hw, k, comm, layout, zero)
    ag_exposed = exposed_param_gather(job, hw, k, comm, opt.ag_s, stage_dp, zero, bucket_params, pb,
                                      first_forward_window_s(job, pipe))
    last_compute = max(si.last_compute for info in reduction.per_pattern for si in info)
    tail_s = slowest_rank_tail_s(plan.num_gpus, last_compute, k)
    step_time = reduction.step_end + optimizer_s + ag_exposed + tail_s
    return DataParallel(reduction.per_pattern, reduction.step_end, opt.ag_s, optimizer_s, ag_exposed, step_time,
                        tail_s)


def per_step_fixed_s(job: Job, hw: Hardware, k: EngineConstants, comm: CommLedger, layout: Layout,
                     zero: int) -> float:
    """What a step costs whatever its size, beyond the optimizer's HBM traffic: the fused optimizer
    and gradient-norm kernels (one launch per multi_tensor_apply group of tensors), the GPU idle at
    each host synchronisation (the gradient norm and the logged loss), the norm's reduction over
    the tensor-parallel group and the logged loss's over the data-parallel one, and the batch
    broadcast to the TP group per micro-batch (Megatron's get_batch: tokens, labels and positions
    in one int64 tensor, the loss mask in a second). Small against a large step; several per cent
    of a step under 100 ms."""
    m, plan = job.shape, job.plan
    layers = max((sum(map(len, stage)) for stage in layout.stage_layers), default=m.layers)
    local_experts = max(1, m.experts // max(1, plan.ep)) if m.experts else 0
    tensors = layers * k.tensors_per_layer + (m.moe_layers / m.layers * layers * (2 * local_experts + 1)
                                              if m.experts and m.layers else 0.0) + 2  # embedding, output / norm
    elements = stage_parameters_floor(job)
    if zero >= 1:  # the distributed optimizer steps its shard: a 1/DP slice of the buffer
        tensors = tensors / max(1, plan.dp) + 1
        elements /= max(1, plan.dp)
    adam = max(math.ceil(tensors / k.multi_tensor_max_tensors_adam),
               math.ceil(elements / k.multi_tensor_launch_elements))
    norm = max(math.ceil(tensors / k.multi_tensor_max_tensors_norm),
               math.ceil(elements / k.multi_tensor_launch_elements))
    kernels_s = (adam + norm) * hw.ac.gemm_overhead_us * 1e-6
    syncs_s = k.step_host_syncs * k.host_sync_gap_us * 1e-6
    logged_loss_s = comm("dp", "all_reduce", 8.0) if comm.dims["dp"].shape.members.shape[1] > 1 else 0.0
    tp_s = 0.0
    if plan.tp > 1:
        tokens = m.micro_batch * m.s
        batch = comm("tp", "broadcast", tokens * 8 * 3) + comm("tp", "broadcast", tokens * 4)
        tp_s = comm("tp", "all_reduce", 8.0) + plan.num_microbatches * batch
    return kernels_s + syncs_s + logged_loss_s + tp_s


def stage_parameters_floor(job: Job) -> float:
    """Parameters of one pipeline stage's model-parallel shard (an even split: what the optimizer's
    launch count needs, not the stage's exact share)."""
    m, plan = job.shape, job.plan
    counts = parameter_count(m)
    total = counts["embedding"] + counts["output"] + counts["layers"]
    return total / (plan.tp * plan.pp * (plan.ep if m.experts else 1))


def embedding_bucket_params(job: Job, bucket_params: float, stage_dp: list[dict[str, list[float]]]) -> float:
    """Parameters of the first stage's bucket that holds the input embedding. Megatron fills its
    buckets in reverse model order (param_and_grad_buffer.py: params[::-1]) and gives a parameter
    larger than a bucket a bucket of its own, so the embedding sits in the last bucket: the first
    the forward needs and the last the backward fills. A bucket never holds more than the first
    chunk's parameters (at large DP, max(4e7, 1e6 x DP) parameters is more than a chunk has)."""
    embedding = job.shape.vocab * job.shape.h / job.plan.tp
    return min(max(bucket_params, embedding), stage_dp[0]["dense"][0])


def first_bucket_gather_bytes(job: Job, k: EngineConstants, bucket_params: float, pb: float,
                              stage_dp: list[dict[str, list[float]]]) -> float:
    """Bytes of the first parameter all-gather of a step, the embedding's bucket, which no compute
    can hide (embedding_bucket_params). The embedding is not a Transformer Engine layer: it is
    gathered in BF16 (param_gather_bytes_per_param) even with --fp8-param-gather. A Llama 3 table
    (128,256 x 4,096, 1 GB in BF16) is a bucket 13 times the 40M-parameter default."""
    params = embedding_bucket_params(job, bucket_params, stage_dp)
    embedding = min(params, job.shape.vocab * job.shape.h / job.plan.tp)
    return embedding * k.param_gather_bytes_per_param + (params - embedding) * pb


def per_step_pass_bytes(job: Job, k: EngineConstants, local_params: float, stage: int, zero3: bool) -> float:
    """HBM bytes of the once-per-step passes over ALL of a GPU's parameters, not its optimizer
    shard: Megatron zeroes the whole gradient buffer before each step (DistributedDataParallel
    .zero_grad_buffer: grad_data.zero_(), a write of every local gradient), and an FP8/FP4 run
    whose parameters are kept in BF16 has Transformer Engine quantize every weight once per step
    (on the first micro-batch, then cached): read the BF16 weight and write the low-precision
    copies, the recipe's cast traffic. With FP8 parameters (--fp8-param-gather) the weights
    arrive already quantized. These passes do not shrink with DP, so they matter most for small
    models with one or two micro-batches per step (the MLPerf Llama 3.1 8B runs)."""
    m, plan, par = job.shape, job.plan, job.parallelism
    local = local_params / (plan.dp * plan.cp) if zero3 else local_params  # ZeRO-3 keeps a shard only
    # the buffer is as wide as the reduction's gradients: half the fp32 bytes in BF16
    zero_grad = local * k.zero_grad_bytes_per_param * (
        grad_bytes_per_param(par.grad_reduce_in_bf16, k.grad_reduce_bytes_per_param) / k.grad_reduce_bytes_per_param)
    weights_low_precision = (par.fp8_param_gather and m.precision == "fp8") or (
        par.fp4_param_gather and m.precision == "fp4")
    if m.precision not in ("fp8", "fp4") or weights_low_precision:
        return zero_grad
    # the embedding and an output layer stay BF16 (not Transformer Engine layers)
    linear = local
    if stage == 0:
        linear -= m.vocab * m.h / plan.tp
    if stage == plan.pp - 1 and (m.untied or plan.pp > 1):
        linear -= m.vocab * m.h / plan.tp
    cast_bytes = fp8_costs(job, k)[0]
    return zero_grad + max(0.0, linear) * (k.fp8_weight_read_bytes + cast_bytes)


def slowest_rank_tail_s(num_gpus: int, compute_s: float, k: EngineConstants) -> float:
    """The expected wait for the slowest of N GPUs: every collective waits for its last rank,
    and identical GPUs run a little apart (clocks under power and thermal limits, memory
    refresh, host noise). With a spread of cv per GPU the slowest of N is about
    cv * sqrt(2 ln N) behind the mean (the maximum of N normal draws), so a synchronous step
    slows as the job grows: the cost of weak scaling the rest of the engine does not see.
    A burn-in screen that takes out the slowest share q of the GPUs cuts the spread's tail at
    its (1 - q) quantile: no GPU of the job is slower than that."""
    if num_gpus < 2 or k.rank_speed_cv <= 0:
        return 0.0
    return compute_s * k.rank_speed_cv * slowest_of(num_gpus, k.rank_speed_screened_share)


def slowest_of(num_gpus: int, screened_share: float = 0.0) -> float:
    """Standard deviations the slowest of N normal draws lies behind the mean, with the slowest
    `screened_share` of the population taken out beforehand."""
    z = math.sqrt(2.0 * math.log(num_gpus)) if num_gpus > 1 else 0.0
    if screened_share > 0:
        from statistics import NormalDist  # here: a screened job alone needs it (see moe._standard_normal)

        z = min(z, NormalDist().inv_cdf(1.0 - screened_share))
    return max(0.0, z)
