"""A link edit re-costs only the groups whose traffic crosses that link.

Loads do not depend on capacity: the engine keeps every group's flows and their times, times again
only the flows on the NIC (or leaf, or pod) whose rate changed, takes the network time of only
their groups again, and keeps the cached cost of every collective whose groups did not change.
Every number of the result equals a fresh engine's.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from designer.core.engine.evaluate import Engine, Evaluation
from designer.core.engine.stages.jobs import JobResult
from designer.core.generate import generate_fat_tree
from designer.core.io import load_document
from designer.core.io.overrides import apply_overrides
from tests.conftest import EXAMPLES

GPT3_TP8_PP8 = ["workload.preset=gpt3-175b", "parallelism.tensor_model_parallel_size=8",
                "parallelism.pipeline_model_parallel_size=8", "parallelism.virtual_pipeline_model_parallel_size=12",
                "parallelism.pipeline_schedule=interleaved", "parallelism.sequence_parallel=true",
                "parallelism.use_distributed_optimizer=true", "parallelism.overlap_grad_reduce=true",
                "parallelism.overlap_param_gather=true", "parallelism.recompute_granularity=selective",
                "workload.global_batch_size=4096"]
# not figures: builders run on demand, the engine's own time, and the token naming which version of
# the design's link ids the result read (Document.link_ids_version: a new object per read design)
NOT_RESULTS = {"events_builder", "link_rows_builder", "_link_utilization", "engine_time_s", "link_ids_version"}


def _record_fields(value) -> tuple[str, ...]:
    """The fields of one of the engine's values: a dataclass's, or a plain class's slots."""
    if isinstance(value, type):
        return ()
    if dataclasses.is_dataclass(value):
        return tuple(f.name for f in dataclasses.fields(value))
    return getattr(type(value), "__slots__", ()) if type(value).__module__.startswith("designer.") else ()


def differences(a, b, path="result", out=None, seen=None) -> list[str]:
    """Every place two results differ, numbers compared exactly (events included)."""
    out = [] if out is None else out
    seen = set() if seen is None else seen
    if isinstance(a, (Evaluation, JobResult)):
        if id(a) in seen:  # the first job's result is the evaluation that lists the jobs
            return out
        seen.add(id(a))
    if isinstance(a, JobResult):
        for name in ("name", "interference", "node_ids", "slowdown_vs_alone", "result", "alone"):
            differences(getattr(a, name), getattr(b, name), f"{path}.{name}", out, seen)
        differences(a.placed.gpus, b.placed.gpus, f"{path}.placed.gpus", out, seen)
    elif _record_fields(a):
        if type(a) is not type(b):
            out.append(f"{path}: {type(a).__name__} != {type(b).__name__}")
            return out
        for name in _record_fields(a):
            if name not in NOT_RESULTS:
                differences(getattr(a, name), getattr(b, name), f"{path}.{name}", out, seen)
    elif isinstance(a, dict):
        if set(a) != set(b):
            out.append(f"{path}: keys differ")
        for key in set(a) & set(b):
            differences(a[key], b[key], f"{path}[{key!r}]", out, seen)
    elif isinstance(a, (list, tuple)):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} != {len(b)} items")
        for i, (x, y) in enumerate(zip(a, b)):
            differences(x, y, f"{path}[{i}]", out, seen)
    elif isinstance(a, np.ndarray):
        if a.shape != b.shape or not np.array_equal(a, b, equal_nan=a.dtype.kind == "f"):
            out.append(f"{path}: arrays differ")
    elif isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        pass
    elif type(a).__module__.startswith("designer.core.engine.constants"):
        pass  # the engine's constants: the same file, the same numbers
    elif a is None or b is None or isinstance(a, (bool, int, float, str)):
        if a != b:
            out.append(f"{path}: {a!r} != {b!r}")
    elif a != b:
        out.append(f"{path}: {a!r} != {b!r}")
    return out


def same_as_a_fresh_engine(result, doc) -> None:
    fresh = Engine().evaluate(doc)
    assert differences(result, fresh) == []
    assert differences(result.events, fresh.events) == []
    assert differences(result.link_utilization, fresh.link_utilization) == []


def gpt3_on_16k():
    doc = generate_fat_tree(nodes=2048, gpu="H100", switch_radix=64)
    apply_overrides(doc, GPT3_TP8_PP8)
    return doc


@pytest.mark.parametrize("design", ["a100-1024", "h100-16k"])
def test_a_nic_cable_edit_gives_the_numbers_of_a_fresh_engine(design):
    """The engine re-times only the groups whose flows cross the edited cable: every number of its
    answer (events and link loads included) is a fresh engine's, for the edit and back."""
    doc = load_document(EXAMPLES / "a100-1024gpu-rail-infiniband.yaml") if design == "a100-1024" else gpt3_on_16k()
    engine = Engine()
    before = engine.evaluate(doc)
    server_ids = {n.id for n in doc.nodes}
    cable = next(link for link in doc.links if link.a.split(":")[0] in server_ids)
    doc.update(cable.id, bandwidth_gbps=cable.bandwidth_gbps / 8)
    edited = engine.evaluate(doc)
    assert edited.step_time_s > before.step_time_s  # the slow cable is on the job's path
    same_as_a_fresh_engine(edited, doc)
    doc.update(cable.id, bandwidth_gbps=cable.bandwidth_gbps * 8)
    same_as_a_fresh_engine(engine.evaluate(doc), doc)


@pytest.mark.slow
@pytest.mark.parametrize("edit", [("spine cable", "bandwidth_gbps", 0.5), ("spine cable", "slowdown", 2.0),
                                  ("spine cable", "state", "down"), ("nic cable", "slowdown", 3.0)])
@pytest.mark.parametrize("example", ["a100-1024gpu-rail-infiniband.yaml", "shared-roce-512gpu-3jobs.yaml",
                                     "h100-roce-2to1-ethernet.yaml"])
def test_every_link_edit_gives_the_numbers_of_a_fresh_engine(example, edit):
    """Up-links (a leaf's or a pod's rate, ECMP's usable cables), a cable down, a slow NIC, and
    jobs that share the fabric (their views re-rated with the others' traffic taken off)."""
    doc = load_document(EXAMPLES / example)
    engine = Engine()
    engine.evaluate(doc)
    server_ids = {n.id for n in doc.nodes}
    which, field, value = edit
    links = [link for link in doc.links if (link.a.split(":")[0] in server_ids) == (which == "nic cable")]
    link = links[len(links) // 3]
    before = getattr(link, field)
    doc.update(link.id, **{field: before * value if field == "bandwidth_gbps" else value})
    same_as_a_fresh_engine(engine.evaluate(doc), doc)
    doc.update(link.id, **{field: before})  # and back
    same_as_a_fresh_engine(engine.evaluate(doc), doc)


def test_a_price_edit_keeps_the_fabric(monkeypatch):
    """Prices are the cost's, not the network's: an edit in Parts and Costs re-evaluates without
    building the fabric again (0.5 s and more at 16k GPUs), and the step is the same."""
    import designer.core.engine.evaluate as evaluate_module

    builds = []
    real = evaluate_module.build_fabric
    monkeypatch.setattr(evaluate_module, "build_fabric", lambda *args: builds.append(1) or real(*args))
    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    engine = Engine()
    first = engine.evaluate(doc)
    doc.set_overrides("prices", {"usd_per_kwh": 0.2})
    again = engine.evaluate(doc)
    assert len(builds) == 1 and again.step_time_s == first.step_time_s
