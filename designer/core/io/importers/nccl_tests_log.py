"""nccl-tests results as measured: the text table its binaries print, and its `-J` JSON file.

The text (NVIDIA/nccl-tests src/common.cu, util.cu):

    # nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 ...
    #  Rank  0 Group  0 Pid   6287 on     fs-207 device  0 [0x18] NVIDIA H200
    #       size         count      type   redop    root     time   algbw   busbw #wrong     time ...
      1073741824     268435456     float     sum      -1   4389.5  244.62  458.65      0   4331.1 ...

One `# Rank` line per GPU (rank order) names its host and its device number there; each row
is a size, out-of-place then in-place (time in us, algbw, busbw in GB/s, #wrong). Older
versions have no `root` column and an `error` column instead of `#wrong`; the parser reads
the column names from the header. A log may hold several runs (one `# nThread` line each).
Which collective ran comes from `# Collective test starting: all_reduce_perf` (newer
versions), else from the binary's name anywhere in the log (a pasted command line) or in the
file's name, else from the caller's `op`, else from the rows themselves (infer_op): each
binary prints its own redop, root, count per size and busbw/algbw factor.

Launchers that tag each line (`srun -l`: ` 0: `; `mpirun --tag-output`: `[1,0]<stdout>:`) are
read through their prefix. Designer's own `designer nccl` output has no `# Rank` lines (no GPU
ran): its first line says how many GPUs it predicted, and calibrate takes the design's first
that many GPUs.

The JSON (`-J file.json`, util.cu): `args` (argv, the binary first), `config.devices`
[{rank, hostname, device, ...}], `results` [{size, count, out_of_place: {time, alg_bw,
bus_bw}, in_place: {...}}].
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field

from ...problems import DesignerError, Problem

# nccl-tests' binary -> Designer's op name (engine/nccl.py OPS)
BINARY_OPS = {
    "all_reduce_perf": "all_reduce",
    "all_gather_perf": "all_gather",
    "reduce_scatter_perf": "reduce_scatter",
    "alltoall_perf": "all_to_all",
    "sendrecv_perf": "send_recv",
    "broadcast_perf": "broadcast",
    "reduce_perf": "reduce",
}
OP_NAMES = {op: op for op in BINARY_OPS.values()} | {"alltoall": "all_to_all", "sendrecv": "send_recv"}

_RANK = re.compile(r"^#\s*Rank\s+(\d+)\s+Group\s+(\d+)\s+Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)\s*(?:\[([^\]]*)\])?\s*(.*)$")
_BINARY = re.compile(r"\b(all_reduce_perf|all_gather_perf|reduce_scatter_perf|alltoall_perf|sendrecv_perf|"
                     r"broadcast_perf|reduce_perf)\b")
_STARTING = re.compile(r"^#\s*Collective test starting:\s*(\S+)")
_DESIGNER = re.compile(r"^#\s*designer nccl: predicted .* on (\d+) GPUs")
# what a launcher writes before each line: `srun -l` " 0: ", `mpirun --tag-output` "[1,0]<stdout>:"
# (some wrappers put "(head, rank=0, pid=38) " before that)
_LAUNCHER_TAG = re.compile(r"^(?:\([^)]*\)\s*)?(?:\[\d+,\d+\]<std(?:out|err)>:|\s*\d+:(?=\s|$))")
# nccl-tests' element sizes (src/common.cu test_typenames / wordSize)
WORD_BYTES = {"int8": 1, "uint8": 1, "char": 1, "half": 2, "bfloat16": 2, "fp8_e4m3": 1, "fp8_e5m2": 1,
              "int32": 4, "int": 4, "uint32": 4, "float": 4, "int64": 8, "uint64": 8, "double": 8}
FIX = "give the stdout of an nccl-tests binary (all_reduce_perf ...) or its -J JSON file"


@dataclass
class MeasuredRow:
    """One measured row of an nccl-tests log: size, time and bandwidth, with its line in the file."""
    size_bytes: int
    count: int
    time_us: float  # the mean of out-of-place and in-place (one of them when the other is missing)
    busbw_gbps: float  # nccl-tests' busbw (GB/s), as printed
    line: int  # where the row is in the file (1-based; the result's index for JSON)
    type: str = ""  # the columns that tell which binary printed the row (empty when unknown)
    redop: str = ""
    root: int | None = None  # None: a log from before the root column
    algbw_gbps: float = 0.0


@dataclass
class MeasuredRun:
    """One run of one nccl-tests binary: which GPUs, which collective, the rows."""

    file: str
    line: int  # the run's header line
    op: str | None
    hosts: list[str] = field(default_factory=list)  # per rank
    devices: list[int] = field(default_factory=list)  # per rank: the CUDA device number on its host
    device_names: list[str] = field(default_factory=list)
    rows: list[MeasuredRow] = field(default_factory=list)
    declared_gpus: int = 0  # Designer's own output: how many GPUs it predicted (it names no hosts)

    @property
    def num_gpus(self) -> int:
        return len(self.hosts) or self.declared_gpus

    def host_order(self) -> list[str]:
        return list(dict.fromkeys(self.hosts))

    def where(self) -> str:
        return f"{self.file}:{self.line}"


def _bad(file: str, line: int, message: str, fix: str = FIX) -> DesignerError:
    return DesignerError([Problem(message, file=file, line=line, fix=fix)])


# a wrapper that names the test instead of the binary: GCP's `run_nccl_tests.sh -t all_gather -b 1K ...`
_WRAPPER_TEST = re.compile(r"nccl\S*\s.*?(?:^|\s)(?:-t|--test)[ =](all_reduce|all_gather|reduce_scatter|alltoall|"
                           r"sendrecv|broadcast|reduce)\b")


def _op_from_name(text: str) -> str | None:
    m = _BINARY.search(text)
    if m:
        return BINARY_OPS[m.group(1)]
    wrapped = _WRAPPER_TEST.search(text)
    return BINARY_OPS[wrapped.group(1) + "_perf"] if wrapped else None


def parse_nccl_tests(text: str, file: str, op: str | None = None) -> list[MeasuredRun]:
    """Every run in a log (text or JSON); exit 65 with FILE:LINE on what cannot be read."""
    if text.lstrip().startswith("{"):
        return [_parse_json(text, file, op)]
    return _parse_text(text, file, op)


def _columns(header: str) -> list[str]:
    """The names of a row's columns from `#  size  count  type  redop  root  time ...`."""
    return header.lstrip("#").split()


