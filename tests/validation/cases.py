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


# Case fields that describe the run but are not inputs of `designer generate` or `--set`;
# `nvlink_domain_gpus_used`, where given, is the domain the cluster is generated with.
NOT_INPUTS = {"model_name", "attention_sinks", "derived_layer_split", "nvlink_domains", "nic_model", "scale_up"}


def _flow(value) -> str:
    """A --set / flag value: booleans as JSON, lists and mappings as YAML flow values."""
    if isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (list, dict)):
        return yaml.safe_dump(value, default_flow_style=True, width=10**9).strip()
    return str(value)


def _nic_model(cluster: dict) -> str | None:
    """The case's nic_model where it names a catalog NIC of the case's fabric kind and speed (some name
    a NIC loosely, "ConnectX-7 (not used)", or one of several): that one is an input."""
    from designer.core.model.catalog import default_catalog

    catalog = default_catalog()
    name = catalog.resolve("nics", str(cluster.get("nic_model", "")))
    if name is None:
        return None
    nic = catalog.nics[name]
    fits = nic.kind == cluster.get("fabric", "infiniband") and nic.gbps == float(cluster.get("nic_gbps", 400))
    return name if fits else None


def generate_args(cluster: dict, out: Path) -> list[str]:
    """`designer generate GENERATOR -o OUT` with every cluster field as its flag (gpus_per_node ->
    --gpus-per-node; a boolean is --flag or --no-flag)."""
    fields = {k: v for k, v in cluster.items() if k not in NOT_INPUTS and k != "generator"}
    if _nic_model(cluster):
        fields["nic_model"] = _nic_model(cluster)
    if "nvlink_domain_gpus_used" in fields:
        fields["nvlink_domain_gpus"] = fields.pop("nvlink_domain_gpus_used")
    args = ["generate", cluster.get("generator", "fat-tree"), "-o", str(out)]
    for key, value in fields.items():
        flag = "--" + key.replace("_", "-")
        if isinstance(value, bool):
            args.append(flag if value else "--no-" + key.replace("_", "-"))
        else:
            args += [flag, _flow(value)]
    return args


def set_args(case: dict) -> list[str]:
    out = []
    for section in ("workload", "parallelism"):
        for key, value in (case.get(section) or {}).items():
            if key not in NOT_INPUTS:
                out += ["--set", f"{section}.{key}={_flow(value)}"]
    if (case.get("workload") or {}).get("attention_sinks"):  # learned sink logits: Megatron's softmax_type
        out += ["--set", "workload.softmax_type=learnable"]
    return out


def run_case(case: dict, tmp: Path, run_cli) -> dict:
    path = tmp / f"{case['id']}.yaml"
    code, _, err = run_cli(*generate_args(case["cluster"], path))
    assert code == 0, err
    code, out, err = run_cli("evaluate", str(path), *set_args(case), "--json")
    assert code == 0, err
    return json.loads(out)


def nccl_errors(case: dict, rows_by_size: dict) -> list[float]:
    """|error| of each measured size of an nccl-tests case against `designer nccl` rows (by
    size_bytes): bus bandwidth from 1 MB, time below (where the case gives a time)."""
    errors = []
    for m in case["measured"]:
        r = rows_by_size.get(m["size_bytes"])
        if r is None:
            continue
        if "busbw" in m and m["size_bytes"] >= 2**20 or "time_us" not in m:
            errors.append(abs(r["busbw"] / m["busbw"] - 1))
        else:
            errors.append(abs(r["time_us"] / m["time_us"] - 1))
    return errors
