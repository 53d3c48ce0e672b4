"""The work of `designer export megatron` and `designer import megatron`.

export: the file's job as Megatron-LM arguments (core/export/megatron_args.py), or with --nemo as
Megatron-Bridge overrides; keys no flag states are named on stderr. import: a launch line or script
(core/io/importers/megatron_args.py) into the file's job, rewritten atomically; every argument it
does not use is named on stderr.
"""
from __future__ import annotations

import os
import sys

from ..core.problems import EXIT_OK
from .common import EPILOG, design_errors, err as _err, save_validated, writing_output


def register_export(formats) -> None:
    g = formats.add_parser("megatron", help="the job as Megatron-LM arguments (or Megatron-Bridge overrides)",
                           epilog=EPILOG)
    g.add_argument("file", metavar="FILE", help="a cluster YAML file with a workload")
    g.add_argument("--nemo", action="store_true",
                   help="Megatron-Bridge (NeMo) recipe overrides, model.tensor_model_parallel_size=8 ...")
    g.add_argument("--one-line", action="store_true", help="one line instead of one flag per continued line")
    g.add_argument("--job", metavar="NAME", default=None, help="with spec.jobs: the job to export (default: the first)")
    g.add_argument("-o", "--output", default=None, help="write here (atomically) instead of stdout")
    g.set_defaults(func=export_megatron)


def register_import(formats) -> None:
    g = formats.add_parser("megatron", help="a Megatron-LM launch line or script into the design's job",
                           epilog=EPILOG)
    g.add_argument("source", metavar="ARGS-OR-FILE",
                   help="a launch script (torchrun ... pretrain_gpt.py --flags), the flags in quotes, or - for stdin")
    g.add_argument("--into", required=True, help="the YAML design whose job it sets (rewritten atomically)")
    g.add_argument("--job", metavar="NAME", default=None, help="with spec.jobs: the job it sets (default: the first)")
    g.set_defaults(func=import_megatron)


def export_megatron(args) -> int:
    from ..core.export.megatron_args import bridge_overrides, megatron_line
    from ..core.io import load_document
    from ..core.io.files import atomic_write_text
    from ..core.model.catalog import default_catalog

    doc = load_document(args.file)
    workload, parallelism = _job_of(doc, getattr(args, "job", None))
    line = megatron_line(workload, parallelism, default_catalog().presets())
    if args.nemo:
        items = bridge_overrides(line, parallelism)
        text = (" ".join(items) if args.one_line else " \\\n".join(items)) + "\n"
    else:
        text = (line.one_line() if args.one_line else line.script()) + "\n"
    for key, why in line.left_out.items():
        _err(f"not in the line: {key}: {why}")
    if args.output:
        with writing_output(args.output):
            atomic_write_text(args.output, text)
        _err(f"wrote {args.output}")
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _job_index(doc, name: str | None) -> int | None:
    """Which entry of spec.jobs a line is for (--job NAME, default the first); None without spec.jobs."""
    from ..core.problems import DesignerError, Problem

    if not doc.spec.jobs:
        if name is not None:
            raise DesignerError([Problem("the design has one job (no spec.jobs): leave out --job", "--job")])
        return None
    from ..core.model.jobs import job_index

    return job_index(doc, name)


def _job_of(doc, name: str | None):
    """(workload, parallelism) of the design's job, or of spec.jobs[--job]."""
    index = _job_index(doc, name)
    if index is None:
        return doc.spec.workload, doc.spec.parallelism
    job = doc.spec.jobs[index]
    return job.workload, job.parallelism


def read_source_text(source: str) -> tuple[str, str]:
    """(text, name for messages): a file's text, stdin for '-', else the argument itself as a line."""
    from ..core.io.importers.source import read_source

    if source == "-":
        return sys.stdin.read(), "<stdin>"
    looks_like_args = source.lstrip().startswith("-") or (" " in source and not os.path.exists(source))
    if looks_like_args:
        return source, "<arguments>"
    return read_source(source, "a Megatron-LM launch line or script",
                       "give the launch script, or the flags in quotes: '--tensor-model-parallel-size 8 ...'"), source


def _sourced_files_beside(script: str):
    from ..core.io.importers.formats import sourced_files_beside

    return sourced_files_beside(script)


def import_megatron(args) -> int:
    from ..core.io import load_document
    from ..core.io.importers.megatron_args import read_megatron
    from ..core.model.catalog import default_catalog

    doc = load_document(args.into)  # the target first: a missing design is said before the line is read
    text, name = read_source_text(args.source)
    index = _job_index(doc, getattr(args, "job", None))
    workload, parallelism = _job_of(doc, getattr(args, "job", None))
    imported = read_megatron(text, name, workload, parallelism, default_catalog().presets(),
                             include=_sourced_files_beside(args.source) if name == args.source else None)
    for item in imported.unknown:
        _err(f"{item} (ignored)")
    if imported.not_inputs:
        _err("not a design input (ignored): " + " ".join(dict.fromkeys(imported.not_inputs)))
    for item in imported.not_costed:
        _err(f"read, not costed: {item}")
    for note in imported.notes:
        _err(f"note: {note}")
    before = design_errors(doc)
    if index is None:
        doc.set_job(imported.workload, imported.parallelism)
    else:  # a design with several jobs: the line is that job's (spec.jobs[index])
        import dataclasses

        jobs = list(doc.spec.jobs)
        jobs[index] = dataclasses.replace(jobs[index], workload=imported.workload, parallelism=imported.parallelism)
        doc.set_jobs(jobs)
    save_validated(doc, args.into, before, "the design with this launch line's job")
    from ..core.model.plan import check_plan

    for p in check_plan(doc):
        _err(f"warning: {p.format()}")
    what = "the job" if imported.full else "the job keys the line gives"
    _err(f"wrote {args.into}: {what}, from {name}")
    return EXIT_OK


def plan_megatron_args(doc, point) -> str | None:
    """One plan of `designer search` as one line of Megatron-LM arguments (None: no workload)."""
    from ..core.export.megatron_args import plan_line
    from ..core.model.catalog import default_catalog
    from ..core.problems import DesignerError

    if doc.spec.workload is None:
        return None
    try:
        return plan_line(doc, point, default_catalog().presets()).one_line()
    except DesignerError:
        return None


def add_megatron_args(doc, result, data: dict) -> None:
    """`megatron_args` in each plan of `designer search --json`."""
    for row, shown in zip(result.top, data.get("top", [])):
        shown["megatron_args"] = plan_megatron_args(doc, row["point"])
    if result.current and data.get("current"):
        data["current"]["megatron_args"] = plan_megatron_args(doc, result.current["point"])
