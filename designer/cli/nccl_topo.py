"""The work of `designer import nccl-topo topo.xml --into c.yaml`."""
from __future__ import annotations

import sys

from ..core.problems import EXIT_FAILURE, EXIT_OK, DesignerError, Problem
from .common import EPILOG, writing_output


def register_import(formats) -> None:
    g = formats.add_parser("nccl-topo", help="servers' insides from NCCL's NCCL_TOPO_DUMP_FILE XML", epilog=EPILOG)
    g.add_argument("file", metavar="topo.xml", help="the XML NCCL writes with NCCL_TOPO_DUMP_FILE=topo.xml")
    g.add_argument("--into", required=True, help="the YAML design whose servers take it (rewritten atomically)")
    g.add_argument("--node", action="append", default=None, metavar="ID",
                   help="a server to change (repeatable); default: every server with the XML's GPU count")
    g.set_defaults(func=import_nccl_topo)


def import_nccl_topo(args) -> int:
    from ..core.io import load_document, save_document
    from ..core.io.importers.nccl_topo import FIX, apply_topology, describe, parse_nccl_topo
    from ..core.io.importers.source import read_source
    from ..core.design_check import check_document

    topo = parse_nccl_topo(read_source(args.file, "an NCCL topology XML", FIX), args.file)
    doc = load_document(args.into)
    errors_before = {p.format() for p in check_document(doc) if p.severity == "error"}
    applied = apply_topology(doc, topo, args.node)
    # the servers must still fit the rest of the design (e.g. fewer NICs than cables plugged into them)
    new = [p for p in check_document(doc) if p.severity == "error" and p.format() not in errors_before]
    if new:
        for p in new[:10]:
            p.file = args.into
        raise DesignerError(new[:10] + [Problem(f"{args.into} is unchanged: the topology does not fit the design "
                                                "as it is", fix="remove the cables or servers named above first, "
                                                "or import into other servers with --node")], EXIT_FAILURE)
    for line in describe(topo) + applied.messages:
        print(f"{args.file}: {line}", file=sys.stderr)
    with writing_output(args.into):
        save_document(doc, args.into)  # atomic: the old file stays whole until the new one is complete
    shown = ", ".join(applied.node_ids[:6]) + (" ..." if len(applied.node_ids) > 6 else "")
    print(f"wrote {args.into}: {len(applied.node_ids)} server(s) changed ({shown})", file=sys.stderr)
    return EXIT_OK
