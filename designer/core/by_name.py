"""An __init__ by field name for large dataclasses made a few times a run, written once rather than generated.

Python 3.11's dataclass compiles an __init__ of one parameter per field as each class is made, at
every start of the program (~1 ms of `designer evaluate` for a class of 40 fields). A class that is
always made by name (a job's Workload and Parallelism, the engine's Fabric, Evaluation, ModelShape
and Sharding, a catalog's Accelerator and ModelPreset, a design's ClusterSpec) is declared
`init=False` and its __init__ calls `set_fields`, which takes the same names and defaults and refuses
an unknown or a missing one with TypeError, as the generated one does. It stays a dataclass:
`dataclasses.fields` and `dataclasses.replace` read it as before.
"""
from __future__ import annotations

from dataclasses import MISSING


def set_fields(obj, fields: tuple, names: frozenset, values: dict) -> None:
    """`obj`'s `fields` (its dataclass fields; `names`, theirs) set, in order, to the value `values`
    gives each by name, else to the field's default or a new value of its default factory."""
    unknown = values.keys() - names
    if unknown:
        raise TypeError(f"{type(obj).__name__}.__init__() got an unexpected keyword argument "
                        f"{sorted(unknown)[0]!r}")
    missing = []
    for f in fields:
        if f.name in values:
            value = values[f.name]
        elif f.default is not MISSING:
            value = f.default
        elif f.default_factory is not MISSING:
            value = f.default_factory()
        else:
            missing.append(f.name)
            continue
        object.__setattr__(obj, f.name, value)  # as a frozen dataclass's own __init__ sets them
    if missing:
        raise TypeError(f"{type(obj).__name__}.__init__() missing required keyword arguments: "
                        f"{', '.join(map(repr, missing))}")
