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
