"""An __init__ by field name for large dataclasses made a few times a run, written once rather than generated.

Python 3.11's dataclass compiles an __init__ of one parameter per field as each class is made, at
every start of the program (~1 ms of `designer evaluate` for a class of 40 fields). A class that is
always made by name (a job's Workload and Parallelism, the engine's Fabric, Evaluation, ModelShape
and Sharding, a catalog's Accelerator and ModelPreset, a design's ClusterSpec) is declared
`init=False` and its __init__ calls its `FieldsByName`, which takes the same names and defaults and
refuses an unknown or a missing one with TypeError, as the generated one does. It stays a dataclass:
`dataclasses.fields` and `dataclasses.replace` read it as before.
"""
from __future__ import annotations

from dataclasses import MISSING, fields

_REQUIRED = object()  # a field without a default, until `values` gives it


class FieldsByName:
    """One dataclass's fields as its __init__ sets them: every field in order at its default (the
    instance's own attributes, as the generated __init__ makes them), then the values given by name,
    then a new value of each default factory not given."""

    __slots__ = ("names", "_initial", "_factories", "_required")

    def __init__(self, cls):
        declared = fields(cls)
        self.names = frozenset(f.name for f in declared)
        self._initial = {f.name: f.default if f.default is not MISSING else _REQUIRED for f in declared}
        self._factories = tuple((f.name, f.default_factory) for f in declared if f.default_factory is not MISSING)
        self._required = tuple(f.name for f in declared
                               if f.default is MISSING and f.default_factory is MISSING)

    def set(self, obj, values: dict) -> None:
        """`obj`'s fields from `values` (by name) and the defaults; TypeError for an unknown or a missing name."""
        unknown = values.keys() - self.names
        if unknown:
            raise TypeError(f"{type(obj).__name__}.__init__() got an unexpected keyword argument "
                            f"{sorted(unknown)[0]!r}")
        missing = [name for name in self._required if name not in values]
        if missing:
            raise TypeError(f"{type(obj).__name__}.__init__() missing required keyword arguments: "
                            f"{', '.join(map(repr, missing))}")
        state = obj.__dict__  # the instance's own attributes: set whole, as a frozen one's __init__ may
        state.update(self._initial)
        state.update(values)
        for name, factory in self._factories:
            if name not in values:
                state[name] = factory()
