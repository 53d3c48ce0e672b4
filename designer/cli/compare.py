"""`designer compare a.yaml b.yaml [--json]`: two designs side by side (docs/contract.md section 8).

Each file is evaluated the way `designer evaluate FILE` evaluates it (the caller passes that
function in); the comparison itself is designer.core.analysis.compare.
"""
from __future__ import annotations

import json
import sys

from ..core.problems import DesignerError
from .common import EPILOG, err


def register(subparsers) -> None:
    p = subparsers.add_parser("compare", help="two designs side by side: step, throughput, memory, cost, breakdown",
                              epilog=EPILOG)
    p.add_argument("a", metavar="A.yaml", help="the design compared against")
    p.add_argument("b", metavar="B.yaml", help="the other design (differences are B - A)")
    p.add_argument("--json", action="store_true", help="rows of a, b, delta, delta_pct; both cost estimates")
    p.add_argument("--scenario", metavar="JOB.yaml", default=None,
                   help="the same job (workload and plan) on both designs, as evaluate --scenario")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="an override applied to both designs, e.g. parallelism.pipeline_model_parallel_size=4")
    p.add_argument("--tokens", metavar="N", default=None,
                   help="a token budget (e.g. 15T): cost per run and time to train lead the rows")
    p.set_defaults(func=run)


def run(args) -> int:
    from .job import evaluate_file

    tokens = None
    if args.tokens:
        from ..core.analysis.run_cost import parse_tokens

        tokens = parse_tokens(args.tokens)
    comparison = compare_files(args.a, args.b, lambda path: evaluate_file(path, args.scenario, args.set), warn=err,
                               tokens=tokens)
    if args.json:
        json.dump(comparison.as_json(), sys.stdout, indent=2)
        print()
    else:
        print(format_comparison(comparison))
    return 0


def evaluate_named(path: str, evaluate_file):
    """(doc, result) of one file; a problem of this file names it, whatever raised it."""
    try:
        doc, _engine, result = evaluate_file(path)
    except DesignerError as exc:
        for p in exc.problems:
            if not getattr(p, "file", None):
                p.file = path
        raise
    return doc, result


def compare_files(path_a: str, path_b: str, evaluate_file, *, warn=None, tokens: float | None = None):
    """The Comparison of two files (B against A); `warn(text)` gets each engine warning, file first;
    `tokens`: a token budget, for cost per run and time to train."""
    from ..core.analysis.compare import column_labels, compare_designs

    doc_a, result_a = evaluate_named(path_a, evaluate_file)
    doc_b, result_b = evaluate_named(path_b, evaluate_file)
    if warn is not None:
        for path, result in ((path_a, result_a), (path_b, result_b)):
            for w in result.warnings:
                warn(f"warning: {path}: {w}")
    label_a, label_b = column_labels(path_a, path_b)
    return compare_designs(doc_a, result_a, doc_b, result_b, label_a, label_b, tokens=tokens)


def format_comparison(c) -> str:
    """The two-column table: A, B, B - A and %, headline and cost figures, then the breakdown."""
    rows, _ = c.shown(c.rows)
    parts, zero = c.shown(c.breakdown)
    label_w = max(len(r.label) for r in rows + parts) + 2
    numbers = [r for r in rows + parts if r.numeric]
    col_w = min(40, max(12, len(c.a.label), len(c.b.label), *(len(t) for r in numbers for t in (r.text_a, r.text_b))))

    delta_w = max(11, *(len(r.text_delta) for r in rows + parts if r.numeric))
    pct_w = max(8, *(len(r.text_pct) for r in rows + parts))

    def cell(text: str) -> str:
        return text if len(text) <= col_w else text[:col_w - 3] + "..."

    def line(r, label: str) -> str:
        if max(len(r.text_a), len(r.text_b)) > col_w:  # a long name: A and B on lines of their own
            return (f"  {label:{label_w}} A: {r.text_a}\n  {'':{label_w}} B: {r.text_b}"
                    + (f"   ({r.text_delta})" if r.text_delta else ""))
        return (f"  {label:{label_w}} {cell(r.text_a):>{col_w}} {cell(r.text_b):>{col_w}} "
                f"{r.text_delta:>{delta_w}} {r.text_pct:>{pct_w}}").rstrip()

    out = [f"A: {c.a.label} ({c.a.name}, {c.a.num_gpus:,} GPUs)",
           f"B: {c.b.label} ({c.b.name}, {c.b.num_gpus:,} GPUs)", "",
           f"  {'':{label_w}} {cell(c.a.label):>{col_w}} {cell(c.b.label):>{col_w}} {'B - A':>{delta_w}} {'%':>{pct_w}}"]
    out += [line(r, r.label) for r in rows]
    out += ["", "  breakdown (critical path, s)"]
    out += [line(r, "  " + r.label) for r in parts]
    if zero:
        out.append("    (zero in both: " + ", ".join(r.label for r in zero) + ")")
    out += ["", c.summary()]
    out += [f"note: {n}" for n in c.notes]
    return "\n".join(out)


def compare_with(doc_a, result_a, path_a: str, path_b: str, evaluate_file, *, warn=None):
    """The Comparison of an already evaluated design (the report's, with its --scenario and --set)
    and the file `path_b`, evaluated as it is."""
    from ..core.analysis.compare import column_labels, compare_designs

    doc_b, result_b = evaluate_named(path_b, evaluate_file)
    if warn is not None:
        for w in result_b.warnings:
            warn(f"warning: {path_b}: {w}")
    label_a, label_b = column_labels(path_a, path_b)
    return compare_designs(doc_a, result_a, doc_b, result_b, label_a, label_b)
