"""The scene mirrors the document: one item per rack, server and switch, one line per
bundle of cables between two devices, and rack-to-rack aggregates for the zoomed-out view.

It listens to the document's changes and updates only what changed; a whole-document
change (open, generate, undo of a generate) rebuilds it. Gestures come back as requests
(`drop_part`, `request_link`, `finish_drag`) that turn into undo commands.
"""
from __future__ import annotations

import math
import time
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene, QToolTip
from shiboken6 import isValid

from ...core.analysis.link_load import bundle_text
from ...core.model import Link, Rack
from ...core.model.elements import split_endpoint
from ...core.model.geometry import RACK_WIDTH_PX, UNIT_HEIGHT_PX, rack_height_px
from ..document import commands
from . import heat as link_heat
from . import style
from .box_layer import LOD_BOXES, BoxLayer
from .items import ID_ROLE, KIND_ROLE, DeviceItem, DetailLayer, RackItem, port_index
from .links import Bundle, LinkLayer
from .scene_plan import STAGED_ITEMS, DeviceBoxes, DeviceBundles, plan_aggregates, plan_bundles, plan_scene


class _Spot:
    """Something to centre the view on that is not an item (a cable bundle)."""

    def __init__(self, rect: QRectF):
        self._rect = rect

    def sceneBoundingRect(self) -> QRectF:
        return self._rect

MARGIN_PX = 400.0
_NOWHERE = QRectF(-1e12, -1e12, 1.0, 1.0)  # a query of the index that finds nothing
# A design with more than STAGED_ITEMS racks, servers and switches gets its items in slices of
# BUILD_SLICE_S between which the window paints and answers: its racks' fills and cables (planned off
# the UI thread, scene_plan.py) show at once, the boxes fill in (131k GPUs: 26k boxes, ~6 s of making).
BUILD_SLICE_S = 0.012
REVEAL_S = 0.5  # made items show a batch at a time: one repaint of the canvas per batch, not per slice


# fields of racks, servers and switches whose change moves a tray or changes which trays share NVLink
DOMAIN_FIELDS = ("rack", "slot", "height_units", "nvlink_domain", "accelerator_count", "units")


@dataclass
class _EditEffects:
    """What one edit (a batch of changes) needs the scene to redo once its items are updated."""

    domains: bool = False  # NVLink domains
    racks: bool = False  # a rack came, went or changed: the rack fills
    items: bool = False  # racks or devices changed: zoom thresholds, the box layer, the extent
    other: bool = False  # the layout or another part of the design changed: the extent measured again
    rebuild_links: bool = False  # which devices the cables join changed: every bundle anew
    links_touched: set = field(default_factory=set)  # bundles that gained or lost cables
    values_touched: set = field(default_factory=set)  # bundles whose cables changed speed, kind or count


