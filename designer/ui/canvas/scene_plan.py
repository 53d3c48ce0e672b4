"""What the canvas draws for a design, worked out from the model alone (no Qt item is touched), so that
it can run off the UI thread while a big file opens, and in numpy where it is per cable.

A plan holds each server's and switch's box in the scene, the cable bundles between two devices with the
points their lines end on, the ports in use, the rack-to-rack aggregates of the zoomed-out view and the
layout's extent. The scene (scene.py) turns it into items; on an edit it plans the bundles the same way
from its items' boxes. At 131,072 GPUs (295k bundles) this takes ~2 s, against ~20 s done item by item.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from itertools import repeat

import numpy as np

from ...core.parts import array_in_parts, texts_array, tolist_in_parts
from ...core.model.geometry import RACK_LABEL_PX, RACK_WIDTH_PX, UNIT_HEIGHT_PX, rack_height_px
from .items import PORT_GAP_PX, PORTS_PER_ROW, device_style_key, port_index
from .bundle_table import BundleTable
from .parts_down import parts_down
from .line_extent import LineExtent

# A design with more racks, servers and switches than this gets its canvas planned off the UI thread and
# its items made in slices (scene.py); a smaller one is drawn at once.
STAGED_ITEMS = 1500
RACK_EDGE_HALF_PX = 0.5  # half the rack outline's pen (1 px): Qt counts it in a rack's bounding box
DEVICE_INSET_PX = 3.0  # a server's or switch's box inside its rack (items.DeviceItem.update_from)
DEVICE_GAP_PX = 0.4  # above and below each box


@dataclass
class DeviceBoxes:
    """The scene box of every server and switch (index i: ids[i]); `in_rack`: drawn inside its rack
    (cables then leave from the side), `rack`: its rack's row in `rack_ids`, -1 for a loose device."""

    ids: list
    index: dict
    left: np.ndarray
    top: np.ndarray
    width: np.ndarray
    height: np.ndarray
    ports: np.ndarray  # how many ports the box draws (NICs of a server, radix of a switch)
    in_rack: np.ndarray
    rack: np.ndarray
    rack_ids: list
    keys: list | None = None  # each box's colour key (items.device_style_key), for box_layer.py
    grouped: list | None = None  # box_layer.group_boxes of them (made with the plan, off the UI thread)


@dataclass
class BundlePlan:
    bundles: BundleTable  # links.Bundle by row, in the order their first cable comes in the document
    a: np.ndarray  # (n, 2) where each line ends at bundle.key[0]
    b: np.ndarray
    members: np.ndarray  # link positions in the document, bundle by bundle
    starts: np.ndarray  # bundle r holds members[starts[r]:starts[r + 1]] (one more entry than bundles)
    used_ports: dict  # device id -> frozenset of port numbers with a cable (alike ones shared)
    device_bundles: "DeviceBundles"  # device id -> the keys of the bundles it ends
    row_of: "BundleIndex"  # bundle key -> its row (links.LinkLayer.index)
    kinds: np.ndarray  # links.bundle_kinds
    gbps: np.ndarray  # each bundle's total
    extent: LineExtent  # the lines' box (measuring 295k lines is ~10 ms the UI thread keeps at 131k GPUs)


@dataclass
class AggregatePlan:
    a: np.ndarray
    b: np.ndarray
    kinds: np.ndarray  # per line, its kind's row in bundle_table.KINDS (its last bundle's)
    gbps: list  # per line, in GB/s (the layer's width scale)
    tips: list
    bundle_aggregate: np.ndarray  # per bundle, its line or -1
    row: dict  # (rack, rack) -> line
    total_gbps: dict  # (rack, rack) -> Gb/s
    qlines: list | None = None  # each line as a QLineF, made here (24k at 131k GPUs: ~40 ms the UI thread keeps)
    box: tuple | None = None  # the lines' (left, top, right, bottom), None for none (line_extent.LineExtent.box)


