"""The work of `designer import ibnetdiscover|iblinkinfo|slurm-topology` and `designer export slurm-topology`.

The formats live in designer/core/io/importers; import_export.py holds the `import` and `export` groups.
"""
from __future__ import annotations

import sys

from ..core.problems import EXIT_OK
from .common import EPILOG, err as _err, positive_float, positive_int, writing_output


def _host_role_args(g) -> None:
    g.add_argument("--compute", metavar="REGEX", default=None,
                   help="hosts whose name matches are GPU servers; the others storage, login or service hosts")
    g.add_argument("--hosts", metavar="MAP", default=None,
                   help="a file of `PATTERN ROLE [NAME]` lines (roles: compute, storage, login, service); PATTERN is "
                        "a host-name pattern or an HCA's GUID (ibnetdiscover), NAME renames that host")


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
    _host_role_args(g)
    g.set_defaults(func=import_ibnetdiscover)

    g = formats.add_parser("iblinkinfo", help="an InfiniBand fabric from iblinkinfo's output", epilog=EPILOG)
    g.add_argument("file", metavar="FILE", help="what `iblinkinfo > links.txt` (or `iblinkinfo --line`) printed")
    g.add_argument("-o", "--output", required=True, help="the YAML design to write")
    g.add_argument("--gpu", default="H100", help="accelerator of every server (default H100)")
    g.add_argument("--gpus-per-node", type=positive_int, default=None,
                   help="GPUs per server (default: one per HCA port, at most 8)")
    g.add_argument("--name", default=None, help="the design's name (default: the file's name)")
    _host_role_args(g)
    g.set_defaults(func=import_iblinkinfo)

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
    _host_role_args(g)
    g.set_defaults(func=import_slurm_topology)


def register_export(formats) -> None:
    g = formats.add_parser("slurm-topology", help="topology.conf (tree form) of a design", epilog=EPILOG)
    g.add_argument("file", metavar="FILE", help="a cluster YAML file")
    g.add_argument("--form", choices=("tree", "block"), default="tree",
                   help="topology/tree (switches; default) or topology/block (one block per leaf)")
    g.add_argument("-o", "--output", default=None, help="write here (atomically) instead of stdout")
    g.set_defaults(func=export_slurm_topology)


def _summary(path: str, doc, degraded: int = 0) -> str:
    from ..core.io.importers.fabric import describe_tiers
    from ..core.io.importers.formats import fabric_counts

    tiers = describe_tiers(doc)
    return f"wrote {path}: {fabric_counts(doc, degraded)}" + (f"\n{tiers}" if tiers else "")


def _write(doc, output: str, source: str = "") -> None:
    """Save the imported design, only when it passes `designer validate` (exit 65 otherwise, the
    target untouched): what an import writes, validate reads."""
    from ..core.io import save_document
    from ..core.io.importers.formats import check_imported

    check_imported(doc, source)
    with writing_output(output):
        save_document(doc, output)  # atomic: the old file stays whole until the new one is complete


def _host_rules(args):
    """--hosts MAP read (exit 66/65 with FILE:LINE), or None."""
    path = getattr(args, "hosts", None)
    if not path:
        return None
    from ..core.io.importers.host_roles import MAP_FIX, read_host_map
    from ..core.io.importers.source import read_source

    return read_host_map(read_source(path, "a host map", MAP_FIX), path)


def import_ibnetdiscover(args) -> int:
    from ..core.io.importers.ibnetdiscover import import_ibnetdiscover as run
    from ..core.io.importers.source import read_source

    text = read_source(args.file, "ibnetdiscover output",
                       "give the output of `ibnetdiscover > fabric.txt` (or `ibnetdiscover -p`)")
    doc, messages = run(text, args.file, gpu=args.gpu, gpus_per_node=args.gpus_per_node,
                        link_gbps=args.link_gbps, name=args.name, compute=args.compute,
                        host_rules=_host_rules(args), host_map_file=args.hosts or "--hosts")
    for line in messages:
        _err(line)
    _write(doc, args.output, args.file)
    _err(_summary(args.output, doc, sum(1 for link in doc.links if link.note.startswith("degraded"))))
    return EXIT_OK


def import_iblinkinfo(args) -> int:
    from ..core.io.importers.iblinkinfo import FIX
    from ..core.io.importers.iblinkinfo import import_iblinkinfo as run
    from ..core.io.importers.source import read_source

    text = read_source(args.file, "iblinkinfo output", FIX)
    doc, messages = run(text, args.file, gpu=args.gpu, gpus_per_node=args.gpus_per_node, name=args.name,
                        compute=args.compute, host_rules=_host_rules(args), host_map_file=args.hosts or "--hosts")
    for line in messages:
        _err(line)
    _write(doc, args.output, args.file)
    _err(_summary(args.output, doc))
    return EXIT_OK


def import_slurm_topology(args) -> int:
    from ..core.io.importers.slurm_topology import import_slurm_topology as run
    from ..core.io.importers.source import read_source

    text = read_source(args.file, "a Slurm topology.conf",
                       "give Slurm's topology.conf (SwitchName=... Nodes=... lines)")
    doc, messages = run(text, args.file, gpu=args.gpu, gpus_per_node=args.gpus_per_node,
                        link_gbps=args.link_gbps, switch_radix=args.switch_radix, fabric=args.fabric,
                        name=args.name, compute=args.compute, host_rules=_host_rules(args),
                        host_map_file=args.hosts or "--hosts")
    for line in messages:
        _err(line)
    _write(doc, args.output, args.file)
    _err(_summary(args.output, doc))
    return EXIT_OK


def export_slurm_topology(args) -> int:
    from ..core.io import load_document
    from ..core.io.files import atomic_write_text
    from ..core.io.importers.slurm_topology import export_topology_conf

    doc = load_document(args.file)
    form = getattr(args, "form", "tree")
    text, left_out = export_topology_conf(doc, args.file, form)
    if left_out:
        _err(f"left out {len(left_out)} cable(s) Slurm's tree has no place for: " + ", ".join(left_out[:10])
             + (f", and {len(left_out) - 10} more" if len(left_out) > 10 else ""))
    if args.output:
        with writing_output(args.output):
            atomic_write_text(args.output, text)
        key = "BlockName=" if form == "block" else "SwitchName="
        _err(f"wrote {args.output}: {sum(1 for l in text.splitlines() if l.startswith(key))} "
             f"{'blocks' if form == 'block' else 'switches'}")
    else:
        sys.stdout.write(text)
    return EXIT_OK
