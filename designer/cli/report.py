"""`designer report FILE -o report.pdf [--compare B.yaml]`: the design-review PDF."""
from __future__ import annotations

from ..core.problems import EXIT_OK
from .common import EPILOG, err, plural, writing_output
from .job import add_job_arguments, evaluate, evaluate_file


def register(subparsers) -> None:
    p = subparsers.add_parser("report", help="design-review PDF: cluster, job, breakdown, memory, bottlenecks",
                              epilog=EPILOG)
    add_job_arguments(p)
    p.add_argument("-o", "--output", required=True, help="report.pdf to write")
    p.add_argument("--compare", metavar="B.yaml", default=None,
                   help="add a comparison with this design: both sets of figures and both breakdowns")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..core.export.report import build_report

    doc, _, result = evaluate(args)
    for w in result.warnings:
        err(f"warning: {w}")
    source = args.file + (f", scenario {args.scenario}" if args.scenario else "")
    if args.set:
        source += ", with --set " + " ".join(args.set)
    comparison = None
    if args.compare:  # the other design as its file is (--scenario and --set apply to FILE only)
        from .compare import compare_with

        comparison = compare_with(doc, result, args.file, args.compare, evaluate_file, warn=err)
    pictures = report_pictures(doc, result)
    with writing_output(args.output):
        pages = build_report(doc, result, args.output, source_name=source, comparison=comparison, pictures=pictures)
    err(f"wrote {args.output}: {plural(pages, 'page', 'pages')}, step {result.step_time_s:.3f} s")
    return EXIT_OK


def report_pictures(doc, result):
    """The report's canvas, logical view and timeline, drawn by the app's own code offscreen (Qt is
    imported only here, for this command); without Qt the report says so and goes on."""
    pictures = render_pictures(doc, result, doc.metadata.name or "")
    if pictures.missing:
        err(f"warning: {'the report has no pictures: ' if not pictures.figures else ''}{pictures.missing}")
    return pictures


def render_pictures(doc, result, name: str):
    """The pictures of `doc` as the app draws them, or none with the reason (this module is the
    command line's one door to the app's drawing code: `designer report` and `designer decide`)."""
    from ..core.export.report_layout import ReportPictures

    try:
        from ..ui.common.report_pictures import render_report_pictures
    except ImportError as exc:
        return ReportPictures(missing=f"the app's drawing code could not be loaded ({exc})")
    return render_report_pictures(doc, result, name)
