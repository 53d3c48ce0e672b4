"""Which GPUs each job of a design gets (spec.jobs, model/jobs.py).

The placer never gives a GPU to two jobs and never one that is down (a server marked down, or
the last `gpus_down` accelerators of a server). Jobs that list servers or racks are placed
first, in file order; then the jobs with a policy:

  packed          the free GPUs in order of pod, then rack and file order (fills pods one by one)
  spread          whole servers taken in turn from each pod (the job's traffic spread over pods)
  rail-aligned    whole free servers of one group of leaves where it fits (NIC k of every server
                  on rail leaf k, so DP rings stay on their rails and inside one leaf group)
  domain-aligned  whole NVLink domains first, the freest first (TP and EP groups inside a domain)

A job's ranks run on its GPUs in the order placed (servers in that order, then local index),
as launchers place ranks block-wise.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..model.document import Document
from ..model.jobs import JobSpec, document_jobs, job_path
from ..model.network_reach import describe_unusable, unusable_fix, unusable_servers
from ..model.plan import check_job
from ..problems import Problem
from .fabric import Fabric, gpus_up


class PlacedJob:
    """One job of the file with the GPUs it was given, in rank order."""
    index: int  # position in spec.jobs (0 for the one job of a file without jobs)
    spec: JobSpec
    gpus: np.ndarray  # global GPU indices, in rank order
    path: str  # where the job's keys are in the file: spec.jobs[i] or spec

    __slots__ = ("index", "spec", "gpus", "path")

    def __init__(self, index: int, spec: JobSpec, gpus: np.ndarray, path: str) -> None:
        self.index = index
        self.spec = spec
        self.gpus = gpus
        self.path = path

    @property
    def name(self) -> str:
        return self.spec.name


class Placement:
    """The design's jobs on its GPUs: each job's GPUs, who owns each GPU, and what stopped a job."""
    jobs: list[PlacedJob]
    problems: list[Problem]
    gpu_owner: np.ndarray  # job index of each GPU, -1 free
    # servers up that a job across servers cannot use (network_reach.unusable_servers), with why
    skipped: dict[str, str]

    __slots__ = ("jobs", "problems", "gpu_owner", "skipped")

    def __init__(self, jobs: list[PlacedJob], problems: list[Problem], gpu_owner: np.ndarray,
                 skipped: dict[str, str] | None = None) -> None:
        self.jobs = jobs
        self.problems = problems
        self.gpu_owner = gpu_owner
        self.skipped = {} if skipped is None else skipped

    def with_specs(self, specs: list[JobSpec]) -> Placement:
        """The same GPUs for each job, with the jobs' specs (workloads, plans) as they are now."""
        return Placement([PlacedJob(pj.index, specs[pj.index], pj.gpus, pj.path) for pj in self.jobs],
                         self.problems, self.gpu_owner, self.skipped)


def job_gpu_count(doc: Document, spec: JobSpec, single: bool) -> int | None:
    """GPUs the job asks for: placement.gpus, else parallelism.num_gpus, else (one job) all of the cluster."""
    if spec.placement.gpus:
        return spec.placement.gpus
    if spec.parallelism is not None and spec.parallelism.num_gpus:
        return spec.parallelism.num_gpus
    if single and not spec.placement.nodes and not spec.placement.racks:
        return doc.num_gpus()
    return None


def maybe_unusable(fabric: Fabric) -> bool:
    """Some server may be unusable for a job across servers (a cable or switch down, a GPU without a
    cabled NIC): the fabric's arrays say when certainly not, without reading the design."""
    def make() -> bool:
        return bool((fabric.link_cap_Bps <= 0).any() or (fabric.gpu_nic < 0).any() or (fabric.nic_cap_Bps <= 0).any())
    # kept with the fabric while those arrays are the same (every evaluation asks; a re-rating makes new ones)
    return fabric.remembered("maybe_unusable", (fabric.link_cap_Bps, fabric.gpu_nic, fabric.nic_cap_Bps), make)


