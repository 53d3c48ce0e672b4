"""`designer trace FILE -o trace.json`: the predicted step as a Chrome/Perfetto trace."""
from __future__ import annotations

from ..core.problems import EXIT_OK, DesignerError
from .common import EPILOG, err, writing_output
from .job import add_job_arguments, evaluate


def register(subparsers) -> None:
    p = subparsers.add_parser("trace", help="Chrome/Perfetto trace of the predicted step", epilog=EPILOG)
    add_job_arguments(p)
    p.add_argument("-o", "--output", required=True, help="trace.json to write")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..core.export.trace import trace_size_problem, write_trace

    doc, engine, result = evaluate(args)
    too_big = trace_size_problem(result)
    if too_big is not None:
        from ..core.io.locate import locate

        locate([too_big], args.file)
        raise DesignerError([too_big])
    with writing_output(args.output):
        count = write_trace(result, engine.built_fabric, args.output)
    err(f"wrote {args.output}: {count} trace events, step {result.step_time_s:.3f} s "
        f"(open it in ui.perfetto.dev or chrome://tracing)")
    return EXIT_OK
