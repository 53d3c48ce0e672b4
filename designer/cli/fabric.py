"""The work of `designer import ibnetdiscover|slurm-topology` and `designer export slurm-topology`.

The formats live in designer/core/io/importers; import_export.py holds the `import` and `export` groups.
"""
from __future__ import annotations

import sys
from collections import Counter

from ..core.problems import EXIT_OK
from .common import EPILOG, err as _err, positive_float, positive_int, writing_output


def register_import(formats) -> None:
    g = formats.add_parser("ibnetdiscover", help="an InfiniBand fabric from `ibnetdiscover` output", epilog=EPILOG)
    g.add_argument("file", metavar="FILE", help="output of ibnetdiscover (or ibnetdiscover -p)")
    g.add_argument("-o", "--output", required=True, help="the YAML design to write")
    g.add_argument("--gpu", default="H100", help="accelerator of every server (not in the output; default H100)")
    g.add_argument("--gpus-per-node", type=positive_int, default=None,
                   help="GPUs per server (default: one per HCA port, at most 8)")
    g.add_argument("--link-gbps", type=positive_float, default=400.0,
                   help="speed of cables the output shows no speed for (old ibnetdiscover; default 400)")
    g.add_argument("--name", default=None, help="the design's name (default: the file's name)")
    g.set_defaults(func=import_ibnetdiscover)

    g = formats.add_parser("slurm-topology", help="switches and nodes from Slurm's topology.conf", epilog=EPILOG)
    g.add_argument("file", metavar="topology.conf", help="SwitchName=... (tree) or BlockName=... (block) lines")
    g.add_argument("-o", "--output", required=True, help="the YAML design to write")
    g.add_argument("--gpu", default="H100", help="accelerator of every node (default H100)")
    g.add_argument("--gpus-per-node", type=positive_int, default=8)
    g.add_argument("--link-gbps", type=positive_float, default=400.0,
                   help="speed of every cable (LinkSpeed= is in arbitrary units; default 400)")
    g.add_argument("--switch-radix", type=positive_int, default=64, help="ports per switch (at least those used)")
    g.add_argument("--fabric", choices=("infiniband", "ethernet"), default="infiniband")
    g.add_argument("--name", default=None, help="the design's name (default: the file's name)")
    g.set_defaults(func=import_slurm_topology)


def register_export(formats) -> None:
    g = formats.add_parser("slurm-topology", help="topology.conf (tree form) of a design", epilog=EPILOG)
    g.add_argument("file", metavar="FILE", help="a cluster YAML file")
    g.add_argument("-o", "--output", default=None, help="write here (atomically) instead of stdout")
    g.set_defaults(func=export_slurm_topology)


def _summary(path: str, doc, degraded: int = 0) -> str:
    c = doc.counts()
    tiers = Counter(s.tier for s in doc.switches)
    shown = ", ".join(f"{tiers[t]} {t}" for t in ("leaf", "spine", "core") if tiers[t])
    text = (f"wrote {path}: {c['nodes']} servers, {c['gpus']} GPUs, {c['switches']} switches ({shown or 'none'}), "
            f"{c['links']} links, {c['racks']} racks")
    if degraded:
        text += f"; {degraded} link(s) flagged as degraded"
    return text


def _write(doc, output: str) -> None:
    from ..core.io import save_document

    with writing_output(output):
        save_document(doc, output)  # atomic: the old file stays whole until the new one is complete


def import_ibnetdiscover(args) -> int:
    from ..core.io.importers.ibnetdiscover import import_ibnetdiscover as run
    from ..core.io.importers.source import read_source

    text = read_source(args.file, "ibnetdiscover output",
                       "give the output of `ibnetdiscover > fabric.txt` (or `ibnetdiscover -p`)")
    doc, messages = run(text, args.file, gpu=args.gpu, gpus_per_node=args.gpus_per_node,
                        link_gbps=args.link_gbps, name=args.name)
    for line in messages:
        _err(line)
    _write(doc, args.output)
    _err(_summary(args.output, doc, sum(1 for link in doc.links if link.note.startswith("degraded"))))
    return EXIT_OK


def import_slurm_topology(args) -> int:
    from ..core.io.importers.slurm_topology import import_slurm_topology as run
    from ..core.io.importers.source import read_source

    text = read_source(args.file, "a Slurm topology.conf",
                       "give Slurm's topology.conf (SwitchName=... Nodes=... lines)")
    doc, messages = run(text, args.file, gpu=args.gpu, gpus_per_node=args.gpus_per_node,
                        link_gbps=args.link_gbps, switch_radix=args.switch_radix, fabric=args.fabric,
                        name=args.name)
    for line in messages:
        _err(line)
    _write(doc, args.output)
    _err(_summary(args.output, doc))
    return EXIT_OK


def export_slurm_topology(args) -> int:
    from ..core.io import load_document
    from ..core.io.files import atomic_write_text
    from ..core.io.importers.slurm_topology import export_topology_conf

    doc = load_document(args.file)
    text = export_topology_conf(doc, args.file)
    if args.output:
        with writing_output(args.output):
            atomic_write_text(args.output, text)
        _err(f"wrote {args.output}: {sum(1 for l in text.splitlines() if l.startswith('SwitchName='))} switches")
    else:
        sys.stdout.write(text)
    return EXIT_OK
