"""Hostile and absurd numbers: every number of the format and every
calibration constant has a physical range, declared once, shown by the schema and enforced by one
check that validate, evaluate, trace and --set share. Bad input is exit 65 with FILE:LINE:COLUMN,
never exit 0 with a non-finite or absurd answer, never an internal error (exit 70)."""
from __future__ import annotations

import dataclasses
import json
import math
import re
import typing

import numpy as np
import pytest

from designer.core.engine.constants import AcceleratorConstants, EngineConstants
from designer.core.io.editor_schema import json_schema
from designer.core.model.elements import Link, Node, Rack, Switch
from designer.core.model.job import Parallelism, Workload
from tests.conftest import EXAMPLES, run_cli

EXAMPLE = EXAMPLES / "h100-64gpu-infiniband.yaml"


def example_with(tmp_path, section: str, line: str, name: str = "design.yaml"):
    """A copy of the example with `line` put into `section`: an element's first one-line item
    (nodes, switches, links: `"key": value`), or a block key (workload, calibration: `key: value`)."""
    text = EXAMPLE.read_text()
    lines = text.splitlines()
    if section in ("nodes", "switches", "links"):
        start = lines.index(f"  {section}:") + 1
        lines[start] = lines[start].rstrip()[:-1] + f", {line}}}"
        target = start + 1
    elif section == "workload":
        start = lines.index("  workload:")
        key = line.split(":")[0]
        existing = [i for i, l in enumerate(lines) if l.strip().startswith(key + ":") and i > start]
        if existing:
            lines[existing[0]] = f"    {line}"
            target = existing[0] + 1
        else:
            lines.insert(start + 1, f"    {line}")
            target = start + 2
    else:  # calibration, a block of its own at the end of spec
        lines += ["  calibration:"] + [f"    {l}" for l in line.split("\n")]
        target = len(lines)
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path, target


def assert_refused_at_line(code, err, path, line, key):
    assert code == 65, err
    assert "internal error" not in err and "Traceback" not in err
    located = re.findall(rf"^{re.escape(str(path))}:(\d+):(\d+): (.*)$", err, re.MULTILINE)
    assert located, f"no FILE:LINE:COLUMN in {err!r}"
    hits = [(int(l), int(c), m) for l, c, m in located if key in m]
    assert hits, f"no message names {key}: {err!r}"
    assert any(l == line for l, _, _ in hits), (line, hits)


# The values the fuzzing found accepted (absurd answers) or crashing (exit 70), each in a file.
FILE_CASES = [
    ("nodes", '"nic_gbps": .nan', "nic_gbps"),
    ("switches", '"latency_us": .inf', "latency_us"),
    ("nodes", '"slowdown": .inf', "slowdown"),
    ("links", '"bandwidth_gbps": 5.0e-324', "bandwidth_gbps"),
    ("nodes", '"nic_count": 1.0e+15', "nic_count"),
    ("nodes", '"gpu_slowdown": [1, .nan]', "gpu_slowdown"),
    ("calibration", "accelerators:\n  H100: {sustained_clock_factor: 3}", "sustained_clock_factor"),
    ("calibration", "sustained_clock_factor: 3", "sustained_clock_factor"),
    ("calibration", "memory_fragmentation: -.inf", "memory_fragmentation"),
    ("calibration", "nvlink_efficiency: 0", "nvlink_efficiency"),
    ("calibration", "microbatch_overhead_s: -0.5", "microbatch_overhead_s"),
    ("calibration", "nvlink_effciency: 0.8", "nvlink_effciency"),
    ("calibration", "nccl_base_latency_us: {ring: {LL: .nan}}", "nccl_base_latency_us.ring.LL"),
    ("workload", "global_batch_size: 4294967297", "global_batch_size"),
    ("workload", "num_layers: 1.0e+15", "num_layers"),
]


