"""NCCL offers CollNet (SHARP) to an all-reduce across servers only when every leaf its groups'
NICs hang from reduces in the switch."""
from __future__ import annotations

from designer.core.engine.evaluate import Engine
from designer.core.io import load_document
from tests.conftest import EXAMPLES


def _offers_collnet(doc) -> list[bool]:
    engine = Engine()
    engine.evaluate(doc)
    model = next(m for key, m in engine.cache.groups.items() if key[2] == "dp-cp")
    return ["collnet" in model.choice.algorithms("all_reduce", N, groups, "auto")
            for (N, _, _), groups in model.shape.classes.items() if N > 1]


def test_collnet_is_offered_only_when_every_leaf_has_sharp():
    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    assert _offers_collnet(doc) and not any(_offers_collnet(doc))  # no switch has SHARP
    for switch in doc.switches:
        doc.update(switch.id, sharp=True)
    assert all(_offers_collnet(doc))
    leaf = next(s for s in doc.switches if any(link.b.split(":")[0] == s.id or link.a.split(":")[0] == s.id
                                               for link in doc.links if link.a.split(":")[0] in {n.id for n in doc.nodes}))
    doc.update(leaf.id, sharp=False)  # one leaf the servers hang from without it
    offered = _offers_collnet(doc)
    assert offered and not all(offered)
