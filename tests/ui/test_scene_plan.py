"""The canvas plan's cable bundles (ui/canvas/scene_plan.py), grouped on arrays: the rules a user sees
on the canvas, each case once."""
from __future__ import annotations

import numpy as np

from designer.core.model.elements import Link
from designer.ui.canvas.scene_plan import DeviceBoxes, plan_bundles


def boxes(ids: list[str]) -> DeviceBoxes:
    n = len(ids)
    return DeviceBoxes(ids, {d: i for i, d in enumerate(ids)}, np.arange(n) * 100.0, np.zeros(n),
                       np.full(n, 80.0), np.full(n, 20.0), np.full(n, 8, np.int64), np.zeros(n, bool),
                       np.full(n, -1, np.int64), [])


def link(i: int, a: str, b: str, gbps: float = 400.0, kind: str = "infiniband", count: int = 1) -> Link:
    return Link(id=f"l{i}", a=a, b=b, kind=kind, bandwidth_gbps=gbps, count=count)


def test_cables_bundle_by_their_two_devices_in_the_order_of_their_first_cable():
    links = [
        link(0, "s1:p3", "n0:nic1"),  # ids in order: n0 first, its port first
        link(1, "n0:nic2", "s1:p07", gbps=200.0, count=2),  # the same two devices: the same bundle
        link(2, "n0", "gone:p1"),  # an end on no device: no line, its port still counted as used
        link(3, "s1:p5", "s1:p6"),  # a cable from a switch to itself: no line
        link(4, "n1:x5", "s1"),  # a port named otherwise still has its number; a bare device none
        link(5, "n1:nic", "s2:"),  # names without a number: no port
        link(6, "s2:p1", "n0:nic0", kind="ethernet"),
    ]
    plan = plan_bundles(links, boxes(["s1", "s2", "n0", "n1"]))
    assert [(b.key, b.link_ids, b.ports) for b in plan.bundles] == [
        (("n0", "s1"), ("l0", "l1"), (1, 3)), (("n1", "s1"), ("l4",), (5, None)),
        (("n1", "s2"), ("l5",), (None, None)), (("n0", "s2"), ("l6",), (0, 1))]
    first = plan.bundles[0]
    assert (first.kind, first.rate, first.cables, first.total_gbps) == ("infiniband", "mixed", 3, 800.0)
    assert plan.bundles[3].kind == "ethernet" and plan.bundles[3].rate == "400 Gb/s"
    assert plan.members.tolist() == [0, 1, 4, 5, 6] and plan.starts.tolist() == [0, 2, 3, 4, 5]
    assert plan.used_ports == {"n0": {0, 1, 2}, "s1": {3, 5, 6, 7}, "gone": {1}, "n1": {5}, "s2": {1}}
    assert [plan.row_of[b.key] for b in plan.bundles] == [0, 1, 2, 3]
    assert plan.device_bundles["n0"] == {("n0", "s1"), ("n0", "s2")}


def test_no_cables_plan_no_bundles():
    plan = plan_bundles([], boxes(["s1"]))
    assert list(plan.bundles) == [] and plan.members.tolist() == [] and plan.starts.tolist() == [0]
    assert plan.used_ports == {} and len(plan.a) == 0


def test_the_bundles_are_made_when_read_and_an_edited_one_is_kept():
    from designer.ui.canvas.links import Bundle

    links = [link(0, "s1:p3", "n0:nic1"), link(1, "n0:nic2", "s1:p4"), link(2, "n1:nic0", "s1:p5"),
             link(3, "n1:nic1", "s2:p0", kind="ethernet")]
    table = plan_bundles(links, boxes(["s1", "s2", "n0", "n1"])).bundles
    assert len(table) == 3 and table[-1] == table[2] and [b.key for b in table[1:]] == [("n1", "s1"), ("n1", "s2")]
    assert table.kinds_present() == {"infiniband", "ethernet"} and table.totals.tolist() == [800.0, 400.0, 400.0]
    assert table.rows_holding({"l1", "l3"}) == {0: False, 2: True} and table.row_of_link("l2") == 1
    assert table.row_of_link("nowhere") is None
    # an edit gives row 0 another set of cables and kind: the row is that object, the columns follow
    edited = Bundle(("n0", "s1"), ("l0",), "nvlink", 900.0, 1, "900 Gb/s", (1, 3))
    table[0] = edited
    assert table[0] is edited and table.link_ids(0) == ("l0",) and table.kinds_present() == {
        "nvlink", "infiniband", "ethernet"}
    assert table.totals[0] == 900.0 and table.rows_holding({"l1", "l0"}) == {0: True}
    assert table.row_of_link("l1") is None and table.row_of_link("l0") == 0
