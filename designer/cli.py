"""`designer`: the headless command line (docs/contract.md section 4). Never imports Qt.

Exit codes: 0 ok; 1 failure; 2 usage; 65 bad input data; 66 missing input file;
70 internal error. Machine output goes to stdout, messages to stderr.
"""
from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import stat
import sys

from . import __version__
from .core.problems import (
    EXIT_DATAERR, EXIT_FAILURE, EXIT_OK, EXIT_SOFTWARE, EXIT_USAGE, DesignerError, Problem,
)

EPILOG = "exit codes: 0 ok, 1 failure, 2 usage, 65 bad input data, 66 missing input file, 70 internal error"


def _err(text: str) -> None:
    print(text, file=sys.stderr)


def _n(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


# A file with 80,000 bad lines needs its first problems shown, not all of them.
MAX_SHOWN_PROBLEMS = 200  # more than a check lists of one kind (check.MAX_LISTED_DUPLICATES)


def _report(problems: list[Problem]) -> None:
    for p in problems[:MAX_SHOWN_PROBLEMS]:
        _err(p.format())
    if len(problems) > MAX_SHOWN_PROBLEMS:
        more = len(problems) - MAX_SHOWN_PROBLEMS
        _err(f"... and {more:,} more problem{'s' if more > 1 else ''} ({len(problems):,} in all; "
             f"the first {MAX_SHOWN_PROBLEMS} are shown)")


# ---- -o files: one way to say why an output cannot be written ----------------------------------

@contextlib.contextmanager
def writing_output(path: str):
    """Around every `-o` write: a missing folder, a read-only target, a full disk or a device
    in the way is the user's to fix (exit 1 with the path, the reason and the fix), not a bug."""
    fix = "write into an existing folder you can write to"
    if os.path.isdir(path):
        raise DesignerError([Problem("cannot write: it is a folder", file=path, fix="give a file name in it")],
                            EXIT_FAILURE)
    if os.path.exists(path) and not stat.S_ISREG(os.stat(path).st_mode):
        # never rename a file over a device or pipe (an atomic save would replace /dev/full itself)
        raise DesignerError([Problem("cannot write: it is a device or pipe, not a regular file", file=path,
                                     fix="give the path of a file (to pipe the output, write a file and cat it)")],
                            EXIT_FAILURE)
    try:
        yield
    except OSError as exc:
        folder = os.path.dirname(os.path.abspath(path))
        reason = exc.strerror or str(exc)
        if exc.errno == errno.ENOENT:
            reason = f"the folder {folder} does not exist"
        elif exc.errno == errno.ENOTDIR:
            blocker = next((p for p in _parents(folder) if os.path.exists(p) and not os.path.isdir(p)), folder)
            reason = f"{blocker} is a file, not a folder"
        elif exc.errno in (errno.EACCES, errno.EPERM):
            reason = f"permission denied (the folder {folder} or the file is not writable)"
        elif exc.errno == errno.EROFS:
            reason = f"{folder} is on a read-only file system"
        elif exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
            reason, fix = "no space left on the disk (or over quota)", "free some space, or write to another disk"
        raise DesignerError([Problem(f"cannot write: {reason}", file=path, fix=fix)], EXIT_FAILURE) from None


def _parents(folder: str) -> list[str]:
    """The folder and each folder above it, nearest first."""
    out = [folder]
    while os.path.dirname(out[-1]) != out[-1]:
        out.append(os.path.dirname(out[-1]))
    return out


# ---- catalog ---------------------------------------------------------------------------------

def cmd_catalog(args) -> int:
    from .core.io.files import as_plain
    from .core.model.catalog import default_catalog

    cat = default_catalog()
    if args.json:
        out = {kind: {name: as_plain(item) for name, item in getattr(cat, kind).items()}
               for kind in ("accelerators", "nics", "switches", "models")}
        json.dump(out, sys.stdout, indent=2)
        print()
        return EXIT_OK
    print("Accelerators (dense TFLOP/s; scale-up per GPU per direction)")
    print(f"  {'name':18} {'aliases':16} {'bf16':>6} {'fp8':>6} {'best GEMM':>9} {'HBM GiB':>8} "
          f"{'HBM TB/s':>8} {'scale-up':>14}")
    for a in cat.accelerators.values():
        print(f"  {a.name:18} {','.join(a.aliases)[:16]:16} {a.peak_tflops.get('bf16', 0):>6g} "
              f"{a.peak_tflops.get('fp8', 0):>6g} {a.best_gemm_tflops:>9g} {a.hbm_gib:>8g} {a.hbm_tbps:>8g} "
              f"{a.scale_up_gbps:>7g} Gb/s {a.scale_up}")
    print("\nNICs")
    for n in cat.nics.values():
        print(f"  {n.name:25} {n.kind:11} {n.gbps:>5g} Gb/s  {n.transport:10}  aliases: {', '.join(n.aliases)}")
    print("\nSwitches")
    for s in cat.switches.values():
        print(f"  {s.name:24} {s.kind:11} {s.radix:>3} x {s.port_gbps:g} Gb/s  {s.latency_us:g} us"
              f"{'  SHARP' if s.sharp else ''}")
    print("\nModel presets")
    for m in cat.models.values():
        v = m.values
        moe = f", {v['num_experts']} experts top-{v.get('moe_router_topk', 2)}" if v.get("num_experts") else ""
        print(f"  {m.name:16} {v.get('num_layers', '?')} layers, h {v.get('hidden_size', '?')}, "
              f"{v.get('num_attention_heads', '?')} heads, seq {v.get('seq_length', '?')}{moe}")
    print("\nEvery figure's source: designer catalog --json (the 'sources' of each entry).")
    return EXIT_OK


# ---- generate --------------------------------------------------------------------------------

def cmd_generate(args) -> int:
    from .core.generate import FatTreeError, generate_fat_tree
    from .core.io import save_document

    from .cli_progress import Progress

    with Progress("generate") as progress:
        progress.phase(f"building {args.nodes:,} servers and their fabric")
        try:
            doc = generate_fat_tree(
                nodes=args.nodes, gpu=args.gpu, gpus_per_node=args.gpus_per_node, nics_per_node=args.nics_per_node,
                nic_gbps=args.nic_gbps, fabric=args.fabric, tiers=args.tiers, switch_radix=args.switch_radix,
                oversubscription=args.oversubscription, rail_optimized=args.rail_optimized,
                nvlink_domain_gpus=args.nvlink_domain_gpus, nic_model=args.nic_model,
            )
        except FatTreeError as exc:
            progress.clear()
            _err(f"designer generate: {exc}")
            return EXIT_DATAERR
        progress.phase(f"writing {args.output}")
        with writing_output(args.output):
            save_document(doc, args.output)
    c = doc.counts()
    _err(f"wrote {args.output}: {c['nodes']} servers, {c['gpus']} GPUs, {_n(c['switches'], 'switch', 'switches')}, "
         f"{c['links']} links ({c['cables']} cables), {c['racks']} racks")
    return EXIT_OK


# ---- validate / schema -----------------------------------------------------------------------

def cmd_validate(args) -> int:
    from .core.io import load_document
    from .core.model.check import check_document

    from .cli_progress import Progress

    with Progress("validate") as progress:
        progress.phase(f"loading {args.file}")
        doc = load_document(args.file)
        from .core.io.locate import locate

        progress.phase(f"checking {len(doc.nodes) + len(doc.switches) + len(doc.links):,} elements")
        problems = check_document(doc)
        if problems:
            progress.phase(f"locating {len(problems):,} problems in {args.file}")
        locate(problems, args.file)  # FILE:LINE:COLUMN of each problem's key
    if problems:
        _report(problems)
        errors = sum(p.severity == "error" for p in problems)
        _err(f"{args.file}: {errors} error(s), {len(problems) - errors} warning(s)")
        return EXIT_DATAERR
    c = doc.counts()
    _err(f"{args.file}: ok ({c['nodes']} servers, {c['gpus']} GPUs, {_n(c['switches'], 'switch', 'switches')}, {c['links']} links)")
    return EXIT_OK


def cmd_schema(args) -> int:
    from .core.io import json_schema

    json.dump(json_schema(), sys.stdout, indent=2)
    print()
    return EXIT_OK


# Commands that work on one job's plan: with spec.jobs they take one job (--job NAME, default the first)
JOB_ALONE_COMMANDS = ("advise", "search", "scale", "cost")


def _load_job(args, plan_may_be_wrong: bool = False, progress=None, check: bool = True):
    """The cluster with --scenario and --set applied. `plan_may_be_wrong`: the plan's own
    problems are warnings (a plan search looks for a valid plan; the cluster must be sound).
    `progress`: a cli_progress.Progress told each phase. `check`: False leaves the check to the
    caller (_check_errors, _raise_check_errors)."""
    from .core.io import load_document, load_scenario
    from .core.io.overrides import apply_overrides

    if progress:
        progress.phase(f"loading {args.file}")
    doc = load_document(args.file)
    if getattr(args, "scenario", None):
        scenario = load_scenario(args.scenario)
        doc.set_job(scenario.workload, scenario.parallelism)
        if scenario.calibration:
            doc.spec.calibration = {**doc.spec.calibration, **scenario.calibration}
    apply_overrides(doc, getattr(args, "set", None) or [])
    if doc.spec.jobs and getattr(args, "command", None) in JOB_ALONE_COMMANDS:
        from .core.model.jobs import job_alone

        args.jobs_design = doc  # the design with all its jobs (advise's job moves and failures read it)
        doc, name = job_alone(doc, getattr(args, "job", None))
        if progress:
            progress.clear()
        _err(f"note: job {name} alone on {doc.spec.parallelism.num_gpus or doc.num_gpus():,} GPUs "
             "(the design has several; --job NAME for another; designer evaluate costs them together)")
    if not check:
        return doc
    if progress:
        progress.phase(f"checking {len(doc.nodes) + len(doc.switches) + len(doc.links):,} elements")
    errors = _check_errors(doc)
    if plan_may_be_wrong:
        from .core.model.plan import check_plan

        plan_problems = {p.format() for p in check_plan(doc)}
        for p in [p for p in errors if p.format() in plan_problems]:
            errors.remove(p)
            p.file = args.file
            if progress:
                progress.clear()
            _err(f"warning: {p.format()}")
    if errors:
        _raise_check_errors(errors, args)
    return doc


def _check_errors(doc) -> list[Problem]:
    from .core.model.check import check_document

    return [p for p in check_document(doc) if p.severity == "error"]


def _raise_check_errors(errors: list[Problem], args) -> None:
    from .core.io.locate import locate

    locate(errors, args.file)
    raise DesignerError(errors)


def _evaluate(args, progress=None):
    from .core.engine.evaluate import Engine

    if getattr(args, "as_program", False) and progress is None and getattr(args, "command", None) == "evaluate":
        from .cli_parallel_check import evaluate_while_checking  # the check beside the evaluation

        doc, engine = _load_job(args, check=False), Engine()
        return doc, engine, evaluate_while_checking(doc, engine.evaluate, _check_errors,
                                                    lambda errors: _raise_check_errors(errors, args))
    doc = _load_job(args, progress=progress)
    if progress:
        progress.phase(f"evaluating the step on {doc.num_gpus():,} GPUs")
    engine = Engine()
    return doc, engine, engine.evaluate(doc)


def cmd_evaluate(args) -> int:
    from .core.gc_pause import collector_paused

    with collector_paused():  # one short run making ~10^5 acyclic objects: ~15 % of its CPU at 16k
        code = _print_evaluation(args)
        if getattr(args, "as_program", False):  # now: a resumed collector's first pass walks every object made
            _exit_at_once(code)
        return code


def _print_evaluation(args) -> int:
    doc, _, result = _evaluate(args)
    args.kept_until_exit = (doc, result)  # a program ends without freeing them (_exit_at_once)
    for w in result.warnings:
        _err(f"warning: {w}")
    if args.json:
        from .core.analysis.link_load import classes_json

        out = result.as_json(events=args.events)
        out["link_classes"] = classes_json(result, doc)  # symmetric links as one row (docs/contract.md, Link load)
        json.dump(out, sys.stdout, indent=2)
        print()
        return EXIT_OK
    print(format_jobs(result, doc) if len(result.jobs) > 1 else format_result(result, doc))
    return EXIT_OK


def format_jobs(result, doc) -> str:
    """One block per job (as for a single job, headed by its name and what slows it), and a summary."""
    blocks = []
    for job in result.jobs:
        head = [f"job {job.name}: {job.result.num_gpus:,} GPUs on {len(job.node_ids)} servers, step "
                f"{job.result.step_time_s:.3f} s, alone {job.alone.step_time_s:.3f} s "
                f"({job.slowdown_vs_alone:+.1%} from sharing the fabric)"]
        for row in (r for r in job.interference if r["share"] >= 0.0005):
            head.append(f"  slowed by {row['job']} on {row['resource']}: {row['share']:+.1%}"
                        + (f" ({', '.join(row['elements'])})" if row.get("elements") else ""))
        blocks.append("\n".join(head) + "\n" + format_result(job.result, doc))
    gpus = sum(job.result.num_gpus for job in result.jobs)
    worst = max(result.jobs, key=lambda job: job.slowdown_vs_alone)
    summary = (f"{len(result.jobs)} jobs on {gpus:,} of {doc.num_gpus():,} GPUs; "
               + ", ".join(f"{job.name} {job.result.step_time_s:.3f} s ({job.slowdown_vs_alone:+.1%})"
                           for job in result.jobs)
               + (f"; most slowed: {worst.name}" if worst.slowdown_vs_alone > 0.0005 else "; no job slows another"))
    return "\n\n".join(blocks + [summary])


def format_result(result, doc) -> str:
    p = result.plan
    lines = [f"{doc.metadata.name}: {result.num_gpus} x {p['accelerator']}, TP {p['tp']} PP {p['pp']} CP {p['cp']} "
             f"EP {p['ep']} DP {p['dp']}, {p['schedule']}" + (f" (v={p['vp']})" if p['vp'] > 1 else "")
             + f", {p['num_microbatches']} micro-batches",
             "",
             f"  step time       {result.step_time_s:10.3f} s",
             f"  tokens/s        {result.tokens_per_s:10.0f}",
             f"  model TFLOP/s   {result.model_tflops_per_gpu:10.1f} per GPU",
             f"  MFU / HFU       {result.mfu:10.1%} / {result.hfu:.1%}",
             "",
             "  breakdown (critical path)            s      share"]
    for key, value in result.breakdown_s.items():
        share = value / result.step_time_s if result.step_time_s else 0
        lines.append(f"    {key:28} {value:10.3f} {share:9.1%}")
    hidden = {k: v for k, v in result.hidden_comm_s.items() if v > 0}
    if hidden:
        lines.append("  hidden behind compute: " + ", ".join(f"{k} {v:.3f} s" for k, v in hidden.items()))
    mem = result.memory_gib_per_gpu
    lines += ["", f"  memory per GPU  {mem['total']:.1f} GiB (params {mem['params']:.1f}, grads {mem['grads']:.1f}, "
                  f"optimizer {mem['optimizer']:.1f}, activations {mem['activations']:.1f})"
                  + ("" if result.fits_in_memory else "  DOES NOT FIT")]
    if result.bottlenecks:
        lines += ["", "  top bottlenecks"]
        for b in result.bottlenecks[:5]:
            lines.append(f"    {b['kind']:15} {b['resource']:45} exposed {b['exposed_s']:.3f} s")
    return "\n".join(lines)


def cmd_trace(args) -> int:
    from .core.export.trace import trace_size_problem, write_trace

    doc, engine, result = _evaluate(args)
    too_big = trace_size_problem(result)
    if too_big is not None:
        from .core.io.locate import locate

        locate([too_big], args.file)
        raise DesignerError([too_big])
    with writing_output(args.output):
        count = write_trace(result, engine._fabric, args.output)
    _err(f"wrote {args.output}: {count} trace events, step {result.step_time_s:.3f} s "
         f"(open it in ui.perfetto.dev or chrome://tracing)")
    return EXIT_OK


def cmd_report(args) -> int:
    from .core.export.report import build_report

    doc, _, result = _evaluate(args)
    for w in result.warnings:
        _err(f"warning: {w}")
    source = args.file + (f", scenario {args.scenario}" if args.scenario else "")
    if args.set:
        source += ", with --set " + " ".join(args.set)
    comparison = None
    if args.compare:  # the other design as its file is (--scenario and --set apply to FILE only)
        from .cli_compare import compare_with

        comparison = compare_with(doc, result, args.file, args.compare, evaluate_file, warn=_err)
    with writing_output(args.output):
        pages = build_report(doc, result, args.output, source_name=source, comparison=comparison)
    _err(f"wrote {args.output}: {_n(pages, 'page', 'pages')}, step {result.step_time_s:.3f} s")
    return EXIT_OK


def evaluate_file(path: str):
    """One file evaluated as `designer evaluate FILE` does (no --scenario, no --set)."""
    return _evaluate(argparse.Namespace(file=path, scenario=None, set=[]))


def cmd_compare(args) -> int:
    from .cli_compare import run_compare

    return run_compare(args, evaluate_file)


def cmd_cost(args) -> int:
    from .cli_cost import format_cost
    from .core.analysis.cost import estimate_cost

    doc = _load_job(args)
    result = None
    if doc.spec.workload is not None:  # the job's throughput, as `designer evaluate` predicts it
        from .core.engine.evaluate import Engine

        result = Engine().evaluate(doc)
        for w in result.warnings:
            _err(f"warning: {w}")
    estimate = estimate_cost(doc, result, usd_per_kwh=args.usd_per_kwh, amortisation_years=args.years)
    if args.json:
        json.dump(estimate.as_json(), sys.stdout, indent=2)
        print()
        return EXIT_OK
    print(format_cost(estimate, doc.metadata.name))
    return EXIT_OK



# ---- analysis: advise, search, scale --------------------------------------------------------

def cmd_advise(args) -> int:
    from .core.analysis.whatif import advice_json, advise

    from .cli_advise_jobs import jobs_json, jobs_section, jobs_text
    from .cli_progress import Progress

    with Progress("advise") as progress:
        doc, engine, result = _evaluate(args, progress)
        progress.phase("costing the changes")
        report = advise(doc, engine=engine, result=result, include_scale=not args.no_scale, by=args.by,
                        progress=progress.counter("changes costed"))
        # several jobs: the moves that pay and the costliest failures, on the design with all its jobs
        jobs = jobs_section(getattr(args, "jobs_design", None), engine, progress)
    if args.json:
        data = advice_json(report)
        json.dump({**data, **jobs_json(jobs)} if jobs else data, sys.stdout, indent=2)
        print()
        return EXIT_OK
    print(format_advice(report, doc))
    if jobs:
        print(jobs_text(jobs))
    return EXIT_OK


def cmd_failures(args) -> int:
    from .cli_failures import run_failures

    return run_failures(args, _evaluate)


def format_advice(report: dict, doc) -> str:
    cur, why = report["current"], report["attribution"]
    p = cur["plan"]
    lines = [f"{doc.metadata.name}: step {cur['step_time_s']:.3f} s, MFU {cur['mfu']:.1%} "
             f"(TP {p['tp']} PP {p['pp']} CP {p['cp']} EP {p['ep']} DP {p['dp']}, {p['schedule']})",
             f"  {why['summary']}" + (f"; critical resource: {why['critical_resource']}" if why["critical_resource"]
                                      else ""),
             "", "  where the step goes                                      s     share"]
    small = [c for c in why["causes"] if c["share"] < 0.0005]
    for c in why["causes"]:
        if c["share"] >= 0.0005:
            lines.append(f"    {c['cause']:50} {c['seconds']:8.3f} {c['share']:8.1%}")
    if small:
        lines.append(f"    ({len(small)} more under 0.05%: " + ", ".join(c["cause"] for c in small) + ")")
    by_cost = report.get("ranked_by") == "cost"
    head = "changes, best first" + (" by tokens per dollar" if by_cost else "")
    lines += ["", f"  {head:52} {'step s':>8} {'speed-up':>9} {'MFU':>7} {'tokens/$':>10} {'capex':>8}"]
    for a in report["ranked"]:
        tpu = f"{a.tokens_per_usd_change:+10.1%}" if a.tokens_per_usd_change is not None else f"{'-':>10}"
        capex = f"{a.capex_change:+8.1%}" if a.capex_change is not None else f"{'-':>8}"
        lines.append(f"    {a.title:50} {a.step_time_s:8.3f} {a.speedup:+9.1%} {a.mfu:7.1%} {tpu} {capex}"
                     + (f"  {a.note}" if a.note else ""))
    cost = report.get("cost")
    if cost is not None:
        lines.append(f"\n  now: capex ${cost.capex_usd / 1e6:,.2f}M (fabric {cost.fabric_share:.1%}), "
                     f"{cost.power_kw:,.0f} kW, ${cost.usd_per_million_tokens or 0:.4f} per M tokens "
                     f"(designer cost FILE for the bill of materials)")
    if report["not_applicable"]:
        lines += ["", "  not applicable"]
        for a in report["not_applicable"]:
            lines.append(f"    {a.title}: {a.error}")
    lines.append(f"\n  ({len(report['ranked'])} changes costed in {report['elapsed_s']:.2f} s; "
                 "reproduce one with designer evaluate FILE --set ..., see --json)")
    return "\n".join(lines)


def cmd_search(args) -> int:
    from .core.analysis.search import search

    from .cli_progress import Progress

    with Progress("search") as reporter:
        doc = _load_job(args, plan_may_be_wrong=True, progress=reporter)
        reporter.phase("enumerating plans and their lower bounds")
        progress = reporter.counter("plans costed (the lower bound may stop it sooner)")
        if args.nvlink_domain_gpus:  # the domain size as one more dimension (search_domains.py)
            from .core.analysis.search_domains import search_domain_sizes

            result = search_domain_sizes(doc, args.nvlink_domain_gpus, top=args.top, workers=args.workers,
                                         scheduler=args.scheduler, progress=progress)
        else:
            result = search(doc, top=args.top, workers=args.workers, scheduler=args.scheduler, progress=progress)
    for w in result.warnings:
        _err(f"warning: {w}")
    if args.json:
        from .cli_megatron import add_megatron_args

        data = result.as_json()
        add_megatron_args(doc, result, data)  # each plan's Megatron-LM arguments, ready to copy
        json.dump(data, sys.stdout, indent=2)
        print()
        return EXIT_OK
    from .core.analysis.texts import search_counts_text, set_arguments

    lines = [f"{doc.metadata.name}: {search_counts_text(result)}",  # the Advisor's Best plans page says the same
             f"  {result.verdict}", "", "  rank  step s     MFU  mem GiB  plan"]
    for i, r in enumerate(result.top, 1):
        others = r.get("same_time_orders", [])
        also = f"  [the same with order {', '.join(others)}]" if others else ""
        domain = f"NVL{r['nvlink_domain_gpus']} " if "nvlink_domain_gpus" in r else ""
        lines.append(f"  {i:4} {r['step_time_s']:7.3f} {r['mfu']:7.1%} {r['memory_gib']:8.1f}  "
                     f"{domain}{r['point'].label()}{also}")
        if args.megatron:
            from .cli_megatron import plan_megatron_args

            lines.append(f"       megatron: {plan_megatron_args(doc, r['point'])}")
    if result.top:
        b = result.top[0]["breakdown_s"]
        lines += ["", "  best plan's breakdown: " + ", ".join(f"{k} {v:.3f}" for k, v in b.items() if v > 0),
                  "  apply it: " + set_arguments(result.top[0]["point"].settings())]
        if "nvlink_domain_gpus" in result.top[0]:
            lines.append(f"  on NVLink domains of {result.top[0]['nvlink_domain_gpus']} GPUs "
                         f"(designer generate fat-tree ... --nvlink-domain-gpus {result.top[0]['nvlink_domain_gpus']})")
    print("\n".join(lines))
    return EXIT_OK


def _gpu_list(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.replace(" ", "").split(",") if v]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected GPU counts such as 64,128,256, got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive GPU counts such as 64,128,256, got {text!r}")
    return values


def cmd_scale(args) -> int:
    from .core.analysis.scaling import scale

    from .cli_progress import Progress

    with Progress("scale") as progress:
        doc = _load_job(args, progress=progress)
        progress.phase("costing the cluster sizes")
        report = scale(doc, args.gpus, mode=args.mode, progress=progress.counter("cluster sizes costed"))
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
        return EXIT_OK
    p = report["plan"]
    lines = [f"{doc.metadata.name}: {report['mode']} scaling with TP {p['tp']} PP {p['pp']} CP {p['cp']} "
             f"EP {p['ep']}, {p['schedule']}; DP grows",
             f"  {report['verdict']}", "",
             "    GPUs  servers   step s      tokens/s   per GPU    MFU  efficiency  marginal"]
    for r in report["rows"]:
        if "error" in r:
            lines.append(f"  {r['gpus']:6}  -- {r['error']}")
            continue
        lines.append(f"  {r['gpus']:6} {r['servers']:8} {r['step_time_s']:8.3f} {r['tokens_per_s']:13,.0f} "
                     f"{r['tokens_per_s_per_gpu']:9,.0f} {r['mfu']:6.1%} {r['efficiency']:10.1%} "
                     + (f"{r['marginal_efficiency']:9.1%}" if "marginal_efficiency" in r else "         ")
                     + ("  (generated fabric)" if r["extended_fabric"] else "")
                     + ("" if r["fits_in_memory"] else "  DOES NOT FIT"))
    print("\n".join(lines))
    return EXIT_OK


def _size(text: str) -> int:
    units = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
    t = text.strip().upper().rstrip("B")
    unit = t[-1] if t and t[-1] in units else ""
    number = t[:-1] if unit else t
    try:
        value = float(number) * units[unit]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a size such as 8, 1M or 16G, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"size must be at least 1 byte, got {text!r}")
    return int(value)


