"""The cables on the canvas: one line per bundle of cables between two devices (the link layer's
rows), its ends on the devices' ports, and the rack-to-rack aggregates of the zoomed-out view; kept in
step with the design's links (a mixin of CanvasScene)."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF

from ...core.model import Link
from ...core.model.elements import split_endpoint
from .items import ID_ROLE, port_index
from .links import Bundle
from .scene_plan import DeviceBoxes, plan_aggregates, plan_bundles


class SceneCables:
    def _bundle_key(self, link: Link) -> tuple[str, str] | None:
        a, _ = split_endpoint(link.a)
        b, _ = split_endpoint(link.b)
        if a not in self.devices or b not in self.devices or a == b:
            return None
        return (a, b) if a <= b else (b, a)

    def _device_boxes(self) -> DeviceBoxes:
        """Every device item's box in the scene, for scene_plan (an edit plans from the items)."""
        rack_row = {rack_id: i for i, rack_id in enumerate(self.racks)}
        ids, boxes, ports, racks = [], [], [], []
        for device_id, item in self.devices.items():
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
                                                                for item in self.devices.values()], bool),
                           rack, list(self.racks))

    def _rebuild_bundles(self) -> None:
        lp = plan_bundles(self.doc.links, self._device_boxes())
        self.device_bundles = lp.device_bundles
        self.link_layer.set_bundles(lp.bundles, lp.a, lp.b, lp.row_of, lp.kinds, lp.gbps)
        for device_id, item in self.devices.items():  # each device's ports with a cable (drawn filled)
            ports = lp.used_ports.get(device_id, frozenset())
            if ports != item.ports.used:
                item.ports.used = ports
                item.ports.update()
        self._bundles_version += 1  # which links each bundle holds changed (link heat rows)
        self._positions = (self._bundles_version, len(self.doc.links), lp.members, lp.starts)
        self._aggregates_stale = True

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

    def _ends(self, key, rects: dict | None = None) -> tuple[QPointF, QPointF]:
        """Where a bundle's line ends: on the port its first cable uses (so a device's cables fan out
        from their own ports), or on the box's edge facing the other end for a port it does not draw."""
        a, b = self.devices[key[0]], self.devices[key[1]]
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

    def _mark_ports(self, link, used: bool) -> None:
        """One cable's two ports, used or free again (an added or removed cable)."""
        for end in (link.a, link.b):
            device, port = split_endpoint(end)
            item, index = self.devices.get(device), port_index(port)
            if item is not None and index is not None:
                ports = set(item.ports.used)  # a copy: alike devices share one frozenset (scene_plan.py)
                (ports.add if used else ports.discard)(index)
                item.ports.used = frozenset(ports)
                item.ports.update()

    def _place_bundle(self, key) -> None:
        row = self.link_layer.index.get(key)
        if row is not None:
            pa, pb = self._ends(key)
            self.link_layer.set_ends(row, pa, pb)

    def _refresh_bundle(self, key) -> None:
        links = [l for l in self.doc.links if self._bundle_key(l) == key]
        row = self.link_layer.index.get(key)
        self._bundles_version += 1
        if links and row is not None:  # the same bundle, other cables: update in place
            bundle = self._make_bundle_data(key, links)
            self.bundles[key] = bundle
            self.link_layer.bundles[row] = bundle
            self.link_layer.lines.gbps[row] = bundle.total_gbps
            self.link_layer.update()
        else:
            self._rebuild_bundles()
        self._aggregates_stale = True

    def _refresh_bundle_values(self, key) -> None:
        """A bundle's cables changed values, not membership: its own links only (not a scan of all),
        and the one rack-to-rack aggregate it adds to, not all of them."""
        row = self.link_layer.index.get(key)
        old = self.bundles.get(key)
        links = [self.doc.find("links", i) for i in old.link_ids] if old is not None else []
        if row is None or not links or any(l is None for l in links):
            self._refresh_bundle(key)
            return
        bundle = self._make_bundle_data(key, links)
        self.bundles[key] = bundle
        self.link_layer.bundles[row] = bundle
        self.link_layer.lines.gbps[row] = bundle.total_gbps
        if bundle.kind != old.kind:
            self._refresh_bundle(key)  # its colour and its aggregate's kind: the general path
            return
        self.link_layer.update()
        if not self._aggregates_stale and bundle.total_gbps != old.total_gbps:
            self._add_to_aggregate(key, bundle.total_gbps - old.total_gbps)

    def _add_to_aggregate(self, key, delta_gbps: float) -> None:
        ra, rb = self._rack_of(key[0]), self._rack_of(key[1])
        if ra is None or rb is None or ra == rb:
            return
        pair = (ra, rb) if ra <= rb else (rb, ra)
        row = self._aggregate_row.get(pair)
        if row is None:
            self._aggregates_stale = True
            return
        self._aggregate_gbps[pair] += delta_gbps
        total = self._aggregate_gbps[pair]
        self.link_layer.aggregates.gbps[row] = total / 8
        self.link_layer.aggregate_tips[row] = (f"racks {pair[0]} - {pair[1]}: {total / 1000:g} Tb/s "
                                               "(zoom in for the cables)")
        self.link_layer.update()

    def _rebuild_aggregates(self) -> None:
        """Rack-to-rack lines for the zoomed-out view: one per pair of racks that share cables."""
        rects = [item.mapRectToScene(item.rect()) for item in self.racks.values()]
        self._set_aggregates(plan_aggregates(self.link_layer.bundles, self._device_boxes(),
                                             [(r.x(), r.y(), r.width(), r.height()) for r in rects]))

    def _set_aggregates(self, plan) -> None:
        self.link_layer.bundle_aggregate = plan.bundle_aggregate
        self.link_layer.set_aggregates(plan.a, plan.b, plan.kinds, plan.gbps, plan.tips, plan.qlines)
        self._aggregate_row = plan.row  # for a bundle's change of speed
        self._aggregate_gbps = plan.total_gbps
        self._aggregates_stale = False


class BundlesByKey:
    """scene.bundles: bundle key -> Bundle, read through the link layer's index (295k bundles at 131k
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
