"""The canvas's gestures and selection: clicks (on items, boxes far out, single cables), tooltips of
cables, a drag that becomes one undo step, a dropped device's free slot, selection by id (the scene's
`gestures` part)."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtWidgets import QToolTip

from ...core.model.geometry import UNIT_HEIGHT_PX
from ..document import commands
from .items import ID_ROLE, KIND_ROLE, DeviceItem, RackItem


def free_slot(doc, rack_id: str, height: int, wanted: int = 0, ignore: str | None = None) -> int | None:
    """The free slot of `height` units in the rack nearest to `wanted` (None: the rack is full)."""
    rack = doc.find("racks", rack_id)
    if rack is None:
        return None
    used = [0] * rack.units
    for e in list(doc.nodes) + list(doc.switches):
        if e.rack == rack_id and e.id != ignore and e.slot is not None:
            for u in range(e.slot, min(rack.units, e.slot + e.height_units)):
                used[u] = 1
    candidates = [s for s in range(0, rack.units - height + 1) if not any(used[s:s + height])]
    if not candidates:
        return None
    return min(candidates, key=lambda s: (abs(s - wanted), s))


# More cables selected or unselected than this: the whole layer painted again, not each
SELECTION_PAINTED_APART = 64


class MoveDrag:
    """A drag of the selected racks, servers and switches: where each started; on release, one undo step
    for everything it moved (pushed once, not per move)."""

    def __init__(self, scene):
        self._scene = scene
        self.starts: dict[str, QPointF] = {item.data(ID_ROLE): item.scenePos() for item in scene.selectedItems()
                                           if isinstance(item, (RackItem, DeviceItem))}

    def finish(self) -> None:
        scene = self._scene
        doc = scene.doc
        rack_moves: dict[str, dict] = {}
        device_moves: dict[str, dict] = {}
        loose: dict[str, tuple[float, float]] = {}
        for element_id, start in self.starts.items():
            item = scene.racks.get(element_id) or scene.devices.get(element_id)
            if item is None or item.scenePos() == start:
                continue
            if isinstance(item, RackItem):
                rack_moves[element_id] = {"x": float(item.pos().x()), "y": float(item.pos().y())}
            else:
                if item.parentItem() is not None and item.parentItem().isSelected():
                    continue  # it moved with its rack
                target = self._slot_for(item)
                element = doc.device(element_id)
                if target is None:
                    device_moves[element_id] = {"rack": None, "slot": None}
                    pos = item.scenePos()
                    loose[element_id] = (pos.x(), pos.y())
                else:
                    rack_id, slot = target
                    if (rack_id, slot) != (element.rack, element.slot):
                        device_moves[element_id] = {"rack": rack_id, "slot": slot}
                    else:
                        scene.place_device(item, element)  # back into its own slot
        if not (rack_moves or device_moves):
            return
        qdoc = scene.qdoc
        stack = qdoc.undo_stack
        count = len(rack_moves) + len(device_moves)
        stack.beginMacro(f"Move {count} item{'s' if count != 1 else ''}")
        if rack_moves:
            stack.push(commands.SetFields(qdoc, rack_moves, "Move racks"))
        if device_moves:
            stack.push(commands.SetFields(qdoc, device_moves, "Move devices"))
        if loose:
            stack.push(commands.SetLayout(qdoc, loose))
        stack.endMacro()

    def _slot_for(self, item: DeviceItem) -> tuple[str, int] | None:
        """The rack under the device's centre and the free slot nearest to where it was dropped."""
        scene = self._scene
        doc = scene.doc
        center = item.sceneBoundingRect().center()
        element = doc.device(item.data(ID_ROLE))
        for rack_id, rack_item in scene.racks.items():
            r = rack_item.sceneBoundingRect()
            if r.contains(center):
                rack = doc.find("racks", rack_id)
                units_from_bottom = (r.bottom() - item.sceneBoundingRect().bottom()) / UNIT_HEIGHT_PX
                wanted = max(0, min(rack.units - element.height_units, round(units_from_bottom)))
                slot = free_slot(doc, rack_id, element.height_units, wanted, ignore=element.id)
                if slot is None:
                    scene.message.emit(f"rack {rack_id} has no {element.height_units}U free for {element.id}")
                    return (element.rack, element.slot) if element.rack else None
                return rack_id, slot
        return None


