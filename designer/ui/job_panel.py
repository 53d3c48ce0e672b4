"""The job panel: the workload (a preset plus every key) and the parallel plan.

Each value is checked as it is typed against the model and the cluster (the same checks as
`designer validate`); an impossible plan says why beside the field and which values would
work. A valid change becomes one undoable command.
"""
from __future__ import annotations

import dataclasses

import yaml
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QFormLayout, QGroupBox, QLabel, QLineEdit, QScrollArea, QVBoxLayout, QWidget,
)

from ..core.model import Parallelism, Workload, default_catalog
from ..core.model.job import resolve_workload
from ..core.model.plan import check_job
from . import commands

WORKLOAD_KEYS = [f.name for f in dataclasses.fields(Workload) if f.name != "preset"]
PLAN_FIELDS = {f.name: f for f in dataclasses.fields(Parallelism)}
SHORT = {"tensor_model_parallel_size": "TP", "pipeline_model_parallel_size": "PP", "context_parallel_size": "CP",
         "expert_model_parallel_size": "EP", "expert_tensor_parallel_size": "expert TP",
         "data_parallel_size": "DP", "virtual_pipeline_model_parallel_size": "virtual stages"}


class JobPanel(QWidget):
    def __init__(self, qdoc, parent=None):
        super().__init__(parent)
        self.qdoc = qdoc
        self.catalog = default_catalog()
        self.editors: dict[str, QWidget] = {}
        self.errors: dict[str, QLabel] = {}
        self._loading = False
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        outer.addWidget(self.summary)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 0, 0)
        scroll.setWidget(body)
        outer.addWidget(scroll, 1)

        work = QGroupBox("Workload")
        wform = QFormLayout(work)
        self.preset = QComboBox()
        self.preset.addItem("(none)")
        self.preset.addItems(self.catalog.names("models"))
        self.preset.activated.connect(lambda _i: self._commit())
        self.preset.setToolTip("A built-in model; the keys below override it (empty = the preset's value)")
        wform.addRow("preset", self.preset)
        for key in WORKLOAD_KEYS:
            self._add_row(wform, "workload." + key, key)
        layout.addWidget(work)

        plan = QGroupBox("Parallelism")
        pform = QFormLayout(plan)
        for key, f in PLAN_FIELDS.items():
            self._add_row(pform, "parallelism." + key, SHORT.get(key, key.replace("_", " ")), f)
        layout.addWidget(plan)
        layout.addStretch(1)
        qdoc.changed.connect(self._on_doc_changed)
        qdoc.replaced.connect(self.load)
        self.load()

    def _add_row(self, form: QFormLayout, path: str, label: str, f=None) -> None:
        section, key = path.split(".")
        enum = f.metadata.get("enum") if f is not None else None
        doc = (f.metadata.get("doc") if f is not None else
               next(x.metadata.get("doc", "") for x in dataclasses.fields(Workload) if x.name == key))
        if f is not None and f.type in (bool, "bool"):
            editor = QCheckBox()
            editor.toggled.connect(lambda _on: self._commit())
        elif enum:
            editor = QComboBox()
            editor.addItems([str(e) for e in enum])
            editor.activated.connect(lambda _i: self._commit())
        elif key in ("swiglu", "untie_embeddings_and_output_weights"):
            editor = QComboBox()
            editor.addItems(["(preset)", "true", "false"])
            editor.activated.connect(lambda _i: self._commit())
        elif key == "precision":
            editor = QComboBox()
            editor.addItems(["(preset)", "bf16", "fp16", "fp8"])
            editor.activated.connect(lambda _i: self._commit())
        else:
            editor = QLineEdit()
            editor.textEdited.connect(lambda _t: self._check_only())
            editor.editingFinished.connect(self._commit)
        editor.setToolTip(doc)
        editor.setObjectName(path)
        box = QWidget()
        col = QVBoxLayout(box)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(1)
        col.addWidget(editor)
        error = QLabel()
        error.setWordWrap(True)
        error.setStyleSheet("color: #b91c1c; font-size: 9pt")
        error.hide()
        col.addWidget(error)
        name = QLabel(label)
        name.setToolTip(doc)
        form.addRow(name, box)
        self.editors[path] = editor
        self.errors[path] = error

    # ---- document -> widgets ----
    def _on_doc_changed(self, changes) -> None:
        if any(c.collection in ("workload", "parallelism", "nodes") for c in changes):
            self.load()

    def load(self) -> None:
        self._loading = True
        spec = self.qdoc.doc.spec
        w = spec.workload or Workload()
        p = spec.parallelism or Parallelism()
        resolved = None
        try:
            resolved = resolve_workload(w, self.catalog.presets())
        except KeyError:
            pass
        self.preset.setCurrentText(w.preset if w.preset else "(none)")
        for key in WORKLOAD_KEYS:
            editor = self.editors["workload." + key]
            value = getattr(w, key)
            effective = getattr(resolved, key) if resolved is not None else None
            if isinstance(editor, QComboBox):
                editor.setCurrentText("(preset)" if value is None else str(value).lower())
            else:
                editor.setText("" if value is None else str(value))
                editor.setPlaceholderText("" if effective is None else f"{effective}")
        for key in PLAN_FIELDS:
            editor = self.editors["parallelism." + key]
            value = getattr(p, key)
            if isinstance(editor, QCheckBox):
                editor.setChecked(bool(value))
            elif isinstance(editor, QComboBox):
                editor.setCurrentText(str(value))
            else:
                editor.setText("" if value is None else str(value))
        self._loading = False
        self._check_only()

    # ---- widgets -> candidate job ----
    def _candidate(self):
        """(Workload, Parallelism) from the fields, or raise ValueError(path, message)."""
        w_values = {"preset": None if self.preset.currentText() == "(none)" else self.preset.currentText()}
        for key in WORKLOAD_KEYS:
            editor = self.editors["workload." + key]
            text = editor.currentText() if isinstance(editor, QComboBox) else editor.text().strip()
            if text in ("", "(preset)"):
                continue
            w_values[key] = _scalar(text)
        p_values = {}
        for key, f in PLAN_FIELDS.items():
            editor = self.editors["parallelism." + key]
            if isinstance(editor, QCheckBox):
                p_values[key] = editor.isChecked()
            elif isinstance(editor, QComboBox):
                p_values[key] = _scalar(editor.currentText()) if key == "zero_stage" else editor.currentText()
            else:
                text = editor.text().strip()
                if text:
                    p_values[key] = text if key == "rank_order" else _scalar(text)
        from ..core.io.schema import Builder

        b = Builder()
        workload = b.value(Workload, w_values, ("spec", "workload"))
        parallelism = b.value(Parallelism, p_values, ("spec", "parallelism"))
        return workload, parallelism, b.problems

    def _check_only(self) -> list:
        if self._loading:
            return []
        for error in self.errors.values():
            error.hide()
        workload, parallelism, problems = self._candidate()
        if not problems:
            _, problems = check_job(workload, parallelism, self.qdoc.doc.num_gpus(), self.catalog)
        for p in problems:
            path = p.path.replace("spec.", "", 1)
            label = self.errors.get(path) or self.errors.get(_closest(path, self.errors))
            if label is not None:
                label.setText(p.message + (f" ({p.fix})" if p.fix else ""))
                label.show()
        self._show_summary(workload, parallelism, problems)
        return problems

    def _show_summary(self, workload, parallelism, problems) -> None:
        if problems:
            self.summary.setText(f"<span style='color:#b91c1c'><b>{len(problems)} problem(s)</b></span> "
                                 "— the job is evaluated once they are fixed")
            return
        plan, _ = check_job(workload, parallelism, self.qdoc.doc.num_gpus(), self.catalog)
        if plan is None:
            self.summary.setText("no job")
            return
        self.summary.setText(f"<b>{plan.num_gpus} GPUs</b> = TP {plan.tp} x PP {plan.pp} x CP {plan.cp} x DP "
                             f"{plan.dp}" + (f", EP {plan.ep}" if plan.ep > 1 else "")
                             + f"; {plan.num_microbatches} micro-batches per step")

    def _commit(self) -> None:
        if self._loading:
            return
        problems = self._check_only()
        workload, parallelism, build_problems = self._candidate()
        if build_problems or problems:
            return  # said beside the field; nothing changes until it is valid
        spec = self.qdoc.doc.spec
        if workload == (spec.workload or Workload()) and parallelism == (spec.parallelism or Parallelism()):
            return
        self.qdoc.push(commands.SetJob(self.qdoc, workload, parallelism, "Edit job"))


def _scalar(text: str):
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def _closest(path: str, known) -> str | None:
    head = path.split("[")[0]
    return head if head in known else None
