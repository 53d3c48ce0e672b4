"""The parallel plan checked against the model and the cluster, with valid alternatives.

Megatron-LM's own rules: world = TP x CP x PP x DP; EP x ETP divides TP x CP x DP; TP
divides the attention heads and the KV groups; PP (x virtual stages) divides the layers;
micro-batch x DP divides the global batch; the interleaved schedule needs a number of
micro-batches that is a multiple of PP.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..by_name import FieldValues, Frozen
from ..problems import Problem
from .catalog import Catalog, default_catalog
from . import suggestions
from .job import (MAX_MICROBATCHES, REQUIRED_WORKLOAD_KEYS, Parallelism, Workload, parse_rank_order,
                  resolve_workload)
from .jobs import asked_gpus, with_job_path
from .design_tallies import DesignTallies
from .network_reach import describe_unusable, unusable_fix
from .suggestions import divisors
from .pipeline_split import SplitError, split_layers, split_options


# Its __init__, __eq__ and __hash__ written, frozen through core/by_name.Frozen: dataclass would compile
# five methods at every start.
@dataclass(repr=False, init=False, eq=False)
class ResolvedPlan(Frozen):
    """Sizes of every dimension, all known (DP derived)."""

    num_gpus: int
    tp: int
    pp: int
    cp: int
    ep: int
    etp: int
    dp: int
    vp: int  # model chunks per stage (1 unless interleaved)
    num_microbatches: int
    rank_order: tuple[str, ...]

    def __init__(self, num_gpus: int, tp: int, pp: int, cp: int, ep: int, etp: int, dp: int, vp: int,
                 num_microbatches: int, rank_order: tuple[str, ...]) -> None:
        vars(self).update(num_gpus=num_gpus, tp=tp, pp=pp, cp=cp, ep=ep, etp=etp, dp=dp, vp=vp,
                          num_microbatches=num_microbatches, rank_order=rank_order)

    def rank_layout(self) -> "ResolvedPlan":
        """This plan with what moves no rank left out (virtual stages 1, no micro-batches): the key of
        its placement, groups and routes, which plans that differ only in those share."""
        return ResolvedPlan(self.num_gpus, self.tp, self.pp, self.cp, self.ep, self.etp, self.dp, 1, 0, self.rank_order)

    def __eq__(self, other):
        return _RESOLVED_PLAN_VALUES.equal(self, other)

    def __hash__(self):
        return _RESOLVED_PLAN_VALUES.hash(self)


_RESOLVED_PLAN_VALUES = FieldValues(ResolvedPlan)  # its __eq__ and __hash__


def nearest(value: int, candidates) -> list[int]:
    """Up to two valid values closest to `value` (below and above)."""
    cands = sorted(set(candidates))
    cands = [c for c in cands if suggestions.is_plausible(c)] or cands  # 24 before 43
    below = [c for c in cands if c < value]
    above = [c for c in cands if c > value]
    out = ([below[-1]] if below else []) + ([above[0]] if above else [])
    return out or cands[:1]


def _alts(value: int, candidates) -> str:
    options = nearest(value, candidates)
    return "try " + " or ".join(str(o) for o in options) if options else "no valid value"


P = "spec.parallelism."
W = "spec.workload."


def check_plan(doc, catalog: Catalog | None = None, tallies: DesignTallies | None = None) -> list[Problem]:
    """Problems of the job on this cluster; [] when there is no job or it is consistent. `tallies`: the
    cluster's figures the check reads, kept up to date by the live checker (None: read the design)."""
    spec = doc.spec
    if not spec.jobs and spec.workload is None and spec.parallelism is None:
        return []
    tallies = DesignTallies(doc) if tallies is None else tallies
    if spec.jobs:  # several jobs: each checked on its own GPUs
        return check_jobs(doc, catalog, tallies)
    problems = check_job(spec.workload, spec.parallelism, tallies.num_gpus, catalog)[1]
    asked = (spec.parallelism.num_gpus if spec.parallelism is not None else 0) or tallies.num_gpus
    where = "spec.parallelism.num_gpus" if spec.parallelism is not None and spec.parallelism.num_gpus \
        else "spec.parallelism"
    problems += reach_problems(doc, tallies, [asked], where)
    return problems + fp8_recipe_problems(doc, spec.parallelism, catalog or default_catalog(), tallies.accelerators)


