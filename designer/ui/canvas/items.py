"""Canvas items. Stock Qt items wherever possible: their paint runs in C++, which keeps a
16k-GPU canvas smooth (PySide6's Python paint() costs ~10 us a call). Only port markers,
shown when zoomed in, paint in Python.

Items never change the document: they report gestures to the scene, which pushes commands.
"""
from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtWidgets import QGraphicsItem, QGraphicsLineItem, QGraphicsRectItem, QGraphicsSimpleTextItem

from ...core.model.geometry import RACK_LABEL_PX, RACK_WIDTH_PX, UNIT_HEIGHT_PX, rack_height_px
from . import style

ID_ROLE = 0  # item.data(ID_ROLE) -> element id
KIND_ROLE = 1  # "rack" | "node" | "switch" | "bundle" | "rack-bundle"


class RackItem(QGraphicsRectItem):
    def __init__(self, rack):
        super().__init__(0, 0, RACK_WIDTH_PX, rack_height_px(rack.units))
        self.setPos(rack.x, rack.y)
        self.setData(ID_ROLE, rack.id)
        self.setData(KIND_ROLE, "rack")
        self.setBrush(style.brush(style.RACK_FILL))
        self.setPen(style.edge_pen(style.RACK_EDGE))
        self.setFlags(QGraphicsItem.ItemIsSelectable | QGraphicsItem.ItemIsMovable
                      | QGraphicsItem.ItemSendsGeometryChanges)
        self.setZValue(0)
        self.label = QGraphicsSimpleTextItem(rack.name or rack.id, self)
        self.label.setFont(style.label_font(7))
        self.label.setBrush(style.TEXT)
        self.label.setPos(0, -RACK_LABEL_PX + 2)
        self.units = rack.units
        self.snap = True
        self.on_moved = None  # set by the scene: called while dragging, to drag the cables along
        self.setToolTip(f"rack {rack.id}: {rack.units}U")

    def update_from(self, rack) -> None:
        self.setRect(0, 0, RACK_WIDTH_PX, rack_height_px(rack.units))
        if self.pos() != QPointF(rack.x, rack.y):
            self.setPos(rack.x, rack.y)
        self.label.setText(rack.name or rack.id)
        self.units = rack.units

    def itemChange(self, change, value):
        if change == QGraphicsItem.ItemPositionChange and self.snap:
            grid = style.GRID_PX
            return QPointF(round(value.x() / grid) * grid, round(value.y() / grid) * grid)
        if change == QGraphicsItem.ItemPositionHasChanged and self.on_moved:
            self.on_moved(self)
        return super().itemChange(change, value)


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
        self.label = QGraphicsSimpleTextItem("", self)
        self.label.setFont(style.label_font(4.2))
        self.label.setBrush(style.brush(style.BACKGROUND))
        self.ports = PortMarks(self)
        self.ports.setVisible(False)
        self.on_moved = None
        self.update_from(element)

    def update_from(self, element) -> None:
        h = element.height_units * UNIT_HEIGHT_PX
        self.setRect(3, 0.4, RACK_WIDTH_PX - 6, h - 0.8)
        if self.kind == "node":
            color = style.NODE_FILL.get(element.scale_up, style.NODE_FILL["nvswitch"])
            edge = color.darker(140)
            text = f"{element.name or element.id}  {element.accelerator_count}x{_short(element.accelerator)}"
            tip = (f"server {element.id}: {element.accelerator_count} x {element.accelerator}, {element.scale_up}; "
                   f"{element.nic_count} x {element.nic_gbps:g} Gb/s {element.nic_kind}")
            self.ports.set_ports(element.nic_count, "nic")
        else:
            color = style.SWITCH_FILL.get(element.tier, style.SWITCH_FILL["leaf"])
            edge = style.ETHERNET_SWITCH_EDGE if element.fabric == "ethernet" else style.INFINIBAND_SWITCH_EDGE
            text = f"{element.name or element.id}"
            tip = (f"{element.fabric} {element.tier} switch {element.id}: {element.radix} x {element.port_gbps:g} Gb/s"
                   + (f", rail {element.rail}" if element.rail is not None else ""))
            self.ports.set_ports(element.radix, "p")
        self.setBrush(style.brush(color))
        self.setPen(style.edge_pen(edge, 0.8))
        self.label.setText(text)
        self.label.setPos(5, max(0.0, (h - 6) / 2))
        self.setToolTip(tip)

    def itemChange(self, change, value):
        if change == QGraphicsItem.ItemPositionHasChanged and self.on_moved:
            self.on_moved(self)
        return super().itemChange(change, value)

    def anchor(self) -> QPointF:
        return self.sceneBoundingRect().center()


def _short(model: str) -> str:
    return model.split("-")[0]


class PortMarks(QGraphicsItem):
    """Port squares along a device's top edge, drawn only when zoomed in (Python paint, so few)."""

    def __init__(self, parent: DeviceItem):
        super().__init__(parent)
        self.count = 0
        self.prefix = "p"
        self.used: set[int] = set()
        self.setAcceptedMouseButtons(Qt.NoButton)

    def set_ports(self, count: int, prefix: str) -> None:
        self.prepareGeometryChange()
        self.count, self.prefix = count, prefix

    def boundingRect(self) -> QRectF:
        return self.parentItem().rect()

    def paint(self, painter, option, widget=None) -> None:
        if not self.count:
            return
        r = self.parentItem().rect()
        per_row = max(1, min(self.count, 32))
        step = (r.width() - 2) / per_row
        size = max(0.3, min(step * 0.7, 1.2))
        rows = (self.count + per_row - 1) // per_row
        painter.setPen(Qt.NoPen)
        for i in range(self.count):
            row, col = divmod(i, per_row)
            painter.setBrush(style.SELECTION if i in self.used else style.BACKGROUND)
            painter.drawRect(QRectF(r.left() + 1 + col * step, r.top() + 0.3 + row * (size + 0.3), size, size))
            if row >= rows:
                break


class BundleItem(QGraphicsLineItem):
    """All cables between two devices, drawn as one line; its width grows with capacity."""

    def __init__(self, key: tuple[str, str], kind: str):
        super().__init__()
        self.key = key
        self.kind = kind
        self.link_ids: list[str] = []
        self.total_gbps = 0.0
        self.cables = 0
        self.setData(KIND_ROLE, "bundle")
        self.setFlags(QGraphicsItem.ItemIsSelectable)
        self.setZValue(1)

    def refresh(self, links) -> None:
        self.link_ids = [l.id for l in links]
        self.setData(ID_ROLE, self.link_ids[0] if self.link_ids else "")
        self.cables = sum(l.count for l in links)
        self.total_gbps = sum(l.bandwidth_gbps * l.count for l in links)
        kinds = {l.kind for l in links}
        self.kind = kinds.pop() if len(kinds) == 1 else "ethernet"
        self.setPen(style.link_pen(self.kind, self.total_gbps))
        each = {l.bandwidth_gbps for l in links}
        rate = f"{each.pop():g} Gb/s" if len(each) == 1 else "mixed"
        self.setToolTip(f"{self.key[0]} - {self.key[1]}: {self.cables} x {rate} {style.LINK_LABEL.get(self.kind, '')}"
                        f" ({self.total_gbps / 1000:g} Tb/s per direction)\nlinks: " + ", ".join(self.link_ids[:8])
                        + (" ..." if len(self.link_ids) > 8 else ""))

    def set_ends(self, a: QPointF, b: QPointF) -> None:
        self.setLine(a.x(), a.y(), b.x(), b.y())
