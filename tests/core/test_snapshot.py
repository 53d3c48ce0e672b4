"""A snapshot (what a worker thread reads) never sees a later edit, and costs the window's thread
only its lists: its index is made when the worker first reads it (copy-on-write)."""
from __future__ import annotations

import gc

from designer.core.io import load_document
from tests.conftest import EXAMPLES

EXAMPLE = EXAMPLES / "h100-64gpu-infiniband.yaml"


def test_an_edit_after_a_snapshot_is_not_seen_by_it():
    doc = load_document(EXAMPLE)
    link = doc.links[0]
    before = link.bandwidth_gbps
    snap = doc.snapshot()
    doc.update(link.id, bandwidth_gbps=before / 2)
    assert snap.find("links", link.id).bandwidth_gbps == before and snap.links[0] is link
    assert doc.find("links", link.id).bandwidth_gbps == before / 2 and doc.links[0] is not link
    mine = doc.links[0]
    doc.update(link.id, bandwidth_gbps=before / 4)  # the copy is in no snapshot: changed in place
    assert doc.links[0] is mine and snap.find("links", link.id).bandwidth_gbps == before
    later = doc.snapshot()
    doc.update(link.id, bandwidth_gbps=before / 8)  # the copy is in the newer snapshot now: copied again
    assert later.find("links", link.id).bandwidth_gbps == before / 4
    assert snap.find("links", link.id).bandwidth_gbps == before
    assert doc.find("links", link.id).bandwidth_gbps == before / 8


def test_an_element_removed_and_put_back_is_copied_before_an_edit():
    doc = load_document(EXAMPLE)
    node = doc.nodes[0]
    snap = doc.snapshot()
    name, position, element = doc.remove(node.id)
    doc.add(element, position)  # an undo puts the very object back: the snapshot holds it too
    doc.update(node.id, rack=None)
    assert snap.find("nodes", node.id) is node and node.rack is not None
    assert doc.find("nodes", node.id).rack is None


def test_without_a_live_snapshot_an_edit_changes_the_element_itself():
    doc = load_document(EXAMPLE)
    snap = doc.snapshot()
    del snap
    gc.collect()
    link = doc.links[0]
    doc.update(link.id, bandwidth_gbps=link.bandwidth_gbps / 2)
    assert doc.links[0] is link


def test_a_snapshot_costs_the_window_only_its_lists_and_holds_its_own_elements():
    """The window's thread pays for a snapshot's lists (a pointer an element); the id index (three
    times that) is made when a worker first looks an element up."""
    import copy
    import tracemalloc

    doc = load_document(EXAMPLES / "a100-1024gpu-rail-infiniband.yaml")
    elements = sum(len(getattr(doc, name)) for name in ("racks", "nodes", "switches", "links"))
    tracemalloc.start()
    try:
        snap = doc.snapshot()
        taken_by_snapshot = tracemalloc.get_traced_memory()[0]
        snap.find("links", doc.links[0].id)  # the first look-up, on the worker's thread
        taken_with_index = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert taken_by_snapshot < 16 * elements  # its lists and little more: no index of every id
    assert taken_with_index - taken_by_snapshot > 16 * len(doc.links)  # the index, made when first read

    extra = copy.copy(doc.nodes[0])
    extra.id = "added-later"
    doc.add(extra)
    assert snap.find("nodes", "added-later") is None and doc.find("nodes", "added-later") is extra
    assert snap.get(doc.links[0].id) is doc.links[0]
    assert snap.new_id("added-later") == "added-later0"
    # a fresh id is fresh in every collection (the racks' "net8", the links' "l0", ...)
    for prefix in ("net", "node", "leaf", "l"):
        assert snap.new_id(prefix) != prefix + "0" and snap.get(snap.new_id(prefix)) is None


def test_the_copy_replaces_the_element_where_it_is_after_the_list_changed():
    """The positions kept between edits are checked by identity: after a removal moved every later
    link up one place, an edit still replaces the right link and nothing else."""
    doc = load_document(EXAMPLE)
    first, last = doc.links[0], doc.links[-1]
    doc.snapshot_held = doc.snapshot()  # (kept alive: the edits below must copy)
    doc.update(last.id, bandwidth_gbps=last.bandwidth_gbps / 2)  # the map is made
    doc.snapshot_held = doc.snapshot()
    doc.remove(first.id)
    before = list(doc.links)
    target = doc.links[-1]
    doc.update(target.id, bandwidth_gbps=1.0)
    assert doc.links[-1] is not target and doc.links[-1].bandwidth_gbps == 1.0
    assert [l for l in doc.links[:-1]] == before[:-1] and all(a is b for a, b in zip(doc.links[:-1], before[:-1]))
    assert doc.find("links", target.id) is doc.links[-1]
