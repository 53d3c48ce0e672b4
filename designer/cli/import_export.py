"""`designer import FORMAT` and `designer export FORMAT`: other tools' files in and out, one
sub-command per format, each registered by the module that does its work."""
from __future__ import annotations

from . import fabric, megatron, nccl_topo
from .common import EPILOG

# In the order `designer import --help` and `designer export --help` list them.
IMPORTERS = (megatron, fabric, nccl_topo)
EXPORTERS = (megatron, fabric)


def register(subparsers) -> None:
    p = subparsers.add_parser("import", help="read another tool's output into a design (ibnetdiscover, "
                                             "slurm-topology, ...)", epilog=EPILOG)
    importers = p.add_subparsers(dest="importer", metavar="FORMAT")
    p = subparsers.add_parser("export", help="write a design in another tool's format (slurm-topology, ...)",
                              epilog=EPILOG)
    exporters = p.add_subparsers(dest="exporter", metavar="FORMAT")
    for module in IMPORTERS:
        module.register_import(importers)
    for module in EXPORTERS:
        module.register_export(exporters)
