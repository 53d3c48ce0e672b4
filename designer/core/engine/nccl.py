"""The output nccl-tests would print (`all_reduce_perf -b MIN -e MAX -f 2`) on the first N GPUs.

Groups: one communicator of the first N accelerators in rank order, one process per GPU
(`mpirun -np N ... -g 1`), type float, sum, validation off (`-c 0`: #wrong is N/A).

Everything printed follows nccl-tests' own source (NVIDIA/nccl-tests, src/common.cu,
src/util.cu and each src/<op>.cu), so that a parser of nccl-tests logs reads it unchanged:
- the size loop: `for (size = minbytes; size <= maxbytes; size *= stepfactor)`;
- per size, `setupArgs`: count = size / wordSize, then the op's GetCollByteCount. Ops that
  split the buffer over the ranks (all_gather, reduce_scatter, alltoall) use
  `base = (count/nranks) & ~(16/eltSize - 1)`: the per-rank count rounded down to a multiple of
  16 bytes, so tiny sizes on many ranks print size 0, count 0;
- the printed size is `max(sendBytes, expectedBytes)` and count is `nbytes / wordSize` with
  nbytes = paramcount x wordSize: the per-rank element count the NCCL call receives;
- algbw / busbw as each op's GetBw: algbw = count x typesize (x nranks for the split ops) / sec;
  busbw = algbw x 2(n-1)/n (all_reduce), (n-1)/n (all_gather, reduce_scatter, alltoall), 1
  (broadcast, reduce, sendrecv);
- numbers through getFloatStr (widths 7 for time, 6 for bandwidths): %.2f, else %.1f, else
  %.0f, else %.1e / %.0e, so that times of 10,000 us and more keep the column width.

`--json` has the shape of nccl-tests' `-J file.json` output (util.cu, JSON_FILE_VERSION 3),
with Designer's own rows beside it under `designer_rows`.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..model.catalog import Catalog, default_catalog
from ..model.document import Document
from ..problems import DesignerError, Problem
from .collectives import CollectiveModel
from .constants import accelerator_constants, engine_constants
from .fabric import build_fabric, require_routes

TYPE_NAME = "float"  # nccl-tests' default -d float
TYPE_BYTES = 4
JSON_FILE_VERSION = 3  # util.cu: #define JSON_FILE_VERSION 3
ITERATIONS = 20  # common.cu: int iters = 20; warmup_iters = 1; agg_iters = 1


@dataclass(frozen=True)
class NcclOp:
    """How nccl-tests runs one collective (binary, reduction, root) and which engine primitive costs it."""
    binary: str  # nccl-tests' program name (src/Makefile: %_perf)
    redop: str  # what RunTest passes as opName ("none" for data movement)
    root: int  # what RunTest passes as root (-1: no root; 0: the default -r 0)
    splits: bool  # GetCollByteCount divides the count over the ranks
    engine_op: str  # the primitive Designer's collective model costs


OPS: dict[str, NcclOp] = {
    "all_reduce": NcclOp("all_reduce_perf", "sum", -1, False, "all_reduce"),
    "all_gather": NcclOp("all_gather_perf", "none", -1, True, "all_gather"),
    "reduce_scatter": NcclOp("reduce_scatter_perf", "sum", -1, True, "reduce_scatter"),
    "broadcast": NcclOp("broadcast_perf", "none", 0, False, "broadcast"),
    # NCCL's ring reduce moves the same bytes over the same links as its ring broadcast
    # (towards the root instead of away from it); the reduction arithmetic is not the limit.
    "reduce": NcclOp("reduce_perf", "sum", 0, False, "broadcast"),
    "all_to_all": NcclOp("alltoall_perf", "none", -1, True, "all_to_all"),
    "send_recv": NcclOp("sendrecv_perf", "sum", -1, False, "send_recv"),
}


def bus_factor(op: str, n: int) -> float:
    """busBw / algBw of the op's GetBw in nccl-tests."""
    if op == "all_reduce":
        return 2 * (n - 1) / n
    if op in ("all_gather", "reduce_scatter", "all_to_all"):
        return (n - 1) / n
    return 1.0


