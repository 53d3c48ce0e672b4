"""Declaring fields once: type, default, documentation, unit and allowed values.

The dataclasses of the document use `spec_field` so that the YAML validator, the JSON
Schema (`designer schema`) and the property inspector all read the same declaration.
"""
from __future__ import annotations

import dataclasses
from typing import Any

MISSING = dataclasses.MISSING


def spec_field(
    default: Any = MISSING,
    *,
    doc: str,
    enum: tuple | None = None,
    minimum: float | None = None,
    exclusive_minimum: float | None = None,
    maximum: float | None = None,
    factory: Any = MISSING,
    omit_default: bool = True,
):
    """A dataclass field with the metadata the schema needs.

    `omit_default`: saving leaves the key out when it holds the default, which keeps
    generated files of 100k elements small and readable.
    """
    meta = {
        "doc": doc,
        "enum": enum,
        "minimum": minimum,
        "exclusive_minimum": exclusive_minimum,
        "maximum": maximum,
        "omit_default": omit_default,
    }
    if factory is not MISSING:
        return dataclasses.field(default_factory=factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def field_doc(cls, name: str) -> str:
    for f in dataclasses.fields(cls):
        if f.name == name:
            return f.metadata.get("doc", "")
    raise KeyError(name)
