"""Fitted constants checked on runs they were not fitted on: fit on one half, report on the other.

    .venv/bin/python benchmarks/holdout.py [--json OUT]

The published training runs (tests/validation/data/published-cases*.yaml) are split into two
fixed halves by their id: half A holds the runs whose sha256(id) starts with an even byte, half B
the rest. For each constant of the catalog or the engine that is fitted to runs rather than
measured, the script refits it on the half-A runs it applies to (the value that makes their median
signed error zero, by bisection; dense runs only, as the catalog's fits) and reports, on the half-B
runs it applies to, the median |error|
with the catalog's value and with the half-A value. A constant with no half-A run cannot be
refitted (its value rests on the other half alone); one with no half-B run has no check. Then it
checks the two paired fits: the slowest-rank wait (rank_speed_cv) with every clock factor raised
x1.09 for it, against both turned off; the engine-wide kernel_gap_fraction, refitted on every
half-A dense run; and A100's unfused attention with its clock factor, against
FlashAttention with the clock refitted on half A. Last, the power model of the Blackwell die
(calibration gemm_power_w_per_pflops3, engine/power.py): refitted on the half-A dense runs of the parts
that carry it, checked on their half-B dense runs against the per-part clock fits it replaced, and
what it would give GB300, whose clock is still a per-part fit.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.accuracy import run_cli  # noqa: E402
from designer.core.engine.constants import accelerator_constants  # noqa: E402
from designer.core.model.catalog import default_catalog  # noqa: E402
from tests.validation.cases import CASES_FILE, MODERN_CASES_FILE, generate_args, load_cases, set_args  # noqa: E402

CLOCK_FITTED = {  # accelerator: the runs its sustained_clock_factor was fitted to (catalog comments)
    "A100-SXM4-80GB": "the 18 A100 runs of published-cases.yaml (Megatron SC'21, Korthikanti 2022)",
    "GB300": "GB300 dense Llama runs of published-cases-modern.yaml",
}
# The parts whose clock follows from the Blackwell die's power model (one gemm_power_w_per_pflops3), and
# the per-part clock factors that model replaced (B200's was GB200's carried by the cube root of the limits)
POWER_MODEL_PARTS = ("B200", "GB200", "B300")
FORMER_FITS = {"B200": 0.687, "GB200": 0.73, "B300": 0.78}
RAISE = 1.09  # the factor every fitted clock was raised by when rank_speed_cv was introduced


def half(case_id: str) -> str:
    return "A" if hashlib.sha256(case_id.encode()).digest()[0] % 2 == 0 else "B"


class Runs:
    """The published training runs, generated once, evaluated with extra --set overrides."""

    def __init__(self, tmp: Path):
        self.cases = []
        catalog = default_catalog()
        for path in (CASES_FILE, MODERN_CASES_FILE):
            for case in load_cases(path)["training"]:
                out = tmp / f"{case['id']}.yaml"
                code, _, err = run_cli(*generate_args(case["cluster"], out))
                if code != 0:
                    continue
                workload = case["workload"]
                preset = catalog.presets().get(workload.get("preset") or "")
                experts = workload.get("num_experts") or (preset.values.get("num_experts") if preset else None)
                case = dict(case, file=out, accelerator=catalog.accelerator(case["cluster"]["gpu"]).name,
                            half=half(case["id"]), dense=not experts)
                self.cases.append(case)

    def error(self, case: dict, sets: list[str]) -> float | None:
        extra = sum((["--set", s] for s in sets), [])
        code, out, _ = run_cli("evaluate", case["file"], *set_args(case), *extra, "--json")
        if code != 0:
            return None
        return json.loads(out)["step_time_s"] / case["step_time_s"] - 1

    def errors(self, cases: list[dict], sets: list[str]) -> list[float]:
        return [e for e in (self.error(c, sets) for c in cases) if e is not None]


def median_abs(errors: list[float]) -> float | None:
    return statistics.median(abs(e) for e in errors) if errors else None


def fit_clock(runs: Runs, cases: list[dict], name: str, base: list[str]) -> float | None:
    """The clock factor whose median signed error on `cases` is zero (step time falls as it rises)."""
    if not cases:
        return None
    lo, hi = 0.3, 1.0
    for _ in range(12):
        mid = (lo + hi) / 2
        errs = runs.errors(cases, base + [f"calibration.accelerators.{name}.sustained_clock_factor={mid:.5f}"])
        if statistics.median(errs) > 0:  # too slow: raise the clock
            lo = mid
        else:
            hi = mid
    return round((lo + hi) / 2, 4)


def fit_power(runs: Runs, cases: list[dict], names: tuple[str, ...]) -> float:
    """The gemm_power_w_per_pflops3, set on every part of `names`, whose median signed error on `cases` is
    zero (step time rises with it)."""
    lo, hi = 100.0, 2000.0
    for _ in range(14):
        mid = (lo + hi) / 2
        if statistics.median(runs.errors(cases, power_sets(names, mid))) > 0:  # too slow: less power per rate
            hi = mid
        else:
            lo = mid
    return round((lo + hi) / 2, 1)


def power_sets(names, value: float) -> list[str]:
    return [f"calibration.accelerators.{n}.gemm_power_w_per_pflops3={value:.2f}" for n in names]


def fit_gap(runs: Runs, cases: list[dict]) -> float:
    """The kernel_gap_fraction, set on every accelerator of `cases`, whose median signed error on them is
    zero (step time rises with it)."""
    names = sorted({c["accelerator"] for c in cases})
    lo, hi = 0.0, 0.3
    for _ in range(10):
        mid = (lo + hi) / 2
        errs = runs.errors(cases, gap_sets(names, mid))
        if statistics.median(errs) > 0:  # too slow: fewer gaps
            hi = mid
        else:
            lo = mid
    return round((lo + hi) / 2, 4)


def gap_sets(names: list[str], value: float) -> list[str]:
    return [f"calibration.accelerators.{n}.kernel_gap_fraction={value:.5f}" for n in names]


def pct(x: float | None) -> str:
    return "   -  " if x is None else f"{x:6.1%}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the table to this JSON file")
    args = parser.parse_args()
    catalog = default_catalog()
    report = []
    with tempfile.TemporaryDirectory() as tmp:
        runs = Runs(Path(tmp))
        print(f"{len(runs.cases)} published training runs: half A {sum(c['half'] == 'A' for c in runs.cases)}, "
              f"half B {sum(c['half'] == 'B' for c in runs.cases)} (sha256 of the id, first byte even: A)\n")
        print(f"{'constant':44} {'catalog':>8} {'fit on A':>8} {'n A':>4} {'n B':>4} "
              f"{'B |err| catalog':>16} {'B |err| A-fit':>14}  fitted on")
        for name, source in CLOCK_FITTED.items():
            # as the catalog's fits: the dense runs (MoE runs were never used to fit a clock)
            mine = [c for c in runs.cases if c["accelerator"] == name and c["dense"]]
            on_a, on_b = [c for c in mine if c["half"] == "A"], [c for c in mine if c["half"] == "B"]
            value = catalog.accelerator(name).calibration.get("sustained_clock_factor")
            fitted = fit_clock(runs, on_a, name, [])
            b_catalog = median_abs(runs.errors(on_b, []))
            b_fit = median_abs(runs.errors(on_b, [f"calibration.accelerators.{name}.sustained_clock_factor={fitted}"])) \
                if fitted is not None else None
            row = {"constant": f"{name}.sustained_clock_factor", "catalog": value, "fit_on_a": fitted,
                   "n_a": len(on_a), "n_b": len(on_b), "b_error_catalog": b_catalog, "b_error_fit_on_a": b_fit,
                   "fitted_on": source}
            report.append(row)
            print(f"{row['constant']:44} {value:8.3f} {fitted if fitted is not None else '-':>8} {len(on_a):4} "
                  f"{len(on_b):4} {pct(b_catalog):>16} {pct(b_fit):>14}  {source}")

        # the engine-wide launch-gap share, refitted on every half-A dense run
        dense_a = [c for c in runs.cases if c["half"] == "A" and c["dense"]]
        dense_b = [c for c in runs.cases if c["half"] == "B" and c["dense"]]
        gap = fit_gap(runs, dense_a)
        b_now = median_abs(runs.errors(dense_b, []))
        b_gap = median_abs(runs.errors(dense_b, gap_sets(sorted({c["accelerator"] for c in dense_b}), gap)))
        report.append({"constant": "kernel_gap_fraction", "catalog": 0.03, "fit_on_a": gap, "n_a": len(dense_a),
                       "n_b": len(dense_b), "b_error_catalog": b_now, "b_error_fit_on_a": b_gap,
                       "fitted_on": "engine-wide"})
        print(f"{'kernel_gap_fraction':44} {0.03:8.3f} {gap:8} {len(dense_a):4} {len(dense_b):4} {pct(b_now):>16} "
              f"{pct(b_gap):>14}  engine-wide, every dense run")

        # the Blackwell die's power model against the per-part fits it replaced
        mine = [c for c in runs.cases if c["accelerator"] in POWER_MODEL_PARTS and c["dense"]]
        on_a, on_b = [c for c in mine if c["half"] == "A"], [c for c in mine if c["half"] == "B"]
        kappa = catalog.accelerator("GB200").calibration["gemm_power_w_per_pflops3"]
        fitted = fit_power(runs, on_a, POWER_MODEL_PARTS)
        former = [f"calibration.accelerators.{n}.sustained_clock_factor={v}" for n, v in FORMER_FITS.items()]
        b_former, b_model = median_abs(runs.errors(on_b, former)), median_abs(runs.errors(on_b, []))
        b_fit = median_abs(runs.errors(on_b, power_sets(POWER_MODEL_PARTS, fitted)))
        report.append({"constant": "Blackwell gemm_power_w_per_pflops3", "catalog": kappa, "fit_on_a": fitted,
                       "n_a": len(on_a), "n_b": len(on_b), "b_error_per_part_fits": b_former,
                       "b_error_catalog": b_model, "b_error_fit_on_a": b_fit, "parts": list(POWER_MODEL_PARTS)})
        print(f"\nBlackwell power model ({', '.join(POWER_MODEL_PARTS)}): gemm_power_w_per_pflops3 {kappa} "
              f"(refit on {len(on_a)} half-A dense runs: {fitted}); half B, {len(on_b)} dense runs, median |error|: "
              f"per-part fits {pct(b_former)}, power model {pct(b_model)}, refit {pct(b_fit)}")
        for c in on_b:
            print(f"  {c['id']:44} per-part fit {runs.error(c, former):+6.1%}  power model {runs.error(c, []):+6.1%}")
        gb300 = [c for c in runs.cases if c["accelerator"] == "GB300" and c["dense"]]
        model_gb300 = runs.errors(gb300, power_sets(("GB300",), kappa))
        report.append({"constant": "GB300 by the Blackwell power model", "errors_fit": runs.errors(gb300, []),
                       "errors_power_model": model_gb300})
        print("  GB300 (still a per-part fit) by the power model: " + ", ".join(
            f"{c['id']} {e:+.1%}" for c, e in zip(gb300, model_gb300)))

        # the paired fit: the slowest-rank wait and the x1.09 on every fitted clock (and the clocks derived from them)
        b_all = [c for c in runs.cases if c["half"] == "B" and c["dense"]]
        raised = list(CLOCK_FITTED) + list(POWER_MODEL_PARTS)
        off = ["calibration.rank_speed_cv=0"] + [
            f"calibration.accelerators.{name}.sustained_clock_factor="
            f"{accelerator_constants(catalog.accelerator(name), None, catalog).sustained_clock_factor / RAISE:.4f}"
            for name in raised]
        with_cv, without = median_abs(runs.errors(b_all, [])), median_abs(runs.errors(b_all, off))
        report.append({"constant": "rank_speed_cv with clocks x1.09", "b_error_catalog": with_cv,
                       "b_error_both_off": without, "n_b": len(b_all)})
        print(f"\nrank_speed_cv 0.025 with the fitted clocks x{RAISE}: half B median |error| {pct(with_cv)}; "
              f"both off (cv 0, clocks / {RAISE}): {pct(without)} over {len(b_all)} dense runs")

        # A100: unfused attention fitted together with its clock
        a100 = [c for c in runs.cases if c["accelerator"] == "A100-SXM4-80GB"]
        a_half, b_half = [c for c in a100 if c["half"] == "A"], [c for c in a100 if c["half"] == "B"]
        flash = ["calibration.accelerators.A100.flash_attention=true"]
        clock_flash = fit_clock(runs, a_half, "A100-SXM4-80GB", flash)
        b_unfused = median_abs(runs.errors(b_half, []))
        b_flash = median_abs(runs.errors(b_half, flash + [
            f"calibration.accelerators.A100-SXM4-80GB.sustained_clock_factor={clock_flash}"]))
        report.append({"constant": "A100.flash_attention=false", "b_error_catalog": b_unfused,
                       "b_error_flash_refit": b_flash, "flash_clock_fit_on_a": clock_flash})
        print(f"A100 flash_attention false (clock 0.905): half B median |error| {pct(b_unfused)}; FlashAttention "
              f"with the clock refitted on half A ({clock_flash}): {pct(b_flash)}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
