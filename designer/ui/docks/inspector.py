"""The property inspector: edits the selected elements' fields through undo commands.

Fields come from the model's own declarations (type, unit, allowed values, documentation),
so the inspector, the file format and its JSON Schema always agree. A value is checked as
the file loader would check it; a bad one is refused beside the field with the reason.
"""
from __future__ import annotations

import dataclasses
import typing

import yaml
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QLabel, QLineEdit, QScrollArea, QVBoxLayout, QWidget

from ...core.analysis.link_load import LinkLoads
from ...core.io.schema import Builder, _split_optional
from ...core.model import Link
from ...core.model.document import COLLECTION_OF
from ..common.gpu_count import GpuCount
from ..document import commands

SINGULAR = {"racks": "rack", "nodes": "node", "switches": "switch", "links": "link"}


# Above this many links a selected link's load is prepared off the UI thread: reading every link's tier
# and cable and the id table takes ~1 ms at 2k links, ~25 ms at 36k (16k GPUs), ~0.15 s at 131k GPUs.
LINKS_WORDED_AT_ONCE = 8000


class Inspector(QWidget):
    message = Signal(str)

    def __init__(self, qdoc, link_loads: LinkLoads | None = None, parent=None,
                 gpus: GpuCount | None = None):
        super().__init__(parent)
        self.qdoc = qdoc
        # the design's GPUs for the title with nothing selected: the window's kept count, counted again
        # only after an edit that can change it (counting 16k servers on each delete: ~3 ms at 131k GPUs)
        self.gpus = gpus if gpus is not None else GpuCount()
        self.link_loads = link_loads if link_loads is not None else LinkLoads()  # the window's, shared with the canvas
        self.ids: list[str] = []
        outer = QVBoxLayout(self)
        outer.setContentsMargins(6, 6, 6, 6)
        self.title = QLabel("<b>Nothing selected</b>")
        self.title.setWordWrap(True)
        outer.addWidget(self.title)
        # a selected link's load in the current evaluation (core/analysis/link_load.py)
        self.result = None
        # (result) -> None: word a selected link's load off the UI thread (the window's worker), for
        # designs of more than LINKS_WORDED_AT_ONCE links; then show_result(result, now=True) follows
        self.load_later = None
        self.load = QLabel()
        self.load.setObjectName("link_load")
        self.load.setTextFormat(Qt.PlainText)
        self.load.setWordWrap(True)
        self.load.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.load.hide()
        self.error = QLabel()
        self.error.setStyleSheet("color: #b91c1c")
        self.error.setWordWrap(True)
        self.error.hide()
        outer.addWidget(self.error)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        self.body = QWidget()
        column = QVBoxLayout(self.body)  # the load scrolls with the fields instead of squeezing them
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.load)
        fields = QWidget()
        column.addWidget(fields)
        column.addStretch(1)
        self.form = QFormLayout(fields)
        self.form.setLabelAlignment(Qt.AlignRight)
        # a field too narrow for its value goes under its label instead of cutting the value
        self.form.setRowWrapPolicy(QFormLayout.WrapLongRows)
        scroll.setWidget(self.body)
        outer.addWidget(scroll, 1)
        self.editors: dict[str, QWidget] = {}
        qdoc.changed.connect(self.refresh)
        qdoc.replaced.connect(lambda: self.show_ids([]))

    def show_ids(self, ids: list[str]) -> None:
        doc = self.qdoc.doc
        self.ids = [i for i in ids if doc.get(i) is not None]
        self._build()

    def show_result(self, result, now: bool = False) -> None:
        """The evaluation whose link loads a selected link shows (None: no current one). `now`: word
        it here even when it is not made yet (load_later's answer)."""
        self.result = result
        self.link_loads.keep_only(result)
        self._show_load(now)

    def mark_updating(self) -> None:
        """A newer result than the load shown: greyed until its own load is worded (never a stale mix)."""
        self.load.setEnabled(False)

    def shows_one_link(self) -> bool:
        """One link is selected: the Inspector words its load."""
        elements = self._elements()
        return len(elements) == 1 and isinstance(elements[0], Link)

    def _show_load(self, now: bool = False) -> None:
        elements = self._elements()
        if len(elements) != 1 or not isinstance(elements[0], Link):
            self.load.hide()
            return
        self.load.setEnabled(True)
        doc = self.qdoc.doc
        if (not now and getattr(self.result, "link_load", None) and self.load_later is not None
                and len(doc.links) > LINKS_WORDED_AT_ONCE and not self.link_loads.ready(self.result, doc)):
            self.load.setText("Load: being worked out...")
            self.load.show()
            self.load_later(self.result)
            return
        text = self.link_loads.link_text(self.result, self.qdoc.doc, elements[0].id) if self.result is not None else ""
        self.load.setText(text or "Load: no current evaluation of a job (it shows once the design evaluates).")
        self.load.show()

    def refresh(self, changes=()) -> None:
        """After every document change (undo and redo too): follow renames, let go of what is
        gone (its fields with it, so nothing can be typed into it), show the current values
        and, with nothing selected, the current counts."""
        renamed = {c.old: c.new for c in changes if c.action == "changed" and c.field == "id"}
        ids = [renamed.get(i, i) for i in self.ids]
        alive = [i for i in ids if self.qdoc.doc.get(i) is not None]
        if alive != self.ids or not alive:
            self.ids = alive
            self._build()
        else:
            self._load_values()

    def _elements(self):
        return [self.qdoc.doc.get(i) for i in self.ids]

    def _editable_elements(self) -> list:
        """The shown elements, or [] (and the form rebuilt, with a message) when one has gone."""
        elements = self._elements()
        if any(e is None for e in elements):
            gone = ", ".join(i for i, e in zip(self.ids, elements) if e is None)
            self.message.emit(f"{gone} no longer exists (deleted or undone): nothing was changed")
            self.show_ids(self.ids)
            return []
        return elements

    def _build(self) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        self.editors.clear()
        self.error.hide()
        self._show_load()
        elements = self._elements()
        if not elements:
            doc = self.qdoc.doc  # what is shown only (doc.counts also sums every link's cables: 0.1 s at 131k)
            self.title.setText(f"<b>{doc.metadata.name}</b><br>{len(doc.racks)} racks, {len(doc.nodes)} "
                               f"servers, {self.gpus.of(doc)} GPUs, {len(doc.switches)} switches, "
                               f"{len(doc.links)} links")
            return
        types = {type(e) for e in elements}
        if len(types) > 1:
            self.title.setText(f"<b>{len(elements)} elements</b> of different kinds: select one kind to edit")
            return
        cls = types.pop()
        kind = SINGULAR[COLLECTION_OF[cls]]
        self.title.setText(f"<b>{kind} {elements[0].id}</b>" if len(elements) == 1 else
                           f"<b>{len(elements)} {COLLECTION_OF[cls]}</b> (edits apply to all)")
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            if len(elements) > 1 and f.name == "id":
                continue
            tp, optional = _split_optional(hints[f.name])
            enum = f.metadata.get("enum")
            if tp is bool:
                editor = QCheckBox()
                editor.toggled.connect(lambda on, name=f.name: self._commit(name, on))
            elif enum:
                editor = QComboBox()
                # an optional choice (a switch's routing) starts with an empty entry: unset, its default
                editor.addItems(([""] if optional else []) + [str(e) for e in enum])
                editor.activated.connect(lambda _i, name=f.name, ed=editor, opt=optional:
                                         self._commit(name, None if opt and not ed.currentText() else ed.currentText()))
            else:
                editor = QLineEdit()
                editor.editingFinished.connect(lambda name=f.name, ed=editor: self._commit_text(name, ed.text()))
            editor.setToolTip(f.metadata.get("doc", ""))
            editor.setObjectName(f.name)
            label = QLabel(f.name.replace("_", " "))
            label.setToolTip(f.metadata.get("doc", ""))
            self.form.addRow(label, editor)
            self.editors[f.name] = editor
        from ..common.wheel_guard import guard_wheel

        guard_wheel(self)  # the new fields too: the wheel scrolls past them unless clicked into
        self._load_values()

    def _load_values(self) -> None:
        elements = self._elements()
        if not elements:
            return
        for name, editor in self.editors.items():
            values = {repr(getattr(e, name)) for e in elements}
            value = getattr(elements[0], name)
            editor.blockSignals(True)
            if isinstance(editor, QCheckBox):
                editor.setTristate(len(values) > 1)
                editor.setCheckState(Qt.PartiallyChecked if len(values) > 1 else
                                     Qt.Checked if value else Qt.Unchecked)
            elif isinstance(editor, QComboBox):
                editor.setCurrentText("" if value is None or len(values) > 1 else str(value))
            else:
                text = "" if value is None else (", ".join(map(str, value)) if isinstance(value, list) else
                                                 f"{value:g}" if isinstance(value, float) else str(value))
                editor.setText(text if len(values) == 1 else "")
                _fit_text(editor)
                editor.setPlaceholderText("(several values)" if len(values) > 1 else
                                          "(none)" if value is None else "")
            editor.blockSignals(False)

    def _commit_text(self, name: str, text: str) -> None:
        elements = self._editable_elements()
        if not elements:
            return
        field_type = typing.get_type_hints(type(elements[0]))[name]
        tp, optional = _split_optional(field_type)
        if text.strip() == "":
            if optional:
                value = None
            elif typing.get_origin(tp) is list:
                value = []
            else:
                return  # nothing typed for several values: leave them
        elif typing.get_origin(tp) is list:
            value = [yaml.safe_load(part) for part in text.split(",") if part.strip()]
        elif tp is str:
            value = text.strip()
        else:
            try:
                value = yaml.safe_load(text)
            except yaml.YAMLError:
                value = text
        self._commit(name, value)

    def _commit(self, name: str, value) -> None:
        elements = self._editable_elements()
        if not elements:
            return
        if isinstance(value, bool) is False and name in self.editors and isinstance(self.editors[name], QCheckBox):
            value = bool(value)
        cls = type(elements[0])
        changes = {}
        for e in elements:
            data = dataclasses.asdict(e)
            data[name] = value
            b = Builder()
            built = b.value(cls, data, ("spec", COLLECTION_OF[cls]))
            if b.problems:
                self.error.setText(f"{name}: {b.problems[0].message}" + (f" ({b.problems[0].fix})" if b.problems[0].fix else ""))
                self.error.show()
                self._load_values()
                return
            new_value = getattr(built, name)
            if name == "id" and self.qdoc.doc.get(new_value) is not None and new_value != e.id:
                self.error.setText(f"id {new_value!r} is taken: pick another")
                self.error.show()
                self._load_values()
                return
            if new_value != getattr(e, name):
                changes[e.id] = {name: new_value}
        self.error.hide()
        if not changes:
            return
        if name == "id":
            (old, change), = changes.items()
            commands.rename(self.qdoc, old, change["id"])
            self.ids = [change["id"] if i == old else i for i in self.ids]
            self._load_values()
            return
        self.qdoc.push(commands.SetFields(self.qdoc, changes, f"Set {name.replace('_', ' ')}"))


FIELD_MAX_PX = 320  # a longer value (a list of ports) scrolls in its field


def _fit_text(editor: QLineEdit) -> None:
    """The field is at least as wide as its value ("A100-SXM4-80GB" whole, not "100-SXM4-80GB")
    and shows the value's start; the form puts a wide field under its label."""
    margins = editor.textMargins()
    width = editor.fontMetrics().horizontalAdvance(editor.text()) + margins.left() + margins.right() + 18
    editor.setMinimumWidth(min(width, FIELD_MAX_PX))
    editor.setCursorPosition(0)
