"""Make resources/catalog/error_ranges.yaml: the engine's 80 % error range per class of run.

    .venv/bin/python benchmarks/error_ranges.py [--check]

Every training case of tests/validation/data runs through the public CLI (as benchmarks/accuracy.py
runs it). The cases are split in two by a fixed rule on their id (the first byte of its SHA-1,
even: "range" half, odd: "check" half). Each class's range is the 80 % prediction interval of a
new run's measured / predicted step time from the range half's runs of that class, taken as
log-normal: exp(mean +- t(0.90, n-1) x sd x sqrt(1 + 1/n)) of the log ratios (sample percentiles of
a handful of runs are too narrow for a run not yet seen). The check half then says how many of its
runs fall inside their class's range (about 80 % is right). Run it again whenever
the engine's numbers change. --check: print, write nothing.
"""
from __future__ import annotations

import argparse
import hashlib
import math
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from benchmarks.accuracy import training_rows  # noqa: E402
from designer.core.analysis.error_bars import RANGES_FILE, candidates, range_for, run_class  # noqa: E402
from tests.validation.cases import CASES_FILE, MODERN_CASES_FILE, load_cases  # noqa: E402

MIN_RUNS = 5
# Student's t, 90th percentile, by degrees of freedom 1..30 (above: the normal's 1.2816)
T90 = (3.078, 1.886, 1.638, 1.533, 1.476, 1.440, 1.415, 1.397, 1.383, 1.372, 1.363, 1.356, 1.350, 1.345, 1.341,
       1.337, 1.333, 1.330, 1.328, 1.325, 1.323, 1.321, 1.319, 1.318, 1.316, 1.315, 1.314, 1.313, 1.311, 1.310)


def half(case_id: str) -> str:
    return "range" if hashlib.sha1(case_id.encode()).digest()[0] % 2 == 0 else "check"


def case_class(case: dict) -> str:
    w, c = case.get("workload", {}), case["cluster"]
    gpus = c["nodes"] * c.get("gpus_per_node", 8)
    moe = (w.get("num_experts") or 0) > 1 or "moe" in (case.get("features") or [])
    return run_class(moe, w.get("precision", "bf16"), c.get("fabric", "infiniband"), gpus)


def prediction_interval(ratios: list[float]) -> tuple[float, float]:
    """80 % prediction interval of the next ratio, log-normal (a single run: itself)."""
    logs = [math.log(r) for r in ratios]
    n = len(logs)
    mean = sum(logs) / n
    if n < 2:
        return ratios[0], ratios[0]
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (n - 1))
    t = T90[n - 2] if n - 1 <= len(T90) else 1.2816
    half_width = t * sd * math.sqrt(1 + 1 / n)
    return math.exp(mean - half_width), math.exp(mean + half_width)


def build(rows: list[tuple[dict, dict]]) -> dict:
    ratios: dict[str, list[float]] = {}
    for case, row in rows:
        if half(case["id"]) != "range" or "predicted_s" not in row:
            continue
        for key in candidates(case_class(case)):
            ratios.setdefault(key, []).append(row["measured_s"] / row["predicted_s"])
    classes = {}
    for key, v in sorted(ratios.items()):
        low, high = prediction_interval(v)
        classes[key] = {"runs": len(v), "low": round(low, 4), "high": round(high, 4)}
    data = {"min_runs": MIN_RUNS, "fabrics_measured": sorted({c["cluster"].get("fabric", "infiniband")
                                                              for c, _ in rows}), "classes": classes}
    inside = total = 0
    misses = []
    for case, row in rows:
        if half(case["id"]) != "check" or "predicted_s" not in row:
            continue
        r = range_for(row["predicted_s"], case_class(case), data)
        total += 1
        if r.range_s[0] <= row["measured_s"] <= r.range_s[1]:
            inside += 1
        else:
            misses.append(case["id"])
    data["check"] = {"runs": total, "inside": inside, "outside": misses}
    return data


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="print the ranges, write nothing")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in (CASES_FILE, MODERN_CASES_FILE):
            cases = load_cases(path)["training"]
            rows += list(zip(cases, training_rows(cases, Path(tmp))))
    data = build(rows)
    header = ("# The engine's 80 % error range per class of run: measured / predicted step time, the 80 %\n"
              "# prediction interval (log-normal) from the published runs of tests/validation/data whose id is in the 'range' half\n"
              "# (SHA-1 of the id, first byte even); 'check' counts the other half's runs inside their range.\n"
              "# Made by `python benchmarks/error_ranges.py`; rerun it when the engine's numbers change.\n"
              "# Read by designer/core/analysis/error_bars.py (docs/decide.md).\n")
    text = header + yaml.safe_dump(data, sort_keys=False, width=100)
    print(text)
    if not args.check:
        Path(RANGES_FILE).write_text(text)
        print(f"wrote {RANGES_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
