"""Each flow's time is its busiest resource's load over its capacity, whether the quotients are
taken per resource (more flows than resources) or per flow (a few flows on a big fabric)."""
from __future__ import annotations

import numpy as np

from designer.core.engine import flows
from designer.core.engine.evaluate import Engine
from designer.core.io import load_document
from tests.conftest import EXAMPLES


def _slowest_by_hand(fabric, route, leaf_cap, pod_cap, picked):
    """Per flow of `picked`: the largest of its six resource times (NaN counted as infinite), the code
    of the first resource with it (1 NIC send ... 6 pod down) and that resource's index."""
    loads = route.loads
    with np.errstate(divide="ignore", invalid="ignore"):
        rows = [loads.nic_up[route.src] / fabric.nic_cap_Bps[route.src],
                loads.nic_down[route.dst] / fabric.nic_cap_Bps[route.dst],
                np.where(route.cross_leaf, loads.leaf_up[route.sl] / leaf_cap[route.sl], 0.0),
                np.where(route.cross_leaf, loads.leaf_down[route.dl] / leaf_cap[route.dl], 0.0),
                np.where(route.cross_pod, loads.pod_up[route.sp] / pod_cap[route.sp], 0.0),
                np.where(route.cross_pod, loads.pod_down[route.dp] / pod_cap[route.dp], 0.0)]
    stacked = np.stack(rows)
    stacked = np.where(np.isnan(stacked), np.inf, stacked)[:, picked]
    first = stacked.argmax(axis=0)
    ends = np.stack([route.src, route.dst, route.sl, route.dl, route.sp, route.dp])[:, picked]
    return stacked.max(axis=0), first + 1, ends[first, np.arange(len(first))]


def _pipeline_pairs_route():
    """The 1,024-GPU example's pipeline pairs: their route, the fabric and the engine constants."""
    doc = load_document(EXAMPLES / "a100-1024gpu-rail-infiniband.yaml")
    engine = Engine()
    engine.evaluate(doc)
    model = next(m for key, m in engine.cache.groups.items() if key[2] == "pp-pair")
    route, _ = model.times.routes["pairs"]
    return route, model.fabric, model.k


def test_flow_times_per_resource_and_per_flow_agree_with_a_dead_nic():
    """Times, bottleneck codes and indices, all flows at once and a few on their own."""
    route, fabric, k = _pipeline_pairs_route()
    fabric.nic_cap_Bps = fabric.nic_cap_Bps.copy()
    fabric.nic_cap_Bps[route.src[0]] = 0.0  # a NIC out of service: its flows never finish
    leaf_cap = fabric.leaf_up_Bps * flows.uplink_efficiency(fabric, flows.tier_flows(fabric, route.sl, route.cross_leaf), k)
    pod_cap = fabric.pod_up_Bps * flows.uplink_efficiency(
        fabric, flows.tier_flows(fabric, route.sl, route.cross_pod, pod=True), k, pod=True)
    every = np.arange(len(route.src))
    assert len(every) >= len(fabric.nic_cap_Bps)  # the per-resource quotients
    few = np.array([0, 1, len(every) - 1])  # the per-flow quotients
    for picked in (every, few):
        t, code, index = flows.flow_times(fabric, route, k, None if picked is every else picked)
        expected, first, at = _slowest_by_hand(fabric, route, leaf_cap, pod_cap, picked)
        assert np.array_equal(t, expected) and np.array_equal(code, first) and np.array_equal(index, at)
        assert np.isinf(t[0]) and code[0] == 1  # the dead NIC's send side holds the flow


def test_one_flow_on_its_own_names_the_bottleneck_that_all_flows_at_once_give():
    """A cost names its slowest group's bottleneck from that one flow, on Python floats: the same code
    and index as timing every flow, whether NICs, leaves' or pods' up-links hold the flows, and with a
    dead NIC (a flow that never finishes)."""
    route, fabric, k = _pipeline_pairs_route()
    picked = np.random.default_rng(3).choice(len(route.up), size=64, replace=False)
    held = set()
    for rating in ("as built", "slow up-links", "dead NIC"):
        if rating == "slow up-links":  # some slower than others: each direction holds some flows
            leaves, pods = np.arange(len(fabric.leaf_up_Bps)), np.arange(len(fabric.pod_up_Bps))
            fabric.leaf_up_Bps = fabric.leaf_up_Bps * np.where(leaves % 3, 1 / 40, 1 / 80)
            fabric.pod_up_Bps = fabric.pod_up_Bps * np.where(pods % 2, 1 / 4000, 1 / 10)
        if rating == "dead NIC":
            fabric.nic_cap_Bps = fabric.nic_cap_Bps.copy()
            fabric.nic_cap_Bps[route.src[picked[0]]] = 0.0
        _, code, index = flows.flow_times(fabric, route, k)
        cap = flows.capacities(fabric, route, k)[0]
        alone = [flows.flow_bottleneck(fabric, route, cap, int(route.up[i]), int(route.down[i])) for i in picked]
        assert alone == list(zip(code[picked].tolist(), index[picked].tolist())), rating
        held |= {c for c, _ in alone}
    assert alone[0][0] == 1 and held >= {1, 2, 3, 4, 5, 6}  # (the dead NIC's send side holds its flow)
