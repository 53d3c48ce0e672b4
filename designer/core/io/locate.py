"""Placing a check's problems (dotted paths such as spec.workload.global_batch_size or
spec.nodes[3].slowdown) at the FILE:LINE:COLUMN where that key sits in the file."""
from __future__ import annotations

import os
import re

from ..problems import Problem
from . import yaml_source

# Locating needs the slow, position-keeping parser: only for files of a size a person edits by hand.
MAX_LOCATE_BYTES = 4 * 1024 * 1024
_PART = re.compile(r"([^.\[\]]+)|\[([^\]]+)\]")


def path_tuple(dotted: str, data) -> tuple | None:
    """'spec.nodes[3].slowdown' -> ('spec', 'nodes', 3, 'slowdown'); an element named by id
    (spec.racks[rack0]) becomes its position in the file's list. None when it is not a path."""
    out: list = []
    node = data
    for name, index in _PART.findall(dotted):
        if name:
            part = name
        elif index.isdigit():
            part = int(index)
        else:
            items = node if isinstance(node, list) else []
            part = next((i for i, item in enumerate(items) if isinstance(item, dict) and item.get("id") == index),
                        None)
            if part is None:
                return tuple(out)
        out.append(part)
        if isinstance(node, dict):
            node = node.get(part)
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            node = None
    return tuple(out)


def locate(problems: list[Problem], file: str) -> None:
    """Set file, line and column of each problem whose path is in `file` (in place)."""
    for p in problems:
        p.file = p.file or file
    todo = [p for p in problems if p.line is None and p.path.startswith("spec")]
    if not todo:
        return
    try:
        if os.path.getsize(file) > MAX_LOCATE_BYTES:
            return
        with open(file, encoding="utf-8-sig") as fh:
            located = yaml_source.parse_located(fh.read())
    except (OSError, UnicodeDecodeError, yaml_source.YamlSyntaxError, RecursionError):
        return
    for p in todo:
        path = path_tuple(p.path, located.data)
        if path:
            p.line, p.column = located.where(path)
