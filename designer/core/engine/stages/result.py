"""The answer of one evaluation (docs/contract.md section 5): its types and its summary."""
# No `from __future__ import annotations`: Evaluation's field types as objects, not texts, spare dataclass
# two pattern matches per field (is it a ClassVar, an InitVar?) as the class is made, at every start.

from dataclasses import dataclass, field

import numpy as np

from ...units import GIB
from .. import flops as F
from ...by_name import FieldsByName
from .breakdown import Breakdown
from .comm import CommLedger
from .dp import DataParallel
from .fit import MemoryFit
from .job import Hardware, Job
from .layout import Layout
from .phases import LayerPhases
from .pipeline import PipelineRun


class Event:
    """One span on a GPU's timeline (compute, a communication, a wait), as `designer trace` shows it."""
    device: int  # GPU index
    stream: str  # compute | tp | cp | ep | pp | dp | wait
    start_s: float
    end_s: float
    kind: str  # forward | backward | wgrad | recompute | tp_comm | ... | bubble | imbalance_wait | optimizer
    label: str
    micro_batch: int
    chunk: int
    bytes: float
    group: str
    resource: str
    waited_for: int | None  # for waits: the device whose work this one waited on

    __slots__ = ("device", "stream", "start_s", "end_s", "kind", "label", "micro_batch", "chunk", "bytes",
                 "group", "resource", "waited_for")

    def __init__(self, device: int, stream: str, start_s: float, end_s: float, kind: str, label: str,
                 micro_batch: int = -1, chunk: int = -1, bytes: float = 0.0, group: str = "", resource: str = "",
                 waited_for: int | None = None) -> None:
        self.device = device
        self.stream = stream
        self.start_s = start_s
        self.end_s = end_s
        self.kind = kind
        self.label = label
        self.micro_batch = micro_batch
        self.chunk = chunk
        self.bytes = bytes
        self.group = group
        self.resource = resource
        self.waited_for = waited_for

    def as_json(self) -> dict:
        d = {"device": self.device, "stream": self.stream, "start_s": self.start_s, "end_s": self.end_s,
             "kind": self.kind, "label": self.label}
        if self.micro_batch >= 0:
            d["micro_batch"] = self.micro_batch
            d["chunk"] = self.chunk
        if self.bytes:
            d["bytes"] = self.bytes
        if self.group:
            d["group"] = self.group
        if self.resource:
            d["resource"] = self.resource
        if self.waited_for is not None:
            d["waited_for"] = self.waited_for
        return d


