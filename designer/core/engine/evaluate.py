"""One training step on one cluster: the engine's stages put together.

1. resolve the job (workload + plan, checked), the accelerator and the constants;
2. place ranks and build each dimension's groups on the fabric;
3. cost each layer's compute and its TP/CP/EP communication;
4. simulate the pipeline schedule per distinct replica (stragglers make replicas differ);
5. add the DP gradient reduction, the optimizer and the parameter all-gather;
6. decompose the critical device's timeline into the breakdown of docs/contract.md section 5.
`Engine` keeps what stays valid between evaluations (fabric, placement, groups, layer costs).
"""
from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..model.catalog import Catalog, default_catalog
from ..model.document import Document
from ..model.job import Parallelism, Workload, resolve_workload
from ..model.plan import ResolvedPlan, check_job
from ..problems import DesignerError, Problem
from ..units import GIB
from . import flops as F
from .collectives import CollectiveCost, CollectiveModel
from .compute import KINDS, OpCoster, Phase, Sharding, embedding_cost, layer_cost, output_cost, pp_message_bytes
from .constants import (EngineConstants, accelerator_constants, check_calibration, engine_constants,
                        uses_flash_attention)
from .fabric import Fabric, build_fabric, refresh_capacities, require_routes
from .memory import MemoryEstimate, estimate_memory
from .placement import Placement, place
from .schedule import B, F as FWD, W, ScheduleResult, StageTimes, ideal_bubble_s, simulate, simulate_steady

BREAKDOWN_KEYS = ("compute", "recompute", "tp_comm", "cp_comm", "ep_comm", "pp_comm", "dp_comm", "bubble",
                  "imbalance_wait", "optimizer")
HIDDEN_KEYS = ("tp_comm", "cp_comm", "ep_comm", "pp_comm", "dp_comm")


@dataclass
class Event:
    device: int  # GPU index
    stream: str  # compute | tp | cp | ep | pp | dp | wait
    start_s: float
    end_s: float
    kind: str  # forward | backward | wgrad | recompute | tp_comm | ... | bubble | imbalance_wait | optimizer
    label: str
    micro_batch: int = -1
    chunk: int = -1
    bytes: float = 0.0
    group: str = ""
    resource: str = ""
    waited_for: int | None = None  # for waits: the device whose work this one waited on

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


@dataclass
class Evaluation:
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
    plan: dict = field(default_factory=dict)
    collectives: dict = field(default_factory=dict)
    stages: list[dict] = field(default_factory=list)
    link_utilization: list[dict] = field(default_factory=list)
    link_load: dict[str, np.ndarray] = field(default_factory=dict)  # kind -> bytes per step, per link index
    link_utilization_array: np.ndarray | None = None  # per link index: average use over the step
    events_builder: object = None  # builds the per-device events on first use (they cost more than the step)
    _events: list[Event] | None = None
    devices: dict = field(default_factory=dict)  # representative GPU -> description
    critical_device: int = 0
    engine_time_s: float = 0.0
    constants: dict = field(default_factory=dict)

    @property
    def events(self) -> list[Event]:
        if self._events is None:
            self._events = self.events_builder() if self.events_builder else []
        return self._events

    def as_json(self, events: bool = False, links: int = 50) -> dict:
        out = {
            "num_gpus": self.num_gpus, "step_time_s": self.step_time_s, "tokens_per_s": self.tokens_per_s,
            "model_tflops_per_gpu": self.model_tflops_per_gpu, "mfu": self.mfu, "hfu": self.hfu,
            "breakdown_s": self.breakdown_s, "hidden_comm_s": self.hidden_comm_s,
            "memory_gib_per_gpu": self.memory_gib_per_gpu, "fits_in_memory": self.fits_in_memory,
            "bottlenecks": self.bottlenecks, "warnings": self.warnings,
        }
        if self.memory_reason:
            out["memory_reason"] = self.memory_reason
        out["plan"] = self.plan
        out["collectives"] = self.collectives
        out["stages"] = self.stages
        out["link_utilization"] = self.link_utilization[:links]
        out["critical_device"] = self.critical_device
        out["engine_time_s"] = self.engine_time_s
        if events:
            out["events"] = [e.as_json() for e in self.events]
        return out


@dataclass
class Job:
    workload: Workload
    shape: F.ModelShape
    parallelism: Parallelism
    plan: ResolvedPlan


def resolve_job(doc: Document, catalog: Catalog) -> Job:
    spec = doc.spec
    problems = check_calibration(spec.calibration, catalog)
    if spec.workload is None:
        problems.append(Problem("no workload to evaluate", "spec.workload",
                                fix="add workload: {preset: llama3-8b} (or the model's keys), or pass --scenario"))
        raise DesignerError(problems)
    par = spec.parallelism or Parallelism()
    plan, plan_problems = check_job(spec.workload, par, doc.num_gpus(), catalog)
    problems += plan_problems
    if problems:
        raise DesignerError(problems)
    w = resolve_workload(spec.workload, catalog.presets())
    return Job(w, F.ModelShape.of(w), par, plan)


