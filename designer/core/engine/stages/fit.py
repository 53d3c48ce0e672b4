"""Memory per GPU of the plan, and whether it fits the accelerator (with what to change if not)."""
from __future__ import annotations

import math
from itertools import chain

from ...model.job import Parallelism
from ...model.plan import ResolvedPlan
from ...problems import DesignerError, Problem
from ...units import GIB
from .. import flops as F
from ..constants import EngineConstants
from ..memory import MemoryEstimate, estimate_memory
from .job import Hardware, Job
from .layout import Layout


class MemoryFit:
    """Whether a plan's memory fits the GPU's HBM (with and without headroom), and why not."""
    estimate: MemoryEstimate
    fits: bool  # within the GPU's HBM
    reason: str  # why it does not fit (or fits only without the headroom), with advice ("" when it fits)
    fits_with_headroom: bool  # within (1 - memory_headroom) x HBM: a plan one would run
    limit_gib: float  # (1 - memory_headroom) x HBM

    __slots__ = ("estimate", "fits", "reason", "fits_with_headroom", "limit_gib")

    def __init__(self, estimate: MemoryEstimate, fits: bool, reason: str, fits_with_headroom: bool = True,
                 limit_gib: float = 0.0) -> None:
        self.estimate = estimate
        self.fits = fits
        self.reason = reason
        self.fits_with_headroom = fits_with_headroom
        self.limit_gib = limit_gib

    @property
    def verdict(self) -> str:
        """'fits', 'fits only without headroom' or 'does not fit'."""
        if self.fits_with_headroom:
            return "fits"
        return "fits only without headroom" if self.fits else "does not fit"


def fit_memory(job: Job, hw: Hardware, k: EngineConstants, layout: Layout, flash: bool) -> MemoryFit:
    m, plan, par, acc = job.shape, job.plan, job.parallelism, hw.acc
    mem = estimate_memory(m, plan, par, [list(chain.from_iterable(st)) for st in layout.stage_layers], k, flash=flash)
    hbm = acc.hbm_gib * GIB
    limit = hbm * (1 - k.memory_headroom)
    fits = mem.total <= hbm
    with_headroom = mem.total <= limit
    reason = ""
    if not with_headroom:
        parts = mem.gib()
        detail = (f"(params {parts['params']:.1f}, grads {parts['grads']:.1f}, optimizer {parts['optimizer']:.1f}, "
                  f"activations {parts['activations']:.1f}): " + _memory_advice(par, plan, mem))
        if not fits:
            _fits_somewhere(m, plan.num_gpus, acc, k)
            reason = (f"stage {mem.stage} needs {parts['total']:.1f} GiB per GPU, {acc.name} has "
                      f"{acc.hbm_gib:g} GiB " + detail)
        else:
            reason = (f"fits only without headroom: stage {mem.stage} needs {parts['total']:.1f} GiB per GPU, over "
                      f"the {limit / GIB:.1f} GiB a plan may use on {acc.name} ({acc.hbm_gib:g} GiB less the "
                      f"{k.memory_headroom:.0%} memory_headroom kept for fragmentation and spikes) " + detail)
    return MemoryFit(mem, fits, reason, with_headroom, limit / GIB)


def _fits_somewhere(m: F.ModelShape, n: int, acc, k: EngineConstants) -> None:
    """Exit 65 when no plan on these GPUs can hold the model: even with every state sharded
    over all of them (ZeRO-3: 2 + 4 + 12 bytes per parameter) the weights do not fit."""
    counts = F.parameter_count(m)
    params = counts["embedding"] + counts["output"] + counts["layers"]
    per_gpu = 18 * params / n + k.memory_temporaries_gib * GIB
    hbm = acc.hbm_gib * GIB
    if per_gpu > hbm:
        needed = math.ceil(18 * params / (hbm - k.memory_temporaries_gib * GIB))
        raise DesignerError([Problem(
            f"the model fits nowhere on {n} x {acc.name}: its {params / 1e9:.0f}B parameters need "
            f"{18 * params / n / GIB:.0f} GiB per GPU for weights, gradients and Adam states even sharded "
            f"over all {n} GPUs ({acc.hbm_gib:g} GiB each)", "spec.workload",
            fix=f"use at least {needed} GPUs of this kind (parallelism.num_gpus), or a smaller model")])


def _memory_advice(par: Parallelism, plan: ResolvedPlan, mem: MemoryEstimate) -> str:
    tips = []
    if mem.optimizer > mem.activations and not par.use_distributed_optimizer and not par.zero_stage:
        tips.append("set use_distributed_optimizer: true")
    if mem.activations > mem.params and par.recompute_granularity != "full":
        tips.append("recompute_granularity: " + ("selective" if par.recompute_granularity == "none" else "full"))
    if plan.tp > 1 and not par.sequence_parallel:
        tips.append("sequence_parallel: true")
    tips.append(f"or raise pipeline_model_parallel_size above {plan.pp}")
    return "try " + ", ".join(tips)
