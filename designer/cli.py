"""`designer`: the headless command line (docs/contract.md section 4). Never imports Qt.

Exit codes: 0 ok; 1 failure; 2 usage; 65 bad input data; 66 missing input file;
70 internal error. Machine output goes to stdout, messages to stderr.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import traceback

from . import __version__
from .core.problems import (
    EXIT_DATAERR, EXIT_OK, EXIT_SOFTWARE, EXIT_USAGE, DesignerError, Problem,
)

EPILOG = "exit codes: 0 ok, 1 failure, 2 usage, 65 bad input data, 66 missing input file, 70 internal error"


def _err(text: str) -> None:
    print(text, file=sys.stderr)


def _n(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _report(problems: list[Problem]) -> None:
    for p in problems:
        _err(p.format())


# ---- catalog ---------------------------------------------------------------------------------

def cmd_catalog(args) -> int:
    from .core.io.files import as_plain
    from .core.model.catalog import default_catalog

    cat = default_catalog()
    if args.json:
        out = {kind: {name: as_plain(item) for name, item in getattr(cat, kind).items()}
               for kind in ("accelerators", "nics", "switches", "models")}
        json.dump(out, sys.stdout, indent=2)
        print()
        return EXIT_OK
    print("Accelerators (dense TFLOP/s; scale-up per GPU per direction)")
    print(f"  {'name':18} {'aliases':16} {'bf16':>6} {'fp8':>6} {'best GEMM':>9} {'HBM GiB':>8} "
          f"{'HBM TB/s':>8} {'scale-up':>14}")
    for a in cat.accelerators.values():
        print(f"  {a.name:18} {','.join(a.aliases)[:16]:16} {a.peak_tflops.get('bf16', 0):>6g} "
              f"{a.peak_tflops.get('fp8', 0):>6g} {a.best_gemm_tflops:>9g} {a.hbm_gib:>8g} {a.hbm_tbps:>8g} "
              f"{a.scale_up_gbps:>7g} Gb/s {a.scale_up}")
    print("\nNICs")
    for n in cat.nics.values():
        print(f"  {n.name:24} {n.kind:11} {n.gbps:>5g} Gb/s   aliases: {', '.join(n.aliases)}")
    print("\nSwitches")
    for s in cat.switches.values():
        print(f"  {s.name:24} {s.kind:11} {s.radix:>3} x {s.port_gbps:g} Gb/s  {s.latency_us:g} us"
              f"{'  SHARP' if s.sharp else ''}")
    print("\nModel presets")
    for m in cat.models.values():
        v = m.values
        moe = f", {v['num_experts']} experts top-{v.get('moe_router_topk', 2)}" if v.get("num_experts") else ""
        print(f"  {m.name:16} {v.get('num_layers', '?')} layers, h {v.get('hidden_size', '?')}, "
              f"{v.get('num_attention_heads', '?')} heads, seq {v.get('seq_length', '?')}{moe}")
    print("\nEvery figure's source: designer catalog --json (the 'sources' of each entry).")
    return EXIT_OK


# ---- generate --------------------------------------------------------------------------------

def cmd_generate(args) -> int:
    from .core.generate import FatTreeError, generate_fat_tree
    from .core.io import save_document

    try:
        doc = generate_fat_tree(
            nodes=args.nodes, gpu=args.gpu, gpus_per_node=args.gpus_per_node, nics_per_node=args.nics_per_node,
            nic_gbps=args.nic_gbps, fabric=args.fabric, tiers=args.tiers, switch_radix=args.switch_radix,
            oversubscription=args.oversubscription, rail_optimized=args.rail_optimized,
        )
    except FatTreeError as exc:
        _err(f"designer generate: {exc}")
        return EXIT_DATAERR
    save_document(doc, args.output)
    c = doc.counts()
    _err(f"wrote {args.output}: {c['nodes']} servers, {c['gpus']} GPUs, {_n(c['switches'], 'switch', 'switches')}, "
         f"{c['links']} links ({c['cables']} cables), {c['racks']} racks")
    return EXIT_OK


# ---- validate / schema -----------------------------------------------------------------------

def cmd_validate(args) -> int:
    from .core.io import load_document
    from .core.model.check import check_document

    doc = load_document(args.file)
    problems = check_document(doc)
    for p in problems:
        p.file = args.file
    if problems:
        _report(problems)
        errors = sum(p.severity == "error" for p in problems)
        _err(f"{args.file}: {errors} error(s), {len(problems) - errors} warning(s)")
        return EXIT_DATAERR
    c = doc.counts()
    _err(f"{args.file}: ok ({c['nodes']} servers, {c['gpus']} GPUs, {_n(c['switches'], 'switch', 'switches')}, {c['links']} links)")
    return EXIT_OK


def cmd_schema(args) -> int:
    from .core.io import json_schema

    json.dump(json_schema(), sys.stdout, indent=2)
    print()
    return EXIT_OK


def cmd_not_yet(args) -> int:
    _err(f"designer {args.command}: not implemented yet (the cost engine lands with the engine issue)")
    return EXIT_SOFTWARE


# ---- parser ----------------------------------------------------------------------------------

def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="designer", description="Design AI training clusters and predict what limits a training step.",
        epilog=EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"designer {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("catalog", help="known accelerators, NICs, switches and model presets", epilog=EPILOG)
    p.add_argument("--json", action="store_true", help="machine-readable, with every figure's source")
    p.set_defaults(func=cmd_catalog)

    p = sub.add_parser("generate", help="generate a cluster design", epilog=EPILOG)
    gsub = p.add_subparsers(dest="generator", metavar="GENERATOR")
    g = gsub.add_parser("fat-tree", help="folded-Clos (fat-tree) fabric, rail-optimized or not", epilog=EPILOG)
    g.add_argument("-o", "--output", required=True, help="the YAML file to write")
    g.add_argument("--nodes", required=True, type=_positive_int, help="servers")
    g.add_argument("--gpu", required=True, help="accelerator model (A100, H100, H200, B200, GB200, MI300X, ...)")
    g.add_argument("--gpus-per-node", type=_positive_int, default=8)
    g.add_argument("--nics-per-node", type=_positive_int, default=8)
    g.add_argument("--nic-gbps", type=_positive_float, default=400.0, help="NIC and switch port line rate")
    g.add_argument("--fabric", choices=("infiniband", "ethernet"), default="infiniband")
    g.add_argument("--tiers", type=int, choices=(2, 3), default=None, help="default: the fewest that fit")
    g.add_argument("--switch-radix", type=_positive_int, default=64, help="ports per switch")
    g.add_argument("--oversubscription", type=_positive_float, default=1.0,
                   help="leaf down:up ratio R (2 = 2:1)")
    g.add_argument("--rail-optimized", dest="rail_optimized", action="store_true", default=True,
                   help="NIC i of every server to leaf group i (default)")
    g.add_argument("--no-rail-optimized", dest="rail_optimized", action="store_false",
                   help="all NICs of a server to the same leaf")
    g.set_defaults(func=cmd_generate)

    p = sub.add_parser("validate", help="check a design: exit 0, or every problem and exit 65", epilog=EPILOG)
    p.add_argument("file")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("schema", help="JSON Schema of the file format, for editors", epilog=EPILOG)
    p.set_defaults(func=cmd_schema)

    for name, text in (("evaluate", "predict a training step (not implemented yet: exit 70)"),
                       ("trace", "Chrome/Perfetto trace of the step (not implemented yet: exit 70)"),
                       ("nccl", "predicted nccl-tests table (not implemented yet: exit 70)")):
        p = sub.add_parser(name, help=text, description=text, epilog=EPILOG)
        p.add_argument("file")
        p.add_argument("rest", nargs=argparse.REMAINDER)
        p.set_defaults(func=cmd_not_yet)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return args.func(args)
    except DesignerError as exc:
        _report(exc.problems)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # a bug: say so briefly, the traceback only on request
        _err(f"designer: internal error: {type(exc).__name__}: {exc}")
        if os.environ.get("DESIGNER_DEBUG"):
            traceback.print_exc()
        else:
            _err("set DESIGNER_DEBUG=1 for the traceback, and please report it")
        return EXIT_SOFTWARE


if __name__ == "__main__":
    sys.exit(main())
