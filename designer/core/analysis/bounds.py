"""A lower bound on a plan's step time that costs microseconds, for branch and bound.

The engine's step is at least the busiest stage's own work: its layers' compute and the
exposed TP, CP and EP communication inside them, for every micro-batch (p2p transfers,
stragglers, the DP reduction and the optimizer only add to it), plus, for GPipe, 1F1B and
interleaved, the schedule's warm-up and cool-down bubble computed from that work alone. The
layer costs are the engine's own (`layer_cost`), with the engine's collective models for TP,
CP and EP: with the rank orders searched (tp-cp-ep first) those groups are the same blocks
of consecutive ranks whatever PP and DP are, so one model per (TP, CP, EP, expert-TP) serves
every plan. DP traffic inside a layer (ZeRO-3 gathers) is priced at zero. ZB-H1 and
DualPipe get no bubble term (their W passes can fill it). The search checks the bound
against every plan it costs in full and reports any plan that beats it.
"""
from __future__ import annotations

from ..engine import flops as F
from ..engine.compute import OpCoster, Sharding, gemm_operand_bytes, layer_cost
from ..engine.constants import AcceleratorConstants, EngineConstants
from ..engine.schedule import ideal_bubble_s
from .space import Point
from .splits import stage_layer_counts


def _no_comm(dim: str, primitive: str, nbytes: float) -> float:
    return 0.0


def _exposed(phase) -> float:
    return phase.busy["tp_comm"] + phase.busy["cp_comm"] + phase.busy["ep_comm"]


class ComputeFloor:
    def __init__(self, shape: F.ModelShape, acc, ac: AcceleratorConstants, k: EngineConstants, flash: bool,
                 comm_for=None):
        """`comm_for(point)`: the engine's communication function for the point's TP/CP/EP
        groups (None: every collective is free, a looser bound)."""
        self.comm_for = comm_for
        self.shape = shape
        self.k = k
        self.flash = flash
        # the smallest operands the precision allows (no recipe's scales): a floor stays a floor
        self.ops = OpCoster(acc.peak_for(shape.precision), acc.peak_for("bf16"), acc.hbm_tbps, ac, 1.0,
                            operand_bytes=gemm_operand_bytes(shape.precision, "tensorwise" if shape.precision == "fp8"
                                                             else "mxfp4" if shape.precision == "fp4" else None))
        self.gap = 1.0 + ac.kernel_gap_fraction
        self._layer: dict[tuple, tuple[float, float]] = {}

    def _per_layer(self, p: Point) -> tuple[float, float]:
        """(forward, backward) seconds of compute and exposed TP/CP/EP communication of the cheapest layer kind for one micro-batch."""
        key = (p.tp, p.cp, p.ep, p.etp, p.sequence_parallel, p.recompute, p.micro_batch, p.tp_comm_overlap,
               p.zero >= 3)
        hit = self._layer.get(key)
        if hit is None:
            m = self.shape
            sh = Sharding(tp=p.tp, cp=p.cp, ep=p.ep, etp=p.etp, sequence_parallel=p.sequence_parallel,
                          recompute=p.recompute, tp_comm_overlap=p.tp_comm_overlap, flash_attention=self.flash,
                          zero3=p.zero >= 3)
            kinds = [False] + ([True] if m.experts else [])
            if m.experts and m.dense_layers == 0:
                kinds = [True]
            best = None
            comm = self.comm_for(p) if self.comm_for else _no_comm
            for moe in kinds:
                c = layer_cost(m, sh, p.micro_batch, moe, self.ops, comm, self.k)
                f = (c.fwd.busy["compute"] + c.fwd.busy["recompute"]) * self.gap + _exposed(c.fwd)
                b = (c.bwd.busy["compute"] + c.bwd.busy["recompute"]) * self.gap + _exposed(c.bwd)
                if best is None or f + b < best[0] + best[1]:
                    best = (f, b)
            hit = self._layer[key] = best
        return hit

    def step_floor_s(self, p: Point) -> float:
        f_layer, b_layer = self._per_layer(p)
        # The busiest stage works through every micro-batch; the others' share of one micro-batch
        # is the bubble (the closed form with identical stages of the average of the others:
        # with an even split, exactly the form of ideal_bubble_s).
        counts = stage_layer_counts(self.shape.layers, p.pp, p.vp, p.split) if not p.split.even else None
        busiest = max(counts) if counts else self.shape.layers / p.pp
        others = (sum(counts) - busiest) / (p.pp - 1) if counts and p.pp > 1 else busiest
        f, b = f_layer * busiest, b_layer * busiest
        m = p.num_microbatches
        work = m * (f + b) + self.k.microbatch_overhead_s * m * p.vp
        bubble = 0.0
        if p.schedule in ("1f1b", "gpipe", "interleaved"):
            bubble = ideal_bubble_s(p.schedule, p.pp, m, p.vp, f_layer * others, b_layer * others, 0.0)
        return work + bubble
