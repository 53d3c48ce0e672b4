"""The document's id index and element positions, kept in place by each add, remove and id change,
always say what a fresh document of the same content says: every id finds the first element that
holds it, and a remove hands back the position a fresh document has the element at (what an undo
puts it back at). Repeated ids (a broken file) included."""
from __future__ import annotations

import copy

import pytest

from designer.core.model import Document, Link, Node, Switch
from designer.core.model.document import COLLECTIONS, ClusterSpec


def _design(link_ids: list[str]) -> Document:
    nodes = [Node(id=f"n{i}", accelerator="H100-SXM5-80GB") for i in range(4)]
    switches = [Switch(id=f"s{i}", fabric="infiniband", tier="leaf") for i in range(2)]
    links = [Link(id=lid, a=f"n{k % 4}:p{k}", b=f"s{k % 2}", kind="infiniband", bandwidth_gbps=400.0 + k)
             for k, lid in enumerate(link_ids)]
    return Document(ClusterSpec(nodes=nodes, switches=switches, links=links))


def _same_as_fresh(doc: Document, gone: set[str] = frozenset()) -> None:
    """Every id of the document (and none of `gone`) finds what a fresh document of its content finds."""
    fresh = Document(copy.deepcopy(doc.spec))
    for name in COLLECTIONS:
        mine, theirs = getattr(doc.spec, name), getattr(fresh.spec, name)
        for element_id in {e.id for e in mine} | set(gone):
            found, expected = doc.find(name, element_id), fresh.find(name, element_id)
            if expected is None:
                assert found is None, f"{name}: {element_id} still found after it left"
                continue
            at = next(i for i, e in enumerate(theirs) if e is expected)
            assert found is mine[at], f"{name}: {element_id} finds another element than a fresh document"
    assert all(doc.get(i) is None for i in gone if fresh.get(i) is None)


def _remove_and_check(doc: Document, element_id: str) -> tuple[str, int, object]:
    """Remove `element_id`: the position handed back is the one it had (a fresh document's)."""
    fresh = Document(copy.deepcopy(doc.spec))
    name = next(n for n in COLLECTIONS if fresh.find(n, element_id) is not None)
    expected = next(i for i, e in enumerate(getattr(fresh.spec, name)) if e is fresh.find(name, element_id))
    removed = doc.remove(element_id)
    assert removed[:2] == (name, expected)
    return removed


@pytest.mark.parametrize("positions", [[0], [5], [9], [0, 9, 4], [9, 0, 5, 1]])
def test_delete_undo_delete_again_finds_what_a_fresh_open_finds(positions):
    doc = _design([f"l{k}" for k in range(10)])
    doc.snapshot()  # a live snapshot or none: both ways through the document's copies
    for _ in range(2):
        removed = [_remove_and_check(doc, f"l{k}") for k in positions]  # a delete of several cables
        _same_as_fresh(doc, {f"l{k}" for k in positions})
        for name, position, element in reversed(removed):  # its undo
            doc.add(element, position)
        _same_as_fresh(doc)
        doc.update("l3", bandwidth_gbps=100.0)  # an edit between: the element copied where it is
        _same_as_fresh(doc)
    assert [link.id for link in doc.links] == [f"l{k}" for k in range(10)]


def test_a_repeated_id_finds_its_first_holder_through_deletes_and_undos():
    doc = _design(["a", "b", "r", "c", "r", "d", "r", "e"])
    first = _remove_and_check(doc, "r")  # the first "r" goes: the second stands for the id
    _same_as_fresh(doc)
    second = _remove_and_check(doc, "r")
    _same_as_fresh(doc)
    doc.add(second[2], second[1])
    doc.add(first[2], first[1])  # undone in reverse: the first "r" stands for the id again
    _same_as_fresh(doc)
    assert doc.find("links", "r") is first[2]
    for _ in range(3):
        _remove_and_check(doc, "r")
        _same_as_fresh(doc, {"r"})
    assert doc.find("links", "r") is None
    doc.add(first[2], 0)  # added back before every other link
    _same_as_fresh(doc)


def test_an_added_repeat_before_the_holder_stands_for_the_id():
    doc = _design(["a", "b", "c"])
    twin = Link(id="c", a="n0:p9", b="s1", kind="infiniband", bandwidth_gbps=100.0)
    doc.add(twin, 1)
    _same_as_fresh(doc)
    assert doc.find("links", "c") is twin
    _remove_and_check(doc, "c")  # the twin goes: the older "c" stands again, and repeats no more
    _same_as_fresh(doc)
    _remove_and_check(doc, "c")
    _same_as_fresh(doc, {"c"})


def test_an_id_changed_to_and_from_a_repeated_one_is_found_as_a_fresh_open_finds_it():
    doc = _design(["a", "b", "c", "d"])
    doc.update("d", id="b")  # now repeated: the earlier "b" stands for it
    _same_as_fresh(doc, {"d"})
    doc.update("b", id="x")  # the first "b" renamed: the other one stands for "b"
    _same_as_fresh(doc)
    assert doc.find("links", "b") is doc.links[3] and doc.find("links", "x") is doc.links[1]
    doc.update("b", id="d")
    _same_as_fresh(doc, {"b"})
    _remove_and_check(doc, "d")
    _same_as_fresh(doc, {"b", "d"})