def jobs_reach_problems(doc, tallies: DesignTallies) -> list[Problem]:
    """reach_problems for spec.jobs: a job larger than one server that lists a server it cannot reach
    is named with that server; the jobs placed by policy must fit on the servers left."""
    one_server = tallies.one_server
    asked = [asked_gpus(doc, job) or 0 for job in doc.spec.jobs]
    if not any(a > one_server for a in asked):
        return []
    unusable = tallies.unusable(doc)
    if not unusable:
        return []
    problems, listed_gpus, by_policy = [], 0, []
    rack_of = {n.id: n.rack for n in doc.nodes}
    for i, (job, gpus) in enumerate(zip(doc.spec.jobs, asked)):
        servers = list(job.placement.nodes) + [n for n, r in rack_of.items() if r in set(job.placement.racks)]
        if not servers:
            by_policy.append(gpus)
            continue
        gpu_count = {n.id: max(0, n.accelerator_count - n.gpus_down) for n in doc.nodes}
        listed_gpus += min(gpus, sum(gpu_count.get(n, 0) for n in servers if n not in unusable))  # theirs
        if gpus <= one_server:
            continue
        for nid in [n for n in servers if n in unusable][:3]:
            problems.append(Problem(f"job {job.name} lists server {nid}, which it cannot reach: {unusable[nid]}",
                                    f"spec.jobs[{i}].placement.nodes", element=nid, job=job.name,
                                    fix=f"list another server for job {job.name}, or "
                                        + unusable_fix({nid: unusable[nid]}, fewer=False)))
    return problems + reach_problems(doc, tallies, by_policy, "spec.jobs", listed_gpus)


def reach_problems(doc, tallies: DesignTallies, asked: list[int], where: str, taken: int = 0) -> list[Problem]:
    """The jobs larger than one server (GPU counts `asked`) do not fit on the servers they can reach:
    the placer (engine/job_placement.py) skips servers that elements marked down cut off and servers
    with a GPU whose NIC is not cabled (network_reach.unusable_servers), and refuses those jobs."""
    spanning = sum(a for a in asked if a > tallies.one_server)
    if not spanning:
        return []
    unusable = tallies.unusable(doc)
    if not unusable:
        return []
    up_per_node = tallies.up_per_node(doc)
    usable = tallies.gpus_up(doc) - sum(up for node, up in zip(doc.nodes, up_per_node) if node.id in unusable) - taken
    if spanning <= usable:
        return []
    said = (f"the job needs {spanning:,} GPUs across servers but {usable:,} are on servers it can reach"
            if len(asked) == 1 else
            f"the jobs larger than one server need {spanning:,} GPUs but {usable:,} are on servers they can reach")
    return [Problem(f"{said} ({describe_unusable(unusable)})", where, fix=unusable_fix(unusable))]


