"""Two evaluated designs side by side (`designer compare`, the report's comparison, File > Compare With...).

`compare_designs` puts the headline figures (step time, tokens/s, MFU, peak memory per GPU, the
top bottleneck), the cost figures (capex, fabric capex and share, power, tokens/s per MW, $ per
million tokens) and the step-time breakdown of two evaluations into rows of a `Comparison`: the
value of A, the value of B, B - A and (B - A) / A. Every consumer formats a row the same way
through `Row.text_a/text_b/text_delta/text_pct`, so the command line, the PDF and the app agree.

The cost figures come from designer.core.analysis.cost, imported when needed: a build without
it compares everything else and says so in `notes`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

# Two figures this close are the same figure (the engine's sums may differ in the last bits
# when the same design is evaluated twice in another order): their difference is shown as 0.
# Seconds closer than a microsecond are the same too: the engine claims nothing that fine.
SAME_REL = 1e-9
SAME_ABS = 1e-12
SAME_ABS_S = 1e-6

# How a kind of row is written: (value format, difference format).
_FORMATS = {
    "int": ("{:,.0f}", "{:+,.0f}"),
    "s": ("{:.3f}", "{:+.3f}"),
    "rate": ("{:,.0f}", "{:+,.0f}"),
    "pct": ("{:.1%}", None),  # the difference of two shares is in percentage points
    "gib": ("{:.1f}", "{:+.1f}"),
    "days": ("{:,.1f}", "{:+,.1f}"),
    "usd": ("${:,.0f}", None),
    "kw": ("{:,.1f}", "{:+,.1f}"),
    "usd_small": (None, None),  # three significant digits of the larger value: $0.0413, $1.23
    "text": ("{}", None),
}


@dataclass(frozen=True)
class Row:
    """One figure of both designs."""

    key: str  # machine name: "step_time_s", "breakdown.dp_comm"
    label: str  # what a reader sees: "step time (s)"
    kind: str  # a key of _FORMATS: how the values are written
    a: float | str | None  # None: not known for this design (e.g. no cost engine)
    b: float | str | None
    better: str = ""  # "lower", "higher" or "" (neither is better)

    @property
    def numeric(self) -> bool:
        return self.kind != "text"

    @property
    def same(self) -> bool:
        if self.a is None or self.b is None:
            return self.a is None and self.b is None
        if not self.numeric:
            return self.a == self.b
        return math.isclose(self.a, self.b, rel_tol=SAME_REL, abs_tol=SAME_ABS_S if self.kind == "s" else SAME_ABS)

    @property
    def delta(self) -> float | None:
        """B - A (0 when they are the same figure); None for text or a missing value."""
        if not self.numeric or self.a is None or self.b is None:
            return None
        return 0.0 if self.same else float(self.b) - float(self.a)

    @property
    def delta_pct(self) -> float | None:
        """(B - A) / A as a fraction; None when A is 0 and B is not (no ratio to give)."""
        d = self.delta
        if d is None:
            return None
        if d == 0.0:
            return 0.0
        return d / abs(float(self.a)) if self.a else None

    @property
    def verdict(self) -> str:
        """"better", "worse" or "" (same, or neither direction is better): B against A."""
        d = self.delta
        if not d or not self.better:
            return ""
        return "better" if (d < 0) == (self.better == "lower") else "worse"

    # -- text, one way for every consumer --
    def _value(self, v) -> str:
        if v is None:
            return "n/a"
        if self.kind == "usd_small":
            return f"${v:.{self._decimals()}f}"
        return _FORMATS[self.kind][0].format(v)

    def _decimals(self) -> int:
        """Decimals that give the smaller of A and B three significant digits (2 to 6), both
        written alike: $0.0412 and $1.5500, not $0.04 and $1.55."""
        values = [abs(v) for v in (self.a, self.b) if isinstance(v, (int, float)) and v]
        if not values:
            return 2
        return max(2, min(6, 2 - math.floor(math.log10(min(values)))))

    @property
    def text_a(self) -> str:
        return self._value(self.a)

    @property
    def text_b(self) -> str:
        return self._value(self.b)

    @property
    def text_delta(self) -> str:
        if not self.numeric:
            if self.a is None or self.b is None:
                return ""
            return "same" if self.same else "differs"
        d = self.delta
        if d is None:
            return ""
        if d == 0.0:
            return "0"
        if self.kind == "s" and abs(d) < 0.0005:  # under half a millisecond: "+0.000" would hide it
            return f"{d * 1000:+.2f} ms"
        if self.kind == "pct":
            return f"{d * 100:+.1f} pp"
        if self.kind == "usd":
            return f"{'+' if d > 0 else '-'}${abs(d):,.0f}"
        if self.kind == "usd_small":
            return f"{'+' if d > 0 else '-'}${abs(d):.{self._decimals()}f}"
        return _FORMATS[self.kind][1].format(d)

    @property
    def text_pct(self) -> str:
        p = self.delta_pct
        if p is None:
            return "" if self.delta is None else "new"
        if p == 0.0:
            return "0.0%"
        return f"{'+' if p > 0 else '-'}<0.1%" if abs(p) < 0.0005 else f"{p:+.1%}"

    def as_json(self) -> dict:
        return {"key": self.key, "label": self.label, "a": self.a, "b": self.b, "delta": self.delta,
                "delta_pct": self.delta_pct, "better": self.better, "verdict": self.verdict}


@dataclass
class Side:
    """One of the two designs: where it came from and its evaluation."""

    label: str  # the column title: the file name as given
    name: str  # the design's metadata.name
    num_gpus: int
    breakdown_s: dict[str, float]
    step_time_s: float
    cost: object | None = None  # a CostEstimate, when the cost engine ran
    memory: str = "fits"  # "fits", "fits only without headroom" or "does not fit" (engine/stages/fit.py)
    step_range_s: tuple[float, float] | None = None  # the engine's 80 % range (error_bars.py)


@dataclass
class Comparison:
    """Two designs or plans side by side: headline figures, cost and step-time breakdown."""
    a: Side
    b: Side
    rows: list[Row]  # headline and cost figures
    breakdown: list[Row]  # the step-time breakdown, one row per category
    notes: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        """No figure differs (a design compared with itself)."""
        return all(r.same for r in self.rows + self.breakdown)

    def shown(self, rows: list[Row]) -> tuple[list[Row], list[Row]]:
        """(rows worth showing, rows left out) of `rows`: a figure unknown for both designs (no
        cost engine) or a breakdown category zero in both says nothing; as_json keeps every row."""
        shown, left = [], []
        for r in rows:
            empty = (r.a is None and r.b is None) or (r.key.startswith("breakdown.") and not r.a and not r.b)
            (left if empty else shown).append(r)
        return shown, left

    def row(self, key: str) -> Row:
        return next(r for r in self.rows + self.breakdown if r.key == key)

    @property
    def invalid(self) -> list[str]:
        """Why the headline cannot be trusted: each side that does not fit in memory, or fits only
        without the memory headroom (a plan nobody would run)."""
        return [f"{name} ({side.label}) {side.memory}" for name, side in (("A", self.a), ("B", self.b))
                if side.memory != "fits"]

    @property
    def within_error(self) -> bool:
        """The step times differ by less than the engine's error: the two 80 % ranges overlap."""
        ra, rb = self.a.step_range_s, self.b.step_range_s
        if ra is None or rb is None or self.row("step_time_s").delta == 0:
            return False
        return not (ra[1] < rb[0] or rb[1] < ra[0])

    @property
    def headline(self) -> str:
        """"invalid", or B against A for the buyer: "better", "worse" or "" (same, or within the
        model's error). The figure that decides is the first of cost per run, $ per M tokens, time
        to train and step time that both sides have."""
        if self.invalid:
            return "invalid"
        if self.within_error:
            return ""
        for key in ("usd_per_run", "usd_per_million_tokens", "days_to_train", "step_time_s"):
            r = next((r for r in self.rows if r.key == key and r.a is not None and r.b is not None), None)
            if r is not None:
                return r.verdict
        return ""

    def summary(self) -> str:
        """One sentence: what B changes against A (first whether the comparison holds at all)."""
        text = self._changes()
        if self.invalid:
            text = ("NOT A VALID COMPARISON: " + "; ".join(self.invalid)
                    + " (a plan that does not keep the memory headroom is not one to run). " + text)
        return text

    def _changes(self) -> str:
        if self.identical:
            return f"no difference: B ({self.b.label}) predicts the same as A ({self.a.label})"
        parts = []
        for key, what in (("usd_per_run", "cost per run"), ("days_to_train", "time to train"), ("goodput", "goodput")):
            r = next((r for r in self.rows if r.key == key and r.a is not None and r.b is not None), None)
            if r is not None:
                parts.append(f"{what} {r.text_pct}" if r.delta and key != "goodput" else
                             f"{what} {r.text_delta}" if r.delta else f"the same {what}")
        step = self.row("step_time_s")
        p = step.delta_pct
        if p is None or step.delta == 0:
            parts.append("the same step time")
        else:
            parts.append(f"{abs(p):.1%} {'slower' if p > 0 else 'faster'} per step")
        for key, what in (("capex_usd", "capex"), ("usd_per_million_tokens", "$ per M tokens")):
            r = next((r for r in self.rows if r.key == key), None)
            if r is not None and r.delta_pct is not None:
                parts.append(f"{what} {r.text_pct}" if r.delta else f"the same {what}")
        changed = [r.label for r in self.rows if not r.numeric and not r.same and r.a is not None
                   and r.key not in ("fits_in_memory", "step_time_range")]
        if changed:
            parts.append("a different " + ", ".join(changed))
        text = f"B ({self.b.label}) against A ({self.a.label}): " + ", ".join(parts)
        if self.within_error:
            text += " (within the model's error: the 80 % ranges of the step time overlap)"
        return text

    def as_json(self) -> dict:
        def side(s: Side) -> dict:
            out = {"file": s.label, "name": s.name, "num_gpus": s.num_gpus}
            if s.cost is not None:
                out["cost"] = s.cost.as_json()
            return out

        return {"a": side(self.a), "b": side(self.b), "identical": self.identical, "summary": self.summary(),
                "headline": self.headline, "invalid": self.invalid, "within_error": self.within_error,
                "rows": [r.as_json() for r in self.rows], "breakdown": [r.as_json() for r in self.breakdown],
                "notes": list(self.notes)}


