"""One training step on one cluster: the engine's stages put together (see stages/__init__.py).

resolve job -> fabric -> placement and groups -> collective costs -> per-layer phases ->
pipeline schedule -> DP and optimizer -> breakdown, memory and the result (links, events).
`Engine` keeps what stays valid between evaluations (fabric, placement, groups, schedules, and
its EngineCache of plan-dependent work: engine/cache.py) and runs the stages in order; each stage
is a function of the earlier stages' results.
"""
from __future__ import annotations

import copy
import functools
import math
import time

import numpy as np

from ..model.catalog import Catalog, default_catalog
from ..model.document import Document
from ..model.jobs import document_jobs, with_job_path
from ..model.plan import ResolvedPlan
from ..problems import DesignerError, Problem
from .collectives import CollectiveModel
from .cache import EngineCache
from .constants import EngineConstants, engine_constants
from .fabric import Fabric, build_fabric, refresh_capacities, sync_view
from ..model.network_reach import describe_unusable
from .job_placement import PlacedJob, maybe_unusable, place_jobs
from .placement import Placement, place
from .schedule import ScheduleResult, StageTimes, simulate_steady
from .stages.breakdown import BREAKDOWN_KEYS, HIDDEN_KEYS, decompose_step
from .stages.comm import CommLedger
from .stages.dp import reduce_and_step
from .stages.events import build_events
from .stages.fit import fit_memory
from .stages.job import (Hardware, Job, design_accelerators, hardware, job_warnings, require_network,
                         resolve_job)
from .stages.jobs import JobResult, contention, demand, interference, rating_signature, tier_rows
from .stages.layout import lay_out, representative_replicas
from .stages.links import link_loads, links_and_bottlenecks
from .stages.pipeline import schedule_pipeline
from .stages.result import Evaluation, Event, summarize

__all__ = ["BREAKDOWN_KEYS", "HIDDEN_KEYS", "Engine", "Evaluation", "Event", "Job", "resolve_job"]


