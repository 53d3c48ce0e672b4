"""Fitting the engine's link efficiencies to measured nccl-tests rows (`designer calibrate`).

Each measured row is predicted the way `designer nccl` predicts it (the same CollectiveModel,
the row's printed size) on the GPUs the log names: its hosts map to the design's servers (by
id or name, else in file order) and each rank's device number to the GPU with that index in
its server. The residual of a row is log(predicted time / measured time), so a 10 % miss on
a 10 us row weighs as much as on a 10 s row.

The fit moves only the named efficiencies that these rows can see (a constant whose change
moves no row's predicted time by at least MIN_ELASTICITY of its own relative change is left
alone: one all_reduce inside a server says nothing about the NICs). It is a Levenberg-Marquardt
Gauss-Newton fit with Huber weights (iteratively reweighted least squares, HUBER_DELTA in log
units), so one row spoilt by a noisy run does not pull the others. The uncertainty of each value
is the square root of the diagonal of s^2 (J^T W J)^-1 at the optimum (s^2: the weighted residual
variance). numpy only (scipy is not a dependency).

A fit is refused (nothing is written) when a value leaves its physical range (the constant's own
declared range: an efficiency above 1 says the model misses a faster path, not that the link is
faster than its line rate) or when any row ends farther from its measurement than before (by more
than `tolerance`, absolute, in relative error).
"""
from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field

import numpy as np

from ..engine.collectives import CollectiveModel
from ..engine.constants import EngineConstants, accelerator_constants, engine_constants
from ..engine.fabric import build_fabric, require_routes
from ..engine.nccl import OPS
from ..io.importers.nccl_tests_log import MeasuredRun
from ..model.catalog import Catalog, default_catalog
from ..model.document import Document
from ..problems import DesignerError, Problem

# The named efficiencies a collective's time depends on, by the link class they describe.
LINK_CLASSES: dict[str, str] = {
    "nvlink_efficiency": "NVLink",
    "nvlink_ll128_efficiency": "NVLink",
    "nvlink_ll_efficiency": "NVLink",
    "nvls_efficiency": "NVLink",
    "pcie_efficiency": "PCIe",
    "infiniband_nic_efficiency": "NIC",
    "ethernet_nic_efficiency": "NIC",
    "infiniband_adaptive_routing_efficiency": "fabric",
    "net_overhead_us": "NIC",  # the latency term: fitted only size range by size range (_by_size_range)
}
LATENCY_TERMS = ("net_overhead_us",)
UNEXPLAINED = 0.10  # a row still more than 10 % off after the fit is named as not explained
# A fit that leaves a row further off than this does not describe the cluster the log ran on: refused
# (a fitted set of values is kept only when it explains the rows it was fitted on)
FAR_OFF = 0.25
MIN_ELASTICITY = 0.05  # |d log t / d log eff| below this on every row: the rows cannot see the constant
HUBER_DELTA = 0.05  # rows more than ~5 % off count linearly, not quadratically
MAX_ITERATIONS = 40
DEFAULT_TOLERANCE = 0.01  # a row may move 1 point of relative error the wrong way (nccl-tests' run-to-run noise)


@dataclass
class FittedConstant:
    """An engine constant fitted to measured runs: before, after and its uncertainty."""
    name: str
    link_class: str
    before: float
    value: float
    uncertainty: float | None  # one standard deviation; None with no more rows than constants
    low: float
    high: float

    @property
    def in_range(self) -> bool:
        return self.low <= self.value <= self.high


@dataclass
class RowFit:
    """One measured row with the engine's time before and after the fit."""
    run: MeasuredRun
    index: int  # the row's index in run.rows
    measured_us: float
    before_us: float
    after_us: float

    @property
    def where(self) -> str:
        return f"{self.run.file}:{self.run.rows[self.index].line}"

    @property
    def size_bytes(self) -> int:
        return self.run.rows[self.index].size_bytes

    @property
    def error_before(self) -> float:
        return self.before_us / self.measured_us - 1 if self.measured_us > 0 else 0.0

    @property
    def error_after(self) -> float:
        return self.after_us / self.measured_us - 1 if self.measured_us > 0 else 0.0


