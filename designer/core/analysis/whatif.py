"""What-if advice: candidate changes of the hardware and of the plan, costed and ranked.

Every candidate is a changed copy of the design, evaluated by the same engine as the
original; the ranking is by predicted speed-up of the step. An upgrade that buys (almost)
nothing says so, with what limits the step instead, because "NIC 2x: +0.4%" is the answer
to the question a user came with.
"""
from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass

from ..engine.evaluate import Engine, Evaluation
from ..model.catalog import Catalog, default_catalog
from ..model.document import Document
from ..model.job import SCHEDULES, Parallelism, Workload
from ..problems import DesignerError
from . import fabric_edits as fx
from .advice import Advice
from .attribution import attribute

NO_GAIN = 0.01  # below 1% a change "buys nothing": within the engine's own error
RANK_ORDER_CHOICES = ("tp-cp-ep-dp-pp", "tp-cp-ep-pp-dp", "tp-pp-cp-ep-dp", "tp-cp-dp-ep-pp")


def _is_moe(doc: Document) -> bool:
    from ..model.job import resolve_workload

    w = doc.spec.workload
    if w is None:
        return False
    try:
        return bool(resolve_workload(w, default_catalog().presets()).num_experts)
    except Exception:  # noqa: BLE001 - an unresolvable preset is reported by the evaluation
        return False


def _par_change(par: Parallelism, label: str, **changes) -> tuple[str, Parallelism, list[str]]:
    new = dataclasses.replace(par, data_parallel_size=None, **changes)
    sets = []
    for key, value in changes.items():
        if value is None:
            value = "null"
        sets.append(f"parallelism.{key}={str(value).lower() if isinstance(value, bool) else value}")
    return label, new, sets


@dataclass
class _PlanChange:
    """A candidate change of the job: its advice id, title and category, the new parallelism, the
    `--set` arguments that make it, and the new workload (None: the file's)."""

    id: str
    title: str
    category: str
    parallelism: Parallelism
    sets: list[str]
    workload: Workload | None = None


def _plan_candidates(doc: Document, result: Evaluation) -> list[Advice]:
    w, par = doc.spec.workload, doc.spec.parallelism or Parallelism()
    p = result.plan
    changes = (_size_changes(doc, par, p) + _pipeline_changes(doc, par, p) + _batch_changes(w, par)
               + _switch_changes(par) + _rank_order_changes(par, p))
    advices = []
    for c in changes:
        # the design with another job: the elements are shared with `doc` (a private copy that
        # nobody edits), so a candidate costs a few dicts, not a copy of 16k servers
        spec = dataclasses.replace(doc.spec, workload=c.workload or doc.spec.workload, parallelism=c.parallelism)
        advices.append(Advice(c.id, c.title, c.category, "", Document(spec, doc.metadata), True, set=c.sets))
    from .advice_design import split_candidates  # Megatron's uneven pipeline splits

    return advices + split_candidates(doc, p)


def _size_changes(doc: Document, par: Parallelism, p: dict) -> list[_PlanChange]:
    """TP, PP, CP and EP (MoE only) doubled and halved, the virtual stages kept."""
    from .advice_design import split_change

    out = []
    keep_vp = {"virtual_pipeline_model_parallel_size": par.virtual_pipeline_model_parallel_size}
    moe = _is_moe(doc)
    for name, key, value in (("TP", "tensor_model_parallel_size", p["tp"]),
                             ("PP", "pipeline_model_parallel_size", p["pp"]),
                             ("CP", "context_parallel_size", p["cp"]), ("EP", "expert_model_parallel_size", p["ep"])):
        if name == "EP" and not moe:
            continue
        for factor, word in ((2, "x2"), (0.5, "/2")):
            new = int(value * factor)
            if new < 1 or new == value:
                continue
            # a PP the layers do not divide takes one of Megatron's uneven splits (advice_design.py)
            split = (split_change(doc, new, p["vp"]) or {}) if name == "PP" else {}
            label, np_, sets = _par_change(par, f"{name} {value} -> {new}", **{key: new}, **keep_vp, **split)
            out.append(_PlanChange(f"{name.lower()}-{new}", label, "parallelism", np_,
                                   sets[:1] + sets[len(sets) - len(split):]))
    return out


