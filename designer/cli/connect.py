"""`designer connect FILE --node ID [-o OUT]`: cable a server to its rail leaves like its neighbours.

The cabling is designer.core.model.auto_cable; this module loads, applies and writes atomically
(FILE itself unless -o names another file). A refusal exits 65 at the line of the server or the
full leaf in FILE, with the fix.
"""
from __future__ import annotations

import sys

from ..core.problems import EXIT_OK, DesignerError, Problem
from .common import EPILOG, design_errors, save_validated


def register(subparsers) -> None:
    p = subparsers.add_parser("connect", help="cable a server to its rail leaves like its neighbours (free ports chosen)",
                              epilog=EPILOG)
    p.add_argument("file", metavar="FILE", help="a cluster YAML file")
    p.add_argument("--node", required=True, metavar="ID", help="the server to cable (it has no NIC cables yet)")
    p.add_argument("-o", "--output", default=None, help="write here (atomically); default: rewrite FILE")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..core.io import load_document
    from ..core.io.locate import locate
    from ..core.model.auto_cable import CablingRefused, plan_connection

    doc = load_document(args.file)
    try:
        cabling = plan_connection(doc, args.node)
    except CablingRefused as exc:
        path = ""
        if exc.element is not None:
            path = f"spec.{exc.collection}[{exc.element}]"
        problem = Problem(exc.message, path=path, element=exc.element, fix=exc.fix, file=args.file)
        locate([problem], args.file)
        raise DesignerError([problem]) from None
    before = design_errors(doc)
    with doc.batch():
        for link in cabling.links:
            doc.add(link)
    output = args.output or args.file
    save_validated(doc, output, before, f"the design with {args.node} cabled")
    print(f"wrote {output}: {cabling.summary()}, {len(cabling.links)} new link(s)", file=sys.stderr)
    return EXIT_OK
