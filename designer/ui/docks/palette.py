"""The parts palette: drag a part onto the canvas; pick a link tool to draw cables."""
from __future__ import annotations

from urllib.parse import parse_qsl, urlencode

from PySide6.QtCore import QMimeData, QSize, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPainter, QPen, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView, QButtonGroup, QComboBox, QFormLayout, QGridLayout, QLabel, QListWidget, QListWidgetItem,
    QSpinBox, QToolButton, QVBoxLayout, QWidget,
)

from ...core.model import default_catalog
from ..canvas import style
from ..canvas.view import MIME_PART

PARTS = [
    ("rack", "Rack", "A 42U rack; servers and switches snap into its slots"),
    ("server", "Server", "A server with the accelerators and NICs chosen below; drop it into a rack"),
    ("accelerator", "Accelerator", "Drop onto a server to add one accelerator"),
    ("nic", "NIC", "Drop onto a server to add one NIC"),
    ("infiniband-switch", "InfiniBand switch", "A leaf switch of the InfiniBand fabric"),
    ("ethernet-switch", "Ethernet switch", "A leaf switch of the Ethernet (RoCE) fabric"),
]
LINK_TOOLS = [("infiniband", "InfiniBand link"), ("ethernet", "Ethernet link"), ("nvlink", "NVLink"),
              ("pcie", "PCIe")]


def part_description(kind: str, **params) -> str:
    return kind + ("?" + urlencode(params) if params else "")


def parse_part(text: str) -> tuple[str, dict]:
    kind, _, query = text.partition("?")
    return kind, dict(parse_qsl(query))


def icon(kind: str) -> QIcon:
    """Simple, consistent glyphs drawn with the canvas's own colours."""
    pix = QPixmap(32, 32)
    pix.fill(Qt.transparent)
    p = QPainter(pix)
    p.setRenderHint(QPainter.Antialiasing)
    pen = QPen(QColor("#374151"), 1.4)
    p.setPen(pen)
    if kind == "rack":
        p.setBrush(style.RACK_FILL)
        p.drawRect(9, 2, 14, 28)
        for y in (8, 14, 20, 26):
            p.drawLine(11, y, 21, y)
    elif kind == "server":
        p.setBrush(style.NODE_FILL["nvswitch"])
        p.drawRoundedRect(3, 9, 26, 14, 2, 2)
        p.setPen(QPen(QColor("white"), 1.2))
        for x in range(7, 26, 4):
            p.drawLine(x, 13, x, 19)
    elif kind == "accelerator":
        p.setBrush(QColor("#1d4ed8"))
        p.drawRect(9, 9, 14, 14)
        for k in range(11, 22, 3):
            p.drawLine(k, 5, k, 9)
            p.drawLine(k, 23, k, 27)
            p.drawLine(5, k, 9, k)
            p.drawLine(23, k, 27, k)
    elif kind == "nic":
        p.setBrush(QColor("#e5e7eb"))
        p.drawRect(6, 11, 20, 10)
        p.setBrush(QColor("#111827"))
        p.drawRect(20, 13, 4, 6)
    elif kind.endswith("switch"):
        fabric = kind.split("-")[0]
        p.setBrush(style.SWITCH_FILL["leaf"])
        p.setPen(QPen(style.INFINIBAND_SWITCH_EDGE if fabric == "infiniband" else style.ETHERNET_SWITCH_EDGE, 1.6))
        p.drawRoundedRect(3, 11, 26, 10, 2, 2)
        p.setPen(QPen(QColor("white"), 1.2))
        for x in range(6, 27, 3):
            p.drawPoint(x, 16)
    else:  # link tools
        pen = style.link_pen(kind, 800)
        pen.setCosmetic(False)
        pen.setWidthF(3)
        p.setPen(pen)
        p.drawLine(4, 26, 28, 6)
    p.end()
    return QIcon(pix)


class PartList(QListWidget):
    def __init__(self, palette: "Palette"):
        super().__init__()
        self.palette = palette
        self.setDragEnabled(True)
        self.setDragDropMode(QAbstractItemView.DragOnly)
        self.setIconSize(QSize(28, 28))
        self.setSpacing(2)

    def mimeData(self, items) -> QMimeData:
        data = QMimeData()
        if items:
            data.setData(MIME_PART, self.palette.describe(items[0].data(Qt.UserRole)).encode())
        return data

    def mimeTypes(self):
        return [MIME_PART]