# init=False: its __init__ takes the fields by name (core/by_name.py), not a generated one of 41 parameters.
@dataclass(eq=False, repr=False, init=False)
class Evaluation:
    """The engine's answer for a design: step time, throughput, MFU, breakdown, memory and problems."""
    num_gpus: int
    step_time_s: float
    tokens_per_s: float
    model_tflops_per_gpu: float
    mfu: float
    hfu: float
    breakdown_s: dict[str, float]
    hidden_comm_s: dict[str, float]
    memory_gib_per_gpu: dict[str, float]
    fits_in_memory: bool
    bottlenecks: list[dict]
    warnings: list[str]
    memory_reason: str = ""
    fits_with_headroom: bool = True  # within (1 - memory_headroom) x HBM (calibration memory_headroom)
    memory_limit_gib: float = 0.0  # (1 - memory_headroom) x HBM per GPU
    plan: dict = field(default_factory=dict)
    collectives: dict = field(default_factory=dict)
    stages: list[dict] = field(default_factory=list)
    link_rows_builder: object = None  # makes link_utilization on first use (stages/links.py)
    _link_utilization: list[dict] | None = None
    link_load: dict[str, np.ndarray] = field(default_factory=dict)  # kind -> bytes per step, per link index
    link_utilization_array: np.ndarray | None = None  # per link index: average use over the step
    # per link index (stages/links.py; read through designer/core/analysis/link_load.py):
    link_ids: list[str] = field(default_factory=list)  # the ids the indices stand for
    link_ids_version: object = None  # the design's version of those ids (Document.link_ids_version)
    link_capacity_Bps: np.ndarray | None = None  # the rate the engine costs each link at
    # the kinds whose seconds busy per step the links stage worked out (link_busy_s: made from the bytes
    # and the rate when read, not kept: 3 link-sized arrays a result, 6.8 MB at 131k GPUs)
    link_busy_kinds: tuple[str, ...] = ()
    link_phase_s: dict[str, float] = field(default_factory=dict)  # kind -> its phase's seconds (exposed + hidden)
    link_exposed_s: dict[str, float] = field(default_factory=dict)  # kind -> seconds of it on the critical path
    link_phase_exposed: dict[str, bool] = field(default_factory=dict)  # kind -> enough of it exposed to count
    # the kind each link is busiest in, as an index into link_phase_names (whose last is "": idle)
    link_phase_code: np.ndarray | None = None
    link_phase_names: tuple[str, ...] = ()
    link_bottleneck: dict[str, np.ndarray] = field(default_factory=dict)  # kind -> the phase's bottleneck links
    link_critical: np.ndarray | None = None  # a bottleneck of an exposed phase: on the critical path
    events_builder: object = None  # builds the per-device events on first use (they cost more than the step)
    _events: list[Event] | None = None
    devices: dict = field(default_factory=dict)  # representative GPU -> description
    critical_device: int = 0
    engine_time_s: float = 0.0
    constants: dict = field(default_factory=dict)
    slowest_rank_wait_s: float = 0.0  # the part of imbalance_wait that is the wait for the slowest of N GPUs
    jobs: list = field(default_factory=list)  # every job of the design (stages/jobs.py JobResult), this one first

    def __init__(self, **values):
        _EVALUATION_INIT.set(self, values)

    @property
    def events(self) -> list[Event]:
        if self._events is None:
            self._events = self.events_builder() if self.events_builder else []
        return self._events

    @property
    def link_busy_s(self) -> dict[str, np.ndarray]:
        """Kind -> each link's seconds busy per step: its bytes over the rate it is costed at (0 for a
        link without a rate), made anew at each read."""
        return {kind: self.link_busy(kind) for kind in self.link_busy_kinds}

    def link_busy(self, kind: str) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            busy = self.link_load[kind] / self.link_capacity_Bps
        busy[~(self.link_capacity_Bps > 0)] = 0.0
        return busy

    def link_busy_at(self, kind: str, index: int) -> float:
        """link_busy(kind)[index], for one link."""
        rate = self.link_capacity_Bps[index]
        return float(self.link_load[kind][index] / rate) if rate > 0 else 0.0

    @property
    def link_phase(self) -> np.ndarray | None:
        """The kind each link is busiest in ("" when idle), as words (made when asked)."""
        if self.link_phase_code is None:
            return None
        return np.array(self.link_phase_names, dtype=object)[self.link_phase_code]

    @property
    def link_utilization(self) -> list[dict]:
        """The busiest links' rows (docs/contract.md section 5), made when first read."""
        if self._link_utilization is None:
            self._link_utilization = self.link_rows_builder() if self.link_rows_builder else []
        return self._link_utilization

    def as_json(self, events: bool = False, links: int = 50) -> dict:
        out = {
            "num_gpus": self.num_gpus, "step_time_s": self.step_time_s, "tokens_per_s": self.tokens_per_s,
            "model_tflops_per_gpu": self.model_tflops_per_gpu, "mfu": self.mfu, "hfu": self.hfu,
            "breakdown_s": self.breakdown_s, "hidden_comm_s": self.hidden_comm_s,
            "memory_gib_per_gpu": self.memory_gib_per_gpu, "fits_in_memory": self.fits_in_memory,
            "bottlenecks": self.bottlenecks, "warnings": self.warnings,
        }
        out["fits_with_headroom"] = self.fits_with_headroom
        out["memory_limit_gib"] = self.memory_limit_gib
        if self.memory_reason:
            out["memory_reason"] = self.memory_reason
        out["plan"] = self.plan
        out["collectives"] = self.collectives
        out["stages"] = self.stages
        out["link_utilization"] = self.link_utilization[:links]
        out["critical_device"] = self.critical_device
        out["jobs"] = [job.as_json() for job in self.jobs]
        out["slowest_rank_wait_s"] = self.slowest_rank_wait_s
        out["engine_time_s"] = self.engine_time_s
        if events:
            out["events"] = [e.as_json() for e in self.events]
        return out


