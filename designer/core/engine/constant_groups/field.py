"""How a constant is declared: a dataclass field with its default, its source and its physical range."""
from __future__ import annotations

from dataclasses import field

FRACTION = dict(minimum=0.01, maximum=1.0, unit="fraction")  # an efficiency: 1% .. 100% of the rating


def constant(default, doc, *, unit=None, minimum=None, maximum=None, exclusive_minimum=None):
    """A constant with its unit and physical range: the schema shows them, `check_calibration` enforces them."""
    return field(default=default, metadata={"doc": doc, "unit": unit, "minimum": minimum, "maximum": maximum,
                                            "exclusive_minimum": exclusive_minimum})


def table(factory, doc, *, unit, minimum, maximum):
    """A constant given per NCCL algorithm and protocol: {algorithm: {protocol: number}}."""
    return field(default_factory=factory, metadata={"doc": doc, "unit": unit, "minimum": minimum,
                                                    "maximum": maximum, "table": True})
