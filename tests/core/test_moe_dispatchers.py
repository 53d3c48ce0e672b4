"""Megatron's MoE token dispatchers (--moe-token-dispatcher-type) cost what they send: allgather
gathers the whole EP group's tokens, alltoall sends each token to its top-k experts, flex (DeepEP,
HybridEP) sends a token once per remote scale-up domain and forwards it there over NVLink, once per
destination GPU."""
from __future__ import annotations

import json

import pytest

from designer.core.engine.compute import flex_dedup
from tests.conftest import run_cli


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    path = tmp_path_factory.mktemp("moe") / "c.yaml"
    code, _, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", "4", "--gpu", "H100")
    assert code == 0, err
    return path


def _ep_comm(cluster, ep: int, dispatcher: str) -> tuple[float, list[str]]:
    code, out, err = run_cli("evaluate", cluster, "--json", "--set", "workload.preset=qwen3-30b-a3b",
                             "--set", "workload.global_batch_size=32", "--set", "workload.micro_batch_size=1",
                             "--set", f"parallelism.expert_model_parallel_size={ep}",
                             "--set", f"parallelism.moe_token_dispatcher_type={dispatcher}",
                             "--set", "parallelism.moe_router_force_load_balancing=true")
    assert code == 0, err
    data = json.loads(out)
    return data["breakdown_s"]["ep_comm"] + data["hidden_comm_s"]["ep_comm"], data["warnings"]


def test_flex_sends_a_token_once_per_remote_domain(cluster):
    across_alltoall, warnings = _ep_comm(cluster, 16, "alltoall")  # EP 16: two 8-GPU servers
    across_flex, _ = _ep_comm(cluster, 16, "flex")
    assert not any("not modelled" in w for w in warnings)
    # Qwen3-30B-A3B: top-8 of 128 experts over 2 servers: 4 remote experts per token, ~1 remote server
    assert flex_dedup(8, 2) == pytest.approx(2 * (1 - 0.5 ** 8) / 8)
    assert across_flex < 0.5 * across_alltoall
    # EP 8 inside one server: no network to dedup, but a token goes once to each GPU holding one of its
    # experts (16 of the 128 each: 8 (1 - C(112, 8) / C(128, 8)) = 5.4 GPUs), not once per expert
    inside_alltoall, _ = _ep_comm(cluster, 8, "alltoall")
    inside_flex, _ = _ep_comm(cluster, 8, "flex")
    assert inside_flex < 0.8 * inside_alltoall


def test_allgather_gathers_every_token_of_the_group(cluster):
    alltoall, _ = _ep_comm(cluster, 16, "alltoall")
    allgather, _ = _ep_comm(cluster, 16, "allgather")
    # top-8: all-to-all sends 8 copies of a token, 4 of them to the other server; the gather moves
    # every token to all 16 ranks, but its ring crosses between the servers once per token
    assert allgather != pytest.approx(alltoall, rel=0.05)
    assert allgather < alltoall


def test_dedup_share_is_physical():
    assert flex_dedup(8, 1) == 1.0
    assert flex_dedup(1, 8) == pytest.approx(1.0)  # one expert per token: nothing to share
    assert flex_dedup(8, 64) < 1.0 and flex_dedup(8, 2) < flex_dedup(8, 8) < flex_dedup(8, 64)


def test_all_to_all_sends_half_its_buffer_across_two_servers(tmp_path):
    """nccl-tests' alltoall on 2 x 8 H100: each GPU sends 1/16 of its buffer to every rank, 8 of them
    on the other server: half the buffer over its own 400G NIC (50 GB/s x infiniband_nic_efficiency
    0.96), so algbw = size / time is at most twice the NIC rate, 96 GB/s."""
    path = tmp_path / "h2.yaml"
    code, _, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", "2", "--gpu", "H100")
    assert code == 0, err
    code, out, err = run_cli("nccl", path, "--op", "all_to_all", "--num-gpus", "16",
                             "--min-bytes", str(2**30), "--max-bytes", str(2**30), "--json")
    assert code == 0, err
    row = json.loads(out)["designer_rows"][-1]
    assert row["algbw"] == pytest.approx(2 * 50 * 0.96, rel=0.03)
    assert row["algbw"] <= 2 * 50 * 0.96