def check_jobs(doc, catalog=None, tallies: DesignTallies | None = None) -> list:
    """The jobs of spec.jobs as a user can fix them without the engine: names, servers and racks that
    exist, a GPU count, each job's plan on its GPUs, and that the jobs fit in the GPUs that are up
    (which GPUs each gets is the placer's: engine/job_placement.py)."""
    tallies = DesignTallies(doc) if tallies is None else tallies
    problems: list = []
    nodes, racks = tallies.node_ids, tallies.rack_ids
    seen: dict[str, int] = {}
    asked = 0
    for i, job in enumerate(doc.spec.jobs):
        path = f"spec.jobs[{i}]"
        if job.name in seen:
            problems.append(Problem(f"two jobs are named {job.name!r} (jobs {seen[job.name]} and {i})", f"{path}.name",
                                    fix="give each job its own name"))
        seen.setdefault(job.name, i)
        listed = [n for n in job.placement.nodes if n not in nodes]
        for nid in listed[:3]:
            problems.append(Problem(f"job {job.name} lists server {nid!r}, which the design does not have",
                                    f"{path}.placement.nodes", fix="name a server of the design"))
        for rid in [r for r in job.placement.racks if r not in racks][:3]:
            problems.append(Problem(f"job {job.name} lists rack {rid!r}, which the design does not have",
                                    f"{path}.placement.racks", fix="name a rack of the design"))
        gpus = asked_gpus(doc, job)
        if not gpus:
            problems.append(Problem(f"job {job.name} does not say how many GPUs it needs", f"{path}.placement.gpus",
                                    fix="set placement.gpus (or parallelism.num_gpus), or list its servers"))
            continue
        asked += gpus
        if job.workload is None:
            problems.append(Problem(f"job {job.name} has no workload", f"{path}.workload",
                                    fix="add workload: {preset: llama3-8b} (or the model's keys)"))
            continue
        _, found = check_job(job.workload, job.parallelism, gpus, catalog)
        problems += with_job_path(found, path, job.name)
    up = tallies.gpus_up(doc)
    if asked > up:
        problems.append(Problem(f"the jobs ask for {asked:,} GPUs but the design has {up:,} that are up",
                                "spec.jobs", fix="shrink or remove a job, add servers, or mark servers up"))
    else:
        problems += jobs_reach_problems(doc, tallies)
    for i in tallies.overdrawn(doc):
        node = doc.nodes[i]
        problems.append(Problem(f"server {node.id} has {node.gpus_down} GPUs down but only "
                                f"{node.accelerator_count}", f"spec.nodes[{i}].gpus_down", element=node.id,
                                fix=f"set gpus_down to at most {node.accelerator_count}"))
    return problems


# Megatron-LM --recompute-modules (transformer_config.py)
RECOMPUTE_MODULES = ("core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts")

# The tensor format each Transformer Engine recipe needs (Megatron --fp8-recipe): block scaling of
# 1x128 / 128x128 tiles and per-tensor scaling run on plain FP8 tensor cores; MXFP8 needs Blackwell's.
RECIPE_FORMAT = {"delayed": "fp8", "tensorwise": "fp8", "blockwise": "fp8", "mxfp8": "mxfp8"}


FP4_RECIPE_FORMAT = {"nvfp4": "nvfp4", "mxfp4": "mxfp4"}


def known_accelerators(names, catalog: Catalog) -> list:
    """The catalog's accelerators the servers name, each once (a part named by its alias and by its
    full name is one part), in order of the names; unknown names are left to the cluster checks."""
    parts = {}
    for name in sorted(names):
        if catalog.resolve("accelerators", name) is not None:
            acc = catalog.accelerator(name)
            parts.setdefault(acc.name, acc)
    return list(parts.values())


def fp8_recipe_problems(doc, parallelism: Parallelism | None, catalog: Catalog,
                        accelerators: frozenset[str] | None = None,
                        workload: Workload | None = None) -> list[Problem]:
    """An FP8 or FP4 recipe the job's accelerators cannot run (MXFP8 on H100, NVFP4 on anything
    before Blackwell): refused, with what they can run. `accelerators`: the design's accelerator
    names (None: read from its servers); `workload`: the design's workload resolved, when the
    caller has it (None: resolved here)."""
    names = {n.accelerator for n in doc.nodes} if accelerators is None else accelerators
    problems = (fp4_problems(doc, parallelism, catalog, names, workload)
                + fp8_attention_problems(doc, parallelism, catalog, names, workload))
    recipe = parallelism.fp8_recipe if parallelism else None
    if not recipe:
        return problems
    for acc in known_accelerators(names, catalog):
        if acc.supports(RECIPE_FORMAT[recipe]):
            continue
        usable = [r for r, fmt in RECIPE_FORMAT.items() if acc.supports(fmt)]
        fix = (f"use fp8_recipe: {usable[0]} ({', '.join(usable)} run on {acc.name})" if usable
               else f"{acc.name} has no FP8 tensor cores: remove fp8_recipe and use precision: bf16")
        problems.append(Problem(f"fp8_recipe {recipe} needs {RECIPE_FORMAT[recipe]} tensor cores, which "
                                f"{acc.name} does not have", "spec.parallelism.fp8_recipe", fix=fix))
    return problems


