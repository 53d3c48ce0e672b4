"""Files shipped with Designer (resources/: examples, catalog, icons) are read, never written.

An example opens as an untitled copy named "<stem> (example)"; a save whose target lies in
the installed resources folder is refused, so `make test` and the next user see the
examples as shipped.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..model.catalog import RESOURCES

EXAMPLE_MARK = " (example)"
UNTITLED_MARK = " (untitled)"


def _resolved(path: str | os.PathLike) -> Path:
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError):  # a symlink loop: compare as given
        return Path(os.path.abspath(path))


def is_bundled(path: str | os.PathLike | None) -> bool:
    """True when `path` is inside the installed resources folder (symlinks followed)."""
    if not path:
        return False
    return _resolved(path).is_relative_to(_resolved(RESOURCES))


def bundled_examples() -> list[Path]:
    """The example designs shipped with Designer (resources/examples/*.yaml), by name."""
    return sorted(Path(RESOURCES, "examples").glob("*.yaml"))


def example_title(path: str | os.PathLike) -> str:
    """'h100-64gpu-infiniband (example)' for .../examples/h100-64gpu-infiniband.yaml."""
    return Path(path).stem + EXAMPLE_MARK


def untitled_title(name: str | None) -> str:
    """'fat-tree-16x8-h100 (untitled)': a new design that has no file yet."""
    return (name or "design") + UNTITLED_MARK


def file_name_for(title: str) -> str:
    """The file name a Save dialog suggests for an untitled document's title."""
    for mark in (EXAMPLE_MARK, UNTITLED_MARK):
        if title.endswith(mark):
            title = title[: -len(mark)]
    stem = "".join(c if c.isalnum() or c in "._- " else "-" for c in title).strip(" .") or "design"
    return stem + ".yaml"
