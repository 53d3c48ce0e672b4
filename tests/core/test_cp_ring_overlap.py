"""A context-parallel p2p ring posts each step's KV (backward: KV and dK/dV) send/recv before that
step's attention kernel and waits for it after (Transformer Engine AttnFuncWithCPAndKVP2P; 1.x
AttnFuncWithCP), so every transfer, the first one included, runs under a step's attention: a
layer waits only for what a transfer takes beyond its step's kernel."""
import pytest

from designer.core.engine.layer_traffic import cp_ring_overlap
from tests.conftest import EXAMPLES, evaluate_json

CLUSTER = EXAMPLES / "h100-64gpu-infiniband.yaml"  # 8 servers of 8 H100
# Llama 3 8B, 32k tokens over CP 2 with TP 4: the ring stays inside a server (NVLink), 16k tokens a rank
PLAN = ["workload.preset=llama3-8b", "workload.seq_length=32768", "workload.global_batch_size=16",
        "workload.micro_batch_size=1", "parallelism.pipeline_model_parallel_size=1",
        "parallelism.tensor_model_parallel_size=4", "parallelism.context_parallel_size=2",
        "parallelism.use_distributed_optimizer=true"]


def test_a_short_exchange_hides_entirely_under_the_steps_attention():
    out = evaluate_json(CLUSTER, *PLAN)
    # an 8 MiB KV block over NVLink (tens of us) against a 16k-token attention step (ms)
    assert out["breakdown_s"]["cp_comm"] == 0.0
    assert out["hidden_comm_s"]["cp_comm"] > 0.0


def test_a_transfer_longer_than_its_step_exposes_only_the_excess():
    c, block = 4, 1.0
    # forward: c - 1 blocks, one per step under attn / c each
    exposed, hidden = cp_ring_overlap((c - 1) * block, attn_s=2.0, c=c, backward=False)
    assert exposed == pytest.approx((c - 1) * (block - 2.0 / c))
    assert exposed + hidden == pytest.approx((c - 1) * block)
    # backward: the first step carries the KV block, the last the dK/dV, the two between both
    exposed, hidden = cp_ring_overlap(2 * (c - 1) * block, attn_s=6.0, c=c, backward=True)
    assert exposed == pytest.approx(2 * 0.0 + (c - 2) * (2 * block - 6.0 / c))
    assert exposed + hidden == pytest.approx(2 * (c - 1) * block)


def test_nothing_to_send_exposes_nothing():
    assert cp_ring_overlap(0.0, 1.0, 2, backward=False) == (0.0, 0.0)
    assert cp_ring_overlap(0.0, 1.0, 2, backward=True) == (0.0, 0.0)
