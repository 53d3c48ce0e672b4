"""FP4 training (NVFP4 / MXFP4) where the tensor cores have it, and the layers a recipe keeps in BF16."""
import json

import pytest

from tests.conftest import EXAMPLES, run_cli


@pytest.fixture(scope="module")
def gb200(tmp_path_factory):
    path = tmp_path_factory.mktemp("fp4") / "gb200.yaml"
    code, _, err = run_cli("generate", "fat-tree", "--gpu", "GB200", "--gpus-per-node", "4", "--nodes", "4",
                           "--nvlink-domain-gpus", "16", "-o", path)
    assert code == 0, err
    return path


def _step(path, *sets):
    args = ["evaluate", path, "--json", "--set", "workload.preset=llama3-8b", "--set", "workload.global_batch_size=64"]
    for kv in sets:
        args += ["--set", kv]
    code, out, err = run_cli(*args)
    assert code == 0, err
    return json.loads(out)


def test_fp4_is_faster_than_fp8_but_not_twice_as_fast(gb200):
    fp8 = _step(gb200, "workload.precision=fp8")
    fp4 = _step(gb200, "workload.precision=fp4")
    speed_up = fp8["step_time_s"] / fp4["step_time_s"]
    assert 1.05 < speed_up < 2.0, speed_up  # attention, norms, casts and communication do not halve
    assert any("no FP4 GEMM benchmark" in w for w in fp4["warnings"])


def test_fp4_gemm_share_of_fp8_sets_the_fp4_gemm_rate(gb200):
    """Without an FP4 GEMM benchmark the FP4 GEMMs run at fp4_gemm_share_of_fp8 times FP8's share of
    peak: a calibration lowering it slows an FP4 step and leaves an FP8 step as it was."""
    half = "calibration.accelerators.GB200.fp4_gemm_share_of_fp8=0.5"
    fp4, fp4_half = _step(gb200, "workload.precision=fp4"), _step(gb200, "workload.precision=fp4", half)
    fp8, fp8_half = _step(gb200, "workload.precision=fp8"), _step(gb200, "workload.precision=fp8", half)
    assert fp4_half["breakdown_s"]["compute"] > 1.3 * fp4["breakdown_s"]["compute"]
    assert fp8_half["step_time_s"] == fp8["step_time_s"]


def test_layers_kept_in_bf16_cost_the_bf16_rate(gb200):
    fp4 = _step(gb200, "workload.precision=fp4")
    kept = _step(gb200, "workload.precision=fp4", "parallelism.first_last_layers_bf16=true",
                 "parallelism.num_layers_at_start_in_bf16=2", "parallelism.num_layers_at_end_in_bf16=2")
    more = _step(gb200, "workload.precision=fp4", "parallelism.first_last_layers_bf16=true",
                 "parallelism.num_layers_at_start_in_bf16=4", "parallelism.num_layers_at_end_in_bf16=4")
    assert fp4["step_time_s"] < kept["step_time_s"] < more["step_time_s"]


def test_fp4_param_gather_moves_fewer_bytes(gb200):
    plain = _step(gb200, "workload.precision=fp4", "parallelism.use_distributed_optimizer=true",
                  "parallelism.overlap_param_gather=false")
    packed = _step(gb200, "workload.precision=fp4", "parallelism.use_distributed_optimizer=true",
                   "parallelism.overlap_param_gather=false", "parallelism.fp4_param_gather=true")
    assert packed["breakdown_s"]["dp_comm"] < plain["breakdown_s"]["dp_comm"]


def test_fp4_on_a_part_without_fp4_tensor_cores_is_refused_with_what_it_has():
    code, _, err = run_cli("evaluate", EXAMPLES / "h100-64gpu-infiniband.yaml", "--set", "workload.precision=fp4")
    assert code == 65
    assert "spec.workload.precision" in err and "H100-SXM5-80GB does not have" in err and "use precision: fp8" in err


@pytest.fixture(scope="module")
def gb300(tmp_path_factory):
    path = tmp_path_factory.mktemp("fp4") / "gb300.yaml"
    code, _, err = run_cli("generate", "fat-tree", "--gpu", "GB300", "--gpus-per-node", "4", "--nodes", "2",
                           "--nvlink-domain-gpus", "72", "-o", path)
    assert code == 0, err
    return path


def test_nvfp4_on_blackwell_ultra_pays_its_quantization_passes(gb300):
    """GB300's FP4 peak is 3 x its FP8 peak, but an NVFP4 step is far from 3 x faster: attention,
    norms and communication stay, and Transformer Engine's NVFP4 recipe reads each quantized tensor
    three times (amax pass, row-wise cast, column-wise Hadamard cast). Without the Hadamard transform's
    extra pass the step is faster; an FP8 step does not see the FP4 constants."""
    fp8 = _step(gb300, "workload.precision=fp8")
    fp4 = _step(gb300, "workload.precision=fp4")
    speed_up = fp8["step_time_s"] / fp4["step_time_s"]
    assert 1.1 < speed_up < 1.5, speed_up
    no_rht = "calibration.nvfp4_rht_cast_bytes=0"
    assert _step(gb300, "workload.precision=fp4", no_rht)["step_time_s"] < 0.97 * fp4["step_time_s"]
    assert _step(gb300, "workload.precision=fp8", no_rht)["step_time_s"] == fp8["step_time_s"]


def test_microbench_predict_lists_the_fp4_gemms_and_the_quantization_passes(gb300):
    code, out, err = run_cli("microbench", gb300, "--predict", "--json", "--set", "workload.preset=llama3-8b",
                             "--set", "workload.global_batch_size=64", "--set", "workload.precision=fp4")
    assert code == 0, err
    kernels = {k["name"]: k for k in json.loads(out)}
    fc1 = kernels["fc1.fwd"]
    assert fc1["kind"] == "gemm"
    m, n, k = fc1["shape"]["m"], fc1["shape"]["n"], fc1["shape"]["k"]
    assert fc1["bytes"] == pytest.approx((m * k + k * n) * (0.5 + 1 / 16) + m * n * 2)  # NVFP4 operands, BF16 out
    inputs = kernels["quantize.inputs"]
    assert inputs["kind"] == "elementwise"
    assert inputs["bytes"] == pytest.approx(inputs["shape"]["elements"] * (5.125 + 2.0))
    # the quantization passes are a real share of an FP4 layer: more than a quarter of its GEMM time
    gemm_ms = sum(k["ms"] for k in kernels.values() if k["kind"] == "gemm")
    assert kernels["quantize.inputs"]["ms"] + kernels["quantize.grads"]["ms"] > 0.25 * gemm_ms
