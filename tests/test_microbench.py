"""`designer microbench`: the engine's time per kernel of a design's job, and a calibration from
measured kernels (recorded on a GPU machine: tests/data/microbench)."""
import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import run_cli

RECORDED = Path(__file__).parent / "data" / "microbench" / "h200-llama3-8b-tp1.json"
LLAMA8B_TP1 = ["workload.preset=llama3-8b", "workload.seq_length=8192", "workload.micro_batch_size=1",
               "workload.global_batch_size=64", "parallelism.tensor_model_parallel_size=1",
               "parallelism.pipeline_model_parallel_size=1"]


def _sets(*sets):
    return sum((["--set", s] for s in sets), [])


@pytest.fixture(scope="module")
def h200(tmp_path_factory):
    path = tmp_path_factory.mktemp("microbench") / "h200.yaml"
    code, _, err = run_cli("generate", "fat-tree", "--gpu", "H200", "--nodes", "1", "--gpus-per-node", "8",
                           "--nics-per-node", "8", "--nic-gbps", "400", "--fabric", "infiniband",
                           "--switch-radix", "64", "-o", path)
    assert code == 0, err
    return path


def _step(path, *sets) -> float:
    code, out, err = run_cli("evaluate", path, "--json", *_sets(*LLAMA8B_TP1, *sets))
    assert code == 0, err
    return json.loads(out)["step_time_s"]


def test_predict_lists_the_layers_kernels_with_the_engines_times(h200):
    code, out, err = run_cli("microbench", h200, "--predict", "--json", *_sets(*LLAMA8B_TP1))
    assert code == 0, err
    kernels = json.loads(out)
    assert {k["kind"] for k in kernels} == {"gemm", "attention_fwd", "attention_bwd", "elementwise"}
    for k in kernels:
        assert set(k) >= {"name", "kind", "shape", "flops", "bytes", "ms"} and k["ms"] > 0
    by_name = {k["name"]: k for k in kernels}
    qkv = by_name["qkv.fwd"]["shape"]
    assert (qkv["m"], qkv["n"], qkv["k"]) == (8192, 6144, 4096)  # 32 query + 2 x 8 KV heads of 128
    assert by_name["qkv.fwd"]["flops"] == 2 * 8192 * 6144 * 4096
    attention = by_name["attention0.fwd"]
    assert attention["shape"]["s_q"] == attention["shape"]["s_k"] == 8192 and attention["shape"]["mask"] == "causal"
    assert attention["flops"] == pytest.approx(4 * 8192 * 8192 * 32 * 128 / 2, rel=1e-3)
    assert 2.7 < by_name["attention0.bwd"]["ms"] / attention["ms"] < 3.3
    # the engine's own constants: a calibration moves the predicted kernel
    code, out, err = run_cli("microbench", h200, "--predict", "--json", *_sets(
        *LLAMA8B_TP1, "calibration.accelerators.H200.attention_efficiency=0.35"))
    slower = {k["name"]: k for k in json.loads(out)}["attention0.fwd"]["ms"]
    assert slower > 1.5 * attention["ms"]
    code, out, _ = run_cli("microbench", h200, "--predict", *_sets(*LLAMA8B_TP1))
    assert code == 0 and "attention0.bwd" in out and "engine ms" in out


@pytest.mark.parametrize("precision, recipe, operand_bytes", [
    ("bf16", None, 2.0),
    ("fp8", "tensorwise", 1.0),  # E4M3 values, one fp32 scale per tensor
    ("fp8", "blockwise", 1.0 + 4 / 128),  # an fp32 scale per 128 values
])
def test_a_gemm_reads_its_operands_at_the_precisions_element_size(h200, precision, recipe, operand_bytes):
    sets = [*LLAMA8B_TP1, f"workload.precision={precision}"] + (
        [f"parallelism.fp8_recipe={recipe}"] if recipe else [])
    code, out, err = run_cli("microbench", h200, "--predict", "--json", *_sets(*sets))
    assert code == 0, err
    fc1 = {k["name"]: k for k in json.loads(out)}["fc1.fwd"]
    m, n, k = (fc1["shape"][d] for d in "mnk")
    assert fc1["bytes"] == pytest.approx((m * k + k * n) * operand_bytes + m * n * 2)


