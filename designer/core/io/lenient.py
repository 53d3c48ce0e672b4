"""Reading back a recovery file that holds NaN or infinities (written as YAML .nan / .inf).

The loader refuses non-finite numbers, rightly: no file the user opens may bring one in.
But a design in the app can hold one (an edit through the API), and its recovery file then
does too; refusing it would lose the whole design for one bad number. So recovery reads it
here: each non-finite number is taken out, the rest is checked as usual, and the numbers are
put back into the built document, where the checks and Save name them by element and field.
"""
from __future__ import annotations

import math

from ..model.document import Document
from ..problems import DesignerError
from . import yaml_source
from .files import loads_document
from .schema import build_document, dotted

MAX_NODES = 1_000_000  # a bound on the walk of the parsed data
STAND_INS = (1.0, 0.5, 0.0, 100.0, 10_000.0)  # values that fit most fields' ranges, tried in turn


def loads_document_keeping_non_finite(text: str, name: str = "<text>") -> Document:
    """Like `loads_document`, but NaN and infinities are kept; DesignerError for anything else."""
    try:
        return loads_document(text, name)
    except DesignerError as exc:
        strict_error = exc
    try:
        data = yaml_source.parse_located(text).data
    except (yaml_source.YamlSyntaxError, RecursionError):
        raise strict_error from None
    taken = _take_non_finite(data)
    if not taken:
        raise strict_error
    # Each taken number's place holds a stand-in while the rest is checked; a stand-in outside
    # its field's range is replaced by the next one.
    where = {dotted(path): path for path, _ in taken}
    for stand_in in STAND_INS:
        kind, metadata, spec, problems = build_document(data)
        misfits = [where[p.path] for p in problems if p.path in where]
        if len(misfits) < len(problems) or kind != "Cluster":
            raise strict_error  # something else is wrong too: the loader's own message says what
        if not problems:
            break
        for path in misfits:
            _container(data, path)[path[-1]] = stand_in
    else:
        raise strict_error
    doc = Document(spec, metadata)
    for path, value in taken:
        _put(doc, path, value)
    return doc


def _take_non_finite(data) -> list[tuple[tuple, float]]:
    """Replace every non-finite number by the first stand-in; (path, value) of each."""
    taken = []
    stack = [((), data)]
    seen: set[int] = set()
    visited = 0
    while stack and visited < MAX_NODES:
        path, node = stack.pop()
        visited += 1
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, dict):
            for key, value in list(node.items()):
                if isinstance(value, float) and not math.isfinite(value):
                    taken.append((path + (key,), value))
                    node[key] = STAND_INS[0]
                elif isinstance(value, (dict, list)):
                    stack.append((path + (key,), value))
        elif isinstance(node, list):
            for i, value in enumerate(node):
                if isinstance(value, float) and not math.isfinite(value):
                    taken.append((path + (i,), value))
                    node[i] = STAND_INS[0]
                elif isinstance(value, (dict, list)):
                    stack.append((path + (i,), value))
    return taken


def _container(data, path: tuple):
    for step in path[:-1]:
        data = data[step]
    return data


def _put(doc: Document, path: tuple, value: float) -> None:
    """Set `value` at a data path (('spec', 'links', 3, 'bandwidth_gbps')) of the built document."""
    if not path or path[0] not in ("spec", "metadata"):
        return
    node = doc.spec if path[0] == "spec" else doc.metadata
    for step in path[1:-1]:
        node = node[step] if isinstance(node, (dict, list)) else getattr(node, step, None)
        if node is None:
            return
    last = path[-1]
    if isinstance(node, dict):
        node[last] = value
    elif isinstance(node, list):
        if isinstance(last, int) and 0 <= last < len(node):
            node[last] = value
    elif hasattr(node, last):  # a field under another spelling (an alias key) keeps its default
        setattr(node, last, value)