def fp8_attention_problems(doc, parallelism: Parallelism | None, catalog: Catalog, names: set[str],
                           workload: Workload | None = None) -> list[Problem]:
    """FP8 attention with a learnable or off-by-one softmax: cuDNN's FP8 fused attention takes one only
    in its Blackwell path (cuDNN 9.21+, compute capability 10.x, the parts with MXFP8 tensor cores);
    on Hopper Transformer Engine finds no FP8 attention kernel for it (its unfused path has no FP8)."""
    if not (parallelism and parallelism.fp8_dot_product_attention):
        return []
    try:
        workload = workload if workload is not None else resolved_workload(doc, catalog)
    except Exception:  # an unresolvable workload is reported by check_job
        return []
    if workload is None or (workload.softmax_type or "vanilla") == "vanilla":
        return []
    problems = []
    for acc in known_accelerators(names, catalog):
        if not acc.supports("mxfp8"):
            problems.append(Problem(f"fp8_dot_product_attention with softmax_type {workload.softmax_type} has no FP8 "
                                    f"attention kernel on {acc.name} (cuDNN runs it in FP8 only on Blackwell)",
                                    "spec.parallelism.fp8_dot_product_attention",
                                    fix="set fp8_dot_product_attention: false (attention in BF16)"))
    return problems


def fp4_problems(doc, parallelism: Parallelism | None, catalog: Catalog, names: set[str],
                 workload: Workload | None = None) -> list[Problem]:
    try:
        workload = workload if workload is not None else resolved_workload(doc, catalog)
    except Exception:  # an unresolvable workload is reported by check_job
        return []
    if workload is None or workload.precision != "fp4":
        return []
    recipe = (parallelism.fp4_recipe if parallelism else None) or "nvfp4"
    problems = []
    for acc in known_accelerators(names, catalog):
        if acc.supports(FP4_RECIPE_FORMAT[recipe]) and "fp4" in acc.peak_tflops:
            continue
        usable = [r for r, fmt in FP4_RECIPE_FORMAT.items() if acc.supports(fmt)]
        if usable and "fp4" in acc.peak_tflops:
            problems.append(Problem(f"fp4_recipe {recipe} needs {recipe} tensor cores, which {acc.name} does not "
                                    f"have", "spec.parallelism.fp4_recipe", fix=f"use fp4_recipe: {usable[0]}"))
        else:
            fix = "use precision: fp8" if acc.supports("fp8") else "use precision: bf16"
            problems.append(Problem(f"precision fp4 needs FP4 tensor cores, which {acc.name} does not have",
                                    "spec.workload.precision", fix=fix))
    return problems


Vary = dict[str, tuple[int, list[int]]]  # field: (its value, the values a suggestion tries)


class _Finding:
    """A problem of the plan; `rule` and `vary` when other values of some fields could fix it (the
    suggestions try them, see _suggested_fix)."""

    problem: Problem
    rule: str | None
    vary: Vary | None

    __slots__ = ("problem", "rule", "vary")

    def __init__(self, problem: Problem, rule: str | None = None, vary: Vary | None = None) -> None:
        self.problem = problem
        self.rule = rule
        self.vary = vary


def _bad(path: str, message: str, fix: str | None = None, rule: str | None = None,
         vary: Vary | None = None) -> _Finding:
    return _Finding(Problem(message, path, fix=fix), rule, vary)


class _Sizes:
    """The plan's dimensions as given; DP derived (None when TP x PP x CP does not divide the GPUs)."""

    num_gpus: int
    tp: int
    pp: int
    cp: int
    ep: int
    etp: int
    dp: int | None
    # Rules that depend on the GPU count can also be met by running the job on fewer GPUs than the
    # cluster has: the fix after a server was added to a design sized for 1024 GPUs.
    whole_cluster: Vary

    __slots__ = ("num_gpus", "tp", "pp", "cp", "ep", "etp", "dp", "whole_cluster")

    def __init__(self, num_gpus: int, tp: int, pp: int, cp: int, ep: int, etp: int, dp: int | None,
                 whole_cluster: Vary) -> None:
        self.num_gpus = num_gpus
        self.tp = tp
        self.pp = pp
        self.cp = cp
        self.ep = ep
        self.etp = etp
        self.dp = dp
        self.whole_cluster = whole_cluster

    @property
    def model_parallel(self) -> int:
        return self.tp * self.pp * self.cp