@pytest.mark.parametrize("command", ["validate", "evaluate"])
@pytest.mark.parametrize("section, line, key", FILE_CASES, ids=[c[2] + ":" + c[1][:20] for c in FILE_CASES])
def test_absurd_values_in_a_file_are_refused_at_their_line(tmp_path, command, section, line, key):
    path, target = example_with(tmp_path, section, line)
    code, out, err = run_cli(command, str(path))
    assert_refused_at_line(code, err, path, target, key)
    assert out == ""


def test_a_misspelt_calibration_key_gets_the_same_answer_from_validate_evaluate_and_schema(tmp_path):
    import jsonschema
    import yaml

    path, target = example_with(tmp_path, "calibration", "nvlink_effciency: 0.8")
    for command in ("validate", "evaluate", "report", "trace"):
        extra = ["-o", str(tmp_path / "out")] if command in ("report", "trace") else []
        code, _, err = run_cli(command, str(path), *extra)
        assert_refused_at_line(code, err, path, target, "nvlink_effciency")
        assert "did you mean nvlink_efficiency?" in err
    errors = list(jsonschema.Draft7Validator(json_schema()).iter_errors(yaml.safe_load(path.read_text())))
    assert any("nvlink_effciency" in e.message for e in errors)


def test_too_many_micro_batches_are_refused_with_the_reason_and_the_limit(tmp_path):
    path, target = example_with(tmp_path, "workload", "global_batch_size: 10000000")
    # TP 8 on 64 GPUs: DP 8, so 1,250,000 micro-batches of one sample
    path.write_text(path.read_text().replace("tensor_model_parallel_size: 2", "tensor_model_parallel_size: 8"))
    for command in ("validate", "evaluate", "trace"):
        code, _, err = run_cli(command, str(path), *(["-o", str(tmp_path / "t.json")] if command == "trace" else []))
        assert_refused_at_line(code, err, path, target, "global_batch_size")
        assert "1,250,000 micro-batches" in err and "at most 1,048,576" in err
    assert not (tmp_path / "t.json").exists()


def test_a_trace_too_large_to_open_is_refused_before_any_work(tmp_path):
    path, target = example_with(tmp_path, "workload", "global_batch_size: 8000000")  # 250,000 micro-batches
    code, _, err = run_cli("trace", str(path), "-o", str(tmp_path / "t.json"))
    assert_refused_at_line(code, err, path, target, "global_batch_size")
    assert "at most 262,144" in err
    assert not (tmp_path / "t.json").exists()


def test_suggested_batch_sizes_stay_few_however_large_the_batch(tmp_path):
    import resource
    import time

    path, _ = example_with(tmp_path, "workload", "global_batch_size: 1073741823")  # odd: no DP divides it
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    code, _, err = run_cli("validate", str(path))
    assert code == 65 and "global_batch_size" in err
    assert time.perf_counter() - t0 < 10
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # KiB: no list of every size
    assert len(err) < 4000


# ---- every numeric field and constant: declared range, shown by the schema ------------------------

def _numeric(cls):
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        args = [a for a in typing.get_args(tp) if a is not type(None)] or [tp]
        inner = [typing.get_args(a)[0] if typing.get_origin(a) is list else a for a in args]
        if any(a in (int, float) for a in inner) and bool not in inner:
            yield f


ELEMENTS = {"racks": Rack, "nodes": Node, "switches": Switch, "links": Link}


