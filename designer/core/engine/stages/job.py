"""Stage 1: the job (workload + plan, checked) and the hardware it runs on."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...by_name import FieldValues
from ...model.catalog import Accelerator, Catalog
from ...model.document import Document
from ...model.job import (SHARDING_ZERO_STAGE, UNMODELLED_PARALLELISM_KEYS, UNMODELLED_WORKLOAD_KEYS,
                          Parallelism, Workload, resolve_workload)
from ...model.plan import ResolvedPlan, check_job, fp8_recipe_problems
from ...problems import DesignerError, Problem
from .. import flops as F
from ..calibration_check import check_calibration
from ..constants import AcceleratorConstants, accelerator_constants
from ..fabric import Fabric, require_routes
from ..placement import Placement


# Its __init__ and __eq__ written (core/by_name.FieldValues): dataclass would compile both at start.
@dataclass(repr=False, init=False, eq=False)
class Job:
    """The job the engine costs: its workload, model shape, parallelism and resolved plan."""
    workload: Workload
    shape: F.ModelShape
    parallelism: Parallelism
    plan: ResolvedPlan

    def __init__(self, workload: Workload, shape: F.ModelShape, parallelism: Parallelism,
                 plan: ResolvedPlan) -> None:
        self.workload, self.shape, self.parallelism, self.plan = workload, shape, parallelism, plan

    def __eq__(self, other):
        return _JOB_VALUES.equal(self, other)


_JOB_VALUES = FieldValues(Job)  # its __eq__


class Hardware:
    """What the job's GPUs are: a mixed cluster is costed as its first kind by name."""

    used_nodes: list[int]  # servers the job's GPUs are on
    accelerators: list[str]  # every kind among them, by name
    acc: Accelerator  # the kind every GPU is costed as
    ac: AcceleratorConstants
    nvls: bool  # NVLink SHARP usable on every server used
    gpu_domain: np.ndarray | None  # NVLink domain of each used GPU (its server, where servers share none)

    __slots__ = ("used_nodes", "accelerators", "acc", "ac", "nvls", "gpu_domain")

    def __init__(self, used_nodes: list[int], accelerators: list[str], acc: Accelerator, ac: AcceleratorConstants,
                 nvls: bool, gpu_domain: np.ndarray | None = None) -> None:
        self.used_nodes = used_nodes
        self.accelerators = accelerators
        self.acc = acc
        self.ac = ac
        self.nvls = nvls
        self.gpu_domain = gpu_domain


def resolve_job(doc: Document, catalog: Catalog, spec=None, num_gpus: int | None = None,
                accelerators: frozenset[str] | None = None) -> Job:
    """The job of `doc` (spec.workload + spec.parallelism), or `spec` (a JobSpec of spec.jobs) on
    `num_gpus` GPUs: its plan checked, its workload resolved. `accelerators`: the design's accelerator
    names, when the caller has them (design_accelerators; None: read from its servers)."""
    problems = check_calibration(doc.spec.calibration, catalog)
    workload = spec.workload if spec is not None else doc.spec.workload
    if workload is None:
        where = "spec.workload" if spec is None else "workload"
        problems.append(Problem("no workload to evaluate", where,
                                fix="add workload: {preset: llama3-8b} (or the model's keys), or pass --scenario"))
        raise DesignerError(problems)
    par = (spec.parallelism if spec is not None else doc.spec.parallelism) or Parallelism()
    cluster_gpus = doc.num_gpus() if num_gpus is None else num_gpus
    # resolved once for the plan's check, the recipe's and the job (an unknown preset: check_job says so)
    known = not workload.preset or catalog.resolve("models", workload.preset) is not None
    w = resolve_workload(workload, catalog.presets()) if known else None
    plan, plan_problems = check_job(workload, par, cluster_gpus, catalog, resolved=w)
    # (the recipe's checks read the design's own workload, also for a job of spec.jobs)
    problems += plan_problems + fp8_recipe_problems(doc, par, catalog, accelerators,
                                                    workload=w if spec is None else None)
    if problems:
        raise DesignerError(problems)
    return Job(w, F.ModelShape.of(w), par, plan)


def design_accelerators(fabric: Fabric) -> frozenset[str]:
    """The accelerator names of the design's servers, all of them (the fabric has one per server, in the
    design's order): kept with the fabric's list, which a rebuild makes anew."""
    names = fabric.node_accelerator
    return fabric.remembered("accelerator_names", (names,), lambda: frozenset(names))


def hardware(fabric: Fabric, num_gpus: int, calibration: dict, catalog: Catalog) -> Hardware:
    """The hardware of a job on the first `num_gpus` GPUs of `fabric`."""
    used_nodes = np.flatnonzero(np.bincount(fabric.gpu_node[:num_gpus])).tolist()  # sorted, each once
    # the catalog looked up once per accelerator model, not once per server
    names = {catalog.accelerator(a).name for a in set(map(fabric.node_accelerator.__getitem__, used_nodes))}
    acc = catalog.accelerator(sorted(names)[0])
    ac = accelerator_constants(acc, calibration, catalog)
    kinds = set(map(fabric.node_scale_up_kind.__getitem__, used_nodes))
    nvls = ac.nvls_supported and kinds <= {"nvswitch"}  # (every server used on NVSwitch)
    domains = fabric.gpu_domain[:num_gpus]
    return Hardware(used_nodes, sorted(names), acc, ac, nvls, domains)


