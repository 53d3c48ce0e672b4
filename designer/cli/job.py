"""The design and its job as the job commands take them (evaluate, trace, report, cost, nccl,
advise, failures, search, scale): the file's arguments, loading with --scenario and --set, the
check, the evaluation."""
from __future__ import annotations

import argparse

from ..core.problems import DesignerError, Problem
from .common import err

# Commands that work on one job's plan: with spec.jobs they take one job (--job NAME, default the first)
JOB_ALONE_COMMANDS = ("advise", "search", "scale", "cost")


def add_job_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="a cluster YAML file")
    p.add_argument("--scenario", metavar="S.yaml", help="take workload and parallelism from this file")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", default=[],
                   help="override a value: parallelism.tensor_model_parallel_size=4, workload.preset=gpt3-175b, "
                        "calibration.nvlink_efficiency=0.8, nodes[node3].slowdown=1.2, links[l7].bandwidth_gbps=200")
    p.add_argument("--job", metavar="NAME", default=None,
                   help="with spec.jobs: the job advise, search, scale and cost work on (default: the first)")


def load_job(args, plan_may_be_wrong: bool = False, progress=None, check: bool = True,
             keep_link_fields: bool = False):
    """The cluster with --scenario and --set applied. `plan_may_be_wrong`: the plan's own
    problems are warnings (a plan search looks for a valid plan; the cluster must be sound).
    `progress`: a progress.Progress told each phase. `check`: False leaves the check to the
    caller (check_errors, raise_check_errors). `keep_link_fields`: for a caller that holds the design
    still at once (load_document)."""
    from ..core.io import load_document, load_scenario

    if progress:
        progress.phase(f"loading {args.file}")
    doc = load_document(args.file, keep_link_fields)
    if getattr(args, "scenario", None):
        scenario = load_scenario(args.scenario)
        doc.set_job(scenario.workload, scenario.parallelism)
        if scenario.calibration:
            doc.spec.calibration = {**doc.spec.calibration, **scenario.calibration}
    assignments = getattr(args, "set", None) or []
    if assignments:
        from ..core.io.overrides import apply_overrides  # here: a command line without --set needs none of it

        apply_overrides(doc, assignments)
    if doc.spec.jobs and getattr(args, "command", None) in JOB_ALONE_COMMANDS:
        from ..core.model.jobs import job_alone

        args.jobs_design = doc  # the design with all its jobs (advise's job moves and failures read it)
        doc, name = job_alone(doc, getattr(args, "job", None))
        if progress:
            progress.clear()
        err(f"note: job {name} alone on {doc.spec.parallelism.num_gpus or doc.num_gpus():,} GPUs "
            "(the design has several; --job NAME for another; designer evaluate costs them together)")
    if not check:
        return doc
    if progress:
        progress.phase(f"checking {len(doc.nodes) + len(doc.switches) + len(doc.links):,} elements")
    errors = check_errors(doc)
    if plan_may_be_wrong:
        from ..core.model.plan import check_plan

        plan_problems = {p.format() for p in check_plan(doc)}
        for p in [p for p in errors if p.format() in plan_problems]:
            errors.remove(p)
            p.file = args.file
            if progress:
                progress.clear()
            err(f"warning: {p.format()}")
    if errors:
        raise_check_errors(errors, args)
    return doc


def check_errors(doc) -> list[Problem]:
    from ..core.design_check import check_document

    return [p for p in check_document(doc) if p.severity == "error"]


def raise_check_errors(errors: list[Problem], args) -> None:
    from ..core.io.locate import locate

    locate(errors, args.file)
    raise DesignerError(errors)


def evaluate(args, progress=None):
    """(doc, engine, result) of the job the arguments name, checked first."""
    from ..core.engine.evaluate import Engine

    doc = load_job(args, progress=progress)
    if progress:
        progress.phase(f"evaluating the step on {doc.num_gpus():,} GPUs")
    engine = Engine()
    return doc, engine, engine.evaluate(doc)


def evaluate_file(path: str, scenario: str | None = None, overrides: list[str] | None = None):
    """One file evaluated as `designer evaluate FILE [--scenario S] [--set ...]` does."""
    return evaluate(argparse.Namespace(file=path, scenario=scenario, set=overrides or []))