@dataclass
class ScenePlan:
    spec: object  # the ClusterSpec planned: the scene uses the plan only for this very spec
    boxes: DeviceBoxes
    links: BundlePlan
    aggregates: AggregatePlan
    rack_rects: list  # (x, y, width, height) of every rack, in the order of doc.racks
    rack_qrects: list  # the same as QRectF (values, made on any thread: 4.5k at 131k GPUs)
    rack_edges: np.ndarray  # the same as (left, top, right, bottom) rows (scene.rack_edges)
    layout_rect: tuple  # (left, top, right, bottom) of everything drawn
    items_rect: tuple  # the same but the cable lines
    down: dict  # the ids of what is down per collection (parts_down.py), for the canvas's marks


def _port_count(element, kind: str) -> int:
    return int((element.nic_count if kind == "node" else element.radix) or 0)


def boxes_from_model(doc) -> DeviceBoxes | None:
    """Every device's box as the scene will place it; None when a loose device has no stored
    position (the scene then places it next to what is drawn, which only its items can tell)."""
    racks = {r.id: (i, r) for i, r in enumerate(doc.racks)}
    positions = doc.spec.layout.get("positions", {})
    ids, left, top, height, ports, in_rack, rack, keys = [], [], [], [], [], [], [], []
    shared_keys: dict = {}
    for kind, elements in (("node", doc.nodes), ("switch", doc.switches)):
        for e in elements:
            key = device_style_key(e, kind)
            keys.append(shared_keys.setdefault(key, key))
            h = e.height_units * UNIT_HEIGHT_PX
            found = racks.get(e.rack) if e.rack else None
            if found is not None:
                row, r = found
                x = r.x
                y = r.y + rack_height_px(r.units) - ((e.slot or 0) + e.height_units) * UNIT_HEIGHT_PX
            else:
                pos = positions.get(e.id)
                if pos is None:
                    return None
                row, (x, y) = -1, (pos[0], pos[1])
            ids.append(e.id)
            left.append(x + DEVICE_INSET_PX)
            top.append(y + DEVICE_GAP_PX)
            height.append(h - 2 * DEVICE_GAP_PX)
            ports.append(_port_count(e, kind))
            in_rack.append(row >= 0)
            rack.append(row)
    n = len(ids)
    return DeviceBoxes(ids, {d: i for i, d in enumerate(ids)}, np.array(left, float).reshape(n),
                       np.array(top, float).reshape(n), np.full(n, RACK_WIDTH_PX - 2 * DEVICE_INSET_PX),
                       np.array(height, float).reshape(n), np.array(ports, np.int64).reshape(n),
                       np.array(in_rack, bool).reshape(n), np.array(rack, np.int64).reshape(n),
                       [r.id for r in doc.racks], keys)


_RATES: dict = {}  # "400 Gb/s" once, not once per bundle (295k of them at 131k GPUs)


def _rate_text(rate: float) -> str:
    text = _RATES.get(rate)
    if text is None:
        text = _RATES.setdefault(rate, f"{rate:g} Gb/s")
    return text


def plan_bundles(links, boxes: DeviceBoxes) -> BundlePlan:
    """Cables grouped by the two devices they join (a bundle is one line on the canvas), each bundle's
    line ends (on the port its first cable uses, else on the box's edge facing the other end), and
    the ports each device has cabled.

    The grouping is done on arrays: a dict of 295k (device, device) keys with a list each, and a
    second of first ports, were ~80 MB of short-lived objects at 131k GPUs, memory the process then
    kept (131k: the open's peak 715 -> 676 MB, the plan 1.6 -> 1.0 s). Only the bundles themselves
    are made one by one."""
    index, ids = boxes.index, boxes.ids
    a_dev, a_port = _device_and_port(links, "a")
    b_dev, b_port = _device_and_port(links, "b")
    used_ports = _used_ports((a_dev, a_port), (b_dev, b_port))
    ra, rb = _rows(a_dev, index), _rows(b_dev, index)
    del a_dev, b_dev
    valid = np.flatnonzero((ra >= 0) & (rb >= 0) & (ra != rb))
    rank = np.empty(max(len(ids), 1), np.int64)  # each device's place in the order of its id (a <= b)
    rank[sorted(range(len(ids)), key=ids.__getitem__)] = np.arange(len(ids))
    ra, rb, pa, pb = ra[valid], rb[valid], a_port[valid], b_port[valid]
    ordered = rank[ra] <= rank[rb]
    lo, hi = np.where(ordered, ra, rb), np.where(ordered, rb, ra)
    p_lo, p_hi = np.where(ordered, pa, pb), np.where(ordered, pb, pa)
    # groups numbered by their first cable, as the document lists the links
    _, first, group = np.unique(lo * max(len(ids), 1) + hi, return_index=True, return_inverse=True)
    by_appearance = np.argsort(first, kind="stable")
    renumber = np.empty(len(first), np.int64)
    renumber[by_appearance] = np.arange(len(first))
    group = renumber[group.reshape(-1)]
    heads = first[by_appearance]  # each group's first cable (a row of `valid`)
    order = np.argsort(group, kind="stable")
    members = valid[order].astype(np.int64)
    lengths = np.bincount(group, minlength=len(first)).astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    ends = np.stack([lo[heads], hi[heads]], axis=1) if len(heads) else np.zeros((0, 2), np.int64)
    ports = np.stack([p_lo[heads], p_hi[heads]], axis=1) if len(heads) else np.zeros((0, 2), np.int64)
    bundles = _bundle_table(links, ids, ends, ports, members, starts)
    a, b = line_ends(boxes, ends[:, 0], ends[:, 1], ports[:, 0], ports[:, 1])
    return BundlePlan(bundles, a, b, members, starts, used_ports, DeviceBundles(bundles, index),
                      BundleIndex(bundles, index), bundles.kind_index(), bundles.totals.copy(), LineExtent(a, b))


