"""What the document holds can always be saved and opened again.

Random edits through the document API (seeded, so a failure replays): add and remove racks,
servers, switches and links, links of known and unknown kinds, field changes inside and
outside the declared choices. Every edit the document accepts must survive save -> load; an
edit outside the declared choices is refused with a clear message and changes nothing.
"""
import random

import pytest

from designer.core.io import dumps_document, load_document, save_document
from designer.core.model import Document, Link, Node, Rack, Switch
from designer.core.model.elements import LINK_KINDS, UnknownChoice

BAD_KINDS = ("", "fiber", "InfiniBand", "nvlink ", "ib")
ACCELERATORS = ("H100-SXM5-80GB", "A100-SXM4-80GB", "H200-SXM5-141GB")


def _devices(doc):
    return list(doc.nodes) + list(doc.switches)


def _add_rack(doc, rng):
    doc.add(Rack(id=doc.new_id("rack"), x=float(rng.randrange(0, 2000, 12)), y=float(rng.randrange(0, 900, 12))))


def _add_node(doc, rng):
    racks = list(doc.racks)
    rack = rng.choice(racks).id if racks and rng.random() < 0.7 else None
    doc.add(Node(id=doc.new_id("node"), accelerator=rng.choice(ACCELERATORS), accelerator_count=rng.choice((4, 8)),
                 nic_count=rng.choice((1, 4, 8)), nic_gbps=rng.choice((200.0, 400.0)),
                 nic_kind=rng.choice(("infiniband", "ethernet")), rack=rack, slot=rng.randrange(0, 38) if rack else None))


def _add_switch(doc, rng):
    doc.add(Switch(id=doc.new_id("leaf"), fabric=rng.choice(("infiniband", "ethernet")),
                   tier=rng.choice(("leaf", "spine", "core")), radix=rng.choice((40, 64)),
                   port_gbps=rng.choice((200.0, 400.0))))


def _link(doc, rng, kind):
    a, b = rng.sample(_devices(doc), 2)
    return Link(id=doc.new_id("l"), a=f"{a.id}:p{rng.randrange(8)}", b=b.id, kind=kind,
                bandwidth_gbps=rng.choice((200.0, 400.0, 900.0)), count=rng.choice((1, 2, 4)))


def _add_link(doc, rng):
    if len(_devices(doc)) >= 2:
        doc.add(_link(doc, rng, rng.choice(LINK_KINDS)))


def _add_bad_link(doc, rng):
    if len(_devices(doc)) < 2:
        return
    before = dumps_document(doc)
    link = _link(doc, rng, rng.choice(BAD_KINDS))
    with pytest.raises(UnknownChoice) as refused:
        doc.add(link)
    assert f"kind {link.kind!r} is not one of" in str(refused.value) and link.id in str(refused.value)
    assert dumps_document(doc) == before and doc.get(link.id) is None


def _remove(doc, rng):
    everything = list(doc.racks) + _devices(doc) + list(doc.links)
    if everything:
        doc.remove(rng.choice(everything).id)


GOOD_CHANGES = {
    Rack: [("units", (42, 48)), ("row", ("pod0", "core")), ("name", ("A-1", "集群-Ω"))],
    Node: [("accelerator_count", (4, 8)), ("nic_kind", ("ethernet", "infiniband")), ("scale_up", ("nvlink", "pcie")),
           ("slowdown", (1.0, 1.25)), ("gpu_slowdown", ([], [1.0, 1.5])), ("name", ("gpu box",))],
    Switch: [("tier", ("spine", "core", "leaf")), ("fabric", ("ethernet", "infiniband")), ("sharp", (True, False)),
             ("latency_us", (0.13, 0.6)), ("rail", (None, 3))],
    Link: [("kind", LINK_KINDS), ("count", (1, 8)), ("slowdown", (1.0, 2.0)), ("latency_us", (0.0, 0.01))],
}
BAD_CHANGES = {
    Node: [("nic_kind", ("roce", "")), ("scale_up", ("infinity-fabric",))],
    Switch: [("tier", ("top", "")), ("fabric", ("nvswitch", "Ethernet"))],
    Link: [("kind", BAD_KINDS)],
}


def _change(doc, rng):
    everything = list(doc.racks) + _devices(doc) + list(doc.links)
    if everything:
        element = rng.choice(everything)
        name, values = rng.choice(GOOD_CHANGES[type(element)])
        doc.update(element.id, **{name: rng.choice(values)})


def _bad_change(doc, rng):
    candidates = [e for e in _devices(doc) + list(doc.links) if type(e) in BAD_CHANGES]
    if not candidates:
        return
    element = rng.choice(candidates)
    name, values = rng.choice(BAD_CHANGES[type(element)])
    before = dumps_document(doc)
    # a good change first in the same call: refused as a whole, nothing applied
    good_name, good_values = GOOD_CHANGES[type(element)][-1]
    with pytest.raises(UnknownChoice, match=f"{name} .* is not one of"):
        doc.update(element.id, **{good_name: rng.choice(good_values), name: rng.choice(values)})
    assert dumps_document(doc) == before


EDITS = [(_add_rack, 2), (_add_node, 4), (_add_switch, 3), (_add_link, 6), (_add_bad_link, 3), (_remove, 2),
         (_change, 6), (_bad_change, 2)]


@pytest.mark.parametrize("seed", range(6))
def test_random_edits_always_save_and_reopen(tmp_path, seed):
    rng = random.Random(seed)
    doc = Document()
    doc.metadata.name = f"random edits {seed}"
    path = tmp_path / "design.yaml"
    functions, weights = zip(*EDITS)
    for step in range(160):
        rng.choices(functions, weights)[0](doc, rng)
        if step % 20 == 19:
            save_document(doc, path)
            reopened = load_document(path)  # raises (with the file's line) if saving wrote what loading refuses
            assert reopened == doc, f"seed {seed}, step {step}: the reopened design differs"
    assert doc.links and doc.nodes and doc.switches  # the walk really built something


def test_the_document_names_the_link_and_the_choices():
    doc = Document()
    with pytest.raises(UnknownChoice) as refused:
        doc.add(Link(id="l72", a="node0:nic0", b="leaf0", kind="", bandwidth_gbps=400.0))
    assert str(refused.value) == ("link l72: kind '' is not one of nvlink, pcie, ethernet, infiniband "
                                  "(pick one of them)")
    assert not doc.links
