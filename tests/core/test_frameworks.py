"""`parallelism.framework`: what differs between the frameworks that run the same plan.

Megatron-LM and NeMo run Megatron-Core's fused kernels (the engine's default). torchtitan and
DeepSpeed run eager PyTorch elementwise kernels: SwiGLU as two kernels and five passes (3.6 x the
fused one's time on an H200, h200-kernels.json), norms and residual adds unfused (about 1.5 x).
With ZeRO-3, torchtitan's FSDP2 copies each layer's parameters into and out of its gather buffer,
and DeepSpeed gathers parameter by parameter: one latency-bound collective per weight, whose cost
grows with the ranks.
"""
import json

import pytest

from tests.conftest import run_cli

LLAMA8B = ["workload.preset=llama3-8b", "workload.seq_length=8192", "workload.micro_batch_size=1",
           "parallelism.tensor_model_parallel_size=1", "parallelism.pipeline_model_parallel_size=1"]


def _cluster(tmp_path, nodes: int):
    path = tmp_path / f"h100-{nodes}.yaml"
    code, _, err = run_cli("generate", "fat-tree", "--gpu", "H100", "--nodes", str(nodes), "--gpus-per-node", "8",
                           "--nics-per-node", "8", "--nic-gbps", "400", "--fabric", "infiniband",
                           "--switch-radix", "64", "-o", path)
    assert code == 0, err
    return path


def _evaluate(cluster, *sets) -> dict:
    args = ["evaluate", cluster, "--json"]
    for s in (*LLAMA8B, *sets):
        args += ["--set", s]
    code, out, err = run_cli(*args)
    assert code == 0, err
    return json.loads(out)


@pytest.fixture(scope="module")
def one_node(tmp_path_factory):
    return _cluster(tmp_path_factory.mktemp("frameworks"), 1)


def test_megatron_and_nemo_cost_alike_and_eager_frameworks_pay_for_unfused_passes(one_node):
    gbs = "workload.global_batch_size=16"
    megatron = _evaluate(one_node, gbs)["step_time_s"]
    assert _evaluate(one_node, gbs, "parallelism.framework=megatron")["step_time_s"] == megatron
    assert _evaluate(one_node, gbs, "parallelism.framework=nemo")["step_time_s"] == megatron
    titan = _evaluate(one_node, gbs, "parallelism.framework=torchtitan")["step_time_s"]
    deepspeed = _evaluate(one_node, gbs, "parallelism.framework=deepspeed")["step_time_s"]
    assert titan == deepspeed > 1.02 * megatron
    # the measured ratios are constants: fused again, no difference
    fused = _evaluate(one_node, gbs, "parallelism.framework=torchtitan", "calibration.eager_activation_slowdown=1",
                      "calibration.eager_norm_slowdown=1")["step_time_s"]
    assert fused == pytest.approx(megatron, rel=1e-9)


def test_fsdp2_pays_its_copies_and_deepspeed_its_per_parameter_gathers(tmp_path):
    cluster = _cluster(tmp_path, 4)
    zero3 = ("workload.global_batch_size=32", "parallelism.zero_stage=3")
    no_copy = "calibration.fsdp2_copy_bytes_per_param=0"
    titan = _evaluate(cluster, *zero3, "parallelism.framework=torchtitan")
    titan_no_copy = _evaluate(cluster, *zero3, "parallelism.framework=torchtitan", no_copy)
    assert titan["step_time_s"] > titan_no_copy["step_time_s"]

    def gather_s(nodes, framework):  # one micro-batch per GPU at either size
        result = _evaluate(_cluster(tmp_path, nodes), f"workload.global_batch_size={8 * nodes}",
                           "parallelism.zero_stage=3", f"parallelism.framework={framework}",
                           "calibration.eager_activation_slowdown=1", "calibration.eager_norm_slowdown=1", no_copy)
        return result["step_time_s"]

    # one gather per weight instead of one per layer: more latency, more of it as the ranks grow
    extra_small = gather_s(1, "deepspeed") - gather_s(1, "torchtitan")
    extra_large = gather_s(4, "deepspeed") - gather_s(4, "torchtitan")
    assert extra_small >= 0 and extra_large > extra_small


def test_an_unknown_framework_is_named_with_the_choices(one_node):
    code, _, err = run_cli("evaluate", one_node, "--set", "workload.preset=llama3-8b", "--set",
                           "parallelism.framework=jax")
    assert code != 0 and "framework" in err and "torchtitan" in err and "Traceback" not in err
