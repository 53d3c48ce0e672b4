"""Where the step goes: the share of step time lost to each cause, and the critical resource.

The engine's breakdown is the critical path of the step (it adds up to the step time). This
module splits it further:
  - each communication kind over the link class its collectives are limited by (NVLink or
    PCIe inside a server, the NIC, leaf-spine or spine-core up-links), and into its latency
    and bandwidth parts. A kind's exposed seconds are split over its collectives in
    proportion to their cost, as the engine does not keep per-call exposure;
  - the pipeline bubble, and the imbalance wait with the stragglers that cause it;
  - recomputation, marked "forced by memory" when the plan without it would not fit.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..engine.constants import accelerator_constants, engine_constants, uses_flash_attention
from ..engine.evaluate import Evaluation, resolve_job
from ..engine.memory import estimate_memory
from ..engine.stages.layout import stage_layers
from ..model.network_reach import job_servers
from ..model.catalog import Catalog, default_catalog
from ..model.document import Document
from ..model.pipeline_split import split_options
from ..units import GIB

LINK_CLASSES = ("NVLink", "PCIe", "NIC", "leaf-spine", "spine-core")


@dataclass
class Cause:
    """One cause of step time (a breakdown part on a link class), with its seconds and share."""
    cause: str  # what a user reads: "dp_comm over NIC (bandwidth)"
    kind: str  # breakdown key it comes from
    link_class: str  # NVLink | PCIe | NIC | leaf-spine | spine-core | "" (not a link)
    seconds: float
    share: float
    detail: str = ""

    def as_json(self) -> dict:
        return dataclasses.asdict(self)


def link_class_of(resource: str, doc: Document) -> str:
    """The link class of an engine bottleneck name."""
    if resource.startswith("scale-up"):
        return "PCIe" if "(pcie)" in resource else "NVLink"
    if resource.startswith("NIC"):
        return "NIC"
    if resource.startswith("up-links of "):
        switch = doc.find("switches", resource[len("up-links of "):].split(" ")[0])
        return "spine-core" if switch is not None and switch.tier != "leaf" else "leaf-spine"
    if resource.startswith("pod "):
        return "spine-core"
    return ""


def stragglers(doc: Document, num_gpus: int) -> list[str]:
    out = []
    for node in job_servers(doc, num_gpus):
        if node.slowdown > 1:
            out.append(f"{node.id} ({node.slowdown:g}x slower)")
        for i, f in enumerate(node.gpu_slowdown or []):
            if f > 1:
                out.append(f"{node.id} GPU {i} ({f:g}x)")
    out += [f"link {link.id} ({link.slowdown:g}x)" for link in doc.links if link.slowdown > 1]
    return out


def recompute_forced(doc: Document, catalog: Catalog | None = None) -> bool | None:
    """True when the plan would not fit without its recomputation (None: no recompute)."""
    catalog = catalog or default_catalog()
    job = resolve_job(doc, catalog)
    par = job.parallelism
    if par.recompute_granularity == "none":
        return None
    plan, m = job.plan, job.shape
    acc = catalog.accelerator(doc.nodes[0].accelerator)
    k = engine_constants(doc.spec.calibration)
    layers = [[i for ch in st for i in ch] for st in stage_layers(m, plan.pp, plan.vp, split_options(par))]
    ac = accelerator_constants(acc, doc.spec.calibration, catalog)
    flash = uses_flash_attention(ac, par.attention_backend)
    mem = estimate_memory(m, plan, dataclasses.replace(par, recompute_granularity="none"), layers, k, flash=flash)
    return mem.total > acc.hbm_gib * GIB


# The breakdown's communication kinds and the parallel dimension whose collectives they are
_COMM_DIMS = {"tp_comm": "tp", "cp_comm": "cp", "ep_comm": "ep", "pp_comm": "pp", "dp_comm": "dp"}


def attribute(result: Evaluation, doc: Document, catalog: Catalog | None = None) -> dict:
    """Causes of the step time, largest first, and the resource on the critical path."""
    step = result.step_time_s
    b = result.breakdown_s
    forced = recompute_forced(doc, catalog) if b["recompute"] > 0 else None
    slow = stragglers(doc, result.num_gpus)
    found = [_cause(step, "GPU compute", "compute", b["compute"], detail="GEMMs, attention and memory-bound kernels"),
             _cause(step, "recompute (forced by memory)" if forced else
                    "recompute (optional: the plan fits without it)", "recompute", b["recompute"],
                    detail="the plan would not fit without it" if forced else
                    "recompute_granularity: none fits in memory and saves this time"),
             *_comm_causes(result, doc),
             _cause(step, "pipeline bubble", "bubble", b["bubble"],
                    detail=f"{result.plan.get('schedule')}, PP {result.plan.get('pp')}, "
                    f"{result.plan.get('num_microbatches')} micro-batches"),
             *_wait_causes(result, slow),
             _cause(step, "optimizer step", "optimizer", b["optimizer"])]
    causes = [c for c in found if c is not None]
    causes.sort(key=lambda c: c.seconds, reverse=True)
    losses = [c for c in causes if c.kind != "compute"]
    critical = losses[0] if losses else None
    compute_share = b["compute"] / step if step else 0.0
    summary, short = _summaries(critical, compute_share)
    return {"step_time_s": step, "causes": [c.as_json() for c in causes], "short": short,
            "critical": critical.as_json() if critical else None,
            "critical_resource": _critical_resource(critical, result, slow, forced),
            "compute_share": compute_share, "summary": summary}


def _cause(step: float, cause: str, kind: str, seconds: float, link_class: str = "",
           detail: str = "") -> Cause | None:
    """The cause with its share of the step; None when it costs no time."""
    if seconds > 0:
        return Cause(cause, kind, link_class, seconds, seconds / step if step else 0.0, detail)
    return None


def _comm_causes(result: Evaluation, doc: Document) -> list[Cause | None]:
    """Each communication kind's exposed seconds over the link classes its collectives are limited
    by, split into latency and bandwidth (in proportion to the collectives' costs)."""
    step, b = result.step_time_s, result.breakdown_s
    out: list[Cause | None] = []
    for kind, dim in _COMM_DIMS.items():
        exposed = b[kind]
        if exposed <= 0:
            continue
        mine = {key: c for key, c in result.collectives.items()
                if key.split(":")[0] == dim or (dim == "dp" and key.startswith("edp:"))}
        total = sum(c["time_s"] for c in mine.values())
        if total <= 0:
            out.append(_cause(step, f"{kind} (waits)", kind, exposed))
            continue
        split: dict[tuple[str, str], float] = {}
        for key, c in mine.items():
            part = exposed * c["time_s"] / total
            lat = part * min(1.0, c["latency_s"] / c["time_s"]) if c["time_s"] > 0 else 0.0
            cls = link_class_of(c["bottleneck"], doc)
            split[(cls, "latency")] = split.get((cls, "latency"), 0.0) + lat
            split[(cls, "bandwidth")] = split.get((cls, "bandwidth"), 0.0) + part - lat
        for (cls, term), seconds in split.items():
            where = f" over {cls}" if cls else ""
            out.append(_cause(step, f"{kind}{where} ({term})", kind, seconds, cls if term == "bandwidth" else "",
                              "bound by the per-message latency" if term == "latency" else "bound by link bandwidth"))
    return out


def _wait_causes(result: Evaluation, slow: list[str]) -> list[Cause | None]:
    """The imbalance wait: the part spent waiting for the slowest GPU, and the rest (stragglers or
    uneven stages)."""
    step, b = result.step_time_s, result.breakdown_s
    tail = min(getattr(result, "slowest_rank_wait_s", 0.0), b["imbalance_wait"])
    rest = b["imbalance_wait"] - tail
    out: list[Cause | None] = []
    if tail > 0:
        out.append(_cause(step, "waiting for the slowest GPU", "imbalance_wait", tail,
                          detail=f"every collective waits for the slowest of {result.num_gpus:,} GPUs: identical "
                          "GPUs differ in speed under power and thermal limits (rank_speed_cv); a burn-in screen of "
                          "the slowest servers (rank_speed_screened_share) cuts the wait"))
    out.append(_cause(step, "imbalance and stragglers", "imbalance_wait", rest,
                      detail=("waiting for " + ", ".join(slow[:6]) + (" ..." if len(slow) > 6 else "")) if slow
                      else "uneven stages (the first and last hold the embedding and the output layer)"))
    return out


def _summaries(critical: Cause | None, compute_share: float) -> tuple[str, str]:
    """The sentence that says what limits the step, and its short form."""
    if critical is None:
        return "the step is all compute", "all compute"
    if compute_share >= 0.5:
        summary = (f"compute-bound ({compute_share:.0%} of the step); the largest loss is {critical.cause}, "
                   f"{critical.share:.1%}")
    else:
        summary = f"limited by {critical.cause}: {critical.share:.1%} of the step (compute is {compute_share:.0%})"
    return summary, ("compute-bound; " if compute_share >= 0.5 else "") + f"{critical.cause} {critical.share:.0%}"


def _critical_resource(critical: Cause | None, result: Evaluation, slow: list[str], forced: bool | None) -> str:
    """What the largest loss waits on: a link (the costliest collective's bottleneck), the slowest
    GPU, a straggler, the schedule, HBM or memory."""
    if critical is None:
        return ""
    if critical.kind.endswith("_comm"):
        dim = _COMM_DIMS[critical.kind]
        hits = sorted((c for key, c in result.collectives.items() if key.split(":")[0] in (dim, "edp" if dim == "dp"
                                                                                          else dim)),
                      key=lambda c: c["time_s"], reverse=True)
        return hits[0]["bottleneck"] if hits else ""
    if critical.kind == "imbalance_wait" and critical.cause == "waiting for the slowest GPU":
        return f"the slowest of {result.num_gpus:,} GPUs"
    if critical.kind == "imbalance_wait" and slow:
        return slow[0]
    if critical.kind == "imbalance_wait":
        return "uneven pipeline stages"
    return {"bubble": "pipeline schedule", "optimizer": "HBM",
            "recompute": "GPU memory" if forced else "the recompute setting"}.get(critical.kind, "")