@dataclass
class CalibrationResult:
    """What `designer calibrate` found: fitted constants, per-row errors and the calibration to write."""
    constants: list[FittedConstant]
    rows: list[RowFit]
    calibration: dict  # the file's calibration with the fitted values in it
    sources: list[str]
    refusals: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # when refused: the values fitted size range by size range, with the rows they do not explain
    partial: "CalibrationResult | None" = None

    @property
    def accepted(self) -> bool:
        return not self.refusals and bool(self.constants)


# ---- which GPUs each log ran on ------------------------------------------------------------

def _members(doc: Document, run: MeasuredRun) -> np.ndarray:
    """Global GPU indices (file order, as the fabric numbers them) of the run's ranks."""
    nodes = doc.nodes
    offsets, total = [], 0
    for n in nodes:
        offsets.append(total)
        total += n.accelerator_count
    by_name = {}
    for i, n in enumerate(nodes):
        by_name.setdefault(n.id, i)
        if n.name:
            by_name.setdefault(n.name, i)
    if not run.hosts:  # Designer's own output names no hosts: its first num_gpus GPUs in file order
        if run.declared_gpus > total:
            raise DesignerError([Problem(f"the log ran on {run.declared_gpus} GPUs; the design has {total}",
                                         file=run.file, line=run.line,
                                         fix="calibrate a design with at least as many GPUs as the log")])
        return np.arange(run.declared_gpus, dtype=np.int64)
    hosts = run.host_order()
    chosen: dict[str, int] = {h: by_name[h] for h in hosts if h in by_name}
    free = (i for i in range(len(nodes)) if i not in set(chosen.values()))
    for h in hosts:
        if h not in chosen:
            i = next(free, None)
            if i is None:
                raise DesignerError([Problem(f"the log ran on {len(hosts)} hosts; the design has {len(nodes)} "
                                             "servers", file=run.file, line=run.line,
                                             fix="calibrate a design with at least as many servers as the log's hosts")])
            chosen[h] = i
    out = []
    for rank, (host, device) in enumerate(zip(run.hosts, run.devices)):
        node = nodes[chosen[host]]
        if device >= node.accelerator_count:
            raise DesignerError([Problem(f"rank {rank} ran on device {device} of {host}; server {node.id} has "
                                         f"{node.accelerator_count} GPUs", file=run.file, line=run.line,
                                         fix="calibrate a design whose servers hold the log's GPUs")])
        out.append(offsets[chosen[host]] + device)
    if len(set(out)) != len(out):
        raise DesignerError([Problem("two ranks of the log ran on the same GPU (several processes per GPU are not "
                                     "modelled)", file=run.file, line=run.line)])
    return np.array(out, dtype=np.int64)


def check_runs(doc: Document, runs: list[MeasuredRun]) -> list[np.ndarray]:
    members = []
    for run in runs:
        if run.op not in OPS:
            raise DesignerError([Problem(f"Designer does not model {run.op}", file=run.file, line=run.line)])
        if run.op == "send_recv" and run.num_gpus != 2:
            raise DesignerError([Problem(f"sendrecv_perf on {run.num_gpus} GPUs: Designer models send/recv "
                                         "between a pair", file=run.file, line=run.line,
                                         fix="calibrate with a 2-GPU sendrecv_perf run")])
        if run.num_gpus < 2:
            raise DesignerError([Problem("a run on 1 GPU moves no data between GPUs", file=run.file, line=run.line,
                                         fix="give logs of runs on 2 or more GPUs")])
        members.append(_members(doc, run))
    return members


# ---- the model's prediction of every row --------------------------------------------------