def _parse_text(text: str, file: str, op: str | None) -> list[MeasuredRun]:
    lines = text.splitlines()
    file_op = _op_from_name(os.path.basename(file))
    runs: list[MeasuredRun] = []
    run: MeasuredRun | None = None
    columns: list[str] | None = None
    pending_op = None  # a command line or "starting" line seen before the run's header
    pending_gpus = 0  # Designer's own output: "# designer nccl: predicted ... on 16 GPUs"
    for number, raw in enumerate(lines, 1):
        stripped = _LAUNCHER_TAG.sub("", raw, count=1).strip()
        if not stripped:
            continue
        designer = _DESIGNER.match(stripped)
        if designer:
            pending_gpus = int(designer.group(1))
            pending_op = _op_from_name(stripped) or pending_op
            continue
        started = _STARTING.match(stripped)
        if started:
            name = started.group(1)
            pending_op = BINARY_OPS.get(name) or _op_from_name(name)
            if run is not None and not run.rows:
                run.op = pending_op or run.op
            continue
        if stripped.startswith("#"):
            body = stripped.lstrip("#").strip()
            if body.startswith("nThread"):
                run = MeasuredRun(file, number, pending_op, declared_gpus=pending_gpus)
                runs.append(run)
                columns = None
                continue
            ranked = _RANK.match(stripped)
            if ranked:
                if run is None:
                    run = MeasuredRun(file, number, pending_op)
                    runs.append(run)
                rank = int(ranked.group(1))
                if rank != len(run.hosts):
                    raise _bad(file, number, f"rank {rank} listed after {len(run.hosts)} ranks: the rank lines "
                               "are out of order or some are missing", "keep the whole '# Using devices' block")
                run.hosts.append(ranked.group(4))
                run.devices.append(int(ranked.group(5)))
                run.device_names.append(ranked.group(7).strip())
                continue
            words = body.split()
            if words[:2] == ["size", "count"]:
                columns = _columns(stripped)
            continue
        named = _op_from_name(stripped)
        if not stripped.split()[0].isdigit():  # "10-0-0-1:345:345 [0] NCCL INFO ...": a host, not a size
            if named and (run is None or not run.rows):
                pending_op = named  # a pasted command line: `mpirun ... all_gather_perf -b 8 ...`
                if run is not None:
                    run.op = named
            continue  # NCCL INFO lines, prompts and other output between the rows
        if run is None:
            raise _bad(file, number, "a result row before the '# nThread ...' header",
                       "keep nccl-tests' header lines above the table")
        run.rows.append(_row(stripped, columns, file, number))
    if not runs or not any(r.rows for r in runs):
        raise _bad(file, max(1, len(lines)), "no nccl-tests result rows (lines of size, count, type, ... time "
                   "algbw busbw)")
    return [_finished(r, file, file_op or (OP_NAMES.get(op) if op else None)) for r in runs if r.rows]