def check_job(workload: Workload | None, parallelism: Parallelism | None, cluster_gpus: int,
              catalog: Catalog | None = None, suggest: bool = True,
              resolved: Workload | None = None) -> tuple[ResolvedPlan | None, list[Problem]]:
    """The resolved plan (None when impossible) and its problems.

    With `suggest`, a problem's fix names values that were tried and make the plan valid
    (see suggestions.py); without it (the tries themselves) the fix is the bare rule.
    `resolved`: `workload` through resolve_workload, when the caller has it (an evaluation needs
    it too: resolved once per plan).
    """
    catalog = catalog or default_catalog()
    found = _recompute_findings(parallelism)
    par = parallelism or Parallelism()
    w, workload_found = _complete_workload(workload, catalog, resolved)
    found += workload_found
    if w is None:
        return None, [f.problem for f in found]
    order = parse_rank_order(par.rank_order)
    if order is None:
        found.append(_bad(P + "rank_order", f"{par.rank_order!r} is not an order of tp, cp, ep, dp, pp",
                          "e.g. tp-cp-ep-dp-pp (Megatron's default)"))
    sizes, sizes_found = _plan_sizes(par, cluster_gpus)
    found += sizes_found
    if sizes is None:
        return None, [f.problem for f in found]
    found += _head_findings(w, sizes.tp)
    vp, pipeline_found = _pipeline_findings(w, par, sizes.pp)
    found += pipeline_found
    found += _sequence_findings(w, par, sizes.tp, sizes.cp)
    found += _expert_findings(w, sizes)
    if par.zero_stage and par.use_distributed_optimizer:
        found.append(_bad(P + "zero_stage", "ZeRO stage and the distributed optimizer both shard optimizer states",
                          "use one of them (the distributed optimizer is ZeRO-1)"))
    n_micro, batch_found = _batch_findings(w, par, sizes)
    found += batch_found
    problems = [f.problem for f in found]
    if suggest:
        for f in found:
            if f.rule and f.vary:
                f.problem.fix = _suggested_fix(workload, par, cluster_gpus, catalog, len(problems), f.rule, f.vary,
                                               sizes.model_parallel, f.problem.fix)
    if problems or sizes.dp is None:
        return None, problems
    s = sizes
    return ResolvedPlan(s.num_gpus, s.tp, s.pp, s.cp, s.ep, s.etp, s.dp, vp, n_micro, tuple(order)), problems


def _recompute_findings(parallelism: Parallelism | None) -> list[_Finding]:
    return [_bad("spec.parallelism.recompute_modules", f"{module!r} is not a module Megatron recomputes",
                 fix="use some of " + ", ".join(RECOMPUTE_MODULES))
            for module in ((parallelism.recompute_modules or []) if parallelism else [])
            if module not in RECOMPUTE_MODULES]


def _complete_workload(workload: Workload | None, catalog: Catalog,
                       resolved: Workload | None = None) -> tuple[Workload | None, list[_Finding]]:
    """The workload with its preset's values filled in; None when there is none, its preset is
    unknown or a key the engine needs is missing."""
    if workload is None:
        return None, [_bad("spec.workload", "a plan without a workload",
                           "add workload: with a preset or the model's keys")]
    if workload.preset and catalog.resolve("models", workload.preset) is None:
        return None, [_bad(W + "preset", f"unknown model preset {workload.preset!r}",
                           catalog.suggest("models", workload.preset))]
    w = resolved if resolved is not None else resolve_workload(workload, catalog.presets())
    missing = [_bad(W + key, "missing", "set it, or name a preset (e.g. preset: llama3-8b)")
               for key in REQUIRED_WORKLOAD_KEYS if getattr(w, key) is None]
    return (None if missing else w), missing


