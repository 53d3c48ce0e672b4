"""The two sections of the "Generate fat-tree fabric" form: the servers and the network.

Each section owns its fields: it builds them, reads them as `generate_fat_tree` options and checks
values before setting them (`setters` returns the changes to make, or raises ValueError and changes
nothing). The dialog lays both out in one form.
"""
from __future__ import annotations

import math

from PySide6.QtCore import QLocale, Qt
from PySide6.QtGui import QDoubleValidator, QIntValidator
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QSpinBox

from ...core.model.catalog import Catalog

NIC_SPEEDS_GBPS = (100, 200, 400, 800)
SWITCH_RADICES = (32, 36, 40, 48, 64, 128, 144, 256)
FABRICS = (("InfiniBand", "infiniband"), ("Ethernet", "ethernet"))
TIERS = (("Auto (fewest that fit)", None), ("2 (leaf, spine)", 2), ("3 (leaf, spine, core)", 3))


def number(text: str) -> float | None:
    """A number typed into an editable combo box (C locale, as its validator accepts), or None."""
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


class _RatioSpinBox(QDoubleSpinBox):
    """An oversubscription shown as "2:1" or "1.5:1" (no trailing zeros)."""

    def textFromValue(self, value: float) -> str:
        text = self.locale().toString(value, "f", self.decimals())
        point = self.locale().decimalPoint()
        if point in text:
            text = text.rstrip("0").rstrip(point)
        return text