class CanvasScene(QGraphicsScene):
    message = Signal(str)  # what a refused gesture should tell the user
    aboutToRebuild = Signal()  # every item is about to be deleted (a tool must let go of its own)
    built = Signal()  # a staged build made its last item (job marks, the overview catch up)
    buildProgress = Signal(int, int)  # items made so far, of how many (a staged build)
    heatChanged = Signal()  # the link heat shown changed (its result or its view): the logical view follows

    def __init__(self, qdoc, parent=None):
        super().__init__(parent)
        self.qdoc = qdoc
        self.racks: dict[str, RackItem] = {}
        self.devices: dict[str, DeviceItem] = {}
        self.bundles = _BundlesByKey(self)  # bundle key -> Bundle (the link layer's rows, read by key)
        self.domain_bands: list = []  # NVLink domains (domains.py)
        self.link_layer = LinkLayer()
        self.detail_layer = DetailLayer()  # every device's name and port squares (items.py)
        self.device_bundles = DeviceBundles()  # device id -> the keys of the bundles it ends
        self.lod_links = True
        self.lod_labels = True
        self.lod_ports = False
        self._scale = 1.0  # the view's zoom, for the level of detail of items added later
        self._lod_items = None  # (labels, their minimum zoom, shown, ports, ...) for apply_lod
        self._rack_fills = None  # scene rects of the racks, painted in the background
        self._drag_start: dict[str, QPointF] = {}
        self._aggregates_stale = True
        self._aggregate_row: dict[tuple[str, str], int] = {}
        self._aggregate_gbps: dict[tuple[str, str], float] = {}
        self._bundles_version = 0  # counts changes of which links the bundles hold
        self._positions = None  # (bundles version, links, members, starts): each bundle's link positions
        self.building = False  # a staged build is making items (finish_build completes it at once)
        self._build_work = None
        self._staged_lod = None  # _lod_source's lists, gathered by a staged build as it makes the items
        self._hidden: list = []  # items a staged build made and has not shown yet
        self._revealed_at = 0.0
        self._build_timer = QTimer(self, singleShot=True, interval=0, timeout=self._build_step)
        self._plan_ready = None  # a ScenePlan made off the UI thread for the design about to come
        self._layout_rect: QRectF | None = None  # what is drawn (itemsBoundingRect costs 0.3 s at 131k)
        self.box_layer: BoxLayer | None = None  # a big design's boxes when zoomed far out (box_layer.py)
        self._far = False  # its racks are transparent, the box layer draws them
        self.setBackgroundBrush(style.BACKGROUND)
        self._effects: _EditEffects | None = None  # what the edit being mirrored needs redone (_after_edit)
        qdoc.racksChanged.connect(self._on_racks)
        qdoc.devicesChanged.connect(self._on_devices)
        qdoc.linksChanged.connect(self._on_links)
        qdoc.layoutChanged.connect(self._on_layout)
        qdoc.changed.connect(self._after_edit)
        qdoc.replaced.connect(self.rebuild)
        self.selectionChanged.connect(self._selection_to_box_layer)
        self.rebuild()

    @property
    def doc(self):
        return self.qdoc.doc

    # ---- building -----------------------------------------------------------------------
    def use_plan(self, plan) -> None:
        """The plan of the design about to replace the open one (made off the UI thread); the next
        rebuild uses it if it is for that design's very spec."""
        self._plan_ready = plan

    def rebuild(self) -> None:
        plan, self._plan_ready = self._plan_ready, None
        self._stop_build()
        self.aboutToRebuild.emit()
        self.box_layer, self._far = None, False  # deleted with the items (clear() announces a selection change)
        self.clear()
        self._layout_rect = None
        self.domain_bands = []  # deleted with the racks
        self.racks.clear()
        self.devices.clear()
        self.device_bundles.clear()
        self.link_layer = LinkLayer()
        self.addItem(self.link_layer)
        self.detail_layer = DetailLayer()
        self.addItem(self.detail_layer)
        self._lod_items = None
        self._racks_changed()
        doc = self.doc
        self.setItemIndexMethod(QGraphicsScene.NoIndex)  # bulk insert, then index once
        if len(doc.racks) + len(doc.nodes) + len(doc.switches) > STAGED_ITEMS:
            self.box_layer = BoxLayer(self)
            self.addItem(self.box_layer)
            if plan is None or plan.spec is not doc.spec:
                plan = plan_scene(doc)
            if plan is not None:
                self._start_staged(plan)
                return
        for rack in doc.racks:
            self._add_rack(rack)
        for node in doc.nodes:
            self._add_device(node, "node")
        for switch in doc.switches:
            self._add_device(switch, "switch")
        self._rebuild_bundles()
        self._rebuild_domains()
        if self.box_layer is not None:
            self.box_layer.devices_changed()
        self.setItemIndexMethod(QGraphicsScene.BspTreeIndex)
        self._update_scene_rect()
        self.apply_lod(None)

    def _start_staged(self, plan) -> None:
        """Cables, aggregates and rack fills from the plan now (the first paint shows the design);
        racks, servers and switches as items in slices (_build_step)."""
        doc = self.doc
        self.building = True
        left, top, right, bottom = plan.layout_rect
        self._set_layout_rect(QRectF(QPointF(left, top), QPointF(right, bottom)))
        self._rack_fills = [QRectF(*r) for r in plan.rack_rects]
        boxes = plan.boxes
        if boxes.keys is not None:  # the whole design at the first paint, when zoomed far out
            self.box_layer.set_boxes(boxes.ids, np.column_stack([boxes.left, boxes.top, boxes.width, boxes.height]),
                                     boxes.keys, boxes.grouped, boxes.index)
        else:
            self.box_layer.devices_changed()
        lp = plan.links
        self.device_bundles = lp.device_bundles
        self.link_layer.set_bundles(lp.bundles, lp.a, lp.b, lp.row_of, lp.kinds, lp.gbps)
        self._bundles_version += 1
        self._positions = (self._bundles_version, len(doc.links), lp.members, lp.starts)
        self._set_aggregates(plan.aggregates)
        self.lod_links = False  # zoomed out until the view says otherwise (its fit follows)
        self.link_layer.show_individual = False
        self.setSceneRect(self._layout_rect.adjusted(-MARGIN_PX, -MARGIN_PX, MARGIN_PX, MARGIN_PX))
        # Indexed from the start, at the depth the finished canvas needs: each slice's items join the
        # tree at the next paint, a few ms each, where indexing all ~70k at the end (or letting Qt
        # regrow the tree as the count doubles) held the window ~0.45 s at 131k GPUs.
        self.setItemIndexMethod(QGraphicsScene.BspTreeIndex)
        self.setBspTreeDepth(bsp_depth(_items_expected(doc)))
        self._build_work = self._make_items(doc, lp.used_ports)
        self._hidden = []
        self._revealed_at = time.perf_counter()
        self._build_timer.start()

    def _make_items(self, doc, used_ports: dict):
        """Rack by rack, its servers and switches with it; then the loose ones. Yields after each rack."""
        racked: dict = defaultdict(list)
        rack_ids = {r.id for r in doc.racks}
        loose = []
        for kind, elements in (("node", doc.nodes), ("switch", doc.switches)):
            for e in elements:
                (racked[e.rack] if e.rack in rack_ids else loose).append((e, kind))
        total, made = len(doc.racks) + len(doc.nodes) + len(doc.switches), 0
        scale = self._scale
        # what _apply_item_lod needs of each item, gathered as it is made (a pass over 26k items: 0.4 s)
        # (+ whether each rack's and device's name was made shown: no isVisible() of 30k names at the end)
        lod = self._staged_lod = ([], [], [], [], [], [], [], ([], []))
        for rack in list(doc.racks):
            item = RackItem(rack)
            item.setVisible(False)  # until its batch shows (_reveal), its servers and switches with it
            if self._far:
                item.setOpacity(0.0)  # the box layer draws it (box_layer.py)
            shown = item.label_min_scale <= scale
            item.label.setVisible(shown)  # thousands of names unseen when zoomed out
            lod[7][0].append(shown)
            lod[0].append(item.label)
            lod[1].append(item.label_min_scale)
            item.on_moved = self._rack_moved
            self.addItem(item)
            self.racks[rack.id] = item
            self._hidden.append(item)
            made += 1
            for element, kind in racked.get(rack.id, ()):
                self._add_staged_device(element, kind, used_ports, scale)
                made += 1
            self._made = (made, total)
            yield
        for element, kind in loose:
            self._add_staged_device(element, kind, used_ports, scale)
            self._hidden.append(self.devices[element.id])
            made += 1
            self._made = (made, total)
            yield
        # the last steps, a slice each (each is ~50 ms at 131k GPUs)
        self._reveal()
        yield
        self._rebuild_domains()
        yield
        self._lod_items = None
        self._apply_item_lod(self._scale, made=True)  # every item's name and ports by the zoom now
        self._staged_lod = None
        yield

    def _add_staged_device(self, element, kind: str, used_ports: dict, scale: float) -> None:
        item = DeviceItem(element, kind)
        lod = self._staged_lod
        lod[2].append(item.label)
        lod[3].append(item.label_min_scale)
        lod[4].append((kind, round(element.height_units * UNIT_HEIGHT_PX - 0.8, 2)))  # the box's height
        lod[5].append(item.ports)
        lod[6].append(item.ports_min_scale)
        if element.rack not in self.racks:
            item.setVisible(False)  # a loose one: until its batch shows
            if self._far:
                item.setOpacity(0.0)
        shown = item.label_min_scale <= scale
        item.label.setVisible(shown)
        lod[7][1].append(shown)
        ports = used_ports.get(element.id)
        if ports:
            item.ports.used = ports
        self.devices[element.id] = item
        self._place_device(item, element)
        item.on_moved = self._device_moved  # after placing: its cables' ends are planned already

    def _build_step(self) -> None:
        work = self._build_work
        if work is None:
            return
        deadline = time.perf_counter() + BUILD_SLICE_S
        for _ in work:
            now = time.perf_counter()
            if now >= deadline:
                if now - self._revealed_at >= REVEAL_S:
                    self._reveal()
                # this slice's items into the index now (a query does it), not all ~70k at the next paint
                # (0.3-0.5 s: zoomed far out nothing repaints while they come, see box_layer.py)
                self.items(_NOWHERE)
                self.buildProgress.emit(*self._made)
                self._build_timer.start()
                return
        self._finish_staged()

    def _reveal(self) -> None:
        for item in self._hidden:
            item.setVisible(True)
        self._hidden = []
        self._revealed_at = time.perf_counter()

    def finish_build(self) -> None:
        """Make the items a staged build has not made yet, now (an edit, a search or a selection needs
        them all)."""
        work = self._build_work
        if work is None:
            return
        for _ in work:
            pass
        self._finish_staged()

    def _finish_staged(self) -> None:
        self._build_timer.stop()
        self._build_work = None
        self.building = False
        self.buildProgress.emit(*getattr(self, "_made", (0, 0)))
        self.built.emit()

    def _stop_build(self) -> None:
        self._build_timer.stop()
        self._build_work = None
        self._staged_lod = None
        self._hidden = []
        self.building = False

    def layout_rect(self) -> QRectF:
        """What is drawn (the view's fit, the overview): kept until the next change."""
        if self._layout_rect is None:
            self.detail_layer.set_bounds(QRectF())  # not a measure of itself (the rect would never shrink)
            self._set_layout_rect(self.itemsBoundingRect())
        return QRectF(self._layout_rect)

    def _set_layout_rect(self, rect: QRectF) -> None:
        self._layout_rect = rect
        # the layout itself: the layer adds nothing to what an export or a fit measures (a device dragged
        # out of it shows its name and ports again once dropped, when the layout is measured anew)
        self.detail_layer.set_bounds(rect)

    def _add_rack(self, rack: Rack) -> RackItem:
        item = RackItem(rack)
        if self._far:
            item.setOpacity(0.0)
        item.on_moved = self._rack_moved
        self.addItem(item)
        self.racks[rack.id] = item
        return item

    def _add_device(self, element, kind: str) -> DeviceItem:
        item = DeviceItem(element, kind)
        item.on_moved = self._device_moved
        self.devices[element.id] = item
        self._place_device(item, element)
        return item

    def _place_device(self, item: DeviceItem, element) -> None:
        rack_item = self.racks.get(element.rack) if element.rack else None
        if rack_item is not None:
            if item.parentItem() is not rack_item:
                item.setParentItem(rack_item)  # joins the scene with its rack
                item.setOpacity(1.0)  # its rack's says
            slot = element.slot or 0
            y = rack_height_px(rack_item.units) - (slot + element.height_units) * UNIT_HEIGHT_PX
            item.setPos(0, y)
        else:
            if item.parentItem() is not None:
                item.setParentItem(None)
            if item.scene() is None:
                self.addItem(item)
            item.setOpacity(0.0 if self._far else 1.0)  # loose: drawn by the box layer when far out
            pos = self.doc.spec.layout.get("positions", {}).get(element.id)
            if pos is None:
                pos = self._loose_position(element.id)
            item.setPos(pos[0], pos[1])

    def _loose_position(self, element_id: str) -> tuple[float, float]:
        rect = self.itemsBoundingRect()
        index = sum(1 for e in list(self.doc.nodes) + list(self.doc.switches) if e.rack is None)
        return (rect.left() + (index % 20) * (RACK_WIDTH_PX + 12), rect.bottom() + 60)

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

    def _rebuild_domains(self) -> None:
        """The NVLink domain bands, from scratch (one pass over the servers and switches)."""
        from .domains import build_domain_bands

        for band in self.domain_bands:
            if band.scene() is self:
                self.removeItem(band)
        self.domain_bands = build_domain_bands(self.doc, self.racks)
        if self.box_layer is not None:
            self.box_layer.bands_changed()
        for band in self.domain_bands:
            band.label.setVisible(band.label_fits and band.label_min_scale <= self._scale)
        self._lod_items = None

    def _rack_of(self, device_id: str) -> str | None:
        item = self.devices.get(device_id)
        parent = item.parentItem() if item else None
        return parent.data(ID_ROLE) if parent is not None else None

    def _update_scene_rect(self) -> None:
        rect = self.layout_rect()
        if rect.isNull():
            rect = QRectF(0, 0, 1600, 1000)
        self.setSceneRect(rect.adjusted(-MARGIN_PX, -MARGIN_PX, MARGIN_PX, MARGIN_PX))

    # ---- level of detail ----------------------------------------------------------------
    def apply_lod(self, scale: float | None, visible_fraction: float = 1.0) -> None:
        """Show what is legible at this zoom; hide the rest (hidden items cost nothing).

        Individual cables are drawn only when few enough of them are in view (the scene's
        bundle count times the share of the layout on screen): a 16k-GPU fabric shows
        rack-to-rack aggregates until one zooms into a pod. Each name shows from the zoom where
        its letters are MIN_TEXT_PX tall, each device's ports from where a port is MIN_PORT_PX
        wide; a name sits below its device's ports, so the two never overlap."""
        if scale is not None:
            self._scale = scale
        in_view = len(self.bundles) * min(1.0, visible_fraction)
        links = True if scale is None else (scale >= style.LOD_LINKS and in_view <= style.MAX_DRAWN_BUNDLES)
        if links != self.lod_links or (not links and self._aggregates_stale):
            self.lod_links = links
            if not links and self._aggregates_stale:
                self._rebuild_aggregates()
            self.link_layer.show_individual = links
            self.link_layer.update()
        self._apply_box_lod()
        self._apply_item_lod(self._scale)

    def _selection_to_box_layer(self) -> None:
        layer = self.box_layer
        if layer is not None and isValid(layer):  # (a scene being deleted deletes its items first)
            layer.selection_changed()

    def _apply_box_lod(self) -> None:
        """Zoomed far out, a big design's racks (their servers and switches with them) turn transparent and
        the box layer draws them: Qt skips a transparent item and its children when painting (60-100 ms a
        repaint saved at 131k GPUs). Qt's hit tests skip them too, so a click, a rubber band, a tooltip,
        a drop or the link tool find them through the layer's boxes (box_layer.items_at, items_in)."""
        far = self.box_layer is not None and self._scale < LOD_BOXES
        if far == self._far:
            return
        self._far = far
        opacity = 0.0 if far else 1.0
        for item in self.racks.values():
            item.setOpacity(opacity)
        for item in self.devices.values():
            if item.parentItem() is None:
                item.setOpacity(opacity)
        self.box_layer.setVisible(far)
        # the rack-to-rack lines too, while far out (24k of them at 131k GPUs): redrawn when they change
        self.link_layer.setCacheMode(QGraphicsItem.DeviceCoordinateCache if far else QGraphicsItem.NoCache)

    def _apply_item_lod(self, scale: float, made: bool = False) -> None:
        """Names and ports on or off by each item's own threshold; only the ones that change are touched
        (a 16k-GPU canvas has thousands)."""
        if self.building and not made:
            return  # each item got its names' and ports' visibility as it was made; all of them at the end
        lod = self._lod_items
        if lod is None:
            source, self._staged_lod = self._staged_lod or self._lod_source(), None
            rack_labels, rack_mins, device_labels, device_mins, groups, ports, ports_min = source[:7]
            bands = [band for band in self.domain_bands if band.label_fits]
            # Alike items show their names together: every rack, every server of one height, every
            # 1U switch... from the zoom where the smallest of them reads (not node0-node9 before node10).
            group_min: dict = defaultdict(float)
            for group, minimum in zip(groups, device_mins):
                if minimum > group_min[group]:
                    group_min[group] = minimum
            racks_min = max(rack_mins, default=0.0)
            labels = rack_labels + device_labels + [band.label for band in bands]
            label_min = ([racks_min] * len(rack_labels) + [group_min[g] for g in groups]
                         + [band.label_min_scale for band in bands])
            if len(source) > 7:  # a staged build's: names as made, every port hidden (DeviceItem makes them so)
                label_shown = np.array(source[7][0] + source[7][1] + [band.label.isVisible() for band in bands], bool)
                ports_shown = np.zeros(len(ports), bool)
            else:
                label_shown = np.array([l.isVisible() for l in labels], bool)
                ports_shown = np.array([p.isVisible() for p in ports], bool)
            names = slice(len(rack_labels), len(rack_labels) + len(device_labels))  # the devices' own
            lod = self._lod_items = (labels, np.array(label_min, float), label_shown,
                                     ports, np.array(ports_min, float), ports_shown, names)
        labels, label_min, label_shown, ports, ports_min, ports_shown, names = lod
        for items, minimum, shown in ((labels, label_min, label_shown), (ports, ports_min, ports_shown)):
            wanted = minimum <= scale
            for i in np.flatnonzero(wanted != shown).tolist():
                items[i].setVisible(bool(wanted[i]))
            shown[:] = wanted
        self.lod_labels = bool(label_shown.any())
        self.lod_ports = bool(ports_shown.any())
        # the layer draws the devices' names and ports: hidden when none shows (its paint walks the racks in view)
        self.detail_layer.setVisible(self.lod_ports or bool(label_shown[names].any()))

    def _lod_source(self) -> tuple:
        """(rack names, their zoom thresholds, device names, theirs, each device's group, ports, theirs)."""
        racks, devices = self.racks.values(), self.devices.values()
        return ([item.label for item in racks], [item.label_min_scale for item in racks],
                [item.label for item in devices], [item.label_min_scale for item in devices],
                [(item.kind, round(item.rect().height(), 2)) for item in devices],
                [item.ports for item in devices], [item.ports_min_scale for item in devices])

    def _lod_changed(self) -> None:
        """Items came, went or changed their names: thresholds again at the next zoom (and now)."""
        self._lod_items = None
        if self.views():
            self._apply_item_lod(self._scale)
        self._staged_lod = None  # used by now, or stale

    # ---- mirroring the document ---------------------------------------------------------
    # One handler per kind of change (QtDocument emits racksChanged, devicesChanged, linksChanged
    # and layoutChanged, in that order, then changed with all of them); each updates its items and
    # notes what the edit as a whole needs redone, which _after_edit does once.
    def _edit_effects(self) -> _EditEffects:
        if self._effects is None:
            self.finish_build()  # the items the changes apply to
            self._effects = _EditEffects()
        return self._effects

    def _on_racks(self, changes) -> None:
        effects = self._edit_effects()
        effects.racks = effects.items = True
        for c in changes:
            if c.action == "added":
                self._add_rack(c.new)
                for e in list(self.doc.nodes) + list(self.doc.switches):
                    if e.rack == c.id and e.id in self.devices:
                        self._place_device(self.devices[e.id], e)
            elif c.action == "removed":
                item = self.racks.pop(c.id, None)
                if item is not None:
                    for child in item.childItems():
                        if isinstance(child, DeviceItem):
                            child.setParentItem(None)
                    self.removeItem(item)
            else:
                rack = self.doc.find("racks", c.id) if c.field != "id" else None
                if c.field == "id":
                    item = self.racks.pop(c.old)
                    item.setData(ID_ROLE, c.new)
                    self.racks[c.new] = item
                    rack = self.doc.find("racks", c.new)
                if rack is not None:
                    self.racks[rack.id].update_from(rack)
                    self._rack_moved(self.racks[rack.id])
                self._aggregates_stale = True
            if c.action != "changed" or c.field in DOMAIN_FIELDS:
                effects.domains = True

    def _on_devices(self, changes) -> None:
        effects = self._edit_effects()
        effects.items = True
        for c in changes:
            if c.action != "changed" or c.field in DOMAIN_FIELDS:
                effects.domains = True  # which trays share NVLink, or where they sit
            if c.action == "added":
                self._add_device(c.new, "node" if c.collection == "nodes" else "switch")
                effects.rebuild_links = True
            elif c.action == "removed":
                item = self.devices.pop(c.id, None)
                if item is not None:
                    self.removeItem(item)
                effects.rebuild_links = True
            else:
                if c.field == "id":
                    self.devices[c.new] = self.devices.pop(c.old)
                    self.devices[c.new].setData(ID_ROLE, c.new)
                    effects.rebuild_links = True
                element = self.doc.device(c.new if c.field == "id" else c.id)
                if element is not None:
                    item = self.devices[element.id]
                    item.update_from(element)
                    if c.field in ("rack", "slot", "height_units"):
                        self._place_device(item, element)
                        self._device_moved(item)
                        self._aggregates_stale = True

    def _on_links(self, changes) -> None:
        effects = self._edit_effects()
        for c in changes:
            link = c.new if c.action == "added" else c.old if c.action == "removed" else self.doc.find("links", c.id)
            if c.action in ("added", "removed") and link is not None:
                self._mark_ports(link, c.action == "added")
            if c.action == "changed" and c.field in ("a", "b", "id"):
                effects.rebuild_links = True
            elif link is not None:
                key = self._bundle_key(link)
                if key is not None:
                    (effects.values_touched if c.action == "changed" else effects.links_touched).add(key)

    def _on_layout(self, _changes) -> None:
        self._edit_effects().other = True
        for e in list(self.doc.nodes) + list(self.doc.switches):
            if e.rack is None and e.id in self.devices:
                self._place_device(self.devices[e.id], e)
                self._device_moved(self.devices[e.id])

    def _after_edit(self, changes) -> None:
        """What the edit as a whole needs redone, once: NVLink domains, rack fills, zoom thresholds,
        the cable bundles, the scene's extent. Nothing for the job's model and plan alone (nothing
        drawn here moves: a TP edit re-measured 16k GPUs' items)."""
        effects, self._effects = self._effects, None
        if effects is None:
            if all(c.collection in ("workload", "parallelism") for c in changes):
                return
            self.finish_build()
            effects = _EditEffects(other=True)  # jobs, calibration, ...: nothing drawn changes, measured again
        if effects.domains:
            self._rebuild_domains()
        if effects.racks:
            self._racks_changed()
        if effects.items:
            self._lod_changed()  # names, sizes or items changed: their zoom thresholds too
            if self.box_layer is not None:
                self.box_layer.devices_changed()
        if effects.rebuild_links:
            self._rebuild_bundles()
        else:
            for key in effects.links_touched:
                self._refresh_bundle(key)
            for key in effects.values_touched - effects.links_touched:
                self._refresh_bundle_values(key)
        if effects.rebuild_links or effects.links_touched or effects.items or effects.other:
            self._layout_rect = None
            self._update_scene_rect()  # (a cable's new speed moves nothing: the measure before stands)
        if not self.lod_links and self._aggregates_stale:
            self._rebuild_aggregates()

    # ---- link heat ----------------------------------------------------------------------
    heat_mode = link_heat.STEP  # what the heat measures (canvas/heat.py): share of the step, or busiest phase
    heat_result = None  # the result the heat shows
    heat_values: np.ndarray | None = None  # per link (doc.links order): the heat shown, 0..1

    def set_heat_mode(self, mode: str) -> None:
        """Colour by share of the step ("step") or by busiest phase ("phase"); the legend says which."""
        if mode not in link_heat.MODES:
            raise ValueError(f"unknown heat view {mode!r}: use one of {', '.join(link_heat.MODES)}")
        if mode == self.heat_mode:
            return
        self.heat_mode = mode
        self.show_heat(self.heat_result)
        for view in self.views():
            legend = getattr(view, "legend", None)
            if legend is not None:
                legend.relayout()

    def show_heat(self, result) -> None:
        """Colour every bundle by how busy its busiest cable was in the last evaluation (in the
        heat view chosen: share of the step, or of its busiest phase), outline the cables on the
        critical path, and add the load by traffic kind to the tooltips. None clears it."""
        layer = self.link_layer
        mode = self.heat_mode
        util = link_heat.values(result, mode) if result is not None else None
        jobs = link_heat.by_job(result) if util is not None else {}
        self.heat_result, self.heat_values = (result, util) if util is not None else (None, None)
        if util is None:
            layer.heat, layer.marked, layer.heat_tip = None, set(), None
            layer.update()
            self.heatChanged.emit()
            return
        rows_links, flat, starts, filled = self._heat_rows(len(util))
        heat = np.zeros(len(rows_links))
        if len(flat):  # the busiest cable of each bundle, in one numpy pass
            heat[filled] = np.maximum.reduceat(np.asarray(util, float)[flat], starts)
        layer.heat = np.clip(np.round(heat * 10), 0, 10).astype(np.int64)
        critical = link_heat.outlined(result, mode, len(util))
        if critical is not None:
            # every bundle holding a link on the critical path: a whole class, not one of 64 alike
            # (131k links at 131k GPUs: found per bundle in one numpy pass, as the heat)
            marked = np.zeros(len(rows_links), dtype=bool)
            if len(flat):
                marked[filled] = np.logical_or.reduceat(critical[flat], starts)
            layer.marked = set(np.flatnonzero(marked).tolist())
        else:
            hot = {l for b in result.bottlenecks[:3] for l in b.get("links", [])}
            hot_links = [self.doc.find("links", link) for link in hot]
            hot_keys = {self._bundle_key(link) for link in hot_links if link is not None}
            layer.marked = {layer.index[k] for k in hot_keys if k in layer.index}
        doc = self.doc

        def tip(row: int) -> str:  # the busiest cable's load, worded for its class (core/analysis/link_load.py)
            if not rows_links[row]:
                return ""
            busiest = max(rows_links[row], key=lambda i: float(util[i]))
            text = link_heat.describe(result, mode, busiest) + "\n" + bundle_text(result, doc, rows_links[row])
            if jobs:  # who uses the bundle's busiest cable
                shares = [(name, float(u[busiest])) for name, u in jobs.items() if float(u[busiest]) > 0]
                if shares:
                    text += "\nby job: " + ", ".join(f"{name} {share:.0%} of its step" for name, share in
                                                   sorted(shares, key=lambda kv: -kv[1]))
            return text

        layer.heat_tip = tip
        layer.update()
        self.heatChanged.emit()

    def _heat_rows(self, n_util: int):
        """Each bundle's link positions (kept while the cables and their order stay: a speed edit
        reuses them), flattened for numpy: (rows, flat positions, row starts, rows with links)."""
        key = (self.doc.lineage, self._bundles_version, len(self.doc.links), n_util)
        if getattr(self, "_heat_cache_key", None) != key:
            known = self._positions
            if known is not None and known[:2] == key[1:3]:  # as the last rebuild found them
                members, starts = known[2], known[3]
            else:
                position = {l.id: i for i, l in enumerate(self.doc.links)}
                bundles = self.link_layer.bundles
                rows = [[position[i] for i in bundles.link_ids(r) if i in position] for r in range(len(bundles))]
                members = np.array([p for r in rows for p in r], dtype=np.int64)
                starts = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int64)
            if len(members) and members.max() >= n_util:  # links the result does not cover
                kept = np.concatenate([[0], np.cumsum(members < n_util)])[starts]
                members = members[members < n_util]
                starts = kept.astype(np.int64)
            lengths = np.diff(starts)
            filled = np.flatnonzero(lengths)
            self._heat_cache = (_BundleRows(members, starts), members, starts[:-1][filled], filled)
            self._heat_cache_key = key
        return self._heat_cache

    # ---- following moves ----------------------------------------------------------------
    def drawBackground(self, painter, rect) -> None:  # exports and the overview (the view draws its own grid)
        super().drawBackground(painter, rect)
        self.draw_rack_fills(painter, rect)

    def draw_rack_fills(self, painter, rect: QRectF) -> None:
        """Rack insides, under the cables: a cable shows inside its rack up to its port, behind the
        other servers and switches (the rack items themselves have no brush)."""
        # once per change of the racks, not per paint (592 racks at 16k GPUs)
        boxes = [r for r in self.rack_rects() if r.intersects(rect)]
        if boxes:
            painter.setPen(Qt.NoPen)
            painter.setBrush(style.RACK_FILL)
            painter.drawRects(boxes)

    def _racks_changed(self) -> None:
        """Racks came, went, moved or changed size: their fills again."""
        self._rack_fills = None
        self.detail_layer.racks_changed()
        self.invalidate(QRectF(), QGraphicsScene.BackgroundLayer)
        if self.box_layer is not None:
            self.box_layer.racks_changed()

    def rack_rects(self) -> list:
        """Every rack's rectangle in the scene (its fill, its outline in the box layer)."""
        if self._rack_fills is None:
            self._rack_fills = [item.mapRectToScene(item.rect()) for item in self.racks.values()]
        return self._rack_fills

    def _rack_moved(self, rack_item: RackItem) -> None:
        self._racks_changed()  # its fill moves with it
        for child in rack_item.childItems():
            if isinstance(child, DeviceItem):
                self._device_moved(child)

    def _device_moved(self, item: DeviceItem) -> None:
        if self.box_layer is not None:
            self.box_layer.devices_changed()
        device_id = item.data(ID_ROLE)
        for key in self.device_bundles.get(device_id, ()):
            self._place_bundle(key)

    # ---- gestures -> commands -----------------------------------------------------------
    def _tolerance(self) -> float:
        views = self.views()
        scale = views[0].transform().m11() if views else 1.0
        return 4.0 / max(scale, 1e-6)

    def helpEvent(self, event) -> None:
        """Tooltips of cables (they are not items of their own)."""
        if self._far:  # Qt does not find transparent items: the box layer's tooltips are the items'
            under = self.box_layer.items_at(event.scenePos())
            if under:
                QToolTip.showText(event.screenPos(), under[0].toolTip())
                return
        item = self.itemAt(event.scenePos(), self.views()[0].transform() if self.views() else None)
        if item is None or item is self.link_layer:
            tip = self.link_layer.tooltip_at(event.scenePos(), self._tolerance())
            if tip:
                QToolTip.showText(event.screenPos(), tip)
                return
        super().helpEvent(event)

    def mousePressEvent(self, event) -> None:
        from PySide6.QtCore import Qt

        if self._far and event.button() == Qt.LeftButton:
            # far out the racks are transparent, which Qt's own hit tests skip: a click selects the box
            # (or rack) under it as Qt would; no drag from here (zoom in to move one)
            under = self.box_layer.items_at(event.scenePos())
            if under:
                if not event.modifiers() & Qt.ControlModifier:
                    self.clearSelection()
                    self.link_layer.selected = set()
                    self.link_layer.update()
                under[0].setSelected(not (event.modifiers() & Qt.ControlModifier and under[0].isSelected()))
                event.accept()
                return
        under = [i for i in self.items(event.scenePos()) if i is not self.link_layer]
        if not under and event.button() == Qt.LeftButton and self.link_layer.show_individual:
            row = self.link_layer.row_at(event.scenePos(), self._tolerance())
            if row is not None:
                if not event.modifiers() & Qt.ControlModifier:
                    self.clearSelection()
                    self.link_layer.selected = set()
                self.link_layer.selected.add(row)
                self.link_layer.update()
                self.selectionChanged.emit()
                event.accept()
                return
        if self.link_layer.selected and not event.modifiers() & Qt.ControlModifier:
            self.link_layer.selected = set()
            self.link_layer.update()
        super().mousePressEvent(event)
        self._drag_start = {item.data(ID_ROLE): item.scenePos() for item in self.selectedItems()
                            if isinstance(item, (RackItem, DeviceItem))}

    def mouseReleaseEvent(self, event) -> None:
        super().mouseReleaseEvent(event)
        if self._drag_start:
            self.finish_drag()

    def finish_drag(self) -> None:
        """One undo step for everything the drag moved (pushed on release, not per move)."""
        starts, self._drag_start = self._drag_start, {}
        rack_moves: dict[str, dict] = {}
        device_moves: dict[str, dict] = {}
        loose: dict[str, tuple[float, float]] = {}
        for element_id, start in starts.items():
            item = self.racks.get(element_id) or self.devices.get(element_id)
            if item is None or item.scenePos() == start:
                continue
            if isinstance(item, RackItem):
                rack_moves[element_id] = {"x": float(item.pos().x()), "y": float(item.pos().y())}
            else:
                if item.parentItem() is not None and item.parentItem().isSelected():
                    continue  # it moved with its rack
                target = self._slot_for(item)
                element = self.doc.device(element_id)
                if target is None:
                    device_moves[element_id] = {"rack": None, "slot": None}
                    pos = item.scenePos()
                    loose[element_id] = (pos.x(), pos.y())
                else:
                    rack_id, slot = target
                    if (rack_id, slot) != (element.rack, element.slot):
                        device_moves[element_id] = {"rack": rack_id, "slot": slot}
                    else:
                        self._place_device(item, element)  # back into its own slot
        if not (rack_moves or device_moves):
            return
        stack = self.qdoc.undo_stack
        count = len(rack_moves) + len(device_moves)
        stack.beginMacro(f"Move {count} item{'s' if count != 1 else ''}")
        if rack_moves:
            stack.push(commands.SetFields(self.qdoc, rack_moves, "Move racks"))
        if device_moves:
            stack.push(commands.SetFields(self.qdoc, device_moves, "Move devices"))
        if loose:
            stack.push(commands.SetLayout(self.qdoc, loose))
        stack.endMacro()

    def _slot_for(self, item: DeviceItem) -> tuple[str, int] | None:
        """The rack under the device's centre and the free slot nearest to where it was dropped."""
        center = item.sceneBoundingRect().center()
        element = self.doc.device(item.data(ID_ROLE))
        for rack_id, rack_item in self.racks.items():
            r = rack_item.sceneBoundingRect()
            if r.contains(center):
                rack = self.doc.find("racks", rack_id)
                units_from_bottom = (r.bottom() - item.sceneBoundingRect().bottom()) / UNIT_HEIGHT_PX
                wanted = max(0, min(rack.units - element.height_units, round(units_from_bottom)))
                slot = self.free_slot(rack_id, element.height_units, wanted, ignore=element.id)
                if slot is None:
                    self.message.emit(f"rack {rack_id} has no {element.height_units}U free for {element.id}")
                    return (element.rack, element.slot) if element.rack else None
                return rack_id, slot
        return None

    def free_slot(self, rack_id: str, height: int, wanted: int = 0, ignore: str | None = None) -> int | None:
        rack = self.doc.find("racks", rack_id)
        if rack is None:
            return None
        used = [0] * rack.units
        for e in list(self.doc.nodes) + list(self.doc.switches):
            if e.rack == rack_id and e.id != ignore and e.slot is not None:
                for u in range(e.slot, min(rack.units, e.slot + e.height_units)):
                    used[u] = 1
        candidates = [s for s in range(0, rack.units - height + 1) if not any(used[s:s + height])]
        if not candidates:
            return None
        return min(candidates, key=lambda s: (abs(s - wanted), s))

    def select_in_rect(self, rect: QRectF, add: bool = False) -> None:
        """A rubber band's selection while zoomed far out (Qt's own finds no transparent item)."""
        if not add:
            self.clearSelection()
        for item in self.box_layer.items_in(rect):
            item.setSelected(True)

    def item_at(self, pos: QPointF, kinds=("node", "switch")):
        if self._far:
            found = [i for i in self.box_layer.items_at(pos) if i.data(KIND_ROLE) in kinds]
            return found[0] if found else None
        for item in self.items(pos):
            if item.data(KIND_ROLE) in kinds:
                return item
            parent = item.parentItem()
            if parent is not None and parent.data(KIND_ROLE) in kinds:
                return parent
        return None

    def rack_at(self, pos: QPointF) -> RackItem | None:
        item = self.item_at(pos, ("rack",))
        return item if isinstance(item, RackItem) else None

    def selected_ids(self) -> list[str]:
        out = [item.data(ID_ROLE) for item in self.selectedItems() if item.data(ID_ROLE)]
        for row in sorted(self.link_layer.selected):
            out.extend(self.link_layer.bundles.link_ids(row))
        return out

    def select_ids(self, ids) -> None:
        self.finish_build()
        wanted = set(ids)
        self.clearSelection()
        for element_id in wanted:
            item = self.racks.get(element_id) or self.devices.get(element_id)
            if item is not None:
                item.setSelected(True)
        self.link_layer.selected = self._bundle_rows(wanted)
        self.link_layer.update()
        if self.link_layer.selected:
            self.selectionChanged.emit()

    def _bundle_rows(self, ids: set) -> set[int]:
        """The rows of the bundles that hold these link ids, found by each link's two ends (its bundle's
        key), not by a pass over every bundle (295k at 131k GPUs: 50 ms of the window's thread)."""
        layer, rows = self.link_layer, set()
        for element_id in ids:
            link = self.doc.find("links", element_id)
            key = self._bundle_key(link) if link is not None else None
            row = layer.index.get(key) if key is not None else None
            if row is not None and element_id in layer.bundles.link_ids(row):
                rows.add(row)
        return rows

    def item_for(self, element_id: str):
        self.finish_build()
        item = self.racks.get(element_id) or self.devices.get(element_id)
        if item is None:
            i = self.link_layer.bundles.row_of_link(element_id)
            if i is not None:
                a, b = self.link_layer.lines.a[i], self.link_layer.lines.b[i]
                return _Spot(QRectF(QPointF(*np.minimum(a, b)), QPointF(*np.maximum(a, b))))
        return item


def _items_expected(doc) -> int:
    """Qt items a staged build makes: a rack and its name; a box, its name and its ports per device."""
    return 2 * len(doc.racks) + 3 * (len(doc.nodes) + len(doc.switches))


def bsp_depth(items: int) -> int:
    """The depth Qt's index would pick for this many items (ceil(log2 n), at least 5)."""
    return max(5, math.ceil(math.log2(max(items, 1))))


class _BundlesByKey:
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


class _BundleRows:
    """Bundle r's link positions as a list, made when asked (a tooltip), not for all 295k bundles."""

    def __init__(self, members: np.ndarray, starts: np.ndarray):
        self.members, self.starts = members, starts

    def __len__(self) -> int:
        return len(self.starts) - 1

    def __getitem__(self, row: int) -> list:
        return self.members[self.starts[row]:self.starts[row + 1]].tolist()