def _plan_sizes(par: Parallelism, cluster_gpus: int) -> tuple[_Sizes | None, list[_Finding]]:
    """The GPU count and the dimensions, DP derived from them; None when there are no GPUs."""
    found = []
    num_gpus = par.num_gpus or cluster_gpus
    if par.num_gpus and par.num_gpus > cluster_gpus:
        found.append(_bad(P + "num_gpus", f"{par.num_gpus} GPUs asked, the cluster has {cluster_gpus}",
                          f"use at most {cluster_gpus}, or add servers"))
    if num_gpus <= 0:
        found.append(_bad(P + "num_gpus", "the cluster has no accelerators", "add servers"))
        return None, found
    whole_cluster = {"num_gpus": (num_gpus, [])} if not par.num_gpus or par.num_gpus == cluster_gpus else {}
    tp, pp, cp = par.tensor_model_parallel_size, par.pipeline_model_parallel_size, par.context_parallel_size
    model_parallel = tp * pp * cp
    dp = None
    if num_gpus % model_parallel:
        gpus = divisors(num_gpus)
        vary = {"tensor_model_parallel_size": (tp, gpus), "pipeline_model_parallel_size": (pp, gpus)}
        if cp > 1:
            vary["context_parallel_size"] = (cp, gpus)
        vary.update(whole_cluster)
        found.append(_bad(P + "tensor_model_parallel_size",
                          f"TP x PP x CP = {tp} x {pp} x {cp} = {model_parallel} does not divide the {num_gpus} GPUs",
                          f"TP × PP × CP must divide {num_gpus}: {_alts(model_parallel, divisors(num_gpus))}",
                          rule=f"TP × PP × CP must divide {num_gpus}", vary=vary))
    else:
        dp = num_gpus // model_parallel
        if par.data_parallel_size is not None and par.data_parallel_size != dp:
            found.append(_bad(P + "data_parallel_size",
                              f"{par.data_parallel_size} given, but {num_gpus} GPUs / (TP {tp} x PP {pp} x CP {cp}) "
                              f"= {dp}", f"set it to {dp} or leave it out"))
    etp = par.expert_tensor_parallel_size or tp
    return _Sizes(num_gpus, tp, pp, cp, par.expert_model_parallel_size, etp, dp, whole_cluster), found


def _head_findings(w: Workload, tp: int) -> list[_Finding]:
    """TP splits the attention heads and the KV groups; the head size comes from the hidden size."""
    found = []
    heads, groups = w.num_attention_heads, w.num_query_groups or w.num_attention_heads
    if heads % tp:
        found.append(_bad(P + "tensor_model_parallel_size", f"TP {tp} does not divide the {heads} attention heads",
                          _alts(tp, divisors(heads)), rule=f"TP must divide the {heads} heads",
                          vary={"tensor_model_parallel_size": (tp, divisors(heads))}))
    elif groups % tp and tp % groups:
        found.append(_bad(P + "tensor_model_parallel_size",
                          f"TP {tp} and the {groups} KV groups (num_query_groups) do not divide",
                          _alts(tp, divisors(groups)), rule=f"TP and the {groups} KV groups must divide one another",
                          vary={"tensor_model_parallel_size": (tp, divisors(groups) + [groups * k
                                                                                for k in (2, 4, 8)])}))
    if w.hidden_size % heads and w.kv_channels is None:
        found.append(_bad(W + "hidden_size", f"{w.hidden_size} is not a multiple of the {heads} heads",
                          "set kv_channels"))
    return found


def _pipeline_findings(w: Workload, par: Parallelism, pp: int) -> tuple[int, list[_Finding]]:
    """The model chunks per stage (VP) and the problems of the schedule and of the layers' split."""
    found = []
    vp = 1
    if par.pipeline_schedule == "interleaved":
        vp = par.virtual_pipeline_model_parallel_size or 1
        if pp == 1:
            found.append(_bad(P + "pipeline_schedule", "the interleaved schedule needs PP > 1",
                              "use 1f1b, or raise PP"))
        if vp < 2:
            found.append(_bad(P + "virtual_pipeline_model_parallel_size",
                              "the interleaved schedule needs 2 or more model chunks",
                              "set virtual_pipeline_model_parallel_size: 2 (or more)"))
    elif par.virtual_pipeline_model_parallel_size not in (None, 1):
        found.append(_bad(P + "virtual_pipeline_model_parallel_size",
                          f"virtual stages are only used by the interleaved schedule, not {par.pipeline_schedule}",
                          "set pipeline_schedule: interleaved, or remove it"))
    uneven = (par.account_for_embedding_in_pipeline_split or par.account_for_loss_in_pipeline_split
              or par.decoder_first_pipeline_num_layers is not None
              or par.decoder_last_pipeline_num_layers is not None or par.pipeline_model_parallel_layout)
    if uneven:  # Megatron-LM's uneven split: its own rules and reasons (pipeline_split.py)
        try:
            split_layers(w.num_layers, pp, vp, **split_options(par))
        except SplitError as e:
            found.append(_bad(P + e.key, e.reason, e.fix))
    elif w.num_layers % (pp * vp):
        found.append(_even_split_finding(w.num_layers, pp, vp))
    return vp, found


