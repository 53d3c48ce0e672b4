"""Stage 6: the pipeline schedule, simulated once per distinct straggler pattern."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..compute import CommFn, pp_message_bytes
from ..constants import EngineConstants
from ..schedule import ScheduleResult, StageTimes
from .job import Job
from .phases import LayerPhases

# (schedule, pp, micro-batches, vp, per-stage times, p2p seconds) -> (result, micro-batches simulated)
Simulator = Callable[[str, int, int, int, list[StageTimes], float], tuple[ScheduleResult, int]]


@dataclass(frozen=True)
class PipelineRun:
    """The pipeline stage's times and the simulated schedule per straggler pattern."""
    pp_bytes: float  # one stage-to-stage message
    p2p_s: float  # its send/receive time (0 without pipelining)
    stage_times: list[list[StageTimes]]  # [pattern][stage]
    schedules: list[ScheduleResult]  # [pattern]
    simulated_micro: int  # micro-batches the simulation ran (the steady state repeats them)


def schedule_pipeline(job: Job, k: EngineConstants, phases: LayerPhases, comm: CommFn,
                      simulate: Simulator) -> PipelineRun:
    m, plan, par = job.shape, job.plan, job.parallelism
    pp_bytes = pp_message_bytes(m, phases.sharding, m.micro_batch)
    p2p_s = comm("pp", "send_recv", pp_bytes) if plan.pp > 1 else 0.0
    schedules: list[ScheduleResult] = []
    stage_times: list[list[StageTimes]] = []
    simulated_micro = plan.num_microbatches
    # chunks of equal slowdown and layers share one (forward, backward) pair (stages/phases.py):
    # its times worked out once per pair
    of_pair: dict[int, tuple[float, float, float]] = {}
    for per_stage in phases.chunks:
        times = []
        for s in range(plan.pp):
            fwd, bwd, wgrad = [], [], []
            for pair in per_stage[s]:
                hit = of_pair.get(id(pair))
                if hit is None:
                    f, b = pair
                    hit = of_pair[id(pair)] = (f.total_s + k.microbatch_overhead_s, b.total_s, b.wgrad_s)
                fwd.append(hit[0])
                bwd.append(hit[1])
                wgrad.append(hit[2])
            times.append(StageTimes(fwd, bwd, wgrad))
        stage_times.append(times)
        sched, simulated_micro = simulate(par.pipeline_schedule, plan.pp, plan.num_microbatches, plan.vp, times,
                                          p2p_s)
        schedules.append(sched)
    return PipelineRun(pp_bytes, p2p_s, stage_times, schedules, simulated_micro)
