"""Stage for several jobs on one fabric: each job's demand on the links they share, and how much
the others' traffic slows it (Engine.evaluate_jobs runs it between a job's two costings).

The model (docs/jobs.md), at the speed of the analytical engine, not a packet simulation:

1. Every job is evaluated alone on its own GPUs (Engine.evaluate_job): its bytes per step on every
   link, by traffic kind (DP, EP, PP, CP, TP), and how long each kind's phase lasts (exposed +
   hidden seconds of the breakdown).
2. On a shared resource r (the up-links of a leaf, the spine-core links of a pod) job i's phase k
   is active a share p_ik = T_ik / step_i of the time and pushes D_ik = bytes_ik(r) / T_ik while
   active. Jobs with different step times overlap for those shares of time, independently.
3. Job j, whose own demand on r is D_j (its busiest phase there), finds phase k of job i active a
   share p_ik of the time; when D_j + D_ik exceeds r's capacity C the two share it in proportion
   to their demands and j's transfers take (D_j + D_ik) / C times as long. Its expected time on r
   grows by the factor 1 + sum_ik p_ik max(0, (D_j + D_ik) / C - 1), by which r's capacity is
   divided in j's view of the fabric; j is then costed again on that view.
   A non-blocking fabric (D_j + D_ik <= C) slows nobody; more jobs only add terms, so never make
   a job faster. NICs are not shared: the placer gives a GPU (and its NIC) to one job.
"""
from __future__ import annotations

import weakref

import numpy as np

from ..flows import ethernet_tiers
from ..fabric import Fabric
from ..job_placement import PlacedJob
from .breakdown import HIDDEN_KEYS
from .result import Evaluation

TIERS = ("leaf up-links", "spine-core links")


class JobResult:
    """One job of a design: its evaluation on the shared fabric and alone, and who slows it.

    The first job's evaluation holds the list of JobResults (Evaluation.jobs); a JobResult refers
    back to that evaluation only weakly, so a dropped result is freed at once, without waiting for
    the cycle collector (whose pass over a result's 70k timeline events stalls the window)."""

    def __init__(self, name: str, placed: PlacedJob, result: Evaluation, alone: Evaluation,
                 interference: list[dict] | None = None):
        self.name, self.placed = name, placed
        self.result, self.alone = result, alone
        self.interference = interference or []
        self.node_ids: list[str] = []

    result = property(lambda self: _deref(self._result), lambda self, value: setattr(self, "_result", value))
    alone = property(lambda self: _deref(self._alone), lambda self, value: setattr(self, "_alone", value))

    def hold_weakly(self, container: Evaluation) -> None:
        """Refer to `container` (the evaluation that lists this job) without keeping it alive."""
        for name in ("_result", "_alone"):
            if getattr(self, name) is container:
                setattr(self, name, weakref.ref(container))

    @property
    def slowdown_vs_alone(self) -> float:
        """How much slower than alone, as a fraction (0.09: 9 % slower)."""
        alone = self.alone.step_time_s
        return self.result.step_time_s / alone - 1.0 if alone > 0 else 0.0

    def nodes(self, fabric_node_ids: list[str], gpu_node: np.ndarray) -> list[str]:
        gpus = self.placed.gpus
        if gpus is None:
            gpus = np.arange(self.result.num_gpus)
        order = dict.fromkeys(gpu_node[gpus].tolist())
        return [fabric_node_ids[i] for i in order]

    def as_json(self) -> dict:
        r = self.result
        return {"name": self.name, "gpus": r.num_gpus, "step_time_s": r.step_time_s,
                "breakdown_s": r.breakdown_s, "slowdown_vs_alone": self.slowdown_vs_alone,
                "alone_step_time_s": self.alone.step_time_s, "tokens_per_s": r.tokens_per_s, "mfu": r.mfu,
                "interference": self.interference, "nodes": getattr(self, "node_ids", []),
                "plan": r.plan}


