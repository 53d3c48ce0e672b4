"""NVLink domains on the canvas: which GPUs share NVLink, seen at once.

Each rack holding trays of a multi-server NVLink domain (servers naming one nvlink_domain, and the
domain's NVLink switch trays) gets a rounded translucent band behind those trays, and, where it
fits, a label "NVL72 · nvl0 · 72 GPUs" in the free units above them. Stock Qt items (C++ paint),
children of the rack item, so they move with it. One band per (rack, domain): a few hundred for
a 16k-GPU design.
"""
from __future__ import annotations

from collections import defaultdict

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QPainterPath
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem, QGraphicsSimpleTextItem

from ...core.model.geometry import RACK_WIDTH_PX, UNIT_HEIGHT_PX, rack_height_px
from . import style

BAND_INSET_PX = 1.0  # the band sits just inside the rack's edge, around the trays (3 px in)
BAND_PAD_PX = 1.5  # above the top tray and below the bottom one
BAND_RADIUS_PX = 3.0
MIN_LABEL_SCALE = 0.55  # smaller than this the label would not read: it is left out
DOMAIN_Z = 1.0  # above the rack (0), below its servers and switches (2)


def domain_label(domain: str, gpus: int) -> str:
    return f"NVL{gpus} · {domain} · {gpus:,} GPUs"


class DomainBand(QGraphicsPathItem):
    """The trays of one domain in one rack; not selectable (clicks reach the trays under it)."""

    def __init__(self, rack_item, domain: str, gpus: int, top_px: float, bottom_px: float, free_above_px: float):
        super().__init__(rack_item)
        self.domain = domain
        rect = QRectF(BAND_INSET_PX, top_px - BAND_PAD_PX, RACK_WIDTH_PX - 2 * BAND_INSET_PX,
                      bottom_px - top_px + 2 * BAND_PAD_PX)
        path = QPainterPath()
        path.addRoundedRect(rect, BAND_RADIUS_PX, BAND_RADIUS_PX)
        self.setPath(path)
        self.setBrush(style.brush(style.NVLINK_DOMAIN_FILL))
        self.setPen(style.edge_pen(style.NVLINK_DOMAIN_EDGE, 1.6))
        self.setZValue(DOMAIN_Z)
        self.setAcceptedMouseButtons(Qt.NoButton)
        self.setFlag(QGraphicsItem.ItemIsSelectable, False)
        self.setToolTip(f"NVLink domain {domain}: {gpus:,} GPUs share NVLink (its servers and NVLink switch "
                        "trays are inside the band)")
        self.label = QGraphicsSimpleTextItem(domain_label(domain, gpus).replace(" · ", "\n", 1), self)
        self.label.setFont(style.label_font(5.0, bold=True))
        self.label.setBrush(style.NVLINK_DOMAIN_TEXT)
        self.label_min_scale = float("inf")
        self.label_fits = self._place_label(rect, free_above_px)
        self.label.setVisible(self.label_fits)

    def _place_label(self, band: QRectF, free_above_px: float) -> bool:
        """In the free units above the band, scaled to the rack's width; False when it would not read."""
        bounds = self.label.boundingRect()
        room_w, room_h = band.width() - 2, free_above_px - 2
        scale = min(1.0, room_w / max(bounds.width(), 1e-6), room_h / max(bounds.height(), 1e-6))
        if scale < MIN_LABEL_SCALE:
            return False
        self.label.setScale(scale)
        self.label.setPos(band.left() + (band.width() - bounds.width() * scale) / 2,
                          band.top() - 1 - bounds.height() * scale)
        # shown from the zoom where a line of it is MIN_TEXT_PX tall (scene.detail.apply); two lines
        self.label_min_scale = style.MIN_TEXT_PX / max(bounds.height() * scale / 2, 1e-6)
        return True


def build_domain_bands(doc, racks: dict) -> list[DomainBand]:
    """Bands for every (rack, multi-server domain) pair; `racks` maps rack id -> RackItem."""
    gpus: dict[str, int] = defaultdict(int)
    servers: dict[str, int] = defaultdict(int)
    spans: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    for node in doc.nodes:
        if node.nvlink_domain:
            gpus[node.nvlink_domain] += node.accelerator_count
            servers[node.nvlink_domain] += 1
            if node.rack is not None and node.slot is not None:
                spans[(node.rack, node.nvlink_domain)].append((node.slot, node.slot + node.height_units))
    for sw in doc.switches:
        if sw.nvlink_domain and sw.rack is not None and sw.slot is not None:
            spans[(sw.rack, sw.nvlink_domain)].append((sw.slot, sw.slot + sw.height_units))
    starts_in_rack: dict[str, list[tuple[int, str]]] = defaultdict(list)  # (lowest slot, domain) per rack
    for (rack_id, domain), units in spans.items():
        starts_in_rack[rack_id].append((min(u[0] for u in units), domain))
    bands = []
    for (rack_id, domain), units in spans.items():
        rack_item = racks.get(rack_id)
        if rack_item is None or servers.get(domain, 0) < 2:  # a one-server domain is just the server
            continue
        low, high = min(u[0] for u in units), max(u[1] for u in units)
        height = rack_height_px(rack_item.units)
        top, bottom = height - high * UNIT_HEIGHT_PX, height - low * UNIT_HEIGHT_PX
        above = [start for start, other in starts_in_rack[rack_id] if other != domain and start >= high]
        free_units = min(above, default=rack_item.units) - high  # up to the next domain, or the rack's top
        bands.append(DomainBand(rack_item, domain, gpus[domain], top, bottom, free_units * UNIT_HEIGHT_PX))
    return bands