def top_bottleneck(result, communication_only: bool = False) -> str:
    """The most exposed bottleneck as "kind on resource" ("none" when the engine names none);
    `communication_only`: the most exposed of the communication kinds (tp_comm, dp_comm, ...)."""
    found = [b for b in result.bottlenecks if b.get("exposed_s", 0.0) > 0
             and (not communication_only or b["kind"].endswith("_comm"))]
    if not found:
        return "none"
    b = max(found, key=lambda x: x.get("exposed_s", 0.0))
    return b["resource"] if b["kind"] == "compute" else f"{b['kind']} on {b['resource']}"


COST_ROWS = (  # (CostEstimate field, label, kind, better)
    ("capex_usd", "capex", "usd", "lower"),
    ("fabric_capex_usd", "fabric capex", "usd", "lower"),
    ("fabric_share", "fabric share of capex", "pct", ""),
    ("power_kw", "power (kW)", "kw", "lower"),
    ("tokens_per_s_per_mw", "tokens/s per MW", "rate", "higher"),
    ("usd_per_million_tokens", "$ per million tokens", "usd_small", "lower"),
)


def design_cost(doc, result, label: str, catalog=None):
    """(CostEstimate or None, note or None): the cost engine's answer for one design."""
    import importlib

    name = f"{__package__}.cost"
    try:
        cost_module = importlib.import_module(name)  # written beside this module; absent in older builds
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise  # the cost module is there but one of its own imports failed: a bug to see
        return None, "cost figures: not available in this build (no designer.core.analysis.cost)"
    from ..problems import DesignerError

    try:
        return cost_module.estimate_cost(doc, result, catalog=catalog), None
    except DesignerError as exc:  # e.g. a part without a price: the rest of the comparison still holds
        return None, f"cost of {label}: " + "; ".join(p.message for p in exc.problems)


