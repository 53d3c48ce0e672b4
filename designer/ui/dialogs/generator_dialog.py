"""The "Generate fat-tree fabric" dialog: every flag of `designer generate fat-tree`.

A live summary under the form shows what the request would build (from `plan_fat_tree`,
which counts without building), or, when it cannot be built, the generator's message in red
with OK disabled. `build_document()` runs `generate_fat_tree` with the same options.
"""
from __future__ import annotations

import re

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel, QVBoxLayout, QWidget

from ...core.generate.fat_tree import FatTreeError, FatTreePlan, generate_fat_tree, plan_fat_tree
from ...core.generate.systems import default_systems, system_of
from ...core.model.catalog import Catalog, default_catalog
from .generator_fields import NetworkFields, ServerFields

DEFAULT_ACCELERATOR = "H100-SXM5-80GB"

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


class GeneratorDialog(QDialog):
    """Options of a fat-tree fabric; `options()` are the kwargs of `generate_fat_tree`.

    The form's two sections own their fields: `server` (ServerFields: servers, accelerator, GPUs and
    NICs per server, NVLink domain) and `network` (NetworkFields: NIC speed, fabric, tiers, switch
    radix, oversubscription, rails). The dialog keeps the system, the summary and the buttons."""

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

        self._build_system_field()
        self.server = ServerFields(self.catalog)
        self.network = NetworkFields()
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
        self.server.servers.setFocus()
        self.server.servers.selectAll()

    def _build_system_field(self) -> None:
        """A vendor system whose parts fill the fields."""
        self.system = QComboBox()
        self.system.setObjectName("system")
        self.system.addItem(CUSTOM_SYSTEM, None)
        for name, system in default_systems().items():
            self.system.addItem(name, name)
            self.system.setItemData(self.system.count() - 1, system.description, Qt.ToolTipRole)
        self.system.setToolTip("A vendor system: its server, NVLink domain, NICs and switch fill the fields below "
                               "(choosing an accelerator picks its own). --system")

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
        rows = [("S&ystem:", self.system), *self.server.rows(), *self.network.rows()]
        for label, field in rows:
            form.addRow(label, field)

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

        order = [field for _, field in rows] + [self.buttons]
        for first, second in zip(order, order[1:]):
            self.setTabOrder(first, second)

    def _connect_fields(self) -> None:
        """Every field updates the summary; a chosen system or accelerator brings its parts."""
        # a user's choice of system or accelerator brings that system's parts (after the form is set up)
        self.system.activated.connect(self._on_system_chosen)
        self.server.accelerator.activated.connect(self._on_accelerator_chosen)
        self.server.connect(self._update)
        self.network.connect(self._update)

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
        own = system_of(self.server.accelerator.currentData(), self.catalog)
        if own is not None:
            self._apply_system(own)
        self._show_system()

    def _show_system(self) -> None:
        """The system the fields are, or "(custom)" once a field differs from every system."""
        options = self.options()
        gpus_per_node = self.server.gpus_per_node.value()
        match = next((name for name, system in default_systems().items()
                      if all(_same(options.get(k, gpus_per_node if k == "nvlink_domain_gpus" else None), v)
                             for k, v in system.values.items() if k != "nic_model")), None)
        if match is None:
            self._nic_model = None  # a field changed: the system's NIC model no longer applies
        blocked = self.system.blockSignals(True)
        self.system.setCurrentIndex(max(0, self.system.findData(match)))
        self.system.blockSignals(blocked)

    # ---- options ----

    def options(self) -> dict:
        """Keyword arguments of `generate_fat_tree` (nic_gbps or switch_radix None if not a number).

        nvlink_domain_gpus is there only for a domain of several servers (one server is the default)."""
        return {**self.server.options(), **self.network.options(), **self.server.domain_option()}

    def set_options(self, **kw) -> None:
        """Set any of the `options()` keys; ValueError for an unknown key or a value the form cannot show."""
        unknown = set(kw) - set(DEFAULTS) - {"nvlink_domain_gpus"}
        if unknown:
            raise ValueError(f"unknown option(s) {', '.join(sorted(unknown))}; known: {', '.join(DEFAULTS)}, "
                             "nvlink_domain_gpus")
        # Check everything before changing anything, so that a bad value leaves the form as it was;
        # the NVLink domain after the accelerator and server size it depends on.
        actions = [*self.server.setters(kw), *self.network.setters(kw), *self.server.domain_setters(kw)]
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
        self.server.refresh_domain_choices()
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
            count = -(-p.nodes // (domain // self.server.gpus_per_node.value()))
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

