"""The engine's error range for a prediction: the 80 % range of measured / predicted step time on
published runs of the same class (resources/catalog/error_ranges.yaml, made by
`python benchmarks/error_ranges.py` from tests/validation/data; docs/decide.md states the rule).

A run's class is (dense | moe) / (bf16 | fp8) / (infiniband | ethernet) / (scale: up to 1,024 GPUs
| more); when fewer than the file's `min_runs` published runs share all four, the class is
widened in the file's `fallback` order (scale, then fabric, then precision) down to `all`.
"""
from __future__ import annotations

import functools
import os

from ..model.catalog import CATALOG_DIR, _read

RANGES_FILE = os.path.join(CATALOG_DIR, "error_ranges.yaml")
LARGE_GPUS = 1024  # above it a run is "large" (the published runs split about evenly there)


class StepRange:
    """A step-time range from the model's error on published runs of the same class."""
    range_s: tuple[float, float]  # [low, high] step time, seconds
    error_class: str  # the class whose published runs gave the range
    runs: int  # how many published runs are in that class
    note: str

    __slots__ = ("range_s", "error_class", "runs", "note")

    def __init__(self, range_s: tuple[float, float], error_class: str, runs: int, note: str = "") -> None:
        self.range_s = range_s
        self.error_class = error_class
        self.runs = runs
        self.note = note

    def contains(self, other: "StepRange") -> bool:
        return not (self.range_s[1] < other.range_s[0] or other.range_s[1] < self.range_s[0])


@functools.lru_cache(maxsize=1)
def error_ranges() -> dict:
    return _read(RANGES_FILE)


def run_class(moe: bool, precision: str, fabric: str, gpus: int) -> str:
    precision = "fp8" if precision in ("fp8", "mxfp8", "fp4", "nvfp4") else "bf16"
    return f"{'moe' if moe else 'dense'}/{precision}/{fabric}/{'large' if gpus > LARGE_GPUS else 'small'}"


def candidates(cls: str) -> list[str]:
    """The class and its widenings, narrowest first."""
    arch, precision, fabric, _ = cls.split("/")
    return [cls, f"{arch}/{precision}/{fabric}", f"{arch}/{precision}", arch, "all"]


def fabric_runs(fabric: str, data: dict) -> int:
    """Published training runs of the range half on `fabric` (InfiniBand or Ethernet), all classes."""
    return sum(row["runs"] for key, row in data["classes"].items()
               if key.count("/") == 2 and key.split("/")[2] == fabric)


def range_for(step_s: float, cls: str, data: dict | None = None) -> StepRange:
    """The range of `cls`, or of the narrowest widening with enough runs. A run on a fabric with
    fewer than `min_runs` published runs (Ethernet today) says so in its error_class: its range
    is that of the other fabric's runs."""
    data = data or error_ranges()
    classes = data["classes"]
    minimum = data.get("min_runs", 5)
    fabric = cls.split("/")[2]
    measured = fabric_runs(fabric, data)
    note = fallback = ""
    if measured < minimum:
        counted = "no published" if measured == 0 else f"only {measured} published"
        note = f"{counted} {fabric} training run{'s' if measured > 1 else ''}: the range is that of other fabrics"
        fallback = f" (fallback: {counted} {fabric} run{'s' if measured > 1 else ''})"
    for key in candidates(cls):
        row = classes.get(key)
        if row and row["runs"] >= minimum:
            return StepRange((step_s * row["low"], step_s * row["high"]), key + fallback, row["runs"], note)
    row = classes["all"]
    return StepRange((step_s * row["low"], step_s * row["high"]), "all" + fallback, row["runs"], note)


def step_time_range(result, doc, catalog=None) -> StepRange:
    """The range of an Evaluation on `doc` (its first job's class)."""
    return range_for(result.step_time_s, classify(result, doc, catalog))


def classify(result, doc, catalog=None) -> str:
    from ..model.catalog import default_catalog
    from ..model.job import resolve_workload

    moe = False
    if doc.spec.workload is not None:  # a design of several jobs: each job's own shape is not at hand here
        w = resolve_workload(doc.spec.workload, (catalog or default_catalog()).presets())
        moe = (w.num_experts or 0) > 1
    precision = (result.plan or {}).get("precision", "bf16")
    kinds = {n.nic_kind for n in doc.nodes[:64]}
    fabric = "ethernet" if "ethernet" in kinds else "infiniband"
    return run_class(moe, precision, fabric, result.num_gpus)