def _deref(value):
    if isinstance(value, weakref.ref):
        value = value()
        if value is None:
            raise ReferenceError("the evaluation that lists this job is gone: keep what Engine.evaluate returned")
    return value


def rating_signature(fabric: Fabric, gpus: np.ndarray) -> bytes:
    """Every rate a job on `gpus` is costed with, as bytes: its GPUs' slowdowns, its NICs' rates,
    and the up-link capacity and cables of the leaves and pods its NICs hang from (the resources
    its flows cross: engine/flows.py route_flows). Equal signatures, equal costing."""
    nics = fabric.gpu_nic[gpus]
    nics = nics[nics >= 0]
    leaves = np.unique(fabric.nic_leaf[nics])
    leaves = leaves[leaves >= 0]
    pods = np.unique(fabric.switch_pod[leaves]) if len(fabric.switch_pod) else np.zeros(0, dtype=np.int64)
    pods = pods[pods >= 0]
    parts = [fabric.nic_cap_Bps[nics], leaves, fabric.leaf_up_Bps[leaves], fabric.leaf_up_cables[leaves], pods,
             fabric.pod_up_Bps[pods], fabric.pod_up_cables[pods]]
    if fabric.gpu_slowdown is not None:
        parts.append(fabric.gpu_slowdown[gpus])
    return b"|".join(np.ascontiguousarray(part).tobytes() for part in parts)


class Demand:
    """One job's use of the shared tiers, per phase kind: bytes per step, active share, rate."""
    share: dict[str, float]  # kind -> p: share of the step the phase is active
    rate: dict[str, list[np.ndarray]]  # kind -> [per leaf, per pod] bytes/s while active
    own: list[np.ndarray]  # [per leaf, per pod]: the job's highest rate there
    bytes: list[np.ndarray]  # [per leaf, per pod]: its bytes per step there (all kinds)
    flows: list[np.ndarray]  # [per leaf, per pod]: its NICs whose traffic crosses there (ECMP flows)

    __slots__ = ("share", "rate", "own", "bytes", "flows")

    def __init__(self, share: dict[str, float], rate: dict[str, list[np.ndarray]], own: list[np.ndarray],
                 bytes: list[np.ndarray], flows: list[np.ndarray]) -> None:
        self.share = share
        self.rate = rate
        self.own = own
        self.bytes = bytes
        self.flows = flows


def _tier_bytes(fabric: Fabric, per_link: np.ndarray) -> list[np.ndarray]:
    (up_links, up_owner), (pod_links, pod_owner) = fabric._uplink, fabric._podlink
    leaf = np.bincount(up_owner, per_link[up_links], minlength=len(fabric.switch_ids))
    pod = np.bincount(pod_owner, per_link[pod_links], minlength=len(fabric.pod_up_Bps))
    return [leaf, pod]


def _capacities(fabric: Fabric) -> list[np.ndarray]:
    return [fabric.leaf_up_Bps, fabric.pod_up_Bps]


def demand(fabric: Fabric, result: Evaluation, gpus: np.ndarray | None) -> Demand:
    """A job's use of the shared tiers: from its evaluation alone on `gpus` (its link loads)."""
    step = result.step_time_s
    caps = _capacities(fabric)
    share, rate = {}, {}
    own = [np.zeros_like(c) for c in caps]
    total = [np.zeros_like(c) for c in caps]
    for kind, per_link in result.link_load.items():
        phase_s = result.breakdown_s.get(kind, 0.0) + (result.hidden_comm_s.get(kind, 0.0) if kind in HIDDEN_KEYS
                                                         else 0.0)
        tiers = _tier_bytes(fabric, per_link)
        if phase_s <= 0 or step <= 0 or not any(t.any() for t in tiers):
            continue
        share[kind] = min(1.0, phase_s / step)
        with np.errstate(divide="ignore", invalid="ignore"):
            rate[kind] = [np.minimum(t / phase_s, np.where(c > 0, c, 0.0)) for t, c in zip(tiers, caps)]
        for i in range(2):
            own[i] = np.maximum(own[i], rate[kind][i])
            total[i] += tiers[i]
    nics = fabric.gpu_nic[np.asarray(gpus)] if gpus is not None else None
    flows = [np.zeros_like(c) for c in caps]
    if nics is not None:
        nics = nics[nics >= 0]
        leaves = fabric.nic_leaf[nics]
        leaves = leaves[leaves >= 0]
        flows[0] = np.bincount(leaves, minlength=len(caps[0])).astype(float) * (total[0] > 0)
        if len(caps[1]):
            pods = fabric.switch_pod[leaves]
            flows[1] = np.bincount(pods[pods >= 0], minlength=len(caps[1])).astype(float) * (total[1] > 0)
    return Demand(share, rate, own, total, flows)


