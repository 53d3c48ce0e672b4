"""A context-parallel p2p ring's step: every rank sends its KV block to the next rank at once
(Transformer Engine's AttnFuncWithCPAndKVP2P, send to cp rank + 1). Where a server holds several
ranks of the ring, some hops stay on NVLink and the others cross the network: the step takes as
long as a network hop, whichever pair of neighbours ranks 0 and 1 happen to be."""
import pytest

from tests.conftest import EXAMPLES, evaluate_json

CLUSTER = EXAMPLES / "h100-64gpu-infiniband.yaml"  # 8 servers of 8 H100, one 400 Gb/s NIC per GPU
# Llama 3 8B, 32k tokens over CP 4: 8k tokens a rank
PLAN = ["workload.preset=llama3-8b", "workload.seq_length=32768", "workload.global_batch_size=16",
        "workload.micro_batch_size=1", "parallelism.pipeline_model_parallel_size=1",
        "parallelism.context_parallel_size=4", "parallelism.use_distributed_optimizer=true"]


def ring_step(tp: int) -> dict:
    out = evaluate_json(CLUSTER, *PLAN, f"parallelism.tensor_model_parallel_size={tp}")
    return out["collectives"]["cp:send_recv"]


def test_a_ring_with_two_ranks_per_server_pays_its_network_hops():
    # TP 4: a server holds two ranks of each ring (0 and 1 on one server, 2 and 3 on the next);
    # TP 8: every hop crosses servers. Each GPU sends its TP shard of the block (TP 4: twice TP 8's)
    # over its own NIC, so the TP 4 step takes twice the TP 8 step's bandwidth time.
    two_per_server, one_per_server = ring_step(4), ring_step(8)
    assert two_per_server["bottleneck"].startswith("NIC")
    kv_block_tp4 = 8192 * 2 * 8 * 128 * 2 / 4  # tokens x (K + V) x groups x head dim x 2 bytes / TP
    assert two_per_server["bandwidth_s"] >= kv_block_tp4 / 50e9  # at most one 400 Gb/s NIC's rate
    assert two_per_server["bandwidth_s"] == pytest.approx(2 * one_per_server["bandwidth_s"], rel=0.05)
