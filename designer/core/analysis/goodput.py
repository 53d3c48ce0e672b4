"""Goodput of a training run: interruptions from per-part failure rates, their blast radius,
checkpoint and restart time, the optimal checkpoint interval (Young/Daly) and hot spares.

The rates, storage bandwidth, restart and spare figures are model/reliability.py's constants
(sourced there; a design overrides them under calibration.reliability). docs/decide.md gives
the formulas:

    interruptions per hour  lambda = sum over parts of rate x parts in the job
    mean time to interrupt  M = 1 / lambda
    checkpoint write        delta = parameters x checkpoint_bytes_per_param / storage_write_tbps
    interval (Young/Daly)   tau = sqrt(2 delta M) - delta   (Daly 2006, first order; Young 1974: sqrt(2 delta M))
    down per interruption   D = restart_s + checkpoint load + (hardware share) x (1 - P(spare)) x replacement_wait_s
    goodput                 G = tau / (tau + delta) x (1 - lambda (D + (tau + delta) / 2))

P(spare) is the chance that fewer than hot_spares units are out for repair: failed units are
Poisson with mean (hardware faults per hour) x repair_hours.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from ..model.network_reach import job_servers
from ..model.document import Document
from ..model.elements import Node
from ..model.reliability import ReliabilityConstants

HARDWARE_PARTS = ("GPU", "HBM", "NIC", "switch or cable", "host")


@dataclass(frozen=True)
class PartRisk:
    """How often one kind of part interrupts the job, and how many GPUs a fault of it takes out."""
    part: str  # GPU, HBM, NIC, switch or cable, host, software
    count: int  # of these parts in the job
    unit: str  # what the rate is per: GPU-hour, NIC-hour, ...
    rate_per_mh: float  # faults per million unit-hours (calibration.reliability)
    per_day: float  # expected interruptions of the job per day from this part
    blast_gpus: int  # GPUs a fault of it takes out of the job until repaired or spared
    blast: str  # the unit it takes out: "server", "NVLink domain (72 GPUs)", "none (software)"


@dataclass(frozen=True)
class Goodput:
    """The share of wall-clock time a job trains, from interruptions, checkpoints and restarts."""
    parts: list[PartRisk]
    interruptions_per_day: float
    mtti_h: float  # mean time to interruption
    checkpoint_tb: float
    checkpoint_write_s: float
    checkpoint_load_s: float
    interval_s: float  # Young/Daly optimal checkpoint interval
    restart_s: float
    replacement_wait_s: float  # paid after a hardware fault with no spare ready
    hot_spares: int  # spare units (given, or sized for spare_target)
    spare_unit_gpus: int  # GPUs per spare unit (a server, or an NVLink domain)
    spare_ready: float  # probability a spare is ready at a hardware fault
    down_per_interruption_s: float
    lost_share_checkpoints: float  # of wall time: writing checkpoints
    lost_share_failures: float  # of wall time: restarts, waits and recomputed work
    goodput: float  # useful share of wall time
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        out = asdict(self)
        out["parts"] = [asdict(p) for p in self.parts]
        return out


def _domains(doc: Document, nodes: list[Node]) -> int:
    """GPUs of the largest NVLink domain among `nodes` (a server's own when none is shared)."""
    sizes: dict[str, int] = {}
    for n in nodes:
        if n.nvlink_domain:
            sizes[n.nvlink_domain] = sizes.get(n.nvlink_domain, 0) + n.accelerator_count
    return max(sizes.values(), default=0)


def _poisson_below(k: int, mean: float) -> float:
    """P(N < k) for N ~ Poisson(mean)."""
    if k <= 0:
        return 0.0
    term = total = math.exp(-mean)
    for i in range(1, k):
        term *= mean / i
        total += term
    return min(1.0, total)


def _spares_for(target: float, mean: float) -> int:
    """The fewest spares with P(a spare is ready) >= target."""
    k = 0
    while _poisson_below(k, mean) < target and k < 100_000:
        k += 1
    return k


def estimate_goodput(doc: Document, num_gpus: int, parameters: float, rc: ReliabilityConstants,
                     model_parallel_gpus: int = 1) -> Goodput:
    """Goodput of a job of `num_gpus` GPUs training a model of `parameters` parameters on `doc`;
    `model_parallel_gpus`: the plan's TP x CP x EP group, which decides whether a fault inside an
    NVLink domain larger than a server takes the whole domain out."""
    nodes = job_servers(doc, num_gpus)
    servers = len(nodes)
    per_server = max(1, min((n.accelerator_count for n in nodes), default=8))
    nics = sum(n.nic_count for n in nodes)
    domain = _domains(doc, nodes)
    notes = []
    # A GPU, HBM or host fault takes out its server; inside an NVLink domain larger than a server
    # (an NVL72 rack) the job's TP/EP groups span trays, so the whole domain leaves the job unless it
    # keeps spare trays in the rack (NVIDIA's runs use 64 of 72 GPUs for that).
    spans = domain > per_server and model_parallel_gpus > per_server
    hw_blast, hw_unit = (domain, f"NVLink domain ({domain} GPUs)") if spans else \
        (per_server, f"server ({per_server} GPUs)")
    if spans:
        notes.append(f"a GPU, HBM or host fault takes its whole {domain}-GPU NVLink domain out of the job "
                     "(its model-parallel groups span the trays); spares are counted in domains")
    link_blast = per_server
    rows = [("GPU", num_gpus, "GPU-hour", rc.gpu_failures_per_mh, hw_blast, hw_unit),
            ("HBM", num_gpus, "GPU-hour", rc.hbm_failures_per_mh, hw_blast, hw_unit),
            ("NIC", nics, "NIC-hour", rc.nic_failures_per_mh, link_blast, f"server ({per_server} GPUs)"),
            ("switch or cable", nics, "link-hour", rc.link_failures_per_mh, link_blast,
             f"server ({per_server} GPUs); a leaf switch: every server under it"),
            ("host", servers, "server-hour", rc.host_failures_per_mh, hw_blast, hw_unit),
            ("software", num_gpus, "GPU-hour", rc.software_failures_per_mh, 0, "none (the job restarts)")]
    parts = [PartRisk(name, count, unit, rate, rate * count / 1e6 * 24, blast, what)
             for name, count, unit, rate, blast, what in rows]
    per_hour = sum(p.per_day for p in parts) / 24
    hw_per_hour = sum(p.per_day for p in parts if p.part in HARDWARE_PARTS) / 24
    mtti_s = 3600 / per_hour if per_hour > 0 else math.inf
    ckpt_bytes = parameters * rc.checkpoint_bytes_per_param
    write_s = ckpt_bytes / (rc.storage_write_tbps * 1e12) if rc.storage_write_tbps > 0 else math.inf
    load_s = ckpt_bytes / (rc.storage_read_tbps * 1e12) if rc.storage_read_tbps > 0 else math.inf
    # units out for repair at a time: Poisson, mean = hardware faults per hour x repair hours
    out_for_repair = hw_per_hour * rc.repair_hours
    spares = rc.hot_spares if rc.hot_spares >= 0 else _spares_for(rc.spare_target, out_for_repair)
    spare_ready = _poisson_below(spares, out_for_repair)
    hw_share = hw_per_hour / per_hour if per_hour > 0 else 0.0
    down_s = rc.restart_s + load_s + hw_share * (1 - spare_ready) * rc.replacement_wait_s
    if not math.isfinite(mtti_s):
        interval = math.inf
        ckpt_share, fail_share, good = 0.0, 0.0, 1.0
    else:
        interval = math.sqrt(2 * write_s * mtti_s) - write_s if write_s < 2 * mtti_s else mtti_s
        interval = max(interval, write_s)
        ckpt_share = write_s / (interval + write_s)
        fail_share = min(1.0, (down_s + (interval + write_s) / 2) / mtti_s)
        good = max(0.0, (1 - ckpt_share) * (1 - fail_share))
        fail_share = (1 - ckpt_share) * fail_share
    if good < 0.5:
        notes.append("less than half of the wall time is useful: interruptions come faster than the job can "
                     "checkpoint and restart; faster storage, hot spares or a smaller job")
    return Goodput(parts=parts, interruptions_per_day=per_hour * 24, mtti_h=mtti_s / 3600,
                   checkpoint_tb=ckpt_bytes / 1e12, checkpoint_write_s=write_s, checkpoint_load_s=load_s,
                   interval_s=interval, restart_s=rc.restart_s, replacement_wait_s=rc.replacement_wait_s,
                   hot_spares=spares, spare_unit_gpus=hw_blast, spare_ready=spare_ready,
                   down_per_interruption_s=down_s, lost_share_checkpoints=ckpt_share,
                   lost_share_failures=fail_share, goodput=good, notes=notes)


def job_goodput(doc: Document, result, catalog=None) -> Goodput:
    """The goodput of `doc`'s job as `result` (its Evaluation) plans it: parameters from the workload,
    the plan's model-parallel group, the file's calibration.reliability."""
    from ..engine import flops as F
    from ..model.catalog import default_catalog
    from ..model.job import resolve_workload
    from ..model.reliability import reliability_constants

    w = resolve_workload(doc.spec.workload, (catalog or default_catalog()).presets())
    counts = F.parameter_count(F.ModelShape.of(w))
    params = sum(counts[k] for k in ("embedding", "output", "layers"))
    plan = result.plan or {}
    group = plan.get("tp", 1) * plan.get("cp", 1) * max(1, plan.get("ep", 1))
    return estimate_goodput(doc, result.num_gpus, params, reliability_constants(doc.spec.calibration), group)
