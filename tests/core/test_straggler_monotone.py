"""A slower GPU never makes a step faster: over many random plans (context parallelism, ZeRO-3,
tensor-parallel overlap, recompute, sequence lengths) on a cluster whose network is slow enough
that the communication is partly exposed, a straggler server (or one slow GPU) only adds time."""
import random

import pytest

from designer.core.engine.evaluate import Engine
from designer.core.generate import generate_fat_tree
from designer.core.io.overrides import apply_overrides
from designer.core.model.plan import check_plan


@pytest.fixture(scope="module")
def slow_network():
    # 4 servers of 8 H100 on 25 Gb/s Ethernet-class NICs: the ZeRO-3 gathers and the CP ring are exposed
    return generate_fat_tree(nodes=4, gpu="H100", nic_gbps=25, switch_radix=16)


def random_plan(rng: random.Random) -> list[str]:
    tp = rng.choice([1, 2, 4, 8])
    return [f"workload.preset={rng.choice(['llama3-8b', 'llama3-70b'])}",
            f"workload.seq_length={rng.choice([2048, 4096, 8192, 16384])}",
            f"workload.micro_batch_size={rng.choice([1, 2])}", "workload.global_batch_size=64",
            f"parallelism.tensor_model_parallel_size={tp}", "parallelism.pipeline_model_parallel_size=1",
            f"parallelism.context_parallel_size={rng.choice([1, 2, 2, 4])}",
            f"parallelism.zero_stage={rng.choice([3, 3, 1, 0])}", "parallelism.use_distributed_optimizer=false",
            f"parallelism.sequence_parallel={'true' if tp > 1 and rng.random() < 0.7 else 'false'}",
            f"parallelism.tp_comm_overlap={rng.choice(['true', 'false'])}",
            f"parallelism.recompute_granularity={rng.choice(['none', 'selective', 'full'])}"]


def step(doc, settings):
    doc = doc.copy()
    apply_overrides(doc, settings)
    if any(p.severity == "error" for p in check_plan(doc)):
        return None
    return Engine().evaluate(doc).step_time_s


def test_a_straggler_never_makes_a_step_faster(slow_network):
    rng = random.Random(20261204)
    checked = 0
    faster = []
    while checked < 150:
        plan = random_plan(rng)
        base = step(slow_network, plan)
        if base is None:
            continue
        factor = rng.choice([1.001, 1.01, 1.05, 1.3])
        where = rng.choice(["nodes[node1].slowdown", "nodes[node2].gpu_slowdown"])
        value = factor if where.endswith(".slowdown") else [1.0] * rng.randrange(8) + [factor]
        slowed = step(slow_network, plan + [f"{where}={value}"])
        checked += 1
        if slowed < base * (1 - 1e-12):
            faster.append((" ".join(plan[4:]), where, value, f"{(slowed / base - 1) * 100:+.4f} %"))
    assert not faster, faster[:3]
