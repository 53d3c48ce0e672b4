"""`designer validate FILE`: check a design; exit 0, or every problem at its FILE:LINE:COLUMN and exit 65."""
from __future__ import annotations

from ..core.problems import EXIT_DATAERR, EXIT_OK
from .common import EPILOG, err, plural, report_problems


def register(subparsers) -> None:
    p = subparsers.add_parser("validate", help="check a design: exit 0, or every problem and exit 65", epilog=EPILOG)
    p.add_argument("file")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..core.io import load_document
    from ..core.io.locate import locate
    from ..core.design_check import check_document
    from .progress import Progress

    with Progress("validate") as progress:
        progress.phase(f"loading {args.file}")
        doc = load_document(args.file)
        progress.phase(f"checking {len(doc.nodes) + len(doc.switches) + len(doc.links):,} elements")
        problems = check_document(doc)
        if problems:
            progress.phase(f"locating {len(problems):,} problems in {args.file}")
        locate(problems, args.file)  # FILE:LINE:COLUMN of each problem's key
    if problems:
        report_problems(problems)
        errors = sum(p.severity == "error" for p in problems)
        err(f"{args.file}: {errors} error(s), {len(problems) - errors} warning(s)")
        return EXIT_DATAERR
    c = doc.counts()
    err(f"{args.file}: ok ({c['nodes']} servers, {c['gpus']} GPUs, {plural(c['switches'], 'switch', 'switches')}, "
        f"{c['links']} links)")
    return EXIT_OK
