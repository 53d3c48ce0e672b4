"""Stage 6: the pipeline schedule, simulated once per distinct straggler pattern."""
from __future__ import annotations

from typing import Callable

from ..compute import pp_message_bytes
from ..constants import EngineConstants
from ..schedule import ScheduleResult, StageTimes
from .comm import CommLedger
from .job import Job
from .phases import LayerPhases

# (schedule, pp, micro-batches, vp, per-stage times, transfer seconds) -> (result, micro-batches simulated)
Simulator = Callable[[str, int, int, int, list[StageTimes], float], tuple[ScheduleResult, int]]

# Schedules whose stages send to both neighbours at once: Megatron's interleaved steady state batches
# send_forward_backward_recv_forward_backward. The others (1F1B, GPipe, ZB-H1, and DualPipe, which the
# engine costs as ZB-H1: engine/schedule.py) send to one neighbour at a time: one message on each
# direction of a link.
TWO_NEIGHBOUR_SCHEDULES = ("interleaved",)


def p2p_primitive(schedule: str) -> str:
    """The collective a schedule's stage-to-stage transfers are costed as (collectives.py)."""
    return "send_recv" if schedule in TWO_NEIGHBOUR_SCHEDULES else "send"


class PipelineRun:
    """The pipeline stage's times and the simulated schedule per straggler pattern."""
    pp_bytes: float  # one stage-to-stage message
    p2p_s: float  # its send/receive time (0 without pipelining)
    transfer_s: float  # what a message takes after the op that sends it ends: the share of p2p_s not waited on
    p2p_primitive: str  # what it is costed as: a one-way send or both neighbours at once (p2p_primitive)
    exchange_s: list[float]  # per stage boundary, what its exchange holds a stage's compute stream (blocking_exchanges_s)
    stage_times: list[list[StageTimes]]  # [pattern][stage]
    schedules: list[ScheduleResult]  # [pattern]
    simulated_micro: int  # micro-batches the simulation ran (the steady state repeats them)

    __slots__ = ("pp_bytes", "p2p_s", "transfer_s", "p2p_primitive", "exchange_s", "stage_times", "schedules",
                 "simulated_micro")

    def __init__(self, pp_bytes: float, p2p_s: float, transfer_s: float, p2p_primitive: str, exchange_s: list[float],
                 stage_times: list[list[StageTimes]], schedules: list[ScheduleResult], simulated_micro: int) -> None:
        self.pp_bytes = pp_bytes
        self.p2p_s = p2p_s
        self.transfer_s = transfer_s
        self.p2p_primitive = p2p_primitive
        self.exchange_s = exchange_s
        self.stage_times = stage_times
        self.schedules = schedules
        self.simulated_micro = simulated_micro


def schedule_pipeline(job: Job, k: EngineConstants, phases: LayerPhases, comm: CommLedger,
                      simulate: Simulator) -> PipelineRun:
    m, plan, par = job.shape, job.plan, job.parallelism
    pp_bytes = pp_message_bytes(m, phases.sharding, m.micro_batch)
    primitive = p2p_primitive(par.pipeline_schedule)
    p2p_s = comm("pp", primitive, pp_bytes) if plan.pp > 1 else 0.0
    schedules: list[ScheduleResult] = []
    stage_times: list[list[StageTimes]] = []
    simulated_micro = plan.num_microbatches
    # chunks of equal slowdown and layers share one (forward, backward) pair (stages/phases.py):
    # its times worked out once per pair
    of_pair: dict[int, tuple[float, float, float]] = {}
    share = blocking_share(job, k)
    exchange_s = blocking_exchanges_s(job, comm, pp_bytes, share)
    # a blocking exchange is part of the op that sends (below): its message has arrived when that op
    # ends, and only the share left to run asynchronously still delays the next stage (at the slowest
    # boundary's time, as every transfer of a schedule that does not wait)
    transfer_s = p2p_s * (1.0 - share)
    for per_stage in phases.chunks:
        times = []
        for s in range(plan.pp):
            fwd, bwd, wgrad = [], [], []
            for pair in per_stage[s]:
                hit = of_pair.get(id(pair))
                if hit is None:
                    f, b = pair
                    hit = of_pair[id(pair)] = (f.total_s + k.microbatch_overhead_s, b.total_s, b.wgrad_s)
                fwd.append(hit[0] + (exchange_s[s] if s < plan.pp - 1 else 0.0))  # sends on, receives a gradient
                bwd.append(hit[1] + (exchange_s[s - 1] if s > 0 else 0.0))  # sends a gradient back, receives an input
                wgrad.append(hit[2])
            times.append(StageTimes(fwd, bwd, wgrad))
        stage_times.append(times)
        sched, simulated_micro = simulate(par.pipeline_schedule, plan.pp, plan.num_microbatches, plan.vp, times,
                                          transfer_s)
        schedules.append(sched)
    return PipelineRun(pp_bytes, p2p_s, transfer_s, primitive, exchange_s, stage_times, schedules, simulated_micro)


def blocking_share(job: Job, k: EngineConstants) -> float:
    """The share of each stage-to-stage exchange a non-interleaved 1F1B pipeline holds the stage's
    compute stream for (constant pp_p2p_blocking_share_1f1b), 0 for the schedules that overlap them:
    Megatron ends each forward with send_forward_recv_backward and each backward with
    send_backward_recv_forward and waits for them before the next micro-batch. torchtitan posts its
    sends asynchronously."""
    plan, par = job.plan, job.parallelism
    share = k.pp_p2p_blocking_share_1f1b
    megatron = (par.framework or "megatron") in ("megatron", "nemo")
    if par.pipeline_schedule != "1f1b" or plan.pp < 2 or share <= 0.0 or not megatron:
        return 0.0
    return share


def blocking_exchanges_s(job: Job, comm: CommLedger, pp_bytes: float, share: float) -> list[float]:
    """Per stage boundary (stage s to s + 1), the seconds its exchange holds the compute streams of
    the two stages: `share` of its time. An exchange moves one activation from a stage to the next
    and one gradient back, the two directions of full-duplex links, and a stage takes part in one
    exchange at a time: each direction of its NIC (or NVLink) carries one message. That is the
    one-way `send` of every stage to the next at once; the gradient's way back is its mirror on the
    same links. Each boundary takes its own pairs' time under that load: one inside a server over
    NVLink, one across servers over the NICs."""
    boundaries = job.plan.pp - 1
    if share <= 0.0 or boundaries < 1:
        return [0.0] * max(boundaries, 0)
    # the pipeline's pairs come pipeline after pipeline, each boundary after boundary (Placement.pp_pairs)
    return [share * t for t in comm.per_part("pp", "send", pp_bytes, boundaries)]