class Predictor:
    def __init__(self, doc: Document, runs: list[MeasuredRun], catalog: Catalog | None = None):
        self.doc = doc
        self.runs = runs
        self.catalog = catalog or default_catalog()
        self.members = check_runs(doc, runs)
        self.base = dict(doc.spec.calibration or {})
        self.evaluations = 0

    def times_us(self, values: dict[str, float]) -> np.ndarray:
        """Predicted time of every measured row (runs in order), with `values` over the file's calibration."""
        calibration = {**self.base, **values}
        k = engine_constants(calibration)
        fabric = build_fabric(self.doc, self.catalog, k)
        out = []
        self.evaluations += 1
        for run, members in zip(self.runs, self.members):
            nodes = fabric.gpu_node[members]
            if len(set(nodes.tolist())) > 1:
                require_routes(fabric, members, f"{run.op} of {run.where()}")
            accelerators = {self.catalog.accelerator(fabric.node_accelerator[n]).name for n in set(nodes.tolist())}
            nvls = all(accelerator_constants(self.catalog.accelerator(a), calibration, self.catalog).nvls_supported
                       for a in accelerators) and all(fabric.node_scale_up_kind[n] == "nvswitch"
                                                      for n in set(nodes.tolist()))
            model = CollectiveModel(fabric, members.reshape(1, -1), k, nvls, name=run.op)
            engine_op = OPS[run.op].engine_op
            for row in run.rows:
                out.append(model.cost(engine_op, row.size_bytes).time_s * 1e6)
        return np.array(out)


def _with_data(runs: list[MeasuredRun]) -> tuple[list[MeasuredRun], int]:
    """The runs with only rows that moved data (all_gather of 8 B on 32 GPUs prints size 0)."""
    out, dropped = [], 0
    for run in runs:
        keep = [row for row in run.rows if row.size_bytes > 0 and row.time_us > 0]
        dropped += len(run.rows) - len(keep)
        if keep:
            out.append(dataclasses.replace(run, rows=keep))
    if not out:
        raise DesignerError([Problem("no row moved data (every size or time is 0)", file=runs[0].file,
                                     line=runs[0].line, fix="give logs with sizes above 0")])
    return out, dropped


def _range(name: str) -> tuple[float, float]:
    meta = {f.name: f for f in dataclasses.fields(EngineConstants)}[name].metadata
    low = meta.get("minimum")
    if low is None:
        low = meta.get("exclusive_minimum") or 0.0
    return float(low), float(meta.get("maximum") or 1.0)


def _huber_weights(r: np.ndarray) -> np.ndarray:
    a = np.abs(r)
    return np.where(a <= HUBER_DELTA, 1.0, HUBER_DELTA / np.maximum(a, 1e-300))


def _huber_cost(r: np.ndarray) -> float:
    a = np.abs(r)
    return float(np.sum(np.where(a <= HUBER_DELTA, 0.5 * a * a, HUBER_DELTA * (a - 0.5 * HUBER_DELTA))))


def calibrate(doc: Document, runs: list[MeasuredRun], catalog: Catalog | None = None,
              tolerance: float = DEFAULT_TOLERANCE, sources: list[str] | None = None) -> CalibrationResult:
    runs, dropped = _with_data(runs)
    predictor = Predictor(doc, runs, catalog)
    measured = np.array([row.time_us for run in runs for row in run.rows])
    k0 = engine_constants(doc.spec.calibration)
    start = {name: float(getattr(k0, name)) for name in LINK_CLASSES if name not in LATENCY_TERMS}
    before = predictor.times_us({})
    r0 = np.log(before / measured)

    # which constants these rows can see: elasticity of each row's time to a 2 % change
    visible = []
    for name, value in start.items():
        probe = predictor.times_us({name: value * 0.98})
        elasticity = np.abs(np.log(probe / before)) / abs(np.log(0.98))
        if float(elasticity.max()) >= MIN_ELASTICITY:
            visible.append(name)
    rows = [RowFit(run, i, 0.0, 0.0, 0.0) for run in runs for i in range(len(run.rows))]
    for fit, m, b in zip(rows, measured, before):
        fit.measured_us, fit.before_us, fit.after_us = float(m), float(b), float(b)
    result = CalibrationResult([], rows, dict(copy.deepcopy(doc.spec.calibration or {})), sources or [])
    if dropped:
        result.notes.append(f"{dropped} row(s) of size 0 or time 0 left out (nothing moved)")
    if not visible:
        result.refusals.append("no link efficiency changes the predicted time of these rows (they are "
                               "latency-bound): give logs with sizes of a few MB and more")
        return result

    x, r, cov = _solve(predictor, measured, visible, np.array([start[n] for n in visible]), r0)
    dof = len(r) - len(x)
    _record(result, rows, measured, r, visible, start, x, cov)
    for c in result.constants:
        if not c.in_range:
            result.refusals.append(f"{c.name} would be {c.value:.4g}, outside its physical range "
                                   f"{c.low:g}..{c.high:g}: the model misses something these rows measured "
                                   "(check the design's link speeds and GPU count against the log)")
    for fit in rows:
        if abs(fit.error_after) > abs(fit.error_before) + tolerance:
            result.refusals.append(f"{fit.where} ({fit.run.op}, {fit.size_bytes} B) would get worse: "
                                   f"{fit.error_before:+.1%} before, {fit.error_after:+.1%} after")
    far = [fit for fit in rows if abs(fit.error_after) > FAR_OFF]
    if far:
        result.refusals.append(f"{len(far)} row(s) stay more than {FAR_OFF:.0%} off after the fit ("
                               + ", ".join(f"{f.size_bytes} B {f.error_after:+.1%}" for f in far[:4])
                               + (" ..." if len(far) > 4 else "") + "): these values do not describe the cluster")
    result.notes += _network_rate_notes(doc, predictor, runs, rows, visible)
    if dof <= 0:
        result.notes.append(f"{len(r)} rows for {len(x)} constants: no uncertainty can be given")
    result.notes += _uninformed_classes(visible)
    if result.refusals:
        result.partial = _by_size_range(doc, predictor, runs, measured, before, visible, start, tolerance,
                                        sources or [])
    return result