def compare_designs(doc_a, result_a, doc_b, result_b, label_a: str = "A", label_b: str = "B", *,
                    catalog=None, with_cost: bool = True, tokens: float | None = None) -> Comparison:
    """Compare two evaluations (each of its document): B against A. With a token budget `tokens`
    the rows start with cost per run, time to train and goodput (run_cost.py, goodput.py)."""
    notes: list[str] = []
    cost_a = cost_b = None
    if with_cost:
        cost_a, note_a = design_cost(doc_a, result_a, label_a, catalog)
        cost_b, note_b = design_cost(doc_b, result_b, label_b, catalog)
        notes += [n for n in dict.fromkeys((note_a, note_b)) if n]  # the same note once

    ra, rb = result_a, result_b
    range_a, range_b = _step_range(doc_a, ra, catalog), _step_range(doc_b, rb, catalog)
    rows = _run_rows(doc_a, ra, cost_a, doc_b, rb, cost_b, tokens, catalog, notes) + [
        Row("num_gpus", "GPUs", "int", ra.num_gpus, rb.num_gpus),
        Row("step_time_s", "step time (s)", "s", ra.step_time_s, rb.step_time_s, "lower"),
        Row("step_time_range", "step time, 80 % range (s)", "text", _range_text(range_a), _range_text(range_b)),
        Row("tokens_per_s", "tokens/s", "rate", ra.tokens_per_s, rb.tokens_per_s, "higher"),
        Row("mfu", "MFU", "pct", ra.mfu, rb.mfu, "higher"),
        # less memory is no merit of a plan that fits: neither direction is better for the buyer
        Row("memory_gib_per_gpu", "memory per GPU, peak (GiB)", "gib", ra.memory_gib_per_gpu["total"],
            rb.memory_gib_per_gpu["total"]),
        Row("fits_in_memory", "fits in memory (with headroom)", "text", _memory(ra), _memory(rb)),
        Row("bottleneck", "top bottleneck", "text", top_bottleneck(ra), top_bottleneck(rb)),
        Row("communication_bottleneck", "top communication bottleneck", "text", top_bottleneck(ra, True),
            top_bottleneck(rb, True)),
    ]
    if with_cost:
        for key, label, kind, better in COST_ROWS:
            rows.append(Row(key, label, kind, _field(cost_a, key), _field(cost_b, key), better))
    keys = list(ra.breakdown_s) + [k for k in rb.breakdown_s if k not in ra.breakdown_s]
    breakdown = [Row(f"breakdown.{k}", k, "s", ra.breakdown_s.get(k, 0.0), rb.breakdown_s.get(k, 0.0), "lower")
                 for k in keys]
    side_a = Side(label_a, doc_a.metadata.name or "untitled", ra.num_gpus, dict(ra.breakdown_s), ra.step_time_s,
                  cost_a, _memory(ra), range_a)
    side_b = Side(label_b, doc_b.metadata.name or "untitled", rb.num_gpus, dict(rb.breakdown_s), rb.step_time_s,
                  cost_b, _memory(rb), range_b)
    return Comparison(side_a, side_b, rows, breakdown, notes)


