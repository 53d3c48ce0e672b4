"""The job panel: the workload (a preset plus every key) and the parallel plan.

A value that does not parse (text in a number field) is refused beside the field as it is
typed. Any value that parses becomes one undoable command, even an impossible plan: the
window's check of the design (the same as `designer validate`, one list per revision) then
comes back through `show_problems`, which writes each job problem beside its field with the
values that would work, and counts all of them as the status bar does. The Breakdown keeps
the last valid result meanwhile.
"""
from __future__ import annotations

import copy
import dataclasses

import yaml
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QFormLayout, QGroupBox, QLabel, QLineEdit, QScrollArea, QVBoxLayout, QWidget,
)

from ...core.model import Parallelism, Workload, default_catalog
from ...core.model.job import resolve_workload
from ...core.model.plan import check_job
from ...core.problems import counts_text
from ..common.gpu_count import GpuCount
from ..document import commands
from .job_problems import ProblemPlaces

WORKLOAD_KEYS = [f.name for f in dataclasses.fields(Workload) if f.name != "preset"]
# the model's on/off keys a file may leave to the preset: three choices, the preset's, on and off
PRESET_FLAGS = {f.name for f in dataclasses.fields(Workload) if str(f.type).replace(" ", "") == "bool|None"}
PLAN_FIELDS = {f.name: f for f in dataclasses.fields(Parallelism)}
ERROR_COLOUR = "#b91c1c"  # a field's problem, under it
UNSET = "(default)"  # an optional choice left out of the file: the engine's own default applies
SHORT = {"tensor_model_parallel_size": "TP", "pipeline_model_parallel_size": "PP", "context_parallel_size": "CP",
         "expert_model_parallel_size": "EP", "expert_tensor_parallel_size": "expert TP",
         "data_parallel_size": "DP", "virtual_pipeline_model_parallel_size": "virtual stages"}