class Engine:
    """Evaluates documents; reuses fabric, placement, groups and layer costs while they stay valid."""

    def __init__(self, catalog: Catalog | None = None, detail: bool = True, schedule_max_ops: int = 4096,
                 group_budget: int | None = None):
        """`detail=False` leaves out per-link loads, bottlenecks and events (a plan search only
        needs the step); `schedule_max_ops` bounds each pipeline simulation (see simulate_steady);
        `group_budget`: GPUs x collective groups kept (GROUP_BUDGET, WINDOW_GROUP_BUDGET)."""
        self.catalog = catalog or default_catalog()
        self.detail = detail
        self.group_budget = GROUP_BUDGET if group_budget is None else group_budget
        self.schedule_max_ops = schedule_max_ops
        self._fabric_key = None
        self._fabric: Fabric | None = None
        self.reused: list[str] = []  # what the last evaluation could reuse (for tests and the UI)
        self.cache = EngineCache()  # what the stages reuse between evaluations (engine/cache.py)

    @property
    def built_fabric(self) -> Fabric | None:
        """The fabric of the design last evaluated (None before the first evaluation): the GPUs,
        NICs and links a trace of that result names its devices by."""
        return self._fabric

    # ---- the stages, in order -----------------------------------------------------------
    def evaluate(self, doc: Document, job: PlacedJob | None = None) -> Evaluation:
        """The design's first job, with every job of the design in `result.jobs` (evaluate_jobs:
        the jobs share the fabric); or, given `job`, that one job as if it ran alone."""
        self.reused = []
        cache = self.cache
        outermost = cache.groups_in_use is None
        if outermost:
            cache.groups_in_use = set()
        try:
            if job is None:
                return self.evaluate_jobs(doc)
            return self.evaluate_job(doc, job)
        finally:
            if outermost:
                cache.groups_in_use = None

    def evaluate_jobs(self, doc: Document) -> Evaluation:
        """The first job's evaluation, with `jobs` holding every job's JobResult: each job costed
        alone, then again on its view of the fabric with the others' traffic taken off the links
        they share (stages/jobs.py says how much). A re-rated fabric keeps the costing of every
        job whose NICs, leaves and pods kept their rates (EngineCache.jobs)."""
        t0 = time.perf_counter()
        k = engine_constants(doc.spec.calibration)
        fabric = self.fabric(doc, k)
        if not doc.spec.jobs and every_gpu_up(fabric) and not maybe_unusable(fabric):  # one job, first GPUs
            spec = document_jobs(doc)[0]
            placed = PlacedJob(0, spec, None, "spec")
            result = self.evaluate_job(doc, placed, fabric)
            result.jobs = [JobResult(spec.name, placed, result, result)]
            result.jobs[0].hold_weakly(result)
            return result
        placement = self.place_jobs(doc, fabric)
        if placement.problems:
            raise DesignerError(placement.problems)
        placed = placement.jobs
        costed = self.cache.jobs_on(fabric)  # a rebuilt fabric: nothing costed before holds
        alone, problems = [], []
        for p in placed:  # every job's problems at once: a leaf down may cut off several
            key = (p.spec, p.gpus.tobytes(), repr(doc.spec.calibration), self.detail, rating_signature(fabric, p.gpus))
            hit = costed.get(("alone", p.name))
            if hit is not None and hit[0] == key:  # this job and its GPUs did not change: reuse its costing
                alone.append(hit[1])
                self.reused.append(f"job {p.name}")
                continue
            # with other jobs the link detail waits: the shared costing may replace this one
            links_later: list[LinkWork] | None = [] if len(placed) > 1 else None
            try:
                result = self.evaluate_job(doc, p, links_later=links_later)
            except DesignerError as exc:
                problems += exc.problems
                continue
            costed[("alone", p.name)] = (copy.deepcopy(key), result, links_later)
            alone.append(result)
        if problems:
            raise DesignerError(problems)
        results = [JobResult(p.name, p, r, r) for p, r in zip(placed, alone)]
        if len(placed) > 1 and self.detail:
            demands = [demand(fabric, r, p.gpus) for r, p in zip(alone, placed)]
            tiers = tier_rows(fabric, demands)
            for j, p in enumerate(placed):
                factors, blame = contention(fabric, demands, j, tiers)
                if factors is None:
                    continue
                hit = costed.get(("shared", p.name))
                if hit is not None and hit[0] is alone[j] and hit[1] == factors[2]:
                    shared = hit[2]  # the same job under the same contention
                else:
                    view = self.job_fabric(doc, k, p.gpus, shared=True)
                    self.set_contention(view, factors)
                    shared = self.evaluate_job(doc, p, view)
                    costed[("shared", p.name)] = (alone[j], factors[2], shared)
                results[j].result = shared
                results[j].interference = interference(results[j], blame, [q.name for q in placed], fabric,
                                                       demands[j].bytes)
        for p, job in zip(placed, results):
            if job.result is job.alone:  # nobody slows it: its alone costing is the answer, in full
                work = costed[("alone", p.name)][2]
                while work:
                    work.pop().finish(job.result, doc)
            job.node_ids = job.nodes(fabric.node_ids, fabric.gpu_node)
        if placement.skipped:  # say which servers the jobs across servers left out, and why
            note = f"placement skipped servers it cannot reach: {describe_unusable(placement.skipped)}"
            for job in results:
                if len(job.placed.gpus) > int(fabric.node_gpus.max(initial=0)) and note not in job.result.warnings:
                    job.result.warnings.append(note)
        first = results[0].result
        first.jobs = results
        for job in results:
            job.hold_weakly(first)
        first.engine_time_s = time.perf_counter() - t0
        return first

    def place_jobs(self, doc: Document, fabric: Fabric):
        """place_jobs, kept while the fabric (servers up and down) and the jobs' placements stay the same."""
        key = [(j.name, j.placement, j.parallelism.num_gpus if j.parallelism else None) for j in document_jobs(doc)]
        # which servers a job across servers can reach follows the cables and NICs out of service
        key.append((np.flatnonzero(fabric.link_cap_Bps <= 0).tobytes(), np.flatnonzero(fabric.nic_cap_Bps <= 0).tobytes()))
        hit = self.cache.job_placement
        if hit is not None and hit[0] is fabric and hit[1] == key:
            return hit[2].with_specs(document_jobs(doc))
        placement = place_jobs(doc, fabric, fabric.gpu_up)
        self.cache.job_placement = (fabric, copy.deepcopy(key), placement)
        return placement

    def evaluate_job(self, doc: Document, job: PlacedJob, fabric: Fabric | None = None,
                     links_later: list | None = None) -> Evaluation:
        """One job on its GPUs (`job.gpus`; None: the cluster's first ones), on `fabric` (its view
        with the other jobs' share of the links taken off) or on the cluster's own fabric.
        `links_later`: only the bytes per link now; the rest of the link detail is appended to
        it as a LinkWork (a job costed alone and then again with the others' traffic needs the
        detail of one of the two)."""
        t0 = time.perf_counter()
        cal = doc.spec.calibration
        k = engine_constants(cal)
        if fabric is None:
            fabric = self.job_fabric(doc, k, job.gpus)
        try:
            resolved = resolve_job(doc, self.catalog, job.spec if doc.spec.jobs else None,
                                   None if job.gpus is None else len(job.gpus), design_accelerators(fabric))
        except DesignerError as exc:
            raise DesignerError(with_job_path(exc.problems, job.path, job.name if doc.spec.jobs else None)) from None
        plan = resolved.plan
        hw = self.hardware(fabric, plan.num_gpus, cal)
        placement = self.placement(plan)
        try:
            require_network(fabric, hw, plan.num_gpus)
            dims = self.dimension_groups(fabric, placement, k, hw.nvls, bool(resolved.shape.experts))
            comm = CommLedger(dims)
            layout = lay_out(resolved, fabric, placement)
            phases = self.cache.layer_phases(fabric.view_key if fabric is not self._fabric
                                             else "cluster", resolved, hw, k, layout, comm)
            pipe = schedule_pipeline(resolved, k, phases, comm, self.simulate_schedule)
            # its groups may find no path
            dp = reduce_and_step(resolved, hw, k, layout, phases, pipe, comm, self.cache.stage_params)
        except DesignerError as exc:
            if not doc.spec.jobs:
                raise
            raise DesignerError(with_job_path(exc.problems, "spec", job.name)) from None
        bd = decompose_step(resolved, k, layout, phases, pipe, dp)
        mem = fit_memory(resolved, hw, k, layout, phases.sharding.flash_attention)
        warnings = job_warnings(resolved, hw, placement, dims["tp"].shape.spans_servers)
        result = summarize(resolved, hw, layout, phases, pipe, dp, bd, mem, comm, warnings)
        _require_finite(result)
        if self.detail:
            if links_later is not None:
                result.link_load = link_loads(comm.used, bd.seconds, result.hidden_comm_s, plan,
                                              len(fabric.link_ids))[0]
                links_later.append(LinkWork(fabric, comm.used, bd.seconds, plan, dp.step_time))
            else:
                links_and_bottlenecks(result, fabric, comm.used, bd.seconds, plan, dp.step_time, doc)
            pipelines = layout.pipelines
            result.critical_device = int(pipelines[0, bd.critical_stage]) if pipelines.size else 0
            result.events_builder = functools.partial(build_events, resolved, layout, phases, pipe, dp)
            result.devices = _devices(fabric, pipelines, representative_replicas(layout.pattern_of_replica), plan.pp)
            result.constants = {"engine": k, "accelerator": hw.ac}
        else:
            _drop_link_bytes(dims.values())
        result.engine_time_s = time.perf_counter() - t0
        return result

    def job_fabric(self, doc: Document, k: EngineConstants, gpus, shared: bool = False) -> Fabric:
        """The fabric a job on `gpus` sees: the cluster's own when they are its first GPUs (one job,
        nothing down), else a view of it that keeps the job's GPUs in rank order (cached per GPU set).
        `shared`: the view that set_contention takes the other jobs' share of the links off. A job's
        alone and shared costings use the same view (and so the same groups, routes and the costs
        of groups that stay inside their servers); asking for it alone takes the contention off."""
        fabric = self.fabric(doc, k)
        if gpus is None:
            return fabric
        if not shared and (len(gpus) and gpus[0] == 0 and gpus[-1] == len(gpus) - 1
                           and np.all(np.diff(gpus) == 1)):
            return fabric
        key = hash(gpus.tobytes())
        views = self.cache.job_views
        view = views.get(key)
        if view is None or view._base is not fabric or not np.array_equal(view._gpus, gpus):
            if len(views) > 64:
                views.clear()
            view = views[key] = fabric.view(gpus, key)
        elif not shared and view._contention is not None:
            self.set_contention(view, None)
        return view

    def set_contention(self, view: Fabric, contention) -> None:
        """The other jobs' share of each leaf's and pod's up-links (divisors of their capacity), and
        the job's collective costs recomputed when it changed."""
        view._contention = contention
        if sync_view(view):
            key = view.view_key
            for (vkey, *_), model in self.cache.groups.items():
                if vkey == key:
                    model.invalidate_capacities()

    def let_go_of_reshaped(self, doc: Document) -> None:
        """Let go now of the fabric (and what was built on it) when an edit since it changed the network's
        shape: the next evaluation of `doc` builds it again anyway, and a caller that works on `doc`
        first (the window's design check, ~20 MB of temporaries at 131k GPUs) does not hold both."""
        if self._fabric is None or self._fabric_key is None:
            return
        if self._fabric_key[0] is doc.lineage:  # (another design: built anew)
            changes = doc.changes_since(self._fabric_key[1])
            if changes is not None and all(c.collection in NOT_THE_FABRIC or _rating_only(c) for c in changes):
                return  # kept, or re-rated in place
        self._fabric = self._fabric_key = None
        self.cache.forget_fabric()

    # ---- cached stages ------------------------------------------------------------------
    def fabric(self, doc: Document, k: EngineConstants) -> Fabric:
        """The fabric of `doc`: rebuilt when the network's shape changed, only re-rated when
        just bandwidths or slowdowns changed (the document's change log says which)."""
        constants = _fabric_constants(k)
        if self._fabric is not None and self._fabric_key is not None:
            doc_id, revision, old_constants = self._fabric_key
            if doc_id == doc.lineage and old_constants == constants:
                changes = doc.changes_since(revision)
                if changes is not None:  # the job, the canvas layout and the prices are not the fabric
                    changes = [c for c in changes if c.collection not in NOT_THE_FABRIC]
                if changes == []:
                    self._fabric_key = (doc.lineage, doc.revision, constants)
                    return self._fabric
                if changes is not None and all(_rating_only(c) for c in changes):
                    index = doc.link_id_index.of(self._fabric.link_ids, self._fabric.link_ids_version)  # (the design's, shared with the check)
                    changed = [index.get(c.id) for c in changes if c.collection == "links"]
                    if any(c.collection == "switches" and c.field == "state" for c in changes):
                        changed = [None]  # a switch down takes its links with it: re-read them all
                    refresh_capacities(self._fabric, doc, None if None in changed else changed)
                    self._fabric_key = (doc.lineage, doc.revision, constants)
                    for model in self.cache.groups.values():
                        model.invalidate_capacities()
                    for view in self.cache.job_views.values():
                        sync_view(view)
                    self.reused.append("fabric, placement, groups and routes (re-rated links)")
                    return self._fabric
        # the old fabric and what the cache made of it let go before the new one is built, not beside it
        self._fabric = self._fabric_key = None
        self.cache.forget_fabric()
        self._fabric = build_fabric(doc, self.catalog, k)
        self._fabric_key = (doc.lineage, doc.revision, constants)
        return self._fabric

    def placement(self, plan: ResolvedPlan) -> Placement:
        # Keyed by the layout of ranks only: virtual stages and the micro-batch count do not
        # move a rank, so a plan search that varies them reuses placement, groups and routes.
        key = plan.rank_layout()
        placements = self.cache.placements
        p = placements.get(key)
        if p is None:
            if len(placements) >= _cache_limit(256, PLACEMENT_BUDGET, plan.num_gpus):
                placements.clear()
            p = placements[key] = place(key)
        return p

    def groups(self, fabric: Fabric, placement: Placement, dim: str, expert: bool, k: EngineConstants,
               nvls: bool) -> CollectiveModel:
        key = (fabric.view_key, placement.plan, dim, expert, nvls)
        groups = self.cache.groups
        in_use = self.cache.groups_in_use
        if in_use is not None:
            in_use.add(key)
        model = groups.get(key)
        if model is None:
            limit = _cache_limit(1024, self.group_budget, fabric.num_gpus)
            if len(groups) >= limit:  # a plan search visits many layouts: keep the recent ones
                # never those of the evaluation under way: a plan (or several jobs) with more groups than
                # the limit would otherwise build some of them again at every evaluation
                stale = [old for old in groups if in_use is None or old not in in_use]
                for old in stale[:max(1, limit // 4)]:
                    del groups[old]
            if dim == "pp-pair":
                members = placement.pp_pairs()
            else:
                members = placement.groups(dim, expert)
            model = groups[key] = CollectiveModel(fabric, members, k, nvls, name=dim, link_bytes=self.detail)
        return model

    def dimension_groups(self, fabric: Fabric, placement: Placement, k: EngineConstants, nvls: bool,
                         experts: bool) -> dict[str, CollectiveModel]:
        """Every dimension's groups, by the names the stages cost collectives on (see CommLedger)."""
        dims = {
            "tp": self.groups(fabric, placement, "tp", False, k, nvls),
            "cp": self.groups(fabric, placement, "cp", False, k, nvls),
            "dp": self.groups(fabric, placement, "dp-cp", False, k, nvls),
            "pp": self.groups(fabric, placement, "pp-pair", False, k, nvls),
        }
        if experts:
            dims["ep"] = self.groups(fabric, placement, "ep", True, k, nvls)
            dims["edp"] = self.groups(fabric, placement, "dp", True, k, nvls)
        return dims

    def simulate_schedule(self, schedule: str, pp: int, micro: int, vp: int, times: list[StageTimes],
                          p2p_s: float) -> tuple[ScheduleResult, int]:
        """The pipeline schedule of these stage times (reused while they repeat, as in a plan
        search or after a change that leaves the job alone)."""
        key = (schedule, pp, micro, vp, p2p_s, tuple((tuple(t.fwd), tuple(t.bwd), tuple(t.wgrad)) for t in times))
        hit = self.cache.schedules.get(key)
        if hit is None:  # the oldest goes: a search often comes back to a recent one
            hit = self.cache.schedules.put(key, simulate_steady(schedule, pp, micro, vp, times, p2p_s,
                                                                self.schedule_max_ops))
        else:
            self.reused.append("pipeline schedule")
        return hit

    def hardware(self, fabric: Fabric, num_gpus: int, calibration: dict) -> Hardware:
        """The hardware of a job on the first `num_gpus` GPUs (evaluate and the search's bound share it).

        Cached per (fabric, GPU count, calibration): it reads the servers' accelerators, which
        only a rebuilt fabric changes (a re-rated one keeps them), and costs 18 ms at 16k GPUs."""
        kept = self.cache.hardware
        for i, (held, gpus, cal, hw) in enumerate(kept):
            if held is fabric:
                if gpus == num_gpus and cal == calibration:
                    return hw
                del kept[i]
                break
        hw = hardware(fabric, num_gpus, calibration, self.catalog)
        kept.insert(0, (fabric, num_gpus, copy.deepcopy(calibration), hw))
        del kept[MAX_HARDWARE:]
        return hw

    def layer_comm(self, doc: Document, plan: ResolvedPlan):
        """The communication function `layer_cost` uses for the TP, CP and EP groups of `plan`
        (DP priced at zero), as `evaluate` builds it: for bounds in a plan search."""
        k = engine_constants(doc.spec.calibration)
        fabric = self.fabric(doc, k)
        hw = self.hardware(fabric, plan.num_gpus, doc.spec.calibration)
        require_network(fabric, hw, plan.num_gpus)  # as evaluate: a GPU without a NIC is bad input
        nvls = hw.nvls
        placement = self.placement(plan)
        dims = {d: self.groups(fabric, placement, d, False, k, nvls) for d in ("tp", "cp")}
        if plan.ep > 1 or plan.etp != plan.tp:
            dims["ep"] = self.groups(fabric, placement, "ep", True, k, nvls)

        def comm(dim: str, primitive: str, nbytes: float) -> float:
            model = dims.get(dim)
            return model.cost(primitive, nbytes).time_s if model is not None else 0.0

        return comm


class LinkWork:
    """The link detail of a costing, left for later (Engine.evaluate_job's `links_later`)."""
    fabric: Fabric
    used: dict
    breakdown: dict[str, float]
    plan: ResolvedPlan
    step_time: float

    __slots__ = ("fabric", "used", "breakdown", "plan", "step_time")

    def __init__(self, fabric: Fabric, used: dict, breakdown: dict[str, float], plan: ResolvedPlan,
                 step_time: float) -> None:
        self.fabric = fabric
        self.used = used
        self.breakdown = breakdown
        self.plan = plan
        self.step_time = step_time

    def finish(self, result: Evaluation, doc: Document) -> None:
        links_and_bottlenecks(result, self.fabric, self.used, self.breakdown, self.plan, self.step_time, doc)


def every_gpu_up(fabric: Fabric) -> bool:
    """No GPU of the fabric down (nor on a server that is not a compute one): kept with its gpu_up array
    (every evaluation asks; a rebuild makes a new one)."""
    return fabric.remembered("every_gpu_up", (fabric.gpu_up,), lambda: bool(fabric.gpu_up.all()))


def _devices(fabric: Fabric, pipelines: np.ndarray, replicas: list[int], pp: int) -> dict[int, dict]:
    """Representative GPU -> its stage, replica and server: each stage of each replica given."""
    devices = {}
    for r in replicas:
        gpus = pipelines[r, :pp].tolist()
        for s, (gpu, node) in enumerate(zip(gpus, fabric.gpu_node[gpus].tolist())):
            devices[gpu] = {"stage": s, "replica": r, "node": fabric.node_ids[node]}
    return devices


def _require_finite(result: Evaluation) -> None:
    """Never an answer of inf or NaN with exit 0: name the part that is not a number."""
    if all(map(math.isfinite, (result.step_time_s, result.mfu, result.tokens_per_s, *result.breakdown_s.values(),
                               *result.memory_gib_per_gpu.values()))):
        return  # (the usual answer: no names made)
    parts = {"step time": result.step_time_s, "MFU": result.mfu, "tokens/s": result.tokens_per_s}
    parts |= {f"{key} time": value for key, value in result.breakdown_s.items()}
    parts |= {f"{key} memory": value for key, value in result.memory_gib_per_gpu.items()}
    bad = [name for name, value in parts.items() if not math.isfinite(value)]
    if bad:
        raise DesignerError([Problem(
            f"no finite prediction: {', '.join(bad[:4])} {'is' if len(bad) == 1 else 'are'} not a number "
            "(a zero capacity or some traffic of this job with no path)", "spec",
            fix="run designer validate on the file and fix what it names; the network must join every GPU "
                "of the job")])


# What the caches of placements and collective groups may hold, in GPUs x entries: each entry
# keeps arrays with a row per GPU, so a 16k-GPU plan search kept over 1 GB per worker with the
# fixed 1,024 / 256 entries that suit 1k GPUs (unchanged there). At 16k: 256 groups and 128
# placements, 339 MB per search worker instead of 562 MB, for about half the plans per CPU-second
# of that search (more group routes rebuilt); 1 << 23 measured 514 MB and 3/4 of the rate.
# Since groups of a search keep no link bytes nor loads and placements hold int32 ranks, the largest
# of 2 pool workers peaks at 273 MB on the 16k file of benchmarks/bench_cli.py (was 403 MB), and
# halving GROUP_BUDGET again would cost ~30 % of the wall time (bench_search.py --worker-memory).
GROUP_BUDGET = 1 << 22
PLACEMENT_BUDGET = 1 << 21
# The window's engine answers the edits of one design: what it reuses is the current plan's groups
# and those of the plans before (an undo, a TP tried and taken back). At 131k GPUs one plan's four
# groups hold ~40 MB (routes, each cable's bytes per bus byte for the heat), and GROUP_BUDGET's 32
# groups let a user trying TP values grow the window by hundreds of MB. This keeps 4 there: the
# current evaluation's (however many: an MoE plan's six, several jobs'; see Engine.groups), a TP
# taken back builds its groups again (~190 ms a TP edit at 131k instead of ~100, against 2 s
# allowed); 32 at 16k (8 plans).
WINDOW_GROUP_BUDGET = 1 << 19
MAX_HARDWARE = 64  # fabrics (the cluster's and the jobs' views) whose Hardware is kept
LEAST_CACHED = 4  # entries a cache keeps however large the design (the groups in use are kept besides)


def _cache_limit(most: int, budget: int, num_gpus: int) -> int:
    return max(LEAST_CACHED, min(most, budget // max(1, num_gpus)))


def _drop_link_bytes(models) -> None:
    """Without detail nothing reads the per-link bytes of a collective (only the links stage
    does): the cached costs of a plan search would otherwise keep one array of every cable per
    cost, hundreds of MB per search worker at 16k GPUs. The same for the kept routes."""
    for model in models:
        if model.keeps_link_bytes:  # (a model made without them, as a plan search's are, has none to drop)
            for cost in model._cache.values():
                cost.link_bytes = None
        model.forget_routes()  # nor does a search re-rate a link: the flows' routes would only take memory


def _fabric_constants(k: EngineConstants) -> tuple:
    return (k.nvlink_efficiency, k.pcie_efficiency, k.infiniband_nic_efficiency, k.ethernet_nic_efficiency,
            k.host_bounce_efficiency)


NOT_THE_FABRIC = ("workload", "parallelism", "jobs", "layout", "prices")  # collections an edit of leaves it be


def _rating_only(change) -> bool:
    """A change that alters capacities but not the fabric's shape."""
    if change.collection in ("workload", "parallelism", "jobs", "layout", "racks"):
        return True
    if change.action != "changed":
        return False
    if change.collection == "links":
        return change.field in ("bandwidth_gbps", "slowdown", "latency_us", "state")
    placement_only = ("rack", "slot", "name", "height_units")  # where it stands, not how it is wired
    if change.collection == "nodes":
        return change.field in ("slowdown", "gpu_slowdown") + placement_only
    return change.collection == "switches" and change.field in placement_only + ("state",)
