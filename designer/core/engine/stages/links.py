"""Detail: per-link bytes per step by traffic kind, utilization, and the top bottlenecks;
per link also its busy seconds in each phase (traffic kind), whether it is the bottleneck of
that phase and whether that puts it on the critical path (designer/core/analysis/link_load.py
turns these into the answer a network engineer reads)."""
from __future__ import annotations

import functools
from operator import attrgetter

import numpy as np

from ...model.document import Document
from ...model.plan import ResolvedPlan
from ..collectives import CollectiveCost
from ..flows import SPARSE_SHARE
from ..fabric import Fabric
from .result import Evaluation

# Calls per micro-batch of a dimension's costliest collective, used only when the breakdown has
# no time for that kind of traffic to spread the calls over (see _repeats).
COUNTS = {"tp": 4, "cp": 2, "ep": 4, "pp": 2, "dp": 1, "edp": 1}
# A link is the bottleneck of a phase when it is as busy as the busiest link of that phase
# (within 1 %: the symmetric members of a class) and busy for at least half of the phase.
ALIKE = 0.99
BOTTLENECK_SHARE = 0.5
EXPOSED_SHARE = 0.01
TOP_LINKS = 200  # link_utilization rows: the busiest links of the step
_LINK_ENDS = attrgetter("id", "a", "b")  # a link row's (id, a, b)


_KIND_OF_DIM = {"tp": "tp_comm", "cp": "cp_comm", "ep": "ep_comm", "pp": "pp_comm", "dp": "dp_comm", "edp": "dp_comm"}


def kind_of(dim: str) -> str:
    """The breakdown's kind of a dimension's traffic (the expert gradients' is the DP reduction's)."""
    return _KIND_OF_DIM.get(dim) or f"{dim}_comm"


def _kinds_of(used: dict[str, CollectiveCost]) -> dict[str, str]:
    """Each costliest call's kind, by its "dim:primitive" key."""
    return {key: kind_of(key.partition(":")[0]) for key in used}


def links_and_bottlenecks(result: Evaluation, fabric: Fabric, used: dict[str, CollectiveCost],
                          breakdown: dict[str, float], plan: ResolvedPlan, step_time: float, doc: Document) -> None:
    """Fill result.link_load, link_utilization(_array), the per-phase link fields and
    bottlenecks from the costliest call of each collective (`used`), repeated as often as the
    step's time for that kind of traffic makes it."""
    n = len(fabric.link_ids)
    kinds_of = _kinds_of(used)
    sel, load_i, phase_s = _compact_loads(used, breakdown, result.hidden_comm_s, plan, n, kinds_of)
    load = result.link_load = {kind: _scatter(n, sel, v) for kind, v in load_i.items()}
    result.link_ids = fabric.link_ids
    result.link_ids_version = fabric.link_ids_version
    cap = _link_rate_Bps(fabric)
    result.link_capacity_Bps = cap
    result.link_phase_s = {kind: phase_s[kind] for kind in load}
    result.link_exposed_s = {kind: float(breakdown.get(kind, 0.0)) for kind in load}
    result.link_phase_exposed = {kind: exposed(result.link_exposed_s[kind], phase_s[kind]) for kind in load}
    result.link_rows_builder, result._link_utilization = None, None
    busy_of: dict[str, np.ndarray] = {}  # kind -> every link's seconds busy, for the bottlenecks' rows
    if load:
        # Only the links this job loads are worked on when they are a small part of the fabric
        # (a job's view of a big fabric); the per-link results stay fabric-sized.
        # (fabric-sized temporaries are few: at 131k GPUs each is 2.3 MB, and this stage is the
        # peak of an edit's evaluation)
        if isinstance(sel, np.ndarray):
            keep = sum(load_i.values()) > 0
            sel = sel[keep]
            load_i = {kind: v[keep] for kind, v in load_i.items()}
        cap_i = cap[sel]
        rated = cap_i > 0
        # each link's bytes over its rate, 0.0 where it has none (divided only where it has)
        busy_i = {kind: np.divide(per_link, cap_i, out=np.zeros(len(cap_i)), where=rated)
                  for kind, per_link in load_i.items()}
        del rated
        result.link_busy_kinds = tuple(busy_i)  # (made again from the bytes and rates when read)
        if isinstance(sel, slice):
            busy_of.update(busy_i)  # already one value per link of the fabric
        if step_time > 0:
            util_i = sum(busy_i.values())  # the busy seconds, made the share of the step in place
            np.minimum(1.0, np.divide(util_i, step_time, out=util_i), out=util_i)
        else:
            util_i = np.zeros(len(cap_i))
        result.link_utilization_array = _scatter(n, sel, util_i)
        _phases_and_critical(result, used, busy_i, phase_s, sel, n, kinds_of)
        order = _busiest(util_i, TOP_LINKS)
        total_top = sum(v[order] for v in load_i.values())
        idle = (total_top <= 0).nonzero()[0]  # the idle links of a fabric-wide selection
        if idle.size:
            order, total_top = order[:idle[0]], total_top[:idle[0]]
        top = order if isinstance(sel, slice) else sel[order]
        # The rows are read only when the answer is written out (as_json): a plan's 200 row
        # dicts cost a new plan ~0.3 ms at 1k. The links' names are picked now (the document may
        # change before they are read); their numbers then, from the result's own per-link arrays
        # (each link read once, its three fields by one attrgetter: ~200 rows a plan)
        ends = list(map(_LINK_ENDS, map(doc.links.__getitem__, top.tolist())))
        result.link_rows_builder = functools.partial(
            _utilization_rows, ends, top, total_top, result.link_utilization_array, result.link_load, cap,
            result.link_bottleneck, result.link_phase_code, result.link_phase_names, result.link_critical,
            dict(phase_s))
    result.bottlenecks = _bottleneck_rows(result, used, breakdown, step_time, doc, busy_of, kinds_of)