class JobPanel(QWidget):
    showProblemsRequested = Signal()  # "see all" in the summary: the window opens its problem list

    def __init__(self, qdoc, parent=None, gpus: GpuCount | None = None):
        super().__init__(parent)
        self.qdoc = qdoc
        self.catalog = default_catalog()
        self.editors: dict[str, QWidget] = {}
        self.errors: dict[str, QLabel] = {}
        self._loading = False
        self.problems: list = []  # the design's problems, as the window last checked them
        self.places = ProblemPlaces()  # where each is shown: beside a field, or in the summary's count
        self._plan_kept = None  # ((workload, parallelism, GPUs), its plan) of the summary's last check
        # the design's GPUs (the window's kept count): the plan's size when the job names none
        self.gpus = gpus if gpus is not None else GpuCount()
        self.job_index = 0  # with spec.jobs: the job edited (the Jobs panel's current job)
        self._input_errors: dict[str, str] = {}  # field path -> why its text does not parse
        # the fields the user's last edit changed, and the job it made (a joint rule is said at such a
        # field while the document still holds that job; after an undo or another file, where the check says)
        self._changed: list[str] = []
        self._changed_job = None
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        self.which = QLabel()  # with several jobs: which one the fields edit
        self.which.setObjectName("job_edited")
        self.which.hide()
        outer.addWidget(self.which)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.RichText)
        self.summary.linkActivated.connect(lambda _link: self.showProblemsRequested.emit())
        outer.addWidget(self.summary)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 0, 0)
        scroll.setWidget(body)
        outer.addWidget(scroll, 1)

        self._error_palette = QPalette(self.palette())
        self._error_palette.setColor(QPalette.WindowText, QColor(ERROR_COLOUR))
        self._error_font = QFont(self.font())
        self._error_font.setPointSizeF(9)
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
        from ..common.wheel_guard import guard_wheel

        guard_wheel(self)  # scrolling the form never steps a field that was not clicked into
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
            if f.default is None:  # an optional choice: unset is one of them, never silently the first
                editor.addItem(UNSET)
            editor.addItems([str(e) for e in enum])
            editor.activated.connect(lambda _i: self._commit())
        elif section == "workload" and key in PRESET_FLAGS:
            editor = QComboBox()
            editor.addItems(["(preset)", "true", "false"])
            editor.activated.connect(lambda _i: self._commit())
        elif key == "precision":
            editor = QComboBox()
            editor.addItems(["(preset)", "bf16", "fp16", "fp8"])
            editor.activated.connect(lambda _i: self._commit())
        else:
            editor = QLineEdit()
            editor.textEdited.connect(lambda _t: self._check_input())
            editor.editingFinished.connect(self._commit)
        editor.setToolTip(doc)
        editor.setObjectName(path)
        name = QLabel(label)
        name.setToolTip(doc)
        form.addRow(name, editor)
        # the problem under the field, across the whole row: wide enough to read and wrapped. (In a box
        # beside the field, the scroll area squeezed it to fewer lines than it needs: text was cut.)
        error = QLabel()
        error.setWordWrap(True)
        error.setTextFormat(Qt.PlainText)
        error.setObjectName("error:" + path)
        # red 9 pt text by palette and font: a style sheet on each of the hundred labels was half the
        # panel's making (Qt builds a style for each widget that has one)
        error.setPalette(self._error_palette)
        error.setFont(self._error_font)
        error.hide()
        form.addRow(error)
        self.editors[path] = editor
        self.errors[path] = error

    # ---- document -> widgets ----
    def _on_doc_changed(self, changes) -> None:
        if any(c.collection in ("workload", "parallelism", "nodes", "jobs") for c in changes):
            self.load()

    def _job(self):
        """The job edited: spec.jobs[job_index], or None in a file with one job (spec.workload)."""
        jobs = self.qdoc.doc.spec.jobs
        return jobs[min(self.job_index, len(jobs) - 1)] if jobs else None

    def _job_values(self):
        """(workload, parallelism) of the job edited, as the document holds them (None: unset)."""
        job = self._job()
        spec = self.qdoc.doc.spec
        return (job.workload, job.parallelism) if job is not None else (spec.workload, spec.parallelism)

    def set_job_index(self, index: int) -> None:
        """Edit job `index` of spec.jobs (the Jobs panel's current job)."""
        if index != self.job_index:
            self.job_index = max(0, index)
            self.load()

    def load(self) -> None:
        self._loading = True
        self.job_index = min(self.job_index, max(0, len(self.qdoc.doc.spec.jobs) - 1))
        job = self._job()
        self.which.setVisible(job is not None)
        if job is not None:
            self.which.setText(f"<b>Job {job.name}</b> ({self.job_index + 1} of {len(self.qdoc.doc.spec.jobs)}; "
                               "pick another in the Jobs panel)")
        w, p = self._job_values()
        w = w or Workload()
        p = p or Parallelism()
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
                editor.setCurrentText(UNSET if value is None else str(value))
            else:
                editor.setText("" if value is None else str(value))
        self._loading = False
        self._input_errors = {}
        self._show()

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
                if editor.currentText() == UNSET:
                    continue
                p_values[key] = _scalar(editor.currentText()) if key == "zero_stage" else editor.currentText()
            else:
                text = editor.text().strip()
                if text:
                    p_values[key] = text if key == "rank_order" else _scalar(text)
        from ...core.io.schema import Builder

        b = Builder()
        workload = b.value(Workload, w_values, ("spec", "workload"))
        parallelism = b.value(Parallelism, p_values, ("spec", "parallelism"))
        return workload, parallelism, b.problems

    def _check_input(self) -> list:
        """Values that do not parse (said beside their field; they are not committed)."""
        if self._loading:
            return []
        _, _, problems = self._candidate()
        self._input_errors = {}
        for p in problems:
            path = _field_of(p.path, self.errors)
            if path is not None:
                self._input_errors.setdefault(path, p.message + (f" ({p.fix})" if p.fix else ""))
        self._show()
        return problems

    def show_problems(self, problems) -> None:
        """The design's problems (the window's one check per revision): each job problem beside its
        field, and the same count as the status bar."""
        self.problems = list(problems)
        self._show()

    def field_texts(self) -> dict[str, str]:
        """What is written beside each field (tests, and what a user reads)."""
        return {path: label.text() for path, label in self.errors.items() if not label.isHidden()}

    def _show(self) -> None:
        own = f"spec.jobs[{self.job_index}]."
        w, par = self._job_values()
        changed = self._changed if self._changed_job == (w or Workload(), par or Parallelism()) else []
        in_jobs_list = self._job() is not None  # the file lists its jobs in spec.jobs (one or more)

        def place(p) -> str | None:
            raw = p.path or ""
            if in_jobs_list and raw.startswith(own):
                raw = "spec." + raw[len(own):]  # this job's keys: beside their fields
            elif raw.startswith("spec.jobs["):
                raw = ""  # another job's: counted in the summary
            field = _field_of(raw, self.errors)
            return None if field is None else _where_the_user_changed(field, p.message, changed)

        # only the problems that came since the last list are placed (thousands at 131k GPUs, the cluster's)
        self.places.update(self.problems, (own, in_jobs_list, tuple(changed)), place)
        beside = {path: [p.message + (f" ({p.fix})" if p.fix else "") for p in problems]
                  for path, problems in self.places.beside().items()}
        for path, text in self._input_errors.items():
            beside[path] = [text]  # what is typed now matters more than what the document holds
        for path, label in self.errors.items():
            texts = beside.get(path)
            label.setVisible(bool(texts))
            if texts:
                label.setText("\n".join(texts))
                label.setToolTip("\n".join(texts))
        self._show_summary()

    def _show_summary(self) -> None:
        problems = self.problems
        errors, elsewhere = self.places.errors, self.places.elsewhere
        if problems:
            color = "#b91c1c" if errors else "#b45309"
            text = f"<span style='color:{color}'><b>{counts_text(errors, len(problems) - errors)}</b></span>"
            if errors:
                text += " — the job is evaluated once the errors are fixed"
            if elsewhere:
                text += (f"; {elsewhere} outside the job (the cluster): "
                         "<a href='problems'>see them all</a>")
            self.summary.setText(text)
            self.summary.setToolTip("\n".join(p.format() for p in problems[:30]))
            if errors:
                return
        else:
            self.summary.setToolTip("")
        workload, parallelism = self._job_values()
        job = self._job()
        gpus = None
        if job is not None:
            gpus = job.placement.gpus or (parallelism.num_gpus if parallelism else None)
        gpus = gpus or self.gpus.of(self.qdoc.doc)
        plan = self._plan_of(workload, parallelism, gpus) if workload is not None else None
        if plan is None:
            if not problems:
                self.summary.setText("no job")
            return
        line = (f"<b>{plan.num_gpus} GPUs</b> = TP {plan.tp} x PP {plan.pp} x CP {plan.cp} x DP "
                f"{plan.dp}" + (f", EP {plan.ep}" if plan.ep > 1 else "")
                + f"; {plan.num_microbatches} micro-batches per step")
        self.summary.setText(line if not problems else f"{self.summary.text()}<br>{line}")

    def _plan_of(self, workload: Workload, parallelism: Parallelism | None, gpus: int):
        """The job's resolved plan (None: impossible), checked again only when the job or the GPUs it is
        sized by changed: a cable's delete or undo changes neither, and its check result came back to
        the window's thread with the engine's thread running (~12 ms there at 131k GPUs)."""
        asked = (workload, parallelism, gpus)
        if self._plan_kept is None or self._plan_kept[0] != asked:
            plan, _ = check_job(workload, parallelism, gpus, self.catalog, suggest=False)
            self._plan_kept = (copy.deepcopy(asked), plan)  # (a copy: an edit in place cannot match it)
        return self._plan_kept[1]

    def _commit(self) -> None:
        if self._loading:
            return
        build_problems = self._check_input()
        workload, parallelism, _ = self._candidate()
        if build_problems:
            return  # said beside the field; a value that does not parse never reaches the document
        old_w, old_p = self._job_values()
        if workload == (old_w or Workload()) and parallelism == (old_p or Parallelism()):
            return
        self._changed = [f"{section}.{f.name}" for section, new, old in
                         (("workload", workload, old_w or Workload()), ("parallelism", parallelism, old_p or Parallelism()))
                         for f in dataclasses.fields(new) if getattr(new, f.name) != getattr(old, f.name)]
        self._changed_job = (workload, parallelism)
        job = self._job()
        if job is None:
            self.qdoc.push(commands.SetJob(self.qdoc, workload, parallelism, "Edit job"))
            return
        from ..document.job_commands import SetJobs

        jobs = copy.deepcopy(list(self.qdoc.doc.spec.jobs))
        jobs[self.job_index].workload, jobs[self.job_index].parallelism = workload, parallelism
        self.qdoc.push(SetJobs(self.qdoc, jobs, f"Edit job {job.name}"))


