"""The plan search with the NVLink domain size as one more dimension:
`designer search FILE --nvlink-domain-gpus 4,72`.

Each size is the same servers and scale-out fabric with the servers regrouped into domains of
that many GPUs (advice_design.with_nvlink_domains); the plan search runs on each and the best
plans of all sizes are ranked together, each row naming its domain size.
"""
from __future__ import annotations

import dataclasses

from ..engine.evaluate import Engine
from ..model.catalog import Catalog, default_catalog
from ..model.document import Document
from ..problems import DesignerError, Problem
from . import fabric_edits as fx
from .advice_design import domain_sizes, with_nvlink_domains
from .search import SearchResult, search
from .space import SpaceCounts


def search_domain_sizes(doc: Document, sizes: list[int], top: int = 10, catalog: Catalog | None = None,
                        **kwargs) -> SearchResult:
    """The `top` fastest (plan, domain size) pairs; each row has "nvlink_domain_gpus"."""
    catalog = catalog or default_catalog()
    variants = []
    for size in sizes:
        try:
            variants.append((size, with_nvlink_domains(doc, size, catalog)))
        except fx.NotApplicable as exc:
            raise DesignerError([Problem(str(exc), "--nvlink-domain-gpus", fix=_fix(doc, catalog))]) from None
    results = []
    for size, variant in variants:
        r = search(variant, top=top, catalog=catalog, **kwargs)
        for row in r.top:
            row["nvlink_domain_gpus"] = size
        results.append((size, r))
    rows = sorted((row for _, r in results for row in r.top), key=lambda row: row["step_time_s"])[:top]
    counts = SpaceCounts()
    for _, r in results:
        for f in dataclasses.fields(SpaceCounts):
            setattr(counts, f.name, getattr(counts, f.name) + getattr(r.counts, f.name))
    now = max(domain_sizes(doc).values()) if doc.nodes else 0
    current = next((r.current for size, r in results if size == now), None)
    if current is not None:
        current = dict(current, nvlink_domain_gpus=now)
    verdict = _verdict(rows, current, doc, now)
    return SearchResult(rows, counts, sum(r.evaluated for _, r in results), sum(r.cut_by_bound for _, r in results),
                        sum(r.failed for _, r in results), sum(r.elapsed_s for _, r in results),
                        results[0][1].runner if results else "", current, verdict,
                        sum(r.bound_violations for _, r in results),
                        [w for _, r in results for w in r.warnings])


def _fix(doc: Document, catalog: Catalog) -> str:
    if not doc.nodes:
        return "add servers"
    node = doc.nodes[0]
    name = catalog.resolve("accelerators", node.accelerator) or node.accelerator
    most = max(catalog.accelerators[name].scale_up_domain_max, node.accelerator_count) if name in catalog.accelerators \
        else node.accelerator_count
    per = node.accelerator_count
    return f"use multiples of {per} up to {most}, e.g. --nvlink-domain-gpus {per},{most // per * per}"


def _verdict(rows: list[dict], current: dict | None, doc: Document, now: int) -> str:
    if not rows:
        return "no plan fits in memory at any of these domain sizes"
    best = rows[0]
    head = f"NVL{best['nvlink_domain_gpus']}, {best['point'].label()}"
    if current is None or not current.get("fits_in_memory"):
        try:  # the file's plan on the file's own domains
            r = Engine(detail=False).evaluate(doc)
            cur_s = r.step_time_s if r.fits_in_memory else None
        except DesignerError:
            cur_s = None
    else:
        cur_s = current["step_time_s"]
    if cur_s is None:
        return f"best: {head}, {best['step_time_s']:.3f} s per step"
    gain = cur_s / best["step_time_s"] - 1
    return (f"best: {head}, {best['step_time_s']:.3f} s per step, {gain:+.1%} against the file's plan on its "
            f"own {now}-GPU domains ({cur_s:.3f} s)")