def column_labels(path_a: str, path_b: str) -> tuple[str, str]:
    """Column titles for two files: their names, or their paths when the names are the same."""
    import os

    a, b = os.path.basename(path_a) or path_a, os.path.basename(path_b) or path_b
    if a == b and os.path.abspath(path_a) != os.path.abspath(path_b):
        return path_a, path_b
    return a, b


def _memory(result) -> str:
    """The fit verdict: "fits", "fits only without headroom" or "does not fit"."""
    if getattr(result, "fits_with_headroom", result.fits_in_memory):
        return "fits"
    return "fits only without headroom" if result.fits_in_memory else "does not fit"


def _step_range(doc, result, catalog) -> tuple[float, float] | None:
    from ..problems import DesignerError
    from .error_bars import step_time_range

    try:
        return step_time_range(result, doc, catalog).range_s
    except (DesignerError, KeyError, OSError):  # no workload to classify, or no ranges file
        return None


def _range_text(span) -> str | None:
    return None if span is None else f"{span[0]:.3f} - {span[1]:.3f}"


def _run_rows(doc_a, ra, cost_a, doc_b, rb, cost_b, tokens, catalog, notes) -> list[Row]:
    """Per run first (the buyer's figures): cost per run and time to train for `tokens`, and goodput."""
    from ..problems import DesignerError
    from .goodput import job_goodput
    from .run_cost import run_cost

    try:
        good_a, good_b = job_goodput(doc_a, ra, catalog), job_goodput(doc_b, rb, catalog)
    except DesignerError as exc:
        notes.append("goodput: " + "; ".join(p.message for p in exc.problems))
        return []
    rows = []
    if tokens:
        run_a = run_cost(tokens, ra.tokens_per_s, ra.num_gpus, cost_a, good_a) if cost_a else None
        run_b = run_cost(tokens, rb.tokens_per_s, rb.num_gpus, cost_b, good_b) if cost_b else None
        rows += [Row("usd_per_run", f"cost per run of {tokens / 1e12:g}T tokens", "usd",
                     run_a.usd if run_a else None, run_b.usd if run_b else None, "lower"),
                 Row("days_to_train", f"time to train {tokens / 1e12:g}T tokens (days)", "days",
                     run_a.days if run_a else None, run_b.days if run_b else None, "lower")]
    rows.append(Row("goodput", "goodput (failures, checkpoints)", "pct", good_a.goodput, good_b.goodput, "higher"))
    return rows


def _field(cost, key: str):
    if cost is None:
        return None
    value = getattr(cost, key, None)
    return None if value is None else float(value)
