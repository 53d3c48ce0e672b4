"""`designer nccl FILE --op OP`: the table nccl-tests would print on this cluster."""
from __future__ import annotations

import json
import sys

from ..core.problems import EXIT_OK
from .common import EPILOG, positive_int, size
from .job import add_job_arguments, load_job


def register(subparsers) -> None:
    p = subparsers.add_parser("nccl", help="the table nccl-tests would print on this cluster", epilog=EPILOG)
    add_job_arguments(p)
    p.add_argument("--op", required=True, choices=("all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                                                   "broadcast", "reduce", "send_recv"))
    p.add_argument("--num-gpus", type=positive_int, default=None, help="the first N GPUs (default: all)")
    p.add_argument("--algo", choices=("auto", "ring", "tree", "nvls", "collnet", "pat"), default="auto")
    p.add_argument("--min-bytes", type=size, default=8, help="smallest size (8, 1K, 1M, ...)")
    p.add_argument("--max-bytes", type=size, default=16 * 2**30, help="largest size (default 16G)")
    p.add_argument("--json", action="store_true",
                   help="nccl-tests' -J JSON (results: size, count, out_of_place.time/alg_bw/bus_bw); "
                        "Designer's rows of size_bytes, time_us, algbw, busbw under designer_rows")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..core.engine.nccl import as_nccl_tests_json, format_table, nccl_run

    doc = load_job(args)
    table = nccl_run(doc, args.op, args.num_gpus, args.algo, args.min_bytes, args.max_bytes)
    if args.json:  # nccl-tests' -J shape; Designer's rows under "designer_rows"
        json.dump(as_nccl_tests_json(table), sys.stdout, indent=2)
        print()
    else:
        print(format_table(table))
    return EXIT_OK