def _device_and_port(links, side: str) -> tuple[np.ndarray, np.ndarray]:
    """Each link's device id on that side, and the number of the port it names (items.port_index,
    asked once per distinct port name), -1 for none."""
    text = texts_array([getattr(link, side) for link in links] or [""])  # partition refuses an empty array
    dev, sep, port = (part[:len(links)] for part in np.strings.partition(text, ":"))
    names, which = np.unique(port, return_inverse=True)
    numbers = np.array([-1 if (k := port_index(str(name))) is None else k for name in names] or [-1], np.int64)
    return dev, np.where(sep == ":", numbers[which.reshape(-1)], -1)


def _rows(dev: np.ndarray, index: dict) -> np.ndarray:
    """Each device id's box row, -1 for an id with no box."""
    return array_in_parts(index.get, tolist_in_parts(dev), np.int64, repeat(-1))


def _used_ports(*sides) -> dict:
    """Device id -> the frozenset of its port numbers with a cable (alike sets shared: a server's 8
    NICs, a switch's 128 ports are a few distinct sets, not one per device). Each side: (device ids,
    port numbers)."""
    used: dict = defaultdict(set)
    for dev, port in sides:
        named = np.flatnonzero(port >= 0)
        for device, number in zip(tolist_in_parts(dev[named]), tolist_in_parts(port[named])):
            used[device].add(number)
    shared: dict = {}
    return {d: shared.setdefault(p, p) for d, p in ((d, frozenset(s)) for d, s in used.items())}


def _bundle_table(links, ids, ends, ports, members, starts) -> BundleTable:
    """The bundles' columns: a one-cable bundle (most of them) is its link's kind, speed and count;
    a bundle of several is worked out in Python, as a Bundle of them always was."""
    member_ids = [links[m].id for m in members.tolist()]
    firsts = [links[m] for m in members[starts[:-1]].tolist()]
    kind_of: dict = {}  # kind -> its code, in the order kinds first come
    kind_code = np.fromiter((kind_of.setdefault(l.kind, len(kind_of)) for l in firsts), np.int16, len(firsts))
    kinds = list(kind_of)
    speed = np.fromiter((l.bandwidth_gbps for l in firsts), float, len(firsts))
    cables = np.fromiter((l.count for l in firsts), np.int64, len(firsts))
    totals = speed * cables  # one cable's speed times its count, as links.Bundle.total_gbps
    distinct, rate_code = np.unique(speed, return_inverse=True)
    rates = [_rate_text(v) for v in distinct.tolist()]
    rate_code = rate_code.reshape(-1).astype(np.int32)
    table = BundleTable(ids, ends, ports, starts, member_ids, kinds, kind_code, totals, cables, rates, rate_code)
    lengths = np.diff(starts)
    for r in np.flatnonzero(lengths > 1).tolist():
        chosen = [links[m] for m in members[starts[r]:starts[r + 1]].tolist()]
        kinds_here = {l.kind for l in chosen}
        rates_here = {l.bandwidth_gbps for l in chosen}
        kind_code[r] = BundleTable._code(kinds, kinds_here.pop() if len(kinds_here) == 1 else "ethernet")
        rate_code[r] = BundleTable._code(rates, _rate_text(rates_here.pop()) if len(rates_here) == 1 else "mixed")
        cables[r] = sum(l.count for l in chosen)
        totals[r] = sum(l.bandwidth_gbps * l.count for l in chosen)
    return table


