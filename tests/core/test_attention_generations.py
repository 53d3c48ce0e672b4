"""Fused attention kernel generations (plan key attention_kernels).

The accelerator's attention constants are fitted to current cuDNN kernels (h200-kernels.json);
runs on older software stacks ran slower kernels. FlashAttention-2's share comes from the same
H200 file (PyTorch's flash SDPA backend timed beside cuDNN); cuDNN 9.0's (Transformer Engine
1.4-1.7, early 2024) from Transformer Engine's own cuDNN-vs-flash-attn timings of that time,
divided by the H200 file's ratio on the same shapes.
"""
import json
import statistics

import pytest

from designer.core.engine.constants import EngineConstants
from tests.conftest import run_cli
from tests.validation.cases import DATA


def _pairs():
    rows = json.loads((DATA / "h200-kernels.json").read_text())["attention"]
    by_shape: dict = {}
    for r in rows:
        by_shape.setdefault((r["case"], r["batch"], r["seq"], r["heads"]), {})[r["backend"]] = r
    return [v for v in by_shape.values() if {"flash", "cudnn"} <= set(v)]


def test_the_flash_attention_2_share_is_the_measured_h200_ratio():
    ratios = [(p["cudnn"]["fwd_ms"] + p["cudnn"]["bwd_ms"]) / (p["flash"]["fwd_ms"] + p["flash"]["bwd_ms"])
              for p in _pairs()]
    assert len(ratios) >= 6
    assert EngineConstants().attention_rate_flash_attn_2 == pytest.approx(statistics.median(ratios), abs=0.01)


def test_the_cudnn_9_0_share_follows_from_the_two_measured_speedups():
    te_2024 = {"2k": 1.3842, "8k": 1.5877}  # Transformer Engine attention guide, H100, cuDNN 9.0 / flash-attn 2.4.2
    pairs = {p["cudnn"]["seq"]: p for p in _pairs() if p["cudnn"]["heads"] == 32 and p["cudnn"]["batch"] == 1}
    now = {key: (pairs[seq]["flash"]["fwd_ms"] + pairs[seq]["flash"]["bwd_ms"])
           / (pairs[seq]["cudnn"]["fwd_ms"] + pairs[seq]["cudnn"]["bwd_ms"]) for key, seq in (("2k", 2048), ("8k", 8192))}
    share = statistics.mean(te_2024[key] / now[key] for key in te_2024)
    assert EngineConstants().attention_rate_cudnn_9_0 == pytest.approx(share, abs=0.01)


@pytest.fixture(scope="module")
def h100(tmp_path_factory):
    path = tmp_path_factory.mktemp("gen") / "h100.yaml"
    code, _, err = run_cli("generate", "fat-tree", "--gpu", "H100", "--nodes", "1", "--gpus-per-node", "8",
                           "--nics-per-node", "8", "--nic-gbps", "400", "--fabric", "infiniband",
                           "--switch-radix", "64", "-o", path)
    assert code == 0, err
    return path


def _evaluate(cluster, *sets):
    args = ["evaluate", cluster, "--json", "--set", "workload.preset=llama3-8b", "--set",
            "workload.seq_length=65536", "--set", "workload.global_batch_size=8", "--set",
            "parallelism.tensor_model_parallel_size=4", "--set", "parallelism.context_parallel_size=2"]
    for s in sets:
        args += ["--set", s]
    code, out, err = run_cli(*args)
    return code, out, err


def _step(cluster, *sets) -> float:
    code, out, err = _evaluate(cluster, *sets)
    assert code == 0, err
    return json.loads(out)["step_time_s"]


def test_older_kernel_generations_slow_a_long_sequence_step_as_their_rates_say(h100):
    current = _step(h100)
    assert _step(h100, "parallelism.attention_kernels=current") == current
    cudnn_9_0 = _step(h100, "parallelism.attention_kernels=cudnn-9.0")
    flash_2 = _step(h100, "parallelism.attention_kernels=flash-attn-2")
    assert current < cudnn_9_0 < flash_2
    # attention is most of a 64k-token step: the added time grows as 1 / rate - 1 (0.28 and 0.92)
    k = EngineConstants()
    expected = (1 / k.attention_rate_flash_attn_2 - 1) / (1 / k.attention_rate_cudnn_9_0 - 1)
    assert (flash_2 - current) / (cudnn_9_0 - current) == pytest.approx(expected, rel=0.1)


def test_calibration_sets_a_generation_s_rate(h100):
    default = _step(h100, "parallelism.attention_kernels=cudnn-9.0")
    slower = _step(h100, "parallelism.attention_kernels=cudnn-9.0", "calibration.attention_rate_cudnn_9_0=0.5")
    assert slower > 1.2 * default


def test_an_unknown_generation_is_refused_with_the_choices(h100):
    code, _, err = _evaluate(h100, "parallelism.attention_kernels=cudnn-8")
    assert code != 0
    assert "attention_kernels" in err and "cudnn-9.0" in err and "Traceback" not in err


def test_a_plan_search_costs_every_plan_with_the_file_s_kernels(h100):
    def best(kernels: str) -> dict:
        code, out, err = run_cli("search", h100, "--set", "workload.preset=llama3-8b", "--set",
                                 "workload.seq_length=32768", "--set", "workload.global_batch_size=8", "--set",
                                 f"parallelism.attention_kernels={kernels}", "--top", "1", "--workers", "1", "--json")
        assert code == 0, err
        return json.loads(out)["top"][0]

    current, older = best("current"), best("cudnn-9.0")
    assert older["step_time_s"] > 1.05 * current["step_time_s"]
    assert older["set"] and not any("attention_kernels" in s for s in older["set"])  # the file's own stays
