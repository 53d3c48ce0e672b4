"""Plan search: the fastest plans for the drawn cluster and job that fit in memory.

Exhaustive over the space of `space.py`, with three cuts that never drop a better plan:
impossible or out-of-memory subtrees are counted, not visited; dominated twins are not
costed; and the rest is costed in order of a lower bound (`bounds.py`), stopping as soon as
the next bound is slower than the N-th best plan found. The engine runs in a pool of worker
processes (or on a Dask cluster); chunks are handed out in bound order so the cut-off is
reached quickly.
"""
from __future__ import annotations

import dataclasses
import heapq
import time
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..engine.constants import accelerator_constants, engine_constants, uses_flash_attention
from ..engine.evaluate import Engine, resolve_job
from ..io import dumps_document
from ..model.network_reach import job_servers
from ..model.catalog import Catalog, default_catalog
from ..model.document import Document
from ..model.job import Workload
from ..model.plan import ResolvedPlan
from ..problems import DesignerError, Problem
from .bounds import ComputeFloor
from .fabric_edits import detached_copy
from .space import Point, SpaceCounts, SpaceOptions, enumerate_space
from .sweep import make_runner

if TYPE_CHECKING:
    from ..engine.flops import ModelShape

CHUNK = 24  # plans per task: large enough to amortise a task, small enough to stop early
BOUNDS_PER_CHECKPOINT = 256  # lower bounds worked out between two checkpoint() calls (~10 ms)


@dataclass
class SearchResult:
    """The plan search's best plans, how many it tried or cut, and how they compare with the file's plan."""
    top: list[dict]  # best first: point, step_time_s, mfu, tokens_per_s, memory_gib, breakdown_s
    counts: SpaceCounts
    evaluated: int
    cut_by_bound: int
    failed: int
    elapsed_s: float
    runner: str
    current: dict | None  # the file's own plan, costed, or None when it has none
    verdict: str  # how the best compares with the file's plan
    bound_violations: int = 0
    warnings: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        def row(r):
            p: Point = r["point"]
            return {"plan": p.label(), "step_time_s": r["step_time_s"], "mfu": r["mfu"],
                    "same_time_orders": r.get("same_time_orders", []),
                    "tokens_per_s": r["tokens_per_s"], "memory_gib_per_gpu": r["memory_gib"],
                    "breakdown_s": r["breakdown_s"], "split": p.split.megatron_keys(), "set": p.settings(),
                    **({"nvlink_domain_gpus": r["nvlink_domain_gpus"]} if "nvlink_domain_gpus" in r else {})}

        return {"top": [row(r) for r in self.top], "space": self.counts.as_json(), "evaluated": self.evaluated,
                "cut_by_bound": self.cut_by_bound, "failed": self.failed, "elapsed_s": self.elapsed_s,
                "runner": self.runner, "current": row(self.current) if self.current else None,
                "verdict": self.verdict, "bound_violations": self.bound_violations, "warnings": self.warnings}


def _cluster_facts(doc: Document, catalog: Catalog, num_gpus: int):
    nodes = job_servers(doc, num_gpus)
    if not nodes:
        raise DesignerError([Problem("the cluster has no accelerators", "spec.nodes", fix="add servers")])
    acc = catalog.accelerator(nodes[0].accelerator)
    gpus_per_node = min(n.accelerator_count for n in nodes)
    return acc, gpus_per_node


@dataclass
class _SearchJob:
    """What the search plans for: the workload, its shape, the GPUs, and the file's own plan (None
    when that plan is impossible: the search then starts from the workload alone)."""

    workload: Workload
    shape: ModelShape
    num_gpus: int
    current_point: Point | None


@dataclass
class _OrderedSpace:
    """The candidate plans in the order they are costed (the file's own first, then by lower bound),
    each plan's lower bound on its step time, and the counts of the space."""

    order: list[Point]
    bounds: dict[Point, float]
    counts: SpaceCounts


@dataclass
class _Costed:
    """What costing the ordered space found."""

    ranked: list[dict]  # the top plans that fit, best first
    evaluated: int
    failed: int
    violations: int  # plans that ran faster than their lower bound
    stopped_at: int  # where in the order the bound cut the rest (the order's length: nothing cut)
    current_row: dict | None  # the file's own plan, costed


