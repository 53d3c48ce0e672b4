"""`designer`: the headless command line (docs/contract.md section 4). Never imports Qt.

One module per command: each `register(subparsers)` adds its sub-parser, whose `func` default is
the module's `run(args) -> int`; COMMANDS lists them in the order `designer --help` shows them.
What they share is in common.py (messages, `-o` writes, argument types) and job.py (a design's
job loaded with --scenario and --set, checked and evaluated).

Exit codes: 0 ok; 1 failure; 2 usage; 65 bad input data; 66 missing input file;
70 internal error. Machine output goes to stdout, messages to stderr.
"""
from __future__ import annotations

import argparse
import os
import sys

from .. import __version__
from ..core.problems import EXIT_OK, EXIT_SOFTWARE, EXIT_USAGE, DesignerError
from . import (
    advise, calibrate, catalog, compare, connect, cost, decide, evaluate, failures, generate, import_export, microbench,
    nccl, report, scale, schema, search, trace, validate,
)
from .common import EPILOG, err, report_problems
from .job import evaluate_file

__all__ = ["COMMANDS", "build_parser", "evaluate_file", "main"]

COMMANDS = (catalog, generate, validate, schema, evaluate, trace, report, compare, decide, cost, nccl, advise, failures,
            search, scale, import_export, connect, microbench, calibrate)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="designer", description="Design AI training clusters and predict what limits a training step.",
        epilog=EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"designer {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        _one_blas_thread()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return args.func(args)
    except DesignerError as exc:
        report_problems(exc.problems)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # a bug: say so briefly, the traceback only on request
        err(f"designer: internal error: {type(exc).__name__}: {exc}")
        if os.environ.get("DESIGNER_DEBUG"):
            import traceback  # here: only a bug needs it (a few ms of every start)

            traceback.print_exc()
        else:
            err("set DESIGNER_DEBUG=1 for the traceback, and please report it")
        return EXIT_SOFTWARE


def _one_blas_thread() -> None:
    """As a program, numpy's BLAS (OpenBLAS) starts one thread, not one per core: no command multiplies
    large matrices (calibrate's are a few dozen rows), and starting the pool cost 40-60 ms of every
    `designer evaluate` (a tenth of it at 16k GPUs). A value the user set is kept; it is read when numpy
    is first imported, which the commands do after this."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
