"""The space of training plans for one cluster and one model, enumerated with pruning.

A plan is every knob of `parallelism` plus the micro-batch size. The space is the product of
the choices below; it is walked level by level so that a whole subtree is counted, not
visited, when its head is already impossible:

  1. layout: TP, PP, CP, EP, expert-TP (DP is what is left of the GPUs) -> divisibility;
  2. schedule with its virtual stages and the pipeline split (splits.py: Megatron's even split,
     or where PP x VP does not divide the layers, or the loss stage is the bottleneck, a few
     uneven splits Megatron accepts), micro-batch size -> batch divisibility;
  3. recompute, sequence parallelism, optimizer sharding -> memory per GPU (cheap: the first
     and the last stage only, which hold the embedding and the logits);
  4. the three overlap switches and the rank order.

Two rules of dominance, both true of the engine by construction (tests check them on
samples), keep level 4 small: with everything else equal, turning an overlap on never makes
the step slower nor uses more memory, so only the all-on variant is costed; and DualPipe is
costed with the ZB-H1 timeline and more memory, so ZB-H1 stands for it. Rank orders that
only differ in the position of size-1 dimensions are the same placement.
"""
from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field

from ..engine import flops as F
from ..engine.constants import engine_constants
from ..engine.memory import estimate_memory
from ..engine.stages.layout import stage_layers as layout_stage_layers
from ..model.job import Parallelism, Workload, parse_rank_order
from ..model.plan import ResolvedPlan, divisors
from ..units import GIB
from .splits import EVEN, Split, loss_stage_extra_chunks, splits_for, stage_layer_counts

RECOMPUTES = ("none", "selective", "full")
ZERO_CHOICES = (0, 1, 3)  # none, the distributed optimizer (ZeRO-1), FSDP (ZeRO-3)
RANK_ORDERS = ("tp-cp-ep-dp-pp", "tp-cp-ep-pp-dp")
OVERLAP_VARIANTS = 8  # overlap_grad_reduce x overlap_param_gather x tp_comm_overlap
SPLIT_KEYS = frozenset(EVEN.parallelism_keys())


@dataclass(frozen=True)
class Point:
    """One candidate plan."""

    tp: int
    pp: int
    cp: int
    ep: int
    etp: int
    dp: int
    schedule: str
    vp: int
    micro_batch: int
    recompute: str
    sequence_parallel: bool
    zero: int  # 0, 1 (distributed optimizer) or 3
    overlap_grad_reduce: bool
    overlap_param_gather: bool
    tp_comm_overlap: bool
    rank_order: str
    num_microbatches: int = 0
    split: Split = EVEN  # how the layers are spread over the stages (Megatron's keys)

    def parallelism(self, base: Parallelism | None = None) -> Parallelism:
        base = base or Parallelism()
        return dataclasses.replace(
            base, tensor_model_parallel_size=self.tp, pipeline_model_parallel_size=self.pp,
            context_parallel_size=self.cp, expert_model_parallel_size=self.ep,
            expert_tensor_parallel_size=self.etp if self.etp != self.tp else None, data_parallel_size=None,
            virtual_pipeline_model_parallel_size=self.vp if self.schedule == "interleaved" else None,
            pipeline_schedule=self.schedule, sequence_parallel=self.sequence_parallel,
            recompute_granularity=self.recompute, use_distributed_optimizer=self.zero == 1,
            zero_stage=3 if self.zero == 3 else 0, overlap_grad_reduce=self.overlap_grad_reduce,
            overlap_param_gather=self.overlap_param_gather, tp_comm_overlap=self.tp_comm_overlap,
            rank_order=self.rank_order, **self.split.parallelism_keys())

    def workload(self, base: Workload) -> Workload:
        return dataclasses.replace(base, micro_batch_size=self.micro_batch)

    def settings(self) -> list[str]:
        """The `--set` arguments that turn a file's job into this plan."""
        par = self.parallelism()
        out = [f"workload.micro_batch_size={self.micro_batch}"]
        for f in dataclasses.fields(Parallelism):
            if f.name in ("data_parallel_size", "num_gpus", "attention_backend", "attention_kernels"):
                continue
            value = getattr(par, f.name)
            if f.name in SPLIT_KEYS and self.pp > 1:
                # with PP > 1 the split is always given: applying a plan replaces the file's own split
                value = "null" if value is None else value
            if value is None:
                continue
            out.append(f"parallelism.{f.name}={str(value).lower() if isinstance(value, bool) else value}")
        return out

    def label(self) -> str:
        text = f"TP{self.tp} PP{self.pp}"
        if self.cp > 1:
            text += f" CP{self.cp}"
        if self.ep > 1:
            text += f" EP{self.ep}" + (f" ETP{self.etp}" if self.etp != self.tp else "")
        text += f" DP{self.dp} mbs{self.micro_batch} {self.schedule}" + (f" v{self.vp}" if self.vp > 1 else "")
        text += f", recompute {self.recompute}"
        if self.sequence_parallel:
            text += ", SP"
        text += {0: "", 1: ", dist-opt", 3: ", FSDP"}[self.zero]
        if self.rank_order != RANK_ORDERS[0]:
            text += f", order {self.rank_order}"
        if not self.split.even:
            text += ", " + self.split.label()
        return text

    @classmethod
    def of(cls, workload: Workload, par: Parallelism, plan: ResolvedPlan) -> "Point":
        zero = 3 if par.zero_stage >= 3 else 1 if (par.zero_stage or par.use_distributed_optimizer) else 0
        return cls(plan.tp, plan.pp, plan.cp, plan.ep, plan.etp, plan.dp, par.pipeline_schedule, plan.vp,
                   workload.micro_batch_size, par.recompute_granularity, par.sequence_parallel, zero,
                   par.overlap_grad_reduce, par.overlap_param_gather, par.tp_comm_overlap, par.rank_order,
                   plan.num_microbatches, Split.of(par) if plan.pp > 1 else EVEN)


