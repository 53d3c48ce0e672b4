"""`designer microbench FILE [--scenario S] [--set K=V ...] [--predict] [--json] [--recorded R] [--record R] [-o OUT]`.

--predict: the engine's own time for each kernel of the job's layer (no GPU needed). Otherwise the
kernels are timed on this machine's GPU (PyTorch with CUDA, the optional extra `gpu`; without
them: exit 69) or read from a recorded measurement (--recorded), and the ratios become the
accelerator's calibration: printed, and written into a copy of the design with -o.
"""
from __future__ import annotations

import json
import sys

from ..core.problems import EXIT_OK, DesignerError, Problem
from .common import writing_output

EXIT_UNAVAILABLE = 69  # sysexits EX_UNAVAILABLE: the GPU the command needs is not here


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "microbench", help="the job's kernels: the engine's times (--predict) or measured on this GPU -> calibration")
    p.add_argument("file", help="a cluster YAML file")
    p.add_argument("--scenario", metavar="S.yaml", help="take workload and parallelism from this file")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", default=[],
                   help="override a value, as evaluate's --set")
    p.add_argument("--predict", action="store_true", help="print the engine's time per kernel; no GPU needed")
    p.add_argument("--json", action="store_true", help="the kernels as a JSON list (name, kind, shape, flops, "
                                                       "bytes, ms; measured_ms when measured)")
    p.add_argument("--recorded", metavar="R.json", default=None,
                   help="use a measurement recorded earlier (by --record on a GPU machine) instead of measuring")
    p.add_argument("--record", metavar="R.json", default=None, help="also write the measurement here")
    p.add_argument("-o", "--output", default=None, help="write the design with the measured calibration here")
    p.set_defaults(func=run)


def _load(args):
    from ..core.io import load_document, load_scenario
    from ..core.io.locate import locate
    from ..core.io.overrides import apply_overrides
    from ..core.design_check import check_document

    doc = load_document(args.file)
    if args.scenario:
        scenario = load_scenario(args.scenario)
        doc.set_job(scenario.workload, scenario.parallelism)
        if scenario.calibration:
            doc.spec.calibration = {**doc.spec.calibration, **scenario.calibration}
    apply_overrides(doc, args.set or [])
    errors = [p for p in check_document(doc) if p.severity == "error"]
    if errors:
        locate(errors, args.file)
        raise DesignerError(errors)
    return doc


def _table(kernels, measured: bool) -> str:
    head = f"{'kernel':<22} {'kind':<14} {'shape':<44} {'GFLOP':>9} {'MB':>9} {'engine ms':>10}"
    if measured:
        head += f" {'measured':>10} {'ratio':>7}"
    lines = [head]
    for k in kernels:
        shape = " ".join(f"{key}={value}" for key, value in k["shape"].items() if value not in (-1, None))
        row = (f"{k['name']:<22} {k['kind']:<14} {shape[:44]:<44} {k['flops'] / 1e9:>9.1f} {k['bytes'] / 1e6:>9.1f} "
               f"{k['ms']:>10.4f}")
        if measured:
            got = k.get("measured_ms")
            row += f" {got:>10.4f} {got / k['ms']:>7.3f}" if got else f" {'-':>10} {'-':>7}"
        lines.append(row)
    return "\n".join(lines)


def run(args) -> int:
    from ..core.engine.microbench import calibration_from, job_kernels, merged_calibration, read_record, record
    from ..core.model.catalog import default_catalog

    catalog = default_catalog()
    doc = _load(args)
    jk = job_kernels(doc, catalog)
    predicted = [k.as_json() for k in jk.kernels]
    if args.predict:
        if args.json:
            json.dump(predicted, sys.stdout, indent=2)
            print()
        else:
            print(f"{jk.accelerator}, {jk.precision}: one layer, one micro-batch, the engine's time per kernel")
            print(_table(predicted, measured=False))
        return EXIT_OK

    if args.recorded:
        try:
            with open(args.recorded, encoding="utf-8") as f:
                data = json.load(f)
        except OSError as exc:
            raise DesignerError([Problem(f"cannot read: {exc.strerror or exc}", file=args.recorded,
                                         fix="give the JSON `designer microbench FILE --record R.json` wrote")]) from None
        except json.JSONDecodeError as exc:
            raise DesignerError([Problem(f"not JSON: {exc.msg}", file=args.recorded, line=exc.lineno,
                                         column=exc.colno)]) from None
        rec = read_record(data, args.recorded)
    else:
        from ..core.engine import microbench_torch

        why = microbench_torch.available()
        if why:
            print(f"designer microbench: cannot measure here: {why}. --predict prints the engine's kernel times "
                  "without a GPU; --recorded R.json uses a measurement made on a GPU machine", file=sys.stderr)
            return EXIT_UNAVAILABLE
        rec = record(jk, microbench_torch.measure(jk), microbench_torch.device_name(), microbench_torch.versions())
        if args.record:
            from ..core.io import atomic_write_text

            atomic_write_text(args.record, json.dumps(rec, indent=1) + "\n")
            print(f"wrote {args.record}: {len(rec['kernels'])} kernels measured", file=sys.stderr)

    if rec["accelerator"] != jk.accelerator:
        raise DesignerError([Problem(f"the recorded kernels ran on {rec['accelerator']}, the design's GPUs are "
                                     f"{jk.accelerator}", "accelerator", file=args.recorded,
                                     fix="record on the design's GPU, or evaluate a design of the recorded one")])
    calibration = calibration_from(rec, jk.ac)
    if args.json:
        json.dump({"kernels": rec["kernels"], "calibration": calibration}, sys.stdout, indent=2)
        print()
    else:
        print(_table(rec["kernels"], measured=True))
        print("calibration:", json.dumps(calibration))
    if not calibration:
        print("designer microbench: no kernel was measured; nothing to calibrate", file=sys.stderr)
        return EXIT_OK
    if args.output:
        from ..core.engine.calibration_check import check_calibration
        from ..core.io import save_document

        doc.spec.calibration = merged_calibration(doc.spec.calibration, calibration)
        problems = check_calibration(doc.spec.calibration, catalog)
        if problems:
            raise DesignerError(problems)
        with writing_output(args.output):  # the CLI's one way to say why an -o file cannot be written
            save_document(doc, args.output)  # atomic: an existing file stays whole until the new one is complete
        print(f"wrote {args.output}: calibration of {jk.accelerator} from {len(rec['kernels'])} kernels",
              file=sys.stderr)
    return EXIT_OK
