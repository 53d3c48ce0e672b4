"""Goodput of a run: interruptions from per-part failure rates, blast radius, checkpoints, spares."""
import math

import pytest

from designer.core.analysis.goodput import estimate_goodput
from designer.core.analysis.run_cost import parse_tokens
from designer.core.io import load_document
from designer.core.model.reliability import reliability_constants
from designer.core.problems import DesignerError
from tests.conftest import run_cli

LLAMA3_405B_PARAMS = 405.8e9


@pytest.fixture(scope="module")
def h100_16k(tmp_path_factory):
    path = tmp_path_factory.mktemp("h100") / "h100-16k.yaml"
    code, _, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", "2048", "--gpu", "H100")
    assert code == 0, err
    return load_document(path)


@pytest.fixture(scope="module")
def nvl72(tmp_path_factory):
    path = tmp_path_factory.mktemp("gb200") / "gb200.yaml"
    code, _, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", "36", "--gpu", "GB200",
                           "--gpus-per-node", "4", "--nics-per-node", "4", "--nic-gbps", "800",
                           "--nvlink-domain-gpus", "72")
    assert code == 0, err
    return load_document(path)


def test_meta_llama3_interruption_rate_is_reproduced(h100_16k):
    """16,384 H100 in 2,048 servers: 419 unexpected interruptions in 54 days (Llama 3, Table 5)."""
    g = estimate_goodput(h100_16k, 16384, LLAMA3_405B_PARAMS, reliability_constants({}))
    assert g.interruptions_per_day == pytest.approx(419 / 54, rel=0.01)
    assert g.mtti_h == pytest.approx(54 * 24 / 419, rel=0.01)
    # Young/Daly: tau = sqrt(2 delta M) - delta
    assert g.interval_s == pytest.approx(math.sqrt(2 * g.checkpoint_write_s * g.mtti_h * 3600) - g.checkpoint_write_s)
    assert g.checkpoint_tb == pytest.approx(LLAMA3_405B_PARAMS * 14 / 1e12)
    # spares sized for a 99 % ready spare: Meta's "more than 90 % effective training time"
    assert g.spare_ready >= 0.99 and 0.88 < g.goodput < 0.96
    assert {p.part for p in g.parts} == {"GPU", "HBM", "NIC", "switch or cable", "host", "software"}


def test_without_hot_spares_hardware_faults_wait_and_goodput_falls(h100_16k):
    spared = estimate_goodput(h100_16k, 16384, LLAMA3_405B_PARAMS, reliability_constants({}))
    bare = estimate_goodput(h100_16k, 16384, LLAMA3_405B_PARAMS,
                            reliability_constants({"reliability": {"hot_spares": 0}}))
    assert bare.hot_spares == 0 and bare.spare_ready == 0
    assert bare.down_per_interruption_s > spared.down_per_interruption_s + 3600
    assert bare.goodput < spared.goodput - 0.2


def test_slower_storage_writes_longer_and_checkpoints_less_often(h100_16k):
    fast = estimate_goodput(h100_16k, 16384, LLAMA3_405B_PARAMS, reliability_constants({}))
    slow = estimate_goodput(h100_16k, 16384, LLAMA3_405B_PARAMS,
                            reliability_constants({"reliability": {"storage_write_tbps": 0.1}}))
    assert slow.checkpoint_write_s == pytest.approx(20 * fast.checkpoint_write_s)
    assert slow.interval_s > fast.interval_s and slow.goodput < fast.goodput


def test_nvl72_blast_radius_is_the_rack_when_the_plan_spans_trays(nvl72):
    """A tray fault takes the whole 72-GPU domain out when TP/EP groups span trays; spares are racks."""
    within = estimate_goodput(nvl72, 2592, 70e9, reliability_constants({}), model_parallel_gpus=4)
    spans = estimate_goodput(nvl72, 2592, 70e9, reliability_constants({}), model_parallel_gpus=16)
    assert within.spare_unit_gpus == 4 and spans.spare_unit_gpus == 72
    gpu = next(p for p in spans.parts if p.part == "GPU")
    assert gpu.blast_gpus == 72 and "NVLink domain" in gpu.blast


def test_token_budgets_parse_and_bad_ones_name_the_flag():
    assert parse_tokens("15T") == 15e12 and parse_tokens("800B") == 8e11 and parse_tokens("2.5e12") == 2.5e12
    with pytest.raises(DesignerError) as exc:
        parse_tokens("lots")
    assert "--tokens" in exc.value.problems[0].message


def test_reliability_constants_are_checked_in_the_file(tmp_path):
    path = tmp_path / "a.yaml"
    code, _, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", "2", "--gpu", "H100")
    assert code == 0, err
    code, _, err = run_cli("evaluate", path, "--set", "calibration.reliability.hot_sparez=2")
    assert code != 0 and "hot_spares" in err
    code, _, err = run_cli("evaluate", path, "--set", "calibration.reliability.storage_write_tbps=-1")
    assert code != 0 and "storage_write_tbps" in err


def test_cost_per_run_through_the_cli(tmp_path):
    """designer cost --tokens: time, GPU-hours, energy and dollars per run, with goodput."""
    import json

    path = tmp_path / "a.yaml"
    code, _, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", "4", "--gpu", "H100")
    assert code == 0, err
    job = ["--set", "workload.preset=llama3-8b", "--set", "workload.global_batch_size=64",
           "--set", "parallelism.use_distributed_optimizer=true"]
    code, out, err = run_cli("cost", path, *job, "--tokens", "1T", "--json")
    assert code == 0, err
    data = json.loads(out)
    run, good = data["run"], data["goodput"]
    assert run["tokens"] == 1e12 and run["ideal_hours"] == pytest.approx(1e12 / data["tokens_per_s"] / 3600)
    assert run["hours"] == pytest.approx(run["ideal_hours"] / good["goodput"])
    assert run["gpu_hours"] == pytest.approx(32 * run["hours"])
    assert run["usd"] == pytest.approx(data["usd_per_hour"] * run["hours"] + run["spares_usd"])
    code, out, err = run_cli("cost", path, *job, "--tokens", "1T")
    assert code == 0 and "per run of 1T tokens" in out and "goodput" in out
    code, _, err = run_cli("cost", path, *job, "--tokens", "many")
    assert code == 65 and "--tokens" in err
