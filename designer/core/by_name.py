"""Methods of dataclasses written once rather than generated: an __init__ by field name, and the
__eq__, __hash__ and __repr__ a dataclass would make.

Python 3.11's dataclass compiles an __init__ of one parameter per field as each class is made, at
every start of the program (~1 ms of `designer evaluate` for a class of 40 fields). A class that is
always made by name (a job's Workload and Parallelism, the engine's Fabric, Evaluation, ModelShape
and Sharding, a catalog's Accelerator and ModelPreset, a design's ClusterSpec) is declared
`init=False` and its __init__ calls its `FieldsByName`, which takes the same names and defaults and
refuses an unknown or a missing one with TypeError, as the generated one does. It stays a dataclass:
`dataclasses.fields` and `dataclasses.replace` read it as before.

The same goes for the other methods dataclass compiles (about a millisecond each for the largest
classes): a class declared `eq=False, repr=False` gets the __eq__ and __repr__ of `eq=True,
repr=True` from `compared_by_value`, or writes __eq__, __hash__ or __repr__ through its
`FieldValues` (the same fields compared, hashed and shown the same way; without the generated
__repr__'s guard against a value that holds itself, which none of these can); one declared without
`frozen=True` derives from `Frozen`; a written positional __init__ defaults a field with a default
factory to `NEW`.
"""
from __future__ import annotations

from dataclasses import MISSING, FrozenInstanceError, fields
from operator import attrgetter

_REQUIRED = object()  # a field without a default, until `values` gives it


class _New:
    """A written __init__'s default for a field with a default factory: a new value is made when none is
    given (shown `<factory>` in its signature, as a generated one shows it)."""

    def __repr__(self) -> str:
        return "<factory>"


NEW = _New()


class FieldsByName:
    """One dataclass's fields as its __init__ sets them: every field in order at its default (the
    instance's own attributes, as the generated __init__ makes them), then the values given by name,
    then a new value of each default factory not given."""

    __slots__ = ("names", "_initial", "_factories", "_required", "_required_names")

    def __init__(self, cls):
        declared = fields(cls)
        self.names = frozenset(f.name for f in declared)
        self._initial = {f.name: f.default if f.default is not MISSING else _REQUIRED for f in declared}
        self._factories = tuple((f.name, f.default_factory) for f in declared if f.default_factory is not MISSING)
        self._required = tuple(f.name for f in declared
                               if f.default is MISSING and f.default_factory is MISSING)
        self._required_names = frozenset(self._required)

    def set(self, obj, values: dict) -> None:
        """`obj`'s fields from `values` (by name) and the defaults; TypeError for an unknown or a missing name."""
        # (two set comparisons in C; the names are listed only for the message)
        if not self.names.issuperset(values):
            unknown = values.keys() - self.names
            raise TypeError(f"{type(obj).__name__}.__init__() got an unexpected keyword argument "
                            f"{sorted(unknown)[0]!r}")
        if not self._required_names.issubset(values):
            missing = [name for name in self._required if name not in values]
            raise TypeError(f"{type(obj).__name__}.__init__() missing required keyword arguments: "
                            f"{', '.join(map(repr, missing))}")
        state = obj.__dict__  # the instance's own attributes: set whole, as a frozen one's __init__ may
        state.update(self._initial)
        state.update(values)
        for name, factory in self._factories:
            if name not in values:
                state[name] = factory()


class FieldValues:
    """One dataclass's fields as its generated __eq__, __hash__ and __repr__ read them: equal to an
    instance of the same class whose compared fields are equal, as one tuple; hashed as that tuple;
    shown as `Class(name=value, ...)`."""

    __slots__ = ("_compared", "_hashed", "_shown_names", "_shown")

    def __init__(self, cls):
        declared = fields(cls)
        self._compared = _values_getter([f.name for f in declared if f.compare])
        self._hashed = _values_getter([f.name for f in declared if (f.compare if f.hash is None else f.hash)])
        self._shown_names = tuple(f.name for f in declared if f.repr)
        self._shown = _values_getter(self._shown_names)

    def equal(self, one, other):
        if other.__class__ is one.__class__:
            return self._compared(one) == self._compared(other)
        return NotImplemented

    def hash(self, obj) -> int:
        return hash(self._hashed(obj))

    def repr(self, obj) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in zip(self._shown_names, self._shown(obj)))
        return f"{obj.__class__.__qualname__}({shown})"


def compared_by_value(cls):
    """`cls`, a dataclass declared `eq=False, repr=False`, with the __eq__ and __repr__ (and the __hash__
    of None) that `eq=True, repr=True` would generate, made from its FieldValues."""
    values = FieldValues(cls)

    def __eq__(self, other):
        return values.equal(self, other)

    def __repr__(self):
        return values.repr(self)

    __eq__.__qualname__, __repr__.__qualname__ = f"{cls.__qualname__}.__eq__", f"{cls.__qualname__}.__repr__"
    cls.__eq__, cls.__repr__, cls.__hash__ = __eq__, __repr__, None  # compared by value: unhashable, unfrozen
    return cls


def _values_getter(names):
    """The values of `names` of an object as one tuple (attrgetter gives one name's value alone)."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


class Frozen:
    """Refuses assignment once made, as a frozen dataclass does, through these two methods written
    once: `frozen=True` generates both for each class. Its __init__ sets the fields in the instance's
    own attributes (FieldsByName.set, vars(self).update) or through object.__setattr__."""

    __slots__ = ()

    def __setattr__(self, name, value):
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        raise FrozenInstanceError(f"cannot delete field {name!r}")
