"""The engine's constants by role, one dataclass each; engine/constants.py combines them into
EngineConstants, the one that is made (a group is frozen like it, through core/by_name.Frozen, and
has no __init__ of its own: init=False saves generating one per group at start-up).
AcceleratorConstants (accelerator.py) is made on its own, per accelerator kind. A constant is a dataclass field declared with `constant` or `table` below: its
default, its source and its physical range, which the schema, the docs and `check_calibration` read.
(Declared here, in the package's own module, rather than in a module of their own: every group
needs them, and each module more costs the command line's start-up its loading.) The groups' modules
do without `from __future__ import annotations`: their fields' types are the builtins float, int,
bool and dict, which as objects rather than texts spare dataclass two pattern matches per field (is
it a ClassVar, an InitVar?) as each class is made.
"""
from __future__ import annotations

from dataclasses import MISSING, field

from ...by_name import Frozen  # the constants refuse assignment once made, as a frozen dataclass does

FRACTION = dict(minimum=0.01, maximum=1.0, unit="fraction")  # an efficiency: 1% .. 100% of the rating


def constant(default, doc, *, unit=None, minimum=None, maximum=None, exclusive_minimum=None):
    """A constant with its unit and physical range: the schema shows them, `check_calibration` enforces them."""
    return field(default=default, metadata={"doc": doc, "unit": unit, "minimum": minimum, "maximum": maximum,
                                            "exclusive_minimum": exclusive_minimum})


def table(factory, doc, *, unit, minimum, maximum):
    """A constant given per NCCL algorithm and protocol: {algorithm: {protocol: number}}."""
    return field(default_factory=factory, metadata={"doc": doc, "unit": unit, "minimum": minimum,
                                                    "maximum": maximum, "table": True})


def set_constants(obj, fields, names, values: dict) -> None:
    """`obj`'s constants (`fields`, its dataclass fields; `names`, theirs) at their defaults, or at the
    value `values` gives each by name; TypeError for a name that is no constant, as a dataclass's own
    __init__. What the constants classes' __init__ do, written once rather than generated: dataclass
    would compile a function of one parameter per constant (45 to ~125) at every start of the program."""
    unknown = values.keys() - names
    if unknown:
        raise TypeError(f"{type(obj).__name__}() got unexpected keyword arguments: {', '.join(sorted(unknown))}")
    for f in fields:
        if f.name in values:
            value = values[f.name]
        else:
            value = f.default if f.default_factory is MISSING else f.default_factory()
        object.__setattr__(obj, f.name, value)
