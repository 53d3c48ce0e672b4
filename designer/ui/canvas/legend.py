"""The canvas legend: what the colours mean, in the view's bottom-left corner.

Cable kinds (colour and dash) of the cables in the design, the device colours, and, while link
heat is on (View > Link Heat), the heat scale that then replaces the kind colours. A small
widget over the view (not a scene item), so it stays put and readable at every zoom.
"""
from __future__ import annotations

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QLinearGradient, QPainter, QPen
from PySide6.QtWidgets import QWidget

from . import heat as link_heat
from . import style

MARGIN_PX = 8
ROW_PX = 15
SWATCH_PX = 22
DEVICES = (("server", style.NODE_FILL["nvswitch"]), ("leaf", style.SWITCH_FILL["leaf"]),
           ("spine", style.SWITCH_FILL["spine"]), ("core", style.SWITCH_FILL["core"]),
           ("NVLink tray", style.SWITCH_FILL["nvlink"]))


class CanvasLegend(QWidget):
    def __init__(self, view):
        super().__init__(view)
        self.view = view
        self.heat = False
        self._kinds: tuple[str, ...] = ()
        self._devices: tuple[str, ...] = ()
        self._kinds_of = None  # (scene, bundles version) the kinds were read for
        self.setAttribute(Qt.WA_TransparentForMouseEvents)
        font = QFont()
        font.setPixelSize(11)
        self.setFont(font)
        self.setToolTip("Legend")
        self.relayout()
        # another design's cables: sized and placed now (after the scene's rebuild), not in the canvas's
        # next paint, where moving this widget had the canvas painted twice (~10 ms at 131k GPUs)
        view.scene().qdoc.replaced.connect(self._follow_cables)

    # ---- what it shows ----
    def set_heat(self, on: bool) -> None:
        self.heat = on
        self.relayout()

    def kinds(self) -> tuple[str, ...]:
        """The cable kinds in the design, in a fixed order (read again when the cables change)."""
        scene = self.view.scene()
        key = (id(scene), scene.cables.version)
        if key != self._kinds_of:
            present = scene.link_layer.bundles.kinds_present()
            self._kinds = tuple(k for k in style.LINK_LABEL if k in present)
            doc = scene.doc
            shown = {"server"} if doc.nodes else set()
            shown |= {"NVLink tray" if s.fabric == "nvlink" else s.tier for s in doc.switches}
            self._devices = tuple(name for name, _c in DEVICES if name in shown)
            self._kinds_of = key
        return self._kinds

    def devices(self) -> tuple[str, ...]:
        self.kinds()
        return self._devices

    def rows(self) -> list[tuple[str, str]]:
        """(what, text) per line: ("kind", ...), ("device", ...), ("heat", ...), for painting and tests."""
        if self.heat:  # which heat (View > Heat by Busiest Phase): share of the step, or busiest phase
            mode = self.view.scene().heat.mode
            out = [("title", link_heat.LEGEND_TITLE[mode]), ("heat", link_heat.LEGEND_SCALE[mode]),
                   ("bottleneck", link_heat.LEGEND_OUTLINE[mode])]
        else:
            out = [("title", "Cables")]
            out += [("kind", k) for k in self.kinds()]
        if self.devices():
            out += [("title", "Devices")] + [("device", name) for name in self.devices()]
        return out

    # ---- size and place ----
    def relayout(self) -> None:
        metrics = QFontMetricsF(self.font())
        width = max(metrics.horizontalAdvance(style.LINK_LABEL.get(t, t)) for _w, t in self.rows())
        self.resize(int(SWATCH_PX + 14 + width + 2 * MARGIN_PX), int(len(self.rows()) * ROW_PX + 2 * MARGIN_PX))
        self.place()
        self.update()

    def place(self) -> None:
        viewport = self.view.viewport().geometry()
        self.move(viewport.left() + MARGIN_PX, viewport.bottom() - self.height() - MARGIN_PX)

    def _follow_cables(self) -> None:
        if self._kinds_of is None or self._kinds_of[1] != self.view.scene().cables.version:
            self.relayout()  # cables of other kinds came or went

    def paintEvent(self, _event) -> None:
        self._follow_cables()
        painter = QPainter(self)
        painter.setRenderHint(QPainter.Antialiasing, True)
        painter.setPen(QPen(style.RACK_EDGE, 1))
        painter.setBrush(QColor(255, 255, 255, 235))
        painter.drawRoundedRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), 4, 4)
        y = MARGIN_PX
        for what, text in self.rows():
            mid = y + ROW_PX / 2
            left, text_x = MARGIN_PX, MARGIN_PX + SWATCH_PX + 8
            if what == "title":
                font = QFont(self.font())
                font.setBold(True)
                painter.setFont(font)
                painter.setPen(style.TEXT)
                painter.drawText(QRectF(left, y, self.width(), ROW_PX), Qt.AlignVCenter, text)
                painter.setFont(self.font())
                y += ROW_PX
                continue
            if what == "kind":
                pen = style.link_pen(text, 800.0)
                pen.setWidthF(2.0)
                painter.setPen(pen)
                painter.drawLine(QLineF(left, mid, left + SWATCH_PX, mid))
                text = style.LINK_LABEL.get(text, text)
            elif what == "heat":
                gradient = QLinearGradient(QPointF(left, 0), QPointF(left + SWATCH_PX, 0))
                for u in (0.0, 0.5, 1.0):
                    gradient.setColorAt(u, style.heat_color(u))
                painter.setPen(Qt.NoPen)
                painter.setBrush(gradient)
                painter.drawRect(QRectF(left, mid - 3, SWATCH_PX, 6))
            elif what == "bottleneck":
                pen = QPen(style.BOTTLENECK, 4.0)
                painter.setPen(pen)
                painter.drawLine(QLineF(left, mid, left + SWATCH_PX, mid))
            else:  # a device colour
                color = dict(DEVICES)[text]
                painter.setPen(QPen(color.darker(140), 1))
                painter.setBrush(color)
                painter.drawRect(QRectF(left + 2, mid - 4, SWATCH_PX - 4, 8))
            painter.setPen(style.TEXT)
            painter.drawText(QRectF(text_x, y, self.width() - text_x, ROW_PX), Qt.AlignVCenter, text)
            y += ROW_PX