def _pipeline_changes(doc: Document, par: Parallelism, p: dict) -> list[_PlanChange]:
    """With PP > 1: every other number of virtual stages Megatron can split, and every other schedule."""
    from .advice_design import split_change, vp_choices

    pp, vp = p["pp"], p["vp"]
    if pp <= 1:
        return []
    out = []
    for v in vp_choices(doc, pp):  # every VP with a split Megatron accepts
        if par.pipeline_schedule == "interleaved" and v == vp:
            continue
        split = split_change(doc, pp, v) or {}
        label, np_, sets = _par_change(par, f"interleaved, {v} virtual stages" + (f" (was {vp})" if vp > 1 else "")
                                       + "".join(f", {k}={v_}" for k, v_ in split.items() if v_ not in (None, False)),
                                       pipeline_schedule="interleaved", virtual_pipeline_model_parallel_size=v, **split)
        out.append(_PlanChange(f"vp-{v}", label, "parallelism", np_, sets))
    for s in SCHEDULES:
        if s == par.pipeline_schedule or s == "interleaved":
            continue
        label, np_, sets = _par_change(par, f"schedule {s}", pipeline_schedule=s,
                                       virtual_pipeline_model_parallel_size=None)
        out.append(_PlanChange(f"schedule-{s}", label, "software", np_, sets))
    return out