class BundleIndex:
    """Bundle key (device id, device id) -> its row, found from the bundles' end rows by a sorted
    search: a dict of 295k tuple keys and row numbers cost ~28 MB at 131k GPUs. Read like that dict
    (links.LinkLayer.index); its keys come in row order."""

    def __init__(self, bundles: BundleTable, device_row: dict):
        self._bundles, self._device_row = bundles, device_row
        self._devices = max(len(device_row), 1)
        code = bundles.ends[:, 0] * self._devices + bundles.ends[:, 1]  # unique: one bundle per ordered pair of devices
        self._order = np.argsort(code)
        self._code = code[self._order]
        self._added: dict = {}  # key -> row of a bundle an edit appended (the sorted codes stay as planned)

    def add(self, key, row: int) -> None:
        self._added[key] = row

    def get(self, key, default=None):
        if type(key) is not tuple or len(key) != 2:
            return default
        if key in self._added:
            return self._added[key]
        a, b = self._device_row.get(key[0]), self._device_row.get(key[1])
        if a is None or b is None:
            return default
        code = a * self._devices + b
        at = int(np.searchsorted(self._code, code))
        return int(self._order[at]) if at < len(self._code) and self._code[at] == code else default

    def __getitem__(self, key) -> int:
        row = self.get(key)
        if row is None:
            raise KeyError(key)
        return row

    def __contains__(self, key) -> bool:
        return self.get(key) is not None

    def __len__(self) -> int:
        return len(self._code) + len(self._added)

    def __iter__(self):
        return (self._bundles.key(r) for r in range(len(self._bundles)))

    def keys(self):
        return list(self)


class DeviceBundles:
    """Which bundles end on a device, looked up when asked (a device dragged) from the bundles' end rows,
    rather than a set per device (46 MB at 131k GPUs). Read like a dict of device id -> keys."""

    def __init__(self, bundles: BundleTable | None = None, index: dict | None = None):
        self._bundles = bundles if bundles is not None else BundleTable.empty()
        self._index = index or {}

    def get(self, device_id: str, default=()):
        row = self._index.get(device_id)
        ends = self._bundles.ends
        if row is None or not len(ends):
            return default
        found = np.flatnonzero((ends[:, 0] == row) | (ends[:, 1] == row)).tolist()
        return {self._bundles.key(r) for r in found} if found else default

    def __getitem__(self, device_id: str) -> set:
        return self.get(device_id, set())

    def __contains__(self, device_id: str) -> bool:
        return bool(self.get(device_id, None))

    def clear(self) -> None:
        self.__init__()


def line_ends(boxes: DeviceBoxes, da, db, pa, pb) -> tuple[np.ndarray, np.ndarray]:
    """Both ends of each line from device rows da to db, leaving from ports pa and pb (-1: none)."""
    return _end(boxes, da, pa, db), _end(boxes, db, pb, da)