def _bottleneck_rows(result: Evaluation, used: dict[str, CollectiveCost], breakdown: dict[str, float],
                     step_time: float, doc: Document, busy_of: dict[str, np.ndarray],
                     kinds_of: dict[str, str]) -> list[dict]:
    """The step's eight costliest resources, one row per (kind, resource): each collective's bottleneck
    (from its costliest call), GPU compute and the pipeline schedule, most exposed first."""
    bottlenecks = []
    # A kind's rows share its exposed seconds, so the stable sort below keeps them in this order and
    # the first of each (kind, resource) is the one kept: the others are not made.
    made = set()
    for key, c in sorted(used.items(), key=lambda kv: kv[1].time_s, reverse=True):
        kind = kinds_of[key]
        if not c.bottleneck or c.time_s <= 0 or (kind, c.bottleneck) in made:
            continue
        made.add((kind, c.bottleneck))
        row = {"resource": c.bottleneck, "kind": kind, "utilization": round(c.utilization, 3),
               "collective": key.partition(":")[2], "algorithm": c.algorithm,
               "exposed_s": breakdown.get(kind, 0.0),
               "links": [doc.links[i].id for i in c.bottleneck_links[:64]]}
        alike = _alike_links(result, kind, c.bottleneck_links, busy_of)
        if alike:
            row["alike_links"] = alike  # how many links carry the same load as the named one
        bottlenecks.append(row)
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
    return unique[:8]


def _busiest(util: np.ndarray, k: int) -> np.ndarray:
    """The indices of the k largest values, largest first, equal values in index order: what a
    stable argsort of -util cut at k gives, without sorting a whole fabric's links."""
    if len(util) <= k:
        return np.argsort(-util, kind="stable")
    kth = np.partition(util, len(util) - k)[len(util) - k]  # the k-th largest
    if not np.isfinite(kth):
        return np.argsort(-util, kind="stable")[:k]
    above = (util > kth).nonzero()[0]  # fewer than k
    candidates = np.concatenate([above, (util == kth).nonzero()[0][:k - len(above)]])
    return candidates[(-util.take(candidates)).argsort(kind="stable")]


def _utilization_rows(ends: list[tuple[str, str, str]], top: np.ndarray, total: np.ndarray, util: np.ndarray,
                      load: dict[str, np.ndarray], cap: np.ndarray, bottleneck: dict[str, np.ndarray],
                      phase_code: np.ndarray, phase_names: tuple[str, ...], critical: np.ndarray,
                      phase_s: dict[str, float]) -> list[dict]:
    """The busiest links' rows (docs/contract.md section 5: link_utilization), busiest first:
    `ends` the (id, a, b) of the links `top`, `total` their bytes; the rest read at `top` out of
    the result's per-link arrays (a link's seconds busy: its bytes over its rate, as costed)."""
    cap_t = cap[top]
    rated = cap_t > 0
    busy = {kd: np.divide(v[top], cap_t, out=np.zeros(len(top)), where=rated) for kd, v in load.items()}
    util_t, total_t, busy_total_t = util[top].tolist(), total.tolist(), sum(busy.values()).tolist()
    by_kind_t = {kd: v[top].tolist() for kd, v in load.items()}
    busy_t = {kd: b.tolist() for kd, b in busy.items()}
    bottleneck_t = {kd: flag[top].tolist() for kd, flag in bottleneck.items()}
    phase_t, critical_t = [phase_names[c] for c in phase_code[top].tolist()], critical[top].tolist()
    rows = []
    for r, (link_id, a, b) in enumerate(ends):
        row = {"link": link_id, "a": a, "b": b, "utilization": util_t[r],
               "bytes": total_t[r], "by_kind": {kd: v[r] for kd, v in by_kind_t.items() if v[r] > 0},
               "busy_s": busy_total_t[r], "busy_share_of_step": util_t[r]}
        kind = phase_t[r]
        if kind:
            row |= {"phase": kind, "phase_s": phase_s[kind],
                    "busy_share_of_phase": min(1.0, busy_t[kind][r] / phase_s[kind]),
                    "bottleneck_of_phase": bottleneck_t[kind][r],
                    "critical_path": critical_t[r]}
        rows.append(row)
    return rows


