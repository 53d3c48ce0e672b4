"""The buying decision: one model and global batch on several designs, each at the best plan the
plan search finds under the same rules (memory headroom), per run: time to train a token budget,
dollars, energy, goodput, with the engine's error range (docs/decide.md).
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

from ..engine.evaluate import Engine
from ..model.catalog import Catalog, default_catalog
from ..model.document import Document
from ..model.job import Parallelism, Workload
from ..problems import DesignerError, Problem
from ..units import usd_text
from .cost import CostEstimate, estimate_cost
from .error_bars import StepRange, step_time_range
from .goodput import Goodput, job_goodput
from .run_cost import RunCost, run_cost
from .search import search


@dataclass
class DesignAnswer:
    """One candidate design's best plan with its cost, goodput and the cost of the training run."""
    name: str
    num_gpus: int
    accelerator: str
    plan: str = ""  # the best plan's label
    point: object = None  # the search's Point of the best plan
    evaluation: object = None  # the engine's Evaluation of the best plan
    cost: CostEstimate | None = None
    goodput: Goodput | None = None
    run: RunCost | None = None
    step_range: StepRange | None = None
    hours_range: tuple[float, float] | None = None  # wall hours at the step range's ends
    usd_range: tuple[float, float] | None = None
    bottleneck: str = ""
    search_s: float = 0.0
    plans_costed: int = 0
    error: str = ""  # why this design has no answer (no plan fits, ...)
    document: Document | None = None  # the design with its best plan (what the report draws and exports)
    changes: list | None = None  # the Advisor's best changes of that plan (add_top_changes); None: not asked

    def as_json(self) -> dict:
        out = {"name": self.name, "num_gpus": self.num_gpus, "accelerator": self.accelerator,
               "search_s": self.search_s, "plans_costed": self.plans_costed}
        if self.error:
            return out | {"error": self.error}
        r = self.evaluation
        out |= {"plan": self.plan, "plan_settings": self.point.as_json() if hasattr(self.point, "as_json") else {},
                "step_time_s": r.step_time_s, "step_time_range_s": list(self.step_range.range_s),
                "error_class": self.step_range.error_class, "mfu": r.mfu, "tokens_per_s": r.tokens_per_s,
                "memory_gib": r.memory_gib_per_gpu["total"], "memory_limit_gib": r.memory_limit_gib,
                "fits_in_memory": r.fits_in_memory, "fits_with_headroom": r.fits_with_headroom,
                "bottleneck": self.bottleneck, "breakdown_s": r.breakdown_s,
                "run": self.run.as_json(), "hours_range": list(self.hours_range),
                "usd_range": list(self.usd_range), "goodput": self.goodput.as_json(),
                "capex_usd": self.cost.capex_usd, "usd_per_hour": self.cost.usd_per_hour}
        if self.changes is not None:
            out["changes"] = [{"id": c.id, "title": c.title, "speedup": c.speedup, "set": c.set,
                               "tokens_per_usd_change": c.tokens_per_usd_change} for c in self.changes]
        return out


@dataclass
class Decision:
    """Which design trains the token budget best, with every candidate's answer and the verdict."""
    tokens: float
    answers: list[DesignAnswer]
    verdict: str = ""
    within_error: bool = False  # the two fastest overlap within the model's error
    notes: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0

    def as_json(self) -> dict:
        return {"tokens": self.tokens, "verdict": self.verdict, "within_error": self.within_error,
                "notes": self.notes, "elapsed_s": self.elapsed_s, "designs": [a.as_json() for a in self.answers]}


def _bottleneck(r) -> str:
    """The largest part of the step that is not the model's own math (or compute when nothing else is)."""
    parts = {k: v for k, v in r.breakdown_s.items() if v > 0}
    if not parts:
        return ""
    others = {k: v for k, v in parts.items() if k != "compute"}
    key = max(others or parts, key=(others or parts).__getitem__)
    return f"{key} {parts[key] / r.step_time_s:.0%} of the step"


def answer_design(name: str, doc: Document, tokens: float, catalog: Catalog, workers: int | None = None,
                  progress=None) -> DesignAnswer:
    """Search `doc`'s plans, cost the best one per run."""
    num_gpus = (doc.spec.parallelism.num_gpus if doc.spec.parallelism else None) or doc.num_gpus()
    acc = doc.nodes[0].accelerator if doc.nodes else "?"
    answer = DesignAnswer(name, num_gpus, acc)
    t0 = time.perf_counter()
    try:
        found = search(doc, top=1, workers=workers, catalog=catalog, progress=progress)
    except DesignerError as exc:
        answer.error = "; ".join(p.message for p in exc.problems)
        return answer
    answer.search_s, answer.plans_costed = time.perf_counter() - t0, found.evaluated
    if not found.top:
        answer.error = found.verdict
        return answer
    best = found.top[0]
    point = best["point"]
    work = doc.copy()
    work.replace_job(point.workload(work.spec.workload), point.parallelism(work.spec.parallelism or Parallelism()))
    r = Engine(catalog).evaluate(work)
    answer.point, answer.plan, answer.evaluation, answer.document = point, point.label(), r, work
    answer.cost = estimate_cost(work, r, catalog=catalog)
    answer.goodput = job_goodput(work, r, catalog)
    answer.run = run_cost(tokens, r.tokens_per_s, r.num_gpus, answer.cost, answer.goodput)
    answer.step_range = step_time_range(r, work, catalog)
    lo, hi = answer.step_range.range_s
    scale = answer.run.hours / r.step_time_s
    answer.hours_range = (lo * scale, hi * scale)
    answer.usd_range = (answer.run.usd * lo / r.step_time_s, answer.run.usd * hi / r.step_time_s)
    answer.bottleneck = _bottleneck(r)
    return answer