class Palette(QWidget):
    linkToolChanged = Signal(object)  # kind or None

    def __init__(self, parent=None):
        super().__init__(parent)
        catalog = default_catalog()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(QLabel("<b>Parts</b> — drag onto the canvas"))
        self.list = PartList(self)
        for kind, label, tip in PARTS:
            item = QListWidgetItem(icon(kind), label)
            item.setData(Qt.UserRole, kind)
            item.setToolTip(tip)
            self.list.addItem(item)
        self.list.setFixedHeight(len(PARTS) * 34 + 10)
        layout.addWidget(self.list)

        form = QFormLayout()
        self.accelerator = QComboBox()
        self.accelerator.addItems(catalog.names("accelerators"))
        self.accelerator.setCurrentText("H100-SXM5-80GB")
        self.count = QSpinBox()
        self.count.setRange(1, 72)
        self.count.setValue(8)
        self.nic_gbps = QComboBox()
        self.nic_gbps.addItems(["100", "200", "400", "800"])
        self.nic_gbps.setCurrentText("400")
        self.nic_kind = QComboBox()
        self.nic_kind.addItems(["infiniband", "ethernet"])
        self.nic_model = QLabel()  # follows kind and speed: the catalog NIC a new server gets
        self.nic_model.setToolTip("The NIC model of a new server (from the catalog, by kind and speed)")
        self.switch_model = QComboBox()
        self.switch_model.addItems(catalog.names("switches"))
        self.switch_model.setToolTip("Model of a new switch of this model's fabric (the other fabric's "
                                     "switches take the catalog model of the NIC speed)")
        self.switch_radix = QSpinBox()
        self.switch_radix.setRange(1, 1024)
        self.switch_radix.setToolTip("Ports of a new switch of the chosen model")
        form.addRow("Accelerator", self.accelerator)
        form.addRow("Per server", self.count)
        form.addRow("NIC Gb/s", self.nic_gbps)
        form.addRow("NICs", self.nic_kind)
        form.addRow("NIC model", self.nic_model)
        form.addRow("Switch", self.switch_model)
        form.addRow("Radix", self.switch_radix)
        layout.addLayout(form)
        self._catalog = catalog
        self.nic_gbps.currentTextChanged.connect(self._show_nic_model)
        self.nic_kind.currentTextChanged.connect(self._show_nic_model)
        self.switch_model.currentTextChanged.connect(
            lambda name: self.switch_radix.setValue(catalog.switch(name).radix) if name else None)
        self.switch_model.setCurrentText("QM9700-NDR")
        self.switch_radix.setValue(catalog.switch("QM9700-NDR").radix)
        self._show_nic_model()

        layout.addWidget(QLabel("<b>Link tools</b> — drag from device to device"))
        grid = QGridLayout()
        self.tools = QButtonGroup(self)
        self.tools.setExclusive(False)
        self.tool_buttons: dict[str, QToolButton] = {}
        for i, (kind, label) in enumerate(LINK_TOOLS):
            button = QToolButton()
            button.setText(label)
            button.setIcon(icon(kind))
            button.setCheckable(True)
            button.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)
            button.setToolTip(f"Draw {label} cables: press on one device, release on another (Esc to stop)")
            button.toggled.connect(lambda on, k=kind: self._tool_toggled(k, on))
            grid.addWidget(button, i // 2, i % 2)
            self.tool_buttons[kind] = button
        layout.addLayout(grid)
        layout.addStretch(1)
        from ..common.wheel_guard import guard_wheel

        guard_wheel(self)  # the wheel never steps the part's options unless clicked into

    # ---- the open design's own parts ----
    def follow_document(self, qdoc) -> None:
        """Start from the parts of the open design now and each time a document is opened,
        made or generated (not on every edit: the user's own picks stay until then)."""
        qdoc.replaced.connect(lambda: self.use_parts_of(qdoc.doc))
        self.use_parts_of(qdoc.doc)

    def expect_parts(self, spec, parts) -> None:
        """The parts of a design about to be shown, worked out off the UI thread (File > Open: a pass
        over 131k servers and switches, ~0.1 s); used if the next design shown is that very spec."""
        self._expected_parts = (spec, parts)

    def use_parts_of(self, doc) -> None:
        from ...core.model.parts_in_use import parts_in_use

        expected, self._expected_parts = getattr(self, "_expected_parts", None), None
        parts = expected[1] if expected is not None and expected[0] is doc.spec else parts_in_use(doc, self._catalog)
        if parts.accelerator and self.accelerator.findText(parts.accelerator) >= 0:
            self.accelerator.setCurrentText(parts.accelerator)
        if parts.gpus_per_node:
            self.count.setValue(parts.gpus_per_node)
        if parts.fabric:
            self.nic_kind.setCurrentText(parts.fabric)
        if parts.nic_gbps:
            text = f"{parts.nic_gbps:g}"
            if self.nic_gbps.findText(text) < 0:
                self.nic_gbps.addItem(text)
            self.nic_gbps.setCurrentText(text)
        if parts.switch_model and self.switch_model.findText(parts.switch_model) >= 0:
            self.switch_model.setCurrentText(parts.switch_model)
        if parts.switch_radix:
            self.switch_radix.setValue(parts.switch_radix)
        self._show_nic_model()

    def _show_nic_model(self, *_) -> None:
        try:
            nic = self._catalog.nic_for(self.nic_kind.currentText(), float(self.nic_gbps.currentText()))
        except ValueError:
            nic = None
        self.nic_model.setText(nic.name if nic else "(no catalog NIC of this kind and speed)")

    def describe(self, kind: str) -> str:
        if kind == "server":
            return part_description("server", accelerator=self.accelerator.currentText(), count=self.count.value(),
                                    nic_gbps=self.nic_gbps.currentText(), nic_kind=self.nic_kind.currentText())
        if kind == "accelerator":
            return part_description("accelerator", accelerator=self.accelerator.currentText())
        if kind == "nic":
            return part_description("nic", nic_gbps=self.nic_gbps.currentText(), nic_kind=self.nic_kind.currentText())
        if kind.endswith("-switch"):
            model = self._catalog.switch(self.switch_model.currentText())
            if model.kind == kind.split("-")[0]:  # the chosen model and radix
                return part_description(kind, port_gbps=f"{model.port_gbps:g}", model=model.name,
                                        radix=self.switch_radix.value())
            return part_description(kind, port_gbps=self.nic_gbps.currentText())
        return kind

    def _tool_toggled(self, kind: str, on: bool) -> None:
        if on:
            for other, button in self.tool_buttons.items():
                if other != kind and button.isChecked():
                    button.blockSignals(True)
                    button.setChecked(False)
                    button.blockSignals(False)
            self.linkToolChanged.emit(kind)
        elif not any(b.isChecked() for b in self.tool_buttons.values()):
            self.linkToolChanged.emit(None)

    def clear_tool(self) -> None:
        for button in self.tool_buttons.values():
            button.setChecked(False)