def link_loads(used: dict[str, CollectiveCost], breakdown: dict[str, float], hidden: dict[str, float],
               plan: ResolvedPlan, n_links: int) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Bytes per step on every link, by traffic kind, and each kind's phase seconds."""
    index, load, phase_s = _compact_loads(used, breakdown, hidden, plan, n_links, _kinds_of(used))
    return {kind: _scatter(n_links, index, v) for kind, v in load.items()}, phase_s


def _compact_loads(used: dict[str, CollectiveCost], breakdown: dict[str, float], hidden: dict[str, float],
                   plan: ResolvedPlan, n_links: int,
                   kinds_of: dict[str, str]) -> tuple[slice | np.ndarray, dict[str, np.ndarray], dict[str, float]]:
    """The links the collectives load (sorted indices, or every link of the fabric when they load
    a large share of it), their bytes per step by kind, and each kind's phase seconds."""
    reps, phase_s = _repeats(used, breakdown, hidden, plan, kinds_of)
    costs = [(key, c.link_bytes) for key, c in used.items() if c.link_bytes is not None]
    sel: slice | np.ndarray = slice(None)
    if all(lb.index is not None for _, lb in costs):
        loaded = np.zeros(n_links, dtype=bool)
        for _, lb in costs:
            loaded[lb.index] = True
        index = loaded.nonzero()[0]
        if index.size < SPARSE_SHARE * n_links:
            sel = index
    size = n_links if isinstance(sel, slice) else sel.size
    position = None
    if not isinstance(sel, slice):
        position = np.empty(n_links, dtype=np.int64)  # link index -> its place in `sel`
        position[sel] = np.arange(sel.size)
    load: dict[str, np.ndarray] = {}
    for key, lb in costs:
        per_kind = load.get(kinds_of[key])
        if per_kind is None:
            per_kind = load[kinds_of[key]] = np.zeros(size)
        if lb.index is None:
            per_kind += lb.bytes * reps[key]
        else:
            per_kind[lb.index if position is None else position[lb.index]] += lb.bytes * reps[key]
    return sel, load, phase_s


def _repeats(used: dict[str, CollectiveCost], breakdown: dict[str, float], hidden: dict[str, float],
             plan: ResolvedPlan, kinds_of: dict[str, str]) -> tuple[dict[str, float], dict[str, float]]:
    """How many times each costliest call repeats in a step, and each kind's phase seconds.

    A phase is the time the critical device spends on one kind of traffic over the step,
    exposed plus hidden (what the breakdown counts). The calls of that kind are repeated so
    that they fill exactly that time: the DP gradient reduction is many bucket calls, not
    the one costliest bucket; TP, CP, EP and PP run per micro-batch. Without such time (a
    kind the breakdown does not carry) the fixed per-micro-batch counts stand."""
    per_kind: dict[str, list[str]] = {}
    for key, kind in kinds_of.items():
        keys = per_kind.get(kind)
        if keys is None:
            per_kind[kind] = [key]
        else:
            keys.append(key)
    reps, phase_s = {}, {}
    for kind, keys in per_kind.items():
        spent = float(breakdown.get(kind, 0.0)) + float(hidden.get(kind, 0.0))
        one_round = sum(used[k].time_s for k in keys)
        if spent > 0 and one_round > 0:
            for k in keys:
                reps[k] = spent / one_round
            phase_s[kind] = spent
        else:
            fixed = {k: _fixed_repeats(k, plan) for k in keys}
            reps.update(fixed)
            phase_s[kind] = sum(fixed[k] * used[k].time_s for k in keys)
    return reps, phase_s


def _fixed_repeats(key: str, plan: ResolvedPlan) -> int:
    """A costliest call's calls per step by the fixed counts (COUNTS): per micro-batch for TP, CP, EP and PP."""
    dim = key.partition(":")[0]
    return COUNTS.get(dim, 1) * (plan.num_microbatches if dim in ("tp", "cp", "ep", "pp") else 1)


