"""The cost side of what-if advice: each candidate's change of capex, fabric cost and tokens per
dollar, so the Advisor ranks by tokens per dollar as well as by speed (docs/cost.md).

A job-only candidate keeps the hardware: its capex is the same and its tokens per dollar move
with its throughput (and with the share of the cluster the job uses). A hardware candidate is
priced as its changed design.
"""
from __future__ import annotations

from ..model.catalog import Catalog
from ..model.prices import price_book
from ..problems import DesignerError
from .cost import CostEstimate, estimate_cost


# Changes no part of the price book buys: they keep None (not ranked by cost) and say why.
UNPRICED = {"scale-up-2x": "not priced: a faster scale-up fabric is not a part one can buy for the same servers"}


def _job_share(tokens_per_s: float, num_gpus: int, cluster_gpus: int, usd_per_hour: float) -> float | None:
    """Tokens per dollar of a job that uses `num_gpus` of the cluster (it pays its share)."""
    share = num_gpus / cluster_gpus if cluster_gpus and num_gpus else 1.0
    cost = usd_per_hour * share
    return tokens_per_s * 3600.0 / cost if cost > 0 and tokens_per_s > 0 else None


def _change(new: float | None, old: float | None) -> float | None:
    return new / old - 1.0 if new is not None and old else None


def cost_text(speedup: float, capex_change: float | None, fabric_change: float | None,
              tokens_per_usd_change: float | None) -> str:
    """'-1.8% speed, -14% fabric cost, +12% tokens/$' (what the Advisor shows beside a change)."""
    parts = [f"{speedup:+.1%} speed"]
    if fabric_change is not None and abs(fabric_change) >= 0.0005:
        parts.append(f"{fabric_change:+.0%} fabric cost")
    if capex_change is not None and abs(capex_change) >= 0.0005:
        parts.append(f"{capex_change:+.1%} capex")
    if tokens_per_usd_change is not None:
        parts.append(f"{tokens_per_usd_change:+.1%} tokens/$")
    return ", ".join(parts)


def annotate_costs(base_doc, base_result, candidates, catalog: Catalog | None = None) -> CostEstimate | None:
    """Fill capex_change, fabric_capex_change, tokens_per_usd_change and cost_note of each costed
    candidate. Returns the base design's estimate, or None when it cannot be priced (then every
    candidate keeps None: the speed ranking stands alone)."""
    try:  # one price book (the design's spec.prices over the shipped file) for every candidate
        book = price_book(base_doc.spec.prices, catalog)
        base = estimate_cost(base_doc, base_result, catalog=catalog, prices=book)
    except DesignerError:
        return None
    cluster_gpus = base_doc.num_gpus()
    base_tpu = _job_share(base_result.tokens_per_s, base_result.num_gpus, cluster_gpus, base.usd_per_hour)
    for a in candidates:
        if a.error or a.document is None or not a.tokens_per_s:
            continue
        if a.id in UNPRICED:
            a.cost_note = UNPRICED[a.id]
            continue
        if a.job_only:
            est, gpus = base, cluster_gpus
            num_gpus = _job_gpus(a, base_result, cluster_gpus)
        else:
            try:
                est = estimate_cost(a.document, catalog=catalog, prices=book)
            except DesignerError:
                continue
            gpus = a.document.num_gpus()
            num_gpus = gpus if a.category == "scale" else min(base_result.num_gpus, gpus)
        pool = 1.0 + a.spare_share  # a spare pool is bought and powered with the rest
        tpu = _job_share(a.tokens_per_s, num_gpus, gpus, est.usd_per_hour * pool)
        a.capex_change = _change(est.capex_usd * pool, base.capex_usd)
        a.fabric_capex_change = _change(est.fabric_capex_usd, base.fabric_capex_usd)
        a.tokens_per_usd_change = _change(tpu, base_tpu)
        a.cost_note = cost_text(a.speedup, a.capex_change, a.fabric_capex_change, a.tokens_per_usd_change)
    return base


def _job_gpus(advice, base_result, cluster_gpus: int) -> int:
    """GPUs a job-only candidate uses: its num_gpus when it sets one, else the base job's."""
    par = advice.document.spec.parallelism
    if par is not None and par.num_gpus:
        return min(par.num_gpus, cluster_gpus)
    return base_result.num_gpus


def oversubscribed(doc, ratio: float, catalog: Catalog | None = None):
    """The design with its fabric generated again at `ratio`:1 at the leaves (fewer spines and
    cables: cheaper, maybe slower); servers, job and NVLink domains carry over."""
    from ..generate.fat_tree import FatTreeError, generate_fat_tree
    from ..model.document import Document
    from . import fabric_edits as fx

    if not any(s.tier == "spine" for s in doc.switches):
        raise fx.NotApplicable("no spine tier: a single-switch or spine-less fabric has nothing to thin out")
    params = fx.fabric_parameters(doc)
    if params["oversubscription"] >= ratio:
        raise fx.NotApplicable(f"the leaves are already {params['oversubscription']:g}:1")
    params["oversubscription"] = ratio
    try:
        out = generate_fat_tree(len(doc.nodes), catalog=catalog, name=f"{doc.metadata.name} {ratio:g}:1", **params)
    except FatTreeError as exc:
        raise fx.NotApplicable(str(exc)) from exc
    for src, node in zip(doc.nodes, out.nodes):  # the servers' own settings, domains included
        for key in ("scale_up", "scale_up_gbps", "gpus_per_nic", "gpudirect_rdma", "nvlink_domain"):
            setattr(node, key, getattr(src, key))
    out.spec.workload = doc.spec.workload
    out.spec.parallelism = doc.spec.parallelism
    out.spec.calibration = dict(doc.spec.calibration)
    out.spec.prices = dict(doc.spec.prices)
    return Document(out.spec, out.metadata)
