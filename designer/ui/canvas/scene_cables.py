"""The cables on the canvas: one line per bundle of cables between two devices (the link layer's
rows), its ends on the devices' ports, and the rack-to-rack aggregates of the zoomed-out view; kept in
step with the design's links (the scene's `cables` part)."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF

from ...core.model import Link
from ...core.model.elements import split_endpoint
from .items import ID_ROLE, port_index
from .links import KINDS, Bundle
from .list_edits import Inserted, ListEdits
from .scene_plan import DeviceBoxes, DeviceBundles, plan_aggregates, plan_bundles


class SceneCables:
    """scene.cables: which design links each bundle holds (drawn by the scene's link layer), which bundles
    each device ends, and the rack-to-rack aggregates with what they add up."""

    def __init__(self, scene):
        self._scene = scene
        self.bundles = BundlesByKey(scene)  # bundle key -> Bundle (the link layer's rows, read by key)
        self.device_bundles = DeviceBundles()  # device id -> the keys of the bundles it ends
        self.version = 0  # counts changes of which links the bundles hold
        self.positions = None  # (version, links, members, starts): each bundle's link positions
        self.aggregates_stale = True
        self._aggregate_row: dict[tuple[str, str], int] = {}
        self._aggregate_gbps: dict[tuple[str, str], float] = {}
        # devices the edit being mirrored removed: id -> the rack it was in (its cables' bundles and
        # rack-to-rack lines are still told apart until the edit is done)
        self.gone: dict[str, str | None] = {}

    def bundle_key(self, link: Link) -> tuple[str, str] | None:
        devices, gone = self._scene.devices, self.gone
        a, _ = split_endpoint(link.a)
        b, _ = split_endpoint(link.b)
        if (a not in devices and a not in gone) or (b not in devices and b not in gone) or a == b:
            return None
        return (a, b) if a <= b else (b, a)

    def device_boxes(self) -> DeviceBoxes:
        """Every device item's box in the scene, for scene_plan (an edit plans from the items)."""
        scene = self._scene
        rack_row = {rack_id: i for i, rack_id in enumerate(scene.racks)}
        ids, boxes, ports, racks = [], [], [], []
        for device_id, item in scene.devices.items():
            r = item.mapRectToScene(item.rect())
            parent = item.parentItem()
            ids.append(device_id)
            boxes.append((r.left(), r.top(), r.width(), r.height()))
            ports.append(item.ports.count)
            racks.append(rack_row.get(parent.data(ID_ROLE), -1) if parent is not None else -1)
        box = np.array(boxes, float).reshape(-1, 4)
        rack = np.array(racks, np.int64)
        return DeviceBoxes(ids, {d: i for i, d in enumerate(ids)}, box[:, 0], box[:, 1], box[:, 2], box[:, 3],
                           np.array(ports, np.int64), np.array([item.parentItem() is not None
                                                                for item in scene.devices.values()], bool),
                           rack, list(scene.racks))

    def clear(self) -> None:
        """Every item is gone (a rebuild): no device ends a bundle."""
        self.device_bundles.clear()
        self.gone = {}

    def knows_devices(self, device_ids) -> bool:
        """The bundle table numbers all these devices: their bundles are its rows (a device removed
        keeps its rows, emptied, so that an undo fills them again)."""
        known = self._scene.link_layer.bundles.device_row()
        return all(d in known for d in device_ids)

    def draw_nothing_of(self, device_ids) -> bool:
        """No bundle drawn ends on any of these devices (all their rows emptied)."""
        table = self._scene.link_layer.bundles
        known = table.device_row()
        rows = np.array([known[d] for d in device_ids if d in known], np.int64)
        if not len(rows) or not len(table.ends):
            return True
        ending = np.flatnonzero(np.isin(table.ends, rows).any(axis=1)).tolist()
        return all(r in table.empty for r in ending)

    def use_plan(self, lp) -> None:
        """The bundles of a plan (scene_plan.plan_bundles) into the link layer."""
        scene = self._scene
        self.device_bundles = lp.device_bundles
        scene.link_layer.set_bundles(lp.bundles, lp.a, lp.b, lp.row_of, lp.kinds, lp.gbps, lp.extent)
        self.version += 1  # which links each bundle holds changed (link heat rows)
        self.positions = (self.version, len(scene.doc.links), lp.members, lp.starts)
        self.aggregates_stale = True

    def rebuild(self) -> DeviceBoxes:
        """Every bundle anew, planned from the device items; returns their boxes (the aggregates of the
        same edit are planned from them: reading 17k items' boxes again cost 0.2 s at 131k GPUs)."""
        scene = self._scene
        boxes = self.device_boxes()
        lp = plan_bundles(scene.doc.links, boxes)
        self.use_plan(lp)
        for device_id, item in scene.devices.items():  # each device's ports with a cable (drawn filled)
            ports = lp.used_ports.get(device_id, frozenset())
            if ports != item.ports.used:
                item.ports.used = ports
                item.ports.update()
        return boxes

    @staticmethod
    def _make_bundle_data(key, links) -> Bundle:
        kinds = {l.kind for l in links}
        rates = {l.bandwidth_gbps for l in links}
        a_device, a_port = split_endpoint(links[0].a)
        _b_device, b_port = split_endpoint(links[0].b)
        ports = (port_index(a_port), port_index(b_port))
        return Bundle(key, tuple(l.id for l in links), kinds.pop() if len(kinds) == 1 else "ethernet",
                      sum(l.bandwidth_gbps * l.count for l in links), sum(l.count for l in links),
                      f"{rates.pop():g} Gb/s" if len(rates) == 1 else "mixed",
                      ports if a_device == key[0] else ports[::-1])

    def ends(self, key, rects: dict | None = None) -> tuple[QPointF, QPointF]:
        """Where a bundle's line ends: on the port its first cable uses (so a device's cables fan out
        from their own ports), or on the box's edge facing the other end for a port it does not draw."""
        devices = self._scene.devices
        a, b = devices[key[0]], devices[key[1]]
        if rects is None:
            ra, rb = a.mapRectToScene(a.rect()), b.mapRectToScene(b.rect())
        else:
            ra = rects.get(key[0]) or rects.setdefault(key[0], a.mapRectToScene(a.rect()))
            rb = rects.get(key[1]) or rects.setdefault(key[1], b.mapRectToScene(b.rect()))
        bundle = self.bundles.get(key)
        port_a, port_b = bundle.ports if bundle is not None else (None, None)
        pa = a.port_point(port_a, ra) or a.anchor(rb.center(), ra)
        pb = b.port_point(port_b, rb) or b.anchor(ra.center(), rb)
        return pa, pb

    def mark_ports(self, link, used: bool) -> None:
        """One cable's two ports, used or free again (an added or removed cable)."""
        devices = self._scene.devices
        for end in (link.a, link.b):
            device, port = split_endpoint(end)
            item, index = devices.get(device), port_index(port)
            if item is not None and index is not None:
                ports = set(item.ports.used)  # a copy: alike devices share one frozenset (scene_plan.py)
                (ports.add if used else ports.discard)(index)
                item.ports.used = frozenset(ports)
                item.ports.update()

    def follow_device(self, device_id: str) -> None:
        """A device moved: the lines of the bundles it ends follow it."""
        layer = self._scene.link_layer
        for key in self.device_bundles.get(device_id, ()):
            row = layer.index.get(key)
            if row is not None and row not in layer.bundles.empty:
                pa, pb = self.ends(key)
                layer.set_ends(row, pa, pb)  # (each paints its own line's part again)
        layer.rebound(QRectF())  # the bounds follow; nothing else to paint (the whole: ~30 ms at 131k GPUs)

    def refresh(self, key) -> None:
        """A bundle gained or lost cables."""
        if not self.refresh_in_place(key):
            self.rebuild()

    def refresh_in_place(self, key) -> bool:
        """A bundle gained or lost cables: updated in its row when it keeps one; False when every bundle
        must be planned anew (a bundle that comes or goes: a cable added where no bundle was, a
        bundle's last cable removed), which is left to the caller, once for the whole edit. Such a
        bundle is not first looked for among every cable (0.7 s at 131k GPUs)."""
        scene = self._scene
        layer = scene.link_layer
        row = layer.index.get(key)
        old = self.bundles.get(key)
        doc = scene.doc
        self.version += 1
        self.aggregates_stale = True
        if row is None or old is None or all(doc.find("links", i) is None for i in old.link_ids):
            return False
        links = [l for l in doc.links if self.bundle_key(l) == key]
        if not links:
            return False
        bundle = self._make_bundle_data(key, links)  # the same bundle, other cables: updated in place
        self.bundles[key] = bundle
        layer.bundles[row] = bundle
        layer.lines.gbps[row] = bundle.total_gbps
        layer.update()
        return True

    def apply_link_edits(self, edits) -> bool:
        """Cables added and removed, in order: each (action, link, position in doc.links, bundle key or
        None), as the document announced them. Each bundle they touch is changed in its row: one whose
        last cable goes keeps its row, empty (an undo fills it again); a cable between two devices with
        no bundle appends a row. The link heat's positions (each bundle's links as places in doc.links)
        follow, every other cable's place moved once for all the edits (list_edits.py). O(changed rows)
        plus a few array passes: planning every bundle again held the window 1.1-1.4 s at 131k GPUs.
        False when that is needed anyway (the positions are not known, or the bundles do not hold what
        the edits say), left to the caller."""
        scene = self._scene
        layer, doc = scene.link_layer, scene.doc
        table = layer.bundles
        known = self.positions
        net = sum(1 if action == "added" else -1 for action, *_ in edits)
        if known is None or known[0] != self.version or known[1] + net != len(doc.links) \
                or len(known[3]) != len(table) + 1:
            return False
        members, starts = known[2], known[3]
        walked = self._walk_edits(edits, known[1], members, starts)
        if walked is None:
            return False
        places, gone, added_rows = walked
        rows = len(table) + len(added_rows)
        kept = np.delete(members, gone) if gone else members
        counts = np.zeros(rows, np.int64)
        counts[:len(table)] = np.diff(starts)
        if gone:
            np.subtract.at(counts, np.searchsorted(starts, gone, side="right") - 1, 1)
        kept_starts = np.concatenate([[0], np.cumsum(counts)])
        kept = places.moved(kept)  # every other cable's place, in one pass
        come = sorted((int(kept_starts[item.tag[0]] + np.searchsorted(
            kept[kept_starts[item.tag[0]]:kept_starts[item.tag[0] + 1]], position)), position, item.tag)
            for position, item in places.inserted() if item.tag is not None)
        ids: dict[int, list] = {}  # row -> its link ids after the edits, in the document's order
        gone_set = set(gone)
        for row in {int(r) for r in np.searchsorted(starts, gone, side="right") - 1} | {t[0] for _, _, t in come}:
            mine = []
            if row < len(table):
                s, e = int(starts[row]), int(starts[row + 1])
                stay = [i for i in range(s, e) if i not in gone_set]
                old_ids = self._link_ids(row)
                mine = list(zip(places.moved(members[stay]).tolist(), (old_ids[i - s] for i in stay)))
            mine += [(position, tag[1]) for _, position, tag in come if tag[0] == row]
            ids[row] = [link_id for _, link_id in sorted(mine)]
        for _, _, (row, _id) in come:
            counts[row] += 1
        members = np.insert(kept, [at for at, _, _ in come], [position for _, position, _ in come]) if come else kept
        starts = np.concatenate([[0], np.cumsum(counts)])
        links = {}
        known_devices = table.device_row()
        for key, row in added_rows.items():
            if not ids.get(row) or key[0] not in known_devices or key[1] not in known_devices:
                return False  # a bundle come and gone in one edit, or a device the table does not number
        for row, row_ids in ids.items():
            links[row] = [doc.find("links", i) for i in row_ids]
            if len(set(row_ids)) != len(row_ids) or any(l is None for l in links[row]):
                return False  # a repeated id or a cable gone again: not told apart here
        new_key = {row: key for key, row in added_rows.items()}
        for row in sorted(ids):
            self._set_row(row, links[row], new_key.get(row))
        self.version += 1  # which links each bundle holds changed (link heat rows, the legend's kinds)
        self.positions = (self.version, len(doc.links), members, starts)
        return True  # (each row changed painted its own part again)

    def _walk_edits(self, edits, link_count: int, members: np.ndarray, starts: np.ndarray):
        """The edits walked in order over the document's links: (places: where every link is now,
        gone: entries of `members` whose links the edits removed, added_rows: key -> row of a bundle the
        edits add, after the table's rows), or None where the bundles do not hold what the edits say."""
        layer = self._scene.link_layer
        table = layer.bundles
        places = ListEdits(link_count)  # the document's links as the edits change them
        gone: list[int] = []  # entries of `members` whose links the edits removed
        added_rows: dict = {}  # key -> row of a bundle the edits add (after the table's rows)
        for action, link, position, key in edits:
            if position is None:
                return None
            row = None if key is None else added_rows.get(key, layer.index.get(key))
            if action == "removed":
                place = places.remove(position)
                if place is None:
                    return None
                if key is None:
                    continue
                if row is None:
                    return None
                if isinstance(place, Inserted):  # a cable come and gone in these edits
                    if place.tag != (row, link.id):
                        return None
                    continue
                if row >= len(table):
                    return None
                at = starts[row] + np.flatnonzero(members[starts[row]:starts[row + 1]] == place)
                if len(at) != 1 or self._link_ids(row)[int(at[0] - starts[row])] != link.id:
                    return None
                gone.append(int(at[0]))
            else:
                if key is not None and row is None:
                    row = added_rows[key] = len(table) + len(added_rows)
                if not places.insert(position, Inserted(None if key is None else (row, link.id))):
                    return None
        return places, gone, added_rows

    def _link_ids(self, row: int) -> tuple:
        return self._scene.link_layer.bundles.link_ids(row)

    def _set_row(self, row: int, links: list, key=None) -> None:
        """One row's cables anew (`key`: a row to append, for a bundle that was not there)."""
        layer = self._scene.link_layer
        table = layer.bundles
        if key is not None:  # a new bundle: appended
            bundle = self._make_bundle_data(key, links)
            layer.append_row(bundle, *self.ends_of(bundle), self._aggregate_of(bundle))
            self._add_to_aggregate(key, bundle.total_gbps, bundle.kind)
            return
        old = table[row]
        was_empty = row in table.empty
        if not links:
            if not was_empty:
                layer.empty_row(row)
                self._add_to_aggregate(old.key, -old.total_gbps)
                layer.set_row_aggregate(row, -1)
            return
        bundle = self._make_bundle_data(old.key, links)
        layer.fill_row(row, bundle, *self.ends_of(bundle))
        if was_empty:
            aggregate = self._aggregate_of(bundle)
            layer.set_row_aggregate(row, aggregate)
        self._add_to_aggregate(old.key, bundle.total_gbps - (0.0 if was_empty else old.total_gbps),
                               None if bundle.kind == old.kind and not was_empty else bundle.kind)

    def ends_of(self, bundle: Bundle) -> tuple[QPointF, QPointF]:
        """Where a bundle's line ends (as `ends`, for a bundle not yet in its row)."""
        devices = self._scene.devices
        key = bundle.key
        a, b = devices[key[0]], devices[key[1]]
        ra, rb = a.mapRectToScene(a.rect()), b.mapRectToScene(b.rect())
        port_a, port_b = bundle.ports
        return (a.port_point(port_a, ra) or a.anchor(rb.center(), ra),
                b.port_point(port_b, rb) or b.anchor(ra.center(), rb))

    def _aggregate_of(self, bundle: Bundle) -> int:
        """The rack-to-rack line a bundle adds to, -1 for none (the aggregates are planned again when
        its racks have none yet)."""
        pair = self._rack_pair(bundle.key)
        row = self._aggregate_row.get(pair) if pair is not None and not self.aggregates_stale else None
        return -1 if row is None else row

    def refresh_values(self, key) -> None:
        """A bundle's cables changed values (speed, count, kind), not membership: its own links only
        (not a scan of all), its row in place, and the one rack-to-rack aggregate it adds to, not all of
        them."""
        scene = self._scene
        layer = scene.link_layer
        row = layer.index.get(key)
        old = self.bundles.get(key)
        links = [scene.doc.find("links", i) for i in old.link_ids] if old is not None else []
        if row is None or not links or any(l is None for l in links):
            self.refresh(key)
            return
        bundle = self._make_bundle_data(key, links)
        self.bundles[key] = bundle
        layer.bundles[row] = bundle
        layer.lines.gbps[row] = bundle.total_gbps
        kind_changed = bundle.kind != old.kind
        if kind_changed:  # its colour, the legend's kinds; which links each bundle holds stays
            layer.lines.kind[row] = KINDS.index(bundle.kind) if bundle.kind in KINDS else 0
            current = self.positions is not None and self.positions[0] == self.version
            self.version += 1
            if current:
                self.positions = (self.version, *self.positions[1:])
        layer.update()
        if not self.aggregates_stale and bundle.total_gbps != old.total_gbps:
            self._add_to_aggregate(key, bundle.total_gbps - old.total_gbps)
        if not self.aggregates_stale and kind_changed:
            self._aggregate_kind_follows(row, bundle.kind)

    def _aggregate_kind_follows(self, row: int, kind: str) -> None:
        """A bundle's new kind: its rack-to-rack line takes it when the bundle is the line's last (a
        line's colour is its last bundle's kind, scene_plan.plan_aggregates), in place (planning every
        line again held the window ~0.3 s at 131k GPUs)."""
        layer = self._scene.link_layer
        rows_of = layer.bundle_aggregate
        line = int(rows_of[row]) if row < len(rows_of) else -1
        if line < 0 or line >= len(layer.aggregates.kind):
            return
        if int(np.flatnonzero(rows_of == line)[-1]) == row:
            layer.aggregates.kind[line] = KINDS.index(kind) if kind in KINDS else 0
            layer.update()

    def _rack_of(self, device_id: str) -> str | None:
        item = self._scene.devices.get(device_id)
        if item is None:
            return self.gone.get(device_id)
        parent = item.parentItem() if item else None
        return parent.data(ID_ROLE) if parent is not None else None

    def _rack_pair(self, key) -> tuple[str, str] | None:
        ra, rb = self._rack_of(key[0]), self._rack_of(key[1])
        if ra is None or rb is None or ra == rb:
            return None
        return (ra, rb) if ra <= rb else (rb, ra)

    def _add_to_aggregate(self, key, delta_gbps: float, kind: str | None = None) -> None:
        """A bundle's speed changed by `delta_gbps` (`kind`: its kind, when it changed or it came);
        a rack pair's line that would come, go or change kind: the aggregates planned again."""
        pair = self._rack_pair(key)
        if pair is None:
            return
        row = self._aggregate_row.get(pair)
        if row is None:
            self.aggregates_stale = True
            return
        self._aggregate_gbps[pair] += delta_gbps
        total = self._aggregate_gbps[pair]
        layer = self._scene.link_layer
        if total <= 0 or (kind is not None and row < len(layer.aggregates.kind)
                          and layer.aggregates.kind[row] != (KINDS.index(kind) if kind in KINDS else 0)):
            self.aggregates_stale = True  # its last bundle gone, or the pair's colour (its last bundle's kind)
            return
        layer = self._scene.link_layer
        layer.aggregate_tips[row] = f"racks {pair[0]} - {pair[1]}: {total / 1000:g} Tb/s (zoom in for the cables)"
        layer.set_aggregate_gbps(row, total / 8)

    def rebuild_aggregates(self, boxes: DeviceBoxes | None = None) -> None:
        """Rack-to-rack lines for the zoomed-out view: one per pair of racks that share cables. `boxes`:
        the device items' boxes, when the caller has them (nothing moved since)."""
        scene = self._scene
        rects = [item.mapRectToScene(item.rect()) for item in scene.racks.values()]
        self.set_aggregates(plan_aggregates(scene.link_layer.bundles, boxes or self.device_boxes(),
                                            [(r.x(), r.y(), r.width(), r.height()) for r in rects]))

    def set_aggregates(self, plan) -> None:
        layer = self._scene.link_layer
        layer.bundle_aggregate = plan.bundle_aggregate
        layer.set_aggregates(plan.a, plan.b, plan.kinds, plan.gbps, plan.tips, plan.qlines, plan.box)
        self._aggregate_row = plan.row  # for a bundle's change of speed
        self._aggregate_gbps = plan.total_gbps
        self.aggregates_stale = False


class BundlesByKey:
    """scene.cables.bundles: bundle key -> Bundle, read through the link layer's index (295k bundles at 131k
    GPUs: one dict of them, not two)."""

    def __init__(self, scene):
        self._scene = scene

    def _layer(self):
        return self._scene.link_layer

    def get(self, key, default=None):
        layer = self._layer()
        row = layer.index.get(key)
        return default if row is None else layer.bundles[row]

    def __getitem__(self, key):
        layer = self._layer()
        return layer.bundles[layer.index[key]]

    def __setitem__(self, key, bundle) -> None:
        layer = self._layer()
        layer.bundles[layer.index[key]] = bundle

    def __contains__(self, key) -> bool:
        return key in self._layer().index

    def __iter__(self):
        return iter(self._layer().index)

    def __len__(self) -> int:
        return len(self._layer().index)

    def keys(self):
        return self._layer().index.keys()

    def values(self):
        return list(self._layer().bundles)

    def items(self):
        return [(bundle.key, bundle) for bundle in self._layer().bundles]