def cmd_nccl(args) -> int:
    from .core.engine.nccl import as_nccl_tests_json, format_table, nccl_run

    doc = _load_job(args)
    run = nccl_run(doc, args.op, args.num_gpus, args.algo, args.min_bytes, args.max_bytes)
    if args.json:  # nccl-tests' -J shape; Designer's rows under "designer_rows"
        json.dump(as_nccl_tests_json(run), sys.stdout, indent=2)
        print()
    else:
        print(format_table(run))
    return EXIT_OK


# ---- parser ----------------------------------------------------------------------------------

# ---- import / export (the work is in cli_fabric.py) ------------------------------------------

def cmd_import_ibnetdiscover(args) -> int:
    from .cli_fabric import import_ibnetdiscover

    return import_ibnetdiscover(args, writing_output)


def cmd_import_slurm_topology(args) -> int:
    from .cli_fabric import import_slurm_topology

    return import_slurm_topology(args, writing_output)


def cmd_export_slurm_topology(args) -> int:
    from .cli_fabric import export_slurm_topology

    return export_slurm_topology(args, writing_output)


def cmd_calibrate(args) -> int:
    from .cli_calibrate import run_calibrate

    return run_calibrate(args, writing_output)


def cmd_import_nccl_topo(args) -> int:
    from .cli_nccl_topo import import_nccl_topo

    return import_nccl_topo(args, writing_output)


