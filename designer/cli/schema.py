"""`designer schema`: the JSON Schema of the file format, for editors."""
from __future__ import annotations

import json
import sys

from ..core.problems import EXIT_OK
from .common import EPILOG


def register(subparsers) -> None:
    p = subparsers.add_parser("schema", help="JSON Schema of the file format, for editors", epilog=EPILOG)
    p.set_defaults(func=run)


def run(args) -> int:
    from ..core.io.editor_schema import json_schema

    json.dump(json_schema(), sys.stdout, indent=2)
    print()
    return EXIT_OK
