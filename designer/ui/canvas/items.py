"""Canvas items. Stock Qt items wherever possible: their paint runs in C++, which keeps a
16k-GPU canvas smooth (PySide6's Python paint() costs ~10 us a call). A device's name and port
squares, shown when zoomed in, are drawn in Python by one layer item for all devices (DetailLayer):
as child items of each of 21k devices they held ~67 MB at 131k GPUs.

Items never change the document: they report gestures to the scene, which pushes commands.
"""
from __future__ import annotations

import functools

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QFontMetricsF, QPainterPath, QTransform
from PySide6.QtWidgets import QGraphicsItem, QGraphicsRectItem, QGraphicsSimpleTextItem

from ...core.model.geometry import RACK_LABEL_PX, RACK_WIDTH_PX, UNIT_HEIGHT_PX, rack_height_px
from . import style

_POSITION_CHANGE = QGraphicsItem.ItemPositionChange  # looked up once, not per call
_POSITION_CHANGED = QGraphicsItem.ItemPositionHasChanged
_PARENT_CHANGED = QGraphicsItem.ItemParentHasChanged
ID_ROLE = 0  # item.data(ID_ROLE) -> element id
KIND_ROLE = 1  # "rack" | "node" | "switch"


class RackItem(QGraphicsRectItem):
    def __init__(self, rack):
        super().__init__(0, 0, RACK_WIDTH_PX, rack_height_px(rack.units))
        self.setPos(rack.x, rack.y)
        self.setData(ID_ROLE, rack.id)
        self.setData(KIND_ROLE, "rack")
        # No brush: the scene paints rack fills in its background, so cables (drawn above the background,
        # below the racks' servers and switches) show inside a rack up to the port they end on.
        self.setBrush(Qt.NoBrush)
        self.setPen(style.edge_pen(style.RACK_EDGE))
        self.setFlags(QGraphicsItem.ItemIsSelectable | QGraphicsItem.ItemIsMovable
                      | QGraphicsItem.ItemSendsGeometryChanges)
        self.setZValue(0)
        self.label = QGraphicsSimpleTextItem(rack.name or rack.id, self)
        self.label.setFont(style.label_font(7))
        self.label.setBrush(style.TEXT)
        self._fit_label()
        self.units = rack.units
        self.snap = True
        self.on_moved = None  # set by the scene: called while dragging, to drag the cables along
        self.setToolTip(f"rack {rack.id}: {rack.units}U")

    def update_from(self, rack) -> None:
        self.setRect(0, 0, RACK_WIDTH_PX, rack_height_px(rack.units))
        if self.pos() != QPointF(rack.x, rack.y):
            self.setPos(rack.x, rack.y)
        self.label.setText(rack.name or rack.id)
        self._fit_label()
        self.units = rack.units

    def _fit_label(self) -> None:
        """The rack's name in the room above it, never wider than the rack (it would run into the next)."""
        self.label.setScale(1.0)
        bounds = self.label.boundingRect()
        scale = min(1.0, RACK_WIDTH_PX / max(bounds.width(), 1e-6), (RACK_LABEL_PX - 2) / max(bounds.height(), 1e-6))
        self.label.setScale(scale)
        self.label.setPos(0, -2 - bounds.height() * scale)
        self.label_min_scale = style.MIN_TEXT_PX / max(bounds.height() * scale, 1e-6)

    def itemChange(self, change, value):
        if change == _POSITION_CHANGE and self.snap:
            grid = style.GRID_PX
            return QPointF(round(value.x() / grid) * grid, round(value.y() / grid) * grid)
        if change == _POSITION_CHANGED and self.on_moved:
            self.on_moved(self)
        return value  # what QGraphicsItem.itemChange returns (called ~90 times per rack as it is made)


