"""The whole-array pass of the links' check reports exactly what the per-link walk reports.

check_links_fast proves a design's links sound with numpy, or hands over to the walk; these
tests run the check both ways, on sound designs and on designs with each kind of link problem,
and compare every message, in order.
"""
from __future__ import annotations

import pytest

from designer.core.io import load_document, loads_document
from designer.core.model import check_links_fast
from designer.core.design_check import check_document
from tests.conftest import EXAMPLES, SMALL


def both_ways(doc, monkeypatch):
    fast = [p.format() for p in check_document(doc)]
    with monkeypatch.context() as m:
        m.setattr(check_links_fast, "links_without_problems", lambda doc: None)
        m.setattr(check_links_fast, "every_leaf_has_uplinks", lambda doc: False)
        walk = [p.format() for p in check_document(doc)]
    return fast, walk


@pytest.mark.parametrize("name", ["a100-1024gpu-rail-infiniband.yaml", "h100-64gpu-infiniband.yaml",
                                  "h100-roce-2to1-ethernet.yaml"])
def test_sound_examples_take_the_fast_pass_and_say_the_same(name, monkeypatch):
    doc = load_document(EXAMPLES / name)
    assert check_links_fast.links_without_problems(doc) is not None
    fast, walk = both_ways(doc, monkeypatch)
    assert fast == walk


def edit(text, old, new):
    assert old in text
    return text.replace(old, new, 1)


BROKEN = {
    "port used twice": ('b: "leaf0:p1"', 'b: "leaf0:p0"'),
    "port past the last": ('b: "leaf0:p3"', 'b: "leaf0:p9"'),
    "not a port": ('a: "n0:nic1"', 'a: "n0:nik1"'),
    "leading zero": ('a: "n0:nic1"', 'a: "n0:nic01"'),
    "dangling": ('a: "n1:nic0"', 'a: "n9:nic0"'),
    "wrong kind": ('b: "leaf0:p0", kind: infiniband', 'b: "leaf0:p0", kind: ethernet'),
    "faster than the ports": ('kind: infiniband, bandwidth_gbps: 400}\n    - {id: l3',
                              'kind: infiniband, bandwidth_gbps: 800}\n    - {id: l3'),
    "a free NIC": ('    - {id: l3, a: "n1:nic1", b: "leaf0:p3", kind: infiniband, bandwidth_gbps: 400}\n', ""),
    "no port (sound)": ('a: "n1:nic1"', 'a: "n1"'),
    "two servers joined": ('b: "leaf0:p2"', 'b: "n0:nic5"'),
    "non-ASCII digits (sound: int() reads them)": ('a: "n0:nic1"', 'a: "n0:nic\u0661"'),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_designs_with_link_problems_say_the_same_both_ways(case, monkeypatch):
    old, new = BROKEN[case]
    doc = loads_document(edit(SMALL, old, new), "broken.yaml")
    fast, walk = both_ways(doc, monkeypatch)
    assert fast == walk
    assert bool(fast) == ("sound" not in case)


def test_a_leaf_without_uplinks_is_still_found(monkeypatch):
    text = edit(SMALL, '    - {id: leaf0, fabric: infiniband, tier: leaf, radix: 8, rack: net, slot: 0}\n',
                '    - {id: leaf0, fabric: infiniband, tier: leaf, radix: 8, rack: net, slot: 0}\n'
                '    - {id: leaf1, fabric: infiniband, tier: leaf, radix: 8, rack: net, slot: 2}\n')
    text = edit(edit(text, 'b: "leaf0:p2"', 'b: "leaf1:p0"'), 'b: "leaf0:p3"', 'b: "leaf1:p1"')
    doc = loads_document(text, "islands.yaml")
    assert not check_links_fast.every_leaf_has_uplinks(doc)
    fast, walk = both_ways(doc, monkeypatch)
    assert fast == walk and any("has no up-links" in p for p in fast)