def place_jobs(doc: Document, fabric: Fabric, up: np.ndarray | None = None) -> Placement:
    """Every job's GPUs. A job larger than one server skips the servers it could not reach
    (unusable_servers): it runs on the others, and Placement.skipped says which and why."""
    jobs = document_jobs(doc)
    single = not doc.spec.jobs
    up = gpus_up(doc, fabric) if up is None else up
    owner = np.where(up, -1, -2)  # -2: down
    unusable = unusable_servers(doc) if maybe_unusable(fabric) else {}
    off_network = np.zeros(len(owner), dtype=bool)  # GPUs of those servers
    if unusable:
        off_network[np.isin(fabric.gpu_node, [i for i, n in enumerate(fabric.node_ids) if n in unusable])] = True
    one_server = int(fabric.node_gpus.max(initial=0))
    problems: list[Problem] = []
    placed: dict[int, PlacedJob] = {}
    node_index = {n.id: i for i, n in enumerate(doc.nodes)}
    node_start = np.concatenate([[0], np.cumsum(fabric.node_gpus)[:-1]]).astype(np.int64) if len(doc.nodes) else np.zeros(0, np.int64)

    names = [j.name for j in jobs]
    for i, name in enumerate(names):
        if not single and names.index(name) != i:
            problems.append(Problem(f"two jobs are named {name!r}", f"spec.jobs[{i}].name",
                                    fix="give each job its own name"))

    explicit = [i for i, j in enumerate(jobs) if j.placement.nodes or j.placement.racks]
    by_policy = [i for i, j in enumerate(jobs) if i not in explicit]
    for i in explicit + by_policy:
        spec, path = jobs[i], job_path(doc, i)
        want = job_gpu_count(doc, spec, single)
        spans = want > one_server if want else len(spec.placement.nodes) + len(spec.placement.racks) > 1
        if i in explicit:
            gpus, found = _listed(doc, spec, path, node_index, node_start, fabric, owner, jobs,
                                  unusable if spans else {})
            problems += found
            if found:
                continue
            if want is not None and want > len(gpus):
                problems.append(Problem(
                    f"job {spec.name} asks for {want:,} GPUs but its servers have {len(gpus):,} free",
                    f"{path}.placement", fix="list more servers, or lower placement.gpus"))
                continue
            gpus = gpus[:want] if want else gpus
        else:
            if want is None:
                problems.append(Problem(f"job {spec.name} does not say how many GPUs it needs",
                                        f"{path}.placement.gpus",
                                        fix="set placement.gpus (or parallelism.num_gpus), or list its servers "
                                            "in placement.nodes"))
                continue
            reachable = np.where(off_network & (owner == -1), -3, owner) if spans and unusable else owner
            free = int(np.sum(reachable == -1))
            if want > free:
                lost = int(np.sum((owner == -1) & (reachable != -1)))
                problems.append(_cut_off(spec, path, want, free, unusable, single) if lost and want <= free + lost
                                else _no_room(doc, spec, path, want, free, owner, jobs, up, single))
                continue
            gpus = _by_policy(spec.placement.policy, want, reachable, fabric)
        owner[gpus] = i
        placed[i] = PlacedJob(i, spec, gpus.astype(np.int64), path)
    by_path = sorted(((job_path(doc, i), j.name) for i, j in enumerate(jobs)), key=lambda pn: -len(pn[0]))
    problems = [_of_job(p, by_path) for p in problems]
    return Placement([placed[i] for i in sorted(placed)], problems, owner, unusable)


def _cut_off(spec, path, want, free, unusable, single) -> Problem:
    """A job that would fit but for the servers it cannot reach."""
    return Problem(f"job {spec.name} needs {want:,} GPUs across servers but {free:,} are on servers it can reach "
                   f"({describe_unusable(unusable)})",
                   f"{path}.parallelism.num_gpus" if single else f"{path}.placement.gpus",
                   fix=unusable_fix(unusable))


def _of_job(problem: Problem, by_path: list[tuple[str, str]]) -> Problem:
    """The problem with the job it stops named (`job`): the job whose entry its path is under."""
    for path, name in by_path:
        if problem.path == path or problem.path.startswith(path + ".") or problem.path.startswith(path + "["):
            return dataclasses.replace(problem, job=name)
    return problem


def check_jobs(doc: Document, fabric: Fabric, catalog=None) -> list[Problem]:
    """Every job's placement and plan (for validate): the problems, each under its job."""
    from ..model.jobs import with_job_path

    placement = place_jobs(doc, fabric)
    problems = list(placement.problems)
    for job in placement.jobs:
        if doc.spec.jobs:
            _, found = check_job(job.spec.workload, job.spec.parallelism, len(job.gpus), catalog)
            problems += with_job_path(found, job.path, job.name)
    return problems


