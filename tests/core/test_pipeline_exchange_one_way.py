"""A 1F1B stage-to-stage exchange is costed as the one message each direction of a link carries.

Megatron's non-interleaved 1F1B ends each forward with send_forward_recv_backward and each backward
with send_backward_recv_forward: the activation goes to the next stage while its gradient comes
back, the two directions of full-duplex links, and a stage takes part in one exchange at a time. So
each direction of a GPU's NVLink or NIC carries one message of an exchange, wherever the adjacent
stages sit: inside a server over NVLink, across servers over the NICs. Checked through the CLI
against bytes / bandwidth worked out by hand, and PP 2 against PP 4 on the same links.
"""
import json

import pytest

from tests.conftest import run_cli

# llama3-8b, 8192 tokens of micro-batch 2, 4096 wide, BF16: each TP rank sends 1/TP of it
ACTIVATION_BYTES = 2 * 8192 * 4096 * 2


def _cluster(tmp_path_factory, nodes: int):
    f = tmp_path_factory.mktemp("pp") / f"b200x{nodes}.yaml"
    code, _, err = run_cli("generate", "fat-tree", "--gpu", "B200", "--gpus-per-node", "8", "--nodes", str(nodes),
                           "--nics-per-node", "8", "--nic-gbps", "400", "--fabric", "infiniband",
                           "--switch-radix", "64", "-o", f)
    assert code == 0, err
    return f


@pytest.fixture(scope="module")
def one_server(tmp_path_factory):
    return _cluster(tmp_path_factory, 1)


@pytest.fixture(scope="module")
def two_servers(tmp_path_factory):
    return _cluster(tmp_path_factory, 2)


def _evaluate(cluster, tp: int, pp: int, *sets):
    args = ["evaluate", cluster, "--json", "--set", "workload.preset=llama3-8b",
            "--set", "workload.global_batch_size=64", "--set", "workload.micro_batch_size=2",
            "--set", f"parallelism.tensor_model_parallel_size={tp}",
            "--set", f"parallelism.pipeline_model_parallel_size={pp}"]
    for kv in sets:
        args += ["--set", kv]
    code, out, err = run_cli(*args)
    assert code == 0, err
    return json.loads(out)


def _held_per_microbatch(cluster, tp: int, pp: int) -> tuple[list[float], dict]:
    """Per stage, the seconds its exchanges hold its compute stream per micro-batch, and the result."""
    blocking = _evaluate(cluster, tp, pp)
    hidden = _evaluate(cluster, tp, pp, "calibration.pp_p2p_blocking_share_1f1b=0")
    assert blocking["plan"]["schedule"] == "1f1b"
    m = blocking["plan"]["num_microbatches"]
    return [(a["busy_s"] - b["busy_s"]) / m for a, b in zip(blocking["stages"], hidden["stages"])], blocking


def _latency_s(out: dict) -> float:
    """NCCL's latency of one stage-to-stage message."""
    return out["collectives"]["pp:send"]["latency_s"]


def test_exchange_inside_a_server_moves_the_whole_message_over_nvlink(one_server):
    """TP 2, PP 4 on one 8-GPU B200 server: every neighbour is across the NVSwitch. Each GPU sends
    one 67 MB activation while receiving a gradient: 67 MB at NVLink 5's 900 GB/s a direction x 0.75
    (the ring rate B200 measures, 673-680 GB/s) is 99 us, whatever the pipeline's depth."""
    held, out = _held_per_microbatch(one_server, tp=2, pp=4)
    t = _latency_s(out) + ACTIVATION_BYTES / 2 / (900e9 * 0.75)
    # one exchange per micro-batch at either end of the pipeline, two in the middle, each the whole message
    assert held == pytest.approx([t, 2 * t, 2 * t, t], rel=0.01)
    assert out["collectives"]["pp:send"]["bottleneck"].startswith("scale-up of")
    held_pp2, _ = _held_per_microbatch(one_server, tp=2, pp=2)  # DP 2: the same message on the same links
    assert held_pp2 == pytest.approx(held[:1] * 2, rel=1e-9)


def test_exchange_across_servers_costs_one_message_per_nic_direction(two_servers, one_server):
    """TP 4, PP 4 on two servers: stages 0 and 1 on the first, 2 and 3 on the second. The boundary
    between stages 1 and 2 crosses the NICs, one 400 Gb/s NIC per GPU, each carrying one 33.5 MB
    message a direction: 33.5 MB / (50 GB/s x 0.96) = 0.70 ms. The boundaries inside the servers
    (stages 0-1, 2-3) exchange over NVLink, as TP 4 PP 2 on one server does. Each boundary takes its
    own time: a middle stage holds one NVLink and one NIC exchange a micro-batch. PP 2 (DP 2) across
    the same NICs exchanges the same message in the same time."""
    held, out = _held_per_microbatch(two_servers, tp=4, pp=4)
    nic = _latency_s(out) + ACTIVATION_BYTES / 4 / (400e9 / 8 * 0.96)
    assert out["collectives"]["pp:send"]["bottleneck"].startswith("NIC ")
    held_one_server, inside = _held_per_microbatch(one_server, tp=4, pp=2)
    nvlink = held_one_server[0]
    assert inside["collectives"]["pp:send"]["bottleneck"].startswith("scale-up of")
    assert nvlink == pytest.approx(_latency_s(inside) + ACTIVATION_BYTES / 4 / (900e9 * 0.75), rel=0.01)
    assert held == pytest.approx([nvlink, nvlink + nic, nic + nvlink, nvlink], rel=0.01)
    held_pp2, _ = _held_per_microbatch(two_servers, tp=4, pp=2)
    assert held_pp2 == pytest.approx([nic] * 2, rel=0.01)