def _end(boxes: DeviceBoxes, dev, port, other) -> np.ndarray:
    """items.DeviceItem.port_point, else DeviceItem.anchor toward the other box's centre, for many at once."""
    left, top, w, h = boxes.left[dev], boxes.top[dev], boxes.width[dev], boxes.height[dev]
    count = boxes.ports[dev]
    per_row = np.maximum(1, np.minimum(count, PORTS_PER_ROW))
    step = (w - 2) / per_row
    size = np.maximum(0.3, np.minimum(step * 0.7, 1.2))
    row, col = np.divmod(np.maximum(port, 0), per_row)
    out = np.empty((len(dev), 2))
    out[:, 0] = left + 1 + col * step + (step - size) / 2 + size / 2
    out[:, 1] = top + PORT_GAP_PX + row * (size + PORT_GAP_PX) + size / 2
    anchored = (port < 0) | (port >= count)
    if anchored.any():
        k = np.flatnonzero(anchored)
        l, t, ww, hh = left[k], top[k], w[k], h[k]
        cx, cy = l + ww / 2, t + hh / 2
        o = other[k]
        ox, oy = boxes.left[o] + boxes.width[o] / 2, boxes.top[o] + boxes.height[o] / 2
        racked = boxes.in_rack[dev[k]]
        # in a rack: from the side facing the other end, into the aisle
        x = np.where(ox < cx - ww, l, l + ww)
        y = cy.copy()
        # loose: the edge that faces the other end
        dx, dy = ox - cx, oy - cy
        vertical = np.abs(dy) * ww >= np.abs(dx) * hh
        lx = np.where(vertical, np.minimum(np.maximum(ox, l + 2), l + ww - 2), np.where(dx < 0, l, l + ww))
        ly = np.where(vertical, np.where(dy < 0, t, t + hh), np.minimum(np.maximum(oy, t + 1), t + hh - 1))
        out[k, 0] = np.where(racked, x, lx)
        out[k, 1] = np.where(racked, y, ly)
    return out


