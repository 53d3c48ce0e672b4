"""Memory per GPU: model states, activations of the micro-batches in flight, temporaries.

Model states (Megatron theoretical_memory_usage.py): bf16 parameters (2 B), fp32 main
gradients (4 B; 2 B in BF16 with --grad-reduce-in-bf16), fp32 master weights + Adam moments (12 B); the distributed optimizer
shards the 12 B over DP (ZeRO-1), ZeRO-2 also the gradients, ZeRO-3 / FSDP everything.
Activations per layer per micro-batch (Korthikanti et al. 2022, Table 2, with flash
attention, so no s^2 term): s*b*h*(10 + (8 + 4f/h)/t) bytes without sequence parallelism,
s*b*h*(18 + 4f/h)/t with it; full recompute keeps only the layer input (2*s*b*h, /t with SP).
Unfused attention (no flash kernel) also keeps the softmax input, output and dropout mask,
5*a*s^2*b/t bytes (the 5as/h term of Table 2), unless selective recompute drops them, which
is what selective recompute was designed for.
CP divides s. In flight on pipeline rank r (Megatron-LM schedules.py, the warm-up forwards a rank
runs before its first backward, plus the one in steady state): GPipe m micro-batches, 1F1B and
ZB-H1 min(m, p - r), interleaved min(m*v, 2(p - r - 1) + (v - 1)p + 1) model chunks of 1/v of the
stage's layers each (all m*v when m == p: Megatron then runs every forward first), DualPipe p + 1
(and two model copies). Rank 0 holds the most; a later rank can still be the worst when it holds
more layers (uneven splits put one layer less on the first and last stages).
"""
from __future__ import annotations

from ..units import GIB
from .flops import ModelShape


BF16_GRAD_BYTES = 2


def grad_bytes_per_param(grad_reduce_in_bf16: bool | None, fp32_bytes: float = 4) -> float:
    """Bytes per parameter of Megatron's gradient buffer, which the DP reduction sends and the step
    zeroes: fp32 main grads by default (`fp32_bytes`), the parameters' BF16 with --grad-reduce-in-bf16
    (Megatron-LM arguments.py: accumulate_allreduce_grads_in_fp32 off; the buffer takes the
    parameters' dtype, param_and_grad_buffer.py)."""
    return BF16_GRAD_BYTES if grad_reduce_in_bf16 else fp32_bytes


class MemoryEstimate:
    """Bytes per GPU of the most loaded pipeline stage: parameters, gradients, optimizer, activations."""
    params: float
    grads: float
    optimizer: float
    activations: float
    temporaries: float
    stage: int  # the stage this is for (the most loaded)

    __slots__ = ("params", "grads", "optimizer", "activations", "temporaries", "stage")

    def __init__(self, params: float, grads: float, optimizer: float, activations: float, temporaries: float,
                 stage: int) -> None:
        self.params = params
        self.grads = grads
        self.optimizer = optimizer
        self.activations = activations
        self.temporaries = temporaries
        self.stage = stage

    @property
    def total(self) -> float:
        return self.params + self.grads + self.optimizer + self.activations + self.temporaries

    def gib(self) -> dict[str, float]:
        return {"params": self.params / GIB, "grads": self.grads / GIB, "optimizer": self.optimizer / GIB,
                "activations": self.activations / GIB, "temporaries": self.temporaries / GIB,
                "total": self.total / GIB}