def _scalar(text: str):
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


# Rules on a product of several fields (the model-parallel size must divide the GPUs; the global
# batch must be a multiple of micro-batch x DP): the check names one field, but the user changed
# another of them, and that is where the message belongs.
JOINT_RULES = (
    ("TP x PP x CP", ("parallelism.tensor_model_parallel_size", "parallelism.pipeline_model_parallel_size",
                      "parallelism.context_parallel_size")),
    ("does not divide by micro_batch_size x DP", ("workload.global_batch_size", "workload.micro_batch_size",
                                                  "parallelism.tensor_model_parallel_size",
                                                  "parallelism.pipeline_model_parallel_size",
                                                  "parallelism.context_parallel_size")),
)


def _where_the_user_changed(path: str | None, message: str, changed: list[str]) -> str | None:
    """The field to show a problem beside: for a joint rule, the member the last edit changed."""
    for words, members in JOINT_RULES:
        if path in members and words in message:
            edited = [c for c in changed if c in members]
            return edited[-1] if edited else path
    return path


def _field_of(path: str, known) -> str | None:
    """'spec.parallelism.tensor_model_parallel_size' -> 'parallelism.tensor_model_parallel_size' when
    the panel has that field."""
    path = path.replace("spec.", "", 1) if path.startswith("spec.") else path
    head = path.split("[")[0]
    return path if path in known else head if head in known else None
