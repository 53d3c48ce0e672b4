"""The one check of a file's `calibration` mapping: names, types and physical ranges.

Used by the loader, `--set`, `designer validate`, the engine and the GUI. Every problem carries
its path in the file, so the loader can place it at FILE:LINE:COLUMN.
"""
from __future__ import annotations

import dataclasses

from ..model.spec import describe_range, range_problem
from ..problems import Problem, did_you_mean
from .constants import AcceleratorConstants, EngineConstants, constant_fields

TABLE_ALGORITHMS = ("ring", "tree", "nvls", "collnet", "pat")
TABLE_PROTOCOLS = ("LL", "LL128", "Simple")
CALIBRATION_PATH = ("spec", "calibration")
RELIABILITY_SECTION = "reliability"  # calibration.reliability: model/reliability.py's constants (RELIABILITY_KEY)


def _dotted(path: tuple) -> str:
    return ".".join(str(p) for p in path)


def _problem(path: tuple, message: str, fix: str | None = None, at_key: bool = False) -> Problem:
    """A problem that the loader can place at FILE:LINE:COLUMN (it reads `_path`)."""
    p = Problem(message, _dotted(path), fix=fix)
    p._path = path  # type: ignore[attr-defined]
    p._at_key = at_key  # type: ignore[attr-defined]
    return p


def _unknown(path: tuple, what: str, known) -> Problem:
    guess = did_you_mean(str(path[-1]), known)
    return _problem(path, f"unknown {what}" + (f" (did you mean {guess}?)" if guess else ""),
                    None if guess else "known: " + ", ".join(sorted(known)), at_key=True)


def _value_problem(f: dataclasses.Field, value, path: tuple) -> Problem | None:
    """The type and the physical range of one constant, from its declaration."""
    tp = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "")
    meta = f.metadata
    if tp == "bool":
        if not isinstance(value, bool):
            return _problem(path, f"expected true or false, got {value!r}")
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return _problem(path, f"expected a number ({describe_range(meta)}), got {value!r}")
    why = range_problem(value, meta)
    if why is None and tp == "int" and not float(value).is_integer():
        why = f"{value!r} is not a whole number ({describe_range(meta)})"
    return _problem(path, why) if why else None


def _check_table(f: dataclasses.Field, value, path: tuple) -> list[Problem]:
    if not isinstance(value, dict):
        return [_problem(path, "expected a mapping of algorithm to {protocol: value}",
                         "e.g. {ring: {Simple: 8.4}}")]
    out = []
    for algorithm, protocols in value.items():
        where = path + (algorithm,)
        if algorithm not in TABLE_ALGORITHMS:
            out.append(_unknown(where, "NCCL algorithm", TABLE_ALGORITHMS))
            continue
        if not isinstance(protocols, dict):
            out.append(_problem(where, "expected a mapping of protocol to value", "e.g. {LL: 6.6, Simple: 8.4}"))
            continue
        for protocol, number in protocols.items():
            if protocol not in TABLE_PROTOCOLS:
                out.append(_unknown(where + (protocol,), "NCCL protocol", TABLE_PROTOCOLS))
                continue
            why = range_problem(number, f.metadata) if not isinstance(number, bool) and isinstance(
                number, (int, float)) else f"expected a number ({describe_range(f.metadata)}), got {number!r}"
            if why:
                out.append(_problem(where + (protocol,), why))
    return out


def _constants_problems(values, where: tuple, fields: dict, what: str, example: str) -> list[Problem]:
    """The problems of one mapping of constants (an accelerator's, the reliability section): not a
    mapping, unknown names with a did-you-mean, values outside their range."""
    if not isinstance(values, dict):
        return [_problem(where, f"expected a mapping of {what}s", example)]
    out = []
    for k, v in values.items():
        if k not in fields:
            out.append(_unknown(where + (k,), what, fields))
        else:
            problem = _value_problem(fields[k], v, where + (k,))
            if problem:
                out.append(problem)
    return out


def check_calibration(calibration, catalog=None, base: tuple = CALIBRATION_PATH) -> list[Problem]:
    """The one check of a calibration mapping, for the loader, `--set`, `designer validate`, the
    engine and the GUI: unknown keys with a did-you-mean, wrong types, and values outside the
    constant's physical range (or not finite). Each problem carries its path, so a file's
    problems get a line and column."""
    if calibration is None:
        return []
    if not isinstance(calibration, dict):
        return [_problem(base, f"expected a mapping of constant names to values, got {type(calibration).__name__}")]
    if catalog is None:
        from ..model.catalog import default_catalog

        catalog = default_catalog()
    engine, accel = constant_fields(EngineConstants), constant_fields(AcceleratorConstants)
    out = []
    for key, value in calibration.items():
        path = base + (key,)
        if key == "accelerators":
            if not isinstance(value, dict):
                out.append(_problem(path, "expected a mapping of accelerator names",
                                    "e.g. accelerators: {H100: {gemm_efficiency_best: 0.78}}"))
                continue
            for name, values in value.items():
                where = path + (name,)
                if catalog.resolve("accelerators", name) is None:
                    out.append(_problem(where, f"unknown accelerator {name!r}", catalog.suggest("accelerators", name),
                                        at_key=True))
                    continue
                if values is not None:
                    out += _constants_problems(values, where, accel, "accelerator constant",
                                               "e.g. {gemm_efficiency_best: 0.78}")
        elif key == RELIABILITY_SECTION:  # failure rates, checkpoint and restart of a run
            from ..model.reliability import RELIABILITY_FIELDS  # here: a file with this section alone needs them

            out += _constants_problems(value, path, RELIABILITY_FIELDS, "reliability constant",
                                       "e.g. reliability: {storage_write_tbps: 0.5, hot_spares: 2}")
        elif key in accel:
            out.append(_problem(path, f"{key} is a constant of one accelerator kind",
                                f"put it under accelerators, e.g. accelerators: {{H100: {{{key}: ...}}}}", at_key=True))
        elif key not in engine:
            out.append(_unknown(path, "engine constant", set(engine) | {"accelerators", RELIABILITY_SECTION}))
        elif engine[key].metadata.get("table"):
            out += _check_table(engine[key], value, path)
        else:
            problem = _value_problem(engine[key], value, path)
            if problem:
                out.append(problem)
    return out