def _stage_layers(shape: F.ModelShape, pp: int, vp: int) -> list[list[list[int]]]:
    """Layer indices of each (stage, chunk): Megatron's interleaved assignment."""
    per_chunk = shape.layers // (pp * vp)
    out = []
    for s in range(pp):
        chunks = []
        for c in range(vp):
            first = (c * pp + s) * per_chunk
            chunks.append(list(range(first, first + per_chunk)))
        out.append(chunks)
    return out


class Engine:
    """Evaluates documents; reuses fabric, placement, groups and layer costs while they stay valid."""

    def __init__(self, catalog: Catalog | None = None, detail: bool = True, schedule_max_ops: int = 4096):
        """`detail=False` leaves out per-link loads, bottlenecks and events (a plan search only
        needs the step); `schedule_max_ops` bounds each pipeline simulation (see simulate_steady)."""
        self.catalog = catalog or default_catalog()
        self.detail = detail
        self.schedule_max_ops = schedule_max_ops
        self._fabric_key = None
        self._fabric: Fabric | None = None
        self._groups: dict = {}
        self._placement: dict = {}
        self.reused: list[str] = []  # what the last evaluation could reuse (for tests and the UI)
        self._schedules: dict = {}

    # ---- cached stages ------------------------------------------------------------------
    def fabric(self, doc: Document, k: EngineConstants) -> Fabric:
        """The fabric of `doc`: rebuilt when the network's shape changed, only re-rated when
        just bandwidths or slowdowns changed (the document's change log says which)."""
        constants = _fabric_constants(k)
        if self._fabric is not None and self._fabric_key is not None:
            doc_id, revision, old_constants = self._fabric_key
            if doc_id == doc.lineage and old_constants == constants:
                changes = doc.changes_since(revision)
                if changes is not None:  # the job and the canvas layout are not the fabric
                    changes = [c for c in changes if c.collection not in ("workload", "parallelism", "layout")]
                if changes == []:
                    self._fabric_key = (doc.lineage, doc.revision, constants)
                    return self._fabric
                if changes is not None and all(_rating_only(c) for c in changes):
                    changed = [self._fabric.link_position(c.id) for c in changes if c.collection == "links"]
                    refresh_capacities(self._fabric, doc, None if None in changed else changed)
                    self._fabric_key = (doc.lineage, doc.revision, constants)
                    for model in self._groups.values():
                        model.invalidate_capacities()
                    self.reused.append("fabric, placement, groups and routes (re-rated links)")
                    return self._fabric
        self._fabric = build_fabric(doc, self.catalog, k)
        self._fabric_key = (doc.lineage, doc.revision, constants)
        self._groups.clear()
        return self._fabric

    def placement(self, plan: ResolvedPlan) -> Placement:
        # Keyed by the layout of ranks only: virtual stages and the micro-batch count do not
        # move a rank, so a plan search that varies them reuses placement, groups and routes.
        key = dataclasses.replace(plan, vp=1, num_microbatches=0)
        p = self._placement.get(key)
        if p is None:
            if len(self._placement) >= 256:
                self._placement.clear()
            p = self._placement[key] = place(key)
        return p

    def groups(self, fabric: Fabric, placement: Placement, dim: str, expert: bool, k: EngineConstants,
               nvls: bool) -> CollectiveModel:
        key = (placement.plan, dim, expert, nvls)
        model = self._groups.get(key)
        if model is None:
            if len(self._groups) >= 1024:  # a plan search visits many layouts: keep the recent ones
                for old in list(self._groups)[:256]:
                    del self._groups[old]
            if dim == "pp-pair":
                members = placement.pp_pairs()
            else:
                members = placement.groups(dim, expert)
            model = self._groups[key] = CollectiveModel(fabric, members, k, nvls, name=dim)
        return model

    def hardware(self, fabric: Fabric, num_gpus: int, calibration: dict):
        """(servers used, accelerator names, the accelerator, its constants, NVLS usable) for a job
        on the first `num_gpus` GPUs; a mixed cluster is costed as its first kind by name."""
        used_nodes = sorted(set(fabric.gpu_node[:num_gpus].tolist()))
        names = {self.catalog.accelerator(fabric.node_accelerator[i]).name for i in used_nodes}
        acc = self.catalog.accelerator(sorted(names)[0])
        ac = accelerator_constants(acc, calibration, self.catalog)
        nvls = ac.nvls_supported and all(fabric.node_scale_up_kind[i] == "nvswitch" for i in used_nodes)
        return used_nodes, sorted(names), acc, ac, nvls

    def layer_comm(self, doc: Document, plan: ResolvedPlan):
        """The communication function `layer_cost` uses for the TP, CP and EP groups of `plan`
        (DP priced at zero), as `evaluate` builds it: for bounds in a plan search."""
        k = engine_constants(doc.spec.calibration)
        fabric = self.fabric(doc, k)
        nvls = self.hardware(fabric, plan.num_gpus, doc.spec.calibration)[-1]
        placement = self.placement(plan)
        dims = {d: self.groups(fabric, placement, d, False, k, nvls) for d in ("tp", "cp")}
        if plan.ep > 1 or plan.etp != plan.tp:
            dims["ep"] = self.groups(fabric, placement, "ep", True, k, nvls)

        def comm(dim: str, primitive: str, nbytes: float) -> float:
            model = dims.get(dim)
            return model.cost(primitive, nbytes).time_s if model is not None else 0.0

        return comm

    # ---- evaluation ---------------------------------------------------------------------
    def evaluate(self, doc: Document) -> Evaluation:
        t0 = time.perf_counter()
        self.reused = []
        catalog = self.catalog
        job = resolve_job(doc, catalog)
        plan, par, m = job.plan, job.parallelism, job.shape
        cal = doc.spec.calibration
        k = engine_constants(cal)
        fabric = self.fabric(doc, k)
        n = plan.num_gpus
        used_nodes, accels, acc, ac, nvls = self.hardware(fabric, n, cal)
        warnings: list[str] = []
        if len(accels) > 1:
            warnings.append("mixed accelerators: " + ", ".join(accels) + f"; every GPU is costed as {acc.name}")
        placement = self.placement(plan)
        if len(used_nodes) > 1:
            require_routes(fabric, np.arange(n), "this job")
        if par.pipeline_schedule == "dualpipe":
            warnings.append("dualpipe is costed with the zb-h1 timeline (its two mirrored pipelines are not "
                            "simulated); memory counts its two model copies")

        flash = uses_flash_attention(ac, par.attention_backend)
        sharding = Sharding(plan.tp, plan.cp, plan.ep, plan.etp, par.sequence_parallel,
                            par.recompute_granularity, par.tp_comm_overlap, flash, zero3=par.zero_stage >= 3)
        precision = m.precision
        if precision == "fp8" and acc.peak_tflops.get("fp8", 0) <= acc.peak_tflops.get("bf16", 0):
            warnings.append(f"{acc.name} has no FP8 tensor cores: fp8 runs at the 16-bit rate")

        # ---- groups and communication models ----
        dims = {
            "tp": self.groups(fabric, placement, "tp", False, k, nvls),
            "cp": self.groups(fabric, placement, "cp", False, k, nvls),
            "dp": self.groups(fabric, placement, "dp-cp", False, k, nvls),
            "pp": self.groups(fabric, placement, "pp-pair", False, k, nvls),
        }
        if m.experts:
            dims["ep"] = self.groups(fabric, placement, "ep", True, k, nvls)
            dims["edp"] = self.groups(fabric, placement, "dp", True, k, nvls)
        used: dict[str, CollectiveCost] = {}

        def comm(dim: str, primitive: str, nbytes: float) -> float:
            model = dims.get(dim)
            if model is None:
                return 0.0
            c = model.cost(primitive, nbytes)
            key = f"{dim}:{primitive}"
            if key not in used or c.time_s > used[key].time_s:
                used[key] = c
            return c.time_s

        # ---- per-stage compute (per straggler pattern) ----
        stage_layers = _stage_layers(m, plan.pp, plan.vp)
        placement.stage_of_rank()
        slow = fabric.gpu_slowdown[:n]
        pipelines = placement.groups("pp")  # (replicas, pp): rank of each stage in each replica
        # The slowest member of every TP/CP/EP group sets its pace; a replica's stage is as slow
        # as the slowest GPU among the ranks that share that stage in that replica.
        placement.groups("dp")
        replica_slow = _replica_slowdowns(placement, slow)
        patterns, pattern_of_replica = np.unique(replica_slow, axis=0, return_inverse=True)
        pattern_of_replica = pattern_of_replica.reshape(-1)
        peak = acc.peak_for(precision)
        peak16 = acc.peak_for("bf16")

        def phases_for(slowdown: float):
            ops = OpCoster(peak, peak16, acc.hbm_tbps, ac, slowdown)
            dense = layer_cost(m, sharding, m.micro_batch, False, ops, comm, k)
            moe = layer_cost(m, sharding, m.micro_batch, True, ops, comm, k) if m.experts else None
            emb = embedding_cost(m, sharding, m.micro_batch, ops, comm)
            out = output_cost(m, sharding, m.micro_batch, ops, comm)
            return dense, moe, emb, out

        cache_phase: dict[float, tuple] = {}
        chunk_phases: list[list[list[tuple[Phase, Phase]]]] = []  # [pattern][stage][chunk]
        for pat in patterns:
            per_stage = []
            for s in range(plan.pp):
                f = float(pat[s])
                if f not in cache_phase:
                    cache_phase[f] = phases_for(f)
                dense, moe, emb, out = cache_phase[f]
                chunks = []
                for c, layers in enumerate(stage_layers[s]):
                    fwd, bwd = Phase(), Phase()
                    n_moe = sum(1 for i in layers if m.experts and i >= m.dense_layers)
                    fwd.add(dense.fwd, len(layers) - n_moe)
                    bwd.add(dense.bwd, len(layers) - n_moe)
                    if n_moe:
                        fwd.add(moe.fwd, n_moe)
                        bwd.add(moe.bwd, n_moe)
                    if s == 0 and c == 0:
                        fwd.add(emb.fwd)
                        bwd.add(emb.bwd)
                    if s == plan.pp - 1 and c == plan.vp - 1:
                        fwd.add(out.fwd)
                        bwd.add(out.bwd)
                    gap = 1.0 + ac.kernel_gap_fraction
                    for ph in (fwd, bwd):
                        ph.busy["compute"] *= gap
                        ph.busy["recompute"] *= gap
                    chunks.append((fwd, bwd))
                per_stage.append(chunks)
            chunk_phases.append(per_stage)

        # ---- pipeline ----
        pp_bytes = pp_message_bytes(m, sharding, m.micro_batch)
        p2p_s = comm("pp", "send_recv", pp_bytes) if plan.pp > 1 else 0.0
        schedules: list[ScheduleResult] = []
        stage_times: list[list[StageTimes]] = []
        simulated_micro = plan.num_microbatches
        for pi in range(len(patterns)):
            times = []
            for s in range(plan.pp):
                chunks = chunk_phases[pi][s]
                times.append(StageTimes([f.total_s + k.microbatch_overhead_s for f, _ in chunks],
                                        [b.total_s for _, b in chunks], [b.wgrad_s for _, b in chunks]))
            stage_times.append(times)
            key = (par.pipeline_schedule, plan.pp, plan.num_microbatches, plan.vp, p2p_s,
                   tuple((tuple(t.fwd), tuple(t.bwd), tuple(t.wgrad)) for t in times))
            hit = self._schedules.get(key)
            if hit is None:
                if len(self._schedules) > 16:
                    self._schedules.clear()
                hit = self._schedules[key] = simulate_steady(par.pipeline_schedule, plan.pp, plan.num_microbatches,
                                                             plan.vp, times, p2p_s, self.schedule_max_ops)
            else:
                self.reused.append("pipeline schedule")
            sched, simulated_micro = hit
            schedules.append(sched)

        # ---- data-parallel gradient reduction, optimizer, parameter gather ----
        dp_model = dims["dp"]
        zero = par.zero_stage or (1 if par.use_distributed_optimizer else 0)
        from .memory import stage_parameters

        stage_dp: list[dict] = []
        for s in range(plan.pp):
            # embedding/output sit in the first/last chunk only; stage_parameters adds them per call
            dense_chunks, expert_chunks = [], []
            for c, layers in enumerate(stage_layers[s]):
                d, e = stage_parameters(m, plan.tp, plan.ep, plan.etp, plan.pp, s, layers)
                if c > 0 and s == 0:
                    d -= m.vocab * m.h / plan.tp
                if c < plan.vp - 1 and s == plan.pp - 1 and (m.untied or plan.pp > 1):
                    d -= m.vocab * m.h / plan.tp
                dense_chunks.append(d)
                expert_chunks.append(e)
            stage_dp.append({"dense": dense_chunks, "expert": expert_chunks})

        grad_prim = "reduce_scatter" if zero >= 1 else "all_reduce"
        gb, pb = k.grad_reduce_bytes_per_param, k.param_gather_bytes_per_param

        dp_memo: dict[tuple, float] = {}

        def dp_time(params: float, model: CollectiveModel, primitive: str, nbytes_per_param: float) -> float:
            """Bucketed: ceil(params / bucket) collectives of one bucket each."""
            key = (params, id(model), primitive, nbytes_per_param)
            hit = dp_memo.get(key)
            if hit is not None:
                return hit
            if params <= 0 or model.shape.members.shape[1] <= 1:
                value = 0.0
            else:
                bucket = max(k.dp_bucket_params, 1_000_000 * plan.dp)
                buckets = max(1, math.ceil(params / bucket))
                size = params / buckets * nbytes_per_param
                value = buckets * comm("dp" if model is dp_model else "edp", primitive, size)
            dp_memo[key] = value
            return value

        step_end = 0.0
        per_pattern = []
        for pi, sched in enumerate(schedules):
            stage_info = []
            for s in range(plan.pp):
                last_compute = sched.stage_end[s]
                last_compute if not par.overlap_grad_reduce else None
                t_free = 0.0
                dp_busy = 0.0
                chunk_order = range(plan.vp - 1, -1, -1)  # chunks finish backward in reverse order
                for c in chunk_order:
                    ready = sched.last_backward_end[s][c] if par.overlap_grad_reduce else last_compute
                    dur = 0.0 if sharding.zero3 else dp_time(stage_dp[s]["dense"][c], dp_model, grad_prim, gb)
                    if m.experts and not sharding.zero3:
                        dur += dp_time(stage_dp[s]["expert"][c], dims["edp"], grad_prim, gb)
                    start = max(ready, t_free)
                    t_free = start + dur
                    dp_busy += dur
                stage_info.append({"last_compute": last_compute, "dp_end": max(t_free, last_compute),
                                   "dp_busy": dp_busy})
            per_pattern.append(stage_info)
            step_end = max(step_end, max(si["dp_end"] for si in stage_info))

        # optimizer (the sharded part) and the parameter all-gather
        opt_s = []
        ag_s = []
        for s in range(plan.pp):
            dense_total = sum(stage_dp[s]["dense"])
            expert_total = sum(stage_dp[s]["expert"])
            shard = (dense_total / (plan.dp * plan.cp) + expert_total / max(1, plan.num_gpus // (plan.etp * plan.ep * plan.pp))) \
                if zero >= 1 else dense_total + expert_total
            opt_s.append(shard * k.optimizer_bytes_per_param / (acc.hbm_tbps * 1e12 * ac.hbm_efficiency))
            ag = 0.0
            if 1 <= zero < 3:
                for c in range(plan.vp):
                    ag += dp_time(stage_dp[s]["dense"][c], dp_model, "all_gather", pb)
            ag_s.append(ag)
        grad_norm_s = comm("dp", "all_reduce", 8.0) + (comm("pp", "send_recv", 8.0) if plan.pp > 1 else 0.0)
        optimizer_s = max(opt_s) + grad_norm_s + k.step_overhead_s
        # overlap_param_gather hides the gather behind the next step's forward, except the first
        # chunk's first bucket; without it the gather follows the optimizer.
        if zero >= 1 and par.overlap_param_gather:
            first = [ag_s[s] / max(1, plan.vp) / max(1, math.ceil(sum(stage_dp[s]["dense"]) / plan.vp /
                                                                       max(k.dp_bucket_params, 1_000_000 * plan.dp)))
                     for s in range(plan.pp)]
            ag_exposed = max(first)
        else:
            ag_exposed = max(ag_s)
        step_time = step_end + optimizer_s + ag_exposed

        # ---- critical device and breakdown ----
        worst_pattern = int(np.argmax([max(si["dp_end"] for si in info) for info in per_pattern]))
        sched = schedules[worst_pattern]
        # the most loaded stage: the one whose own work (compute + exposed comm) is largest
        loads = [sched.stage_busy[s] for s in range(plan.pp)]
        crit_stage = int(np.argmax(loads))
        # the reference replica for the breakdown: a nominal one when a straggler exists, so
        # that its cost shows as everyone else's wait
        nominal_pattern = int(np.argmin([float(np.max(p)) for p in patterns]))
        ref_pattern = nominal_pattern
        ref_sched = schedules[ref_pattern]
        ref_info = per_pattern[ref_pattern][crit_stage]
        breakdown = dict.fromkeys(BREAKDOWN_KEYS, 0.0)
        hidden = dict.fromkeys(HIDDEN_KEYS, 0.0)
        phases = chunk_phases[ref_pattern][crit_stage]
        waits_pp = 0.0
        zb = par.pipeline_schedule in ("zb-h1", "dualpipe")
        repeat = plan.num_microbatches / simulated_micro  # the steady state repeats what was simulated
        for op in ref_sched.stage_ops(crit_stage):
            fwd, bwd = phases[op.chunk]
            waits_pp += op.wait_pp
            if op.kind == FWD:
                ph, scale = fwd, 1.0
            elif op.kind == B:
                ph = bwd
                scale = 1.0
                if zb and bwd.total_s > 0:
                    scale = (bwd.total_s - bwd.wgrad_s) / bwd.total_s
            else:
                ph = bwd
                scale = bwd.wgrad_s / bwd.total_s if bwd.total_s > 0 else 0.0
            for key in KINDS:
                breakdown[key] += ph.busy[key] * scale * repeat
            for key in ("tp_comm", "cp_comm", "ep_comm", "dp_comm"):
                hidden[key] += ph.hidden[key] * scale * repeat
        breakdown["compute"] += k.microbatch_overhead_s * plan.num_microbatches * plan.vp
        dp_exposed = max(0.0, ref_info["dp_end"] - ref_info["last_compute"])
        breakdown["dp_comm"] += dp_exposed + ag_exposed
        hidden["dp_comm"] += max(0.0, ref_info["dp_busy"] - dp_exposed) + max(0.0, ag_s[crit_stage] - ag_exposed)
        breakdown["optimizer"] = optimizer_s
        breakdown["pp_comm"] = waits_pp
        accounted = sum(breakdown.values())
        idle = max(0.0, step_time - accounted)
        f_stage = sum(f.total_s for f, _ in phases)
        b_stage = sum(b.total_s for _, b in phases)
        w_stage = sum(b.wgrad_s for _, b in phases)
        bubble = min(idle, ideal_bubble_s(par.pipeline_schedule, plan.pp, plan.num_microbatches, plan.vp,
                                          f_stage, b_stage, w_stage))
        breakdown["bubble"] = bubble
        breakdown["imbalance_wait"] = idle - bubble
        # keep the sum exact
        drift = step_time - sum(breakdown.values())
        if abs(drift) > 1e-12:
            breakdown["compute"] += drift
        hidden["pp_comm"] = max(0.0, p2p_s * 2 * plan.num_microbatches * plan.vp - waits_pp) if plan.pp > 1 else 0.0

        # ---- FLOPs, MFU ----
        model_flops = F.step_model_flops(m)
        hw_flops = model_flops + F.recompute_flops_per_token(m, par.recompute_granularity) * m.global_batch * m.s
        tokens = m.global_batch * m.s
        mfu = model_flops / (step_time * n * peak * 1e12)
        hfu = hw_flops / (step_time * n * peak * 1e12)

        # ---- memory ----
        mem = estimate_memory(m, plan, par, [[i for ch in st for i in ch] for st in stage_layers], k, flash=flash)
        hbm = acc.hbm_gib * GIB
        fits = mem.total <= hbm
        reason = ""
        if not fits:
            _fits_somewhere(m, n, acc, k)
            parts = mem.gib()
            reason = (f"stage {mem.stage} needs {parts['total']:.1f} GiB per GPU, {acc.name} has {acc.hbm_gib:g} GiB "
                      f"(params {parts['params']:.1f}, grads {parts['grads']:.1f}, optimizer {parts['optimizer']:.1f}, "
                      f"activations {parts['activations']:.1f}): " + _memory_advice(par, plan, mem))
            warnings.append(reason)

        result = Evaluation(
            num_gpus=n, step_time_s=step_time, tokens_per_s=tokens / step_time,
            model_tflops_per_gpu=model_flops / step_time / n / 1e12, mfu=mfu, hfu=hfu,
            breakdown_s=breakdown, hidden_comm_s=hidden,
            memory_gib_per_gpu={k_: v for k_, v in mem.gib().items() if k_ != "temporaries"} | {
                "temporaries": mem.temporaries / GIB},
            fits_in_memory=fits, bottlenecks=[], warnings=warnings, memory_reason=reason,
        )
        result.plan = {"tp": plan.tp, "pp": plan.pp, "cp": plan.cp, "ep": plan.ep, "etp": plan.etp, "dp": plan.dp,
                       "vp": plan.vp, "num_microbatches": plan.num_microbatches,
                       "schedule": par.pipeline_schedule, "rank_order": "-".join(plan.rank_order),
                       "accelerator": acc.name, "precision": precision}
        result.collectives = {key: {"time_s": c.time_s, "algorithm": c.algorithm, "protocol": c.protocol,
                                    "latency_s": c.latency_s, "bandwidth_s": c.bandwidth_s,
                                    "bottleneck": c.bottleneck, "classes": c.classes}
                              for key, c in sorted(used.items())}
        result.stages = [{"stage": s, "layers": sum(len(ch) for ch in stage_layers[s]),
                          "forward_s": sum(f.total_s for f, _ in chunk_phases[ref_pattern][s]),
                          "backward_s": sum(b.total_s for _, b in chunk_phases[ref_pattern][s]),
                          "busy_s": ref_sched.stage_busy[s], "end_s": ref_sched.stage_end[s]}
                         for s in range(plan.pp)]
        if not self.detail:
            result.engine_time_s = time.perf_counter() - t0
            return result
        _links_and_bottlenecks(result, fabric, used, breakdown, plan, m, k, step_time, doc)
        crit_rank = int(pipelines[0, crit_stage]) if pipelines.size else 0
        result.critical_device = crit_rank
        def build_events():
            full = schedules if simulated_micro == plan.num_microbatches else [
                simulate(par.pipeline_schedule, plan.pp, plan.num_microbatches, plan.vp, times, p2p_s)
                for times in stage_times]
            return _events(full, patterns, pattern_of_replica, chunk_phases, per_pattern, pipelines, plan, par,
                           p2p_s, pp_bytes, optimizer_s, step_end, ag_exposed, step_time)

        result.events_builder = build_events
        result.devices = {int(pipelines[r, s]): {"stage": s, "replica": r, "node": fabric.node_ids[fabric.gpu_node[int(pipelines[r, s])]]}
                          for r in _representative_replicas(pattern_of_replica) for s in range(plan.pp)}
        result.constants = {"engine": k, "accelerator": ac}
        result.engine_time_s = time.perf_counter() - t0
        return result


def _replica_slowdowns(placement: Placement, slow: np.ndarray) -> np.ndarray:
    """(replicas, pp): per replica and stage, the slowest GPU that shares that stage's work."""
    grid, axes = placement.dense_grid, placement.dense_axes
    # ranks of a (replica, stage): all tp and cp ranks with that dp and pp coordinate
    moved = np.moveaxis(grid, [axes.index("dp"), axes.index("pp")], [0, 1])
    d, p = moved.shape[0], moved.shape[1]
    ranks = moved.reshape(d, p, -1)
    return slow[ranks].max(axis=2)


def _representative_replicas(pattern_of_replica: np.ndarray) -> list[int]:
    seen, out = set(), []
    for r, pat in enumerate(pattern_of_replica.tolist()):
        if pat not in seen:
            seen.add(pat)
            out.append(r)
    return out


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


def _fabric_constants(k: EngineConstants) -> tuple:
    return (k.nvlink_efficiency, k.pcie_efficiency, k.infiniband_nic_efficiency, k.ethernet_nic_efficiency,
            k.host_bounce_efficiency)


def _rating_only(change) -> bool:
    """A change that alters capacities but not the fabric's shape."""
    if change.collection in ("workload", "parallelism", "layout", "racks"):
        return True
    if change.action != "changed":
        return False
    if change.collection == "links":
        return change.field in ("bandwidth_gbps", "slowdown", "latency_us")
    placement_only = ("rack", "slot", "name", "height_units")  # where it stands, not how it is wired
    if change.collection == "nodes":
        return change.field in ("slowdown", "gpu_slowdown") + placement_only
    return change.collection == "switches" and change.field in placement_only


def _links_and_bottlenecks(result: Evaluation, fabric: Fabric, used: dict, breakdown: dict, plan, m, k,
                           step_time: float, doc: Document) -> None:
    """Per-link bytes per step by traffic kind, utilization, and the top bottlenecks."""
    counts = {"tp": 4, "cp": 2, "ep": 4, "pp": 2, "dp": 1, "edp": 1}
    load: dict[str, np.ndarray] = {}
    for key, c in used.items():
        if c.link_bytes is None:
            continue
        dim = key.split(":")[0]
        kind = {"edp": "dp_comm"}.get(dim, f"{dim}_comm")
        reps = counts.get(dim, 1) * (plan.num_microbatches if dim in ("tp", "cp", "ep", "pp") else 1)
        load[kind] = load.get(kind, 0) + c.link_bytes * reps
    result.link_load = load
    rows = []
    if load:
        total = sum(load.values())
        cap = fabric.link_cap_Bps
        with np.errstate(divide="ignore", invalid="ignore"):
            util = np.where(cap > 0, np.minimum(1.0, total / (cap * step_time)), 0.0)
        result.link_utilization_array = util
        top = np.argsort(-util)[:200]
        for li in top.tolist():
            if total[li] <= 0:
                break
            link = doc.links[li]
            rows.append({"link": link.id, "a": link.a, "b": link.b, "utilization": float(util[li]),
                         "bytes": float(total[li]), "by_kind": {kd: float(v[li]) for kd, v in load.items() if v[li] > 0}})
    result.link_utilization = rows
    bottlenecks = []
    for key, c in sorted(used.items(), key=lambda kv: kv[1].time_s, reverse=True):
        dim = key.split(":")[0]
        kind = {"edp": "dp_comm"}.get(dim, f"{dim}_comm")
        if not c.bottleneck or c.time_s <= 0:
            continue
        bottlenecks.append({"resource": c.bottleneck, "kind": kind, "utilization": round(c.utilization, 3),
                            "collective": key.split(":")[1], "algorithm": c.algorithm,
                            "exposed_s": breakdown.get(kind, 0.0),
                            "links": [doc.links[i].id for i in c.bottleneck_links[:64]]})
    compute_share = (breakdown["compute"] + breakdown["recompute"]) / step_time if step_time else 0
    bottlenecks.append({"resource": "GPU compute", "kind": "compute", "utilization": round(compute_share, 3),
                        "exposed_s": breakdown["compute"] + breakdown["recompute"]})
    if breakdown["bubble"] > 0:
        bottlenecks.append({"resource": "pipeline schedule", "kind": "bubble",
                            "utilization": round(breakdown["bubble"] / step_time, 3), "exposed_s": breakdown["bubble"]})
    bottlenecks.sort(key=lambda b: b["exposed_s"], reverse=True)
    seen, unique = set(), []
    for b in bottlenecks:  # one row per (kind, resource): the collective that exposes most
        key = (b["kind"], b["resource"])
        if key not in seen:
            seen.add(key)
            unique.append(b)
    result.bottlenecks = unique[:8]


def _events(schedules, patterns, pattern_of_replica, chunk_phases, per_pattern, pipelines, plan, par, p2p_s,
            pp_bytes, optimizer_s, step_end, ag_exposed, step_time) -> list[Event]:
    """Per-device events of one device per (stage, distinct replica)."""
    events: list[Event] = []
    ends = [max(info["dp_end"] for info in per) for per in per_pattern]
    worst_pi = int(np.argmax(ends))
    worst_replica = int(np.flatnonzero(pattern_of_replica == worst_pi)[0])
    for replica in _representative_replicas(pattern_of_replica):
        pi = int(pattern_of_replica[replica])
        sched = schedules[pi]
        for op in sched.ops:
            device = int(pipelines[replica, op.stage])
            fwd, bwd = chunk_phases[pi][op.stage][op.chunk]
            label = f"{'FBW'[op.kind]}{op.micro} c{op.chunk}"
            if op.wait > 0:
                kind = "pp_comm" if op.wait_pp >= op.wait - 1e-12 else "bubble"
                # forward waits on the previous stage's forward, backward on the next stage's backward
                if op.kind == FWD:
                    src = op.stage - 1 if op.stage > 0 else plan.pp - 1
                else:
                    src = op.stage + 1 if op.stage < plan.pp - 1 else 0
                events.append(Event(device, "wait", op.start - op.wait, op.start, kind, f"wait before {label}",
                                    op.micro, op.chunk, waited_for=int(pipelines[replica, src])))
            ph = fwd if op.kind == FWD else bwd
            if op.kind == W:
                events.append(Event(device, "compute", op.start, op.end, "wgrad", label, op.micro, op.chunk))
                continue
            duration = op.end - op.start
            total = ph.total_s or 1.0
            scale = duration / total
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
                    events.append(Event(device, stream, t, t + d, key, f"{key} {label}", op.micro, op.chunk,
                                        group=stream))
                    t += d
                h = ph.hidden[key] * scale
                if h > 0:
                    events.append(Event(device, stream, op.start, op.start + h, key + "_hidden",
                                        f"{key} (overlapped) {label}", op.micro, op.chunk, group=stream))
            if plan.pp > 1 and ((op.kind == FWD and op.stage < plan.pp - 1) or (op.kind == B and op.stage > 0)):
                events.append(Event(device, "pp", op.end, op.end + p2p_s, "pp_comm",
                                    f"send {'activation' if op.kind == FWD else 'gradient'} {label}", op.micro,
                                    op.chunk, bytes=pp_bytes, group="pp"))
        for s in range(plan.pp):
            device = int(pipelines[replica, s])
            info = per_pattern[pi][s]
            if info["dp_busy"] > 0:
                events.append(Event(device, "dp", info["dp_end"] - info["dp_busy"], info["dp_end"], "dp_comm",
                                    "gradient reduction", group="dp"))
            if step_end > info["dp_end"]:
                slowest = max(range(plan.pp), key=lambda st: per_pattern[worst_pi][st]["dp_end"])
                events.append(Event(device, "wait", info["dp_end"], step_end, "imbalance_wait",
                                    "wait for the slowest replica/stage",
                                    waited_for=int(pipelines[worst_replica, slowest])))
            events.append(Event(device, "compute", step_end, step_end + optimizer_s, "optimizer", "optimizer step"))
            if ag_exposed > 0:
                events.append(Event(device, "dp", step_end + optimizer_s, step_time, "dp_comm", "parameter all-gather",
                                    group="dp"))
    events.sort(key=lambda e: (e.device, e.start_s))
    return events


_default_engine: Engine | None = None


def evaluate(doc: Document, catalog: Catalog | None = None) -> Evaluation:
    """Evaluate with a shared engine (its caches help repeated calls on similar documents)."""
    global _default_engine
    if _default_engine is None or (catalog is not None and catalog is not _default_engine.catalog):
        _default_engine = Engine(catalog)
    return _default_engine.evaluate(doc)
