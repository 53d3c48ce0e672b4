"""What a step costs whatever its size: the optimizer's fused launches, the GPU idle at each host
synchronisation (gradient norm, logged loss), the norm's and the loss's small reductions and the
batch broadcast to the TP group. Small against a large step, not against one under 100 ms."""
import json

import pytest

from tests.conftest import run_cli

LLAMA8B = ["workload.preset=llama3-8b", "workload.seq_length=8192", "workload.micro_batch_size=1",
           "workload.global_batch_size=16", "parallelism.pipeline_model_parallel_size=1"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    path = tmp_path_factory.mktemp("fixed") / "h100.yaml"
    code, _, err = run_cli("generate", "fat-tree", "--gpu", "H100", "--nodes", "2", "--gpus-per-node", "8",
                           "--nics-per-node", "8", "--nic-gbps", "400", "--fabric", "infiniband",
                           "--switch-radix", "64", "-o", path)
    assert code == 0, err
    return path


def _optimizer_s(cluster, *sets) -> float:
    args = ["evaluate", cluster, "--json"]
    for s in (*LLAMA8B, *sets):
        args += ["--set", s]
    code, out, err = run_cli(*args)
    assert code == 0, err
    return json.loads(out)["breakdown_s"]["optimizer"]


def test_each_host_synchronisation_idles_the_gpu(cluster):
    base = _optimizer_s(cluster, "calibration.host_sync_gap_us=0")
    slow_host = _optimizer_s(cluster, "calibration.host_sync_gap_us=1000")
    assert slow_host - base == pytest.approx(2 * 1000e-6, rel=1e-6)  # the gradient norm and the logged loss
    assert _optimizer_s(cluster, "calibration.host_sync_gap_us=1000", "calibration.step_host_syncs=0") == \
        pytest.approx(base, rel=1e-9)


def test_the_optimizer_pays_one_fixed_cost_per_fused_launch(cluster):
    # Llama 3 8B, TP 1, no distributed optimizer: 32 layers x 6 tensors + 2 = 194 tensors, 8.0e9 elements:
    # Adam max(ceil(194 / 36), ceil(8.0e9 / 20,971,520)) = 384 launches, the norm as many: 768
    sets = ("parallelism.tensor_model_parallel_size=1", "parallelism.use_distributed_optimizer=false")
    base = _optimizer_s(cluster, *sets, "calibration.accelerators.H100.gemm_overhead_us=0")
    launched = _optimizer_s(cluster, *sets, "calibration.accelerators.H100.gemm_overhead_us=10")
    elements = 8.03e9
    launches = 2 * -(-elements // 20_971_520)
    assert launched - base == pytest.approx(launches * 10e-6, rel=0.02)


def test_tensor_parallel_ranks_receive_each_micro_batch(cluster):
    # the batch broadcast and the norm's TP reduction: more micro-batches, more broadcasts
    few = _optimizer_s(cluster, "parallelism.tensor_model_parallel_size=2", "workload.global_batch_size=8")
    many = _optimizer_s(cluster, "parallelism.tensor_model_parallel_size=2", "workload.global_batch_size=64")
    assert many > few