def _listed(doc, spec, path, node_index, node_start, fabric, owner, jobs, unusable):
    """The free GPUs of the servers (or racks) a job lists, in that order, or its problems."""
    problems = []
    ids = list(spec.placement.nodes)
    if spec.placement.racks:
        racks = set(spec.placement.racks)
        known = {r.id for r in doc.racks}
        for r in spec.placement.racks:
            if r not in known:
                problems.append(Problem(f"job {spec.name} lists rack {r!r}, which the design does not have",
                                        f"{path}.placement.racks", fix="name a rack of the design"))
        order = {r: k for k, r in enumerate(spec.placement.racks)}
        in_racks = [n for n in doc.nodes if n.rack in racks]
        in_racks.sort(key=lambda n: order[n.rack])
        ids += [n.id for n in in_racks]
    parts = []
    for nid in ids:
        ni = node_index.get(nid)
        if ni is None:
            problems.append(Problem(f"job {spec.name} lists server {nid!r}, which the design does not have",
                                    f"{path}.placement.nodes", fix="name a server of the design"))
            continue
        node = doc.nodes[ni]
        span = np.arange(node_start[ni], node_start[ni] + fabric.node_gpus[ni])
        if node.role != "compute":
            problems.append(Problem(
                f"job {spec.name} lists {nid}, a {node.role} host: no job runs there", f"{path}.placement.nodes",
                element=nid, fix=f"list a compute server for job {spec.name}, or set {nid}'s role to compute"))
            continue
        if node.state == "down":
            problems.append(Problem(
                f"job {spec.name} lost server {nid}: it is down ({len(span)} GPUs)", f"{path}.placement.nodes",
                element=nid, fix=f"list another server for job {spec.name}, or mark {nid} up"))
            continue
        if nid in unusable:
            fix = unusable_fix({nid: unusable[nid]}, fewer=False)
            problems.append(Problem(
                f"job {spec.name} lists server {nid}, which it cannot reach: {unusable[nid]}", f"{path}.placement.nodes",
                element=nid, fix=f"list another server for job {spec.name}, or {fix}"))
            continue
        taken = span[owner[span] >= 0]
        if taken.size:
            other = jobs[int(owner[taken[0]])].name
            problems.append(Problem(f"job {spec.name} lists server {nid}, whose GPUs job {other} already has",
                                    f"{path}.placement.nodes", element=nid,
                                    fix=f"give each server to one job: remove {nid} from one of them"))
            continue
        parts.append(span[owner[span] == -1])
    gpus = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    return gpus, problems


def _no_room(doc, spec, path, want, free, owner, jobs, up, single) -> Problem:
    down = int(np.sum(~up))
    if single:
        down_nodes = [n.id for n in doc.nodes if n.state == "down" or n.gpus_down]
        where = (f" ({', '.join(down_nodes[:4])}{' ...' if len(down_nodes) > 4 else ''} "
                 f"{'is' if len(down_nodes) == 1 else 'are'} down)") if down_nodes else ""
        return Problem(f"job {spec.name} needs {want:,} GPUs but {free:,} are up: it lost {want - free:,}{where}",
                       f"{path}.parallelism.num_gpus" if path == "spec" else f"{path}.placement.gpus",
                       fix="set parallelism.num_gpus to a smaller count the plan divides, or mark the servers up")
    holders = sorted({jobs[int(o)].name for o in owner[owner >= 0]})
    return Problem(
        f"job {spec.name} does not fit: it needs {want:,} GPUs, {free:,} are free"
        + (f" ({', '.join(holders)} hold the others" + (f", {down:,} are down" if down else "") + ")"
           if holders else (f" ({down:,} are down)" if down else "")),
        f"{path}.placement.gpus", fix="lower placement.gpus, shrink another job, or add servers")


def _node_pod(fabric: Fabric) -> np.ndarray:
    """Pod of each server (its first cabled NIC's leaf), -1 when it has none (kept on the fabric)."""
    pods = getattr(fabric, "_node_pod", None)
    if pods is None:
        pods = np.full(len(fabric.node_gpus), -1, dtype=np.int64)
        cabled = fabric.nic_leaf >= 0
        nodes = fabric.nic_node[cabled][::-1]  # reversed: the first NIC of each node is written last
        pods[nodes] = fabric.switch_pod[fabric.nic_leaf[cabled][::-1]]
        fabric._node_pod = pods
    return pods