def search(doc: Document, top: int = 10, workers: int | None = None, scheduler: str | None = None,
           opts: SpaceOptions | None = None, catalog: Catalog | None = None, progress=None,
           checkpoint=None) -> SearchResult:
    """The `top` fastest plans that fit. `progress(done, total_hint)` is called as chunks return.
    `checkpoint()`, when given, is called often while the space and its lower bounds are worked out
    (seconds before the first chunk returns) and before each chunk is costed; it may raise to stop
    the search."""
    t0 = time.perf_counter()
    catalog = catalog or default_catalog()
    if doc.spec.workload is None:
        raise DesignerError([Problem("no workload to search plans for", "spec.workload",
                                     fix="add workload: {preset: ...} (or pass --scenario)")])
    base = detached_copy(doc)
    job = _search_job(base, catalog)
    space = _ordered_space(base, catalog, job, opts, checkpoint)
    runner = make_runner(dumps_document(base), workers, scheduler)
    try:
        costed = _cost_in_bound_order(runner, space, job.current_point, top, progress, checkpoint)
    finally:
        runner.close()
    order = space.order
    cut = max(0, len(order) - costed.evaluated) if costed.stopped_at < len(order) else 0
    verdict = _verdict(costed.ranked, costed.current_row, job.current_point, doc)
    warnings = list(runner.warnings)
    if costed.violations:
        warnings.append(f"{costed.violations} plans ran faster than their lower bound: the search may have cut good "
                        "plans; please report this")
    return SearchResult(costed.ranked, space.counts, costed.evaluated, cut, costed.failed, time.perf_counter() - t0,
                        runner.name, costed.current_row, verdict, costed.violations, warnings)


def _search_job(base: Document, catalog: Catalog) -> _SearchJob:
    try:
        job = resolve_job(base, catalog)
        current_point = Point.of(job.workload, job.parallelism, job.plan)
        return _SearchJob(job.workload, job.shape, job.plan.num_gpus, current_point)
    except DesignerError:
        # the file's plan is impossible: search anyway, from the workload alone
        from ..engine import flops as F
        from ..model.job import Parallelism, resolve_workload

        w = resolve_workload(base.spec.workload, catalog.presets())
        num_gpus = (base.spec.parallelism or Parallelism()).num_gpus or base.num_gpus()
        return _SearchJob(w, F.ModelShape.of(w), num_gpus, None)


def _ordered_space(base: Document, catalog: Catalog, job: _SearchJob, opts: SpaceOptions | None,
                   checkpoint) -> _OrderedSpace:
    """The space's candidates (the file's own plan kept) with their lower bounds, in costing order."""
    num_gpus, current_point = job.num_gpus, job.current_point
    acc, gpus_per_node = _cluster_facts(base, catalog, num_gpus)
    cal = base.spec.calibration
    # every plan keeps the file's other settings (attention backend, num_gpus)
    k = engine_constants(cal)
    ac = accelerator_constants(acc, cal, catalog)
    par0 = base.spec.parallelism
    flash = uses_flash_attention(ac, par0.attention_backend if par0 else "auto")
    candidates, counts = enumerate_space(job.workload, job.shape, num_gpus, gpus_per_node, acc.hbm_gib, cal, opts,
                                         keep=[current_point] if current_point else None, flash=flash,
                                         checkpoint=checkpoint)
    engine = Engine(catalog, detail=False)
    comm_cache: dict[tuple, object] = {}

    def comm_for(p: Point):
        key = (p.tp, p.cp, p.ep, p.etp)
        if key not in comm_cache:
            layout = ResolvedPlan(num_gpus, p.tp, 1, p.cp, p.ep, p.etp, num_gpus // (p.tp * p.cp), 1, 1,
                                  ("tp", "cp", "ep", "dp", "pp"))
            comm_cache[key] = engine.layer_comm(base, layout)
        return comm_cache[key]

    floor = ComputeFloor(job.shape, acc, ac, k, flash, comm_for)
    bounds = {}
    for n, p in enumerate(candidates):
        if checkpoint is not None and n % BOUNDS_PER_CHECKPOINT == 0:
            checkpoint()
        bounds[p] = floor.step_floor_s(p)
    order = sorted(candidates, key=bounds.__getitem__)
    if current_point is not None:  # cost the file's own plan first: it seeds the cut-off
        order.remove(current_point)
        order.insert(0, current_point)
    return _OrderedSpace(order, bounds, counts)


def _cost_in_bound_order(runner, space: _OrderedSpace, current_point: Point | None, top: int, progress,
                         checkpoint) -> _Costed:
    """Cost the plans chunk by chunk in bound order, keeping twice the runner's workers busy, until
    the next plan's lower bound is no faster than the `top`-th best plan that fits."""
    order, bounds = space.order, space.bounds
    best = _TopPlans(top)
    current_row = None
    evaluated = failed = violations = 0
    pending: deque = deque()
    i = 0
    stopped_at = len(order)
    while i < len(order) or pending:
        threshold = best.threshold()
        while i < len(order) and len(pending) < 2 * runner.workers:
            if bounds[order[i]] >= threshold and order[i] is not current_point:
                stopped_at = i
                i = len(order)
                break
            if checkpoint is not None:
                checkpoint()
            chunk = order[i:i + CHUNK]
            i += len(chunk)
            pending.append(runner.submit(chunk))
        if not pending:
            break
        for r in pending.popleft().result():
            evaluated += 1
            if "error" in r:
                failed += 1
                continue
            p = r["point"]
            if r["step_time_s"] < bounds[p] * (1 - 1e-9):
                violations += 1
            if p == current_point:
                current_row = r
            if r["fits_with_headroom"]:  # a plan one would run keeps the memory headroom
                best.offer(r)
        if progress:
            progress(evaluated, len(order))
    return _Costed(best.ranked(), evaluated, failed, violations, stopped_at, current_row)


