"""`designer decide A.yaml B.yaml [C.yaml ...] --scenario job.yaml --tokens 15T`: which design to buy.

The same model and global batch on each design, each at the best plan the plan search finds under
the same rules (memory headroom), per run: time to train the token budget, dollars, energy, goodput,
with the engine's error range. The logic is designer/core/analysis/decide.py (docs/decide.md).
"""
from __future__ import annotations

import json
import sys


def register(sub) -> None:
    p = sub.add_parser("decide", help="which design trains a model for a token budget faster and cheaper: each "
                       "at its best plan, per run, with goodput and error ranges")
    p.add_argument("files", nargs="+", metavar="DESIGN.yaml", help="two designs or more")
    p.add_argument("--scenario", metavar="JOB.yaml", default=None,
                   help="the job (workload, and any fixed plan settings) put on every design; default: the "
                        "first design's own job")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="an override applied to every design, e.g. workload.global_batch_size=2048")
    p.add_argument("--tokens", required=True, metavar="N", help="the token budget of the run, e.g. 15T or 2.5e12")
    p.add_argument("--workers", type=int, default=None, help="processes per plan search (default: the CPUs)")
    p.add_argument("--report", metavar="OUT.pdf", default=None, help="also write the decision as a PDF report")
    p.add_argument("--json", action="store_true", help="each design's plan, step range, run, goodput, cost")
    p.set_defaults(func=run)


def _load(args):
    from ..core.io import load_document, load_scenario
    from ..core.io.overrides import apply_overrides
    from ..core.analysis.decide import same_job
    from ..core.problems import DesignerError, Problem

    if len(args.files) < 2:
        raise DesignerError([Problem("decide needs two designs or more", "DESIGN.yaml",
                                     fix="designer decide A.yaml B.yaml --scenario job.yaml --tokens 15T")])
    designs = []
    scenario = load_scenario(args.scenario) if args.scenario else None
    for path in args.files:
        doc = load_document(path)
        if scenario is not None:
            same_job(doc, scenario.workload, scenario.parallelism)
            if scenario.calibration:
                doc.spec.calibration = {**doc.spec.calibration, **scenario.calibration}
        elif designs and designs[0][1].spec.workload is not None:
            first = designs[0][1]
            same_job(doc, first.spec.workload, first.spec.parallelism)
        elif doc.spec.workload is not None:
            same_job(doc, doc.spec.workload, doc.spec.parallelism)
        apply_overrides(doc, args.set)
        if doc.spec.workload is None:
            raise DesignerError([Problem(f"{path}: no job to decide on", "--scenario",
                                         fix="pass --scenario job.yaml (a file with workload: {preset: ...})")])
        designs.append((doc.metadata.name or path, doc))
    return designs


def run(args) -> int:
    from .progress import Progress
    from ..core.analysis.decide import decide
    from ..core.analysis.run_cost import parse_tokens

    tokens = parse_tokens(args.tokens)
    designs = _load(args)
    with Progress("decide") as progress:
        decision = decide(designs, tokens, workers=args.workers,
                          progress=lambda name: progress.phase(f"searching the plans of {name}"))
    if args.report:
        from ..core.analysis.decide import add_top_changes

        with Progress("report") as progress:
            progress.phase("the Advisor's changes of each best plan")
            add_top_changes(decision)
            progress.phase("the pictures of each design")
            pictures = decision_pictures(decision)
        from ..core.export.report_decide import write_decision_report
        from .common import writing_output

        with writing_output(args.report):
            write_decision_report(decision, args.report, pictures=pictures)
    if args.json:
        json.dump(decision.as_json(), sys.stdout, indent=2, default=str)
        print()
    else:
        print(decision_text(decision))
    if args.report:
        print(f"wrote {args.report}", file=sys.stderr)
    return 0


def decision_pictures(decision) -> dict:
    """Each answered design's canvas and logical view, drawn by the app's code offscreen (as
    `designer report` does); without Qt the report says why they are missing, and so does stderr
    (once for all designs)."""
    from .common import err
    from .report import render_pictures

    pictures = {a.name: render_pictures(a.document, a.evaluation, a.name) for a in decision.answers
                if not a.error and a.document is not None}
    for reason in dict.fromkeys(p.missing for p in pictures.values() if p.missing):
        err(f"warning: the report has no pictures: {reason}")
    return pictures


def decision_text(d) -> str:
    from ..core.analysis.decide import ANSWER_ROWS

    ok = [a for a in d.answers if not a.error]
    lines = [f"decision for {d.tokens / 1e12:g}T tokens ({d.elapsed_s:.0f} s, each design at its best plan "
             "that fits with the memory headroom)", "", f"  {d.verdict}", ""]
    width = max([len(a.name) for a in d.answers] + [14])
    header = f"  {'':30}" + "".join(f"{a.name[:width]:>{width + 2}}" for a in d.answers)
    rows = [*ANSWER_ROWS, ("search (s)", lambda a: f"{a.search_s:.0f}")]
    lines.append(header)
    for label, cell in rows:
        lines.append(f"  {label:30}" + "".join(
            f"{(cell(a) if not a.error else '--'):>{width + 2}}" for a in d.answers))
    lines.append("")
    for a in ok:
        lines.append(f"  {a.name}: {a.plan}; bottleneck {a.bottleneck}")
        if a.step_range.note:
            lines.append(f"    note: {a.step_range.note}")
        for note in a.goodput.notes:
            lines.append(f"    note: {note}")
    for note in d.notes:
        lines.append(f"  note: {note}")
    return "\n".join(lines)
