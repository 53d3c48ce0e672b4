"""A collective's fixed library latency is its slowest member server's: the same for every group
when all servers have one latency, each group's own when they differ."""
from __future__ import annotations

import numpy as np

from designer.core.engine.collective_latency import GroupLatency
from designer.core.engine.evaluate import Engine
from designer.core.io import load_document
from tests.conftest import EXAMPLES


def test_library_latency_is_the_slowest_member_servers():
    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    engine = Engine()
    engine.evaluate(doc)
    fabric = engine.built_fabric
    k = next(iter(engine.cache.groups.values())).k
    gpus_of = [np.flatnonzero(fabric.gpu_node == node) for node in range(3)]
    with_slow = np.array([[gpus_of[0][0], gpus_of[1][0]]])  # a group on servers 0 and 1
    without = np.array([[gpus_of[1][1], gpus_of[2][1]]])  # one on servers 1 and 2
    base = float(fabric.node_collective_latency_us[0])
    for members in (with_slow, without):  # all servers alike
        assert GroupLatency(fabric, members, k).fabric_latencies_us()[0] == base

    latencies = fabric.node_collective_latency_us.copy()
    latencies[0] = base + 40.0
    fabric.node_collective_latency_us = latencies  # a new array: what the fabric remembers is redone
    assert GroupLatency(fabric, with_slow, k).fabric_latencies_us()[0] == base + 40.0
    assert GroupLatency(fabric, without, k).fabric_latencies_us()[0] == base