def test_every_number_of_the_format_and_every_constant_has_a_range_in_the_schema():
    schema = json_schema()
    defs = schema["definitions"]
    for cls in (Rack, Node, Switch, Link, Workload, Parallelism):
        for f in _numeric(cls):
            prop = defs[cls.__name__]["properties"][f.name]
            prop = prop.get("items", prop)
            # a key that also takes a Megatron-LM alias form (moe_layer_freq's pattern) is an anyOf:
            # its numeric form carries the range
            numeric = [a for a in prop.get("anyOf", ()) if {"integer", "number"} & set(np.atleast_1d(a.get("type")))]
            prop = numeric[0] if numeric else prop
            assert "maximum" in prop and ("minimum" in prop or "exclusiveMinimum" in prop), (cls.__name__, f.name)
    cal = defs["Calibration"]["properties"]
    accel = defs["AcceleratorCalibration"]["properties"]
    for cls, props in ((EngineConstants, cal), (AcceleratorConstants, accel)):
        for f in dataclasses.fields(cls):
            prop = props[f.name]
            assert "Unit:" in prop["description"], f.name
            if prop.get("type") in ("number", "integer"):
                assert "minimum" in prop and "maximum" in prop, f.name
            if prop.get("type") == "object":  # NCCL tables: algorithm -> protocol -> number
                number = prop["properties"]["ring"]["properties"]["Simple"]
                assert "minimum" in number and "maximum" in number
    assert cal["accelerators"]["additionalProperties"] == {"$ref": "#/definitions/AcceleratorCalibration"}


# ---- fuzz-ish: every numeric field through --set with hostile values -----------------------------

HOSTILE = ("nan", "inf", "-inf", "-1", "0", "1e300")


def _keys():
    keys = []
    for section, cls in (("workload", Workload), ("parallelism", Parallelism)):
        keys += [f"{section}.{f.name}" for f in _numeric(cls)]
    for collection, cls in ELEMENTS.items():
        keys += [f"{collection}[0].{f.name}" for f in _numeric(cls)]
    for f in dataclasses.fields(EngineConstants):
        if f.metadata.get("table"):
            keys.append(f"calibration.{f.name}.ring.Simple")
        elif f.type != "bool":
            keys.append(f"calibration.{f.name}")
    keys += [f"calibration.accelerators.H100.{f.name}" for f in dataclasses.fields(AcceleratorConstants)
             if f.type != "bool"]
    return keys


def _absurd(result: dict) -> str | None:
    def finite(x):
        return isinstance(x, (int, float)) and math.isfinite(x)

    if not (finite(result["step_time_s"]) and result["step_time_s"] > 0):
        return f"step time {result['step_time_s']}"
    if not (finite(result["tokens_per_s"]) and result["tokens_per_s"] > 0):
        return f"tokens/s {result['tokens_per_s']}"
    if not (finite(result["mfu"]) and 0 < result["mfu"] <= 1):
        return f"MFU {result['mfu']}"
    for group in ("breakdown_s", "memory_gib_per_gpu"):
        for name, value in result[group].items():
            if not (finite(value) and value >= 0):
                return f"{group}.{name} {value}"
    return None


@pytest.mark.slow
def test_every_numeric_field_with_hostile_values_never_gives_an_absurd_answer_or_an_internal_error():
    failures = []
    for key in _keys():
        for raw in HOSTILE:
            value = f"[1, {raw}]" if key.endswith("gpu_slowdown") else raw
            code, out, err = run_cli("evaluate", str(EXAMPLE), "--json", "--set", f"{key}={value}")
            if code == 0:
                why = _absurd(json.loads(out))
                if why:
                    failures.append(f"{key}={value}: exit 0 with {why}")
            elif code != 65 or "internal error" in err or f"--set {key}" not in err and "spec." not in err:
                failures.append(f"{key}={value}: exit {code}: {err.strip()[:200]}")
    assert not failures, "\n".join(failures)


def test_a_text_key_keeps_number_like_text_typed_in_set():
    """--set reads nan/inf/1e300 as numbers for number keys only: a server may be named 1e3."""
    code, out, err = run_cli("evaluate", str(EXAMPLE), "--json", "--set", "nodes[node0].name=1e3",
                             "--set", "nodes[node1].slowdown=1e0")
    assert code == 0, err
    code, _, err = run_cli("evaluate", str(EXAMPLE), "--set", "nodes[node1].slowdown=nan")
    assert code == 65 and "not a finite number" in err
