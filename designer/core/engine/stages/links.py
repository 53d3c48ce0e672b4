"""Detail: per-link bytes per step by traffic kind, utilization, and the top bottlenecks."""
from __future__ import annotations

import numpy as np

from ...model.document import Document
from ...model.plan import ResolvedPlan
from ..collectives import CollectiveCost
from ..fabric import Fabric
from .result import Evaluation


def links_and_bottlenecks(result: Evaluation, fabric: Fabric, used: dict[str, CollectiveCost],
                          breakdown: dict[str, float], plan: ResolvedPlan, step_time: float, doc: Document) -> None:
    """Fill result.link_load, link_utilization(_array) and bottlenecks from the costliest
    call of each collective (`used`), repeated as often as a step makes it."""
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