@dataclass
class SpaceCounts:
    """How the space was cut down: every plan of `total` is in exactly one other bucket."""

    total: int = 0
    invalid: int = 0  # does not divide (GPUs, heads, layers, batch, ...)
    no_memory: int = 0  # does not fit in the accelerator's memory
    dominated: int = 0  # an equal-or-better twin is costed instead (overlaps off, DualPipe, equivalent orders)
    candidates: int = 0  # left for the engine (some are then cut by the lower bound)

    def as_json(self) -> dict:
        return dataclasses.asdict(self)


@dataclass
class SpaceOptions:
    """The plan search's space: the TP, PP, CP, EP, micro-batch and schedule values it may try."""
    tp: list[int] | None = None
    pp: list[int] | None = None
    cp: list[int] | None = None
    ep: list[int] | None = None
    micro_batch: list[int] = field(default_factory=lambda: [1, 2, 4, 8])
    max_vp: int = 8
    schedules: tuple[str, ...] = ("1f1b", "interleaved", "zb-h1", "dualpipe", "gpipe")
    rank_orders: tuple[str, ...] = RANK_ORDERS
    memory_share: float = 1.0  # of the HBM left after the calibration's memory_headroom, the share a plan may use


def _schedule_choices(pp: int, layers: int, opts: SpaceOptions,
                      loss_layers: float = 0.0) -> list[tuple[str, int, Split | None]]:
    """(schedule, virtual stages, split) of one PP; split None: no split of the layers over PP
    that Megatron accepts (those plans are counted impossible)."""
    out: list[tuple[str, int, Split | None]] = []
    flat = splits_for(layers, pp, 1, loss_layers)
    for s in opts.schedules:
        if s == "interleaved":
            for v in range(2, opts.max_vp + 1):
                out += [(s, v, sp) for sp in splits_for(layers, pp, v, loss_layers)]
        else:
            out += [(s, 1, sp) for sp in flat] or [(s, 1, None)]
    return out


def _orders(tp: int, pp: int, cp: int, ep: int, dp: int, opts: SpaceOptions) -> tuple[list[str], int]:
    """Distinct placements among the rank orders, and how many orders were equivalent."""
    sizes = {"tp": tp, "pp": pp, "cp": cp, "ep": ep, "dp": dp}
    seen: dict[tuple, str] = {}
    for order in opts.rank_orders:
        dims = parse_rank_order(order) or []
        # EP lives inside DP for the dense layers: only the dimensions above 1 decide placement
        key = tuple(d for d in dims if sizes[d] > 1)
        seen.setdefault(key, order)
    return list(seen.values()), len(opts.rank_orders) - len(seen)


def _representative_stages(stage_layers: list[list[int]], dense_layers: int) -> list[int]:
    """The stages whose memory can differ: the first and last (embedding, logits) and one per
    mix of dense and MoE layers (the MoE layers are the last ones, as memory.py counts them)."""
    seen: dict[tuple[int, int], int] = {}
    for s, layers in enumerate(stage_layers):
        seen.setdefault((len(layers), sum(1 for i in layers if i >= dense_layers)), s)
    return sorted({0, len(stage_layers) - 1, *seen.values()})


