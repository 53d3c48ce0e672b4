"""`designer advise FILE`: what limits the step, and candidate changes ranked by speed-up (or by
tokens per dollar); on a design of several jobs also the placement moves that pay and the costliest
failures (advise_jobs.py)."""
from __future__ import annotations

import json
import sys

from ..core.problems import EXIT_OK
from .common import EPILOG
from .job import add_job_arguments, evaluate


def register(subparsers) -> None:
    p = subparsers.add_parser("advise", help="what limits the step, and candidate changes ranked by speed-up",
                              epilog=EPILOG)
    add_job_arguments(p)
    p.add_argument("--json", action="store_true", help="attribution, ranked changes (with --set to reproduce)")
    p.add_argument("--no-scale", action="store_true", help="leave out the 2x-servers candidate")
    p.add_argument("--by", choices=("speed", "cost"), default="speed",
                   help="rank by speed-up (default) or by tokens per dollar (docs/cost.md)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..core.analysis.whatif import advice_json, advise
    from .advise_jobs import jobs_json, jobs_section, jobs_text
    from .progress import Progress

    with Progress("advise") as progress:
        doc, engine, result = evaluate(args, progress)
        progress.phase("costing the changes")
        report = advise(doc, engine=engine, result=result, include_scale=not args.no_scale, by=args.by,
                        progress=progress.counter("changes costed"))
        # several jobs: the moves that pay and the costliest failures, on the design with all its jobs
        jobs = jobs_section(getattr(args, "jobs_design", None), engine, progress)
    if args.json:
        data = advice_json(report)
        json.dump({**data, **jobs_json(jobs)} if jobs else data, sys.stdout, indent=2)
        print()
        return EXIT_OK
    print(format_advice(report, doc))
    if jobs:
        print(jobs_text(jobs))
    return EXIT_OK


def format_advice(report: dict, doc) -> str:
    cur, why = report["current"], report["attribution"]
    p = cur["plan"]
    lines = [f"{doc.metadata.name}: step {cur['step_time_s']:.3f} s, MFU {cur['mfu']:.1%} "
             f"(TP {p['tp']} PP {p['pp']} CP {p['cp']} EP {p['ep']} DP {p['dp']}, {p['schedule']})",
             f"  {why['summary']}" + (f"; critical resource: {why['critical_resource']}" if why["critical_resource"]
                                      else ""),
             "", "  where the step goes                                      s     share"]
    small = [c for c in why["causes"] if c["share"] < 0.0005]
    for c in why["causes"]:
        if c["share"] >= 0.0005:
            lines.append(f"    {c['cause']:50} {c['seconds']:8.3f} {c['share']:8.1%}")
    if small:
        lines.append(f"    ({len(small)} more under 0.05%: " + ", ".join(c["cause"] for c in small) + ")")
    by_cost = report.get("ranked_by") == "cost"
    head = "changes, best first" + (" by tokens per dollar" if by_cost else "")
    lines += ["", f"  {head:52} {'step s':>8} {'speed-up':>9} {'MFU':>7} {'tokens/$':>10} {'capex':>8}"]
    for a in report["ranked"]:
        tpu = f"{a.tokens_per_usd_change:+10.1%}" if a.tokens_per_usd_change is not None else f"{'-':>10}"
        capex = f"{a.capex_change:+8.1%}" if a.capex_change is not None else f"{'-':>8}"
        lines.append(f"    {a.title:50} {a.step_time_s:8.3f} {a.speedup:+9.1%} {a.mfu:7.1%} {tpu} {capex}"
                     + (f"  {a.note}" if a.note else ""))
    cost = report.get("cost")
    if cost is not None:
        lines.append(f"\n  now: capex ${cost.capex_usd / 1e6:,.2f}M (fabric {cost.fabric_share:.1%}), "
                     f"{cost.power_kw:,.0f} kW, ${cost.usd_per_million_tokens or 0:.4f} per M tokens "
                     f"(designer cost FILE for the bill of materials)")
    if report["not_applicable"]:
        lines += ["", "  not applicable"]
        for a in report["not_applicable"]:
            lines.append(f"    {a.title}: {a.error}")
    lines.append(f"\n  ({len(report['ranked'])} changes costed in {report['elapsed_s']:.2f} s; "
                 "reproduce one with designer evaluate FILE --set ..., see --json)")
    return "\n".join(lines)


