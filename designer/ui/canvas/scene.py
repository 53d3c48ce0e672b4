"""The scene mirrors the document: one item per rack, server and switch, one line per
bundle of cables between two devices, and rack-to-rack aggregates for the zoomed-out view.

It listens to the document's changes and updates only what changed; a whole-document
change (open, generate, undo of a generate) rebuilds it. Gestures come back as undo commands: a
drag's moves (scene_gestures.py); a dropped part or a drawn cable through the view's signals.

One handler per kind of change: QtDocument emits racksChanged, devicesChanged, linksChanged and
layoutChanged, then changed with all of them; each handler updates its items and notes what the
edit as a whole needs redone, which `_after_edit` does once. `replaced` rebuilds.
"""
from __future__ import annotations

from dataclasses import dataclass, field


from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtWidgets import QGraphicsScene
from shiboken6 import isValid

from ...core.analysis.link_load import LinkLoads
from ...core.model import Rack
from ...core.model.geometry import RACK_WIDTH_PX, UNIT_HEIGHT_PX, rack_height_px
from . import style
from .box_layer import BoxLayer
from .items import ID_ROLE, DeviceItem, DetailLayer, RackItem
from .links import LinkLayer
from .rack_rects import RackRects
from .scene_build import MARGIN_PX, StagedBuild
from .scene_cables import SceneCables
from .scene_detail import SceneDetail
from .scene_gestures import SceneGestures
from .scene_heat import SceneHeat
from .scene_plan import STAGED_ITEMS, plan_scene

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
    link_edits: list = field(default_factory=list)  # cables added and removed: (action, link, position, key)
    devices_edited: set = field(default_factory=set)  # devices added, removed or changed (their boxes)
    devices_gone: set = field(default_factory=set)  # devices removed: their bundles' rows emptied, not planned anew
    devices_added: dict = field(default_factory=dict)  # device added -> (its collection, its place in it)
    rects_gone: list = field(default_factory=list)  # where the devices removed were drawn (with their children)
    devices_changed: bool = False  # a device changed in place (its name, size or place): the extent measured again
    bands_drawn: bool = False  # NVLink domain bands were drawn, before or after the edit


def drawn_rect(item) -> QRectF:
    """Where an item and its children are drawn in the scene (what itemsBoundingRect counts of them)."""
    return item.mapRectToScene(item.boundingRect().united(item.childrenBoundingRect()))