def enumerate_space(workload: Workload, shape: F.ModelShape, num_gpus: int, gpus_per_node: int, hbm_gib: float,
                    calibration: dict | None = None, opts: SpaceOptions | None = None,
                    keep: list[Point] | None = None, flash: bool = True,
                    checkpoint=None) -> tuple[list[Point], SpaceCounts]:
    """Every plan of the space that is valid, fits and is not dominated, and the counts.

    `keep`: plans to include whatever the rules say (the file's own plan, so that a search
    can always answer "at least as fast as what you have"). `checkpoint()`, when given, is called
    before each layout (TP, PP, CP, EP) is enumerated; it may raise to stop (a search nobody waits for)."""
    opts = opts or SpaceOptions()
    k = engine_constants(calibration or {})
    hbm = hbm_gib * GIB * (1 - k.memory_headroom) * opts.memory_share
    walk = _SpaceWalk(workload, shape, num_gpus, hbm, k, opts, flash)
    out: list[Point] = []
    for tp, pp, cp, ep in itertools.product(*_layout_axes(workload, num_gpus, gpus_per_node, opts)):
        if checkpoint is not None:
            checkpoint()
        out += walk.layout(tp, pp, cp, ep)
    counts = walk.counts
    for point in keep or []:
        if point not in out:
            out.append(point)
            counts.candidates += 1
    return out, counts


