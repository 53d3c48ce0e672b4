"""The engine's constants by role, one dataclass each; engine/constants.py combines them into
EngineConstants, the one that is made (a group is frozen like it, and has no __init__ of its own:
init=False saves generating one per group at start-up). AcceleratorConstants (accelerator.py) is
made on its own, per accelerator kind. A constant is a dataclass field declared with `constant` or `table` below: its
default, its source and its physical range, which the schema, the docs and `check_calibration` read.
(Declared here, in the package's own module, rather than in a module of their own: every group
needs them, and each module more costs the command line's start-up its loading.) The groups' modules
do without `from __future__ import annotations`: their fields' types are the builtins float, int,
bool and dict, which as objects rather than texts spare dataclass two pattern matches per field (is
it a ClassVar, an InitVar?) as each class is made.
"""
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
