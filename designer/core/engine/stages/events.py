"""Detail: per-device events of one device per (stage, distinct replica), built on first use
(they cost more than the step itself)."""
from __future__ import annotations

import numpy as np

from ..schedule import F as FWD, W, simulate
from .dp import DataParallel
from .job import Job
from .layout import Layout, representative_replicas
from .phases import LayerPhases
from .pipeline import PipelineRun
from .result import Event


def build_events(job: Job, layout: Layout, phases: LayerPhases, pipe: PipelineRun, dp: DataParallel) -> list[Event]:
    plan, par = job.plan, job.parallelism
    # events need every micro-batch: simulate in full when the steady state was extrapolated
    schedules = pipe.schedules if pipe.simulated_micro == plan.num_microbatches else [
        simulate(par.pipeline_schedule, plan.pp, plan.num_microbatches, plan.vp, times, pipe.transfer_s)
        for times in pipe.stage_times]
    pipelines, pattern_of_replica = layout.pipelines, layout.pattern_of_replica
    events: list[Event] = []
    for replica in representative_replicas(pattern_of_replica):
        pi = int(pattern_of_replica[replica])
        for op in schedules[pi].ops:
            events += _op_events(op, pipelines[replica], phases.chunks[pi][op.stage][op.chunk], plan.pp, pipe)
        events += _step_end_events(pipelines[replica], pi, layout, dp, plan)
    events.sort(key=lambda e: (e.device, e.start_s))
    return events


def _op_events(op, pipeline, chunk_phases, pp: int, pipe: PipelineRun) -> list[Event]:
    """One schedule op on its stage's GPU: the wait before it, its compute and communication bars,
    and the pipeline send at its end."""
    device = int(pipeline[op.stage])
    fwd, bwd = chunk_phases
    label = f"{'FBW'[op.kind]}{op.micro} c{op.chunk}"
    events = []
    if op.wait > 0:
        kind = "pp_comm" if op.wait_pp >= op.wait - 1e-12 else "bubble"
        # forward waits on the previous stage's forward, backward on the next stage's backward
        if op.kind == FWD:
            src = op.stage - 1 if op.stage > 0 else pp - 1
        else:
            src = op.stage + 1 if op.stage < pp - 1 else 0
        events.append(Event(device, "wait", op.start - op.wait, op.start, kind, f"wait before {label}",
                            op.micro, op.chunk, waited_for=int(pipeline[src])))
    if op.kind == W:
        events.append(Event(device, "compute", op.start, op.end, "wgrad", label, op.micro, op.chunk))
        return events
    ph = fwd if op.kind == FWD else bwd
    # the boundary it sends across: on to the next stage (a forward), back to the previous (a backward)
    boundary = op.stage if op.kind == FWD else op.stage - 1
    sends = pp > 1 and 0 <= boundary < pp - 1
    # a blocking exchange holds the op's last exchange_s: its send starts there (stages/pipeline.py)
    send_at = op.end - pipe.exchange_s[boundary] if sends else op.end
    scale = (send_at - op.start) / (ph.total_s or 1.0)
    t = op.start
    for key in ("recompute", "compute"):
        d = ph.busy[key] * scale
        if d > 0:
            kind = "recompute" if key == "recompute" else ("forward" if op.kind == FWD else "backward")
            events.append(Event(device, "compute", t, t + d, kind, label, op.micro, op.chunk))
            t += d
    for key, stream in (("tp_comm", "tp"), ("cp_comm", "cp"), ("ep_comm", "ep"), ("dp_comm", "dp")):
        d = ph.busy[key] * scale
        if d > 0:
            events.append(Event(device, stream, t, t + d, key, f"{key} {label}", op.micro, op.chunk, group=stream))
            t += d
        h = ph.hidden[key] * scale
        if h > 0:
            events.append(Event(device, stream, op.start, op.start + h, key + "_hidden",
                                f"{key} (overlapped) {label}", op.micro, op.chunk, group=stream))
    if sends:
        events.append(Event(device, "pp", send_at, send_at + pipe.p2p_s, "pp_comm",
                            f"send {'activation' if op.kind == FWD else 'gradient'} {label}", op.micro,
                            op.chunk, bytes=pipe.pp_bytes, group="pp"))
    return events


def _step_end_events(pipeline, pi: int, layout: Layout, dp: DataParallel, plan) -> list[Event]:
    """Each stage's end of step: gradient reduction, the wait for the slowest replica, the optimizer,
    the wait for the slowest GPU and the parameter all-gather."""
    per_pattern, step_end, optimizer_s = dp.per_pattern, dp.step_end, dp.optimizer_s
    ends = [max(info.dp_end for info in per) for per in per_pattern]
    worst_pi = int(np.argmax(ends))
    worst_replica = int(np.flatnonzero(layout.pattern_of_replica == worst_pi)[0])
    events = []
    for s in range(plan.pp):
        device = int(pipeline[s])
        info = per_pattern[pi][s]
        if info.dp_busy > 0:
            events.append(Event(device, "dp", info.dp_end - info.dp_busy, info.dp_end, "dp_comm",
                                "gradient reduction", group="dp"))
        if step_end > info.dp_end:
            slowest = max(range(plan.pp), key=lambda st: per_pattern[worst_pi][st].dp_end)
            events.append(Event(device, "wait", info.dp_end, step_end, "imbalance_wait",
                                "wait for the slowest replica/stage",
                                waited_for=int(layout.pipelines[worst_replica, slowest])))
        events.append(Event(device, "compute", step_end, step_end + optimizer_s, "optimizer", "optimizer step"))
        # the expected wait for the slowest of the job's GPUs (their speed spread): a wait of its
        # own, drawn before the step's last collective, never inside a communication bar
        t = step_end + optimizer_s
        if dp.tail_s > 0:
            events.append(Event(device, "wait", t, t + dp.tail_s, "imbalance_wait",
                                f"wait for the slowest of {plan.num_gpus:,} GPUs (speed spread)"))
            t += dp.tail_s
        if dp.ag_exposed > 0:
            events.append(Event(device, "dp", t, dp.step_time, "dp_comm", "parameter all-gather", group="dp"))
    return events