class CanvasScene(QGraphicsScene):
    """The scene: its items and their mirroring of the document here. Its parts each own their state,
    in a module of their own: `build` (scene_build.py), `cables`, `detail`, `heat` and `gestures`."""

    message = Signal(str)  # what a refused gesture should tell the user
    aboutToRebuild = Signal()  # every item is about to be deleted (a tool must let go of its own)
    built = Signal()  # a staged build made its last item (job marks, the overview catch up)
    buildProgress = Signal(int, int)  # items made so far, of how many (a staged build)
    heatChanged = Signal()  # the link heat shown changed (its result or its view): the logical view follows

    def __init__(self, qdoc, parent=None, link_loads: LinkLoads | None = None):
        super().__init__(parent)
        self.qdoc = qdoc
        self.link_loads = link_loads if link_loads is not None else LinkLoads()  # a bundle's tooltip words its load
        self.racks: dict[str, RackItem] = {}
        self.devices: dict[str, DeviceItem] = {}
        self.domain_bands: list = []  # NVLink domains (domains.py)
        self.link_layer = LinkLayer()
        self.detail_layer = DetailLayer()  # every device's name and port squares (items.py)
        self.cables = SceneCables(self)  # the bundles of cables and the rack-to-rack aggregates (scene_cables.py)
        self.detail = SceneDetail(self)  # what shows at the view's zoom (scene_detail.py)
        self.build = StagedBuild(self)  # a big design's items made in slices (scene_build.py)
        self.heat = SceneHeat(self)  # the link heat shown (scene_heat.py)
        self.gestures = SceneGestures(self)  # clicks, drags, tooltips and the selection by id (scene_gestures.py)
        self.rack_rects = RackRects(lambda: self.racks.values())  # painted in the background, and far out
        self._layout_rect: QRectF | None = None  # what is drawn (itemsBoundingRect costs 0.3 s at 131k)
        self._items_rect: QRectF | None = None  # the same but the cable lines (their layer's bounds change per edit)
        self.box_layer: BoxLayer | None = None  # a big design's boxes when zoomed far out (box_layer.py)
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
    def rebuild(self) -> None:
        plan = self.build.take_plan()
        self.build.stop()
        self.aboutToRebuild.emit()
        self.box_layer, self.detail.far = None, False  # deleted with the items (clear() announces a selection change)
        self.clear()
        self._layout_rect = None
        self.domain_bands = []  # deleted with the racks
        self.racks.clear()
        self.devices.clear()
        self.cables.clear()
        self.link_layer = LinkLayer()
        self.addItem(self.link_layer)
        self.detail_layer = DetailLayer()
        self.addItem(self.detail_layer)
        self.detail.forget()
        self._racks_changed()
        doc = self.doc
        self.setItemIndexMethod(QGraphicsScene.NoIndex)  # bulk insert, then index once
        if len(doc.racks) + len(doc.nodes) + len(doc.switches) > STAGED_ITEMS:
            self.box_layer = BoxLayer(self)
            self.addItem(self.box_layer)
            if plan is None or plan.spec is not doc.spec:
                plan = plan_scene(doc)
            if plan is not None:
                self.build.start(plan)
                return
        for rack in doc.racks:
            self._add_rack(rack)
        for node in doc.nodes:
            self._add_device(node, "node")
        for switch in doc.switches:
            self._add_device(switch, "switch")
        self.cables.rebuild()
        self.rebuild_domains()
        if self.box_layer is not None:
            self.box_layer.devices_changed()
        self.setItemIndexMethod(QGraphicsScene.BspTreeIndex)
        self._update_scene_rect()
        self.detail.apply(None)

    def layout_rect(self) -> QRectF:
        """What is drawn (the view's fit, the overview): kept until the next change."""
        if self._layout_rect is None:
            self.detail_layer.set_bounds(QRectF())  # not a measure of itself (the rect would never shrink)
            drawn = self.itemsBoundingRect()
            lines = self.link_layer.bounds()
            if lines.isNull() or (lines.left() > drawn.left() and lines.top() > drawn.top()
                                  and lines.right() < drawn.right() and lines.bottom() < drawn.bottom()):
                items = drawn  # the lines inside the rest on every side (the usual case): it is the rest
            else:  # a line on the edge: the rest measured without them (two geometry changes, ~15 ms at 131k)
                self.link_layer.measured_apart(True)
                items = self.itemsBoundingRect()
                self.link_layer.measured_apart(False)
            self.set_layout_rect(drawn, items)
        return QRectF(self._layout_rect)

    def set_layout_rect(self, rect: QRectF, items: QRectF | None = None) -> None:
        """`items`: what is drawn but the cable lines, when known (the layout then follows the lines'
        bounds edit by edit, shrinking too)."""
        self._layout_rect = rect
        self._items_rect = items
        # the layout itself: the layer adds nothing to what an export or a fit measures (a device dragged
        # out of it shows its name and ports again once dropped, when the layout is measured anew)
        self.detail_layer.set_bounds(rect)

    def _add_rack(self, rack: Rack) -> RackItem:
        item = RackItem(rack)
        if self.detail.far:
            item.setOpacity(0.0)
        if self.detail.racks_in_front:
            item.setBrush(style.brush(style.RACK_FILL))
        item.on_moved = self.rack_moved
        self.addItem(item)
        self.racks[rack.id] = item
        return item

    def _add_device(self, element, kind: str) -> DeviceItem:
        item = DeviceItem(element, kind)
        item.on_moved = self.device_moved
        self.devices[element.id] = item
        self.place_device(item, element)
        return item

    def place_device(self, item: DeviceItem, element) -> None:
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
            item.setOpacity(0.0 if self.detail.far else 1.0)  # loose: drawn by the box layer when far out
            pos = self.doc.spec.layout.get("positions", {}).get(element.id)
            if pos is None:
                pos = self._loose_position(element.id)
            item.setPos(pos[0], pos[1])

    def _stack_as_opened(self, item: DeviceItem, collection: str, position: int) -> None:
        """A device put in a rack (an undo puts one back) is stacked among the rack's devices as an open
        stacks them, in the design's order (servers, then switches): where two boxes' smoothed edges
        meet, the same one is drawn over the other."""
        rack = item.parentItem()
        if rack is None:
            return
        items = getattr(self.doc, collection)
        siblings = [child for child in rack.childItems() if isinstance(child, DeviceItem) and child is not item]
        after = items[position + 1] if position + 1 < len(items) else None
        before = items[position - 1] if position > 0 else None
        if after is not None and after.rack == rack.data(ID_ROLE) and self.devices.get(after.id) in siblings:
            item.stackBefore(self.devices[after.id])
        elif before is not None and before.rack == rack.data(ID_ROLE) and self.devices.get(before.id) in siblings:
            at = siblings.index(self.devices[before.id])
            if at + 1 < len(siblings):
                item.stackBefore(siblings[at + 1])
        elif collection == "nodes":  # the rack's only server: before its switches
            switches = [child for child in siblings if child.kind == "switch"]
            if switches:
                item.stackBefore(switches[0])

    def _loose_position(self, element_id: str) -> tuple[float, float]:
        rect = self.itemsBoundingRect()
        index = sum(1 for e in list(self.doc.nodes) + list(self.doc.switches) if e.rack is None)
        return (rect.left() + (index % 20) * (RACK_WIDTH_PX + 12), rect.bottom() + 60)

    def rebuild_domains(self) -> None:
        """The NVLink domain bands, from scratch (one pass over the servers and switches)."""
        from .domains import build_domain_bands

        drawn = bool(self.domain_bands)
        for band in self.domain_bands:
            if band.scene() is self:
                self.removeItem(band)
        self.domain_bands = build_domain_bands(self.doc, self.racks)
        if self.box_layer is not None and (drawn or self.domain_bands):  # (none before or after: nothing to redraw)
            self.box_layer.bands_changed()
        for band in self.domain_bands:
            band.label.setVisible(band.label_fits and band.label_min_scale <= self.detail.scale)
        self.detail.bands_changed()

    def _update_scene_rect(self) -> None:
        rect = self.layout_rect()
        if rect.isNull():
            rect = QRectF(0, 0, 1600, 1000)
        self.setSceneRect(rect.adjusted(-MARGIN_PX, -MARGIN_PX, MARGIN_PX, MARGIN_PX))

    def _selection_to_box_layer(self) -> None:
        layer = self.box_layer
        if layer is not None and isValid(layer):  # (a scene being deleted deletes its items first)
            layer.selection_changed()

    # ---- mirroring the document ---------------------------------------------------------
    # One handler per kind of change (QtDocument emits racksChanged, devicesChanged, linksChanged
    # and layoutChanged, in that order, then changed with all of them); each updates its items and
    # notes what the edit as a whole needs redone, which _after_edit does once.
    def _edit_effects(self) -> _EditEffects:
        if self._effects is None:
            self.build.finish()  # the items the changes apply to
            self._effects = _EditEffects()
        return self._effects

    def _on_racks(self, changes) -> None:
        effects = self._edit_effects()
        effects.racks = effects.items = True
        for c in changes:
            if c.action != "changed":
                self.cables.aggregates_stale = True  # a rack's lines come or go
            if c.action == "added":
                self._add_rack(c.new)
                for e in list(self.doc.nodes) + list(self.doc.switches):
                    if e.rack == c.id and e.id in self.devices:
                        self.place_device(self.devices[e.id], e)
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
                    self.rack_moved(self.racks[rack.id])
                self.cables.aggregates_stale = True
            if c.action != "changed" or c.field in DOMAIN_FIELDS:
                effects.domains = True

    def _on_devices(self, changes) -> None:
        effects = self._edit_effects()
        effects.items = True
        for c in changes:
            effects.devices_edited.update((c.old, c.new) if c.field == "id" else (c.id,))
            if c.action != "changed" or c.field in DOMAIN_FIELDS:
                effects.domains = True  # which trays share NVLink, or where they sit
            if c.action == "added":
                item = self._add_device(c.new, "node" if c.collection == "nodes" else "switch")
                if c.position is not None:
                    self._stack_as_opened(item, c.collection, c.position)
                effects.devices_gone.discard(c.id)
                effects.devices_added[c.id] = (c.collection, c.position)
                if not self.cables.knows_devices([c.id]):  # a new device: which cables it ends not known here
                    effects.rebuild_links = True
                # (one the bundles number, as an undo's: the edit's cables fill its rows again)
            elif c.action == "removed":
                item = self.devices.pop(c.id, None)
                if item is not None:
                    parent = item.parentItem()
                    self.cables.gone[c.id] = parent.data(ID_ROLE) if parent is not None else None
                    effects.rects_gone.append(drawn_rect(item))
                    self.removeItem(item)
                effects.devices_gone.add(c.id)
                effects.devices_added.pop(c.id, None)
            else:
                effects.devices_changed = True
                if c.field == "id":
                    self.devices[c.new] = self.devices.pop(c.old)
                    self.devices[c.new].setData(ID_ROLE, c.new)
                    effects.rebuild_links = True
                element = self.doc.device(c.new if c.field == "id" else c.id)
                if element is not None:
                    item = self.devices[element.id]
                    item.update_from(element)
                    if c.field in ("rack", "slot", "height_units"):
                        self.place_device(item, element)
                        self.device_moved(item)
                        self.cables.aggregates_stale = True

    def _on_links(self, changes) -> None:
        effects = self._edit_effects()
        for c in changes:
            link = c.new if c.action == "added" else c.old if c.action == "removed" else self.doc.find("links", c.id)
            if c.action in ("added", "removed") and link is not None:
                self.cables.mark_ports(link, c.action == "added")
            if c.action == "changed" and c.field in ("a", "b", "id"):
                effects.rebuild_links = True
            elif link is not None:
                key = self.cables.bundle_key(link)
                if c.action in ("added", "removed"):
                    effects.link_edits.append((c.action, link, c.position, key))
                if key is not None:
                    (effects.values_touched if c.action == "changed" else effects.links_touched).add(key)

    def _on_layout(self, _changes) -> None:
        self._edit_effects().other = True
        for e in list(self.doc.nodes) + list(self.doc.switches):
            if e.rack is None and e.id in self.devices:
                self.place_device(self.devices[e.id], e)
                self.device_moved(self.devices[e.id])

    def _after_edit(self, changes) -> None:
        """What the edit as a whole needs redone, once: NVLink domains, rack fills, zoom thresholds,
        the cable bundles, the scene's extent. Nothing for the job's model and plan alone (nothing
        drawn here moves: a TP edit re-measured 16k GPUs' items)."""
        effects, self._effects = self._effects, None
        if effects is None:
            if all(c.collection in ("workload", "parallelism") for c in changes):
                return
            self.build.finish()
            effects = _EditEffects(other=True)  # jobs, calibration, ...: nothing drawn changes, measured again
        if effects.domains:
            effects.bands_drawn = bool(self.domain_bands)
            self.rebuild_domains()
            effects.bands_drawn = effects.bands_drawn or bool(self.domain_bands)
        if effects.racks:
            self._racks_changed()
        if effects.items:
            # names, sizes or items changed: their zoom thresholds too (a rack's edit: all its devices')
            self.detail.changed(None if effects.racks else effects.devices_edited)
            if self.box_layer is not None:  # (a rack's edit moves its devices' boxes)
                self.box_layer.devices_changed(None if effects.racks else effects.devices_edited, effects.devices_added)
        rebuild = effects.rebuild_links
        in_place = False
        if not rebuild and effects.link_edits:  # each bundle in its row, one that comes or goes too
            rebuild = not self.cables.apply_link_edits(effects.link_edits)
            in_place = not rebuild
        if not rebuild and effects.devices_gone:  # a device removed with all its cables: nothing of it drawn
            rebuild = not self.cables.draw_nothing_of(effects.devices_gone)
        self.cables.gone = {}
        boxes = None
        if rebuild:  # once for the edit, however many bundles came or went
            boxes = self.cables.rebuild()
        else:
            for key in effects.values_touched - effects.links_touched:
                self.cables.refresh_values(key)
        kept = effects.items and self._extent_kept(effects)
        if (effects.rebuild_links or (effects.items and not kept) or effects.other
                or (effects.links_touched and not in_place)):
            self._layout_rect = None
            self._update_scene_rect()  # (a cable's new speed moves nothing: the measure before stands)
        elif (in_place or kept) and self._layout_rect is not None:
            # a cable's line ends on its devices: the layout changes only by a line on its edge (its
            # 4 px pad), not measured whole again (~20 ms of the window's thread at 131k GPUs)
            items = self._items_rect
            lines = self.link_layer.bounds()
            rect = items.united(lines) if items is not None else self._layout_rect.united(lines)
            if rect != self._layout_rect:
                self.set_layout_rect(rect, items)
                self._update_scene_rect()
        if not self.detail.single_cables and self.cables.aggregates_stale:
            self.cables.rebuild_aggregates(boxes)  # (the scene's rect above moves no device)

    def _extent_kept(self, effects: _EditEffects) -> bool:
        """The edit added or removed devices only, each drawn inside what was drawn before without
        touching its edge: what is drawn but the cables' lines keeps its extent (measuring every item's
        rect again cost ~20 ms of the window's thread at 131k GPUs)."""
        inside = self._items_rect
        if (inside is None or self._layout_rect is None or effects.racks or effects.devices_changed
                or effects.bands_drawn):
            return False
        pad = 2.0 if self.box_layer is not None else 0.0  # the box layer's pen around a box (box_layer._rebound)
        rects = list(effects.rects_gone)
        for device_id in effects.devices_added:
            item = self.devices.get(device_id)
            if item is None:
                return False
            rects.append(drawn_rect(item))
        return all(r.left() - pad > inside.left() and r.top() - pad > inside.top() and r.right() + pad < inside.right()
                   and r.bottom() + pad < inside.bottom() for r in rects)

    # ---- rack fills, following moves --------------------------------------------------
    def drawBackground(self, painter, rect) -> None:  # exports and the overview (the view draws its own grid)
        super().drawBackground(painter, rect)
        self.draw_rack_fills(painter, rect)

    def draw_rack_fills(self, painter, rect: QRectF) -> None:
        """Rack insides, under the cables: a cable shows inside its rack up to its port, behind the
        other servers and switches (the rack items themselves have no brush)."""
        # once per change of the racks, not per paint (592 racks at 16k GPUs)
        boxes = self.rack_rects.meeting(rect)
        if boxes:
            painter.setPen(Qt.NoPen)
            painter.setBrush(style.RACK_FILL)
            painter.drawRects(boxes)

    def _racks_changed(self) -> None:
        """Racks came, went, moved or changed size: their fills again."""
        self.rack_rects.forget()
        self.detail_layer.racks_changed()
        self.invalidate(QRectF(), QGraphicsScene.BackgroundLayer)
        if self.box_layer is not None:
            self.box_layer.racks_changed()

    def rack_moved(self, rack_item: RackItem) -> None:
        self._racks_changed()  # its fill moves with it
        for child in rack_item.childItems():
            if isinstance(child, DeviceItem):
                self.device_moved(child)

    def device_moved(self, item: DeviceItem) -> None:
        if self.box_layer is not None:
            self.box_layer.devices_changed([item.data(ID_ROLE)])
        self.cables.follow_device(item.data(ID_ROLE))

    # ---- gestures (scene_gestures.py) ------------------------------------------------------
    def helpEvent(self, event) -> None:
        if not self.gestures.tooltip(event):
            super().helpEvent(event)

    def mousePressEvent(self, event) -> None:
        if self.gestures.press(event):
            return
        super().mousePressEvent(event)
        self.gestures.pressed()

    def mouseReleaseEvent(self, event) -> None:
        super().mouseReleaseEvent(event)
        self.gestures.released()

    # the selection by id: what the window's commands, panels and searches ask of the canvas
    def selected_ids(self) -> list[str]:
        return self.gestures.selected_ids()

    def select_ids(self, ids) -> None:
        self.gestures.select_ids(ids)

    def item_for(self, element_id: str):
        return self.gestures.item_for(element_id)