def test_without_a_gpu_it_says_so_and_exits_69(h200):
    from designer.core.engine.microbench_torch import available

    if available() is None:
        pytest.skip("this machine has PyTorch and a CUDA GPU")
    code, out, err = run_cli("microbench", h200, *_sets(*LLAMA8B_TP1))
    assert code == 69
    assert "cannot measure here" in err and "--predict" in err


def test_a_recorded_measurement_becomes_a_calibration_the_engine_uses(h200, tmp_path):
    out_file = tmp_path / "calibrated.yaml"
    code, out, err = run_cli("microbench", h200, *_sets(*LLAMA8B_TP1), "--recorded", RECORDED, "-o", out_file)
    assert code == 0, err
    assert f"wrote {out_file}" in err
    calibration = yaml.safe_load(out_file.read_text())["spec"]["calibration"]["accelerators"]["H200-SXM5-141GB"]
    assert set(calibration) == {"gemm_efficiency_best", "attention_efficiency", "attention_backward_efficiency",
                                "hbm_efficiency"}
    # the recorded kernels ran as a short benchmark, the engine's carry the sustained clock factor (0.883):
    # the calibration takes the ratio in (the attention model itself is fitted to these kernels at burst)
    assert calibration["gemm_efficiency_best"] > 0.803
    assert calibration["attention_efficiency"] == pytest.approx(0.70 / 0.883, rel=0.03)
    before, after = _step(h200), _step(out_file)
    assert after < 0.97 * before
    # the calibrated design predicts the recorded kernels
    code, out, err = run_cli("microbench", out_file, "--predict", "--json", *_sets(*LLAMA8B_TP1))
    predicted = {k["name"]: k["ms"] for k in json.loads(out)}
    measured = {k["name"]: k["measured_ms"] for k in json.loads(RECORDED.read_text())["kernels"]}
    assert predicted["fc1.fwd"] == pytest.approx(measured["fc1.fwd"], rel=0.08)


def test_a_bad_record_is_refused_with_its_place(h200, tmp_path):
    data = json.loads(RECORDED.read_text())
    data["kernels"][3]["measured_ms"] = -1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    code, _, err = run_cli("microbench", h200, *_sets(*LLAMA8B_TP1), "--recorded", bad, "-o", tmp_path / "x.yaml")
    assert code == 65 and f"{bad}: kernels[3].measured_ms" in err and "Traceback" not in err
    assert not (tmp_path / "x.yaml").exists()
    bad.write_text("{not json")
    code, _, err = run_cli("microbench", h200, *_sets(*LLAMA8B_TP1), "--recorded", bad)
    assert code == 65 and f"{bad}:1:2" in err
    code, _, err = run_cli("microbench", h200, *_sets(*LLAMA8B_TP1, "parallelism.tensor_model_parallel_size=2"),
                           "--recorded", RECORDED)
    assert code == 0  # a record of other shapes still calibrates the rates
    other = tmp_path / "h100.yaml"
    run_cli("generate", "fat-tree", "--gpu", "H100", "--nodes", "1", "--gpus-per-node", "8", "--nics-per-node", "8",
            "--nic-gbps", "400", "--fabric", "infiniband", "--switch-radix", "64", "-o", other)
    code, _, err = run_cli("microbench", other, *_sets(*LLAMA8B_TP1), "--recorded", RECORDED)
    assert code == 65 and "ran on H200-SXM5-141GB" in err
    code, _, err = run_cli("microbench", h200, *_sets(*LLAMA8B_TP1), "--recorded", RECORDED, "-o",
                           tmp_path / "no-such-folder" / "out.yaml")
    assert code == 1 and "cannot write" in err and "Traceback" not in err
