"""Context-parallel ring attention pays, per ring step and beside its attention kernel, a few small
kernels (Transformer Engine AttnFuncWithCPAndKVP2P: the KV send/recv, the softmax-LSE and output
corrections forward; the send/recv and the dQ, dK, dV accumulations backward), each at the
kernel fixed cost: a visible share of a short per-rank sequence's layer."""
import pytest

from designer.core.engine.constants import EngineConstants
from designer.core.engine.cp_ring import cp_ring_kernels
from tests.conftest import EXAMPLES, evaluate_json

CLUSTER = EXAMPLES / "h100-64gpu-infiniband.yaml"
# Llama 3 8B, 8k tokens over CP 4 (2k a rank), DP 16: four micro-batches per step
PLAN = ["workload.preset=llama3-8b", "workload.seq_length=8192", "workload.global_batch_size=64",
        "workload.micro_batch_size=1", "parallelism.tensor_model_parallel_size=1",
        "parallelism.pipeline_model_parallel_size=1", "parallelism.context_parallel_size=4",
        "parallelism.use_distributed_optimizer=true"]


def evaluate(*sets: str) -> dict:
    return evaluate_json(CLUSTER, *PLAN, *sets)


def test_kernels_per_layer_follow_the_ring_steps():
    k = EngineConstants()
    assert cp_ring_kernels(1, k) == (0.0, 0.0)
    # forward: 3 a step, less the last step's send; backward: 4 a step
    assert cp_ring_kernels(4, k) == (11.0, 16.0)
    assert cp_ring_kernels(2, k) == (5.0, 8.0)


def test_the_ring_kernels_fixed_costs_are_in_the_layer_compute():
    with_kernels = evaluate()["breakdown_s"]["compute"]
    without = evaluate("calibration.cp_ring_fwd_kernels_per_step=0",
                       "calibration.cp_ring_bwd_kernels_per_step=0")["breakdown_s"]["compute"]
    # 4 micro-batches x 32 layers x (11 + 16) kernels x 5 us (H100 gemm_overhead_us), before the
    # engine's kernel gaps
    expected = 4 * 32 * (11 + 16) * 5e-6
    assert with_kernels - without == pytest.approx(expected, rel=0.1)


def test_without_context_parallelism_nothing_changes():
    base = evaluate("parallelism.context_parallel_size=1", "workload.global_batch_size=128")["breakdown_s"]["compute"]
    off = evaluate("parallelism.context_parallel_size=1", "workload.global_batch_size=128",
                   "calibration.cp_ring_fwd_kernels_per_step=0",
                   "calibration.cp_ring_bwd_kernels_per_step=0")["breakdown_s"]["compute"]
    assert base == off
