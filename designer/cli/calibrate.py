"""`designer calibrate c.yaml LOG... -o out.yaml`: fit link efficiencies to nccl-tests logs.

Reads the logs (exit 65 FILE:LINE), fits (designer/core/analysis/calibrate.py), prints the
per-class table and every row before/after; writes the file atomically only when the fit is
accepted, else exit 1 with the reasons and the target untouched.
"""
from __future__ import annotations

import sys
import time

from ..core.problems import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, DesignerError, Problem
from .common import EPILOG, design_errors, save_validated


def register(subparsers) -> None:
    p = subparsers.add_parser("calibrate", help="fit link efficiencies to nccl-tests logs", epilog=EPILOG)
    p.add_argument("file", metavar="FILE", help="a cluster YAML file (the cluster the logs ran on)")
    p.add_argument("logs", metavar="LOG", nargs="+", help="nccl-tests stdout (the text table) or its -J JSON file")
    p.add_argument("-o", "--output", default=None, help="write the calibrated design here (atomically)")
    p.add_argument("--op", default=None, choices=("all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                                                  "alltoall", "send_recv", "sendrecv", "broadcast", "reduce"),
                   help="the collective of logs that do not name their binary")
    p.add_argument("--tolerance-pct", type=float, default=1.0,
                   help="how far (points of relative error) a row may move the wrong way (default 1)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..core.analysis.calibrate import calibrate, described_source, format_result, read_logs
    from ..core.io import load_document

    if not 0 <= args.tolerance_pct <= 100:
        raise DesignerError([Problem(f"--tolerance-pct {args.tolerance_pct:g} is outside 0..100", "--tolerance-pct",
                                     fix="give how many points of relative error a row may lose, e.g. 1")],
                            EXIT_USAGE)
    doc = load_document(args.file)
    runs = read_logs(args.logs, args.op)
    result = calibrate(doc, runs, tolerance=args.tolerance_pct / 100.0, sources=list(args.logs))
    sys.stdout.write(format_result(result))
    if not result.accepted:
        for reason in result.refusals:
            print(f"designer calibrate: refused: {reason}", file=sys.stderr)
        partial = result.partial
        if partial is None or not partial.accepted:
            for reason in partial.refusals if partial is not None else []:
                print(f"designer calibrate: refused: {reason}", file=sys.stderr)
            print("designer calibrate: nothing written" + (f"; {args.output} is unchanged" if args.output else ""),
                  file=sys.stderr)
            return EXIT_FAILURE
        for note in partial.notes:
            print(f"designer calibrate: {note}", file=sys.stderr)
        print("designer calibrate: one set of values cannot fit every row; keeping the values fitted size range "
              "by size range", file=sys.stderr)
        result = partial
    if not args.output:
        print("designer calibrate: accepted; give -o FILE to write the calibrated design", file=sys.stderr)
        return EXIT_OK
    before = design_errors(doc)
    doc.spec.calibration = result.calibration
    doc.metadata.description = described_source(doc.metadata.description, list(args.logs),
                                                time.strftime("%Y-%m-%d"))
    save_validated(doc, args.output, before, "the calibrated design")
    fitted = ", ".join(f"{c.name} {c.value:.4f}" for c in result.constants)
    print(f"wrote {args.output}: calibration {fitted}", file=sys.stderr)
    return EXIT_OK
