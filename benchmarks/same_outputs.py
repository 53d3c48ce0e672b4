"""Check that two source trees give the same engine outputs (a change meant to leave them alone).

    .venv/bin/python benchmarks/same_outputs.py OTHER_TREE [--search]

Runs, with each tree's `designer` package first on the path: `designer evaluate --json` on every
resources/examples/*.yaml (engine_time_s left out: a timing), `designer search --json --workers 1`
on the 64- and 1,024-GPU examples with --search (its timing fields left out), and
`benchmarks/accuracy.py --file both`; prints each difference and exits 1 when there is one.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEARCHED = ("h100-64gpu-infiniband.yaml", "a100-1024gpu-rail-infiniband.yaml")
TIMINGS = ("engine_time_s", "elapsed_s", "wall_s", "plans_per_s", "timing")


def _run(tree: Path, args: list[str]) -> str:
    env = dict(os.environ, PYTHONPATH=str(tree))
    done = subprocess.run([sys.executable, *args], cwd=tree, env=env, capture_output=True, text=True)
    return done.stdout + done.stderr


def _without_timings(text: str) -> str:
    try:
        data = json.loads(text)
    except ValueError:
        return text

    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in TIMINGS}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value
    return json.dumps(strip(data), indent=1, sort_keys=True)


def outputs(tree: Path, search: bool) -> dict[str, str]:
    cli = ["-m", "designer.cli"]
    out = {}
    for path in sorted((ROOT / "resources" / "examples").glob("*.yaml")):
        out[f"evaluate {path.name}"] = _without_timings(_run(tree, [*cli, "evaluate", "--json", str(path)]))
    if search:
        for name in SEARCHED:
            path = ROOT / "resources" / "examples" / name
            out[f"search {name}"] = _without_timings(
                _run(tree, [*cli, "search", "--json", "--workers", "1", "--top", "30", str(path)]))
    out["accuracy"] = _run(tree, [str(tree / "benchmarks" / "accuracy.py"), "--file", "both"])
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("other", type=Path, help="the other source tree (a checkout of main, say)")
    ap.add_argument("--search", action="store_true", help="also compare two plan searches (a minute)")
    args = ap.parse_args(argv)
    other = args.other.resolve()
    if not (other / "designer").is_dir():
        ap.error(f"{other}: no designer package there (give the root of a checkout)")
    mine, theirs = outputs(ROOT, args.search), outputs(other, args.search)
    differ = [name for name in mine if mine[name] != theirs.get(name)]
    for name in differ:
        print(f"differs: {name}")
    print(f"{len(mine) - len(differ)} of {len(mine)} outputs the same")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