def test_a_device_removed_and_put_back_with_its_links():
    doc = _design([f"l{k}" for k in range(6)])
    removed = [_remove_and_check(doc, i) for i in ("l4", "l0", "n0")]
    _same_as_fresh(doc, {"l4", "l0", "n0"})
    for name, position, element in reversed(removed):
        doc.add(element, position)
    _same_as_fresh(doc)
    assert [n.id for n in doc.nodes] == ["n0", "n1", "n2", "n3"]


class _PassesCounted(list):
    """A collection that counts the passes made over it."""

    passes = 0

    def __iter__(self):
        _PassesCounted.passes += 1
        return super().__iter__()


def test_a_delete_and_its_undo_read_no_other_element():
    """After the first remove (which learns where the elements are), a remove or an add costs the
    edit itself: no pass over the other elements, which at 131k GPUs (295k links) held the window
    ~30 ms per delete or undo."""
    doc = _design([f"l{k}" for k in range(50)])
    doc.spec.links = _PassesCounted(doc.spec.links)
    doc.find("links", "l0")  # the index made (a design read off the window's thread comes with it)
    doc.add(doc.remove("l7")[2], 7)
    _PassesCounted.passes = 0
    for k in (0, 49, 20, 7):
        name, position, element = doc.remove(f"l{k}")
        doc.add(element, position)
        doc.remove(f"l{k}")
        doc.add(element, position)
    assert _PassesCounted.passes == 0
    _same_as_fresh(doc)


def test_after_another_design_is_taken_and_given_back_deletes_find_what_a_fresh_open_finds():
    """A generate and its undo swap designs (exchange), an open takes a design read elsewhere
    (replace_all): the index and positions are the new design's, made where it was read or anew."""
    doc = _design([f"l{k}" for k in range(8)])
    _remove_and_check(doc, "l2")
    other = _design(["x0", "x1", "x2", "x3"])
    other.make_index()  # as an open makes it off the window's thread
    doc.replace_all(other, adopt=True)
    for element_id in ("x3", "x0"):
        name, position, element = _remove_and_check(doc, element_id)
        _same_as_fresh(doc, {"l2", element_id})
        doc.add(element, position)
        _same_as_fresh(doc, {"l2"})
    spec, metadata = doc.exchange(_design(["y0", "y1"]).spec, doc.metadata)
    _remove_and_check(doc, "y0")
    _same_as_fresh(doc, {"y0", "x0"})
    doc.exchange(spec, metadata)  # the undo of that generate
    _remove_and_check(doc, "x1")
    _same_as_fresh(doc, {"x1", "y1"})
    doc.replace_all(_design(["z0", "z1", "z2"]))  # a copy taken
    _remove_and_check(doc, "z1")
    _same_as_fresh(doc, {"z1", "x0"})


def test_links_of_devices_are_those_a_read_of_every_end_finds():
    """A device's links: the links a read of each end's device name finds (a plain id, a port, an end
    on no device, an id held by a server and a switch, a repeated id), before and after edits through
    the document (adds, removes, ends re-pointed, ids changed, an undo's re-add), which keep the index of
    links by device rather than making it again."""
    doc = _design([f"l{k}" for k in range(12)])
    doc.add(Node(id="s1", accelerator="H100-SXM5-80GB"))  # also a switch's id
    doc.add(Node(id="n2", accelerator="H100-SXM5-80GB"))  # a repeated id
    doc.add(Link(id="odd", a="n3", b="ghost:p1", kind="infiniband", bandwidth_gbps=400.0))
    doc.add(Link(id="twin", a="s1:nic0", b="n1:x:y", kind="infiniband", bandwidth_gbps=400.0))
    doc.make_index()  # as an open makes it: from here on kept by the edits

    def read(devices):
        return sorted(l.id for l in doc.links if {l.a.partition(":")[0], l.b.partition(":")[0]} & set(devices))

    def check(*device_sets):
        for devices in device_sets:
            assert sorted(l.id for l in doc.links_of_devices(devices)) == read(devices), devices

    check({"n0"}, {"n3"}, {"s1"}, {"n2", "s0"}, {"n1"}, set())
    doc.remove("l4")
    doc.remove("n1")
    doc.add(Link(id="new", a="s0:p9", b="n0:p2", kind="infiniband", bandwidth_gbps=400.0), 0)
    check({"n0"}, {"s0"}, {"n3", "s1"})
    doc.update("l5", a="n3:p5")  # re-pointed from n1 to n3
    doc.update("l6", id="l6b", b="s0:p6")  # renamed and moved from s0 to s0's other port
    doc.update("odd", b="n0")  # from no device to one
    check({"n0"}, {"n3"}, {"s0"}, {"s1"})
    name, position, element = doc.remove("l7")  # a delete and its undo
    check({"n3"}, {"s1"})
    doc.add(element, position)
    doc.update("l6b", id="l6", b="s0")  # the rename's undo
    doc.add(Node(id="ghost", accelerator="H100-SXM5-80GB"))  # a device named by an end already there
    check({"n0"}, {"n2"}, {"n3"}, {"s0"}, {"s1"}, {"ghost"}, {"n0", "s0", "s1"})
    for link in list(doc.links):  # every cable gone: no device has any
        doc.remove(link.id)
    check({"n0"}, {"s0"}, {"s1"}, {"ghost"})
