"""Running the published cases (tests/validation/data/, copied from the project's shared/validation) through the public CLI."""
from __future__ import annotations

import json
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "validation" / "data"
CASES_FILE = DATA / "published-cases.yaml"  # 2021-23: A100 / H100, BF16
MODERN_CASES_FILE = DATA / "published-cases-modern.yaml"  # 2024-26: GB200/GB300 NVL72, B200, FP8, MoE, ...


def load_cases(path: Path = CASES_FILE) -> dict:
    with open(path) as fh:
        return yaml.safe_load(fh)


def generate_args(cluster: dict, out: Path) -> list[str]:
    args = ["generate", "fat-tree", "-o", str(out), "--nodes", str(cluster["nodes"]), "--gpu", cluster["gpu"]]
    for key, flag in (("gpus_per_node", "--gpus-per-node"), ("nics_per_node", "--nics-per-node"),
                      ("nic_gbps", "--nic-gbps"), ("fabric", "--fabric"), ("tiers", "--tiers"),
                      ("switch_radix", "--switch-radix"), ("oversubscription", "--oversubscription")):
        if key in cluster:
            args += [flag, str(cluster[key])]
    if "rail_optimized" in cluster:
        args.append("--rail-optimized" if cluster["rail_optimized"] else "--no-rail-optimized")
    return args


def set_args(case: dict) -> list[str]:
    out = []
    for section in ("workload", "parallelism"):
        for key, value in (case.get(section) or {}).items():
            out += ["--set", f"{section}.{key}={json.dumps(value) if isinstance(value, bool) else value}"]
    return out


def run_case(case: dict, tmp: Path, run_cli) -> dict:
    path = tmp / f"{case['id']}.yaml"
    code, _, err = run_cli(*generate_args(case["cluster"], path))
    assert code == 0, err
    code, out, err = run_cli("evaluate", str(path), *set_args(case), "--json")
    assert code == 0, err
    return json.loads(out)