TOP_CHANGES = 3  # the Advisor's changes the decision report gives per design


def add_top_changes(decision: Decision, catalog: Catalog | None = None, count: int = TOP_CHANGES) -> None:
    """Each answered design's best `count` changes by the Advisor (analysis/whatif.py) at its best
    plan: the ones that fit with the memory headroom and buy more than the engine's noise, best
    first; what could still change the decision. Not the 'more servers' changes: the decision
    fixes the GPUs."""
    from .whatif import NO_GAIN, advise

    catalog = catalog or default_catalog()
    for a in decision.answers:
        if a.error or a.document is None:
            continue
        report = advise(a.document, catalog, result=a.evaluation, include_scale=False)
        a.changes = [c for c in report["ranked"] if c.fits_in_memory and c.speedup > NO_GAIN][:count]


def same_job(doc: Document, workload: Workload, parallelism: Parallelism | None) -> None:
    """Put the job on `doc`: the workload as given, the plan's settings on all of its GPUs."""
    par = dataclasses.replace(parallelism or Parallelism(), num_gpus=None)
    doc.set_job(workload, par)


def decide(designs: list[tuple[str, Document]], tokens: float, catalog: Catalog | None = None,
           workers: int | None = None, progress=None) -> Decision:
    """Each design (with its job: same_job) at its best plan, per run of `tokens` tokens."""
    if len(designs) < 2:
        raise DesignerError([Problem("a decision needs two designs or more", "designs",
                                     fix="designer decide A.yaml B.yaml --scenario job.yaml --tokens 15T")])
    catalog = catalog or default_catalog()
    t0 = time.perf_counter()
    answers = []
    for name, doc in designs:
        if progress:
            progress(name)
        answers.append(answer_design(name, doc, tokens, catalog, workers))
    decision = Decision(tokens, answers, elapsed_s=time.perf_counter() - t0)
    _verdict(decision)
    return decision


def _verdict(d: Decision) -> None:
    ok = [a for a in d.answers if not a.error and a.run is not None]
    for a in d.answers:
        if a.error:
            d.notes.append(f"{a.name}: no answer: {a.error}")
    if not ok:
        d.verdict = "no design has a plan that fits with the memory headroom"
        return
    by_usd = sorted(ok, key=lambda a: a.run.usd)
    by_time = sorted(ok, key=lambda a: a.run.hours)
    cheap, fast = by_usd[0], by_time[0]
    if len(ok) == 1:
        d.verdict = f"only {cheap.name} has a plan that fits: {cheap.run.days:.1f} days, {usd_text(cheap.run.usd)}"
        return
    runner = by_usd[1]
    overlap = cheap.usd_range[1] >= runner.usd_range[0]
    d.within_error = overlap
    text = (f"{cheap.name} trains the budget for {usd_text(cheap.run.usd)} against {usd_text(runner.run.usd)} "
            f"on {runner.name} ({runner.run.usd / cheap.run.usd - 1:.0%} more)")
    if fast is not cheap:
        text += f"; {fast.name} is faster ({fast.run.days:.1f} days against {cheap.run.days:.1f})"
    else:
        text += f", and in {cheap.run.days:.1f} days against {runner.run.days:.1f}"
    if overlap:
        text += ": within the model's error (the 80 % ranges overlap), not a decision on these figures alone"
    d.verdict = text


# The figures of one design's answer, as the command line's table and the app's dialog show them:
# (label, text of a DesignAnswer), the buyer's first.
ANSWER_ROWS = (
    ("GPUs", lambda a: f"{a.num_gpus:,} {a.accelerator.split('-')[0]}"),
    ("time to train (days)", lambda a: f"{a.run.days:,.1f}"),
    ("  80 % range (days)", lambda a: f"{a.hours_range[0] / 24:,.1f} - {a.hours_range[1] / 24:,.1f}"),
    ("cost per run", lambda a: usd_text(a.run.usd)),
    ("  80 % range", lambda a: f"{usd_text(a.usd_range[0])} - {usd_text(a.usd_range[1])}"),
    ("  of it lost work", lambda a: usd_text(a.run.usd_lost)),
    ("  of it hot spares", lambda a: usd_text(a.run.spares_usd)),
    ("goodput", lambda a: f"{a.goodput.goodput:.1%}"),
    ("interruptions per day", lambda a: f"{a.goodput.interruptions_per_day:.1f}"),
    ("checkpoint every (min)", lambda a: f"{a.goodput.interval_s / 60:.1f}"),
    ("hot spares (GPUs)", lambda a: f"{a.goodput.hot_spares} x {a.goodput.spare_unit_gpus}"),
    ("GPU-hours (M)", lambda a: f"{a.run.gpu_hours / 1e6:,.2f}"),
    ("energy (MWh)", lambda a: f"{a.run.energy_mwh:,.0f}"),
    ("step time (s)", lambda a: f"{a.evaluation.step_time_s:.3f}"),
    ("  80 % range (s)", lambda a: f"{a.step_range.range_s[0]:.3f} - {a.step_range.range_s[1]:.3f}"),
    ("  error class", lambda a: a.step_range.error_class),
    ("MFU", lambda a: f"{a.evaluation.mfu:.1%}"),
    ("memory (GiB per GPU)", lambda a: f"{a.evaluation.memory_gib_per_gpu['total']:.1f} of "
                                       f"{a.evaluation.memory_limit_gib:.1f}"),
)