class SceneGestures:
    """scene.gestures: what the pointer does on the canvas (the scene's mouse and help events hand their
    events here) and the selection by id; `drag` is the move under way, if any."""

    def __init__(self, scene):
        self._scene = scene
        self.drag: MoveDrag | None = None

    def tolerance(self) -> float:
        """How near a cable a click or a tooltip must be: 4 pixels at the view's zoom, in scene units."""
        views = self._scene.views()
        scale = views[0].transform().m11() if views else 1.0
        return 4.0 / max(scale, 1e-6)

    def tooltip(self, event) -> bool:
        """Tooltips of cables (they are not items of their own), and of boxes far out; False: Qt's own."""
        scene = self._scene
        if scene.detail.far:  # Qt does not find transparent items: the box layer's tooltips are the items'
            under = scene.box_layer.items_at(event.scenePos())
            if under:
                QToolTip.showText(event.screenPos(), under[0].toolTip())
                return True
        item = scene.itemAt(event.scenePos(), scene.views()[0].transform() if scene.views() else None)
        if item is None or item is scene.link_layer:
            tip = scene.link_layer.tooltip_at(event.scenePos(), self.tolerance())
            if tip:
                QToolTip.showText(event.screenPos(), tip)
                return True
        return False

    def press(self, event) -> bool:
        """A click on a box far out or on cables selects it; True: taken, Qt's own press must not follow."""
        scene = self._scene
        layer = scene.link_layer
        if scene.detail.far and event.button() == Qt.LeftButton:
            # far out the racks are transparent, which Qt's own hit tests skip: a click selects the box
            # (or rack) under it as Qt would; no drag from here (zoom in to move one)
            under = scene.box_layer.items_at(event.scenePos())
            if under:
                if not event.modifiers() & Qt.ControlModifier:
                    scene.clearSelection()
                    layer.selected = set()
                    layer.update()
                under[0].setSelected(not (event.modifiers() & Qt.ControlModifier and under[0].isSelected()))
                event.accept()
                return True
        rows = self._cables_at(event.scenePos()) if event.button() == Qt.LeftButton else set()
        if rows:
            if not event.modifiers() & Qt.ControlModifier:
                scene.clearSelection()
                layer.selected = set()
            layer.selected |= rows
            layer.update()
            scene.selectionChanged.emit()
            event.accept()
            return True
        if layer.selected and not event.modifiers() & Qt.ControlModifier:
            layer.selected = set()
            layer.update()
        return False

    def pressed(self) -> None:
        """Qt's own press is done (it selected what was under the pointer): a drag of the selection may start."""
        drag = MoveDrag(self._scene)
        self.drag = drag if drag.starts else None

    def released(self) -> None:
        drag, self.drag = self.drag, None
        if drag is not None:
            drag.finish()

    def _cables_at(self, pos: QPointF) -> set[int]:
        """The bundle rows a click at `pos` picks: what the user sees there on top. A server or switch is
        in front of every cable; a single cable is drawn over its rack's inside, so a click on it inside
        a rack picks the cable, not the rack; a rack-to-rack bundle (cables too close to tell apart) is
        behind the racks, so a click on it in an aisle picks all of its cables."""
        scene = self._scene
        layer = scene.link_layer
        for item in scene.items(pos):
            if item is layer:
                continue
            parent = item.parentItem()
            if item.data(KIND_ROLE) in ("node", "switch") or (parent is not None
                                                               and parent.data(KIND_ROLE) in ("node", "switch")):
                return set()
            if not layer.show_individual and isinstance(item, RackItem):
                return set()
        row = layer.row_at(pos, self.tolerance())
        if row is None:
            return set()
        if layer.show_individual:
            return {row}
        return set(np.flatnonzero(layer.bundle_aggregate == row).tolist())

    def select_in_rect(self, rect: QRectF, add: bool = False) -> None:
        """A rubber band's selection while zoomed far out (Qt's own finds no transparent item)."""
        scene = self._scene
        if not add:
            scene.clearSelection()
        for item in scene.box_layer.items_in(rect):
            item.setSelected(True)

    def item_at(self, pos: QPointF, kinds=("node", "switch")):
        """The server or switch (or the `kinds` asked for) under a scene point, far out too."""
        scene = self._scene
        if scene.detail.far:
            found = [i for i in scene.box_layer.items_at(pos) if i.data(KIND_ROLE) in kinds]
            return found[0] if found else None
        for item in scene.items(pos):
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
        scene = self._scene
        out = [item.data(ID_ROLE) for item in scene.selectedItems() if item.data(ID_ROLE)]
        for row in sorted(scene.link_layer.selected):
            out.extend(scene.link_layer.bundles.link_ids(row))
        return out

    def select_ids(self, ids) -> None:
        scene = self._scene
        scene.build.finish()
        wanted = set(ids)
        scene.clearSelection()
        for element_id in wanted:
            item = scene.racks.get(element_id) or scene.devices.get(element_id)
            if item is not None:
                item.setSelected(True)
        layer = scene.link_layer
        before, layer.selected = layer.selected, self._bundle_rows(wanted)
        changed = before ^ layer.selected
        if len(changed) <= SELECTION_PAINTED_APART:  # the cables selected and unselected: painted there alone
            where = layer.rows_rect(sorted(changed))
            if not where.isNull():
                layer.update(where)
        else:
            layer.update()
        if scene.link_layer.selected:
            scene.selectionChanged.emit()

    def _bundle_rows(self, ids: set) -> set[int]:
        """The rows of the bundles that hold these link ids, found by each link's two ends (its bundle's
        key), not by a pass over every bundle (295k at 131k GPUs: 50 ms of the window's thread)."""
        scene = self._scene
        layer, rows = scene.link_layer, set()
        for element_id in ids:
            link = scene.doc.find("links", element_id)
            key = scene.cables.bundle_key(link) if link is not None else None
            row = layer.index.get(key) if key is not None else None
            if row is not None and element_id in layer.bundles.link_ids(row):
                rows.add(row)
        return rows

    def item_for(self, element_id: str):
        """The item to centre the view on for an element: its rack's or device's, or its cable bundle's spot."""
        scene = self._scene
        scene.build.finish()
        item = scene.racks.get(element_id) or scene.devices.get(element_id)
        if item is None:
            layer = scene.link_layer
            i = layer.bundles.row_of_link(element_id)
            if i is not None:
                a, b = layer.lines.a[i], layer.lines.b[i]
                return _Spot(QRectF(QPointF(*np.minimum(a, b)), QPointF(*np.maximum(a, b))))
        return item


class _Spot:
    """Something to centre the view on that is not an item (a cable bundle)."""

    def __init__(self, rect: QRectF):
        self._rect = rect

    def sceneBoundingRect(self) -> QRectF:
        return self._rect
