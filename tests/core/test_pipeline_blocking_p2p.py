"""Megatron's non-interleaved 1F1B pipeline waits on its stage-to-stage exchanges.

Each forward ends in send_forward_recv_backward and each backward in send_backward_recv_forward;
Megatron waits on both before the next micro-batch (it refuses overlap_p2p_comm without virtual
stages), so a stage's compute stream holds for every exchange. The interleaved schedule overlaps
them. Checked through the CLI on four 8-GPU servers with PP 4 across them (rank order puts PP
outermost, so every exchange crosses a 400 Gb/s NIC).
"""
import json

import pytest

from tests.conftest import run_cli


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    f = tmp_path_factory.mktemp("pp") / "b200x4.yaml"
    code, _, err = run_cli("generate", "fat-tree", "--gpu", "B200", "--gpus-per-node", "8", "--nodes", "4",
                           "--nics-per-node", "8", "--nic-gbps", "400", "--fabric", "infiniband",
                           "--switch-radix", "64", "-o", f)
    assert code == 0, err
    return f


def _evaluate(cluster, *sets):
    args = ["evaluate", cluster, "--json", "--set", "workload.preset=llama3-8b",
            "--set", "workload.global_batch_size=256", "--set", "workload.micro_batch_size=1",
            "--set", "parallelism.pipeline_model_parallel_size=4"]
    for kv in sets:
        args += ["--set", kv]
    code, out, err = run_cli(*args)
    assert code == 0, err
    return json.loads(out)


def test_1f1b_stage_waits_on_each_exchange(cluster):
    blocking = _evaluate(cluster)
    hidden = _evaluate(cluster, "calibration.pp_p2p_blocking_share_1f1b=0")
    m = blocking["plan"]["num_microbatches"]
    assert blocking["plan"]["schedule"] == "1f1b" and m == 32
    # one exchange: an 8192 x 4096 BF16 activation one way and its gradient the other, through one
    # 400 Gb/s NIC per GPU: about 67 MB / 47.5 GB/s = 1.4 ms, one message on each direction of a NIC
    exchange = 8192 * 4096 * 2 / (400e9 / 8 * 0.95)
    assert blocking["collectives"]["pp:send"]["time_s"] == pytest.approx(exchange, rel=0.05)
    # 1F1B never sends to both neighbours at once: whether it waits or not, its transfers are one-way
    assert hidden["collectives"]["pp:send"]["time_s"] == pytest.approx(exchange, rel=0.05)
    assert "pp:send_recv" not in blocking["collectives"] and "pp:send_recv" not in hidden["collectives"]
    # each stage holds its compute stream for every exchange: one per micro-batch at either end of
    # the pipeline, two in the middle
    added = [a["busy_s"] - b["busy_s"] for a, b in zip(blocking["stages"], hidden["stages"])]
    assert added == pytest.approx([m * exchange, 2 * m * exchange, 2 * m * exchange, m * exchange], rel=0.05)
    # the last stage (the output layer) sets the step; its waits show as exposed PP communication
    exposed = blocking["breakdown_s"]["pp_comm"] - hidden["breakdown_s"]["pp_comm"]
    assert exposed == pytest.approx(m * exchange, rel=0.05)
    assert blocking["step_time_s"] - hidden["step_time_s"] == pytest.approx(m * exchange, rel=0.3)

def test_interleaved_schedule_overlaps_its_exchanges(cluster):
    interleaved = ("parallelism.pipeline_schedule=interleaved", "parallelism.virtual_pipeline_model_parallel_size=2")
    on = _evaluate(cluster, *interleaved)
    off = _evaluate(cluster, *interleaved, "calibration.pp_p2p_blocking_share_1f1b=0")
    assert on["step_time_s"] == off["step_time_s"]
    # its steady state batches a stage's sends to both neighbours (send_forward_backward_recv_forward_backward):
    # each middle stage's NIC carries two messages a direction, twice a one-way exchange's time
    assert on["collectives"]["pp:send_recv"]["time_s"] == pytest.approx(2 * 8192 * 4096 * 2 / (400e9 / 8 * 0.95),
                                                                         rel=0.05)
    assert "pp:send" not in on["collectives"]


def _one_f_one_b_ends(fwd: list[float], bwd: list[float], m: int, transfer: float) -> list[float]:
    """Each stage's last end in Megatron's 1F1B, worked out op by op: stage s runs min(p - s - 1, m)
    warm-up forwards, then a forward and a backward in turn, then the cool-down backwards; a forward
    starts when the previous stage's has ended and `transfer` has passed, a backward when the next
    stage's has (the last stage's after its own forward)."""
    p = len(fwd)
    orders = []
    for s in range(p):
        warmup = min(p - s - 1, m)
        order = [("F", i) for i in range(warmup)]
        for j in range(m - warmup):
            order += [("F", warmup + j), ("B", j)]
        orders.append(order + [("B", i) for i in range(m - warmup, m)])
    end: dict[tuple[str, int, int], float] = {}
    at, free = [0] * p, [0.0] * p
    while any(at[s] < len(orders[s]) for s in range(p)):
        for s in range(p):
            while at[s] < len(orders[s]):
                kind, i = orders[s][at[s]]
                dep = ("F", s - 1, i) if kind == "F" and s > 0 else ("B", s + 1, i) if kind == "B" and s < p - 1 \
                    else None
                if dep is not None and dep not in end:
                    break  # its input comes from a stage not yet this far
                ready = end[dep] + transfer if dep is not None else 0.0
                free[s] = max(free[s], ready) + (fwd[s] if kind == "F" else bwd[s])
                end[(kind, s, i)] = free[s]
                at[s] += 1
    return free


@pytest.mark.parametrize("share", [1.0, 0.5])
def test_a_blocking_exchange_is_counted_once(cluster, share):
    """A 1F1B stage that waits on its exchange holds its compute stream until the activation has
    reached the next stage: the next stage starts when that op ends, with no transfer after it. Only
    the share of the exchange left to run asynchronously still delays the next stage. The pipeline's
    ends equal a 1F1B schedule worked out by hand from each stage's op times and that delay."""
    out = _evaluate(cluster, f"calibration.pp_p2p_blocking_share_1f1b={share}")
    m, p = out["plan"]["num_microbatches"], out["plan"]["pp"]
    exchange = out["collectives"]["pp:send"]["time_s"]
    # each stage's ops: its backward (exchange included) and, from what it was busy, its forward
    bwd = [st["backward_s"] for st in out["stages"]]
    fwd = [st["busy_s"] / m - b for st, b in zip(out["stages"], bwd)]
    assert fwd[0] - out["stages"][0]["forward_s"] == pytest.approx(share * exchange, rel=0.01, abs=1e-4)
    ends = _one_f_one_b_ends(fwd, bwd, m, (1.0 - share) * exchange)
    assert [st["end_s"] for st in out["stages"]] == pytest.approx(ends, rel=1e-9)
    # taken again after each op, the exchange would end stage 0 2 (p - 1) exchanges later: far past the tolerance
    assert 2 * (p - 1) * share * exchange > 1e-6 * ends[0]