def _batch_changes(w: Workload | None, par: Parallelism) -> list[_PlanChange]:
    """The micro-batch doubled and halved, and the other recompute granularities."""
    out = []
    mbs = w.micro_batch_size if w and w.micro_batch_size else 1
    for new in (mbs * 2, mbs // 2):
        if new >= 1 and new != mbs:
            out.append(_PlanChange(f"mbs-{new}", f"micro-batch {mbs} -> {new}", "software", dataclasses.replace(par),
                                   [f"workload.micro_batch_size={new}"], dataclasses.replace(w, micro_batch_size=new)))
    for r in ("none", "selective", "full"):
        if r != par.recompute_granularity:
            label, np_, sets = _par_change(par, f"recompute {par.recompute_granularity} -> {r}",
                                           recompute_granularity=r)
            out.append(_PlanChange(f"recompute-{r}", label, "software", np_, sets))
    return out


def _switch_changes(par: Parallelism) -> list[_PlanChange]:
    """Each overlap, sequence parallelism and the distributed optimizer turned the other way (with
    what it needs turned on), and FSDP."""
    out = []
    toggles = [("overlap_grad_reduce", "DP gradient-reduction overlap"),
               ("overlap_param_gather", "parameter all-gather overlap"),
               ("tp_comm_overlap", "TP communication overlap (with GEMMs)"),
               ("sequence_parallel", "sequence parallelism"),
               ("use_distributed_optimizer", "distributed optimizer")]
    for key, text in toggles:
        value = getattr(par, key)
        extra = {}
        if key == "overlap_param_gather" and not value and not (par.use_distributed_optimizer or par.zero_stage):
            extra["use_distributed_optimizer"] = True
        if key == "tp_comm_overlap" and not value and not par.sequence_parallel:
            extra["sequence_parallel"] = True
        if key == "use_distributed_optimizer" and par.zero_stage:
            continue
        label, np_, sets = _par_change(par, text + (" on" if not value else " off"), **{key: not value},
                                       **extra)
        out.append(_PlanChange(f"{key}-{'on' if not value else 'off'}", label, "software", np_, sets))
    if par.zero_stage < 3:
        label, np_, sets = _par_change(par, "FSDP (ZeRO-3)", zero_stage=3, use_distributed_optimizer=False)
        out.append(_PlanChange("zero-3", label, "software", np_, sets))
    return out


def _rank_order_changes(par: Parallelism, p: dict) -> list[_PlanChange]:
    """The rank orders that place the ranks differently from the file's."""
    sizes = {"tp": p["tp"], "pp": p["pp"], "cp": p["cp"], "ep": p["ep"], "dp": p["dp"]}

    def placement_of(order: str) -> tuple:  # only dimensions above 1 move ranks
        return tuple(d for d in order.split("-") if sizes.get(d, 1) > 1)

    out = []
    seen = {placement_of(par.rank_order)}
    for order in RANK_ORDER_CHOICES:
        if placement_of(order) not in seen:
            seen.add(placement_of(order))
            label, np_, sets = _par_change(par, f"rank order {order}", rank_order=order)
            out.append(_PlanChange(f"order-{order}", label, "parallelism", np_, sets))
    return out


def _hardware_candidates(doc: Document, catalog: Catalog) -> list[Advice]:
    out = []

    def add(id_, title, make, description):
        try:
            new = make()
        except fx.NotApplicable as exc:
            out.append(Advice(id_, title, "hardware", description, None, False, error=str(exc)))
            return
        out.append(Advice(id_, title, "hardware", description, new, False))

    slow = fx.slow_cables(doc)
    if slow:  # the cheapest change of all: a cable back to its peers' speed
        first = slow[0]
        title = (f"re-seat {first[0]} (trained at {first[1]:g} Gb/s, its peers {first[2]:g})" if len(slow) == 1
                 else f"re-seat {len(slow)} slow cables ({first[0]} at {first[1]:g} Gb/s, ...)")
        add("slow-cables", title, lambda: fx.restore_slow_cables(doc),
            "every cable slower than its tier's other cables back at their speed: re-seat or replace it")
    static = fx.static_switches(doc)
    if static:  # static tables pin each flow to one up-link: hash collisions and any slow cable it crosses
        add("adaptive-routing", f"adaptive routing on {len(static)} InfiniBand switch{'es' if len(static) > 1 else ''}",
            lambda: fx.adaptive_routing(doc),
            "turn on adaptive routing where the switches route statically (one path per destination)")
    scale_kind = "NVLink" if any(n.scale_up != "pcie" for n in doc.nodes) else "PCIe"
    add("scale-up-2x", f"{scale_kind} 2x", lambda: fx.scale_up_2x(doc, catalog),
        "double the scale-up bandwidth of every server")
    add("nic-2x", "NIC 2x", lambda: fx.nic_2x(doc), "double every NIC, its cable and its leaf port")
    add("leaf-spine-2x", "leaf-spine 2x", lambda: fx.tier_links_2x(doc, "leaf", "spine"),
        "double every leaf-spine cable")
    add("spine-core-2x", "spine-core 2x", lambda: fx.tier_links_2x(doc, "spine", "core"),
        "double every spine-core cable")
    ratio = fx.worst_oversubscription(doc)
    add("no-oversubscription", f"no oversubscription (now {ratio:g}:1)" if ratio > 1 else "no oversubscription",
        lambda: fx.no_oversubscription(doc), "give every leaf and spine as much capacity up as down")

    swap_title = {"ethernet": "InfiniBand instead of Ethernet",
                  "infiniband": "Ethernet instead of InfiniBand"}.get(fx.network_kind(doc), "other network kind")
    add("network-kind", swap_title, lambda: fx.swap_network(doc)[0],
        "same speeds, the other network: adaptive routing (InfiniBand) or ECMP (RoCE)")
    if ratio <= 1:  # the cheaper direction: fewer spines and cables (advice_cost.py prices both)
        from .advice_cost import oversubscribed

        add("leaves-2to1", "leaves 2:1 instead of 1:1", lambda: oversubscribed(doc, 2.0, catalog),
            "the same servers on a fabric generated at 2:1: fewer spines, cables and optics")
    from .advice_design import domain_candidates  # "NVL72 instead of 4-GPU servers"

    return out + domain_candidates(doc, catalog)


SCREENED_SHARE = 0.02  # the burn-in screen the Advisor offers: the slowest 2 % of GPUs out


def _screen_candidates(doc: Document, result: Evaluation) -> list[Advice]:
    """Screen out the slowest GPUs before the job (a burn-in sweep of every server; the ones it
    rejects replaced from the spare pool): the wait for the slowest of N (rank_speed_cv) then
    stops at the screen's cut instead of growing with N."""
    from ..engine.constants import engine_constants

    k = engine_constants(doc.spec.calibration)
    if result.slowest_rank_wait_s <= 0 or k.rank_speed_screened_share >= SCREENED_SHARE:
        return []
    gpus_per_server = max(1, result.num_gpus // max(1, len(doc.nodes))) if doc.nodes else 8
    spares = max(1, math.ceil(SCREENED_SHARE * result.num_gpus / gpus_per_server))
    calibration = {**doc.spec.calibration, "rank_speed_screened_share": SCREENED_SHARE}
    spec = dataclasses.replace(doc.spec, calibration=calibration)
    return [Advice("screen-slowest", f"burn-in screen: slowest {SCREENED_SHARE:.0%} of servers out",
                   "hardware",
                   f"run a GEMM burn-in on every server and keep the slowest {SCREENED_SHARE:.0%} out of the job, "
                   f"replaced from a pool of about {spares} spare server{'s' if spares != 1 else ''} (the hot "
                   f"spares): the wait for the slowest of {result.num_gpus:,} GPUs stops at the screen's cut",
                   Document(spec, doc.metadata), False,
                   set=[f"calibration.rank_speed_screened_share={SCREENED_SHARE}"],
                   spare_share=spares * gpus_per_server / max(1, result.num_gpus))]


def _more_nodes(doc: Document, result: Evaluation, catalog: Catalog) -> list[Advice]:
    nodes = len(doc.nodes)
    out = []
    try:
        if result.num_gpus < doc.num_gpus():
            raise fx.NotApplicable(f"the job uses {result.num_gpus} of the cluster's {doc.num_gpus()} GPUs: "
                                   "raise parallelism.num_gpus first")
        new = fx.extended(doc, 2 * nodes, catalog)
        if new.spec.parallelism is not None and new.spec.parallelism.data_parallel_size is not None:
            new.spec.parallelism = dataclasses.replace(new.spec.parallelism, data_parallel_size=None)
        out.append(Advice("nodes-2x", f"2x servers ({2 * nodes} servers, {2 * result.num_gpus} GPUs)", "scale",
                          "the same fabric design generated for twice the servers; the global batch stays, DP doubles",
                          new, False))
    except fx.NotApplicable as exc:
        out.append(Advice("nodes-2x", "2x servers", "scale", "", None, False, error=str(exc)))
    # DP halved: the same plan on the first half of the GPUs (what the second half buys)
    dp = result.plan["dp"]
    if dp % 2 == 0:
        par = dataclasses.replace(doc.spec.parallelism or Parallelism(), num_gpus=result.num_gpus // 2,
                                  data_parallel_size=None)
        spec = dataclasses.replace(doc.spec, parallelism=par)
        out.append(Advice("dp-half", f"DP {dp} -> {dp // 2} (the first {result.num_gpus // 2} GPUs)", "scale",
                          "the same plan on half the GPUs: what the other half buys", Document(spec, doc.metadata),
                          True, set=[f"parallelism.num_gpus={result.num_gpus // 2}"]))
    return out


def advise(doc: Document, catalog: Catalog | None = None, engine: Engine | None = None,
           result: Evaluation | None = None, include_scale: bool = True, by: str = "speed", progress=None) -> dict:
    """Attribution of the current step and every candidate change, ranked by speed-up (by="cost":
    by the change of tokens per dollar, docs/cost.md). `progress(done, total)`: how many changes are costed so far."""
    t0 = time.perf_counter()
    catalog = catalog or default_catalog()
    engine = engine or Engine(catalog)
    base = fx.detached_copy(doc)
    result = result or engine.evaluate(base)
    why = attribute(result, base, catalog)
    candidates = _plan_candidates(base, result) + _hardware_candidates(base, catalog) \
        + _screen_candidates(base, result)
    if include_scale:
        candidates += _more_nodes(base, result, catalog)
    quick = Engine(catalog, detail=False)
    work = fx.detached_copy(base)  # job-only candidates run on one design: fabric and routes are reused
    for done, a in enumerate(candidates, 1):
        if progress:
            progress(done - 1, len(candidates))
        if a.document is None:
            continue
        try:
            if a.job_only:
                work.replace_job(a.document.spec.workload, a.document.spec.parallelism)
                r = quick.evaluate(work)
            else:
                r = quick.evaluate(a.document)
        except DesignerError as exc:
            a.error = "; ".join(p.message + (f" ({p.fix})" if p.fix else "") for p in exc.problems[:2])
            continue
        a.step_time_s, a.mfu, a.tokens_per_s = r.step_time_s, r.mfu, r.tokens_per_s
        # a change is one to make only when its plan keeps the memory headroom (calibration memory_headroom)
        a.fits_in_memory, a.memory_gib = r.fits_with_headroom, r.memory_gib_per_gpu["total"]
        a.speedup = result.step_time_s / r.step_time_s - 1 if r.step_time_s > 0 else 0.0
        if a.id == "nodes-2x":
            eff = (r.tokens_per_s / result.tokens_per_s) / 2
            a.note = f"{eff:.0%} scaling efficiency: each added GPU buys {eff:.0%} of what the first ones do"
        elif a.id == "dp-half":
            eff = result.tokens_per_s / (2 * r.tokens_per_s)
            a.note = f"going from {result.num_gpus // 2} to {result.num_gpus} GPUs is {eff:.0%} efficient"
        elif not a.fits_in_memory:
            a.note = (f"does not fit: {a.memory_gib:.1f} GiB per GPU" if not r.fits_in_memory else
                      f"fits only without the memory headroom: {a.memory_gib:.1f} of {r.memory_limit_gib:.1f} GiB")
        elif a.category == "hardware" and abs(a.speedup) < NO_GAIN:
            a.note = f"{a.speedup:+.1%}, not the bottleneck ({why['short']})"
        elif a.speedup < -NO_GAIN:
            a.note = "slower"
    from .advice_cost import annotate_costs

    priced = annotate_costs(base, result, candidates, catalog)
    ok = [a for a in candidates if not a.error]
    # Same GPUs first, by speed-up; more servers after them (a bigger cluster is a different
    # question: its note gives the scaling efficiency); plans that do not fit last.
    same = [a for a in ok if a.fits_in_memory and a.category != "scale"]
    if by == "cost":  # tokens per dollar first; unpriced changes after the priced ones
        same.sort(key=lambda a: (a.tokens_per_usd_change is None, -(a.tokens_per_usd_change or 0.0), -a.speedup))
    else:
        same.sort(key=lambda a: -a.speedup)
    ranked = same + [a for a in ok if a.fits_in_memory and a.category == "scale"] \
        + sorted((a for a in ok if not a.fits_in_memory), key=lambda a: -a.speedup)
    skipped = [a for a in candidates if a.error]
    return {"current": {"step_time_s": result.step_time_s, "mfu": result.mfu, "tokens_per_s": result.tokens_per_s,
                        "plan": result.plan, "fits_in_memory": result.fits_in_memory,
                        "fits_with_headroom": result.fits_with_headroom},
            "attribution": why, "ranked": ranked, "not_applicable": skipped, "ranked_by": by,
            "cost": priced,
            "elapsed_s": time.perf_counter() - t0}


def advice_json(report: dict) -> dict:
    return {"current": report["current"], "attribution": report["attribution"],
            "ranked": [a.as_json() for a in report["ranked"]], "ranked_by": report.get("ranked_by", "speed"),
            "cost": _cost_summary(report.get("cost")),
            "not_applicable": [{"id": a.id, "title": a.title, "reason": a.error} for a in report["not_applicable"]],
            "elapsed_s": report["elapsed_s"]}


def _cost_summary(cost) -> dict | None:
    """The current design's capex, fabric share, power and $ per million tokens (not the whole BOM)."""
    if cost is None:
        return None
    keys = ("capex_usd", "fabric_capex_usd", "fabric_share", "power_kw", "usd_per_hour", "tokens_per_s_per_mw",
            "usd_per_million_tokens", "tokens_per_usd", "usd_per_kwh", "amortisation_years", "pue")
    return {k: getattr(cost, k) for k in keys}