class ServerFields:
    """Servers, accelerator, GPUs per server, NVLink domain and NICs per server. The NVLink domain's
    choices follow the accelerator and the server size."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self.servers = QSpinBox()
        self.servers.setRange(1, 16384)
        self.servers.setGroupSeparatorShown(True)
        self.servers.setAccelerated(True)
        self.servers.setToolTip("Servers (nodes) in the cluster. --nodes")

        self.accelerator = QComboBox()
        for name in catalog.names("accelerators"):
            acc = catalog.accelerators[name]
            self.accelerator.addItem(name, name)
            if acc.vendor:
                self.accelerator.setItemData(self.accelerator.count() - 1, f"{acc.vendor} {name}", Qt.ToolTipRole)
        self.accelerator.setToolTip("Accelerator model of every server, from the parts catalog. --gpu")

        self.gpus_per_node = QSpinBox()
        self.gpus_per_node.setRange(1, 72)
        self.gpus_per_node.setToolTip("Accelerators in one server (8 for HGX/DGX-class servers). --gpus-per-node")

        self.nvlink_domain = QComboBox()
        self.nvlink_domain.setToolTip(
            "GPUs that share one NVLink domain: a whole number of servers (trays), up to the accelerator's "
            "largest domain (72 for GB200/GB300 NVL72 racks, whose 9 NVLink switch trays are built too). "
            "One server for HGX-class parts. --nvlink-domain-gpus")

        self.nics_per_node = QSpinBox()
        self.nics_per_node.setRange(0, 16)
        self.nics_per_node.setToolTip("Scale-out NIC ports per server; each takes one cable to a leaf switch. "
                                      "Usually one per GPU. --nics-per-node")

    def rows(self) -> list[tuple[str, object]]:
        return [("&Servers:", self.servers), ("&Accelerator:", self.accelerator),
                ("&GPUs per server:", self.gpus_per_node), ("NVLink &domain GPUs:", self.nvlink_domain),
                ("&NICs per server:", self.nics_per_node)]

    def connect(self, update) -> None:
        for spin in (self.servers, self.gpus_per_node, self.nics_per_node):
            spin.valueChanged.connect(update)
        for combo in (self.accelerator, self.nvlink_domain):
            combo.currentIndexChanged.connect(update)

    def options(self) -> dict:
        return dict(nodes=self.servers.value(), gpu=self.accelerator.currentData(),
                    gpus_per_node=self.gpus_per_node.value(), nics_per_node=self.nics_per_node.value())

    def domain_option(self) -> dict:
        """nvlink_domain_gpus, only for a domain of several servers (one server is the default)."""
        domain = self.nvlink_domain.currentData()
        if domain and domain != self.gpus_per_node.value():
            return {"nvlink_domain_gpus": domain}
        return {}

    def setters(self, kw: dict) -> list:
        """The changes that set the server fields of `kw`; ValueError, before any, for a bad value."""
        actions = []
        for key, spin in (("nodes", self.servers), ("gpus_per_node", self.gpus_per_node),
                          ("nics_per_node", self.nics_per_node)):
            if key in kw:
                value = kw[key]
                if isinstance(value, bool) or not isinstance(value, int) or not spin.minimum() <= value <= spin.maximum():
                    raise ValueError(f"{key} must be a whole number {spin.minimum()}..{spin.maximum()}, got {value!r}")
                actions.append(lambda spin=spin, value=value: spin.setValue(value))
        if "gpu" in kw:
            canonical = self.catalog.resolve("accelerators", str(kw["gpu"])) if kw["gpu"] else None
            index = self.accelerator.findData(canonical)
            if index < 0:
                raise ValueError(f"unknown accelerator {kw['gpu']!r}; known: {', '.join(self.catalog.names('accelerators'))}")
            actions.append(lambda index=index: self.accelerator.setCurrentIndex(index))
        return actions

    def domain_setters(self, kw: dict) -> list:
        """The changes that set the NVLink domain, to run after the accelerator and server size are set."""
        actions = []
        if kw.get("nvlink_domain_gpus") is not None or "gpu" in kw or "gpus_per_node" in kw:
            actions.append(self.refresh_domain_choices)
        if kw.get("nvlink_domain_gpus") is not None:
            value = kw["nvlink_domain_gpus"]
            g = kw.get("gpus_per_node", self.gpus_per_node.value())
            valid = self.domain_choices(self.catalog.resolve("accelerators", str(kw["gpu"])) if "gpu" in kw
                                        else None, g)
            if isinstance(value, bool) or value not in valid:
                raise ValueError(f"nvlink_domain_gpus must be one of {', '.join(map(str, valid))}, got {value!r}")
            actions.append(lambda value=value: self.nvlink_domain.setCurrentIndex(self.nvlink_domain.findData(value)))
        return actions

    def _domain_max(self, gpu, gpus_per_node: int) -> int:
        acc = self.catalog.accelerators.get(self.catalog.resolve("accelerators", str(gpu)) or "")
        return max(acc.scale_up_domain_max, gpus_per_node) if acc is not None else gpus_per_node

    def domain_choices(self, gpu=None, gpus_per_node: int | None = None) -> list[int]:
        """Valid --nvlink-domain-gpus values: whole servers up to the accelerator's largest domain."""
        gpu = gpu if gpu is not None else self.accelerator.currentData()
        g = gpus_per_node or self.gpus_per_node.value()
        return list(range(g, self._domain_max(gpu, g) + 1, g))

    def refresh_domain_choices(self) -> None:
        """Refill the domain combo for the accelerator and server size; keep the value where it is
        still valid, else the largest valid one below it (clamped to one server)."""
        choices = self.domain_choices()
        combo = self.nvlink_domain
        if [combo.itemData(i) for i in range(combo.count())] == choices:
            return
        g = choices[0]
        was = combo.currentData() or 0
        if combo.count() and was == combo.itemData(0):
            was = g  # one server stays one server (8 GPUs of an HGX board are not 2 GB200 trays)
        blocked = combo.blockSignals(True)
        combo.clear()
        for value in choices:
            trays = value // g
            label = (f"{value} (one server)" if trays == 1
                     else f"{value} (NVL{value}, {trays} servers)")
            combo.addItem(label, value)
        keep = max([v for v in choices if v <= was] or [g])
        combo.setCurrentIndex(choices.index(keep))
        combo.blockSignals(blocked)
        combo.setEnabled(len(choices) > 1)  # HGX-class parts: the domain is the server


