"""Colours, pens and level-of-detail thresholds of the canvas, in one place."""
from __future__ import annotations

import math

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPen

GRID_PX = 12.0  # snap grid of the canvas (rack width 48 = 4 cells)

# Scale (view zoom) above which each detail is drawn.
LOD_LINKS = 0.22  # individual cable bundles; below it, rack-to-rack aggregates
LOD_GRID = 0.35
# Names and ports show per item, from the zoom where they read (scene.detail.apply):
MIN_TEXT_PX = 6.0  # a name shows once its letters are this tall on screen
MIN_PORT_PX = 2.5  # a device's ports show once a port is this wide on screen
LOD_LINK_LABELS = 2.0  # "4x400G" beside each bundle, where it fits (links.py)
MAX_LINK_LABELS = 400  # more cables than this on screen: no cable labels
LINK_LABEL_PX = 8.0  # cable label letters, in screen pixels at any zoom
MAX_DRAWN_BUNDLES = 1200  # above this many cables in view, draw rack-to-rack aggregates instead
# Cables closer than this on screen cannot be told apart (a wall of colour over the racks): drawn as
# rack-to-rack bundles, the racks in front. The spacing is the layout's area over its cables' length.
MIN_CABLE_SPACING_PX = 2.0

BACKGROUND = QColor("#fbfbfc")
GRID = QColor("#e6e8ec")
TEXT = QColor("#1f2937")
MUTED = QColor("#6b7280")
SELECTION = QColor("#2563eb")
BOTTLENECK = QColor("#7c3aed")  # the critical-path outline: violet, outside the heat scale (green .. red)
PORT_USED = QColor("#1e3a8a")  # a port with a cable

RACK_FILL = QColor("#f3f4f6")
RACK_EDGE = QColor("#9ca3af")
NODE_FILL = {"nvswitch": QColor("#3b82f6"), "nvlink": QColor("#3b82f6"), "pcie": QColor("#60a5fa")}
SWITCH_FILL = {"leaf": QColor("#10b981"), "spine": QColor("#f59e0b"), "core": QColor("#ef4444"),
               "nvlink": QColor("#8b5cf6")}  # nvlink: an NVLink switch tray
NVLINK_SWITCH_EDGE = QColor("#4c1d95")
# An NVLink domain's band behind its trays: violet like its switch trays, see-through (one per rack).
NVLINK_DOMAIN_FILL = QColor(139, 92, 246, 46)
NVLINK_DOMAIN_EDGE = QColor("#7c3aed")
NVLINK_DOMAIN_TEXT = QColor("#4c1d95")
ETHERNET_SWITCH_EDGE = QColor("#7c2d12")
INFINIBAND_SWITCH_EDGE = QColor("#064e3b")

LINK_COLOR = {"infiniband": QColor("#2563eb"), "ethernet": QColor("#ea580c"), "nvlink": QColor("#16a34a"),
              "pcie": QColor("#6b7280")}
LINK_STYLE = {"infiniband": Qt.SolidLine, "ethernet": Qt.DashLine, "nvlink": Qt.SolidLine, "pcie": Qt.DotLine}
LINK_LABEL = {"infiniband": "InfiniBand", "ethernet": "Ethernet", "nvlink": "NVLink", "pcie": "PCIe"}


def link_pen(kind: str, total_gbps: float, selected: bool = False) -> QPen:
    """Colour and dash by kind; width by capacity (1 px at 100 Gb/s, +0.6 px per doubling)."""
    width = 0.8 + 0.5 * max(0.0, math.log2(max(total_gbps, 1.0) / 400.0))
    # Opaque colours, lightened towards the background: alpha-blended wide lines are ~10x
    # slower to rasterise in software.
    color = SELECTION if selected else mix(LINK_COLOR.get(kind, MUTED), BACKGROUND, 0.25)
    pen = QPen(color, min(width, 5.0))
    pen.setStyle(LINK_STYLE.get(kind, Qt.SolidLine))
    pen.setCosmetic(True)
    pen.setCapStyle(Qt.FlatCap)
    return pen


def mix(a: QColor, b: QColor, t: float) -> QColor:
    """a blended towards b by t (0..1), opaque."""
    return QColor(round(a.red() + (b.red() - a.red()) * t), round(a.green() + (b.green() - a.green()) * t),
                  round(a.blue() + (b.blue() - a.blue()) * t))


def brush(color: QColor) -> QBrush:
    return QBrush(color)


def edge_pen(color: QColor, width: float = 1.0) -> QPen:
    pen = QPen(color, width)
    pen.setCosmetic(True)
    return pen


def label_font(point_size: float = 7.0, bold: bool = False) -> QFont:
    font = QFont()
    font.setPointSizeF(point_size)
    font.setBold(bold)
    return font


def heat_color(utilization: float) -> QColor:
    """Green (idle) through amber to red (saturated), for link utilisation."""
    u = max(0.0, min(1.0, utilization))
    if u < 0.5:
        t = u / 0.5
        return QColor.fromRgbF(0.13 + t * (0.96 - 0.13), 0.64 + t * (0.62 - 0.64), 0.3 - t * 0.26)
    t = (u - 0.5) / 0.5
    return QColor.fromRgbF(0.96 + t * (0.86 - 0.96), 0.62 - t * 0.5, 0.04 + t * 0.1)


def heat_pen(bucket: int, total_gbps: float) -> QPen:
    """Pen for a utilisation bucket (0..10)."""
    pen = link_pen("infiniband", total_gbps)
    pen.setColor(heat_color(bucket / 10.0))
    pen.setStyle(Qt.SolidLine)
    return pen
