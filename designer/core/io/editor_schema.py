"""The JSON Schema of designer/v1 files, for editors (`designer schema`): the format schema.py
declares and checks, from the same dataclasses and field metadata, described."""
from __future__ import annotations

import dataclasses
import typing

from ..engine.calibration_check import TABLE_ALGORITHMS, TABLE_PROTOCOLS
from ..engine.constants import AcceleratorConstants, EngineConstants
from ..model import megatron_names
from ..model.document import ClusterSpec
from ..model.elements import Metadata
from ..model.job import Parallelism, Workload
from ..model.spec import describe_range, has_range
from .schema import _HAS_CALIBRATION, API_VERSION, KINDS, ScenarioSpec, _fields, _hints, _required, _split_optional

SCHEMA_ID = "https://designer.invalid/schemas/designer-v1.json"


def _schema_for(tp, defs: dict) -> dict:
    tp, optional = _split_optional(tp)
    if dataclasses.is_dataclass(tp):
        name = tp.__name__
        if name not in defs:
            defs[name] = {}  # reserve against recursion
            props, required = {}, []
            hints = _hints(tp)
            for f in _fields(tp):
                if f.name == "calibration" and tp in _HAS_CALIBRATION:
                    props[f.name] = _calibration_schema(defs)
                    continue
                if f.name == "prices" and tp is ClusterSpec:
                    from ..model.prices import prices_schema

                    props[f.name] = prices_schema()
                    continue
                sub = dict(_schema_for(hints[f.name], defs))
                meta = f.metadata
                if meta.get("doc"):
                    sub["description"] = _description(meta)
                if meta.get("enum"):
                    sub["enum"] = list(meta["enum"]) + ([None] if _split_optional(hints[f.name])[1] else [])
                _put_range(sub["items"] if "items" in sub else sub, meta)
                if f.default is not dataclasses.MISSING and f.default is not None:
                    sub["default"] = f.default
                props[f.name] = sub
                if _required(f):
                    required.append(f.name)
            if tp is Workload or tp is Parallelism:
                _megatron_schema("workload" if tp is Workload else "parallelism", props)
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


def _megatron_schema(section: str, props: dict) -> None:
    """Megatron-LM's spellings a file may use for some keys (model/megatron_names.py)."""
    kinds = {"bf16": {"type": "boolean"}, "fp16": {"type": "boolean"}, "use_tp_pp_dp_mapping": {"type": "boolean"},
             "fp8_format": {"enum": [*megatron_names.FP8_FORMATS, None]},
             "fp8": {"enum": [*megatron_names.FP8_FORMATS, None]},
             "num_layers_per_virtual_pipeline_stage": {"type": ["integer", "null"], "minimum": 1},
             "num_virtual_stages_per_pipeline_rank": {"type": ["integer", "null"], "minimum": 1}}
    for alias, target in megatron_names.ALIASES[section].items():
        props[alias] = dict(kinds[alias], description=megatron_names.ALIAS_DOCS[alias] + f" (Designer: {target})")
    if section == "workload":
        own = props["moe_layer_freq"]
        props["moe_layer_freq"] = {
            "description": own.get("description", "") + "; or Megatron-LM's layer pattern, 1 = MoE, 0 = dense, one "
                           "per layer: '[0]*3+[1]*58' or a list (k dense layers then MoE, or every N-th)",
            "anyOf": [{k: v for k, v in own.items() if k != "description"},
                      {"type": "string", "pattern": r"^[\s\d\[\]()+*,]+$"},
                      {"type": "array", "items": {"enum": [0, 1]}}]}


def _description(meta) -> str:
    """The field's doc with its unit and range, as an editor shows it on hover."""
    text = meta.get("doc", "")
    unit = meta.get("unit")
    if unit:
        text += f". Unit: {unit}"
    if has_range(meta):
        text += f"; range: {describe_range(meta)}"
    return text


def _put_range(schema: dict, meta) -> None:
    for k_meta, k_schema in (("minimum", "minimum"), ("exclusive_minimum", "exclusiveMinimum"),
                             ("maximum", "maximum")):
        if meta.get(k_meta) is not None:
            schema[k_schema] = meta[k_meta]


def _constant_schema(f) -> dict:
    """One calibration constant: its type, unit (in the description) and range."""
    meta = f.metadata
    tp = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "")
    if meta.get("table"):
        number = {"type": "number"}
        _put_range(number, meta)
        protocols = {"type": "object", "additionalProperties": False,
                     "properties": {p: number for p in TABLE_PROTOCOLS}}
        out = {"type": "object", "additionalProperties": False,
               "properties": {a: protocols for a in TABLE_ALGORITHMS}}
    else:
        out = {"type": {"bool": "boolean", "int": "integer"}.get(tp, "number")}
        _put_range(out, meta)
    out["description"] = _description(meta)
    default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
    out["default"] = default
    return out


def _calibration_schema(defs: dict) -> dict:
    """`calibration`: every engine constant, and accelerators.NAME.KEY for the accelerator ones."""
    from ..model.reliability import RELIABILITY_FIELDS, RELIABILITY_KEY  # here: loading a design needs neither

    if "Calibration" not in defs:
        accel = {f.name: _constant_schema(f) for f in dataclasses.fields(AcceleratorConstants)}
        defs["AcceleratorCalibration"] = {
            "type": "object", "additionalProperties": False, "properties": accel,
            "description": "Constants of one accelerator kind; they override the catalog's calibration",
        }
        engine = {f.name: _constant_schema(f) for f in dataclasses.fields(EngineConstants)}
        engine["accelerators"] = {
            "type": "object",
            "description": "Per accelerator (a catalog name or alias, e.g. H100): its constants",
            "additionalProperties": {"$ref": "#/definitions/AcceleratorCalibration"},
        }
        engine[RELIABILITY_KEY] = {
            "type": "object", "additionalProperties": False,
            "properties": {name: _constant_schema(f) for name, f in RELIABILITY_FIELDS.items()},
            "description": "Failure rates, checkpoint storage, restart and hot spares of a training run "
                           "(goodput, time and cost per run)",
        }
        defs["Calibration"] = {
            "type": "object", "additionalProperties": False, "properties": engine,
            "description": "Overrides of the cost engine's constants, each with its unit and range",
        }
    return {"$ref": "#/definitions/Calibration"}


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
