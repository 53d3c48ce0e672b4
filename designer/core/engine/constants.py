"""Every constant of the cost engine: named, with units and source, overridable per file.

A cluster file's `calibration` mapping overrides them:

    calibration:
      nvlink_efficiency: 0.78            # any field of EngineConstants
      infiniband_nic_efficiency: 0.95
      accelerators:
        H100-SXM5-80GB: {gemm_efficiency_best: 0.78}   # any field of AcceleratorConstants

Defaults for an accelerator kind come from its catalog entry (`calibration:` there), then
from the fields' defaults. Sources are in the field docs; "fitted" means fitted once
per accelerator or fabric kind to tests/validation/data/published-cases*.yaml, never per case.

The fields are declared by role in constant_groups/: accelerator.py (AcceleratorConstants) and,
combined here into EngineConstants, fabric.py, collective.py, framework.py, moe.py, step.py and
memory.py. This module builds both from a file's calibration.
"""
from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass

from .constant_groups import set_constants
from .constant_groups.accelerator import AcceleratorConstants
from .constant_groups.collective import CollectiveConstants
from .constant_groups.fabric import FabricConstants
from .constant_groups.framework import FrameworkConstants
from .constant_groups.memory import MemoryConstants
from .constant_groups.moe import HybridEpScalingConstants, MoeConstants
from .constant_groups.step import StepConstants
from .nccl_tuning import latency_constants
from .power import power_capped_clock


# The engine's constants by role (constant_groups/), one frozen dataclass each (frozen through their
# base, core/by_name.Frozen). A dataclass takes its bases' fields first, the last base's first: the
# fields follow in the order the schema, the docs and a report list them, from the fabric's to
# HybridEP's scaling.
# Its __init__ and __eq__ are written below rather than generated: dataclass would compile a function of
# ~125 parameters and a comparison of ~125 fields at every start of the program (~3 ms of `designer
# evaluate`), for an object made once per calibration.
@dataclass(repr=False, init=False, eq=False)
class EngineConstants(HybridEpScalingConstants, MemoryConstants, StepConstants, MoeConstants, FrameworkConstants,
                      CollectiveConstants, FabricConstants):
    """The engine's named constants, each with its source; a design's `calibration` section overrides them."""

    def __init__(self, **values):
        """Every constant at its default, or at the value `values` gives it by name (TypeError for a
        name that is no constant, as a dataclass's own __init__)."""
        set_constants(self, _ENGINE_FIELD_LIST, ENGINE_FIELDS, values)

    def __eq__(self, other):
        """Equal by value (the layer phases' cache asks whether a view's constants are those it was worked
        out with)."""
        if other.__class__ is not self.__class__:
            return NotImplemented
        return _engine_values(self) == _engine_values(other)

    # Unhashable, as its dict tables are.
    __hash__ = None


BOOL_FIELDS = {"nvls_supported", "flash_attention", "attention_dropout"}
_ENGINE_FIELD_LIST = dataclasses.fields(EngineConstants)
ENGINE_FIELDS = {f.name for f in _ENGINE_FIELD_LIST}
_engine_values = operator.attrgetter(*(f.name for f in _ENGINE_FIELD_LIST))  # every constant's value, one tuple
ACCEL_FIELDS = {f.name for f in dataclasses.fields(AcceleratorConstants)}


def constant_fields(cls) -> dict[str, dataclasses.Field]:
    """Name -> field of a constants class (read-only: shared, the engine checks every plan's calibration)."""
    hit = _CONSTANT_FIELDS.get(cls)
    if hit is None:
        hit = _CONSTANT_FIELDS[cls] = {f.name: f for f in dataclasses.fields(cls)}
    return hit


_CONSTANT_FIELDS: dict[type, dict[str, dataclasses.Field]] = {}


def engine_constants(calibration: dict | None) -> EngineConstants:
    """The engine's constants with the calibration's overrides. The last few answers are kept (a
    plan search asks twice per plan with the same calibration; each answer is a frozen dataclass
    of ~100 fields), keyed by the calibration's repr (which, unlike ==, tells 1 from 1.0 and True)."""
    key = repr(calibration)
    for cal, k in _ENGINE_CONSTANTS:
        if cal == key:
            return k
    k = _engine_constants(calibration)
    _ENGINE_CONSTANTS.insert(0, (key, k))
    del _ENGINE_CONSTANTS[4:]
    return k


_ENGINE_CONSTANTS: list[tuple] = []  # (repr of the calibration, EngineConstants), the latest first


def _engine_constants(calibration: dict | None) -> EngineConstants:
    values = {k: v for k, v in (calibration or {}).items() if k in ENGINE_FIELDS}
    base = EngineConstants()
    if isinstance(values.get("nccl_version"), (int, float)):  # that release's latency tables, under the calibration's own entries
        base = dataclasses.replace(base, **latency_constants(values["nccl_version"]))
    for k, v in list(values.items()):
        default = getattr(base, k)
        if isinstance(default, dict):  # merge nested tables
            merged = {a: dict(p) for a, p in default.items()}
            for a, p in v.items():
                merged.setdefault(a, {}).update(p)
            values[k] = merged
    return dataclasses.replace(base, **values)


def uses_flash_attention(ac: "AcceleratorConstants", attention_backend: str) -> bool:
    """The plan's attention kernel: the accelerator's calibrated default unless the plan names one."""
    return ac.flash_attention if attention_backend == "auto" else attention_backend == "flash"


def accelerator_constants(accelerator, calibration: dict | None, catalog) -> AcceleratorConstants:
    values = {k: v for k, v in accelerator.calibration.items() if k in ACCEL_FIELDS}
    mine: dict = {}
    for name, overrides in ((calibration or {}).get("accelerators") or {}).items():
        if catalog.resolve("accelerators", name) == accelerator.name:
            mine.update({k: v for k, v in overrides.items() if k in ACCEL_FIELDS})
    values.update(mine)
    # the sustained clock follows from the power model unless a factor is given in the same layer
    # as the model's constants or a later one (a file's power constants recompute a catalog factor)
    given = "sustained_clock_factor" in mine or (
        "sustained_clock_factor" in values and not POWER_MODEL_FIELDS & mine.keys())
    kappa = values.get("gemm_power_w_per_pflops3", 0)
    if kappa > 0 and accelerator.tdp_w and not given:
        values["sustained_clock_factor"] = power_capped_clock(
            accelerator.tdp_w, accelerator.measured_gemm_tflops["bf16"], kappa,
            values.get("static_power_fraction", AcceleratorConstants.static_power_fraction))
    return dataclasses.replace(AcceleratorConstants(), **values)


POWER_MODEL_FIELDS = {"gemm_power_w_per_pflops3", "static_power_fraction"}


def describe_constants() -> list[tuple[str, str, object, str]]:
    """(scope, name, default, doc) for every constant, for `designer calibration` and reports."""
    rows = []
    for scope, cls in (("engine", EngineConstants), ("accelerator", AcceleratorConstants)):
        inst = cls()
        for f in dataclasses.fields(cls):
            rows.append((scope, f.name, getattr(inst, f.name), f.metadata.get("doc", "")))
    return rows