def contention(fabric: Fabric, demands: list[Demand], j: int, tiers: list["TierRows"] | None = None):
    """Job j's capacity divisors per leaf and per pod, and who causes what ({(job, tier): extra time
    share per leaf/pod}); None when no other job crosses a leaf or pod that j crosses.

    Two terms, both zero on a tier nobody else crosses and both only growing with more jobs:
    sharing (the others' demand on top of j's above the capacity, for the share of time they are
    active) and, on Ethernet, hashing: ECMP puts the others' flows on up-links at random, so j's
    busiest up-link (m of its own flows) also carries sqrt(2 (F/U) ln U) more of theirs than an
    even split would, for the share of time they run at a rate that fills their share of it.
    Every other job's phases are costed at once (one row per job and phase kind)."""
    if tiers is None:
        tiers = tier_rows(fabric, demands)
    mine = demands[j]
    extra = [np.zeros_like(c) for c in _capacities(fabric)]
    blame: dict[tuple[int, int], np.ndarray] = {}
    touched = False
    for t, rows in enumerate(tiers):
        if not rows.owner.size:
            continue
        cols = np.flatnonzero(mine.bytes[t] > 0)  # only where j has traffic can others slow it
        if not cols.size:
            continue
        others = rows.owner != j
        shared = rows.crosses[:, cols] & others[:, None]  # (rows, j's places)
        if not shared.any():
            continue
        touched = True
        cap, cables, ethernet = rows.cap[cols], rows.cables[cols], rows.ethernet[cols]
        with np.errstate(divide="ignore", invalid="ignore"):
            over = np.maximum(0.0, (mine.own[t][cols][None, :] + rows.rate[:, cols]) / cap - 1.0)
            caused = np.where(shared & (cap > 0), over, 0.0)
            if ethernet.any():  # hashing: the others' excess flows on j's busiest up-link
                load_mine = mine.flows[t][cols] / cables
                busiest_mine = np.maximum(1.0, load_mine + np.sqrt(2 * load_mine * rows.log_cables[cols]))
                caused += np.where(shared & ethernet[None, :], rows.excess[:, cols] * rows.fill[:, cols] / busiest_mine,
                                   0.0)
        caused *= rows.share[:, None]
        per_job = np.zeros((len(demands), cols.size))
        np.add.at(per_job, rows.owner, caused)
        for i in np.flatnonzero(per_job.any(axis=1)).tolist():
            full = np.zeros_like(extra[t])
            full[cols] = per_job[i]
            extra[t] += full
            blame[(i, t)] = full
    if not touched or not any(e.any() for e in extra):
        return None, {}
    factors = (1.0 + extra[0], 1.0 + extra[1])
    token = hash(factors[0].tobytes() + factors[1].tobytes())
    return (factors[0], factors[1], token), blame


