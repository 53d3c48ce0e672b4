"""The file format, declared once by the model's dataclasses, checked and described here.

`build` turns plain data into dataclass instances and lists every problem (unknown key with
a did-you-mean, wrong type, missing key, value out of range) with its dotted path.
`json_schema` describes the same format for editors (`designer schema`).
"""
from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, Union

from ..model.document import ClusterSpec
from ..model.elements import Metadata
from ..model.job import Parallelism, Workload
from ..problems import Problem, did_you_mean

API_VERSION = "designer/v1"
KINDS = ("Cluster", "Scenario")
SCHEMA_ID = "https://designer.invalid/schemas/designer-v1.json"


@dataclasses.dataclass
class ScenarioSpec:
    workload: Workload | None = None
    parallelism: Parallelism | None = None
    calibration: dict[str, Any] = dataclasses.field(default_factory=dict)


_hints_cache: dict[type, dict[str, Any]] = {}


def _hints(cls) -> dict[str, Any]:
    hints = _hints_cache.get(cls)
    if hints is None:
        hints = _hints_cache[cls] = typing.get_type_hints(cls)
    return hints


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
            fast = _fast_builder(item_tp)
            out = []
            for i, item in enumerate(data):
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

    def _in_range(self, f, v, path) -> bool:
        meta = f.metadata
        enum = meta.get("enum")
        if enum and v not in enum:
            guess = did_you_mean(str(v), [str(e) for e in enum])
            self.problem(path, f"{_describe(v)} is not one of {', '.join(map(str, enum))}"
                         + (f" (did you mean {guess}?)" if guess else ""))
            return False
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            lo, xlo, hi = meta.get("minimum"), meta.get("exclusive_minimum"), meta.get("maximum")
            if lo is not None and v < lo:
                self.problem(path, f"{v} is below the minimum {lo}")
                return False
            if xlo is not None and v <= xlo:
                self.problem(path, f"{v} must be greater than {xlo}")
                return False
            if hi is not None and v > hi:
                self.problem(path, f"{v} is above the maximum {hi}")
                return False
        return True


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
            meta = f.metadata
            if any(meta.get(k) is not None for k in ("enum", "minimum", "exclusive_minimum", "maximum")):
                ranged[f.name] = (meta.get("enum"), meta.get("minimum"), meta.get("exclusive_minimum"),
                                  meta.get("maximum"))
            if _required(f):
                required.add(f.name)
        if flat:
            builder = _make_fast(cls, accept, frozenset(floats), ranged, frozenset(required), frozenset(lists))
    _fast_cache[cls] = builder
    return builder


def _make_fast(cls, accept, floats, ranged, required, lists=frozenset()):
    ranged_keys = frozenset(ranged)

    def build(item: dict):
        for key, value in item.items():
            types = accept.get(key)
            if types is None or type(value) not in types:
                return None
        for key in lists & item.keys():
            if not all(type(v) in (int, float) for v in item[key]):
                return None
        keys = item.keys()
        if not required <= keys:
            return None
        for key in ranged_keys & keys:
            value = item[key]
            if value is None:
                continue
            enum, lo, xlo, hi = ranged[key]
            if (enum and value not in enum) or (lo is not None and value < lo) or \
                    (xlo is not None and value <= xlo) or (hi is not None and value > hi):
                return None
        for key in floats & keys:
            if type(item[key]) is int:
                item = dict(item)
                for k in floats & keys:
                    if type(item[k]) is int:
                        item[k] = float(item[k])
                break
        return cls(**item)

    return build


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


# ---- JSON Schema ---------------------------------------------------------------------------

def _schema_for(tp, defs: dict) -> dict:
    tp, optional = _split_optional(tp)
    if dataclasses.is_dataclass(tp):
        name = tp.__name__
        if name not in defs:
            defs[name] = {}  # reserve against recursion
            props, required = {}, []
            hints = _hints(tp)
            for f in _fields(tp):
                sub = dict(_schema_for(hints[f.name], defs))
                meta = f.metadata
                if meta.get("doc"):
                    sub["description"] = meta["doc"]
                if meta.get("enum"):
                    sub["enum"] = list(meta["enum"]) + ([None] if _split_optional(hints[f.name])[1] else [])
                for k_meta, k_schema in (("minimum", "minimum"), ("exclusive_minimum", "exclusiveMinimum"),
                                         ("maximum", "maximum")):
                    if meta.get(k_meta) is not None:
                        sub[k_schema] = meta[k_meta]
                if f.default is not dataclasses.MISSING and f.default is not None:
                    sub["default"] = f.default
                props[f.name] = sub
                if _required(f):
                    required.append(f.name)
            defs[name] = {"type": "object", "additionalProperties": False, "properties": props}
            if required:
                defs[name]["required"] = required
        ref = {"$ref": f"#/definitions/{name}"}
        return {"anyOf": [ref, {"type": "null"}]} if optional else ref
    origin = typing.get_origin(tp)
    if origin is list:
        out = {"type": "array", "items": _schema_for(typing.get_args(tp)[0], defs)}
    elif origin is dict:
        out = {"type": "object"}
    else:
        out = {"type": {str: "string", int: "integer", float: "number", bool: "boolean"}.get(tp, "string")}
    if optional and "type" in out:
        out["type"] = [out["type"], "null"]
    return out


def json_schema() -> dict:
    """JSON Schema (draft-07, which yaml-language-server understands) of designer/v1 files."""
    defs: dict = {}
    cluster = _schema_for(ClusterSpec, defs)
    scenario = _schema_for(ScenarioSpec, defs)
    metadata = _schema_for(Metadata, defs)
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": SCHEMA_ID,
        "title": "Designer cluster or scenario file",
        "type": "object",
        "additionalProperties": False,
        "required": ["apiVersion", "kind", "spec"],
        "properties": {
            "apiVersion": {"const": API_VERSION},
            "kind": {"enum": list(KINDS)},
            "metadata": metadata,
            "spec": {"type": "object"},
        },
        "allOf": [
            {"if": {"properties": {"kind": {"const": "Cluster"}}},
             "then": {"properties": {"spec": cluster}}},
            {"if": {"properties": {"kind": {"const": "Scenario"}}},
             "then": {"properties": {"spec": scenario}}},
        ],
        "definitions": defs,
    }