class DeviceItem(QGraphicsRectItem):
    """A server or a switch: a box in its rack's slot (or loose on the canvas)."""

    def __init__(self, element, kind: str):
        super().__init__()
        self.kind = kind
        self.setData(ID_ROLE, element.id)
        self.setData(KIND_ROLE, kind)
        self.setFlags(QGraphicsItem.ItemIsSelectable | QGraphicsItem.ItemIsMovable
                      | QGraphicsItem.ItemSendsGeometryChanges)
        self.setZValue(2)
        self.label = DeviceName(self)  # hidden until zoomed in, as the ports (scene.detail.apply)
        self.ports = PortMarks(self)
        self.on_moved = None
        self.update_from(element)

    def update_from(self, element) -> None:
        h = element.height_units * UNIT_HEIGHT_PX
        self.setRect(3, 0.4, RACK_WIDTH_PX - 6, h - 0.8)
        color, edge = device_colors(element, self.kind)
        if self.kind == "node":
            text = f"{element.name or element.id} {element.accelerator_count}x{_short(element.accelerator)}"
            tip = (f"server {element.id}: {element.accelerator_count} x {element.accelerator}, {element.scale_up}; "
                   f"{element.nic_count} x {element.nic_gbps:g} Gb/s {element.nic_kind}")
            self.ports.set_ports(element.nic_count, "nic")
        else:
            text = f"{element.name or element.id}"
            tip = (f"{element.fabric} {element.tier} switch {element.id}: {element.radix} x {element.port_gbps:g} Gb/s"
                   + (f", rail {element.rail}" if element.rail is not None else "")
                   + (f", NVLink domain {element.nvlink_domain}" if element.nvlink_domain else ""))
            if element.fabric == "nvlink":
                tip = tip.replace("nvlink nvlink switch", "NVLink switch tray", 1)
            self.ports.set_ports(element.radix, "p")
        self.setBrush(style.brush(color))
        self.setPen(style.edge_pen(edge, 0.8))
        self._fit_label(text, h)
        self.setToolTip(tip)

    def _fit_label(self, text: str, height: float) -> None:
        """The name inside the box below its row of ports, scaled down until it fits (a long name never
        spills out, and never sits under a port). It shows from the zoom where it is MIN_TEXT_PX tall;
        the ports from the zoom where a port is MIN_PORT_PX wide (scene.detail.apply)."""
        self.label.setText(text)
        self.label.setScale(1.0)
        bounds = self.label.boundingRect()
        r = self.rect()
        top = r.top() + port_strip_height(r, self.ports.count)
        room_w, room_h = r.width() - 4, max(0.5, r.bottom() - top - 0.3)
        scale = min(1.0, room_w / max(bounds.width(), 1e-6), room_h / max(bounds.height(), 1e-6))
        self.label.setScale(scale)
        self.label.setPos(r.left() + 2, top + (r.bottom() - top - bounds.height() * scale) / 2)
        self.label_min_scale = style.MIN_TEXT_PX / max(bounds.height() * scale, 1e-6)
        size = port_layout(r, self.ports.count)[2] if self.ports.count else 0.0
        self.ports_min_scale = style.MIN_PORT_PX / size if size else float("inf")

    def port_point(self, index: int | None, rect: QRectF | None = None) -> QPointF | None:
        """The scene position of port `index` (the middle of its square), where its cable ends;
        None for a port the box does not draw."""
        if index is None or not 0 <= index < self.ports.count:
            return None
        local = port_rect(self.rect(), self.ports.count, index).center()
        if rect is None:
            return self.mapToScene(local)
        # `rect`: the box in the scene, known already (a rebuild places thousands of cables)
        return QPointF(rect.left() + local.x() - self.rect().left(), rect.top() + local.y() - self.rect().top())

    def itemChange(self, change, value):
        if change == _POSITION_CHANGED and self.on_moved:
            self.on_moved(self)
        elif change == _PARENT_CHANGED:  # into a rack or out of one: where the detail layer finds it
            layer = getattr(self.scene(), "detail_layer", None)
            if layer is not None:
                layer.racks_changed()
        return value  # what QGraphicsItem.itemChange returns

    def anchor(self, toward: QPointF | None = None, rect: QRectF | None = None) -> QPointF:
        """Where a cable leaves the box: the edge that faces the other end (`rect`: the box, if known)."""
        r = rect if rect is not None else self.sceneBoundingRect()
        if toward is None:
            return r.center()
        c = r.center()
        if self.parentItem() is not None:
            # In a rack, cables leave from the side, into the aisle, not across the other boxes.
            return QPointF(r.left() if toward.x() < c.x() - r.width() else r.right(), c.y())
        dx, dy = toward.x() - c.x(), toward.y() - c.y()
        if abs(dy) * r.width() >= abs(dx) * r.height():  # mostly above or below
            x = min(max(toward.x(), r.left() + 2), r.right() - 2)
            return QPointF(x, r.top() if dy < 0 else r.bottom())
        y = min(max(toward.y(), r.top() + 1), r.bottom() - 1)
        return QPointF(r.left() if dx < 0 else r.right(), y)


def device_style_key(element, kind: str) -> tuple:
    """What a box's colours depend on (alike boxes share a key: box_layer.py draws them together)."""
    return ("node", element.scale_up) if kind == "node" else ("switch", element.tier, element.fabric)


_COLORS: dict = {}


def device_colors(element, kind: str):
    """(fill, edge) of a server's or a switch's box."""
    key = device_style_key(element, kind)
    found = _COLORS.get(key)
    if found is None:
        if kind == "node":
            color = style.NODE_FILL.get(element.scale_up, style.NODE_FILL["nvswitch"])
            found = (color, color.darker(140))
        else:
            found = (style.SWITCH_FILL.get(element.tier, style.SWITCH_FILL["leaf"]),
                     {"ethernet": style.ETHERNET_SWITCH_EDGE, "nvlink": style.NVLINK_SWITCH_EDGE}.get(
                         element.fabric, style.INFINIBAND_SWITCH_EDGE))
        _COLORS[key] = found
    return found


