"""The "Generate fat-tree fabric" dialog: every flag of `designer generate fat-tree`.

A live summary under the form shows what the request would build (from `plan_fat_tree`,
which counts without building), or, when it cannot be built, the generator's message in red
with OK disabled. `build_document()` runs `generate_fat_tree` with the same options.
"""
from __future__ import annotations

import math
import re

from PySide6.QtCore import QLocale, Qt
from PySide6.QtGui import QDoubleValidator, QIntValidator
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QDialog, QDialogButtonBox, QDoubleSpinBox, QFormLayout, QLabel, QSpinBox,
    QVBoxLayout, QWidget,
)

from ...core.generate.fat_tree import FatTreeError, FatTreePlan, generate_fat_tree, plan_fat_tree
from ...core.generate.systems import default_systems, system_of
from ...core.model.catalog import Catalog, default_catalog

DEFAULT_ACCELERATOR = "H100-SXM5-80GB"
NIC_SPEEDS_GBPS = (100, 200, 400, 800)
SWITCH_RADICES = (32, 36, 40, 48, 64, 128, 144, 256)
FABRICS = (("InfiniBand", "infiniband"), ("Ethernet", "ethernet"))
TIERS = (("Auto (fewest that fit)", None), ("2 (leaf, spine)", 2), ("3 (leaf, spine, core)", 3))

# The defaults of `designer generate fat-tree`.
DEFAULTS = dict(nodes=16, gpu=DEFAULT_ACCELERATOR, gpus_per_node=8, nics_per_node=8, nic_gbps=400.0,
                fabric="infiniband", tiers=None, switch_radix=64, oversubscription=1.0, rail_optimized=True)



def defaults_for(design, catalog: Catalog | None = None) -> dict:
    """The form's starting options: the CLI's defaults, overridden by the parts the design
    itself uses (its most common accelerator, server shape, NIC speed, fabric and switch)."""
    options = dict(DEFAULTS)
    if design is None:
        return options
    from ...core.model.parts_in_use import parts_in_use

    catalog = catalog or default_catalog()
    parts = parts_in_use(design, catalog)
    found = {
        "nodes": parts.servers if 1 <= parts.servers <= 16384 else None,
        "gpu": parts.accelerator if parts.accelerator and catalog.resolve("accelerators", parts.accelerator) else None,
        "gpus_per_node": parts.gpus_per_node if parts.gpus_per_node and parts.gpus_per_node <= 72 else None,
        "nics_per_node": parts.nics_per_node if parts.nics_per_node and parts.nics_per_node <= 16 else None,
        "nic_gbps": parts.nic_gbps,
        "fabric": parts.fabric,
        "switch_radix": parts.switch_radix,
        "rail_optimized": parts.rail_optimized,
    }
    options.update({key: value for key, value in found.items() if value is not None})
    return options


CUSTOM_SYSTEM = "(custom)"

# The generator speaks the command line's flags; the dialog's user reads its fields' names.
FIELD_OF_FLAG = {"--nodes": "Servers", "--gpu": "Accelerator", "--gpus-per-node": "GPUs per server",
                 "--nvlink-domain-gpus": "NVLink domain GPUs", "--nics-per-node": "NICs per server",
                 "--nic-gbps": "NIC speed", "--fabric": "Fabric", "--tiers": "Tiers", "--switch-radix": "Switch radix",
                 "--oversubscription": "Oversubscription", "--rail-optimized": "Rail-optimized",
                 "--no-rail-optimized": "Rail-optimized off"}
_FLAG = re.compile(r"(--[a-z][a-z-]*)(?: (?!or\b|for\b|with\b|out\b)([\w.:/]+))?")


def in_the_dialogs_words(message: str) -> str:
    """'use --gpus-per-node 4 or less' -> 'use GPUs per server = 4 or less'; a flag without a value
    becomes its field's name; the accelerator's catalog hint names the list instead."""
    message = message.replace("use --gpu with a name from `designer catalog`", "pick one from the Accelerator list")

    def field(m):
        name = FIELD_OF_FLAG.get(m.group(1))
        if name is None:
            return m.group(0)
        return f"{name} = {m.group(2)}" if m.group(2) else name
    return _FLAG.sub(field, message)


def _same(value, wanted) -> bool:
    if isinstance(wanted, (int, float)) and not isinstance(wanted, bool) and value is not None:
        return float(value) == float(wanted)
    if isinstance(wanted, str) and isinstance(value, str):
        return value.lower() == wanted.lower() or value == default_catalog().resolve("accelerators", wanted)
    return value == wanted


ERROR_STYLE = "color: #b91c1c;"  # red 700
OK_STYLE = ""


def _many(n: int, one: str, more: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else (more or one + 's')}"


def _number(text: str) -> float | None:
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