NIC_EFFICIENCIES = ("infiniband_nic_efficiency", "ethernet_nic_efficiency")


def _network_rate_notes(doc: Document, predictor: Predictor, runs: list[MeasuredRun], rows: list[RowFit],
                        visible: list[str]) -> list[str]:
    """When the largest rows of a log across servers are far slower than the design's NICs give: the
    rate per NIC that alone would explain the largest row (the NIC efficiency solved for it), against
    the design's line rate. A cluster whose NICs deliver a fraction of their rate (NCCL using fewer
    NICs, no GPUDirect RDMA, a PCIe setting) is a fact about the cluster, not an efficiency to fit."""
    nic = [name for name in NIC_EFFICIENCIES if name in visible]
    largest = max(rows, key=lambda f: f.size_bytes, default=None)
    if not nic or largest is None or largest.error_before > -FAR_OFF:
        return []
    name, row = nic[0], rows.index(largest)
    low, high = _range(name)

    def error(value: float) -> float:
        return float(np.log(predictor.times_us({name: value})[row] / largest.measured_us))

    if error(low) < 0:  # even at the lowest efficiency the network is not what holds this row
        return [f"the largest row ({largest.size_bytes} B) is {1 / (1 + largest.error_before):.1f}x slower than "
                "the design gives, and no NIC rate explains it: check the design's servers and links against "
                "the cluster the log ran on"]
    for _ in range(30):  # the time falls as the efficiency rises: bisect on the log of the efficiency
        mid = float(np.sqrt(low * high))
        low, high = (mid, high) if error(mid) > 0 else (low, mid)
    value = float(np.sqrt(low * high))
    members = predictor.members[runs.index(largest.run)]
    node = doc.nodes[int(np.searchsorted(np.cumsum([n.accelerator_count for n in doc.nodes]), members[0],
                                         side="right"))]
    line = node.nic_gbps
    return [f"the largest row ({largest.size_bytes} B) is {1 / (1 + largest.error_before):.1f}x slower than the "
            f"design's {node.nic_count} x {line:g} Gb/s NICs per server give; the network alone would explain it "
            f"at {value * line:.0f} Gb/s per NIC ({name} {value:.3f}, {value:.0%} of the line rate): the "
            "cluster's NICs did not run at their rate in this log (NCCL_DEBUG=INFO names the NICs NCCL used and "
            "whether GPUDirect RDMA was on), or the design's NICs are not the cluster's"]


def _uninformed_classes(visible: list[str]) -> list[str]:
    seen = {LINK_CLASSES[n] for n in visible}
    missing = [c for c in dict.fromkeys(LINK_CLASSES.values()) if c not in seen]
    if not missing:
        return []
    return [f"these rows cannot inform the {', '.join(missing)} class(es): no row's time depends on them "
            "(a log across 2 servers informs NIC and NVLink; PCIe needs GPUs without NVLink)"]