def _layout_axes(w: Workload, num_gpus: int, gpus_per_node: int,
                 opts: SpaceOptions) -> tuple[list[int], list[int], list[int], list[int]]:
    """The TP, PP, CP and EP values tried (the options', else those that can divide)."""
    layers = w.num_layers
    experts = w.num_experts or 0
    tps = opts.tp or [t for t in divisors(gpus_per_node) if t <= gpus_per_node]
    # PP: the divisors of the layers (even splits) and the divisors of the GPU count that leave
    # two layers or more per stage (uneven splits, splits.py)
    pps = opts.pp or sorted({p for p in divisors(layers) if p <= min(layers, num_gpus)}
                            | {p for p in divisors(num_gpus) if p <= layers // 2})
    cps = opts.cp or [c for c in (1, 2, 4, 8) if c == 1 or w.seq_length % (2 * c) == 0]
    eps = opts.ep or ([e for e in divisors(experts) if e <= num_gpus] if experts else [1])
    return tps, pps, cps, eps


class _SpaceWalk:
    """One walk of the space, level by level (module docstring): the model, the cluster, the memory
    a plan may use, the counts so far and the memos the levels share."""

    def __init__(self, workload: Workload, shape: F.ModelShape, num_gpus: int, hbm: float, k, opts: SpaceOptions,
                 flash: bool):
        self.workload, self.shape, self.num_gpus, self.hbm, self.k, self.opts, self.flash = \
            workload, shape, num_gpus, hbm, k, opts, flash
        self.heads = workload.num_attention_heads
        self.groups = workload.num_query_groups or self.heads
        self.layers = workload.num_layers
        self.experts = workload.num_experts or 0
        self.loss_layers = loss_stage_extra_chunks(shape)
        self.counts = SpaceCounts()
        self.stage_cache: dict[tuple, list[list[int]]] = {}
        self.mshapes: dict[int, F.ModelShape] = {}

    def layout(self, tp: int, pp: int, cp: int, ep: int) -> list[Point]:
        """Level 1: the plans of one layout, for each expert-TP; an impossible one counted whole."""
        opts = self.opts
        etps = sorted({1, tp}) if self.experts else [tp]
        scheds = _schedule_choices(pp, self.layers, opts, self.loss_layers) if pp > 1 else [("1f1b", 1, EVEN)]
        n_sched = len(scheds) if pp > 1 else 1
        sps = [False, True] if tp > 1 else [False]
        per_mbs = len(RECOMPUTES) * len(sps) * len(ZERO_CHOICES) * OVERLAP_VARIANTS * len(opts.rank_orders)
        per_layout = n_sched * len(opts.micro_batch) * per_mbs
        out: list[Point] = []
        for etp in etps:
            self.counts.total += per_layout
            dp = self._data_parallel(tp, pp, cp, ep, etp)
            if dp is None:
                self.counts.invalid += per_layout
                continue
            orders, _ = _orders(tp, pp, cp, ep, dp, opts)
            for (schedule, vp, split), mbs in itertools.product(scheds, opts.micro_batch):
                n_micro = self._microbatches(schedule, split, mbs, pp, dp)
                if n_micro is None:
                    self.counts.invalid += per_mbs
                    continue
                plan = ResolvedPlan(self.num_gpus, tp, pp, cp, ep, etp, dp, vp, n_micro,
                                    tuple(RANK_ORDERS[0].split("-")))
                out += self.settings(plan, schedule, split, mbs, sps, orders)
        return out

    def _data_parallel(self, tp: int, pp: int, cp: int, ep: int, etp: int) -> int | None:
        """DP of the layout; None when it does not divide (GPUs, heads, KV groups, sequence, experts)."""
        mp = tp * pp * cp
        if (self.num_gpus % mp or self.heads % tp or (self.groups % tp and tp % self.groups)
                or (cp > 1 and self.workload.seq_length % (2 * cp))):
            return None
        dp = self.num_gpus // mp
        if self.experts:
            return None if self.experts % ep or (tp * cp * dp) % (ep * etp) else dp
        return None if ep != 1 else dp

    def _microbatches(self, schedule: str, split: Split | None, mbs: int, pp: int, dp: int) -> int | None:
        """Level 2: micro-batches per step of a schedule and micro-batch size; None when the layers
        have no split or the batch does not divide (by PP too when interleaved)."""
        gbs = self.workload.global_batch_size
        if split is None or gbs % (mbs * dp):
            return None
        n_micro = gbs // (mbs * dp)
        if schedule == "interleaved" and n_micro % pp:
            return None
        return n_micro

    def settings(self, plan: ResolvedPlan, schedule: str, split: Split, mbs: int, sps: list[bool],
                 orders: list[str]) -> list[Point]:
        """Levels 3 and 4: recompute, sequence parallelism and optimizer sharding that fit in memory,
        each with the overlaps that apply all on, once per distinct rank order."""
        counts = self.counts
        tp, pp, cp, ep, etp, dp, vp, n_micro = (plan.tp, plan.pp, plan.cp, plan.ep, plan.etp, plan.dp, plan.vp,
                                                plan.num_microbatches)
        stage_layers = self._stage_layers(pp, vp, split)
        stages = self._memory_stages(stage_layers, pp, vp, split)
        mshape = self._shape_for(mbs)
        per_mem = OVERLAP_VARIANTS * len(self.opts.rank_orders)
        out: list[Point] = []
        for recompute, sp, zero in itertools.product(RECOMPUTES, sps, ZERO_CHOICES):
            if sp and self.workload.seq_length % tp:
                counts.invalid += per_mem
                continue
            par = Parallelism(pipeline_schedule=schedule, sequence_parallel=sp,
                              recompute_granularity=recompute, use_distributed_optimizer=zero == 1,
                              zero_stage=3 if zero == 3 else 0)
            mem = estimate_memory(mshape, plan, par, stage_layers, self.k, stages, self.flash)
            if mem.total > self.hbm:
                counts.no_memory += per_mem
                continue
            if schedule == "dualpipe":  # zb-h1's time with more memory
                counts.dominated += per_mem
                continue
            # overlaps that apply: grad reduce with DP, param gather with the distributed
            # optimizer, TP overlap with TP > 1 and SP
            og = dp * cp > 1
            op = zero == 1 and dp * cp > 1
            ot = tp > 1 and sp
            for order in orders:
                out.append(Point(tp, pp, cp, ep, etp, dp, schedule, vp, mbs, recompute, sp, zero,
                                 og, op, ot, order, n_micro, split))
            counts.candidates += len(orders)
            counts.dominated += per_mem - len(orders)
        return out

    def _stage_layers(self, pp: int, vp: int, split: Split) -> list[list[int]]:
        """The layers each pipeline stage holds (its chunks flattened)."""
        key = (pp, vp, split)
        if key not in self.stage_cache:
            self.stage_cache[key] = [[i for chunk in st for i in chunk]
                                     for st in layout_stage_layers(self.shape, pp, vp, split.kwargs())]
        return self.stage_cache[key]

    def _memory_stages(self, stage_layers: list[list[int]], pp: int, vp: int, split: Split) -> list[int]:
        """The stages whose memory is estimated: those that may hold the most."""
        if self.experts:
            return _representative_stages(stage_layers, self.shape.dense_layers)
        if split.even:
            return sorted({0, pp - 1})
        # the ends are lighter: a middle stage may hold the most
        per_stage = stage_layer_counts(self.layers, pp, vp, split)
        return sorted({0, pp - 1, per_stage.index(max(per_stage))})

    def _shape_for(self, mbs: int) -> F.ModelShape:
        """The model's shape at this micro-batch size: one object per size, as the memory memos
        know it by identity."""
        if mbs not in self.mshapes:
            shape = self.shape
            self.mshapes[mbs] = dataclasses.replace(shape, micro_batch=mbs) if shape.micro_batch != mbs else shape
        return self.mshapes[mbs]
