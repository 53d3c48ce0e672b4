"""What if this fails: the single failures of the drawn fabric, ranked by what they cost the jobs.

Every switch, one server of each job and one cable of each class of switch-to-switch link (all
up-links of one tier are alike in a generated fabric; a drawn one may differ, so each distinct
(tier, rate, cables) class is tried once) is marked down in turn, and every job is costed again.
A failure that cuts a job off (a leaf its servers hang from, a server it lists) "stops" it (the
engine's problems name the job); the others are costed without it, on the servers they have today. The ranking is by GPU-seconds lost per step: the
jobs' slowdowns weighted by their GPUs, a stopped job counting as all of its GPUs.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

from ..engine.evaluate import Engine
from ..model.document import Document
from ..model.jobs import JobPlacement
from ..problems import DesignerError

Progress = "callable(done, total) -> bool (False: stop)"


@dataclass
class Failure:
    """What losing one part (switch, server, link) does to the jobs: which stop and which slow down."""
    element: str  # the id marked down
    kind: str  # "spine switch", "leaf switch", "server", "up-link", ...
    stopped: list[str] = field(default_factory=list)  # jobs it cuts off
    slowdown: dict[str, float] = field(default_factory=dict)  # job -> fraction slower than today
    reason: str = ""  # why a job stops (the engine's message)
    lost_gpu_share: float = 0.0  # GPU-weighted share of the cluster's work lost per step

    def as_json(self) -> dict:
        return {"element": self.element, "kind": self.kind, "stopped": self.stopped,
                "slowdown": self.slowdown, "reason": self.reason, "lost_gpu_share": self.lost_gpu_share}

    @property
    def text(self) -> str:
        if self.stopped:
            return f"{self.kind} {self.element} down: stops {', '.join(self.stopped)}"
        worst = sorted(self.slowdown.items(), key=lambda kv: -kv[1])
        moved = [f"{job} +{s:.1%}" for job, s in worst if s >= 0.0005]
        return f"{self.kind} {self.element} down: " + (", ".join(moved) if moved else "costs nothing")


def candidates(doc: Document, result) -> list[tuple[str, str]]:
    """(element id, kind) of the single failures worth trying, in file order."""
    out = [(s.id, f"{s.tier} switch") for s in doc.switches if s.state != "down" and s.tier != "nvlink"]
    seen_servers = set()
    for job in result.jobs:
        if job.node_ids:
            node = job.node_ids[len(job.node_ids) // 2]  # a middle one: not the one a test picks first
            if node not in seen_servers:
                seen_servers.add(node)
                out.append((node, "server"))
    tiers = {s.id: s.tier for s in doc.switches}
    classes = set()
    for link in doc.links:
        a, b = tiers.get(link.a.split(":")[0]), tiers.get(link.b.split(":")[0])
        if a is None or b is None or link.state == "down":
            continue
        key = (tuple(sorted((a, b))), link.bandwidth_gbps, link.count)
        if key not in classes:
            classes.add(key)
            out.append((link.id, f"{'-'.join(key[0])} link"))
    return out


def rank_failures(doc: Document, engine: Engine | None = None, progress=None) -> list[Failure]:
    """Every single failure of `candidates`, costliest first. `progress(done, total)` may stop it."""
    engine = engine or Engine()
    base = engine.evaluate(doc)
    today = {job.name: job.result.step_time_s for job in base.jobs}
    gpus = {job.name: job.result.num_gpus for job in base.jobs}
    total_gpus = sum(gpus.values()) or 1
    todo = candidates(doc, base)
    work = doc.copy()
    if doc.spec.jobs:  # a failure does not move the jobs: each keeps its servers (a job placed by policy
        # would otherwise be placed again around the part down, as a new job would)
        work.set_jobs(_pinned(doc, base))
    out = []
    for n, (element, kind) in enumerate(todo):
        if progress is not None and progress(n, len(todo)) is False:
            break
        failure = Failure(element, kind)
        work.update(element, state="down")
        try:
            result = engine.evaluate(work)
            for job in result.jobs:
                failure.slowdown[job.name] = job.result.step_time_s / today[job.name] - 1.0
        except DesignerError as exc:
            failure.reason = "; ".join(p.message for p in exc.problems[:2])
            named = {p.job for p in exc.problems if p.job}
            failure.stopped = [name for name in today if name in named] or list(today)  # no name: all of it
            if len(failure.stopped) < len(today):  # the others run on, without the stopped jobs' traffic
                failure.slowdown.update(_without(engine, work, base, failure.stopped, today))
            for job_name in today:
                failure.slowdown.setdefault(job_name, 0.0)
        finally:
            work.update(element, state="up")
        lost = sum(gpus[j] for j in failure.stopped)
        lost += sum(gpus[j] * s / (1 + s) for j, s in failure.slowdown.items() if j not in failure.stopped and s > 0)
        failure.lost_gpu_share = lost / total_gpus
        out.append(failure)
    out.sort(key=lambda f: (-f.lost_gpu_share, f.element))
    return out


def _pinned(doc: Document, base) -> list:
    """The jobs of spec.jobs, each listing the servers it has in `base` (rank order) and its GPU count."""
    where = {job.name: job for job in base.jobs}
    return [dataclasses.replace(spec, placement=JobPlacement(nodes=list(where[spec.name].node_ids),
                                                             gpus=where[spec.name].result.num_gpus))
            for spec in doc.spec.jobs]


def _without(engine: Engine, work: Document, base, stopped: list[str], today: dict[str, float]) -> dict[str, float]:
    """Each job a failure does not stop, costed with the stopped ones gone and every other job kept
    on the servers it has today (a failure does not move the jobs that survive it): the fraction
    slower than today (negative: faster, their traffic gone). Nothing when that too fails."""
    jobs = list(work.spec.jobs)
    where = {job.name: job for job in base.jobs}
    kept = [dataclasses.replace(spec, placement=JobPlacement(nodes=list(where[spec.name].node_ids),
                                                             gpus=where[spec.name].result.num_gpus))
            for spec in jobs if spec.name not in stopped]
    work.set_jobs(kept)
    try:
        result = engine.evaluate(work)
        return {job.name: job.result.step_time_s / today[job.name] - 1.0 for job in result.jobs}
    except DesignerError:
        return {}
    finally:
        work.set_jobs(jobs)


@dataclass
class JobMove:
    """The effect of re-placing one job with another placement policy on every job's step time."""
    job: str
    policy: str  # the placement policy tried
    step_change: dict[str, float]  # job -> relative change of its step (negative: faster)
    text: str = ""

    def as_json(self) -> dict:
        return {"job": self.job, "policy": self.policy, "step_change": self.step_change, "text": self.text}


