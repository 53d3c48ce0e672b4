"""`designer evaluate FILE [--json]`: predict one training step: breakdown, memory, bottlenecks
(docs/contract.md section 5 for the JSON)."""
from __future__ import annotations

import json

from ..core.problems import EXIT_OK
from .common import EPILOG, err
from .job import add_job_arguments, check_errors, load_job, raise_check_errors


def register(subparsers) -> None:
    p = subparsers.add_parser("evaluate", help="predict one training step: breakdown, memory, bottlenecks",
                              epilog=EPILOG)
    add_job_arguments(p)
    p.add_argument("--json", action="store_true", help="one JSON object (docs/contract.md section 5)")
    p.add_argument("--events", action="store_true", help="with --json: include the per-device events")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..core.gc_pause import collector_paused

    with collector_paused():  # one short run making ~10^5 acyclic objects: ~15 % of its CPU at 16k
        return _print_evaluation(args)


def _print_evaluation(args) -> int:
    from ..core.engine.evaluate import Engine

    doc = load_job(args, check=False, keep_link_fields=True)
    # nothing edits the design from here: the check, the engine and the link classes share one reading
    # of each field of its links (Document.held_still)
    with doc.held_still():
        errors = check_errors(doc)
        if errors:
            raise_check_errors(errors, args)
        return _print_result(args, doc, Engine().evaluate(doc))


def _print_result(args, doc, result) -> int:
    for w in result.warnings:
        err(f"warning: {w}")
    if args.json:
        from ..core.analysis.link_load import classes_json

        from ..core.analysis.error_bars import step_time_range

        out = result.as_json(events=args.events)
        out["link_classes"] = classes_json(result, doc)  # symmetric links as one row (docs/contract.md, Link load)
        span = step_time_range(result, doc)  # the engine's 80 % range on published runs of this class
        out["step_time_range_s"], out["error_class"] = list(span.range_s), span.error_class
        print(json.dumps(out, indent=2))  # one write: json.dump writes each of its ~6,000 pieces apart
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


def _range_line(result, doc) -> str:
    from ..core.analysis.error_bars import step_time_range

    span = step_time_range(result, doc)
    line = (f"    80 % range    {span.range_s[0]:8.3f} - {span.range_s[1]:.3f} s  (the engine's error on "
            f"{span.runs} published {span.error_class.split(' (')[0]} runs)")
    return line + (f"\n                  note: {span.note}" if span.note else "")


def format_result(result, doc) -> str:
    p = result.plan
    lines = [f"{doc.metadata.name}: {result.num_gpus} x {p['accelerator']}, TP {p['tp']} PP {p['pp']} CP {p['cp']} "
             f"EP {p['ep']} DP {p['dp']}, {p['schedule']}" + (f" (v={p['vp']})" if p['vp'] > 1 else "")
             + f", {p['num_microbatches']} micro-batches",
             "",
             f"  step time       {result.step_time_s:10.3f} s",
             _range_line(result, doc),
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
                  + ("" if result.fits_with_headroom else "  DOES NOT FIT" if not result.fits_in_memory
                     else f"  FITS ONLY WITHOUT HEADROOM (limit {result.memory_limit_gib:.1f} GiB)")]
    if result.bottlenecks:
        lines += ["", "  top bottlenecks"]
        for b in result.bottlenecks[:5]:
            lines.append(f"    {b['kind']:15} {b['resource']:45} exposed {b['exposed_s']:.3f} s")
    return "\n".join(lines)


