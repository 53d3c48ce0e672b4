"""A dimension's groups whose flows come in order (every group on as many servers, no flow spread
over more NICs) take their slowest flow from rows of the flows' times: the same times and the same
bottleneck flow as the flow-by-flow reduction, on regular and irregular fabrics alike. Pairs all on
two servers each make the flows of pairs each tested for crossing servers."""
from __future__ import annotations

import numpy as np

from designer.core.engine import group_flows, pattern_times
from designer.core.engine.evaluate import Engine
from designer.core.engine.group_shape import GroupShape
from designer.core.io import load_document
from designer.core.io.overrides import apply_overrides
from tests.conftest import EXAMPLES, run_cli
from tests.core.test_engine_link_edit import differences


def _sixteen_nics_two_stages(tmp_path):
    """Two NICs per GPU (each flow spread over both) and a pipeline of two stages across servers."""
    path = tmp_path / "h200-16nics.yaml"
    code, _, err = run_cli("generate", "fat-tree", "--gpu", "H200", "--nodes", "4", "--nics-per-node", "16",
                           "--nic-gbps", "200", "--fabric", "ethernet", "-o", path)
    assert code == 0, err
    doc = load_document(path)
    apply_overrides(doc, ["workload.preset=llama3-8b", "workload.global_batch_size=128", "workload.micro_batch_size=1",
                          "workload.seq_length=4096", "parallelism.tensor_model_parallel_size=8",
                          "parallelism.pipeline_model_parallel_size=2"])
    return doc


def _documents(tmp_path):
    return [load_document(path) for path in sorted(EXAMPLES.glob("*.yaml"))] + [_sixteen_nics_two_stages(tmp_path)]


def test_rows_of_flows_give_each_groups_slowest_flow_as_flow_by_flow(tmp_path):
    rng = np.random.default_rng(7)
    layouts, irregular = set(), 0
    for doc in _documents(tmp_path):
        engine = Engine()
        engine.evaluate(doc)
        for model in engine.cache.groups.values():
            for pattern, (route, gid) in model.times.routes.items():
                if route is None:
                    continue
                groups = model.shape.members.shape[0]
                layout = pattern_times.flows_in_order(model.shape, pattern, len(gid))
                if layout is None:
                    irregular += 1
                    continue
                layouts.add(layout[0])
                # ties, zeros and flows that never finish, where the last of a group's slowest counts
                for times in [rng.choice([0.0, 1.0, 2.0, np.inf], size=len(gid)) for _ in range(8)]:
                    by_rows = pattern_times.slowest_in_order(times, groups, layout)
                    by_flow = pattern_times.slowest_of_groups(times, gid, groups)
                    assert np.array_equal(by_rows[0], by_flow[0]) and np.array_equal(by_rows[1], by_flow[1])
    assert layouts == {"rounds", "blocks"} and irregular  # both layouts, and flows not in order


def test_every_example_evaluates_as_with_flow_by_flow_maxima(monkeypatch, tmp_path):
    docs = _documents(tmp_path)
    by_rows = [Engine().evaluate(doc) for doc in docs]
    monkeypatch.setattr(pattern_times, "flows_in_order", lambda *a: None)
    by_flow = [Engine().evaluate(doc) for doc in docs]
    for a, b in zip(by_rows, by_flow, strict=True):
        assert differences(a, b) == [] and differences(a.events, b.events) == []


def test_pairs_on_two_servers_each_flow_as_pairs_tested_one_by_one(tmp_path):
    kinds = set()
    for doc in _documents(tmp_path):
        engine = Engine()
        engine.evaluate(doc)
        fabric = engine.built_fabric
        for model in engine.cache.groups.values():
            shape = model.shape
            if shape.members.shape[1] != 2 or not shape.spans_servers:
                continue
            kinds.add(shape.by_node is not None)
            tested = GroupShape(shape.members, None, shape.n_nodes, shape.per_node, shape.max_tier, shape.classes,
                                spans_servers=shape.spans_servers)  # without by_node: each pair's servers compared
            for pattern in ("pairs", "one_way"):
                for ours, theirs in zip(group_flows.pattern_flows(fabric, shape, pattern),
                                        group_flows.pattern_flows(fabric, tested, pattern), strict=True):
                    assert ours.dtype == theirs.dtype and np.array_equal(ours, theirs)
    assert True in kinds


def test_a_plan_search_names_any_groups_bottleneck_as_kept_routes_do():
    """Without detail (a plan search) an evaluation lets its routes go; a later cost may still name
    any group's bottleneck, the one an engine that kept its routes names."""
    doc = load_document(EXAMPLES / "a100-1024gpu-rail-infiniband.yaml")
    search, detail = Engine(detail=False), Engine()
    search.evaluate(doc)
    detail.evaluate(doc)
    named = set()
    for key, model in search.cache.groups.items():
        kept = detail.cache.groups[key]
        assert not model.times.routes
        for pattern in kept.times.routes:
            groups = model.shape.members.shape[0]
            for group in sorted({0, 1, groups // 2, groups - 1}):
                named.add(model.times.bottleneck(pattern, group))
                assert model.times.bottleneck(pattern, group) == kept.times.bottleneck(pattern, group)
    assert {code for code, _ in named} >= {0, 1, 2}  # groups inside their servers, NICs sending, receiving