def byte_counts(op: str, size_bytes: int, n: int) -> tuple[int, int]:
    """(printed size in bytes, printed count in elements per rank) for one requested size,
    as setupArgs + GetCollByteCount + writeBenchmarkLinePreamble compute them."""
    count = size_bytes // TYPE_BYTES
    if not OPS[op].splits:
        return count * TYPE_BYTES, count
    base = (count // n) & ~(16 // TYPE_BYTES - 1)  # "(count/nranks) & ~(16/eltSize - 1)"
    return base * n * TYPE_BYTES, base


def algorithm_label(engine_algorithm: str, op: str, n_nodes: int) -> str:
    """NCCL's name for what the model costed: all-to-all and send/recv are point-to-point
    (NCCL runs them as grouped send/recv, no ring), NVLS across servers is NVLS_TREE."""
    if engine_algorithm == "none":
        return "none"
    if op in ("all_to_all", "send_recv"):
        return "p2p"
    if engine_algorithm == "nvls" and n_nodes > 1:
        return "nvls_tree"
    return engine_algorithm


@dataclass
class NcclRow:
    """One row of a predicted nccl-tests table: size, time, algbw and busbw, algorithm and protocol."""
    requested_bytes: int  # the loop's size before alignment
    size_bytes: int  # what nccl-tests prints in the size column
    count: int  # elements per rank, nccl-tests' count column
    time_us: float
    algbw: float
    busbw: float
    algorithm: str
    protocol: str

    def as_json(self) -> dict:
        """Designer's own row (the contract's keys), kept under `designer_rows`."""
        return {"size_bytes": self.size_bytes, "count": self.count, "time_us": round(self.time_us, 3),
                "algbw": round(self.algbw, 3), "busbw": round(self.busbw, 3), "algorithm": self.algorithm,
                "protocol": self.protocol}


@dataclass
class NcclRun:
    """One predicted run of an nccl-tests binary."""

    op: str
    num_gpus: int
    min_bytes: int
    max_bytes: int
    rows: list[NcclRow]
    hosts: list[str]  # per rank: the server it sits on
    local_device: list[int]  # per rank: its index inside that server
    device_names: list[str]  # per rank: the accelerator model
    reduced_max_bytes: int | None = None  # maxBytes after nccl-tests' memory limit, when it cut it

    @property
    def binary(self) -> str:
        return OPS[self.op].binary

    def args(self) -> list[str]:
        """The command line this run stands for (one process per GPU under mpirun)."""
        return [self.binary, "-b", str(self.min_bytes), "-e", str(self.max_bytes), "-f", "2", "-g", "1",
                "-c", "0"]

    def avg_busbw(self) -> float:
        # writeResultFooter: bw[0] / bw_count[0] over every out-of-place and in-place result
        return sum(r.busbw for r in self.rows) / len(self.rows) if self.rows else 0.0


def sizes(min_bytes: int, max_bytes: int, factor: int = 2) -> list[int]:
    """`for (size = minbytes; size <= maxbytes; size *= stepfactor)`."""
    out, s = [], max(1, min_bytes)
    while s <= max_bytes:
        out.append(int(s))
        s *= factor
    return out


def nccl_run(doc: Document, op: str, num_gpus: int | None = None, algo: str = "auto", min_bytes: int = 8,
             max_bytes: int = 16 * 2**30, catalog: Catalog | None = None) -> NcclRun:
    catalog = catalog or default_catalog()
    if op not in OPS:
        raise DesignerError([Problem(f"unknown op {op!r}", "--op", fix=", ".join(OPS))])
    total = doc.num_gpus()
    n = num_gpus or total
    if n < 2 or n > total:
        raise DesignerError([Problem(f"--num-gpus {n}: the cluster has {total} GPUs", "--num-gpus",
                                     fix=f"use 2..{total}")])
    if op == "send_recv" and n != 2:
        raise DesignerError([Problem(f"--op send_recv on {n} GPUs: Designer models send/recv between a pair",
                                     "--num-gpus", fix="use --num-gpus 2")])
    if min_bytes > max_bytes:
        raise DesignerError([Problem(f"--min-bytes {min_bytes} is larger than --max-bytes {max_bytes}",
                                     "--min-bytes", fix="make --min-bytes at most --max-bytes")])
    k = engine_constants(doc.spec.calibration)
    fabric = build_fabric(doc, catalog, k)
    members = np.arange(n, dtype=np.int64).reshape(1, n)
    if len(set(fabric.gpu_node[:n].tolist())) > 1:
        require_routes(fabric, members[0], "this collective")
    accelerators = {catalog.accelerator(a).name for a in fabric.node_accelerator[: fabric.gpu_node[n - 1] + 1]}
    nvls = all(accelerator_constants(catalog.accelerator(a), doc.spec.calibration, catalog).nvls_supported
               for a in accelerators) and all(kind == "nvswitch" for kind in fabric.node_scale_up_kind)
    engine_op = OPS[op].engine_op
    model = CollectiveModel(fabric, members, k, nvls, name=op)
    n_nodes = int(model.shape.n_nodes[0])
    offered = model.choice.algorithms(engine_op, n_nodes, np.array([0]), "auto")
    if algo != "auto" and algo not in offered:
        raise DesignerError([Problem(f"--algo {algo} is not available for {op} on these GPUs", "--algo",
                                     fix="use auto or " + ", ".join(offered))])
    reduced = memory_max_bytes(min(catalog.accelerator(a).hbm_gib for a in accelerators))
    loop_min, loop_max = min_bytes, max_bytes
    if loop_max > reduced:  # nccl-tests: "if (maxBytes > memMaxBytes) { maxBytes = memMaxBytes; ..."
        loop_max = reduced
        loop_min = min(loop_min, loop_max)
    rows = []
    for size in sizes(loop_min, loop_max):
        shown_bytes, count = byte_counts(op, size, n)
        c = model.cost(engine_op, shown_bytes, algo)
        t = c.time_s
        algbw = shown_bytes / t / 1e9 if t > 0 else 0.0  # GetBw: bytes / 1.0E9 / sec
        rows.append(NcclRow(size, shown_bytes, count, t * 1e6, algbw, algbw * bus_factor(op, n),
                            algorithm_label(c.algorithm, op, n_nodes), c.protocol))
    gpu_node = fabric.gpu_node[:n].tolist()
    first = {}
    for rank, node in enumerate(gpu_node):
        first.setdefault(node, rank)
    return NcclRun(op, n, min_bytes, max_bytes, rows,
                   hosts=[fabric.node_ids[node] for node in gpu_node],
                   local_device=[rank - first[node] for rank, node in enumerate(gpu_node)],
                   device_names=[catalog.accelerator(fabric.node_accelerator[node]).name for node in gpu_node],
                   reduced_max_bytes=loop_max if loop_max != max_bytes else None)


def memory_max_bytes(hbm_gib: float) -> int:
    """The largest size nccl-tests runs on this GPU memory without validation (common.cu: reserve
    1 GiB per 16 GiB installed, at most 4 GiB; then `(maxMem - reserveMem - 1*GB) / (datacheck ? 3 : 2)`)."""
    gib = 2**30
    max_mem = int(hbm_gib * gib)
    reserve = min(-(-max_mem // (16 * gib)) * gib, 4 * gib)
    return max(0, (max_mem - reserve - gib) // 2)


# ---- the text, as util.cu prints it ----------------------------------------------------------

def float_str(value: float, width: int) -> str:
    """util.cu getFloatStr: `snprintf(str, width+1, "%*.2f", width, value) <= width`, else
    %.1f, else %.0f, else `width >= 7 ? "%*.1e" : "%*.0e"` (cut to width, as snprintf does)."""
    for fmt in ("%*.2f", "%*.1f", "%*.0f"):
        text = fmt % (width, value)
        if len(text) <= width:
            return text
    return (("%*.1e" if width >= 7 else "%*.0e") % (width, value))[:width]


def _row_line(r: NcclRow, op: NcclOp) -> str:
    # writeBenchmarkLinePreamble: sprintf(rootName, "%6i", root);
    # PRINT("%12li  %12li  %8s  %6s  %6s", nBytes, nElem, typeName, opName, rootName)
    line = "%12d  %12d  %8s  %6s  %6s" % (r.size_bytes, r.count, TYPE_NAME, op.redop, "%6i" % op.root)
    # writeBenchmarkLineBody, once out-of-place and once in-place, without validation:
    # PRINT("  %7s  %6s  %6s    N/A", timeStr, algBwStr, busBwStr)
    body = "  %7s  %6s  %6s    N/A" % (float_str(r.time_us, 7), float_str(r.algbw, 6), float_str(r.busbw, 6))
    return line + body + body  # writeBenchmarkLineTerminator: PRINT("\n")


def _algorithm_summary(rows: list[NcclRow]) -> str:
    """Which algorithm/protocol the model chose, by size range (Designer's line, a comment)."""
    spans: list[list] = []
    for r in rows:
        label = "nothing sent" if r.algorithm == "none" else f"{r.algorithm}/{r.protocol}"
        if spans and spans[-1][0] == label:
            spans[-1][2] = r.size_bytes
        else:
            spans.append([label, r.size_bytes, r.size_bytes])
    return ", ".join(f"{label} {lo}" + (f"-{hi} B" if hi != lo else " B") for label, lo, hi in spans)


def format_table(run: NcclRun) -> str:
    """nccl-tests' stdout for this run (the device lines left out: no device ran)."""
    op = OPS[run.op]
    lines = [f"# designer nccl: predicted {' '.join(run.args())} on {run.num_gpus} GPUs "
             f"(mpirun -np {run.num_gpus}); a model, no GPU ran",
             f"# designer nccl: algorithm/protocol chosen: {_algorithm_summary(run.rows)}",
             f"# Collective test starting: {run.binary}",
             # "# nThread %d nGpus %d minBytes %ld maxBytes %ld step: %ld(%s) warmup iters: %d iters: %d
             #  agg iters: %d validation: %d graph: %d unalign: %d\n"
             f"# nThread 1 nGpus 1 minBytes {run.min_bytes} maxBytes {run.max_bytes} step: 2(factor) "
             f"warmup iters: 1 iters: {ITERATIONS} agg iters: 1 validation: 0 graph: 0 unalign: 0",
             "#"]
    if run.reduced_max_bytes is not None:
        lines += ["#", "# Reducing maxBytes to %d due to memory limitation" % run.reduced_max_bytes]
    lines += [
        # writeResultHeader: PRINT("#\n"), then
        "#",
        # "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n"
        "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          "
        % ("", "", "", "", ""),
        # "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n"
        "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s"
        % ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
           "time", "algbw", "busbw", "#wrong", 0, ""),
        "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s"
        % ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "",
           0, "")]
    lines += [_row_line(r, op) for r in run.rows]
    # writeResultFooter: "# %-20s : %d %s\n" and "# %-20s : %g %s\n" (no NCCL_TESTS_MIN_BW: "")
    lines += ["# %-20s : %d %s" % ("Out of bounds values", 0, "OK"),
              "# %-20s : %g %s" % ("Avg bus bandwidth", run.avg_busbw(), ""),
              "#",
              f"# Collective test concluded: {run.binary}",
              "#"]  # finalizeFooter; writeErrors then prints "\n"
    return "\n".join(lines) + "\n"


# ---- the JSON, as util.cu writes it with -J out.json -----------------------------------------

def _json_double(value: float):
    """jsonDouble: "%lf" (6 decimals), NaN as the string "nan"."""
    return "nan" if value != value else round(value, 6)


def _json_bool(value: bool) -> str:
    return "true" if value else "false"  # jsonBool writes the strings "true" / "false"


def as_nccl_tests_json(run: NcclRun, now: str | None = None) -> dict:
    """The object nccl-tests writes with `-J out.json`, keys in its order; `designer_rows`
    added at the end (Designer's own rows: size_bytes, count, time_us, algbw, busbw,
    algorithm, protocol). pid 0 and an empty device_hex: no process or PCI device exists."""
    now = now or time.strftime("%Y-%m-%d %H:%M:%S")  # TIME_STRING_FORMAT
    op = OPS[run.op]

    def body(r: NcclRow) -> dict:
        return {"time": _json_double(r.time_us), "alg_bw": _json_double(r.algbw),
                "bus_bw": _json_double(r.busbw), "nwrong": None}  # reportErrors off: jsonNull()

    return {
        "version": JSON_FILE_VERSION,
        "start_time": now,
        "args": run.args(),
        "env": [],
        "nccl_version": 0,  # no NCCL library ran
        "config": {
            "nthreads": 1, "ngpus": 1, "minimum_bytes": run.min_bytes, "maximum_bytes": run.max_bytes,
            "step_factor": 2, "warmup_iters": 1, "iterations": ITERATIONS, "aggregated_iterations": 1,
            "validation": 0, "graph": 0, "blocking_collectives": _json_bool(False),
            "per_iter_timing": _json_bool(False), "per_iter_skip": 0, "parallel_init": _json_bool(False),
            "devices": [{"rank": rank, "group": 0, "pid": 0, "hostname": run.hosts[rank],
                         "device": run.local_device[rank], "device_hex": "",
                         "device_info": run.device_names[rank]} for rank in range(run.num_gpus)],
        },
        "results": [{"size": r.size_bytes, "count": r.count, "type": TYPE_NAME, "redop": op.redop,
                     "root": "%6i" % op.root,  # jsonStr(rootName), the "%6i" text
                     "out_of_place": body(r), "in_place": body(r),
                     "actual_iterations": ITERATIONS, "experiment_name": ""} for r in run.rows],
        "out_of_bounds": {"count": 0, "okay": _json_bool(True)},
        "average_bus_bandwidth": {"bandwidth": _json_double(run.avg_busbw()), "okay": "unchecked"},
        "errors": [],
        "end_time": now,
        "designer_rows": [r.as_json() for r in run.rows],
    }