def _even_split_finding(layers: int, pp: int, vp: int) -> _Finding:
    """PP x VP stages that do not divide the layers (an even split)."""
    alt = (f"; or set account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split "
           f"({layers} + 2 layers)" if (layers + 2) % (pp * vp) == 0 else "")
    if vp == 1:
        return _bad(P + "pipeline_model_parallel_size", f"PP {pp} does not divide the {layers} layers{alt}",
                    _alts(pp, divisors(layers)), rule=f"PP must divide the {layers} layers",
                    vary={"pipeline_model_parallel_size": (pp, divisors(layers))})
    return _bad(P + "virtual_pipeline_model_parallel_size",
                f"PP {pp} x {vp} virtual stages = {pp * vp} does not divide the {layers} layers{alt}",
                f"PP x virtual must divide {layers}: {_alts(pp * vp, divisors(layers))}",
                rule=f"PP × virtual stages must divide the {layers} layers",
                vary={"virtual_pipeline_model_parallel_size": (vp, [d for d in divisors(layers) if d > 1]),
                      "pipeline_model_parallel_size": (pp, divisors(layers))})


def _sequence_findings(w: Workload, par: Parallelism, tp: int, cp: int) -> list[_Finding]:
    """Context parallelism and sequence parallelism split the sequence."""
    found = []
    if cp > 1 and w.seq_length % (2 * cp):
        found.append(_bad(P + "context_parallel_size",
                          f"CP {cp} needs the sequence ({w.seq_length}) to divide by 2 x CP",
                          _alts(cp, [d for d in divisors(w.seq_length // 2 or 1)]),
                          rule=f"2 × CP must divide {w.seq_length}",
                          vary={"context_parallel_size": (cp, divisors(w.seq_length // 2 or 1))}))
    if cp > 1 and (w.softmax_type or "vanilla") != "vanilla" and (par.cp_comm_type or "p2p") != "a2a":
        # Transformer Engine's context-parallel attention merges the ring's partial softmaxes without the
        # sink term: a non-vanilla softmax runs only with the all-to-all (Ulysses) layout
        found.append(_bad(P + "cp_comm_type",
                          f"softmax_type {w.softmax_type} with CP {cp} runs in Transformer Engine only with "
                          f"cp_comm_type a2a (not {par.cp_comm_type or 'p2p'})",
                          "use cp_comm_type: a2a, or context_parallel_size: 1"))
    if par.sequence_parallel and tp > 1 and w.seq_length % tp:
        found.append(_bad(P + "sequence_parallel",
                          f"sequence parallelism needs TP {tp} to divide the sequence {w.seq_length}"))
    return found


def _expert_findings(w: Workload, s: _Sizes) -> list[_Finding]:
    """EP splits the experts, and EP x expert-TP the ranks of TP x CP x DP; top-k within the experts."""
    found = []
    ep, etp = s.ep, s.etp
    if ep > 1 and not w.num_experts:
        found.append(_bad(P + "expert_model_parallel_size", f"EP {ep} on a dense model (no num_experts)",
                          "set expert_model_parallel_size: 1, or pick an MoE model"))
    elif w.num_experts and w.num_experts % ep:
        found.append(_bad(P + "expert_model_parallel_size", f"EP {ep} does not divide the {w.num_experts} experts",
                          _alts(ep, divisors(w.num_experts)), rule=f"EP must divide the {w.num_experts} experts",
                          vary={"expert_model_parallel_size": (ep, divisors(w.num_experts))}))
    if s.dp is not None and (s.tp * s.cp * s.dp) % (ep * etp):
        ranks = s.tp * s.cp * s.dp
        found.append(_bad(P + "expert_model_parallel_size",
                          f"EP x expert-TP = {ep} x {etp} must divide TP x CP x DP = {ranks}",
                          _alts(ep, [d for d in divisors(ranks) if ranks % (d * etp) == 0]),
                          rule=f"EP × expert-TP must divide {ranks}",
                          vary={"expert_model_parallel_size": (ep, divisors(ranks)), **s.whole_cluster}))
    if w.num_experts and w.moe_router_topk and w.moe_router_topk > w.num_experts:
        found.append(_bad(W + "moe_router_topk", f"top-{w.moe_router_topk} routing with only {w.num_experts} experts",
                          f"use at most {w.num_experts}"))
    return found


def _batch_findings(w: Workload, par: Parallelism, s: _Sizes) -> tuple[int, list[_Finding]]:
    """The micro-batches per step (0 when unknown) and the problems of the batch sizes: the global
    batch splits into micro-batches over DP, a bounded number, a multiple of PP when interleaved."""
    mbs, gbs, dp, pp = w.micro_batch_size, w.global_batch_size, s.dp, s.pp
    if dp is None:
        return 0, []
    if gbs % (mbs * dp):
        candidates = _multiples_near(gbs, mbs * dp)
        return 0, [_bad(W + "global_batch_size",
                        f"{gbs} does not divide by micro_batch_size x DP = {mbs} x {dp} = {mbs * dp}",
                        f"{_alts(gbs, candidates)}, or change micro_batch_size",
                        rule=f"global_batch_size must be a multiple of micro_batch_size × DP = {mbs * dp}",
                        vary={"global_batch_size": (gbs, candidates), "micro_batch_size": (mbs, divisors(gbs)),
                              **s.whole_cluster})]
    n_micro = gbs // (mbs * dp)
    if n_micro > MAX_MICROBATCHES:  # the schedule and the trace grow with them: refuse before any work
        return n_micro, [_bad(W + "global_batch_size",
                              f"global_batch_size {gbs:,} with micro_batch_size {mbs} × DP {dp} means {n_micro:,} "
                              f"micro-batches per step: at most {MAX_MICROBATCHES:,}",
                              f"use a global_batch_size of at most {MAX_MICROBATCHES * mbs * dp:,}, or a larger "
                              "micro_batch_size")]
    if par.pipeline_schedule == "interleaved" and pp > 1 and n_micro % pp:
        return n_micro, [_bad(W + "global_batch_size",
                              f"the interleaved schedule needs the {n_micro} micro-batches to be a multiple of PP {pp}",
                              _alts(gbs, _multiples_near(gbs, pp * mbs * dp)),
                              rule=f"global_batch_size must be a multiple of PP × micro_batch_size × DP = "
                                   f"{pp * mbs * dp}",
                              vary={"global_batch_size": (gbs, _multiples_near(gbs, pp * mbs * dp)),
                                    **s.whole_cluster})]
    return n_micro, []


def _multiples_near(value: int, step: int) -> list[int]:
    """Multiples of `step` around `value` (a bounded list however large the numbers)."""
    k = max(1, value // step)
    return [m * step for m in range(max(1, k - suggestions.MAX_TRIES), k + suggestions.MAX_TRIES + 1)]


def _suggested_fix(workload, par, cluster_gpus, catalog, errors_now, rule, vary, model_parallel, fallback) -> str:
    """'<rule>: <field> <value> or <value>; or ...', the options tried and found to work, or the fallback."""
    def errors(w, p):
        return len(check_job(w, p, cluster_gpus, catalog, suggest=False)[1])

    first, options = [], []
    for field, (current, candidates) in vary.items():
        if field == "num_gpus":
            n = suggestions.gpu_count(workload, par, cluster_gpus, model_parallel, errors, errors_now)
            if n is not None:
                text = suggestions.gpu_count_phrase(n, cluster_gpus)
                (first if suggestions.num_gpus_first(n, cluster_gpus) else options).append(text)
            continue
        values = suggestions.best_values(workload, par, field, current, candidates, errors, errors_now)
        if values:
            options.append(suggestions.phrase(field, values))
    if not first and not options:
        return fallback
    return f"{rule}: {suggestions.join_options(first + options)}"


def resolved_workload(doc, catalog: Catalog | None = None) -> Workload | None:
    catalog = catalog or default_catalog()
    if doc.spec.workload is None:
        return None
    return resolve_workload(doc.spec.workload, catalog.presets())


def replace(obj, **changes):
    return dataclasses.replace(obj, **changes)