def plan_aggregates(bundles: BundleTable, boxes: DeviceBoxes, rack_rects: list) -> AggregatePlan:
    """One line per pair of racks that share cables (the zoomed-out view), from the bottom of the upper
    rack to the top of the lower one, with the pair's total bandwidth."""
    rack_ids = boxes.rack_ids
    n = len(bundles)
    if n == 0 or not rack_ids:
        return AggregatePlan(np.zeros((0, 2)), np.zeros((0, 2)), np.zeros(0, np.int8), [], [], np.full(n, -1, np.int64),
                             {}, {})
    rows_a, rows_b = bundles.device_rows(boxes.index)
    ra = np.where(rows_a >= 0, boxes.rack[rows_a], -1)  # a device with no box: in no rack
    rb = np.where(rows_b >= 0, boxes.rack[rows_b], -1)
    gbps = bundles.totals
    kind = bundles.kind_index().astype(np.int64)
    rank = np.empty(len(rack_ids), np.int64)
    rank[np.argsort(np.array(rack_ids, dtype=object), kind="stable")] = np.arange(len(rack_ids))
    ok = (ra >= 0) & (rb >= 0) & (ra != rb) & bundles.filled()  # (an emptied row: in no pair)
    swap = ok & (rank[np.maximum(ra, 0)] > rank[np.maximum(rb, 0)])
    lo, hi = np.where(swap, rb, ra), np.where(swap, ra, rb)
    code = lo * len(rack_ids) + hi
    rows_ok = np.flatnonzero(ok)
    uniq, first, inverse = np.unique(code[rows_ok], return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # lines in the order their first bundle comes
    line_of_uniq = np.empty(len(uniq), np.int64)
    line_of_uniq[order] = np.arange(len(uniq))
    line = line_of_uniq[inverse]
    bundle_aggregate = np.full(n, -1, np.int64)
    bundle_aggregate[rows_ok] = line
    totals = np.bincount(line, weights=gbps[rows_ok], minlength=len(uniq))
    last = np.zeros(len(uniq), np.int64)
    np.maximum.at(last, line, np.arange(len(line)))  # a pair's kind is its last bundle's
    last_kind = kind[rows_ok][last]
    pair_lo, pair_hi = (uniq[order] // len(rack_ids)), (uniq[order] % len(rack_ids))
    rects = np.array(rack_rects, float).reshape(-1, 4)
    cx = rects[:, 0] + rects[:, 2] / 2
    cy = rects[:, 1] + rects[:, 3] / 2
    top = rects[:, 1] - RACK_EDGE_HALF_PX
    bottom = rects[:, 1] + rects[:, 3] + RACK_EDGE_HALF_PX
    above = cy[pair_lo] < cy[pair_hi]
    a = np.column_stack([cx[pair_lo], np.where(above, bottom[pair_lo], top[pair_lo])])
    b = np.column_stack([cx[pair_hi], np.where(above, top[pair_hi], bottom[pair_hi])])
    pairs = [(rack_ids[x], rack_ids[y]) for x, y in zip(pair_lo.tolist(), pair_hi.tolist())]
    total_list = totals.tolist()
    tips = [f"racks {p[0]} - {p[1]}: {t / 1000:g} Tb/s (zoom in for the cables)" for p, t in zip(pairs, total_list)]
    from PySide6.QtCore import QLineF  # a value, not an item: made on any thread

    qlines = [QLineF(p[0], p[1], q[0], q[1]) for p, q in zip(a.tolist(), b.tolist())]
    return AggregatePlan(a, b, last_kind.astype(np.int8), [t / 8 for t in total_list], tips, bundle_aggregate,
                         {p: i for i, p in enumerate(pairs)}, dict(zip(pairs, total_list)), qlines,
                         LineExtent(a, b).box(a, b))


def rack_rects_from_model(doc) -> list:
    return [(r.x, r.y, RACK_WIDTH_PX, rack_height_px(r.units)) for r in doc.racks]


def plan_scene(doc) -> ScenePlan | None:
    """The whole canvas of `doc` (None when a loose device has no stored position: see boxes_from_model)."""
    boxes = boxes_from_model(doc)
    if boxes is None:
        return None
    from .box_layer import group_boxes

    boxes.grouped = group_boxes(np.column_stack([boxes.left, boxes.top, boxes.width, boxes.height]), boxes.keys)
    links = plan_bundles(doc.links, boxes)
    rack_rects = rack_rects_from_model(doc)
    aggregates = plan_aggregates(links.bundles, boxes, rack_rects)
    from PySide6.QtCore import QRectF  # a value, not an item: made on any thread

    rack_qrects = [QRectF(*r) for r in rack_rects]
    return ScenePlan(doc.spec, boxes, links, aggregates, rack_rects, rack_qrects, rack_edges(rack_rects),
                     _extent(boxes, links, rack_rects), _extent(boxes, None, rack_rects), parts_down(doc))


def rack_edges(rack_rects: list) -> np.ndarray:
    """(left, top, right, bottom) per rack of (x, y, width, height) ones, as QRectF's edges read them."""
    r = np.array(rack_rects, float).reshape(-1, 4)
    return np.column_stack([r[:, 0], r[:, 1], r[:, 0] + r[:, 2], r[:, 1] + r[:, 3]])


def plan_if_large(doc) -> ScenePlan | None:
    """The plan of a design the scene builds in slices (a worker thread makes it while a file opens)."""
    if len(doc.racks) + len(doc.nodes) + len(doc.switches) <= STAGED_ITEMS:
        return None
    return plan_scene(doc)


def _extent(boxes: DeviceBoxes, links: BundlePlan | None, rack_rects: list) -> tuple:
    """What is drawn, for the first fit while the items are still being made: racks with the room for
    their names, loose boxes, the cable lines (None: without them)."""
    xs, ys = [], []
    if rack_rects:
        r = np.array(rack_rects, float).reshape(-1, 4)
        xs += [r[:, 0] - RACK_EDGE_HALF_PX, r[:, 0] + r[:, 2] + RACK_EDGE_HALF_PX]
        ys += [r[:, 1] - RACK_LABEL_PX, r[:, 1] + r[:, 3] + RACK_EDGE_HALF_PX]
    loose = ~boxes.in_rack
    if loose.any():
        xs += [boxes.left[loose] - DEVICE_INSET_PX, boxes.left[loose] + boxes.width[loose] + DEVICE_INSET_PX]
        ys += [boxes.top[loose] - DEVICE_GAP_PX, boxes.top[loose] + boxes.height[loose] + DEVICE_GAP_PX]
    if links is not None and len(links.a):
        xs += [links.a[:, 0] - 4, links.a[:, 0] + 4, links.b[:, 0] - 4, links.b[:, 0] + 4]
        ys += [links.a[:, 1] - 4, links.a[:, 1] + 4, links.b[:, 1] - 4, links.b[:, 1] + 4]
    if not xs:
        return (0.0, 0.0, 0.0, 0.0)
    x, y = np.concatenate(xs), np.concatenate(ys)
    return (float(x.min()), float(y.min()), float(x.max()), float(y.max()))
