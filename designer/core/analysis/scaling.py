"""Scaling curves: throughput against the GPU count, and where more GPUs stop paying.

Counts up to the drawn cluster's size run on its first N GPUs; larger counts run on the
same fabric design generated for more servers (`fabric_edits.extended`). The model-parallel
layout (TP, PP, CP, EP, virtual stages, schedule) is kept and DP grows. Strong scaling keeps
the global batch (fewer micro-batches per replica as DP grows, down to what the batch
allows); weak scaling keeps the batch per replica, so the global batch grows with DP.
"""
from __future__ import annotations

import dataclasses
import math
import time

from ..engine.evaluate import Engine
from ..model.catalog import Catalog, default_catalog
from ..model.document import Document
from ..model.job import Parallelism, resolve_workload
from ..problems import DesignerError, Problem
from . import fabric_edits as fx

STOP_PAYING = 0.5  # an added GPU that buys less than half of what the first ones do


def default_counts(current: int, gpus_per_node: int) -> list[int]:
    lo = max(gpus_per_node, current // 8)
    out, n = [], lo
    while n <= current * 8:
        out.append(n)
        n *= 2
    return out


def scale(doc: Document, gpus: list[int] | None = None, mode: str = "strong", catalog: Catalog | None = None,
          engine: Engine | None = None, progress=None) -> dict:
    t0 = time.perf_counter()
    catalog = catalog or default_catalog()
    if mode not in ("strong", "weak"):
        raise DesignerError([Problem(f"unknown scaling mode {mode!r}", "--mode", fix="use strong or weak")])
    if doc.spec.workload is None:
        raise DesignerError([Problem("no workload to scale", "spec.workload", fix="add workload: {preset: ...}")])
    engine = engine or Engine(catalog, detail=False)
    base = fx.detached_copy(doc)
    ref = engine.evaluate(base)  # the drawn design as it is (raises on a bad plan)
    p = ref.plan
    run = _ScalingRun(base, ref.num_gpus, p["tp"] * p["pp"] * p["cp"], mode, catalog, engine)
    counts = sorted(set(gpus or default_counts(ref.num_gpus, run.per_node)))
    rows = []
    for i, n in enumerate(counts):
        rows.append(run.row(n))
        if progress and "error" not in rows[-1]:
            progress(i + 1, len(counts))
    good = [r for r in rows if "error" not in r]
    stops = _add_efficiencies(good)
    return {"mode": mode, "current_gpus": ref.num_gpus, "rows": rows, "stops_paying_at": stops["gpus"] if stops
            else None, "verdict": _verdict(good, stops, mode), "elapsed_s": time.perf_counter() - t0,
            "plan": {k: p[k] for k in ("tp", "pp", "cp", "ep", "vp", "schedule")}}


class _ScalingRun:
    """The job of the drawn design at other GPU counts: its model-parallel layout kept, DP grown,
    the batch kept (strong) or grown with DP (weak)."""

    def __init__(self, base: Document, current_gpus: int, model_parallel: int, mode: str, catalog: Catalog,
                 engine: Engine):
        self.base, self.current_gpus, self.mp, self.mode = base, current_gpus, model_parallel, mode
        self.catalog, self.engine = catalog, engine
        self.cluster = base.num_gpus()
        self.per_node = base.nodes[0].accelerator_count
        self.w0 = base.spec.workload
        self.par0 = base.spec.parallelism or Parallelism()
        w_resolved = resolve_workload(self.w0, catalog.presets())
        self.gbs0, self.mbs0 = w_resolved.global_batch_size, w_resolved.micro_batch_size
        self.extended: dict[int, Document] = {}  # the fabric generated for more servers, by server count

    def row(self, n: int) -> dict:
        """The job on `n` GPUs: its figures, or why it cannot run there ("error")."""
        row: dict = {"gpus": n}
        sizes = self._batch(n)
        if isinstance(sizes, str):
            row["error"] = sizes
            return row
        dp, gbs, mbs = sizes
        d = self._design(n)
        if isinstance(d, str):
            row["error"] = d
            return row
        d.spec.workload = dataclasses.replace(self.w0, global_batch_size=gbs, micro_batch_size=mbs)
        d.spec.parallelism = dataclasses.replace(self.par0, num_gpus=n, data_parallel_size=None)
        try:
            r = self.engine.evaluate(d)
        except DesignerError as exc:
            row["error"] = "; ".join(pr.message for pr in exc.problems[:2])
            return row
        row.update({"step_time_s": r.step_time_s, "tokens_per_s": r.tokens_per_s,
                    "tokens_per_s_per_gpu": r.tokens_per_s / n, "mfu": r.mfu, "global_batch_size": gbs,
                    "micro_batch_size": mbs, "dp": dp, "fits_in_memory": r.fits_in_memory,
                    "exposed_comm_s": sum(v for k, v in r.breakdown_s.items() if k.endswith("_comm")),
                    "bubble_s": r.breakdown_s["bubble"], "servers": math.ceil(n / self.per_node),
                    "extended_fabric": n > self.cluster})
        return row

    def _batch(self, n: int) -> tuple[int, int, int] | str:
        """(DP, global batch, micro-batch) on `n` GPUs, the micro-batch halved until the batch
        divides over DP; or why there is none."""
        mp, gbs0 = self.mp, self.gbs0
        if n % mp:
            return f"{n} GPUs do not divide by TP x PP x CP = {mp}"
        dp = n // mp
        gbs = gbs0 if self.mode == "strong" else gbs0 * n // self.current_gpus
        if self.mode == "weak" and (gbs0 * n) % self.current_gpus:
            return f"the global batch {gbs0} does not scale to {n} GPUs in whole samples"
        mbs = self.mbs0
        while mbs > 1 and gbs % (mbs * dp):
            mbs //= 2
        if gbs % (mbs * dp):
            return f"the global batch {gbs} does not divide over DP {dp} (x micro-batch {mbs})"
        return dp, gbs, mbs

    def _design(self, n: int) -> Document | str:
        """A copy of the design with room for `n` GPUs (its fabric extended past the drawn cluster),
        or why the fabric does not extend."""
        if n <= self.cluster:
            return fx.detached_copy(self.base)
        nodes = math.ceil(n / self.per_node)
        if nodes not in self.extended:
            try:
                self.extended[nodes] = fx.extended(self.base, nodes, self.catalog)
            except fx.NotApplicable as exc:
                return f"cannot extend the fabric to {nodes} servers: {exc}"
        return fx.detached_copy(self.extended[nodes])


def _add_efficiencies(good: list[dict]) -> dict | None:
    """Efficiency, speed-up and marginal efficiency of each evaluated row against the first; the
    first row where an added GPU stops paying (None: none)."""
    stops = None
    if good:
        base_rate = good[0]["tokens_per_s_per_gpu"]
        prev = None
        for r in good:
            r["efficiency"] = r["tokens_per_s_per_gpu"] / base_rate
            r["speedup"] = r["tokens_per_s"] / good[0]["tokens_per_s"]
            if prev is not None:
                marginal = (r["tokens_per_s"] - prev["tokens_per_s"]) / (r["gpus"] - prev["gpus"]) / base_rate
                r["marginal_efficiency"] = marginal
                if stops is None and marginal < STOP_PAYING:
                    stops = r
            prev = r
    return stops


def _verdict(good: list[dict], stops: dict | None, mode: str) -> str:
    if stops is not None:
        return (f"more GPUs stop paying at {stops['gpus']}: going from the previous count, each added GPU "
                f"buys {stops['marginal_efficiency']:.0%} of a GPU's throughput at {good[0]['gpus']} GPUs")
    if good:
        return (f"still paying at {good[-1]['gpus']} GPUs: {good[-1]['efficiency']:.0%} of linear "
                f"({mode} scaling)")
    return "no GPU count could be evaluated"
