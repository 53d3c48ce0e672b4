"""The staged build of a big design's canvas: its cables, aggregates and rack fills from a plan made
off the UI thread at once (the first paint shows the design), its racks, servers and switches as items
in slices between which the window paints and answers (a mixin of CanvasScene)."""
from __future__ import annotations

import math
import time
from collections import defaultdict

import numpy as np
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtWidgets import QGraphicsScene

from ...core.model.geometry import UNIT_HEIGHT_PX
from . import style
from .items import DeviceItem, RackItem

MARGIN_PX = 400.0  # around the layout: room to scroll past its edge
_NOWHERE = QRectF(-1e12, -1e12, 1.0, 1.0)  # a query of the index that finds nothing
# A design with more than STAGED_ITEMS racks, servers and switches gets its items in slices of
# BUILD_SLICE_S between which the window paints and answers: its racks' fills and cables (planned off
# the UI thread, scene_plan.py) show at once, the boxes fill in (131k GPUs: 26k boxes, ~6 s of making).
BUILD_SLICE_S = 0.012
REVEAL_S = 0.5  # made items show a batch at a time: one repaint of the canvas per batch, not per slice


class StagedBuild:
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
        self.cables.use_plan(lp)
        self.cables.set_aggregates(plan.aggregates)
        self.detail.single_cables = False  # zoomed out until the view says otherwise (its fit follows)
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
        scale = self.detail.scale
        # what the level of detail needs of each item, gathered as it is made (a pass over 26k items: 0.4 s)
        # (+ whether each rack's and device's name was made shown: no isVisible() of 30k names at the end)
        lod = self._staged_lod = ([], [], [], [], [], [], [], ([], []))
        self.detail.use_staged(lod)
        for rack in list(doc.racks):
            item = RackItem(rack)
            item.setVisible(False)  # until its batch shows (_reveal), its servers and switches with it
            if self.detail.far:
                item.setOpacity(0.0)  # the box layer draws it (box_layer.py)
            if self.detail.racks_in_front:
                item.setBrush(style.brush(style.RACK_FILL))  # in front of the bundled cables (scene_detail.py)
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
        self.detail.forget()
        self.detail.apply_items(self.detail.scale, made=True)  # every item's name and ports by the zoom now
        self.detail.use_staged(None)
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
            if self.detail.far:
                item.setOpacity(0.0)
        shown = item.label_min_scale <= scale
        item.label.setVisible(shown)
        lod[7][1].append(shown)
        ports = used_ports.get(element.id)
        if ports:
            item.ports.used = ports
        self.devices[element.id] = item
        self.place_device(item, element)
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
        self.detail.use_staged(None)
        self._hidden = []
        self.building = False


def _items_expected(doc) -> int:
    """Qt items a staged build makes: a rack and its name; a box, its name and its ports per device."""
    return 2 * len(doc.racks) + 3 * (len(doc.nodes) + len(doc.switches))


def bsp_depth(items: int) -> int:
    """The depth Qt's index would pick for this many items (ceil(log2 n), at least 5)."""
    return max(5, math.ceil(math.log2(max(items, 1))))
