"""The importers as one list: what each reads, how a file of its kind is recognised, and one call
that reads a file into a design with its import summary (the app's File > Import and the CLI's
`designer import` say the same things)."""
from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field

from ...model.document import Document
from ...problems import DesignerError, Problem


@dataclass(frozen=True)
class ImportFormat:
    """A file format Designer imports: its CLI key, menu title and what it brings into a design."""
    key: str  # the CLI's `designer import KEY`
    title: str  # the menu's words
    what: str  # "ibnetdiscover output": what a message calls the file
    file_filter: str  # the file dialog's filter
    kind: str  # "fabric": a new design; "servers": into the open design's servers; "job": its job


FORMATS = (
    ImportFormat("ibnetdiscover", "InfiniBand Fabric (ibnetdiscover)...", "ibnetdiscover output",
                 "ibnetdiscover output (*.topo *.txt *.out *.log);;All files (*)", "fabric"),
    ImportFormat("iblinkinfo", "InfiniBand Fabric (iblinkinfo)...", "iblinkinfo output",
                 "iblinkinfo output (*.txt *.out *.log);;All files (*)", "fabric"),
    ImportFormat("slurm-topology", "Slurm topology.conf...", "a Slurm topology.conf",
                 "Slurm topology (*.conf);;All files (*)", "fabric"),
    ImportFormat("nccl-topo", "NCCL Topology XML (servers' insides)...", "an NCCL topology XML",
                 "NCCL topology (*.xml);;All files (*)", "servers"),
    ImportFormat("megatron", "Megatron-LM Launch Script (the job)...", "a Megatron-LM launch script",
                 "Launch scripts (*.sh *.slurm *.sbatch *.txt);;All files (*)", "job"),
)
BY_KEY = {f.key: f for f in FORMATS}

_FIX = {
    "ibnetdiscover": "give the output of `ibnetdiscover > fabric.txt` (or `ibnetdiscover -p`)",
    "iblinkinfo": "give the whole output of `iblinkinfo` (without --line), as the tool printed it",
    "slurm-topology": "give Slurm's topology.conf (SwitchName=... Nodes=... lines)",
    "nccl-topo": "give the file NCCL writes with NCCL_TOPO_DUMP_FILE=topo.xml (NCCL_DEBUG=INFO shows where)",
    "megatron": "give the launch script (torchrun ... pretrain_gpt.py --flags)",
}

# What each format's text shows in its first lines (a design's YAML shows none of these).
_SIGNS = (
    ("ibnetdiscover", re.compile(r"^(switchguid=|caguid=|# Topology file: generated|(Switch|Ca)\s+\d+\s+\")",
                                 re.M)),
    ("iblinkinfo", re.compile(r"^(Switch|CA): (0x[0-9a-fA-F]+ )?.*:\s*$\n\s+(0x[0-9a-fA-F]+\s+)?\d+\s+\d+\[", re.M)),
    ("slurm-topology", re.compile(r"^\s*(SwitchName|BlockName)\s*=", re.M | re.I)),
    ("nccl-topo", re.compile(r"^\s*<system\s+version=", re.M)),
    ("megatron", re.compile(r"(pretrain_gpt\.py|--tensor-model-parallel-size|--num-layers\b)")),
)
SNIFF_BYTES = 64 * 1024