def require_network(fabric: Fabric, hw: Hardware, num_gpus: int) -> None:
    """Bad input, not a silent answer: every GPU of a multi-server job must reach the others."""
    if len(hw.used_nodes) > 1:
        require_routes(fabric, np.arange(num_gpus), "this job")


def job_warnings(job: Job, hw: Hardware, placement: Placement, tp_spans_domains: bool = True) -> list[str]:
    """What the prediction approximates for this job (the memory stage may add its reason);
    `placement`: the plan's (Engine.placement, kept per rank layout); `tp_spans_domains` False: the TP
    groups are known to stay inside their NVLink domains (their GroupShape's spans_servers)."""
    warnings: list[str] = []
    acc = hw.acc
    if len(hw.accelerators) > 1:
        warnings.append("mixed accelerators: " + ", ".join(hw.accelerators) + f"; every GPU is costed as {acc.name}")
    if job.parallelism.pipeline_schedule == "dualpipe":
        warnings.append("dualpipe is costed with the zb-h1 timeline (its two mirrored pipelines are not "
                        "simulated); memory counts its two model copies")
    if job.shape.precision == "fp4" and not acc.measured_gemm_tflops.get("fp4"):
        warnings.append(f"no FP4 GEMM benchmark of {acc.name} is published: its FP4 GEMMs are costed at the share "
                        "of peak its FP8 GEMMs reach (fp4_gemm_share_of_fp8)")
    if job.shape.precision == "fp8" and acc.peak_tflops.get("fp8", 0) <= acc.peak_tflops.get("bf16", 0):
        warnings.append(f"{acc.name} has no FP8 tensor cores: fp8 runs at the 16-bit rate")
    if job.parallelism.fp8_format and job.shape.precision != "fp8":
        warnings.append(f"parallelism.fp8_format is {job.parallelism.fp8_format} but the workload's precision is "
                        f"{job.shape.precision}: costed in {job.shape.precision} (set workload precision: fp8)")
    if tp_spans_domains:
        warnings += _tp_domain_warnings(job, hw, placement)
    warnings += _unmodelled_key_warnings(job)
    par = job.parallelism
    if job.shape.experts and not par.moe_router_force_load_balancing and par.moe_router_load_balancing_type == "none" \
            and not par.moe_router_enable_expert_bias:
        warnings.append("moe_router_load_balancing_type none: the expert load is costed as uneven as with an "
                        "auxiliary loss, a lower bound for a router left unbalanced")
    return warnings


def _unmodelled_key_warnings(job: Job) -> list[str]:
    """Keys of the 2025-26 recipes the file may hold but the engine does not cost yet: say which."""
    def set_on(obj, key):
        value = getattr(obj, key)
        return value not in (None, False, 0, "none", "no_shard", [])

    par = job.parallelism
    # Megatron-FSDP's sharding is costed as the ZeRO stage it equals, when zero_stage says that stage.
    fsdp_costed = (par.data_parallel_sharding_strategy in (None, "no_shard")
                   or SHARDING_ZERO_STAGE[par.data_parallel_sharding_strategy] == par.zero_stage)
    if par.use_megatron_fsdp and par.zero_stage != 3 and par.data_parallel_sharding_strategy is None:
        fsdp_costed = False
    costed = {"use_megatron_fsdp", "data_parallel_sharding_strategy"} if fsdp_costed else set()
    keys = [k for k in UNMODELLED_WORKLOAD_KEYS if set_on(job.workload, k)]
    keys += [k for k in UNMODELLED_PARALLELISM_KEYS if set_on(par, k) and k not in costed]
    return ["accepted, not modelled: " + ", ".join(keys)] if keys else []


def _tp_domain_warnings(job: Job, hw: Hardware, placement: Placement) -> list[str]:
    """A TP group across NVLink domains is allowed, but its traffic goes over the NICs: say so."""
    if hw.gpu_domain is None or job.plan.tp < 2:
        return []
    groups = placement.groups("tp")
    domains = hw.gpu_domain[groups]
    if (domains == domains[:, :1]).all():  # every group inside one domain (the usual plan)
        return []
    spans = (np.diff(np.sort(domains, axis=1), axis=1) != 0).sum(axis=1) + 1
    most = int(spans.max())
    if most < 2:
        return []
    count = "two" if most == 2 else str(most)
    largest = int(np.bincount(hw.gpu_domain).max())
    inside = max((t for t in range(1, largest + 1) if job.plan.tp % t == 0 and largest % t == 0), default=1)
    return [f"TP {job.plan.tp} spans {count} NVLink domains of {largest} GPUs: its traffic goes over the NICs "
            f"(TP {inside} keeps each group inside one)"]