def layer_parameters(m: ModelShape, tp: int, ep: int, etp: int) -> tuple[float, float, float, float]:
    """One GPU's parameters of one layer: (attention and norms, dense MLP, shared experts' MLP, its
    local experts), the same for every stage of a plan."""
    attn = sum(n * k / (tp if shard != "rep" else 1) for n, k, shard in m.attn_weights) + 2 * m.h
    dense_mlp = m.h * m.f * m.phi / tp
    shared = m.h * m.f_shared * m.phi / tp
    experts_local = max(1, m.experts // ep) if m.experts else 0
    return attn, dense_mlp, shared, experts_local * m.h * m.f_expert * m.phi / etp


def stage_parameters(m: ModelShape, tp: int, ep: int, etp: int, pp: int, stage: int, layers,
                     per_layer: tuple[float, float, float, float] | None = None) -> tuple[float, float]:
    """(dense, expert) parameters held by one GPU of a stage, given the stage's layer indices.
    `per_layer`: layer_parameters(m, tp, ep, etp), when the caller asks for several stages.

    Worked out afresh each time: a few sums over the stage's layers cost less than hashing the
    ModelShape (34 fields) for a memo's key, a hit's cost (a plan asks ~30 times)."""
    attn, dense_mlp, shared, expert = per_layer or layer_parameters(m, tp, ep, etp)
    dense = expert_params = 0.0
    for i in layers:
        dense += attn
        if m.experts and i >= m.dense_layers:
            dense += shared + m.h * m.experts
            expert_params += expert
        else:
            dense += dense_mlp
    if stage == 0:
        dense += m.vocab * m.h / tp
    if stage == pp - 1 and (m.untied or pp > 1):
        dense += m.vocab * m.h / tp  # the output layer (a tied copy lives on the last stage too)
    if stage == pp - 1 and m.mtp_layers:  # MTP modules sit after the last decoder layer
        mlp = (shared + m.h * m.experts) if m.moe_layers else dense_mlp
        dense += m.mtp_layers * (attn + mlp + 2 * m.h * m.h / tp)
        if m.moe_layers:
            expert_params += m.mtp_layers * expert
    return dense, expert_params


def activation_bytes_per_layer(m: ModelShape, tp: int, cp: int, sp: bool, recompute: str, micro_batch: int,
                               flash: bool = True, modules: tuple = ()) -> float:
    s = m.s / cp
    sbh = s * micro_batch * m.h
    if recompute == "full":
        return 2 * sbh / (tp if sp else 1)
    ffn = m.f if not m.experts else max(m.f_expert * m.topk, m.f_shared)
    scores = 0.0 if flash or recompute == "selective" else 5 * m.heads * s * m.s * micro_batch / tp
    # FP8 training keeps the inputs of the four linear layers (QKV, projection, FC1, FC2) for the
    # weight gradient in FP8: 1 byte instead of 2 (Transformer Engine saves the quantized copy)
    # (FP4: half a byte plus scales, 1.5 of every 2 bytes saved)
    saved = {"fp8": 0.5, "fp4": 0.7}.get(m.precision, 0.0)  # share of the 2 BF16 bytes saved
    # Selective recompute of named modules (Megatron --recompute-modules) drops what they would keep:
    # the activation function's output (mlp / moe_act: 2 bytes x ffn, FC2's input) and the two norms'
    # outputs (layernorm: 2 x 2 bytes x h); core_attn is the scores term above
    selective = set(modules) if recompute == "selective" else set()
    act_out = 2 * ffn / m.h * (1 - saved) if {"mlp", "moe_act", "moe"} & selective else 0.0  # TP-split
    norms = 4.0 if "layernorm" in selective else 0.0  # TP-split only with SP
    if sp:
        return sbh * (18 + 4 * ffn / m.h - saved * (6 + 2 * ffn / m.h) - act_out - norms) / tp + scores
    return sbh * (10 - norms + (8 + 4 * ffn / m.h - act_out) / tp - saved * (4 + (2 + 2 * ffn / m.h) / tp)) + scores


def in_flight(schedule: str, m_micro: int, p: int, v: int, rank: int = 0) -> float:
    """Micro-batches whose activations pipeline rank `rank` holds at its peak (in whole-stage units)."""
    if p == 1:
        return 1.0
    if schedule == "gpipe":
        return float(m_micro)
    if schedule == "interleaved":
        if m_micro == p:  # Megatron's all-warm-up case: every chunk's forward before the first backward
            return float(m_micro)
        return min(m_micro * v, 2 * (p - rank - 1) + (v - 1) * p + 1) / v
    if schedule == "dualpipe":
        return float(min(m_micro, p + 1))
    return float(min(m_micro, p - rank))


class AlikeStageParameters:
    """stage_parameters of one plan's stages (or their chunks), each kind summed once: they follow from
    whether the stage is the first or the last and from which of its layers are expert layers, in
    order (a dense model: their count)."""

    def __init__(self, m: ModelShape, plan) -> None:
        self.m, self.plan = m, plan
        self._per_layer = layer_parameters(m, plan.tp, plan.ep, plan.etp)
        self._known: dict[tuple, tuple[float, float]] = {}

    def __call__(self, stage: int, layers) -> tuple[float, float]:
        m, plan = self.m, self.plan
        key = (stage == 0, stage == plan.pp - 1,
               tuple([i >= m.dense_layers for i in layers]) if m.experts else len(layers))
        known = self._known.get(key)
        if known is None:
            known = self._known[key] = stage_parameters(m, plan.tp, plan.ep, plan.etp, plan.pp, stage, layers,
                                                        self._per_layer)
        return known


def estimate_memory(m: ModelShape, plan, par, stage_layers: list[list[int]], k,
                    stages: list[int] | None = None, flash: bool = True) -> MemoryEstimate:
    """The most loaded GPU's memory (over stages, or over `stages` when given: a plan search
    only needs the first and the last, which hold the embedding and the logits)."""
    worst, worst_total = None, 0.0
    temporaries = k.memory_temporaries_gib * GIB
    dp_shard = plan.dp * plan.cp
    edp = max(1, plan.num_gpus // (plan.etp * plan.ep * plan.pp))
    copies = 2 if par.pipeline_schedule == "dualpipe" else 1
    zero = par.zero_stage or (1 if par.use_distributed_optimizer else 0)
    # the same for every stage: worked out once (a plan search calls this ~40,000 times)
    per_layer_act = activation_bytes_per_layer(m, plan.tp, plan.cp, par.sequence_parallel,
                                               par.recompute_granularity, m.micro_batch, flash,
                                               tuple(par.recompute_modules or ()))
    # FP8 primary weights (--fp8-param-gather with FP8 training: Transformer Engine keeps the model's
    # parameters as FP8 tensors, 1 byte; the fp32 master copy is in the optimizer state)
    param_bytes = 1 if (par.fp8_param_gather and m.precision == "fp8") else 2
    grad_bytes = grad_bytes_per_param(par.grad_reduce_in_bf16)
    full_recompute_act = (activation_bytes_per_layer(m, plan.tp, plan.cp, par.sequence_parallel, "none",
                                                     m.micro_batch, flash)
                          if par.recompute_granularity == "full" else 0.0)
    parameters_of = AlikeStageParameters(m, plan)
    for stage in (range(len(stage_layers)) if stages is None else stages):
        layers = stage_layers[stage]
        dense, expert = parameters_of(stage, layers)
        shard_dense, shard_expert = (dp_shard, edp)
        opt = 12 * (dense / (shard_dense if zero >= 1 else 1) + expert / (shard_expert if zero >= 1 else 1)) * copies
        grads = grad_bytes * (dense / (shard_dense if zero >= 2 else 1) + expert / (shard_expert if zero >= 2 else 1)) * copies
        params = param_bytes * (dense / (shard_dense if zero >= 3 else 1)
                                + expert / (shard_expert if zero >= 3 else 1)) * copies
        if zero >= 3:  # the gathered current and prefetched layer
            per_layer = (dense + expert) / max(1, len(layers))
            params += 2 * param_bytes * per_layer
        # Megatron --cpu-offloading-num-layers: those layers' activations wait in host memory
        offloaded = min(par.cpu_offloading_num_layers or 0, max(0, len(layers) - 1))
        flight = in_flight(par.pipeline_schedule, plan.num_microbatches, plan.pp, plan.vp, stage)
        acts = per_layer_act * (len(layers) - offloaded) * flight
        if par.recompute_granularity == "full":  # one layer's full activations while recomputing
            acts += full_recompute_act
        if stage == plan.pp - 1:
            acts += 4 * m.s / plan.cp * m.micro_batch * m.vocab / plan.tp  # fp32 logits for the loss
        acts *= 1 + k.memory_fragmentation
        # the stage's total as MemoryEstimate.total adds it up: an estimate made for the worst only
        total = params + grads + opt + acts + temporaries
        if worst is None or total > worst_total:
            worst, worst_total = MemoryEstimate(params, grads, opt, acts, temporaries, stage), total
    return worst