class _TopPlans:
    """The `top` fastest costed plans: a max-heap on step time (negated), ties kept in arrival order."""

    def __init__(self, top: int):
        self.top = top
        self.heap: list[tuple[float, int, dict]] = []
        self.serial = 0
        self.twins: dict[Point, dict] = {}  # a kept plan by its point without rank order

    def threshold(self) -> float:
        """The step time a plan must beat to enter (infinite until `top` plans are kept)."""
        return -self.heap[0][0] if len(self.heap) >= self.top else float("inf")

    def offer(self, r: dict) -> None:
        p = r["point"]
        # Twins that differ only in rank order and cost the same are one answer: the
        # first listed stands for both (its "also" names the other orders).
        twin = self.twins.get(_without_order(p))
        if twin is not None and abs(twin["step_time_s"] - r["step_time_s"]) <= 1e-9 * r["step_time_s"]:
            twin.setdefault("same_time_orders", []).append(p.rank_order)
            return
        self.serial += 1
        item = (-r["step_time_s"], -self.serial, r)
        if len(self.heap) < self.top:
            heapq.heappush(self.heap, item)
        elif r["step_time_s"] < -self.heap[0][0]:
            heapq.heapreplace(self.heap, item)
        else:
            return
        self.twins[_without_order(p)] = r

    def ranked(self) -> list[dict]:
        return [r for _, _, r in sorted(self.heap, key=lambda t: (-t[0], -t[1]))]


def _without_order(p: Point) -> Point:
    return dataclasses.replace(p, rank_order="")


def _verdict(ranked: list[dict], current: dict | None, point: Point | None, doc: Document) -> str:
    if not ranked:
        return ("no plan of the space fits in memory on these GPUs: use more GPUs (parallelism.num_gpus), "
                "accelerators with more memory, or a smaller model")
    best = ranked[0]
    if point is None:
        return f"the file's plan is not valid; the best plan found runs a step in {best['step_time_s']:.3f} s"
    if current is None or "error" in current:
        return f"the file's plan could not be costed; the best plan found runs a step in {best['step_time_s']:.3f} s"
    if not current["fits_with_headroom"]:
        how = "does not fit in memory" if not current["fits_in_memory"] else "fits only without the memory headroom"
        return (f"the file's plan {how} ({current['memory_gib']:.1f} GiB per GPU); the best plan "
                f"that fits runs a step in {best['step_time_s']:.3f} s")
    gain = current["step_time_s"] / best["step_time_s"] - 1
    if best["point"] == point or gain < 1e-6:
        return f"the file's plan is already the fastest found ({current['step_time_s']:.3f} s per step)"
    why = plan_differences(point, best["point"])
    return (f"{best['point'].label()} is {gain:.1%} faster than the file's plan "
            f"({best['step_time_s']:.3f} s against {current['step_time_s']:.3f} s per step)"
            + (f"; it differs in {why}" if why else ""))


# What a plan setting is called in a verdict, and how its value reads
_SETTINGS = (("tp", "TP", str), ("pp", "PP", str), ("cp", "CP", str), ("ep", "EP", str), ("dp", "DP", str),
             ("schedule", "schedule", str), ("vp", "virtual stages", str), ("micro_batch", "micro-batch", str),
             ("recompute", "recompute", str), ("sequence_parallel", "sequence parallelism", lambda v: "on" if v else "off"),
             ("zero", "optimizer sharding", lambda v: {0: "none", 1: "distributed optimizer", 3: "ZeRO-3"}.get(v, str(v))),
             ("tp_comm_overlap", "TP communication overlap", lambda v: "on" if v else "off"),
             ("overlap_grad_reduce", "gradient-reduce overlap", lambda v: "on" if v else "off"))


def plan_differences(current: Point, best: Point) -> str:
    """The settings in which `best` differs from the file's plan: why it is faster (a published
    run's plan may lack a feature its software did not have yet, such as TP overlap or the
    distributed optimizer), as 'recompute none (file: full), ...'."""
    out = []
    for key, name, text in _SETTINGS:
        a, b = getattr(current, key), getattr(best, key)
        if a != b:
            out.append(f"{name} {text(b)} (file: {text(a)})")
    return ", ".join(out)