def _finished(r: MeasuredRun, file: str, fallback_op: str | None) -> MeasuredRun:
    """The run with its collective known (named, else from its rows); exit 65 when it cannot be."""
    if not r.hosts and not r.declared_gpus:
        raise _bad(file, r.line, "the log has no '#  Rank  N Group ... on HOST device D' lines: "
                   "cannot tell which GPUs ran", "keep the '# Using devices' block of the log")
    r.op = r.op or fallback_op
    if r.op is None:
        candidates = infer_op(r)
        if len(candidates) != 1:
            said = (f"its rows fit {' and '.join(candidates)} alike" if candidates else
                    "its rows fit no nccl-tests binary's redop/root/count")
            raise _bad(file, r.line, f"cannot tell which collective this log measured: {said}",
                       "pass --op " + (candidates[0] if candidates else "all_reduce") + " (the binary that "
                       "ran), keep the '# Collective test starting: ...' line, or name the file after "
                       "the binary (all_gather_perf.log)")
        r.op = candidates[0]
    return r


def infer_op(run: MeasuredRun) -> list[str]:
    """The collectives (Designer's op names) whose nccl-tests binary prints rows like the run's.

    Each binary's signature (src/*.cu RunTest and GetCollByteCount, common.cu GetBw): the redop
    it prints ("none" for data movement), its root (-1, or the -r root), whether the printed
    count is the size per rank (size = count x word x ranks) or the whole, and busbw/algbw.
    More than one name: the rows cannot tell them apart (all_gather and alltoall print alike;
    on 2 GPUs all_reduce and sendrecv do)."""
    from ...engine.nccl import OPS, bus_factor

    n = run.num_gpus
    rows = [r for r in run.rows if r.size_bytes > 0 and r.count > 0]
    if not rows or n < 1:
        return []
    out = []
    for name, op in OPS.items():
        factor = bus_factor(name, n)
        fits = True
        for r in rows:
            word = WORD_BYTES.get(r.type)
            if r.redop and (r.redop == "none") != (op.redop == "none"):
                fits = False
            elif r.root is not None and (r.root >= 0) != (op.root >= 0):
                fits = False
            elif word and r.count * word * (n if op.splits else 1) != r.size_bytes:
                fits = False
            elif r.algbw_gbps >= 1.0 and abs(r.busbw_gbps / r.algbw_gbps - factor) > 0.02 * factor + 0.01:
                fits = False  # printed to 2 decimals: compare only rows with a readable algbw
            if not fits:
                break
        if fits:
            out.append(name)
    return out


def _number(token: str, file: str, line: int, what: str) -> float:
    try:
        value = float(token)
    except ValueError:
        raise _bad(file, line, f"{what} {token!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")) or value < 0:
        raise _bad(file, line, f"{what} {token!r} is not a finite, non-negative number")
    return value


