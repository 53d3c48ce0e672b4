"""The engine's constants are declared by role (engine/constant_groups/) and combined into EngineConstants:
each constant in exactly one group, in the groups' order, and a file's calibration reaches every group."""
from __future__ import annotations

import dataclasses

import pytest

from designer.core.engine.constants import AcceleratorConstants, EngineConstants, engine_constants


def _groups() -> list[type]:
    """EngineConstants' role groups in the order their fields come (a dataclass takes the last base's first)."""
    return [base for base in reversed(EngineConstants.__mro__[1:]) if dataclasses.is_dataclass(base)]


def test_every_engine_constant_is_declared_in_one_group_in_order():
    declared = [f.name for group in _groups() for f in dataclasses.fields(group)]
    assert len(declared) == len(set(declared)), "a constant is declared in two groups"
    assert [f.name for f in dataclasses.fields(EngineConstants)] == declared
    assert not EngineConstants.__dict__.get("__annotations__"), "EngineConstants only combines the groups"


def test_a_calibration_overrides_a_constant_of_every_group():
    first_numbers = [next(f for f in dataclasses.fields(group) if isinstance(f.default, float)) for group in _groups()]
    calibration = {f.name: f.default * 0.5 for f in first_numbers}
    calibration["nccl_base_latency_us"] = {"ring": {"Simple": 1.5}}  # a table
    k = engine_constants(calibration)
    for name, value in calibration.items():
        if isinstance(value, dict):
            assert getattr(k, name)["ring"]["Simple"] == 1.5
            assert getattr(k, name)["ring"]["LL"] == EngineConstants().nccl_base_latency_us["ring"]["LL"]
        else:
            assert getattr(k, name) == value
    assert len(calibration) == len(_groups()) + 1


def test_the_constants_types_are_objects_not_texts():
    """A group's module does without `from __future__ import annotations`: with its fields' types as the
    builtins themselves, dataclass needs no pattern match per field (is it a ClassVar, an InitVar?)
    as each class is made at the command line's start."""
    for group in [*_groups(), AcceleratorConstants]:
        assert {f.type for f in dataclasses.fields(group)} <= {float, int, bool, dict}, group.__name__


def test_engine_constants_are_made_by_name_and_equal_by_value():
    """EngineConstants writes its own __init__ and __eq__ (generated ones cost every start ~3 ms): they
    behave as a dataclass's: defaults, a fresh table each, overrides by name, a name that is no constant
    refused, equal exactly when every constant is."""
    base = EngineConstants()
    assert EngineConstants().nccl_base_latency_us is not base.nccl_base_latency_us  # a table per instance
    assert EngineConstants().nccl_base_latency_us == base.nccl_base_latency_us
    for f in dataclasses.fields(EngineConstants):
        value = getattr(base, f.name)
        other = {"changed": 1} if isinstance(value, dict) else (not value if isinstance(value, bool) else value + 1)
        changed = EngineConstants(**{f.name: other})
        assert getattr(changed, f.name) == other and changed != base, f.name
        assert dataclasses.replace(changed, **{f.name: value}) == base, f.name
    assert base == EngineConstants() and base != object()
    with pytest.raises(TypeError, match="no_such_constant"):
        EngineConstants(no_such_constant=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        base.nvlink_efficiency = 0.5
    with pytest.raises(TypeError):
        hash(base)