def _link_rate_Bps(fabric: Fabric) -> np.ndarray:
    """Per link, the rate the engine costs it at: a NIC's cable at its NIC's line rate after
    efficiency (summed over the NICs it carries), a switch-to-switch cable at its own rate.

    Kept on the fabric while its rates are the same arrays (a re-rating makes new ones) and
    shared, read-only, by the results: a new plan at 131k GPUs made three fabric-sized arrays
    and kept one more per result."""
    return fabric.remembered("link_rate", (fabric.link_cap_Bps, fabric.nic_cap_Bps), lambda: _link_rate(fabric))


def _link_rate(fabric: Fabric) -> np.ndarray:
    cap = np.asarray(fabric.link_cap_Bps, dtype=float)
    has = fabric.nic_link >= 0
    if has.any():  # (np.where makes the new array)
        nic = np.bincount(fabric.nic_link[has], fabric.nic_cap_Bps[has], minlength=len(cap))
        cap = np.where(nic > 0, nic, cap)
    else:
        cap = cap.copy()
    cap.flags.writeable = False
    return cap


def _phases_and_critical(result: Evaluation, used: dict[str, CollectiveCost], busy: dict[str, np.ndarray],
                         phase_s: dict[str, float], sel: slice | np.ndarray, n: int, kinds_of: dict[str, str]) -> None:
    """Per link: the phase it is busiest in (largest share of that phase's seconds), whether it
    is the bottleneck of each phase and whether one of those phases is exposed (the critical path).
    `busy` holds the selected links `sel` only; the results are fabric-sized (n links)."""
    kinds = list(busy)
    m = n if isinstance(sel, slice) else len(sel)
    network_bound = {kinds_of[key] for key, c in used.items() if c.bottleneck_links}
    # per link the largest share and the first kind that has it (an argmax over the kinds, kept
    # as it goes: not a kinds x links matrix)
    best_share = np.zeros(m)
    best = np.full(m, len(kinds), dtype=np.int8 if len(kinds) < 127 else np.int64)  # len(kinds): none
    bottleneck: dict[str, np.ndarray] = {}
    critical = np.zeros(n, dtype=bool)
    for i, kind in enumerate(kinds):
        seconds = phase_s.get(kind, 0.0)
        if seconds > 0:  # in place, and the kind before's let go first: this loop is an edit's peak
            share = np.divide(busy[kind], seconds)
            np.minimum(share, 1.0, out=share)
        else:
            share = np.zeros(m)
        np.putmask(best, share > best_share, i)
        np.maximum(best_share, share, out=best_share)
        top = float(busy[kind].max(initial=0.0)) if kind in network_bound else 0.0
        if not top > 0:  # (no bottleneck: a phase that no link carries, or not the network's)
            flag = np.zeros(n, dtype=bool)
        elif isinstance(sel, slice):  # already one flag per link of the fabric
            flag = (busy[kind] >= ALIKE * top) & (share >= BOTTLENECK_SHARE)
        else:
            flag = np.zeros(n, dtype=bool)
            flag[sel] = (busy[kind] >= ALIKE * top) & (share >= BOTTLENECK_SHARE)
        bottleneck[kind] = flag
        if result.link_phase_exposed.get(kind):
            critical |= flag
        del share
    if isinstance(sel, slice):
        phase = best
    else:
        phase = np.full(n, len(kinds), dtype=best.dtype)
        phase[sel] = best
    # a small code per link, not a word (an object array of 295k words was 2.3 MB a result at 131k)
    result.link_phase_code, result.link_phase_names = phase, tuple(kinds) + ("",)
    result.link_bottleneck = bottleneck
    result.link_critical = critical


def _scatter(n: int, sel: slice | np.ndarray, values: np.ndarray) -> np.ndarray:
    if isinstance(sel, slice):  # already one value per link of the fabric
        return values
    out = np.zeros(n, dtype=values.dtype)
    out[sel] = values
    return out


def exposed(exposed_s: float, phase_s: float) -> bool:
    """A phase is on the critical path when a visible part of it is not hidden behind compute
    (1 % of it: a pipeline's few microseconds of waiting do not make its links critical)."""
    return exposed_s > 0 and exposed_s >= EXPOSED_SHARE * phase_s


def _alike_links(result: Evaluation, kind: str, links: list[int], busy_of: dict[str, np.ndarray]) -> int:
    """How many links are as busy in `kind` as the busiest of `links` (the named resource is one
    member of a symmetric class: 64 rails loaded the same). `busy_of`: each kind's busy seconds made
    so far (made here once per kind, not per row)."""
    if kind not in result.link_busy_kinds or not links:
        return 0
    busy = busy_of.get(kind)
    if busy is None:
        busy = busy_of[kind] = result.link_busy(kind)
    top = busy.item(links[0]) if len(links) == 1 else float(busy[links].max())  # (one link: no index array)
    return int(np.count_nonzero(busy >= ALIKE * top)) if top > 0 else 0