_EVALUATION_INIT = FieldsByName(Evaluation)  # its __init__


def summarize(job: Job, hw: Hardware, layout: Layout, phases: LayerPhases, pipe: PipelineRun, dp: DataParallel,
              bd: Breakdown, mem: MemoryFit, comm: CommLedger, warnings: list[str]) -> Evaluation:
    """The step, its throughput and MFU, breakdown, memory, plan, collectives and stages
    (what a plan search needs; per-link loads, bottlenecks and events are added after)."""
    m, plan, par = job.shape, job.plan, job.parallelism
    n, step_time, peak = plan.num_gpus, dp.step_time, phases.peak_tflops
    model_flops = F.step_model_flops(m)
    hw_flops = model_flops + F.recompute_flops_per_token(m, par.recompute_granularity) * m.global_batch * m.s
    tokens = m.global_batch * m.s
    mfu = model_flops / (step_time * n * peak * 1e12)
    hfu = hw_flops / (step_time * n * peak * 1e12)
    estimate = mem.estimate
    result = Evaluation(
        num_gpus=n, step_time_s=step_time, tokens_per_s=tokens / step_time,
        model_tflops_per_gpu=model_flops / step_time / n / 1e12, mfu=mfu, hfu=hfu,
        breakdown_s=bd.seconds, hidden_comm_s=bd.hidden,
        memory_gib_per_gpu={k_: v for k_, v in estimate.gib().items() if k_ != "temporaries"} | {
            "temporaries": estimate.temporaries / GIB},
        fits_in_memory=mem.fits, bottlenecks=[], warnings=warnings + ([mem.reason] if mem.reason else []),
        memory_reason=mem.reason, fits_with_headroom=mem.fits_with_headroom, memory_limit_gib=mem.limit_gib,
        slowest_rank_wait_s=min(dp.tail_s, bd.seconds.get("imbalance_wait", 0.0)),
    )
    result.plan = {"tp": plan.tp, "pp": plan.pp, "cp": plan.cp, "ep": plan.ep, "etp": plan.etp, "dp": plan.dp,
                   "vp": plan.vp, "num_microbatches": plan.num_microbatches,
                   "schedule": par.pipeline_schedule, "rank_order": "-".join(plan.rank_order),
                   "accelerator": hw.acc.name, "precision": m.precision}
    result.collectives = {key: {"time_s": c.time_s, "algorithm": c.algorithm, "protocol": c.protocol,
                                "latency_s": c.latency_s, "bandwidth_s": c.bandwidth_s,
                                "bottleneck": c.bottleneck, "classes": c.classes}
                          for key, c in sorted(comm.used.items())}
    ref = phases.chunks[bd.ref_pattern]
    ref_sched = pipe.schedules[bd.ref_pattern]
    ref_times = pipe.stage_times[bd.ref_pattern]  # backward: each chunk's b.total_s (stages/pipeline.py)
    # chunks share their (forward, backward) pair: one sum per pair, by the pair's id while `phases`
    # holds every pair (so no id is reused while this map lives)
    forward_of: dict[int, float] = {}
    result.stages = stages = []
    for s in range(plan.pp):
        forwards = []
        for f, _ in ref[s]:
            seconds = forward_of.get(id(f))
            if seconds is None:
                seconds = forward_of[id(f)] = f.total_s
            forwards.append(seconds)
        stages.append({"stage": s, "layers": sum(map(len, layout.stage_layers[s])), "forward_s": sum(forwards),
                       "backward_s": sum(ref_times[s].bwd), "busy_s": ref_sched.stage_busy[s],
                       "end_s": ref_sched.stage_end[s]})
    return result
