"""`designer cost`: the bill of materials, capex, power and $ per million tokens of a design.

The logic is designer/core/analysis/cost.py; this module prints it (docs/cost.md).
"""
from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from ..core.problems import EXIT_OK
from .common import EPILOG, err, number_between
from .job import add_job_arguments, load_job

if TYPE_CHECKING:
    from ..core.analysis.cost import CostEstimate


def register(subparsers) -> None:
    p = subparsers.add_parser("cost", help="bill of materials, capex, power, tokens/s per MW and $ per million tokens",
                              epilog=EPILOG)
    add_job_arguments(p)
    p.add_argument("--json", action="store_true", help="bom lines, capex_usd, fabric_share, power_kw, "
                   "tokens_per_s_per_mw, usd_per_million_tokens")
    # $10/kWh is some 20 times the dearest grid power; 0.1 to 50 years spans every amortisation in use
    p.add_argument("--usd-per-kwh", type=number_between(0, 10, "$ per kWh"), default=None, metavar="X",
                   help="energy price in $ per kWh (default: the file's spec.prices.usd_per_kwh, else 0.08)")
    p.add_argument("--years", type=number_between(0.1, 50, "years"), default=4.0, metavar="N",
                   help="amortisation period of the capex in years (default 4)")
    p.add_argument("--tokens", metavar="N", default=None,
                   help="a token budget (e.g. 15T): also time, GPU-hours, energy, dollars and goodput per run")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..core.analysis.cost import estimate_cost

    doc = load_job(args)
    result = None
    if doc.spec.workload is not None:  # the job's throughput, as `designer evaluate` predicts it
        from ..core.engine.evaluate import Engine

        result = Engine().evaluate(doc)
        for w in result.warnings:
            err(f"warning: {w}")
    estimate = estimate_cost(doc, result, usd_per_kwh=args.usd_per_kwh, amortisation_years=args.years)
    per_run = run_figures(doc, result, estimate, args.tokens) if args.tokens else None
    if args.json:
        out = estimate.as_json()
        if per_run is not None:
            out["run"], out["goodput"] = per_run[0].as_json(), per_run[1].as_json()
        json.dump(out, sys.stdout, indent=2)
        print()
        return EXIT_OK
    print(format_cost(estimate, doc.metadata.name))
    if per_run is not None:
        print(format_run(*per_run))
    return EXIT_OK


def _usd(value: float) -> str:
    if value >= 1e6:
        return f"${value / 1e6:,.2f}M"
    return f"${value:,.0f}"


def format_cost(estimate: CostEstimate, name: str) -> str:
    e = estimate
    lines = [f"{name}: bill of materials", "",
             f"  {'part':34} {'where':40} {'count':>7} {'unit $':>10} {'subtotal':>12} {'kW':>8}"]
    for b in e.bom:
        part = b.part + (" (estimate)" if b.estimate else "")
        lines.append(f"  {part[:34]:34} {b.detail[:40]:40} {b.count:7,} {b.unit_price_usd:10,.0f} "
                     f"{_usd(b.subtotal_usd):>12} {b.power_w / 1000:8.1f}")
    lines += ["",
              f"  capex              {_usd(e.capex_usd):>12}",
              f"  fabric             {_usd(e.fabric_capex_usd):>12}  ({e.fabric_share:.1%} of capex: NICs, switches, "
              "optics, cables)",
              f"  power (IT)         {e.power_kw:12,.1f} kW  (facility {e.facility_power_kw:,.1f} kW at PUE {e.pue:g})",
              f"  cost per hour      {_usd(e.usd_per_hour):>12}  (capex over {e.amortisation_years:g} years + energy "
              f"at ${e.usd_per_kwh:g}/kWh)"]
    if e.tokens_per_s:
        lines += [f"  tokens/s           {e.tokens_per_s:12,.0f}  (the job's predicted throughput)",
                  f"  tokens/s per MW    {e.tokens_per_s_per_mw:12,.0f}  (per MW of IT power)",
                  f"  $ per M tokens     {e.usd_per_million_tokens:12,.4f}"]
    else:
        lines.append("  (no job in the file: add workload and parallelism for tokens/s per MW and $ per M tokens)")
    for note in e.notes:
        lines.append(f"  note: {note}")
    return "\n".join(lines)


def run_figures(doc, result, estimate: CostEstimate, tokens_text: str):
    """(RunCost, Goodput) of the file's job for a token budget (docs/decide.md)."""
    from ..core.analysis.goodput import job_goodput
    from ..core.analysis.run_cost import parse_tokens, run_cost
    from ..core.problems import DesignerError, Problem

    tokens = parse_tokens(tokens_text)
    if result is None:
        raise DesignerError([Problem("--tokens needs a job: the file has no workload", "spec.workload",
                                     fix="add workload: {preset: ...} or pass --scenario")])
    goodput = job_goodput(doc, result)
    return run_cost(tokens, result.tokens_per_s, result.num_gpus, estimate, goodput), goodput


def format_run(run, goodput) -> str:
    g = goodput
    lines = ["", f"  per run of {run.tokens / 1e12:g}T tokens",
             f"    time to train      {run.days:12,.1f} days  ({run.ideal_hours / 24:,.1f} uninterrupted, "
             f"goodput {g.goodput:.1%})",
             f"    GPU-hours          {run.gpu_hours:12,.0f}",
             f"    energy             {run.energy_mwh:12,.0f} MWh  (facility, at the parts' maximum power)",
             f"    cost               {_usd(run.usd):>12}  (lost work {_usd(run.usd_lost)}, hot spares "
             f"{_usd(run.spares_usd)})",
             "", f"  goodput: {g.interruptions_per_day:.1f} interruptions a day (one every {g.mtti_h:.1f} h); "
             f"checkpoint {g.checkpoint_tb:.1f} TB written in {g.checkpoint_write_s:.0f} s every "
             f"{g.interval_s / 60:.1f} min (Young/Daly); {g.down_per_interruption_s / 60:.1f} min down each; "
             f"{g.hot_spares} hot spares of {g.spare_unit_gpus} GPUs (ready {g.spare_ready:.1%})",
             f"    {'part':16} {'in the job':>10} {'per day':>8}  blast radius"]
    for p in g.parts:
        lines.append(f"    {p.part:16} {p.count:10,} {p.per_day:8.2f}  {p.blast}")
    lines += [f"  note: {n}" for n in g.notes]
    return "\n".join(lines)
