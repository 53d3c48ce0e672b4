"""Several training jobs on one cluster: `spec.jobs`, each a workload, a plan and a placement.

A file without `spec.jobs` holds one job, its `spec.workload` + `spec.parallelism`, named after
the design and placed on the first GPUs that are up (today's meaning, unchanged). With
`spec.jobs` every entry is a job of its own; `spec.workload`/`spec.parallelism` then play no part.
Where a job's GPUs come from is its `placement`: listed servers or racks, or a policy that
picks them with the fabric in mind (engine/job_placement.py).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..by_name import NEW, compared_by_value
from .job import MAX_GPUS, Parallelism, Workload
from .spec import spec_field

# packed: fill pods and racks in order; spread: balance the job over the pods; rail-aligned: whole
# servers, so every rank keeps its rail (NIC k to rail leaf k); domain-aligned: whole NVLink domains
# first, so TP and EP groups stay inside one.
PLACEMENT_POLICIES = ("packed", "spread", "rail-aligned", "domain-aligned")


# Its __init__ written and its __eq__ and __repr__ from core/by_name.py, not compiled at start (so JobSpec's).
@compared_by_value
@dataclass(init=False, eq=False, repr=False)
class JobPlacement:
    """Where one job of `spec.jobs` runs: listed servers or racks, or a placer policy and GPU count."""
    nodes: list[str] = spec_field(doc="Servers the job runs on, in rank order (ids)", factory=list)
    racks: list[str] = spec_field(doc="Racks whose servers the job runs on, in rank order (ids)", factory=list)
    policy: str = spec_field("packed", doc="How the placer picks GPUs when no servers or racks are listed",
                             enum=PLACEMENT_POLICIES)
    gpus: int | None = spec_field(None, doc="GPUs the job gets (default: its parallelism's num_gpus, or all "
                                            "GPUs of the listed servers)", minimum=1, maximum=MAX_GPUS)

    def __init__(self, nodes: list[str] = NEW, racks: list[str] = NEW, policy: str = "packed",
                 gpus: int | None = None) -> None:
        self.nodes = [] if nodes is NEW else nodes
        self.racks = [] if racks is NEW else racks
        self.policy = policy
        self.gpus = gpus


@compared_by_value
@dataclass(init=False, eq=False, repr=False)
class JobSpec:
    """One job of a cluster shared by several: its name, workload, parallelism and placement."""
    name: str = spec_field(doc="Name of the job (unique in the file)")
    workload: Workload | None = spec_field(None, doc="The model and batch, as spec.workload")
    parallelism: Parallelism | None = spec_field(None, doc="The plan, as spec.parallelism")
    placement: JobPlacement = spec_field(doc="Where the job runs", factory=JobPlacement)

    def __init__(self, name: str, workload: Workload | None = None, parallelism: Parallelism | None = None,
                 placement: JobPlacement = NEW) -> None:
        self.name = name
        self.workload = workload
        self.parallelism = parallelism
        self.placement = JobPlacement() if placement is NEW else placement


def document_jobs(doc) -> list[JobSpec]:
    """The jobs of a design: spec.jobs, or the one job of spec.workload + spec.parallelism."""
    if doc.spec.jobs:
        return list(doc.spec.jobs)
    par = doc.spec.parallelism or Parallelism()
    return [JobSpec(name=doc.metadata.name or "job", workload=doc.spec.workload, parallelism=par,
                    placement=JobPlacement(gpus=par.num_gpus))]


def asked_gpus(doc, job: JobSpec) -> int | None:
    """GPUs a job asks for: placement.gpus, else its parallelism's num_gpus, else all GPUs of the servers
    (and racks) it lists; None when it says none of these."""
    if job.placement.gpus:
        return job.placement.gpus
    if job.parallelism is not None and job.parallelism.num_gpus:
        return job.parallelism.num_gpus
    listed = set(job.placement.nodes)
    racks = set(job.placement.racks)
    return sum(n.accelerator_count for n in doc.nodes if n.id in listed or n.rack in racks) or None


def job_index(doc, name: str | None) -> int:
    """The position in spec.jobs of the job named `name` (None: the first); DesignerError naming the
    jobs there are when there is no such job."""
    from ..problems import DesignerError, Problem

    names = [j.name for j in doc.spec.jobs]
    if name is None:
        return 0
    if name not in names:
        raise DesignerError([Problem(f"no job named {name!r}", "--job", fix="one of: " + ", ".join(names))])
    return names.index(name)


def job_path(doc, index: int) -> str:
    """Where a job's keys live in the file (for problems): spec.jobs[i] or spec."""
    return f"spec.jobs[{index}]" if doc.spec.jobs else "spec"


def with_job_path(problems, prefix: str, job_name: str | None):
    """The problems of one job's check, placed under its entry and named after it."""
    out = []
    for p in problems:
        path = p.path
        if prefix != "spec" and path.startswith("spec."):
            path = prefix + path[len("spec"):]
        message = f"job {job_name}: {p.message}" if job_name else p.message
        out.append(dataclasses.replace(p, path=path, message=message, job=job_name or p.job))
    return out


def job_alone(doc, name: str | None = None):
    """A copy of a design with several jobs that holds only one of them (`name`, default the first)
    as its spec.workload + spec.parallelism, on as many GPUs as the job asks for: what the plan-level
    commands (advise, search, scale) work on. The other jobs and the placement are left out."""
    import copy

    job = doc.spec.jobs[job_index(doc, name)]
    gpus = asked_gpus(doc, job)
    out = doc.copy()
    par = copy.deepcopy(job.parallelism) or Parallelism()
    if gpus and gpus != doc.num_gpus():
        par.num_gpus = gpus
    out.spec.workload, out.spec.parallelism, out.spec.jobs = copy.deepcopy(job.workload), par, []
    return out, job.name
