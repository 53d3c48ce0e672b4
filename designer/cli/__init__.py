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

from importlib import import_module

from .. import __version__
from ..core.problems import EXIT_OK, EXIT_SOFTWARE, EXIT_USAGE, DesignerError
from .common import EPILOG, Parser, err, report_problems
from .job import evaluate_file

__all__ = ["COMMANDS", "build_parser", "evaluate_file", "main"]

# (module, the commands it registers), in the order `designer --help` shows them
COMMANDS = (
    ("catalog", ("catalog",)), ("generate", ("generate",)), ("validate", ("validate",)), ("schema", ("schema",)),
    ("evaluate", ("evaluate",)), ("trace", ("trace",)), ("report", ("report",)), ("compare", ("compare",)),
    ("decide", ("decide",)), ("cost", ("cost",)), ("nccl", ("nccl",)), ("advise", ("advise",)),
    ("failures", ("failures",)), ("search", ("search",)), ("scale", ("scale",)),
    ("import_export", ("import", "export")), ("connect", ("connect",)), ("microbench", ("microbench",)),
    ("calibrate", ("calibrate",)),
)
COMMAND_NAMES = frozenset(name for _, names in COMMANDS for name in names)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of `command` alone: a command line that names its command
    needs no other's module and sub-parser (all of them cost every run ~20 ms, a tenth of
    `designer evaluate` at 1,024 GPUs)."""
    parser = Parser(
        prog="designer", description="Design AI training clusters and predict what limits a training step.",
        epilog=EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"designer {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module, names in COMMANDS:
        if command is None or command in names:
            import_module(f".{module}", __name__).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        _one_blas_thread()
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(words[0] if words and words[0] in COMMAND_NAMES else None)
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