def recognise(path: str | os.PathLike) -> ImportFormat | None:
    """The importer whose format the file's first 64 KiB show, or None (a design, or unknown)."""
    try:
        with open(path, "rb") as f:
            head = f.read(SNIFF_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None
    for key, sign in _SIGNS:
        if sign.search(head):
            return BY_KEY[key]
    return None


def fabric_counts(doc: Document, degraded: int = 0) -> str:
    """The import summary's first line: hosts by role, GPUs, switches by tier, links, racks."""
    c = doc.counts()
    tiers = Counter(s.tier for s in doc.switches)
    shown = ", ".join(f"{tiers[t]} {t}" for t in ("leaf", "spine", "core") if tiers[t])
    roles = Counter(n.role for n in doc.nodes)
    others = ", ".join(f"{roles[r]} {r}" for r in ("storage", "login", "service") if roles[r])
    servers = f"{roles['compute']} GPU servers" + (f" + {others} host(s)" if others else "")
    text = (f"{servers}, {c['gpus']} GPUs, {c['switches']} switches ({shown or 'none'}), "
            f"{c['links']} links, {c['racks']} racks")
    if degraded:
        text += f"; {degraded} link(s) flagged as degraded"
    return text


def check_imported(doc: Document, source: str) -> None:
    """DesignerError (exit 65, naming `source`) when the design read would not pass `designer
    validate`: what an import gives, validate reads."""
    from ...design_check import check_document
    from ...problems import EXIT_DATAERR

    errors = [p for p in check_document(doc) if p.severity == "error"]
    if errors:
        raise DesignerError([Problem(f"the design read from this file would not validate: {p.message}", file=source,
                                     line=1, fix=p.fix or "report the file; nothing was written")
                             for p in errors[:10]], EXIT_DATAERR)


@dataclass
class ImportSummary:
    """What an import read, as the CLI prints it and the app's summary dialog shows it."""

    source: str
    rows: list[tuple[str, str]] = field(default_factory=list)  # (what, value): switches, hosts, GPUs, tiers...
    notes: list[str] = field(default_factory=list)  # what was read, inferred and guessed
    warnings: list[str] = field(default_factory=list)


@dataclass
class FabricImport:
    """An imported fabric: the new design, the importer's messages and their summary."""
    doc: Document
    messages: list[str]  # the importer's lines, as `designer import` prints them
    summary: ImportSummary


def summarize_fabric(doc: Document, messages: list[str], source: str) -> ImportSummary:
    """The summary of an imported fabric: counts by kind, tiers with their oversubscription, and the
    importer's lines split into what was read/inferred/guessed (notes) and warnings."""
    from .fabric import describe_tiers

    tiers = Counter(s.tier for s in doc.switches)
    roles = Counter(n.role for n in doc.nodes)
    computing = [n for n in doc.nodes if n.role == "compute"]
    service = ", ".join(f"{roles[r]} {r}" for r in ("storage", "login", "service") if roles[r])
    degraded = sum(1 for link in doc.links if link.note.startswith("degraded"))
    rows = [
        ("Switches", f"{len(doc.switches)} ("
         + (", ".join(f"{tiers[t]} {t}" for t in ("leaf", "spine", "core") if tiers[t]) or "none") + ")"),
        ("GPU servers", str(len(computing))),
        ("Compute GPUs", f"{sum(n.accelerator_count for n in computing):,}"
         + (f" ({computing[0].accelerator})" if computing else "")),
        ("Service hosts", service or "none"),
        ("Cables", f"{len(doc.links)}" + (f" ({degraded} flagged as degraded)" if degraded else "")),
        ("Racks", str(len(doc.racks))),
    ]
    tier_text = describe_tiers(doc)
    if tier_text:
        rows.append(("Tiers and oversubscription", tier_text.split(": ", 1)[-1]))
    notes, warnings = [], []
    for line in messages:
        text = line[len(source) + 2:] if line.startswith(f"{source}: ") else line
        if text.startswith("warning: ") or "degraded" in text or "would not" in text or "cannot" in text:
            warnings.append(text.removeprefix("warning: "))
        else:
            notes.append(text)
    return ImportSummary(source, rows, notes, warnings)


def import_fabric(key: str, path: str, *, gpu: str = "H100", gpus_per_node: int | None = None,
                  compute: str | None = None) -> FabricImport:
    """Read `path` with the fabric importer `key` (ibnetdiscover, iblinkinfo, slurm-topology) as the
    CLI does with its defaults; `compute`: the regular expression of the GPU servers' names (the CLI's
    --compute). DesignerError (located) on a bad file or one that would not validate."""
    from .source import read_source

    fmt = BY_KEY[key]
    text = read_source(path, fmt.what, _FIX[key])
    if key == "ibnetdiscover":
        from .ibnetdiscover import import_ibnetdiscover as run
    elif key == "iblinkinfo":
        from .iblinkinfo import import_iblinkinfo as run
    elif key == "slurm-topology":
        from .slurm_topology import import_slurm_topology as run

        if gpus_per_node is None:
            gpus_per_node = 8  # the CLI's default: topology.conf has no HCA counts to guess from
    else:
        raise ValueError(f"{key} is not a fabric importer")
    doc, messages = run(text, path, gpu=gpu, gpus_per_node=gpus_per_node, compute=compute)
    check_imported(doc, path)
    return FabricImport(doc, list(messages), summarize_fabric(doc, list(messages), path))


def sourced_files_beside(script: str):
    """What `. CONFIG.sh` in a launch script reads: the file beside the script, as bash run from the
    script's folder would (None when there is none)."""
    from .source import read_source

    folder = os.path.dirname(os.path.abspath(script))

    def include(path: str) -> str | None:
        full = os.path.normpath(os.path.join(folder, path))
        if not os.path.isfile(full):
            return None
        try:
            return read_source(full, "a sourced launch script", "")
        except DesignerError:
            return None
    return include


def read_file(key: str, path: str) -> str:
    """The text of an importer's input file (exit 66/65 located, in that format's words)."""
    from .source import read_source

    return read_source(path, BY_KEY[key].what, _FIX[key])


def import_servers(doc: Document, path: str) -> FabricImport:
    """An NCCL topology XML written into `doc`'s servers with as many GPUs (`doc` is changed: pass a
    copy). DesignerError when the file is bad or the servers would no longer fit the design."""
    from ...design_check import check_document
    from .nccl_topo import apply_topology, describe, parse_nccl_topo

    topo = parse_nccl_topo(read_file("nccl-topo", path), path)
    errors_before = {p.format() for p in check_document(doc) if p.severity == "error"}
    applied = apply_topology(doc, topo, None)
    new = [p for p in check_document(doc) if p.severity == "error" and p.format() not in errors_before]
    if new:
        for p in new[:10]:
            p.file = path
        raise DesignerError(new[:10] + [Problem("the design is unchanged: the topology does not fit it as it is",
                                                fix="remove the cables or servers named above first")])
    shown = ", ".join(applied.node_ids[:6]) + (" ..." if len(applied.node_ids) > 6 else "")
    lines = describe(topo)
    rows = [("Servers changed", f"{len(applied.node_ids)} ({shown})"), ("Each server", lines[0])]
    warnings = [m for m in applied.messages if "warning" in m]
    notes = lines[1:] + [m for m in applied.messages if "warning" not in m]
    return FabricImport(doc, lines + applied.messages, ImportSummary(path, rows, notes, warnings))


@dataclass
class JobImport:
    """An imported job: the workload and parallelism read from a launch script, and its summary."""
    workload: object  # Workload | None
    parallelism: object  # Parallelism
    summary: ImportSummary


def import_job(path: str, workload, parallelism) -> JobImport:
    """A Megatron-LM launch script read over the job (`workload`, `parallelism`) it replaces, as
    `designer import megatron` does; the summary names every flag it did not use."""
    from ...model.catalog import default_catalog
    from .megatron_args import read_megatron

    imported = read_megatron(read_file("megatron", path), path, workload, parallelism, default_catalog().presets(),
                             include=sourced_files_beside(path))
    w, p = imported.workload, imported.parallelism
    rows = []
    if w is not None:
        from ...model.job import resolve_workload

        try:  # the preset's values where the script says none
            full = resolve_workload(w, default_catalog().presets())
        except KeyError:  # an unknown preset: the job's check names it
            full = w
        rows.append(("Model", f"{w.preset or 'custom'} ({full.num_layers} layers, hidden {full.hidden_size})"))
        rows.append(("Batch", f"global {full.global_batch_size}, micro {full.micro_batch_size}, "
                              f"sequence {full.seq_length}"))
    sizes = (("TP", p.tensor_model_parallel_size), ("PP", p.pipeline_model_parallel_size),
             ("CP", p.context_parallel_size), ("EP", p.expert_model_parallel_size), ("DP", p.data_parallel_size),
             ("GPUs", p.num_gpus))
    plan = [f"{name} {size}" for name, size in sizes if size]
    rows.append(("Plan", ", ".join(plan) or "as the design had it"))
    rows.append(("Read", "the whole job" if imported.full else "the job keys the script gives"))
    warnings = [f"{item} (ignored)" for item in imported.unknown]
    warnings += [f"read, not costed: {item}" for item in imported.not_costed]
    notes = list(imported.notes)
    if imported.not_inputs:
        notes.append("not a design input (ignored): " + " ".join(dict.fromkeys(imported.not_inputs)))
    return JobImport(w, p, ImportSummary(path, rows, notes, warnings))