class GeneratorDialog(QDialog):
    """Options of a fat-tree fabric; `options()` are the kwargs of `generate_fat_tree`."""

    def __init__(self, parent: QWidget | None = None, catalog: Catalog | None = None, design=None) -> None:
        """`design`: the open Document; the form starts from its own parts (accelerator, NIC,
        switch, fabric, server shape), else from the CLI's defaults."""
        super().__init__(parent)
        self.catalog = catalog or default_catalog()
        self.defaults = defaults_for(design, self.catalog)
        self._plan: FatTreePlan | None = None
        self._nic_model: str | None = None  # the chosen system's NIC model (EFA, Pollara, ...), if it names one
        self._error: str | None = None
        self.setWindowTitle("Generate fat-tree fabric")

        self._build_server_fields()
        self._build_network_fields()
        self._build_texts()
        self._lay_out()

        self._updating = True
        self.set_options(**self.defaults)
        self._updating = False
        self._show_system()
        self._connect_fields()
        from ..common.wheel_guard import guard_wheel

        guard_wheel(self)  # the wheel never steps a field that was not clicked into
        self._update()
        self.servers.setFocus()
        self.servers.selectAll()

    def _build_server_fields(self) -> None:
        """System, servers, accelerator, GPUs per server, NVLink domain and NICs per server."""
        self.system = QComboBox()
        self.system.setObjectName("system")
        self.system.addItem(CUSTOM_SYSTEM, None)
        for name, system in default_systems().items():
            self.system.addItem(name, name)
            self.system.setItemData(self.system.count() - 1, system.description, Qt.ToolTipRole)
        self.system.setToolTip("A vendor system: its server, NVLink domain, NICs and switch fill the fields below "
                               "(choosing an accelerator picks its own). --system")

        self.servers = QSpinBox()
        self.servers.setRange(1, 16384)
        self.servers.setGroupSeparatorShown(True)
        self.servers.setAccelerated(True)
        self.servers.setToolTip("Servers (nodes) in the cluster. --nodes")

        self.accelerator = QComboBox()
        for name in self.catalog.names("accelerators"):
            acc = self.catalog.accelerators[name]
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

    def _build_network_fields(self) -> None:
        """NIC speed, fabric, tiers, switch radix, oversubscription and rail optimization."""
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

    def _build_texts(self) -> None:
        """The parts line and the summary of what the options build."""
        self.summary = QLabel()
        self.summary.setObjectName("summary")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.PlainText)
        self.summary.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.summary.setMinimumHeight(self.summary.fontMetrics().lineSpacing() * 4)
        self.summary.setToolTip("What the options build; counted without building anything")

        self.parts = QLabel()
        self.parts.setObjectName("parts")
        self.parts.setWordWrap(True)
        self.parts.setTextFormat(Qt.PlainText)
        self.parts.setToolTip("The catalog parts these options build with")

    def _lay_out(self) -> None:
        """The form, the texts and the buttons, in tab order."""
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.ExpandingFieldsGrow)
        form.addRow("S&ystem:", self.system)
        form.addRow("&Servers:", self.servers)
        form.addRow("&Accelerator:", self.accelerator)
        form.addRow("&GPUs per server:", self.gpus_per_node)
        form.addRow("NVLink &domain GPUs:", self.nvlink_domain)
        form.addRow("&NICs per server:", self.nics_per_node)
        form.addRow("NIC &speed (Gb/s):", self.nic_gbps)
        form.addRow("&Fabric:", self.fabric)
        form.addRow("&Tiers:", self.tiers)
        form.addRow("Switch &radix:", self.switch_radix)
        form.addRow("&Oversubscription:", self.oversubscription)
        form.addRow("", self.rail_optimized)

        self.buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel
                                        | QDialogButtonBox.RestoreDefaults)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.buttons.button(QDialogButtonBox.RestoreDefaults).clicked.connect(
            lambda: self.set_options(**self.defaults))
        self.ok_button = self.buttons.button(QDialogButtonBox.Ok)
        self.ok_button.setText("&Generate")

        self.setMinimumWidth(460)  # the summary's lines fit without wrapping
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.parts)
        layout.addWidget(self.summary)
        layout.addWidget(self.buttons)

        order = [self.system, self.servers, self.accelerator, self.gpus_per_node, self.nvlink_domain, self.nics_per_node, self.nic_gbps,
                 self.fabric, self.tiers, self.switch_radix, self.oversubscription, self.rail_optimized,
                 self.buttons]
        for first, second in zip(order, order[1:]):
            self.setTabOrder(first, second)

    def _connect_fields(self) -> None:
        """Every field updates the summary; a chosen system or accelerator brings its parts."""
        # a user's choice of system or accelerator brings that system's parts (after the form is set up)
        self.system.activated.connect(self._on_system_chosen)
        self.accelerator.activated.connect(self._on_accelerator_chosen)

        for spin in (self.servers, self.gpus_per_node, self.nics_per_node):
            spin.valueChanged.connect(self._update)
        self.oversubscription.valueChanged.connect(self._update)
        for combo in (self.accelerator, self.fabric, self.tiers, self.nvlink_domain):
            combo.currentIndexChanged.connect(self._update)
        for combo in (self.nic_gbps, self.switch_radix):
            combo.currentTextChanged.connect(self._update)
        self.rail_optimized.toggled.connect(self._update)

    # ---- options ----

    # ---- systems ----

    def _apply_system(self, system) -> None:
        """The system's fields; its NIC model (not a field of the form) goes with the design it builds."""
        values = dict(system.values)
        self._nic_model = values.pop("nic_model", None)
        self.set_options(**values)

    def _on_system_chosen(self, _index: int) -> None:
        name = self.system.currentData()
        if name is not None:
            self._apply_system(default_systems()[name])

    def _on_accelerator_chosen(self, _index: int) -> None:
        """A new accelerator comes in its own system: a GB200 in 4-GPU trays of NVL72, an H100 after
        an A100 with 400G NDR and radix 64, not the A100's HDR fabric."""
        own = system_of(self.accelerator.currentData(), self.catalog)
        if own is not None:
            self._apply_system(own)
        self._show_system()

    def _show_system(self) -> None:
        """The system the fields are, or "(custom)" once a field differs from every system."""
        options = self.options()
        match = next((name for name, system in default_systems().items()
                      if all(_same(options.get(k, self.gpus_per_node.value() if k == "nvlink_domain_gpus" else None), v)
                             for k, v in system.values.items() if k != "nic_model")), None)
        if match is None:
            self._nic_model = None  # a field changed: the system's NIC model no longer applies
        blocked = self.system.blockSignals(True)
        self.system.setCurrentIndex(max(0, self.system.findData(match)))
        self.system.blockSignals(blocked)

    # ---- NVLink domain ----

    def _domain_max(self, gpu, gpus_per_node: int) -> int:
        acc = self.catalog.accelerators.get(self.catalog.resolve("accelerators", str(gpu)) or "")
        return max(acc.scale_up_domain_max, gpus_per_node) if acc is not None else gpus_per_node

    def domain_choices(self, gpu=None, gpus_per_node: int | None = None) -> list[int]:
        """Valid --nvlink-domain-gpus values: whole servers up to the accelerator's largest domain."""
        gpu = gpu if gpu is not None else self.accelerator.currentData()
        g = gpus_per_node or self.gpus_per_node.value()
        return list(range(g, self._domain_max(gpu, g) + 1, g))

    def _refresh_domain_choices(self) -> None:
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

    def options(self) -> dict:
        """Keyword arguments of `generate_fat_tree` (nic_gbps or switch_radix None if not a number).

        nvlink_domain_gpus is there only for a domain of several servers (one server is the default)."""
        gbps = _number(self.nic_gbps.currentText())
        radix = _number(self.switch_radix.currentText())
        extra = {}
        domain = self.nvlink_domain.currentData()
        if domain and domain != self.gpus_per_node.value():
            extra["nvlink_domain_gpus"] = domain
        return dict(
            nodes=self.servers.value(),
            gpu=self.accelerator.currentData(),
            gpus_per_node=self.gpus_per_node.value(),
            nics_per_node=self.nics_per_node.value(),
            nic_gbps=gbps,
            fabric=self.fabric.currentData(),
            tiers=self.tiers.currentData(),
            switch_radix=int(radix) if radix is not None and radix.is_integer() else radix,
            oversubscription=self.oversubscription.value(),
            rail_optimized=self.rail_optimized.isChecked(),
            **extra,
        )

    def set_options(self, **kw) -> None:
        """Set any of the `options()` keys; ValueError for an unknown key or a value the form cannot show."""
        unknown = set(kw) - set(DEFAULTS) - {"nvlink_domain_gpus"}
        if unknown:
            raise ValueError(f"unknown option(s) {', '.join(sorted(unknown))}; known: {', '.join(DEFAULTS)}, "
                             "nvlink_domain_gpus")
        # Check everything before changing anything, so that a bad value leaves the form as it was.
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
        for key, combo in (("nic_gbps", self.nic_gbps), ("switch_radix", self.switch_radix)):
            if key in kw:
                value = kw[key]
                if isinstance(value, bool) or _number(str(value)) is None:
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
            number = _number(str(value)) if not isinstance(value, bool) else None
            if number is None or not spin.minimum() <= number <= spin.maximum():
                raise ValueError(f"oversubscription must be {spin.minimum():g}..{spin.maximum():g}, got {value!r}")
            actions.append(lambda number=number: spin.setValue(number))
        if "rail_optimized" in kw:
            actions.append(lambda value=bool(kw["rail_optimized"]): self.rail_optimized.setChecked(value))
        if kw.get("nvlink_domain_gpus") is not None or "gpu" in kw or "gpus_per_node" in kw:
            actions.append(self._refresh_domain_choices)  # after the accelerator and server size
        if kw.get("nvlink_domain_gpus") is not None:
            value = kw["nvlink_domain_gpus"]
            g = kw.get("gpus_per_node", self.gpus_per_node.value())
            valid = self.domain_choices(self.catalog.resolve("accelerators", str(kw["gpu"])) if "gpu" in kw
                                        else None, g)
            if isinstance(value, bool) or value not in valid:
                raise ValueError(f"nvlink_domain_gpus must be one of {', '.join(map(str, valid))}, got {value!r}")
            actions.append(lambda value=value: self.nvlink_domain.setCurrentIndex(self.nvlink_domain.findData(value)))
        if not actions:
            return
        updating, self._updating = self._updating, True  # one summary update, not one per field
        try:
            for action in actions:
                action()
        finally:
            self._updating = updating
        self._update()

    # ---- summary ----

    def _update(self, *_) -> None:
        if self._updating:
            return
        self._refresh_domain_choices()
        try:
            options = self.options()
            if options["nic_gbps"] is None:
                raise FatTreeError("NIC speed must be a number of Gb/s, e.g. 400")
            if options["switch_radix"] is None:
                raise FatTreeError("switch radix must be a whole number of ports, e.g. 64")
            self._plan = plan_fat_tree(**options, catalog=self.catalog)
            self._error = None
        except FatTreeError as exc:
            self._plan, self._error = None, in_the_dialogs_words(str(exc))
        self.summary.setText(self.summary_text())
        self.parts.setText(self.parts_text())
        self._show_system()
        self.summary.setStyleSheet(ERROR_STYLE if self._error else OK_STYLE)
        self.summary.setProperty("error", bool(self._error))
        self.ok_button.setEnabled(self._error is None)
        self.ok_button.setToolTip(self._error or "Build this fabric as a new design")

    def plan(self) -> FatTreePlan | None:
        """The counts of the current options, or None when they cannot be built."""
        return self._plan

    def error(self) -> str | None:
        return self._error

    def is_valid(self) -> bool:
        return self._error is None

    def parts_text(self) -> str:
        """The NIC and switch models the options build with (as the generator picks them)."""
        o = self.options()
        if o["nic_gbps"] is None or o["switch_radix"] is None:
            return ""
        nic = self.catalog.nic_for(o["fabric"], o["nic_gbps"])
        switch = next((s for s in self.catalog.switches.values() if s.kind == o["fabric"]
                       and s.port_gbps == o["nic_gbps"] and s.radix == o["switch_radix"]), None)
        nic_name = nic.name if nic else f"{o['nic_gbps']:g} Gb/s"
        switch_name = switch.name if switch else "uncatalogued"
        return f"Parts: {o['gpu']}, {nic_name} NICs, {switch_name} switches of {o['switch_radix']} ports"

    def summary_text(self) -> str:
        if self._error is not None:
            return self._error
        p = self._plan
        shape = (_many(p.tiers, "tier") + (", rail-optimized" if p.rail_optimized else "")
                 + f", {p.oversubscription:g}:1")
        if p.tiers == 1:
            shape += ", a single switch"
        domain = self.options().get("nvlink_domain_gpus")
        nvlink = []
        if domain:
            count = -(-p.nodes // (domain // self.gpus_per_node.value()))
            nvlink = [f"NVLink domains of {domain} GPUs: {_many(count, 'domain')}, "
                      f"{_many(p.nvlink_switch_trays, 'NVLink switch tray')}"]
        return "\n".join(nvlink + [
            f"{_many(p.nodes, 'server')}, {_many(p.gpus, 'GPU')} - {shape}",
            f"{_many(p.leaves, 'leaf', 'leaves')}, {_many(p.spines, 'spine')}, {_many(p.cores, 'core')}, "
            f"{_many(p.pods, 'pod')} ({_many(p.switches, 'switch', 'switches')} of {p.switch_radix} ports)",
            f"{_many(p.links, 'link')}, {_many(p.cables, 'cable')}, {_many(p.racks, 'rack')}",
            f"at most {p.max_nodes:,} servers with these tiers, radix and ratio",
        ])

    # ---- result ----

    def build_document(self):
        """The generated design; FatTreeError if the options cannot be built."""
        options = self.options()
        if options["nic_gbps"] is None or options["switch_radix"] is None:
            raise FatTreeError(self._error or "NIC speed and switch radix must be numbers")
        return generate_fat_tree(**options, nic_model=self._nic_model, catalog=self.catalog)

    def accept(self) -> None:
        if self.is_valid():  # Enter in a field must not accept an impossible request
            super().accept()

