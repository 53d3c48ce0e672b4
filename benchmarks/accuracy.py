"""Accuracy on the published runs: every case of tests/validation/data through the public CLI.

    .venv/bin/python benchmarks/accuracy.py [--file modern|classic|both] [--json OUT]

Each training case is generated with its cluster fields as `designer generate` flags and
evaluated with its workload and parallelism fields as `--set` (tests/validation/cases.py),
exactly as the tests run them; a case the CLI refuses is listed with the CLI's own reason.
Each nccl-tests case runs `designer nccl` and compares bus bandwidth (time below 1 MB when the
case gives it). Prints a per-case table and the median / worst error per file and tolerance.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from designer.cli import main as cli  # noqa: E402
from tests.validation.cases import (CASES_FILE, MODERN_CASES_FILE, generate_args, load_cases,  # noqa: E402
                                    nccl_errors, set_args)


def run_cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli([str(a) for a in args])
        except SystemExit as exc:  # argparse refusing a flag
            code = exc.code if isinstance(exc.code, int) else 2
    return code, out.getvalue(), err.getvalue()


def _first_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip() and not ln.startswith("usage:")]
    return (lines[-1] if lines else "")[:160]


LENIENT = False  # --lenient: drop the flags and keys the CLI does not know, and say which


def run_lenient(args: list[str], dropped: list[str]) -> tuple[int, str, str]:
    """Run; with LENIENT, retry without each flag or --set key the CLI refuses as unknown."""
    while True:
        code, out, err = run_cli(*args)
        if code == 0 or not LENIENT:
            return code, out, err
        flag = re.search(r"unrecognized arguments: (--[\w-]+)", err)
        keys = re.findall(r"^--set ([\w.]+): \w+ has no key", err, re.MULTILINE)
        if flag and flag.group(1) in args:
            i = args.index(flag.group(1))
            dropped.append(flag.group(1))
            del args[i:i + 2]
        elif keys:
            for key in keys:
                i = next(j for j, a in enumerate(args) if a.startswith(key + "=") and args[j - 1] == "--set")
                dropped.append(key.split(".")[-1])
                del args[i - 1:i + 1]
        else:
            return code, out, err


def training_rows(cases: list[dict], tmp: Path) -> list[dict]:
    rows = []
    for case in cases:
        path = tmp / f"{case['id']}.yaml"
        row = {"id": case["id"], "tolerance": case.get("tolerance", "normal"), "measured_s": case["step_time_s"]}
        dropped: list[str] = []
        row["dropped"] = dropped
        code, _, err = run_lenient(generate_args(case["cluster"], path), dropped)
        if code != 0:
            rows.append(row | {"refused": "generate: " + _first_line(err)})
            continue
        code, out, err = run_lenient(["evaluate", str(path), *set_args(case), "--json"], dropped)
        if code != 0:
            rows.append(row | {"refused": "evaluate: " + _first_line(err)})
            continue
        predicted = json.loads(out)["step_time_s"]
        rows.append(row | {"predicted_s": predicted, "error": predicted / case["step_time_s"] - 1})
    return rows


def nccl_rows(cases: list[dict], tmp: Path) -> list[dict]:
    rows = []
    for case in cases:
        path = tmp / f"{case['id']}.yaml"
        row = {"id": case["id"], "tolerance": case.get("tolerance", "normal")}
        code, _, err = run_lenient(generate_args(case["cluster"], path), [])
        if code != 0:
            rows.append(row | {"refused": "generate: " + _first_line(err)})
            continue
        col = case["collective"]
        code, out, err = run_cli("nccl", path, "--op", col["op"], "--num-gpus", col["num_gpus"],
                                 "--algo", col.get("algo", "auto"), "--min-bytes", "8", "--max-bytes", "16G", "--json")
        if code != 0:
            rows.append(row | {"refused": "nccl: " + _first_line(err)})
            continue
        data = json.loads(out)
        table = data if isinstance(data, list) else data.get("designer_rows", data.get("rows", []))
        by_size = {r.get("size_bytes", r.get("size")): r for r in table}
        errors = nccl_errors(case, by_size)
        rows.append(row | {"error": statistics.median(errors) if errors else float("nan"), "points": len(errors)})
    return rows


def summary(rows: list[dict]) -> str:
    done = [r for r in rows if "error" in r]
    refused = len(rows) - len(done)
    if not done:
        return f"0 of {len(rows)} evaluated ({refused} refused)"
    errs = [abs(r["error"]) for r in done]
    normal = [abs(r["error"]) for r in done if r["tolerance"] == "normal"]
    text = (f"{len(done)} of {len(rows)} evaluated ({refused} refused): median |error| {statistics.median(errs):.1%}, "
            f"worst {max(errs):.1%}")
    if normal:
        text += f"; normal tolerance: median {statistics.median(normal):.1%}, worst {max(normal):.1%}"
    return text


def print_rows(title: str, rows: list[dict]) -> None:
    print(f"\n{title}")
    for r in rows:
        if "refused" in r:
            print(f"  {r['id']:42} {r['tolerance']:6}  refused  {r['refused']}")
        elif "predicted_s" in r:
            dropped = f"  (without {', '.join(r['dropped'])})" if r.get("dropped") else ""
            print(f"  {r['id']:42} {r['tolerance']:6}  {r['measured_s']:9.3f} s  {r['predicted_s']:9.3f} s  "
                  f"{r['error']:+7.1%}{dropped}")
        else:
            print(f"  {r['id']:42} {r['tolerance']:6}  median |error| {r['error']:.1%} over {r['points']} sizes")
    print("  " + summary(rows))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", choices=("modern", "classic", "both"), default="both")
    parser.add_argument("--json", help="also write the rows to this JSON file")
    parser.add_argument("--lenient", action="store_true",
                        help="drop the flags and keys the CLI refuses as unknown (to see the rest's error)")
    args = parser.parse_args()
    global LENIENT
    LENIENT = args.lenient
    files = {"classic": CASES_FILE, "modern": MODERN_CASES_FILE}
    chosen = list(files) if args.file == "both" else [args.file]
    report = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in chosen:
            data = load_cases(files[name])
            training = training_rows(data["training"], Path(tmp))
            collectives = nccl_rows(data.get("collectives", []), Path(tmp))
            print_rows(f"{files[name].name}: training step time", training)
            print_rows(f"{files[name].name}: nccl-tests", collectives)
            report[name] = {"training": training, "collectives": collectives}
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
