"""The file format, declared once by the model's dataclasses, checked and described here.

`build` turns plain data into dataclass instances and lists every problem (unknown key with
a did-you-mean, wrong type, missing key, value out of range) with its dotted path.
editor_schema.py describes the same format for editors (`designer schema`).
"""
from __future__ import annotations

import dataclasses
import math
import sys
import types
import typing
from functools import partial
from itertools import chain, repeat
from typing import Any, Union

from ..by_name import NEW
from . import link_rows
from .column_values import CodedColumn, shared_values
from ..model.document import ClusterSpec
from ..model.elements import Link, Metadata, Node, Rack, Switch
from ..model.megatron_aliases import needs_translation
from ..model.job import Parallelism, Workload
from ..model.jobs import JobSpec
from ..engine.calibration_check import check_calibration
from ..model.spec import range_problem
from ..problems import Problem, did_you_mean

API_VERSION = "designer/v1"
KINDS = ("Cluster", "Scenario")


@dataclasses.dataclass(eq=False, repr=False, init=False)  # its __init__ written: dataclass would compile one
class ScenarioSpec:
    """A scenario file's `spec`: a workload, parallelism and calibration without a cluster."""
    workload: Workload | None = None
    parallelism: Parallelism | None = None
    calibration: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __init__(self, workload: Workload | None = None, parallelism: Parallelism | None = None,
                 calibration: dict[str, Any] = NEW) -> None:
        self.workload, self.parallelism = workload, parallelism
        self.calibration = {} if calibration is NEW else calibration


_hints_cache: dict[type, dict[str, Any]] = {}
_annotation_types: dict[tuple[str, str], Any] = {}  # (module, annotation text) -> the type it names


def _hints(cls) -> dict[str, Any]:
    """The types of a dataclass's fields, as typing.get_type_hints gives them. Each distinct annotation
    text is evaluated once per module: the eight classes a design holds have ~160 fields but ~26
    texts, and get_type_hints compiles each field's text apart (~2 ms of every load)."""
    hints = _hints_cache.get(cls)
    if hints is None:
        hints = {}
        for klass in reversed(cls.__mro__):
            for name, text in vars(klass).get("__annotations__", {}).items():
                hints[name] = _annotation_type(text, klass.__module__)
        _hints_cache[cls] = hints
    return hints


def _annotation_type(text, module: str):
    if not isinstance(text, str):
        return text
    key = (module, text)
    if key not in _annotation_types:
        value = eval(text, vars(sys.modules[module]))  # the annotation, as written in its module
        if isinstance(value, str):  # written quoted: a forward reference
            value = _annotation_type(value, module)
        _annotation_types[key] = type(None) if value is None else value
    return _annotation_types[key]


def _fields(cls):
    return dataclasses.fields(cls)


def _required(f) -> bool:
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


def _split_optional(tp):
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return (args[0] if len(args) == 1 else tp), True
    return tp, False


def dotted(path: tuple) -> str:
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += ("." if text else "") + str(part)
    return text


def _type_name(tp) -> str:
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false"}.get(
        tp, "a mapping" if dataclasses.is_dataclass(tp) or typing.get_origin(tp) is dict else "a list"
    )


