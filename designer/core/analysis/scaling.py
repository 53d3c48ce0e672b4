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
from ..model.job import Parallelism
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
    cluster = base.num_gpus()
    per_node = base.nodes[0].accelerator_count
    counts = sorted(set(gpus or default_counts(ref.num_gpus, per_node)))
    w0 = base.spec.workload
    par0 = base.spec.parallelism or Parallelism()
    from ..model.job import resolve_workload

    w_resolved = resolve_workload(w0, catalog.presets())
    gbs0, mbs0 = w_resolved.global_batch_size, w_resolved.micro_batch_size
    mp = p["tp"] * p["pp"] * p["cp"]
    extended: dict[int, Document] = {}
    rows = []
    for i, n in enumerate(counts):
        row = {"gpus": n}
        rows.append(row)
        if n % mp:
            row["error"] = f"{n} GPUs do not divide by TP x PP x CP = {mp}"
            continue
        dp = n // mp
        gbs = gbs0 if mode == "strong" else gbs0 * n // ref.num_gpus
        if mode == "weak" and (gbs0 * n) % ref.num_gpus:
            row["error"] = f"the global batch {gbs0} does not scale to {n} GPUs in whole samples"
            continue
        mbs = mbs0
        while mbs > 1 and gbs % (mbs * dp):
            mbs //= 2
        if gbs % (mbs * dp):
            row["error"] = f"the global batch {gbs} does not divide over DP {dp} (x micro-batch {mbs})"
            continue
        if n <= cluster:
            d = fx.detached_copy(base)
        else:
            nodes = math.ceil(n / per_node)
            if nodes not in extended:
                try:
                    extended[nodes] = fx.extended(base, nodes, catalog)
                except fx.NotApplicable as exc:
                    row["error"] = f"cannot extend the fabric to {nodes} servers: {exc}"
                    continue
            d = fx.detached_copy(extended[nodes])
        d.spec.workload = dataclasses.replace(w0, global_batch_size=gbs, micro_batch_size=mbs)
        d.spec.parallelism = dataclasses.replace(par0, num_gpus=n, data_parallel_size=None)
        try:
            r = engine.evaluate(d)
        except DesignerError as exc:
            row["error"] = "; ".join(pr.message for pr in exc.problems[:2])
            continue
        row.update({"step_time_s": r.step_time_s, "tokens_per_s": r.tokens_per_s,
                    "tokens_per_s_per_gpu": r.tokens_per_s / n, "mfu": r.mfu, "global_batch_size": gbs,
                    "micro_batch_size": mbs, "dp": dp, "fits_in_memory": r.fits_in_memory,
                    "exposed_comm_s": sum(v for k, v in r.breakdown_s.items() if k.endswith("_comm")),
                    "bubble_s": r.breakdown_s["bubble"], "servers": math.ceil(n / per_node),
                    "extended_fabric": n > cluster})
        if progress:
            progress(i + 1, len(counts))
    good = [r for r in rows if "error" not in r]
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
    if stops is not None:
        verdict = (f"more GPUs stop paying at {stops['gpus']}: going from the previous count, each added GPU "
                   f"buys {stops['marginal_efficiency']:.0%} of a GPU's throughput at {good[0]['gpus']} GPUs")
    elif good:
        verdict = (f"still paying at {good[-1]['gpus']} GPUs: {good[-1]['efficiency']:.0%} of linear "
                   f"({mode} scaling)")
    else:
        verdict = "no GPU count could be evaluated"
    return {"mode": mode, "current_gpus": ref.num_gpus, "rows": rows, "stops_paying_at": stops["gpus"] if stops
            else None, "verdict": verdict, "elapsed_s": time.perf_counter() - t0,
            "plan": {k: p[k] for k in ("tp", "pp", "cp", "ep", "vp", "schedule")}}
