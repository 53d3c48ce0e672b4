"""Declaring fields once: type, default, documentation, unit and allowed values.

The dataclasses of the document use `spec_field` so that the YAML validator, the JSON
Schema (`designer schema`) and the property inspector all read the same declaration.
Every number carries its physical range here (`minimum`/`exclusive_minimum`/`maximum`):
`range_problem` is the one check of it, used by the loader, `--set` and the calibration.
"""
from __future__ import annotations

import dataclasses
import math
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
    unit: str | None = None,
    factory: Any = MISSING,
    omit_default: bool = True,
):
    """A dataclass field with the metadata the schema needs.

    `omit_default`: saving leaves the key out when it holds the default, which keeps
    generated files of 100k elements small and readable. For a list of numbers the range
    applies to each item.
    """
    meta = {
        "doc": doc,
        "enum": enum,
        "minimum": minimum,
        "exclusive_minimum": exclusive_minimum,
        "maximum": maximum,
        "unit": unit,
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


def has_range(meta) -> bool:
    return meta.get("maximum") is not None and (
        meta.get("minimum") is not None or meta.get("exclusive_minimum") is not None)


def _num(value) -> str:
    """1048576 -> '1,048,576'; 0.5 -> '0.5' (readable limits in messages)."""
    if abs(value) >= 1e15:
        return f"{float(value):.3g}"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def describe_range(meta) -> str:
    """'from 0.01 to 1', 'above 0 up to 100,000' (for messages and documentation)."""
    lo, xlo, hi = meta.get("minimum"), meta.get("exclusive_minimum"), meta.get("maximum")
    unit = f" {meta['unit']}" if meta.get("unit") not in (None, "fraction", "x", "true/false") else ""
    if lo is not None and hi is not None:
        return f"from {_num(lo)} to {_num(hi)}{unit}"
    if xlo is not None and hi is not None:
        return f"above {_num(xlo)} up to {_num(hi)}{unit}"
    if hi is not None:
        return f"at most {_num(hi)}{unit}"
    if lo is not None:
        return f"at least {_num(lo)}{unit}"
    if xlo is not None:
        return f"above {_num(xlo)}{unit}"
    return "any finite number"


def range_problem(value, meta) -> str | None:
    """Why a number breaks its declared range, or is not finite (NaN, infinity); None when fine."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value} is not a finite number (the range is {describe_range(meta)})"
    lo, xlo, hi = meta.get("minimum"), meta.get("exclusive_minimum"), meta.get("maximum")
    if lo is not None and value < lo:
        return f"{_num(value)} is below the minimum {_num(lo)} (the range is {describe_range(meta)})"
    if xlo is not None and value <= xlo:
        return f"{_num(value)} must be greater than {_num(xlo)} (the range is {describe_range(meta)})"
    if hi is not None and value > hi:
        return f"{_num(value)} is above the maximum {_num(hi)} (the range is {describe_range(meta)})"
    return None