def _node_leaf_group(fabric: Fabric) -> np.ndarray:
    """A number per server for the set of leaves its NICs reach (servers of one rail group share it)."""
    out = getattr(fabric, "_node_group", None)
    if out is None:
        groups: dict[tuple, int] = {}
        out = np.full(len(fabric.node_gpus), -1, dtype=np.int64)
        leaves = fabric.nic_leaf.tolist()
        for ni, (base, count) in enumerate(zip(fabric.node_nic_base.tolist(), fabric.node_nic_count.tolist())):
            out[ni] = groups.setdefault(tuple(sorted(set(leaves[base: base + count]))), len(groups))
        fabric._node_group = out
    return out


def _position_in_queue(queue: np.ndarray) -> np.ndarray:
    """For items already sorted by queue: their index inside their queue (0, 1, 2, ... per queue)."""
    if not len(queue):
        return queue
    starts = np.flatnonzero(np.r_[True, queue[1:] != queue[:-1]])
    first = np.repeat(starts, np.diff(np.r_[starts, len(queue)]))
    return np.arange(len(queue)) - first


def _by_policy(policy: str, want: int, owner: np.ndarray, fabric: Fabric) -> np.ndarray:
    """The `want` free GPUs `policy` picks, in rank order (servers in the policy's order)."""
    n_nodes = len(fabric.node_gpus)
    free = owner == -1
    free_per_node = np.bincount(fabric.gpu_node[free], minlength=n_nodes)
    cand = np.flatnonzero(free_per_node > 0)
    whole_mask = (free_per_node == fabric.node_gpus) & (free_per_node > 0)
    whole = cand[whole_mask[cand]]
    partial = cand[~whole_mask[cand]]
    if policy == "spread":  # round robin over pods, and inside each pod over its leaf groups
        pods, group = _node_pod(fabric), _node_leaf_group(fabric)

        def spread(nodes):
            if not len(nodes):
                return nodes
            by_queue = nodes[np.lexsort((nodes, group[nodes], pods[nodes]))]
            qkey = pods[by_queue] * (int(group.max(initial=0)) + 2) + group[by_queue]
            pos = _position_in_queue(qkey)
            # the k-th group of each pod: its rank among its pod's groups (pods take turns)
            pod_of_q = pods[by_queue]
            qid = np.cumsum(np.r_[True, qkey[1:] != qkey[:-1]]) - 1
            pod_start = np.r_[True, pod_of_q[1:] != pod_of_q[:-1]]
            rank_in_pod = qid - np.maximum.accumulate(np.where(pod_start, qid, 0))
            return by_queue[np.lexsort((pod_of_q, rank_in_pod, pos))]

        order = np.concatenate([spread(whole if len(whole) else cand), partial if len(whole) else partial[:0]])
    elif policy == "rail-aligned":
        group = _node_leaf_group(fabric)
        sizes = np.bincount(group[whole], free_per_node[whole], minlength=int(group.max(initial=0)) + 1)
        fits = np.flatnonzero(sizes >= want)
        if len(fits):  # the smallest group that holds the whole job keeps it on one set of leaves
            chosen = fits[np.argmin(sizes[fits])]
            key = np.where(group[whole] == chosen, 0, 1)
            order = whole[key == 0]
        else:
            order = whole[np.lexsort((whole, group[whole], -sizes[group[whole]]))]
        order = np.concatenate([order, np.setdiff1d(cand, order, assume_unique=True)])
    elif policy == "domain-aligned":
        first_gpu = np.r_[0, np.cumsum(fabric.node_gpus)[:-1]]
        domain = fabric.gpu_domain[first_gpu[cand]] if len(cand) else cand
        free_dom = np.bincount(domain, free_per_node[cand], minlength=int(domain.max(initial=0)) + 1)
        order = cand[np.lexsort((cand, domain, -free_dom[domain]))]
    else:  # packed
        pods = _node_pod(fabric)
        key = np.where(pods[cand] >= 0, pods[cand], 1 << 40)
        order = cand[np.lexsort((cand, key))]
    rank = np.full(n_nodes, n_nodes, dtype=np.int64)
    rank[order] = np.arange(len(order))
    gpus = np.flatnonzero(free & (rank[fabric.gpu_node] < n_nodes))
    gpus = gpus[np.argsort(rank[fabric.gpu_node[gpus]], kind="stable")]
    return gpus[:want]
