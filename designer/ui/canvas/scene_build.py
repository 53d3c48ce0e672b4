"""The staged build of a big design's canvas: its rack fills and cables from a plan made off the UI
thread at once (the first paint shows the racks, the next the cables), its racks, servers and switches
as items in slices between which the window paints and answers (the scene's `build` part)."""
from __future__ import annotations

import math
import time
from collections import defaultdict

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QTimer
from PySide6.QtWidgets import QGraphicsScene

from ...core.model.geometry import UNIT_HEIGHT_PX
from ..common.next_paint import NextPaint
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
    """scene.build: a big design's items being made in slices (`running`), the work left, the items made
    and not shown yet, and a plan made off the UI thread for the design about to come."""

    def __init__(self, scene):
        self._scene = scene
        self.running = False  # a staged build is making items (finish completes it at once)
        self._plan_ready = None  # a ScenePlan made off the UI thread for the design about to come
        self.planned_down: dict = {}  # what of the design being built is down, from its plan (job_colors.py)
        self._work = None  # the generator making the items (_make_items)
        self._lod = None  # what the level of detail needs of each item, gathered as it is made
        self._hidden: list = []  # items made and not shown yet
        self._revealed_at = 0.0
        self._made = (0, 0)  # items made so far, of how many
        self._layers_hidden: list = []  # the box and cable layers, each shown after a paint of the canvas
        self._after_paint: NextPaint | None = None  # the canvas's next paint
        self._timer = QTimer(scene, singleShot=True, interval=0, timeout=self._step)

    def use_plan(self, plan) -> None:
        """The plan of the design about to replace the open one (made off the UI thread); the next
        rebuild uses it if it is for that design's very spec."""
        self._plan_ready = plan

    def take_plan(self):
        plan, self._plan_ready = self._plan_ready, None
        return plan

    def start(self, plan) -> None:
        """Cables, aggregates and rack fills from the plan now (the first paint shows the design);
        racks, servers and switches as items in slices (_step)."""
        scene = self._scene
        doc = scene.doc
        self.running = True
        self.planned_down = plan.down
        left, top, right, bottom = plan.layout_rect
        items = QRectF(QPointF(*plan.items_rect[:2]), QPointF(*plan.items_rect[2:]))
        scene.set_layout_rect(QRectF(QPointF(left, top), QPointF(right, bottom)), items if items.isValid() else None)
        scene.rack_rects.set(plan.rack_qrects, plan.rack_edges)
        boxes = plan.boxes
        if boxes.keys is not None:  # the whole design at the first paint, when zoomed far out
            scene.box_layer.set_boxes(boxes.ids, np.column_stack([boxes.left, boxes.top, boxes.width, boxes.height]),
                                      boxes.keys, boxes.grouped, boxes.index)
        else:
            scene.box_layer.devices_changed()
        lp = plan.links
        scene.cables.use_plan(lp)
        scene.cables.set_aggregates(plan.aggregates)
        # The design shows a layer per paint: its rack fills first (with the whole window's repaint for
        # the new design), then the servers' and switches' boxes, then the cables, and only then are
        # items made (_step). All at once, the first paint held the window 65-95 ms at 131k GPUs, and
        # with the boxes alone the cables' paint and the first slice of items ~50 ms. Each layer
        # keeps its picture far out (box_layer.py), so one layer's paint does not draw another again.
        # Transparent, not hidden: Qt skips painting them, and the zoom's level of detail keeps its say on
        # whether the box layer shows (scene_detail.py).
        self._layers_hidden = [scene.box_layer, scene.link_layer]
        for layer in self._layers_hidden:
            layer.setOpacity(0.0)
        self._show_layers_after_paint()
        scene.detail.single_cables = False  # zoomed out until the view says otherwise (its fit follows)
        scene.link_layer.show_individual = False
        scene.setSceneRect(scene.layout_rect().adjusted(-MARGIN_PX, -MARGIN_PX, MARGIN_PX, MARGIN_PX))
        # Indexed from the start, at the depth the finished canvas needs: each slice's items join the
        # tree at the next paint, a few ms each, where indexing all ~30k at the end (or letting Qt
        # regrow the tree as the count doubles) held the window ~0.45 s at 131k GPUs. No deeper: the
        # layers that span the whole scene (cables, boxes, names and ports) sit in every leaf, and each
        # level more doubles the leaves they are put in at the first paint.
        scene.setItemIndexMethod(QGraphicsScene.BspTreeIndex)
        scene.setBspTreeDepth(bsp_depth(_items_expected(doc)))
        self._work = self._make_items(doc, lp.used_ports)
        self._hidden = []
        self._revealed_at = time.perf_counter()

    def _make_items(self, doc, used_ports: dict):
        """Rack by rack, its servers and switches with it; then the loose ones. Yields after each rack."""
        scene, detail = self._scene, self._scene.detail
        racked: dict = defaultdict(list)
        rack_ids = {r.id for r in doc.racks}
        loose = []
        for kind, elements in (("node", doc.nodes), ("switch", doc.switches)):
            for e in elements:
                (racked[e.rack] if e.rack in rack_ids else loose).append((e, kind))
        total, made = len(doc.racks) + len(doc.nodes) + len(doc.switches), 0
        scale = detail.scale
        # what the level of detail needs of each item, gathered as it is made (a pass over 26k items: 0.4 s)
        # (+ whether each rack's and device's name was made shown: no isVisible() of 30k names at the end)
        lod = self._lod = ([], [], [], [], [], [], [], ([], []))
        detail.use_staged(lod)
        for rack in list(doc.racks):
            item = RackItem(rack)
            item.setVisible(False)  # until its batch shows (_reveal), its servers and switches with it
            if detail.far:
                item.setOpacity(0.0)  # the box layer draws it (box_layer.py)
            if detail.racks_in_front:
                item.setBrush(style.brush(style.RACK_FILL))  # in front of the bundled cables (scene_detail.py)
            shown = item.label_min_scale <= scale
            item.label.setVisible(shown)  # thousands of names unseen when zoomed out
            lod[7][0].append(shown)
            lod[0].append(item.label)
            lod[1].append(item.label_min_scale)
            item.on_moved = scene.rack_moved
            scene.addItem(item)
            scene.racks[rack.id] = item
            self._hidden.append(item)
            made += 1
            for element, kind in racked.get(rack.id, ()):
                self._add_device(element, kind, used_ports, scale)
                made += 1
            self._made = (made, total)
            yield
        for element, kind in loose:
            self._add_device(element, kind, used_ports, scale)
            self._hidden.append(scene.devices[element.id])
            made += 1
            self._made = (made, total)
            yield
        # the last steps, a slice each (each is 15-50 ms at 131k GPUs), the built design's marks and
        # overview (scene.built) in one more: True ends the slice at once
        yield True
        self._reveal()
        yield True
        scene.rebuild_domains()
        yield True
        detail.forget()
        detail.apply_items(detail.scale, made=True)  # every item's name and ports by the zoom now
        detail.use_staged(None)
        self._lod = None
        yield True

    def _add_device(self, element, kind: str, used_ports: dict, scale: float) -> None:
        scene = self._scene
        item = DeviceItem(element, kind)
        lod = self._lod
        lod[2].append(item.label)
        lod[3].append(item.label_min_scale)
        lod[4].append((kind, round(element.height_units * UNIT_HEIGHT_PX - 0.8, 2)))  # the box's height
        lod[5].append(item.ports)
        lod[6].append(item.ports_min_scale)
        if element.rack not in scene.racks:
            item.setVisible(False)  # a loose one: until its batch shows
            if scene.detail.far:
                item.setOpacity(0.0)
        shown = item.label_min_scale <= scale
        item.label.setVisible(shown)
        lod[7][1].append(shown)
        ports = used_ports.get(element.id)
        if ports:
            item.ports.used = ports
        scene.devices[element.id] = item
        scene.place_device(item, element)
        item.on_moved = scene.device_moved  # after placing: its cables' ends are planned already

    def _step(self) -> None:
        work = self._work
        if work is None:
            return
        start = time.perf_counter()
        if self._hidden and start - self._revealed_at >= REVEAL_S:
            self._reveal()  # a slice of its own: showing a batch is 15-30 ms at 131k GPUs
            self._timer.start()
            return
        deadline = start + BUILD_SLICE_S
        for last_of_slice in work:
            now = time.perf_counter()
            if last_of_slice or now >= deadline:
                # this slice's items into the index now (a query does it), not all ~70k at the next paint
                # (0.3-0.5 s: zoomed far out nothing repaints while they come, see box_layer.py)
                self._scene.items(_NOWHERE)
                self._scene.buildProgress.emit(*self._made)
                self._timer.start()
                return
        self._finish()

    def _show_layers_after_paint(self) -> None:
        """The next hidden layer once the canvas has painted; the items' slices once none is left."""
        views = self._scene.views()
        if not views:
            self._show_layers()
            self._timer.start()
            return
        if self._after_paint is None:
            self._after_paint = NextPaint(views[0].viewport())
        self._after_paint.then(self._show_next_layer)

    def _show_next_layer(self) -> None:
        while self._layers_hidden:
            layer = self._layers_hidden.pop(0)
            layer.setOpacity(1.0)
            if layer.isVisible():  # drawn at the next paint (one the zoom hides asks for none: the next now)
                self._show_layers_after_paint()
                return
        if self._work is not None:
            self._timer.start()

    def _show_layers(self) -> None:
        """Show the layers hidden at the start (now, if they still wait for a paint)."""
        if self._after_paint is not None:
            self._after_paint.cancel()
        layers, self._layers_hidden = self._layers_hidden, []
        for layer in layers:
            layer.setOpacity(1.0)

    def _reveal(self) -> None:
        for item in self._hidden:
            item.setVisible(True)
        self._hidden = []
        self._revealed_at = time.perf_counter()

    def finish(self) -> None:
        """Make the items a staged build has not made yet, now (an edit, a search or a selection needs
        them all)."""
        work = self._work
        if work is None:
            return
        self._show_layers()
        for _ in work:
            pass
        self._finish()

    def _finish(self) -> None:
        self._timer.stop()
        self._work = None
        self.running = False
        self._scene.buildProgress.emit(*self._made)
        self._scene.built.emit()

    def stop(self) -> None:
        """The items are about to go (a rebuild): no more of them made."""
        self._timer.stop()
        self._work = None
        self._lod = None
        self._scene.detail.use_staged(None)
        self._hidden = []
        self._show_layers()
        self.running = False


def _items_expected(doc) -> int:
    """Qt items a staged build makes: a rack and its name; a box per device (the devices' names and
    ports are no items: the detail layer draws them)."""
    return 2 * len(doc.racks) + len(doc.nodes) + len(doc.switches)


def bsp_depth(items: int) -> int:
    """The depth Qt's index would pick for this many items (ceil(log2 n), at least 5)."""
    return max(5, math.ceil(math.log2(max(items, 1))))