def cmd_connect(args) -> int:
    from .cli_connect import run_connect

    return run_connect(args, writing_output)


def cmd_export_megatron(args) -> int:
    from .cli_megatron import export_megatron

    return export_megatron(args, writing_output)


def cmd_import_megatron(args) -> int:
    from .cli_megatron import import_megatron

    return import_megatron(args, writing_output)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, got {text}")
    return value


def _non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="designer", description="Design AI training clusters and predict what limits a training step.",
        epilog=EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"designer {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("catalog", help="known accelerators, NICs, switches and model presets", epilog=EPILOG)
    p.add_argument("--json", action="store_true", help="machine-readable, with every figure's source")
    p.set_defaults(func=cmd_catalog)

    p = sub.add_parser("generate", help="generate a cluster design", epilog=EPILOG)
    gsub = p.add_subparsers(dest="generator", metavar="GENERATOR")
    g = gsub.add_parser("fat-tree", help="folded-Clos (fat-tree) fabric, rail-optimized or not", epilog=EPILOG)
    g.add_argument("-o", "--output", required=True, help="the YAML file to write")
    g.add_argument("--nodes", required=True, type=_positive_int, help="servers")
    g.add_argument("--gpu", required=True, help="accelerator model (A100, H100, H200, B200, GB200, MI300X, ...)")
    g.add_argument("--gpus-per-node", type=_positive_int, default=8)
    g.add_argument("--nvlink-domain-gpus", type=_positive_int, default=None,
                   help="GPUs per NVLink domain, a whole number of servers (72 for GB200 NVL72); default: one server")
    g.add_argument("--nics-per-node", type=_positive_int, default=8)
    g.add_argument("--nic-gbps", type=_positive_float, default=400.0, help="NIC and switch port line rate")
    g.add_argument("--fabric", choices=("infiniband", "ethernet"), default="infiniband")
    g.add_argument("--nic-model", default=None,
                   help="catalog NIC (designer catalog), e.g. EFA-v4-400G; default: the catalog's NIC of that kind and speed")
    g.add_argument("--tiers", type=int, choices=(2, 3), default=None, help="default: the fewest that fit")
    g.add_argument("--switch-radix", type=_positive_int, default=64, help="ports per switch")
    g.add_argument("--oversubscription", type=_positive_float, default=1.0,
                   help="leaf down:up ratio R (2 = 2:1)")
    g.add_argument("--rail-optimized", dest="rail_optimized", action="store_true", default=True,
                   help="NIC i of every server to leaf group i (default)")
    g.add_argument("--no-rail-optimized", dest="rail_optimized", action="store_false",
                   help="all NICs of a server to the same leaf")
    g.set_defaults(func=cmd_generate)

    p = sub.add_parser("validate", help="check a design: exit 0, or every problem and exit 65", epilog=EPILOG)
    p.add_argument("file")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("schema", help="JSON Schema of the file format, for editors", epilog=EPILOG)
    p.set_defaults(func=cmd_schema)

    def job_args(p):
        p.add_argument("file", help="a cluster YAML file")
        p.add_argument("--scenario", metavar="S.yaml", help="take workload and parallelism from this file")
        p.add_argument("--set", action="append", metavar="KEY=VALUE", default=[],
                       help="override a value: parallelism.tensor_model_parallel_size=4, workload.preset=gpt3-175b, "
                            "calibration.nvlink_efficiency=0.8, nodes[node3].slowdown=1.2, links[l7].bandwidth_gbps=200")
        p.add_argument("--job", metavar="NAME", default=None,
                       help="with spec.jobs: the job advise, search, scale and cost work on (default: the first)")

    p = sub.add_parser("evaluate", help="predict one training step: breakdown, memory, bottlenecks", epilog=EPILOG)
    job_args(p)
    p.add_argument("--json", action="store_true", help="one JSON object (docs/contract.md section 5)")
    p.add_argument("--events", action="store_true", help="with --json: include the per-device events")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("trace", help="Chrome/Perfetto trace of the predicted step", epilog=EPILOG)
    job_args(p)
    p.add_argument("-o", "--output", required=True, help="trace.json to write")
    p.set_defaults(func=cmd_trace)

    p = sub.add_parser("report", help="design-review PDF: cluster, job, breakdown, memory, bottlenecks",
                       epilog=EPILOG)
    job_args(p)
    p.add_argument("-o", "--output", required=True, help="report.pdf to write")
    p.add_argument("--compare", metavar="B.yaml", default=None,
                   help="add a comparison with this design: both sets of figures and both breakdowns")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("compare", help="two designs side by side: step, throughput, memory, cost, breakdown",
                       epilog=EPILOG)
    p.add_argument("a", metavar="A.yaml", help="the design compared against")
    p.add_argument("b", metavar="B.yaml", help="the other design (differences are B - A)")
    p.add_argument("--json", action="store_true", help="rows of a, b, delta, delta_pct; both cost estimates")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("cost", help="bill of materials, capex, power, tokens/s per MW and $ per million tokens",
                       epilog=EPILOG)
    job_args(p)
    p.add_argument("--json", action="store_true", help="bom lines, capex_usd, fabric_share, power_kw, "
                   "tokens_per_s_per_mw, usd_per_million_tokens")
    p.add_argument("--usd-per-kwh", type=_non_negative_float, default=0.08, metavar="X",
                   help="energy price in $ per kWh (default 0.08)")
    p.add_argument("--years", type=_positive_float, default=4.0, metavar="N",
                   help="amortisation period of the capex in years (default 4)")
    p.set_defaults(func=cmd_cost)

    p = sub.add_parser("nccl", help="the table nccl-tests would print on this cluster", epilog=EPILOG)
    job_args(p)
    p.add_argument("--op", required=True, choices=("all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                                                   "broadcast", "reduce", "send_recv"))
    p.add_argument("--num-gpus", type=_positive_int, default=None, help="the first N GPUs (default: all)")
    p.add_argument("--algo", choices=("auto", "ring", "tree", "nvls", "collnet", "pat"), default="auto")
    p.add_argument("--min-bytes", type=_size, default=8, help="smallest size (8, 1K, 1M, ...)")
    p.add_argument("--max-bytes", type=_size, default=16 * 2**30, help="largest size (default 16G)")
    p.add_argument("--json", action="store_true",
                   help="nccl-tests' -J JSON (results: size, count, out_of_place.time/alg_bw/bus_bw); "
                        "Designer's rows of size_bytes, time_us, algbw, busbw under designer_rows")
    p.set_defaults(func=cmd_nccl)

    p = sub.add_parser("advise", help="what limits the step, and candidate changes ranked by speed-up",
                       epilog=EPILOG)
    job_args(p)
    p.add_argument("--json", action="store_true", help="attribution, ranked changes (with --set to reproduce)")
    p.add_argument("--no-scale", action="store_true", help="leave out the 2x-servers candidate")
    p.add_argument("--by", choices=("speed", "cost"), default="speed",
                   help="rank by speed-up (default) or by tokens per dollar (docs/cost.md)")
    p.set_defaults(func=cmd_advise)

    p = sub.add_parser("failures", help="what if one part fails: switches, servers and cables ranked by what "
                                        "their loss costs the jobs, and job moves that pay", epilog=EPILOG)
    job_args(p)
    p.add_argument("--json", action="store_true", help="failures (element, stopped jobs, slowdowns) and job_moves")
    p.add_argument("--top", type=_positive_int, default=15, help="failures to list (default 15)")
    p.set_defaults(func=cmd_failures)

    p = sub.add_parser("search", help="the fastest plans that fit, searched exhaustively with pruning",
                       epilog=EPILOG)
    job_args(p)
    p.add_argument("--top", type=_positive_int, default=10, help="plans to list (default 10)")
    p.add_argument("--workers", type=_positive_int, default=None, help="local processes (default: one per core)")
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT", default=None,
                   help="run the sweep on this Dask scheduler (needs designer[dask])")
    p.add_argument("--json", action="store_true", help="top plans, counts of the space, timing")
    p.add_argument("--megatron", action="store_true",
                   help="print each plan's Megatron-LM arguments (--json always has them as megatron_args)")
    p.add_argument("--nvlink-domain-gpus", type=_gpu_list, default=None, metavar="4,72",
                   help="also search these NVLink domain sizes (GPUs, whole servers, up to the part's largest)")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("scale", help="throughput and efficiency against the GPU count", epilog=EPILOG)
    job_args(p)
    p.add_argument("--gpus", type=_gpu_list, default=None, metavar="64,128,...",
                   help="GPU counts (default: powers of two from 1/8 to 8x the job)")
    p.add_argument("--mode", choices=("strong", "weak"), default="strong",
                   help="strong: fixed global batch; weak: fixed batch per replica")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_scale)

    # ---- other tools' files in and out: one subcommand per format, in these two groups ----------
    p = sub.add_parser("import", help="read another tool's output into a design (ibnetdiscover, slurm-topology, ...)",
                       epilog=EPILOG)
    import_sub = p.add_subparsers(dest="importer", metavar="FORMAT")
    p = sub.add_parser("export", help="write a design in another tool's format (slurm-topology, ...)", epilog=EPILOG)
    export_sub = p.add_subparsers(dest="exporter", metavar="FORMAT")

    g = export_sub.add_parser("megatron", help="the job as Megatron-LM arguments (or Megatron-Bridge overrides)",
                              epilog=EPILOG)
    g.add_argument("file", metavar="FILE", help="a cluster YAML file with a workload")
    g.add_argument("--nemo", action="store_true",
                   help="Megatron-Bridge (NeMo) recipe overrides, model.tensor_model_parallel_size=8 ...")
    g.add_argument("--one-line", action="store_true", help="one line instead of one flag per continued line")
    g.add_argument("--job", metavar="NAME", default=None, help="with spec.jobs: the job to export (default: the first)")
    g.add_argument("-o", "--output", default=None, help="write here (atomically) instead of stdout")
    g.set_defaults(func=cmd_export_megatron)

    g = import_sub.add_parser("megatron", help="a Megatron-LM launch line or script into the design's job",
                              epilog=EPILOG)
    g.add_argument("source", metavar="ARGS-OR-FILE",
                   help="a launch script (torchrun ... pretrain_gpt.py --flags), the flags in quotes, or - for stdin")
    g.add_argument("--into", required=True, help="the YAML design whose job it sets (rewritten atomically)")
    g.add_argument("--job", metavar="NAME", default=None, help="with spec.jobs: the job it sets (default: the first)")
    g.set_defaults(func=cmd_import_megatron)

    g = import_sub.add_parser("ibnetdiscover", help="an InfiniBand fabric from `ibnetdiscover` output", epilog=EPILOG)
    g.add_argument("file", metavar="FILE", help="output of ibnetdiscover (or ibnetdiscover -p)")
    g.add_argument("-o", "--output", required=True, help="the YAML design to write")
    g.add_argument("--gpu", default="H100", help="accelerator of every server (not in the output; default H100)")
    g.add_argument("--gpus-per-node", type=_positive_int, default=None,
                   help="GPUs per server (default: one per HCA port, at most 8)")
    g.add_argument("--link-gbps", type=_positive_float, default=400.0,
                   help="speed of cables the output shows no speed for (old ibnetdiscover; default 400)")
    g.add_argument("--name", default=None, help="the design's name (default: the file's name)")
    g.set_defaults(func=cmd_import_ibnetdiscover)

    g = import_sub.add_parser("slurm-topology", help="switches and nodes from Slurm's topology.conf", epilog=EPILOG)
    g.add_argument("file", metavar="topology.conf", help="SwitchName=... (tree) or BlockName=... (block) lines")
    g.add_argument("-o", "--output", required=True, help="the YAML design to write")
    g.add_argument("--gpu", default="H100", help="accelerator of every node (default H100)")
    g.add_argument("--gpus-per-node", type=_positive_int, default=8)
    g.add_argument("--link-gbps", type=_positive_float, default=400.0,
                   help="speed of every cable (LinkSpeed= is in arbitrary units; default 400)")
    g.add_argument("--switch-radix", type=_positive_int, default=64, help="ports per switch (at least those used)")
    g.add_argument("--fabric", choices=("infiniband", "ethernet"), default="infiniband")
    g.add_argument("--name", default=None, help="the design's name (default: the file's name)")
    g.set_defaults(func=cmd_import_slurm_topology)

    g = export_sub.add_parser("slurm-topology", help="topology.conf (tree form) of a design", epilog=EPILOG)
    g.add_argument("file", metavar="FILE", help="a cluster YAML file")
    g.add_argument("-o", "--output", default=None, help="write here (atomically) instead of stdout")
    g.set_defaults(func=cmd_export_slurm_topology)

    g = import_sub.add_parser("nccl-topo", help="servers' insides from NCCL's NCCL_TOPO_DUMP_FILE XML", epilog=EPILOG)
    g.add_argument("file", metavar="topo.xml", help="the XML NCCL writes with NCCL_TOPO_DUMP_FILE=topo.xml")
    g.add_argument("--into", required=True, help="the YAML design whose servers take it (rewritten atomically)")
    g.add_argument("--node", action="append", default=None, metavar="ID",
                   help="a server to change (repeatable); default: every server with the XML's GPU count")
    g.set_defaults(func=cmd_import_nccl_topo)

    p = sub.add_parser("connect", help="cable a server to its rail leaves like its neighbours (free ports chosen)",
                       epilog=EPILOG)
    p.add_argument("file", metavar="FILE", help="a cluster YAML file")
    p.add_argument("--node", required=True, metavar="ID", help="the server to cable (it has no NIC cables yet)")
    p.add_argument("-o", "--output", default=None, help="write here (atomically); default: rewrite FILE")
    p.set_defaults(func=cmd_connect)

    p = sub.add_parser("calibrate", help="fit link efficiencies to nccl-tests logs", epilog=EPILOG)
    p.add_argument("file", metavar="FILE", help="a cluster YAML file (the cluster the logs ran on)")
    p.add_argument("logs", metavar="LOG", nargs="+", help="nccl-tests stdout (the text table) or its -J JSON file")
    p.add_argument("-o", "--output", default=None, help="write the calibrated design here (atomically)")
    p.add_argument("--op", default=None, choices=("all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                                                  "alltoall", "send_recv", "sendrecv", "broadcast", "reduce"),
                   help="the collective of logs that do not name their binary")
    p.add_argument("--tolerance-pct", type=float, default=1.0,
                   help="how far (points of relative error) a row may move the wrong way (default 1)")
    p.set_defaults(func=cmd_calibrate)
    return parser


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        _one_blas_thread()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    args.as_program = argv is None  # the whole process is this command (not a caller's function)
    try:
        return args.func(args)
    except DesignerError as exc:
        _report(exc.problems)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # a bug: say so briefly, the traceback only on request
        _err(f"designer: internal error: {type(exc).__name__}: {exc}")
        if os.environ.get("DESIGNER_DEBUG"):
            import traceback  # here: only a bug needs it (a few ms of every start)

            traceback.print_exc()
        else:
            _err("set DESIGNER_DEBUG=1 for the traceback, and please report it")
        return EXIT_SOFTWARE


def _one_blas_thread() -> None:
    """As a program, numpy's BLAS (OpenBLAS) starts one thread, not one per core: no command multiplies
    large matrices (calibrate's are a few dozen rows), and starting the pool cost 40-60 ms of every
    `designer evaluate` (a tenth of it at 16k GPUs). A value the user set is kept; it is read when numpy
    is first imported, which the commands do after this."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _exit_at_once(code: int) -> None:
    """End the process now, its output flushed: a large design is ~10^6 objects that the interpreter
    would free one by one on the way out (~0.8 s of CPU at 131k GPUs) for nothing. Only as a program
    (args.as_program: main() without argv), after a command that leaves no files, threads or handlers
    behind."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # the reader has gone (a closed pipe): nothing more to say
        pass
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