def _describe(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return "a mapping" if isinstance(value, dict) else "a list"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class Builder:
    """Converts checked data to dataclasses; problems accumulate in `problems`."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def problem(self, path: tuple, message: str, fix: str | None = None, *, at_key: bool = False) -> None:
        p = Problem(message, dotted(path), fix=fix)
        p._path = path  # type: ignore[attr-defined]  # raw path, to locate it later
        p._at_key = at_key  # type: ignore[attr-defined]
        self.problems.append(p)

    def value(self, tp, data, path: tuple):
        tp, optional = _split_optional(tp)
        if data is None:
            if optional:
                return None
            self.problem(path, f"expected {_type_name(tp)}, got null")
            return _MISSING
        if dataclasses.is_dataclass(tp):
            return self.dataclass(tp, data, path)
        origin = typing.get_origin(tp)
        if origin is list:
            if not isinstance(data, list):
                self.problem(path, f"expected a list, got {_describe(data)}")
                return _MISSING
            (item_tp,) = typing.get_args(tp)
            types_in = set(map(type, data))
            if types_in == {item_tp} and item_tp in _PREBUILT:
                return data  # every item built whole by the reader (prebuild_items)
            bulk = _bulk_builder(item_tp)
            if bulk is not None and types_in <= {dict}:
                built = bulk(data)
                if built is not None:
                    return built
            fast = _fast_builder(item_tp)
            out = []
            for i, item in enumerate(data):
                if type(item) is item_tp and item_tp in _PREBUILT:
                    out.append(item)  # a part the reader built; the other parts' items say what is wrong
                    continue
                v = fast(item) if fast is not None and type(item) is dict else None
                if v is None:
                    v = self.value(item_tp, item, path + (i,))
                if v is not _MISSING:
                    out.append(v)
            return out
        if origin is dict:
            if not isinstance(data, dict):
                self.problem(path, f"expected a mapping, got {_describe(data)}")
                return _MISSING
            bad = _first_non_finite(data, path)
            if bad is not None:
                self.problem(bad[0], f"{bad[1]} is not a finite number")
                return _MISSING
            return data
        if tp is bool:
            if isinstance(data, bool):
                return data
        elif tp is int:
            if isinstance(data, int) and not isinstance(data, bool):
                return data
            if isinstance(data, float) and data.is_integer():
                return int(data)
        elif tp is float:
            if isinstance(data, (int, float)) and not isinstance(data, bool):
                return float(data)
        elif tp is str:
            if isinstance(data, str):
                return data
        elif tp is Any:
            return data
        self.problem(path, f"expected {_type_name(tp)}, got {_describe(data)}")
        return _MISSING

    def dataclass(self, cls, data, path: tuple):
        if not isinstance(data, dict):
            self.problem(path, f"expected a mapping, got {_describe(data)}")
            return _MISSING
        if cls in _HAS_CALIBRATION or cls is JobSpec:
            data = self._megatron_names(data, path)
        fields = {f.name: f for f in _fields(cls)}
        hints = _hints(cls)
        kwargs = {}
        ok = True
        for key, raw in data.items():
            f = fields.get(key)
            if f is None:
                guess = did_you_mean(str(key), fields)
                self.problem(
                    path + (key,), "unknown key" + (f" (did you mean {guess}?)" if guess else ""),
                    None if guess else "known keys: " + ", ".join(fields), at_key=True,
                )
                continue
            if key == "calibration" and cls in _HAS_CALIBRATION:
                found = check_calibration(raw, base=path + (key,))  # the one check of the constants
                if found:
                    self.problems += found
                    ok = False
                    continue
            if key == "prices" and cls is ClusterSpec:
                from ..model.prices import check_prices

                found = check_prices(raw, base=path + (key,))  # sections, parts and numbers of the overrides
                if found:
                    self.problems += found
                    ok = False
                    continue
            v = self.value(hints[key], raw, path + (key,))
            if v is _MISSING:
                ok = False
                continue
            if v is not None and not self._in_range(f, v, path + (key,)):
                ok = False
            kwargs[key] = v
        for name, f in fields.items():
            if name not in data and _required(f):
                self.problem(path, f"missing required key {name}", f"add {name}: {f.metadata.get('doc', '').lower()}")
                ok = False
        if not ok:
            return _MISSING
        return cls(**kwargs)

    def _megatron_names(self, data: dict, path: tuple) -> dict:
        """The spec with Megatron-LM's spellings of job keys turned into Designer's (megatron_names.py)."""
        work, par = data.get("workload"), data.get("parallelism")
        todo = [(name, m) for name, m in (("workload", work), ("parallelism", par)) if needs_translation(name, m)]
        if not todo:
            return data
        from ..model import megatron_names  # here: only a file in Megatron-LM's spellings needs the translation

        data = dict(data)
        layers = megatron_names.known_num_layers(work)
        for section, mapping in todo:
            pp = mapping.get("pipeline_model_parallel_size") if section == "parallelism" else None
            data[section], found = megatron_names.translate(section, mapping, num_layers=layers, pp=pp)
            for p in found:
                self.problem(path + (section, p.key), p.message, p.fix)
        return data

    def _in_range(self, f, v, path) -> bool:
        meta = f.metadata
        enum = meta.get("enum")
        if enum and v not in enum:
            guess = did_you_mean(str(v), [str(e) for e in enum])
            self.problem(path, f"{_describe(v)} is not one of {', '.join(map(str, enum))}"
                         + (f" (did you mean {guess}?)" if guess else ""))
            return False
        if isinstance(v, list) and v and dataclasses.is_dataclass(v[0]):
            return True  # built elements (racks, nodes, ...): their numbers were checked as they were built
        items = enumerate(v) if isinstance(v, list) else ((None, v),)
        for i, item in items:  # a list of numbers (gpu_slowdown): the range holds for each
            why = range_problem(item, meta)
            if why:
                self.problem(path if i is None else path + (i,), why)
                return False
        return True


_HAS_CALIBRATION = (ClusterSpec, ScenarioSpec)


def _first_non_finite(data, path: tuple, limit: int = 1_000_000):
    """(path, value) of the first NaN or infinity in plain nested data (canvas layout), or None."""
    stack = [(path, data)]
    seen = 0
    while stack and seen < limit:
        where, value = stack.pop()
        seen += 1
        if isinstance(value, float) and not math.isfinite(value):
            return where, value
        if isinstance(value, dict):
            stack.extend((where + (k,), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((where + (i,), v) for i, v in enumerate(value))
    return None


_EXACT_TYPES = {str: (str,), int: (int,), float: (float, int), bool: (bool,)}
_fast_cache: dict[type, Any] = {}


def _fast_builder(cls):
    """A quick constructor for flat dataclasses (racks, nodes, switches, links).

    It returns the instance when the item is plainly valid and None otherwise, in which
    case the full checker runs and says what is wrong. 100k elements take ~0.2 s this way.
    """
    if cls in _fast_cache:
        return _fast_cache[cls]
    builder = None
    if dataclasses.is_dataclass(cls):
        hints = _hints(cls)
        accept, floats, ranged, required = {}, set(), {}, set()
        flat = True
        lists = set()
        for f in _fields(cls):
            tp, optional = _split_optional(hints[f.name])
            meta = f.metadata
            if any(meta.get(k) is not None for k in ("enum", "minimum", "exclusive_minimum", "maximum")):
                ranged[f.name] = (meta.get("enum"), meta.get("minimum"), meta.get("exclusive_minimum"),
                                  meta.get("maximum"))
            if typing.get_origin(tp) is list and typing.get_args(tp)[0] in (float, int):
                accept[f.name] = (list,)
                lists.add(f.name)
                continue
            if tp not in _EXACT_TYPES:
                flat = False
                break
            accept[f.name] = _EXACT_TYPES[tp] + ((type(None),) if optional else ())
            if tp is float:
                floats.add(f.name)
            if _required(f):
                required.add(f.name)
        if flat:
            builder = _make_fast(cls, accept, frozenset(floats), ranged, frozenset(required), frozenset(lists))
    _fast_cache[cls] = builder
    return builder


def _make_fast(cls, accept, floats, ranged, required, lists=frozenset()):
    # Everything known about a key in one lookup, and one pass over the item's keys: at 300k links
    # the set operations per item that this replaces were most of the build.
    plan = {key: (types, ranged.get(key), key in floats, key in lists) for key, types in accept.items()}
    n_required = len(required)

    def build(item: dict):
        seen_required = 0
        ints_to_float = None
        for key, value in item.items():
            entry = plan.get(key)
            if entry is None:
                return None
            types, bounds, is_float, is_list = entry
            if type(value) not in types:
                return None
            if is_list and not all(type(v) in (int, float) for v in value):
                return None
            if key in required:
                seen_required += 1
            if bounds is not None and value is not None:
                enum, lo, xlo, hi = bounds
                if enum:
                    if value not in enum:
                        return None
                else:
                    for v in (value if is_list else (value,)):  # written so that NaN fails every test
                        if not ((lo is None or v >= lo) and (xlo is None or v > xlo) and (hi is None or v <= hi)):
                            return None
            if is_float and type(value) is int:
                ints_to_float = (ints_to_float or []) + [key]
        if seen_required != n_required:
            return None
        if ints_to_float:
            item = dict(item)
            for key in ints_to_float:
                item[key] = float(item[key])
        return cls(**item)

    return build


_bulk_cache: dict[type, Any] = {}


def _bulk_builder(cls):
    """A constructor for a whole list of flat dataclasses (racks, nodes, switches, links), checked
    column by column: the same rules as `_fast_builder` (every item plainly valid) at C speed.

    It returns the instances in order when every item passes, and None otherwise (then each item
    goes through `_fast_builder` and the full checker, which say what is wrong and where). One
    Python call per value checked made the build 1.1 s of a 131k-GPU load; this is ~0.45 s, a third
    of it making the objects.
    """
    columns_of = bulk_columns(cls)
    return None if columns_of is None else partial(_build_from_columns, cls, columns_of)


def _build_from_columns(cls, columns_of, items: list):
    columns = columns_of(items)
    return None if columns is None else list(map(cls, *columns))


def bulk_columns(cls):
    """For a flat dataclass (see _bulk_builder): a function from a list of mappings to the constructor's
    arguments as columns, one list per field in the fields' order, or None when some item is not plainly
    valid."""
    return _bulk_functions(cls)[0]


def bulk_checker(cls):
    """For a flat dataclass (see _bulk_builder): a function from the number of items and each field's
    values as read (see _make_bulk's `checked`) to the constructor's arguments as columns, by the same
    rules as bulk_columns; None for a class that is not flat."""
    return _bulk_functions(cls)[1]


def _bulk_functions(cls):
    if cls not in _bulk_cache:
        flat = _fast_builder(cls) is not None and all(f.init and not f.kw_only for f in _fields(cls))
        _bulk_cache[cls] = _make_bulk(cls) if flat else (None, None)
    return _bulk_cache[cls]


# spec's one-line sections (yaml_source.FAST_SECTIONS) and their elements: what prebuild_items builds,
# and what a list accepts as already built
_SECTION_TYPES = {"racks": Rack, "nodes": Node, "switches": Switch, "links": Link}
_PREBUILT = frozenset(_SECTION_TYPES.values())


def prebuild_items(section: str, items: list) -> list:
    """A part of a file's one-line items of spec.racks/nodes/switches/links, built into their elements
    by the same bulk builder (and its rules) the whole list would meet, or the mappings as they are
    when any item is not plainly valid (the list's build then says what and where)."""
    cls = _SECTION_TYPES.get(section)
    bulk = _bulk_builder(cls) if cls is not None else None
    built = bulk(items) if bulk is not None else None
    return items if built is None else built


def prebuild_lines(section: str, text: str) -> list | None:
    """The links of a part of spec.links's item lines (`text`: the lines joined by line breaks), read
    from their text (link_rows) and built by the bulk builder's rules, or None when a line is not in the
    layout `save` writes or some link is not plainly valid: then the part is read as JSON
    (prebuild_items), which says what and where."""
    columns = link_columns_of(text) if section == "links" else None
    return None if columns is None else list(map(Link, *columns))


def link_columns_of(text: str) -> list[list] | None:
    """The Link constructor's arguments as columns from link item lines (see prebuild_lines)."""
    read = link_rows.link_columns(text, ABSENT)
    if read is None:
        return None
    values, kinds = read
    return bulk_checker(Link)(len(values["id"]), values.get, kinds.get)


class _Absent:
    """A key an item leaves out (None may be a value)."""


_ABSENT = ABSENT = _Absent()


def _in_bounds(values, bounds) -> bool:
    """Every value inside a field's (enum, minimum, exclusive minimum, maximum)."""
    enum, lo, xlo, hi = bounds
    if enum:
        return all(v in enum for v in values)
    for v in values:  # written so that NaN fails every test
        if not ((lo is None or v >= lo) and (xlo is None or v > xlo) and (hi is None or v <= hi)):
            return False
    return True


def _make_bulk(cls):
    hints = _hints(cls)
    columns = []  # per field, in the order of the constructor's arguments
    for f in _fields(cls):
        tp, optional = _split_optional(hints[f.name])
        meta = f.metadata
        is_list = typing.get_origin(tp) is list
        accept = frozenset((list,) if is_list else _EXACT_TYPES[tp] + ((type(None),) if optional else ()))
        bounds = None
        if any(meta.get(k) is not None for k in ("enum", "minimum", "exclusive_minimum", "maximum")):
            bounds = (meta.get("enum"), meta.get("minimum"), meta.get("exclusive_minimum"), meta.get("maximum"))
        default = f.default if f.default is not dataclasses.MISSING else None
        factory = f.default_factory if f.default_factory is not dataclasses.MISSING else None
        columns.append((f.name, accept, bounds, tp is float, is_list, _required(f), default, factory))
    known = frozenset(c[0] for c in columns)

    def columns_of(items: list) -> list[list] | None:
        n = len(items)
        if not n:
            return [[] for _ in columns]
        if set(map(type, items)) != {dict}:
            return None
        present = set().union(*items)  # every key of every item (no tuple of keys per item: 0.1 s at 131k GPUs)
        if not present <= known:
            return None
        return checked(n, lambda name: list(map(dict.get, items, repeat(name), repeat(_ABSENT)))
                       if name in present else None)

    def checked(n: int, column_of, kinds_of=None) -> list[list] | None:
        """The constructor's arguments from each field's values as read (`column_of(name)`: the n values,
        ABSENT where an item leaves the field out, as a list or a CodedColumn, or None when every item
        does; `kinds_of(name)`: the set of their types, when the reader knows it)."""
        args = []
        for name, accept, bounds, is_float, is_list, required, default, factory in columns:
            col = column_of(name)
            if col is None:
                if required:
                    return None
                args.append([factory() for _ in range(n)] if factory else [default] * n)
                continue
            seen = col.distinct() if type(col) is CodedColumn else col  # each distinct value once, if coded
            kinds = set(map(type, seen)) if kinds_of is None else set(kinds_of(name))
            absent = _Absent in kinds  # some items leave the key out
            if absent:
                if required:
                    return None
                kinds.discard(_Absent)
            if not kinds <= accept:
                return None
            if is_list:
                values = list(chain.from_iterable(v for v in seen if v is not _ABSENT))
                if not set(map(type, values)) <= {int, float}:
                    return None
                if bounds is not None and not _in_bounds(set(values), bounds):
                    return None
            distinct = None  # the column's values, when a bound makes them (the sharing takes them too)
            if bounds is not None and not is_list:
                distinct = set(seen)
                distinct.discard(None)
                distinct.discard(_ABSENT)
                if not _in_bounds(distinct, bounds):
                    return None
            if absent:
                col = _filled(col, default, factory)
                kinds.add(list if factory else type(default))
                distinct = None
            if is_float and int in kinds:
                col, kinds = _floats(col, kinds)
                distinct = set(map(float, distinct)) if distinct is not None and kinds == {float} else None
            args.append(col.expanded(kinds) if type(col) is CodedColumn else shared_values(col, kinds, distinct))
        return args

    return columns_of, checked


def _filled(col, default, factory):
    """The column with `default` (a new factory() each, for a list) where an item leaves the field out."""
    if type(col) is CodedColumn:
        if not factory:
            return col.mapped(lambda v: default if v is _ABSENT else v)
        col = col.expanded(set())  # each item its own new list: filled item by item
    if factory:
        return [factory() if v is _ABSENT else v for v in col]
    return [default if v is _ABSENT else v for v in col]


def _floats(col, kinds: set):
    """(the column with its ints made floats, the set of its types after)."""
    if type(col) is CodedColumn:
        col = col.mapped(lambda v: float(v) if type(v) is int else v)
        return col, set(map(type, col.distinct()))
    if not kinds - {int, float}:
        return list(map(float, col)), {float}
    col = [float(v) if type(v) is int else v for v in col]
    return col, set(map(type, col))


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING = _Missing()

TOP_KEYS = ("apiVersion", "kind", "metadata", "spec")


def build_document(data) -> tuple[str | None, Metadata | None, Any, list[Problem]]:
    """(kind, metadata, spec, problems) from the data of a whole file."""
    b = Builder()
    if not isinstance(data, dict):
        b.problem((), f"expected a mapping with apiVersion, kind, metadata and spec, got {_describe(data)}")
        return None, None, None, b.problems
    for key in data:
        if key not in TOP_KEYS:
            guess = did_you_mean(str(key), TOP_KEYS)
            b.problem((key,), "unknown key" + (f" (did you mean {guess}?)" if guess else ""),
                      None if guess else "the top level holds apiVersion, kind, metadata and spec", at_key=True)
    api = data.get("apiVersion")
    if api is None:
        b.problem((), "missing apiVersion", f"add apiVersion: {API_VERSION} at the top")
    elif api != API_VERSION:
        b.problem(("apiVersion",), f"unknown apiVersion {api!r}",
                  f"this version of designer reads {API_VERSION}" + (
                      "; the file may come from a newer designer" if str(api).startswith("designer/") else ""))
    kind = data.get("kind")
    if kind is None:
        b.problem((), "missing kind", "add kind: Cluster (or Scenario)")
    elif kind not in KINDS:
        guess = did_you_mean(str(kind), KINDS)
        b.problem(("kind",), f"unknown kind {kind!r}" + (f" (did you mean {guess}?)" if guess else ""),
                  "kind is Cluster or Scenario")
        kind = None
    metadata = b.value(Metadata, data.get("metadata") or {}, ("metadata",))
    spec = None
    if "spec" not in data:
        b.problem((), "missing required key spec", "add spec: with racks, nodes, switches, links")
    elif kind is not None:
        spec = b.value(ClusterSpec if kind == "Cluster" else ScenarioSpec, data["spec"] or {}, ("spec",))
    if metadata is _MISSING:
        metadata = None
    if spec is _MISSING:
        spec = None
    return kind, metadata, spec, b.problems