def _solve(predictor: Predictor, measured: np.ndarray, names: list[str], x0: np.ndarray, r0: np.ndarray,
           mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Levenberg-Marquardt with Huber weights on the rows in `mask` (all by default); returns the
    values, every row's residual with them, and their covariance (None without spare rows)."""
    mask = np.ones(len(measured), dtype=bool) if mask is None else mask

    def residuals(values: np.ndarray) -> np.ndarray:
        return np.log(predictor.times_us(dict(zip(names, values.tolist()))) / measured)

    def jacobian(values: np.ndarray, r: np.ndarray) -> np.ndarray:
        J = np.empty((len(r), len(values)))
        for j in range(len(values)):
            h = -1e-4 * values[j] if values[j] > 0 else 1e-4  # downwards: the upper bound stays reachable
            step = values.copy()
            step[j] += h
            J[:, j] = (residuals(step) - r) / h
        return J

    def cost(res: np.ndarray) -> float:
        return _huber_cost(res[mask])

    x, r = x0.astype(float).copy(), r0.copy()
    lam = 1e-3
    J = jacobian(x, r)
    for _ in range(MAX_ITERATIONS):
        w = _huber_weights(r) * mask
        A = J.T @ (J * w[:, None])
        g = J.T @ (w * r)
        improved = False
        for _ in range(12):
            step = -np.linalg.solve(A + lam * np.diag(np.diag(A) + 1e-12), g)
            trial = np.maximum(x + step, 1e-4)  # values stay positive; the range check comes after
            r_trial = residuals(trial)
            if cost(r_trial) < cost(r):
                improved = True
                break
            lam *= 10
        if not improved:
            break
        small = np.all(np.abs(trial - x) <= 1e-7 + 1e-6 * np.abs(x))
        x, r = trial, r_trial
        lam = max(lam / 10, 1e-9)
        if small:
            break
        J = jacobian(x, r)
    J = jacobian(x, r)
    w = _huber_weights(r) * mask
    A = J.T @ (J * w[:, None])
    dof = int(mask.sum()) - len(x)
    cov = None
    if dof > 0:
        cov = np.linalg.pinv(A) * (float(np.sum(w * r * r)) / dof)
    return x, r, cov


def _record(result: CalibrationResult, rows: list[RowFit], measured: np.ndarray, r: np.ndarray,
            names: list[str], start: dict[str, float], x: np.ndarray, cov: np.ndarray | None) -> None:
    for fit, a in zip(rows, np.exp(r) * measured):
        fit.after_us = float(a)
    for j, name in enumerate(names):
        low, high = _range(name)
        sigma = float(np.sqrt(max(cov[j, j], 0.0))) if cov is not None else None
        result.constants.append(FittedConstant(name, LINK_CLASSES[name], start[name], float(x[j]), sigma, low, high))
        result.calibration[name] = round(float(x[j]), 4)


BANDWIDTH_BOUND = 0.5  # a row whose time moves at least half as much as an efficiency is bandwidth-bound


def _by_size_range(doc: Document, predictor: Predictor, runs: list[MeasuredRun], measured: np.ndarray,
                   before: np.ndarray, visible: list[str], start: dict[str, float], tolerance: float,
                   sources: list[str]) -> CalibrationResult:
    """When one set of values cannot fit every row: the efficiencies from the bandwidth-bound
    rows alone, the latency term from the latency-bound rows alone; a value outside its range is
    left out, and the rows the kept values still miss (worse than before) are named."""
    probes = []
    for name in visible:
        probe = predictor.times_us({name: start[name] * 0.98})
        probes.append(np.abs(np.log(probe / before)) / abs(np.log(0.98)))
    bandwidth_rows = np.max(probes, axis=0) >= BANDWIDTH_BOUND
    k0 = engine_constants(doc.spec.calibration)
    values: dict[str, float] = {}
    partial = CalibrationResult([], [], dict(copy.deepcopy(doc.spec.calibration or {})), sources)
    dropped: list[str] = []
    for names, mask in ((visible, bandwidth_rows), (list(LATENCY_TERMS), ~bandwidth_rows)):
        if int(mask.sum()) < len(names):
            continue
        first = {n: float(getattr(k0, n)) for n in names}
        x, _, cov = _solve(predictor, measured, names, np.array([first[n] for n in names]),
                           np.log(before / measured), mask)
        for j, name in enumerate(names):
            low, high = _range(name)
            sigma = float(np.sqrt(max(cov[j, j], 0.0))) if cov is not None else None
            fitted = FittedConstant(name, LINK_CLASSES[name], first[name], float(x[j]), sigma, low, high)
            if fitted.in_range:
                partial.constants.append(fitted)
                values[name] = float(x[j])
                partial.calibration[name] = round(float(x[j]), 4)
            else:
                dropped.append(f"{name} left as it was: the {'bandwidth' if mask is bandwidth_rows else 'latency'}"
                               f"-bound rows want {x[j]:.4g}, outside {low:g}..{high:g}")
    after = predictor.times_us(values) if values else before
    partial.rows = [RowFit(run, i, 0.0, 0.0, 0.0) for run in runs for i in range(len(run.rows))]
    for fit, m, b, a in zip(partial.rows, measured, before, after):
        fit.measured_us, fit.before_us, fit.after_us = float(m), float(b), float(a)
    partial.notes += dropped
    unexplained = [f for f in partial.rows if abs(f.error_after) > abs(f.error_before) + tolerance
                   or abs(f.error_after) > UNEXPLAINED]
    if unexplained:
        partial.notes.append(f"{len(unexplained)} row(s) these values do not explain (more than "
                             f"{UNEXPLAINED:.0%} off, or worse than before): "
                             + ", ".join(f"{f.where} ({f.size_bytes} B, {f.error_after:+.1%})" for f in unexplained))
    if not partial.constants:
        partial.refusals.append("no value could be fitted within its physical range, even size range by size range")
    explained = [f for f in partial.rows if abs(f.error_after) <= UNEXPLAINED < abs(f.error_before)]
    if partial.constants and not explained:
        partial.refusals.append(f"the values fitted size range by size range bring no row within {UNEXPLAINED:.0%} "
                                "of its measurement")
    return partial


def format_result(result: CalibrationResult) -> str:
    """The table `designer calibrate` prints: per class the fitted values, then every row."""
    lines = ["class    constant                                before   fitted   +/-"]
    for c in result.constants:
        sigma = f"{c.uncertainty:.4f}" if c.uncertainty is not None else "n/a"
        lines.append(f"{c.link_class:<8} {c.name:<38} {c.before:7.4f}  {c.value:7.4f}  {sigma}")
    if not result.constants:
        lines.append("(none: no efficiency is visible in these rows)")
    lines.append("")
    lines.append("row                                       op              size (B)   measured us   before us "
                 "(err)       after us (err)")
    for fit in result.rows:
        lines.append(f"{fit.where:<41} {fit.run.op:<14} {fit.size_bytes:>11}  {fit.measured_us:12.2f}  "
                     f"{fit.before_us:10.2f} ({fit.error_before:+6.1%})  {fit.after_us:10.2f} ({fit.error_after:+6.1%})")
    for note in result.notes:
        lines.append(f"note: {note}")
    if result.partial is not None and result.refusals:
        lines += ["", "one set of values cannot fit every row; fitted size range by size range "
                  "(efficiencies on the bandwidth-bound rows, the latency term on the latency-bound rows):",
                  format_result(result.partial).rstrip("\n")]
    return "\n".join(lines) + "\n"


SOURCE_PREFIX = "Calibration: fitted by designer calibrate from "


def described_source(description: str, sources: list[str], today: str) -> str:
    """The design's description with one line naming the logs the calibration came from (a
    later calibration replaces the line). `calibration` itself takes only constants."""
    import os

    kept = [line for line in description.splitlines() if not line.startswith(SOURCE_PREFIX)]
    names = ", ".join(os.path.basename(s) for s in sources) or "nccl-tests logs"
    while kept and not kept[-1].strip():
        kept.pop()
    kept.append(f"{SOURCE_PREFIX}{names} ({today})")
    return "\n".join(kept)


def read_logs(paths: list[str], op: str | None = None) -> list[MeasuredRun]:
    """Every run of every log; a log that cannot be read: exit 65 with FILE:LINE."""
    from ..io.importers.nccl_tests_log import FIX, parse_nccl_tests
    from ..io.importers.source import read_source

    runs = []
    for path in paths:
        runs += parse_nccl_tests(read_source(path, "an nccl-tests log", FIX), str(path), op)
    return runs