def _row(text: str, columns: list[str] | None, file: str, line: int) -> MeasuredRow:
    tokens = text.split()
    if columns and len(columns) == len(tokens):
        names = columns
    elif len(tokens) == 13:  # size count type redop root | time algbw busbw #wrong | x2
        names = ["size", "count", "type", "redop", "root"] + ["time", "algbw", "busbw", "#wrong"] * 2
    elif len(tokens) == 12:  # before the root column
        names = ["size", "count", "type", "redop"] + ["time", "algbw", "busbw", "error"] * 2
    elif len(tokens) > 13:  # -T 1 appends a timestamp after the in-place columns
        names = ["size", "count", "type", "redop", "root"] + ["time", "algbw", "busbw", "#wrong"] * 2
        names += ["timestamp"] * (len(tokens) - 13)
    else:
        raise _bad(file, line, f"a result row with {len(tokens)} columns (nccl-tests prints 12 or 13: size count "
                   "type redop root, then time algbw busbw #wrong out-of-place and in-place); truncated?")
    try:
        size, count = int(tokens[0]), int(tokens[1])
    except ValueError:
        raise _bad(file, line, f"size {tokens[0]!r} / count {tokens[1]!r} are not whole numbers") from None
    times = [i for i, n in enumerate(names) if n == "time"]
    busbws = [i for i, n in enumerate(names) if n == "busbw"]
    if not times:
        raise _bad(file, line, "the header names no 'time' column")
    t = [_number(tokens[i], file, line, "time") for i in times]
    b = [_number(tokens[i], file, line, "busbw") for i in busbws] or [0.0]
    algbws = [_number(tokens[i], file, line, "algbw") for i, n in enumerate(names) if n == "algbw"] or [0.0]
    named = dict(zip(names, tokens))
    root = named.get("root")
    return MeasuredRow(size, count, sum(t) / len(t), sum(b) / len(b), line, named.get("type", ""),
                       named.get("redop", ""), int(root) if root and root.lstrip("-").isdigit() else None,
                       sum(algbws) / len(algbws))


def _parse_json(text: str, file: str, op: str | None) -> MeasuredRun:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _bad(file, exc.lineno, f"not valid JSON: {exc.msg}") from None
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise _bad(file, 1, "a JSON file without nccl-tests' 'results' list")
    args = data.get("args") or []
    run_op = _op_from_name(" ".join(str(a) for a in args)) if isinstance(args, list) else None
    run = MeasuredRun(file, 1, run_op or _op_from_name(os.path.basename(file)) or (OP_NAMES.get(op) if op else None))
    devices = (data.get("config") or {}).get("devices") or []
    for d in sorted(devices, key=lambda d: d.get("rank", 0) if isinstance(d, dict) else 0):
        if not isinstance(d, dict) or "hostname" not in d or "device" not in d:
            raise _bad(file, 1, "config.devices: each device needs hostname and device")
        run.hosts.append(str(d["hostname"]))
        run.devices.append(int(d["device"]))
        run.device_names.append(str(d.get("device_info", "")))
    for i, r in enumerate(data["results"]):
        try:
            times = [float(r[k].get("time", r[k].get("cpu_time")))  # -C 1 reports "cpu_time"
                     for k in ("out_of_place", "in_place") if isinstance(r.get(k), dict)]
            busbw = [float(r[k]["bus_bw"]) for k in ("out_of_place", "in_place") if isinstance(r.get(k), dict)]
            size, count = int(r["size"]), int(r["count"])
        except (KeyError, TypeError, ValueError):
            raise _bad(file, 1, f"results[{i}]: needs size, count and out_of_place/in_place time") from None
        if not times or any(t != t or t < 0 for t in times):
            raise _bad(file, 1, f"results[{i}]: no finite time")
        run.rows.append(MeasuredRow(size, count, sum(times) / len(times), sum(busbw) / max(1, len(busbw)), i + 1))
    if not run.rows:
        raise _bad(file, 1, "the JSON file has no results")
    if run.op is None:
        raise _bad(file, 1, "cannot tell which collective this file measured (no binary in 'args')",
                   "pass --op")
    if not run.hosts:
        raise _bad(file, 1, "config.devices is empty: cannot tell which GPUs ran")
    return run
