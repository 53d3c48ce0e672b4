"""Stage 8: the breakdown of docs/contract.md section 5: the critical device's timeline split
into what it spent its time on. It adds up to the step time exactly."""
from __future__ import annotations

import numpy as np

from ..phase import KINDS
from ..constants import EngineConstants
from ..schedule import B, F as FWD, ideal_bubble_s
from .dp import DataParallel
from .job import Job
from .layout import Layout
from .phases import LayerPhases
from .pipeline import PipelineRun

BREAKDOWN_KEYS = ("compute", "recompute", "tp_comm", "cp_comm", "ep_comm", "pp_comm", "dp_comm", "bubble",
                  "imbalance_wait", "optimizer")
HIDDEN_KEYS = ("tp_comm", "cp_comm", "ep_comm", "pp_comm", "dp_comm")
_HIDDEN_PER_OP = ("tp_comm", "cp_comm", "ep_comm", "dp_comm")  # what a layer's ops hide (pp: the schedule)
_COLUMNS = KINDS + _HIDDEN_PER_OP  # what an op adds to: its busy seconds per kind, then its hidden ones


class Breakdown:
    """Where a step's time goes: the exposed seconds per category and the hidden (overlapped) ones."""
    seconds: dict[str, float]  # BREAKDOWN_KEYS: exposed on the critical path
    hidden: dict[str, float]  # HIDDEN_KEYS: overlapped with other work
    critical_stage: int  # the most loaded stage
    ref_pattern: int  # the straggler pattern the breakdown is read from (a nominal one)

    __slots__ = ("seconds", "hidden", "critical_stage", "ref_pattern")

    def __init__(self, seconds: dict[str, float], hidden: dict[str, float], critical_stage: int,
                 ref_pattern: int) -> None:
        self.seconds = seconds
        self.hidden = hidden
        self.critical_stage = critical_stage
        self.ref_pattern = ref_pattern


def decompose_step(job: Job, k: EngineConstants, layout: Layout, phases: LayerPhases, pipe: PipelineRun,
                   dp: DataParallel) -> Breakdown:
    plan, par = job.plan, job.parallelism
    schedules, step_time = pipe.schedules, dp.step_time
    worst_pattern = first_largest([max(si.dp_end for si in info) for info in dp.per_pattern])
    sched = schedules[worst_pattern]
    # the most loaded stage: the one whose own work (compute + exposed comm) is largest
    crit_stage = first_largest(sched.stage_busy[:plan.pp])
    # the reference replica for the breakdown: a nominal one when a straggler exists, so
    # that its cost shows as everyone else's wait
    patterns = layout.patterns
    ref_pattern = 0 if len(patterns) == 1 else first_smallest(patterns.max(axis=1).tolist())
    ref_sched = schedules[ref_pattern]
    ref_info = dp.per_pattern[ref_pattern][crit_stage]
    breakdown = dict.fromkeys(BREAKDOWN_KEYS, 0.0)
    hidden = dict.fromkeys(HIDDEN_KEYS, 0.0)
    chunks = phases.chunks[ref_pattern][crit_stage]
    zb = par.pipeline_schedule in ("zb-h1", "dualpipe")
    repeat = plan.num_microbatches / pipe.simulated_micro  # the steady state repeats what was simulated
    # What each op of the critical stage adds depends only on its kind and chunk: worked out once
    # per (kind, chunk), then added up op by op in the stage's order (the same sums, in the same
    # order, as adding each op's share in turn, on arrays), for the columns some op adds to (the
    # others stay 0.0, as a sum of zeros is)
    v = ref_sched.chunks
    codes = ref_sched.stage_codes(crit_stage)
    columns = list(zip(*[_op_shares(code, v, chunks, zb, repeat) for code in codes]))  # per column, each code's
    live = [j for j, column in enumerate(columns) if any(column)]
    if live:
        table = np.zeros((len(live), 3 * v))
        table[:, codes] = [columns[j] for j in live]
        for j, total in zip(live, ref_sched.stage_op_sums(crit_stage, table).tolist()):
            if j < len(KINDS):
                breakdown[_COLUMNS[j]] = total
            else:
                hidden[_COLUMNS[j]] = total
    waits_pp = ref_sched.stage_transfer_wait_s(crit_stage)
    breakdown["compute"] += k.microbatch_overhead_s * plan.num_microbatches * plan.vp
    dp_exposed = max(0.0, ref_info.dp_end - ref_info.last_compute)
    breakdown["dp_comm"] += dp_exposed + dp.ag_exposed
    hidden["dp_comm"] += max(0.0, ref_info.dp_busy - dp_exposed) + max(0.0, dp.ag_s[crit_stage] - dp.ag_exposed)
    breakdown["optimizer"] = dp.optimizer_s
    # a 1F1B stage waits on its exchanges with its neighbours (stages/pipeline.py blocking_exchanges_s)
    exchange = pipe.exchange_s
    blocked = plan.num_microbatches * ((exchange[crit_stage] if crit_stage < plan.pp - 1 else 0.0)
                                       + (exchange[crit_stage - 1] if crit_stage > 0 else 0.0))
    breakdown["pp_comm"] = waits_pp + blocked
    accounted = sum(breakdown.values())
    idle = max(0.0, step_time - accounted)
    f_stage = sum(f.total_s for f, _ in chunks)
    b_stage = sum(b.total_s for _, b in chunks)
    w_stage = sum(b.wgrad_s for _, b in chunks)
    bubble = min(idle, ideal_bubble_s(par.pipeline_schedule, plan.pp, plan.num_microbatches, plan.vp,
                                      f_stage, b_stage, w_stage))
    breakdown["bubble"] = bubble
    breakdown["imbalance_wait"] = idle - bubble
    # keep the sum exact
    drift = step_time - sum(breakdown.values())
    if abs(drift) > 1e-12:
        breakdown["compute"] += drift
    hidden["pp_comm"] = max(0.0, pipe.p2p_s * 2 * plan.num_microbatches * plan.vp - waits_pp - blocked) \
        if plan.pp > 1 else 0.0
    return Breakdown(breakdown, hidden, crit_stage, ref_pattern)


def _op_shares(code: int, v: int, chunks, zb: bool, repeat: float) -> list[float]:
    """What one op of kind * v + chunk `code` adds to each of _COLUMNS (a W op: the backward's
    weight-gradient share; a zero-bubble B op: the rest)."""
    kind, c = divmod(code, v)
    fwd, bwd = chunks[c]
    if kind == FWD:
        ph, scale = fwd, 1.0
    elif kind == B:
        ph = bwd
        scale = 1.0
        if zb and bwd.total_s > 0:
            scale = (bwd.total_s - bwd.wgrad_s) / bwd.total_s
    else:
        ph = bwd
        scale = bwd.wgrad_s / bwd.total_s if bwd.total_s > 0 else 0.0
    busy, hidden = ph.busy, ph.hidden
    return [busy[key] * scale * repeat for key in KINDS] + [hidden[key] * scale * repeat for key in _HIDDEN_PER_OP]


def first_largest(values) -> int:
    """np.argmax of a short list, in Python: the index of the first largest value (of the first
    NaN when there is one)."""
    at, best = 0, values[0]
    for i, value in enumerate(values):
        if value != value:
            return i
        if value > best:
            at, best = i, value
    return at


def first_smallest(values) -> int:
    """np.argmin of a short list, in Python: the first largest of the negated values (negation is
    exact, keeps ties and leaves a NaN a NaN)."""
    return first_largest([-value for value in values])