def _short(model: str) -> str:
    return model.split("-")[0]


PORTS_PER_ROW = 64  # a 64-port switch: one row, its name below in the rest of the 1U box
PORT_GAP_PX = 0.25  # above a row of ports


def port_layout(rect: QRectF, count: int) -> tuple[int, float, float]:
    """(ports per row, step between ports, port size) of a box with `count` ports."""
    per_row = max(1, min(count, PORTS_PER_ROW))
    step = (rect.width() - 2) / per_row
    return per_row, step, max(0.3, min(step * 0.7, 1.2))


def port_rect(rect: QRectF, count: int, index: int) -> QRectF:
    """Port `index`'s square, in rows along the top edge of the box `rect`."""
    per_row, step, size = port_layout(rect, count)
    row, col = divmod(index, per_row)
    return QRectF(rect.left() + 1 + col * step + (step - size) / 2, rect.top() + PORT_GAP_PX + row * (size + PORT_GAP_PX),
                  size, size)


def port_strip_height(rect: QRectF, count: int) -> float:
    """How much of the box's top the ports take (the label goes below)."""
    if not count:
        return 0.0
    per_row, _step, size = port_layout(rect, count)
    rows = (count + per_row - 1) // per_row
    return PORT_GAP_PX + rows * (size + PORT_GAP_PX)


def port_index(port: str | None) -> int | None:
    """The number of a port name ("nic3" -> 3, "p17" -> 17); None when it has none."""
    if not port:
        return None
    digits = port[len(port.rstrip("0123456789")):]
    return int(digits) if digits else None


NAME_FONT = style.label_font(5.0, bold=True)
_MEASURE = QGraphicsSimpleTextItem()  # measures a name as a text item of its own would (never shown)
_MEASURE.setFont(NAME_FONT)


class _DeviceDetail:
    """Something of a device the scene's DetailLayer draws for it: shown or not, as a child item would be."""

    __slots__ = ("device", "_shown")

    def __init__(self, device: DeviceItem, shown: bool):
        self.device, self._shown = device, shown

    def setVisible(self, shown: bool) -> None:
        if shown != self._shown:
            self._shown = shown
            self.device.update()

    def isVisible(self) -> bool:
        """Drawn: shown at this zoom, and its device is (as a child item's isVisible)."""
        return self._shown and self.device.isVisible()

    def update(self) -> None:
        if self._shown:
            self.device.update()  # the layer repaints the device's part of the view with it


class DeviceName(_DeviceDetail):
    """A server's or switch's name inside its box: its text and where it sits, scaled to fit (a child
    item's position and scale)."""

    __slots__ = ("_text", "_scale", "_x", "_y", "_width", "_height")

    def __init__(self, device: DeviceItem):
        super().__init__(device, shown=True)
        self._text, self._scale, self._x, self._y, self._width, self._height = "", 1.0, 0.0, 0.0, 0.0, 0.0

    def setText(self, text: str) -> None:
        """The text, and its size at scale 1 (the text item's bounding rectangle)."""
        self._text = text
        _MEASURE.setText(text)
        bounds = _MEASURE.boundingRect()
        self._width, self._height = bounds.width(), bounds.height()
        self.update()

    def text(self) -> str:
        return self._text

    def boundingRect(self) -> QRectF:
        return QRectF(0.0, 0.0, self._width, self._height)

    def setScale(self, scale: float) -> None:
        self._scale = scale

    def scale(self) -> float:
        return self._scale

    def setPos(self, x: float, y: float) -> None:
        self._x, self._y = x, y
        self.update()

    def sceneBoundingRect(self) -> QRectF:
        return self.device.mapRectToScene(QRectF(self._x, self._y, self._width * self._scale,
                                                 self._height * self._scale))


class PortMarks(_DeviceDetail):
    """A device's port squares along its top edge: how many, which have a cable, whether they show.
    Not an item: the scene's DetailLayer draws every device's (21k child items held ~29 MB at 131k GPUs).
    A port with a cable is filled in the selection blue, a free one in the background colour."""

    __slots__ = ("count", "prefix", "used")

    def __init__(self, device: DeviceItem):
        super().__init__(device, shown=False)
        self.count = 0
        self.prefix = "p"
        self.used: frozenset | set = frozenset()

    def set_ports(self, count: int, prefix: str) -> None:
        self.count, self.prefix = count, prefix
        self.update()

    def squares(self) -> tuple[list, list]:
        """(free, used) port squares in the device's coordinates; alike devices share them."""
        r = self.device.rect()
        used = self.used
        key = (r.left(), r.top(), r.width(), r.height(), self.count,
               used if isinstance(used, frozenset) else frozenset(used))
        found = _SQUARES.get(key)
        if found is None:
            if len(_SQUARES) > _SQUARES_KEPT:
                _SQUARES.clear()
            squares = [port_rect(r, self.count, i) for i in range(self.count)]
            found = _SQUARES[key] = ([q for i, q in enumerate(squares) if i not in used],
                                     [q for i, q in enumerate(squares) if i in used])
        return found


