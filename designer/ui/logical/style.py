"""Colours and sizes of the logical fabric view. The tier colours match the rack canvas's
(leaf green, spine amber, core red, NVLink violet, servers blue) so a part reads the same in both."""
from __future__ import annotations

from PySide6.QtGui import QColor

BACKGROUND = QColor("#fbfbfc")
TEXT = QColor("#1f2937")
MUTED = QColor("#6b7280")
SELECTION = QColor("#1d4ed8")  # darker than the InfiniBand lines it marks

BLOCK_FILL = {"core": QColor("#fee2e2"), "spine": QColor("#fef3c7"), "leaf": QColor("#d1fae5"),
              "compute": QColor("#dbeafe")}
BLOCK_EDGE = {"core": QColor("#ef4444"), "spine": QColor("#f59e0b"), "leaf": QColor("#10b981"),
              "compute": QColor("#3b82f6")}
DOMAIN_FILL = QColor("#ede9fe")
DOMAIN_EDGE = QColor("#7c3aed")

POD_FILL = QColor(99, 102, 241, 18)
POD_EDGE = QColor("#a5b4fc")
POD_TEXT = QColor("#4338ca")
RAIL_EDGE = QColor("#6ee7b7")
RAIL_TEXT = QColor("#047857")

LINK_COLOR = {"infiniband": QColor("#2563eb"), "ethernet": QColor("#ea580c"), "nvlink": QColor("#16a34a"),
              "pcie": QColor("#6b7280"), "mixed": QColor("#6b7280")}
LINE_LIGHTEN = 0.45  # unselected lines, towards the background: a selected one (full colour, wider) stands out


def lighter(color: QColor, t: float = LINE_LIGHTEN) -> QColor:
    """`color` blended towards the background by t (0..1), opaque (fast to paint)."""
    b = BACKGROUND
    return QColor(round(color.red() + (b.red() - color.red()) * t), round(color.green() + (b.green() - color.green()) * t),
                  round(color.blue() + (b.blue() - color.blue()) * t))


RATIO_OK = QColor("#047857")  # 1:1 or better
RATIO_OVER = QColor("#b45309")  # oversubscribed

FONT_PT = 10.0
LABEL_LIMIT_PER_GAP = 64  # bundles in one gap above which no bundle gets its own label
TIER_LABEL_PX = 230.0  # room left of the rows for the tier names and ratios