class NetworkFields:
    """NIC speed, fabric, tiers, switch radix, oversubscription and rail optimization."""

    def __init__(self):
        self.nic_gbps = QComboBox()
        self.nic_gbps.setEditable(True)
        self.nic_gbps.setInsertPolicy(QComboBox.NoInsert)
        self.nic_gbps.addItems([str(v) for v in NIC_SPEEDS_GBPS])
        gbps_validator = QDoubleValidator(0.001, 100000.0, 3, self.nic_gbps)
        gbps_validator.setNotation(QDoubleValidator.StandardNotation)
        gbps_validator.setLocale(QLocale.c())
        self.nic_gbps.lineEdit().setValidator(gbps_validator)
        self.nic_gbps.setToolTip("Line rate of every NIC and switch port, in Gb/s (type any value). --nic-gbps")

        self.fabric = QComboBox()
        for label, value in FABRICS:
            self.fabric.addItem(label, value)
        self.fabric.setToolTip("Scale-out network technology of the switches and cables. --fabric")

        self.tiers = QComboBox()
        for label, value in TIERS:
            self.tiers.addItem(label, value)
        self.tiers.setToolTip("Switch tiers. Auto picks the fewest that hold the servers: a single switch, "
                              "2 tiers (leaf-spine) or 3 tiers (pods of leaves and spines, plus cores). --tiers")

        self.switch_radix = QComboBox()
        self.switch_radix.setEditable(True)
        self.switch_radix.setInsertPolicy(QComboBox.NoInsert)
        self.switch_radix.addItems([str(v) for v in SWITCH_RADICES])
        radix_validator = QIntValidator(2, 1 << 20, self.switch_radix)
        radix_validator.setLocale(QLocale.c())
        self.switch_radix.lineEdit().setValidator(radix_validator)
        self.switch_radix.setToolTip("Ports per switch, the same for leaves, spines and cores (type any value). "
                                     "--switch-radix")

        self.oversubscription = _RatioSpinBox()
        self.oversubscription.setRange(1.0, 16.0)
        self.oversubscription.setSingleStep(0.5)
        self.oversubscription.setDecimals(2)
        self.oversubscription.setSuffix(":1")
        self.oversubscription.setToolTip("Leaf down:up ratio R: a leaf has R times as many ports facing the "
                                         "servers as facing the spines. 1:1 is non-blocking; 2:1 has half as much "
                                         "bandwidth up as down and needs fewer spines. --oversubscription")

        self.rail_optimized = QCheckBox("Rail-optimized")
        self.rail_optimized.setToolTip("On: NIC i of every server goes to a leaf of rail i, so GPUs of the "
                                       "same index meet one hop away. Off: all NICs of a server go to one "
                                       "leaf. --rail-optimized / --no-rail-optimized")

    def rows(self) -> list[tuple[str, object]]:
        return [("NIC &speed (Gb/s):", self.nic_gbps), ("&Fabric:", self.fabric), ("&Tiers:", self.tiers),
                ("Switch &radix:", self.switch_radix), ("&Oversubscription:", self.oversubscription),
                ("", self.rail_optimized)]

    def connect(self, update) -> None:
        self.oversubscription.valueChanged.connect(update)
        for combo in (self.fabric, self.tiers):
            combo.currentIndexChanged.connect(update)
        for combo in (self.nic_gbps, self.switch_radix):
            combo.currentTextChanged.connect(update)
        self.rail_optimized.toggled.connect(update)

    def options(self) -> dict:
        """nic_gbps or switch_radix None when what is typed is not a number."""
        gbps = number(self.nic_gbps.currentText())
        radix = number(self.switch_radix.currentText())
        return dict(
            nic_gbps=gbps,
            fabric=self.fabric.currentData(),
            tiers=self.tiers.currentData(),
            switch_radix=int(radix) if radix is not None and radix.is_integer() else radix,
            oversubscription=self.oversubscription.value(),
            rail_optimized=self.rail_optimized.isChecked(),
        )

    def setters(self, kw: dict) -> list:
        """The changes that set the network fields of `kw`; ValueError, before any, for a bad value."""
        actions = []
        for key, combo in (("nic_gbps", self.nic_gbps), ("switch_radix", self.switch_radix)):
            if key in kw:
                value = kw[key]
                if isinstance(value, bool) or number(str(value)) is None:
                    raise ValueError(f"{key} must be a number, got {value!r}")
                actions.append(lambda combo=combo, value=value: combo.setCurrentText(f"{float(value):g}"))
        for key, combo, choices in (("fabric", self.fabric, FABRICS), ("tiers", self.tiers, TIERS)):
            if key in kw:
                value = kw[key]
                if isinstance(value, str):
                    value = value.lower()
                index = next((i for i, (_, v) in enumerate(choices)
                              if v == value and not isinstance(value, bool)), -1)
                if index < 0:
                    raise ValueError(f"{key} must be one of {', '.join(repr(v) for _, v in choices)}, got {kw[key]!r}")
                actions.append(lambda combo=combo, index=index: combo.setCurrentIndex(index))
        if "oversubscription" in kw:
            value = kw["oversubscription"]
            spin = self.oversubscription
            value_number = number(str(value)) if not isinstance(value, bool) else None
            if value_number is None or not spin.minimum() <= value_number <= spin.maximum():
                raise ValueError(f"oversubscription must be {spin.minimum():g}..{spin.maximum():g}, got {value!r}")
            actions.append(lambda value_number=value_number: spin.setValue(value_number))
        if "rail_optimized" in kw:
            actions.append(lambda value=bool(kw["rail_optimized"]): self.rail_optimized.setChecked(value))
        return actions