_SQUARES: dict = {}  # (box, count, used ports) -> (free, used) squares: a few hundred kinds of device
_SQUARES_KEPT = 4096
DETAIL_Z = 2.5  # over the servers and switches (2, inside their racks at 0), under the down cables (3)


class DetailLayer(QGraphicsItem):
    """Every device's name and port squares, drawn by one item: those of the devices in the exposed part
    of the view whose names or ports show at this zoom (scene.detail.apply shows them zoomed in, so a paint
    draws a few hundred devices' at most; the scene hides the layer when none shows). Never under the
    mouse: a click on a name or a port reaches its device."""

    def __init__(self):
        super().__init__()
        self.setZValue(DETAIL_Z)
        self.setAcceptedMouseButtons(Qt.NoButton)
        self.setFlag(QGraphicsItem.ItemUsesExtendedStyleOption, True)  # option.exposedRect: what to draw
        self.setVisible(False)  # until some device's name or ports show
        self._bounds = QRectF()
        self._holders = None  # (counts, rack items, their scene rects (n, 4) as left top right bottom, loose devices)

    def racks_changed(self) -> None:
        """Racks came, went or moved, or a device changed rack: where to look again at the next paint."""
        self._holders = None

    def _devices_in(self, exposed: QRectF):
        """The devices shown in `exposed` (scene coordinates): those of the racks it meets, and the loose
        ones. Not a query of the scene's index from inside a paint: inside scene.render (the overview,
        an export) that query finds nothing."""
        scene = self.scene()
        racks, devices = scene.racks, scene.devices
        counts = (len(racks), len(devices))
        if self._holders is None or self._holders[0] != counts:
            items = list(racks.values())
            rects = scene.rack_rects.rects()
            if len(rects) != len(items):  # a staged build's racks still coming
                rects = [item.mapRectToScene(item.rect()) for item in items]
            edges = np.array([(r.left(), r.top(), r.right(), r.bottom()) for r in rects], float).reshape(-1, 4)
            loose = [item for item in devices.values() if item.parentItem() is None]
            self._holders = (counts, items, edges, loose)
        _counts, items, edges, loose = self._holders
        meets = ((edges[:, 2] >= exposed.left()) & (edges[:, 0] <= exposed.right())
                 & (edges[:, 3] >= exposed.top()) & (edges[:, 1] <= exposed.bottom()))
        for i in np.flatnonzero(meets).tolist():
            rack = items[i]
            if rack.isVisible():
                for child in rack.childItems():
                    if type(child) is DeviceItem and child.isVisible():
                        yield child
        for item in loose:
            if item.isVisible() and item.sceneBoundingRect().intersects(exposed):
                yield item

    def set_bounds(self, rect: QRectF) -> None:
        """Where devices are (the scene's layout)."""
        if rect != self._bounds:
            self.prepareGeometryChange()
            self._bounds = QRectF(rect)

    def boundingRect(self) -> QRectF:
        return self._bounds

    def shape(self) -> QPainterPath:
        return QPainterPath()

    def paint(self, painter, option, widget=None) -> None:
        scene = self.scene()
        if scene is None:
            return
        base = painter.worldTransform()
        free_brush, used_brush = style.brush(style.BACKGROUND), style.brush(style.PORT_USED)
        painter.setFont(NAME_FONT)
        ascent = _ascent()
        for item in self._devices_in(option.exposedRect):
            name, ports = item.label, item.ports
            shows_ports = ports._shown and ports.count
            if not (name._shown and name._text) and not shows_ports:
                continue
            to_view = item.sceneTransform() * base
            if name._shown and name._text:
                k = name._scale
                painter.setWorldTransform(QTransform(k, 0.0, 0.0, k, name._x, name._y) * to_view)
                painter.setPen(style.BACKGROUND)
                painter.drawText(QPointF(0.0, ascent), name._text)
            if shows_ports:
                free, used = ports.squares()
                painter.setWorldTransform(to_view)
                painter.setPen(Qt.NoPen)
                if free:
                    painter.setBrush(free_brush)
                    painter.drawRects(free)
                if used:
                    painter.setBrush(used_brush)
                    painter.drawRects(used)
        painter.setWorldTransform(base)


@functools.cache
def _ascent() -> float:
    """Where a name's baseline sits below its top (a text item draws its first line there)."""
    return QFontMetricsF(NAME_FONT).ascent()