class TierRows:
    """Every job's phases on one tier (leaf up-links or pod up-links), one row per (job, kind)."""
    owner: np.ndarray  # (rows,) job index
    share: np.ndarray  # (rows,) p: share of that job's step the phase is active
    rate: np.ndarray  # (rows, places) bytes/s while active
    crosses: np.ndarray  # (rows, places) the job has bytes there at all
    excess: np.ndarray  # (rows, places) its flows above an even ECMP split: sqrt(2 (F/U) ln U)
    fill: np.ndarray  # (rows, places) how much of its share of a cable its rate fills
    cap: np.ndarray  # (places,) capacity
    cables: np.ndarray  # (places,) cables (at least 1)
    log_cables: np.ndarray  # (places,) ln U (U at least 2)
    ethernet: np.ndarray  # (places,) hashed (ECMP) rather than adaptively routed

    __slots__ = ("owner", "share", "rate", "crosses", "excess", "fill", "cap", "cables", "log_cables", "ethernet")

    def __init__(self, owner: np.ndarray, share: np.ndarray, rate: np.ndarray, crosses: np.ndarray, excess: np.ndarray,
                 fill: np.ndarray, cap: np.ndarray, cables: np.ndarray, log_cables: np.ndarray,
                 ethernet: np.ndarray) -> None:
        self.owner = owner
        self.share = share
        self.rate = rate
        self.crosses = crosses
        self.excess = excess
        self.fill = fill
        self.cap = cap
        self.cables = cables
        self.log_cables = log_cables
        self.ethernet = ethernet


def tier_rows(fabric: Fabric, demands: list[Demand]) -> list[TierRows]:
    caps = _capacities(fabric)
    ethernet = ethernet_tiers(fabric)
    all_cables = [np.maximum(fabric.leaf_up_cables.astype(float), 1), np.maximum(fabric.pod_up_cables.astype(float), 1)]
    out = []
    for t in range(2):
        owner, share, rate, crosses, flows = [], [], [], [], []
        for i, d in enumerate(demands):
            for kind, p in d.share.items():
                owner.append(i)
                share.append(p)
                rate.append(d.rate[kind][t])
                crosses.append(d.bytes[t] > 0)
                flows.append(d.flows[t])
        n = len(caps[t])
        cap, cables = caps[t], all_cables[t]
        log_cables = np.log(np.maximum(cables, 2))
        if owner:
            rate_m, flows_m = np.array(rate), np.array(flows)
            with np.errstate(divide="ignore", invalid="ignore"):
                excess = np.sqrt(2 * (flows_m / cables) * log_cables)
                fill = np.where(cap > 0, np.minimum(1.0, rate_m / cap * cables / np.maximum(flows_m, 1)), 0.0)
            out.append(TierRows(np.array(owner), np.array(share), rate_m, np.array(crosses), excess, fill,
                                 cap, cables, log_cables, ethernet[t]))
        else:
            empty = np.zeros((0, n))
            out.append(TierRows(np.zeros(0, np.int64), np.zeros(0), empty, empty.astype(bool), empty, empty,
                                 cap, cables, log_cables, ethernet[t]))
    return out


def interference(job: JobResult, blame: dict, names: list[str], fabric: Fabric,
                  own: list[np.ndarray]) -> list[dict]:
    """Who slows the job, on which tier: each other job's part of the slowdown, weighted by the job's
    own bytes on each leaf/pod (`own`: per leaf, per pod), so the parts add up to slowdown_vs_alone."""
    slowdown = max(0.0, job.slowdown_vs_alone)
    weights = {}
    for (i, t), over in blame.items():
        total = float(own[t].sum())
        if total > 0:
            weights[(i, t)] = float((own[t] * over).sum() / total)
    whole = sum(weights.values())
    rows = []
    for (i, t), w in sorted(weights.items(), key=lambda kv: -kv[1]):
        if w <= 0 or whole <= 0 or slowdown * w / whole < 1e-4:
            continue
        over = blame[(i, t)]
        worst = np.argsort(-(over * own[t]))[:4]
        ids = [fabric.switch_ids[x] if t == 0 else f"pod {x}" for x in worst.tolist() if over[x] > 0]
        rows.append({"job": names[i], "resource": TIERS[t], "share": slowdown * w / whole, "elements": ids})
    return rows