def job_moves(doc: Document, engine: Engine | None = None, min_gain: float = 0.005) -> list[JobMove]:
    """Each job placed by another policy (the others kept where they are, listed by server): the
    moves that make the jobs faster on the whole, best first ("move llama3-8b (spread -> packed):
    llama3-8b -4.1 %, qwen3 -1.2 %")."""
    from ..model.jobs import JobPlacement, PLACEMENT_POLICIES

    if not doc.spec.jobs or len(doc.spec.jobs) < 2:
        return []
    engine = engine or Engine()
    base = engine.evaluate(doc)
    today = {job.name: job.result.step_time_s for job in base.jobs}
    gpus = {job.name: job.result.num_gpus for job in base.jobs}
    pinned = [type(spec)(spec.name, spec.workload, spec.parallelism,
                         JobPlacement(nodes=list(job.node_ids), gpus=job.result.num_gpus))
              for spec, job in zip(doc.spec.jobs, base.jobs)]
    moves = []
    for i, spec in enumerate(doc.spec.jobs):
        for policy in PLACEMENT_POLICIES:
            if policy == spec.placement.policy and not spec.placement.nodes:
                continue
            moved = type(spec)(spec.name, spec.workload, spec.parallelism,
                               JobPlacement(policy=policy, gpus=gpus[spec.name]))
            jobs = [p for k, p in enumerate(pinned) if k != i] + [moved]  # the others keep their servers
            work = doc.copy()
            work.set_jobs(jobs)
            try:
                result = engine.evaluate(work)
            except DesignerError:
                continue
            change = {job.name: job.result.step_time_s / today[job.name] - 1.0 for job in result.jobs}
            weighted = sum(gpus[j] * c for j, c in change.items()) / sum(gpus.values())
            if weighted < -min_gain:
                order = [spec.name] + [j for j in today if j != spec.name]
                text = (f"move {spec.name} ({spec.placement.policy if not spec.placement.nodes else 'listed servers'}"
                        f" -> {policy}): " + ", ".join(f"{j} {change[j]:+.1%}" for j in order))
                moves.append((weighted, JobMove(spec.name, policy, change, text)))
    moves.sort(key=lambda m: m[0])
    return [m for _, m in moves]


def timed(fn, *args, **kwargs):
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0
