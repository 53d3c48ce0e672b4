"""The Jobs panel: the jobs sharing the cluster (spec.jobs), how fast each goes and who slows it.

One row per job: its name, GPUs, step time on the shared fabric, how much slower than alone and
which job slows it on which links (engine/stages/jobs.py). Add, Remove and Rename act on the list, the
placement editor below on the current job (policy, GPUs, or the servers selected on the canvas),
and the Job panel edits the current job's workload and plan. The current job is also the one the
Breakdown and Timeline show (`shownJobChanged`). Every edit is one undo step (job_commands.SetJobs).
"""
from __future__ import annotations

import copy
import dataclasses

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView, QComboBox, QFormLayout, QGroupBox, QHBoxLayout, QHeaderView, QLabel, QPushButton,
    QSpinBox, QTableWidget, QTableWidgetItem, QToolButton, QVBoxLayout, QWidget,
)

from ...core.model.jobs import PLACEMENT_POLICIES, JobPlacement, JobSpec
from ..common.gpu_count import GpuCount
from ..document.job_commands import SetJobs, current_jobs, unique_name

COLUMNS = ("Job", "GPUs", "Step", "vs alone", "Slowed by")
FROM_PLAN = "(from the plan)"  # the GPU spin box at 0: placement.gpus unset


class JobsPanel(QWidget):
    shownJobChanged = Signal(int)  # the job the Breakdown and Timeline show (and the Job panel edits)
    editWorkloadRequested = Signal()  # "Workload and plan...": the window brings the Job panel up
    message = Signal(str)  # a refusal, for the status bar

    def __init__(self, qdoc, selected_servers, parent=None, gpus: GpuCount | None = None):
        """`selected_servers`: callable -> the ids of the servers selected on the canvas; `gpus`: the
        window's kept GPU count (the size of a job that names none, before a result says it)."""
        super().__init__(parent)
        self.qdoc = qdoc
        self.design_gpus = gpus if gpus is not None else GpuCount()
        self.selected_servers = selected_servers
        self.result = None  # the last evaluation (its .jobs), for the figures of the rows
        self.current = 0
        self._loading = False
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        self._build_selector(outer)
        self._build_table(outer)
        self._build_buttons(outer)
        self._build_placement(outer)

        qdoc.changed.connect(self._on_doc_changed)
        qdoc.replaced.connect(self._on_replaced)
        self.load()

    def _build_selector(self, outer: QVBoxLayout) -> None:
        """The job the Breakdown and Timeline show."""
        shown = QHBoxLayout()
        shown.addWidget(QLabel("Breakdown and Timeline show"))
        self.selector = QComboBox()
        self.selector.setObjectName("job_selector")
        self.selector.setToolTip("The job whose step the Breakdown and Timeline show, and the Job panel edits")
        self.selector.activated.connect(self.set_current)
        shown.addWidget(self.selector, 1)
        outer.addLayout(shown)

    def _build_table(self, outer: QVBoxLayout) -> None:
        """The jobs, one row each, with their figures."""
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.DoubleClicked | QAbstractItemView.EditKeyPressed)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeToContents)
        header.setStretchLastSection(True)
        self.table.currentCellChanged.connect(lambda row, _c, _r, _pc: row >= 0 and self.set_current(row))
        self.table.itemChanged.connect(self._item_changed)
        outer.addWidget(self.table, 1)

    def _build_buttons(self, outer: QVBoxLayout) -> None:
        """Add, Remove, Rename and the Job panel's editor."""
        self.act_add = QAction("Add", self, toolTip="A new job: a copy of the current job's workload and plan, "
                                                    "placed packed on the free GPUs")
        self.act_remove = QAction("Remove", self, toolTip="Remove the current job")
        self.act_rename = QAction("Rename", self, toolTip="Rename the current job (or double-click its name)")
        self.act_add.triggered.connect(self.add_job)
        self.act_remove.triggered.connect(self.remove_job)
        self.act_rename.triggered.connect(self.start_rename)
        buttons = QHBoxLayout()
        for act in (self.act_add, self.act_remove, self.act_rename):
            button = QToolButton()
            button.setDefaultAction(act)
            buttons.addWidget(button)
        self.edit_button = QPushButton("Workload and plan...")
        self.edit_button.setToolTip("Edit the current job's model, batch and parallel plan in the Job panel")
        self.edit_button.clicked.connect(self.editWorkloadRequested)
        buttons.addStretch(1)
        buttons.addWidget(self.edit_button)
        outer.addLayout(buttons)

    def _build_placement(self, outer: QVBoxLayout) -> None:
        """The current job's placement: policy, GPUs and servers."""
        box = QGroupBox("Placement of the current job")
        form = QFormLayout(box)
        self.policy = QComboBox()
        self.policy.addItems(PLACEMENT_POLICIES)
        self.policy.setToolTip("packed: fill pods and racks in order; spread: balance over pods; rail-aligned: "
                               "whole servers of one leaf group; domain-aligned: whole NVLink domains first")
        self.policy.activated.connect(lambda _i: self._set_placement(policy=self.policy.currentText()))
        form.addRow("policy", self.policy)
        self.gpus = QSpinBox()
        self.gpus.setRange(0, 1 << 20)
        self.gpus.setSpecialValueText(FROM_PLAN)
        self.gpus.setKeyboardTracking(False)  # one edit when typed (Enter), not one per digit
        self.gpus.setToolTip("GPUs the job gets; 0: its plan's num_gpus (or all GPUs of its servers)")
        self.gpus.valueChanged.connect(lambda v: self._set_placement(merge="gpus", gpus=v or None))
        form.addRow("GPUs", self.gpus)
        self.servers = QLabel()
        self.servers.setWordWrap(True)
        form.addRow("servers", self.servers)
        row = QHBoxLayout()
        self.act_use_selected = QAction("Use Selected Servers", self,
                                        toolTip="Run the current job on the servers selected on the canvas, "
                                                "in file order (placement.nodes)")
        self.act_use_selected.triggered.connect(self.use_selected_servers)
        self.act_clear_servers = QAction("Clear", self, toolTip="Let the policy place the job again")
        self.act_clear_servers.triggered.connect(lambda: self._set_placement(nodes=[], racks=[]))
        for act in (self.act_use_selected, self.act_clear_servers):
            button = QToolButton()
            button.setDefaultAction(act)
            row.addWidget(button)
        row.addStretch(1)
        form.addRow(row)
        outer.addWidget(box)

    # ---- the jobs ----
    def jobs(self) -> list[JobSpec]:
        doc = self.qdoc.doc
        return current_jobs(doc, None if doc.spec.jobs else self._gpus_in_use() or self.design_gpus.of(doc))

    def _gpus_in_use(self) -> int | None:
        return self.result.num_gpus if self.result is not None and not self.qdoc.doc.spec.jobs else None

    def _push(self, jobs: list[JobSpec], text: str, merge: str | None = None) -> None:
        single = not self.qdoc.doc.spec.jobs
        self.qdoc.push(SetJobs(self.qdoc, jobs, text, single=single, merge=merge))

    # ---- actions ----
    def add_job(self, *_checked) -> int:
        """Jobs > Add: a copy of the current job on the free GPUs (see add_new_job)."""
        return self.add_new_job()

    def add_new_job(self, workload=None, parallelism=None, what: str = "Add job") -> int:
        """A new job after the others: the current job's workload and plan (or `workload` and
        `parallelism`: an imported launch script's), packed on the free GPUs (as many as the job
        asks, or what is left when fewer are free, cut to a count its TP x PP x CP divides). Returns
        its index; -1, said, when nothing that fits is free."""
        jobs = self.jobs()
        model = jobs[min(self.current, len(jobs) - 1)]
        if workload is not None and model.workload is not None:
            model = JobSpec(name=workload.preset or "job", workload=workload, parallelism=parallelism,
                            placement=JobPlacement())
        if model.workload is None:
            self.message.emit("Add job: the design has no job yet; choose a model in the Job panel first")
            return -1
        asked = model.placement.gpus or (model.parallelism.num_gpus if model.parallelism else None)
        if asked is None and self.result is not None:
            asked = self.result.num_gpus
        free = self._free_gpus(jobs)
        if free <= 0:  # a copy on GPUs that are all taken would be in error at once
            self.message.emit(f"{what}: no GPU is free (every GPU that is up is a job's); lower a job's GPUs, "
                              "remove a job or add servers first")
            return -1
        par = copy.deepcopy(model.parallelism)
        # fit the copy into what is free: the most GPUs, up to what the current job asks, that its
        # TP x PP x CP divides (a count the plan cannot split would be in error at once)
        split = (par.tensor_model_parallel_size * par.pipeline_model_parallel_size * par.context_parallel_size
                 if par is not None else 1)
        gpus = min(asked, free) if asked else free
        gpus -= gpus % split
        if gpus < split:
            self.message.emit(f"{what}: {free} GPU(s) are free, fewer than the job's TP x PP x CP = {split}; "
                              "free more GPUs or add servers first")
            return -1
        if par is not None and par.num_gpus is not None and gpus is not None:
            par.num_gpus = None  # the placement's count decides; a copied num_gpus would contradict it
        base = model.name if workload is not None else "job"
        new = JobSpec(name=unique_name([j.name for j in jobs], base), workload=copy.deepcopy(model.workload),
                      parallelism=par, placement=JobPlacement(policy="packed", gpus=gpus))
        self._push(jobs + [new], f"{what} {new.name}")
        self.set_current(len(jobs))
        return len(jobs)

    def _free_gpus(self, jobs: list[JobSpec]) -> int:
        """GPUs up that no job asks for (a job listing servers counts their GPUs)."""
        doc = self.qdoc.doc
        up = sum(0 if n.state == "down" or n.role != "compute" else max(0, n.accelerator_count - n.gpus_down)
                 for n in doc.nodes)
        gpus_of = {n.id: n.accelerator_count for n in doc.nodes}
        taken = 0
        for j in jobs:
            listed = sum(gpus_of.get(i, 0) for i in j.placement.nodes)
            taken += j.placement.gpus or (j.parallelism.num_gpus if j.parallelism else None) or listed
        return up - taken

    def remove_job(self) -> None:
        jobs = self.jobs()
        if len(jobs) <= 1:
            self.message.emit("Remove job: a design keeps at least one job (edit it in the Job panel)")
            return
        gone = jobs.pop(self.current)
        self._push(jobs, f"Remove job {gone.name}")
        self.set_current(min(self.current, len(jobs) - 1))

    def start_rename(self) -> None:
        """Edit the current job's name in its row (Enter commits it as one undo step)."""
        item = self.table.item(self.current, 0)
        if item is not None:
            self.table.setCurrentItem(item)
            self.table.editItem(item)

    def rename_job(self, index: int, name: str) -> bool:
        name = name.strip()
        jobs = self.jobs()
        if not 0 <= index < len(jobs) or name == jobs[index].name:
            return False
        if not name:
            self.message.emit("Rename job: a job needs a name")
            return False
        if name in [j.name for i, j in enumerate(jobs) if i != index]:
            self.message.emit(f"Rename job: another job is named {name!r}; choose another name")
            return False
        old = jobs[index].name
        jobs[index].name = name
        self._push(jobs, f"Rename job {old} to {name}")
        return True

    def use_selected_servers(self) -> None:
        doc = self.qdoc.doc
        chosen = set(self.selected_servers())
        nodes = [n.id for n in doc.nodes if n.id in chosen]  # in file order: rank order follows the file
        if not nodes:
            self.message.emit("Use Selected Servers: select servers on the canvas first")
            return
        self._set_placement(nodes=nodes, racks=[], gpus=None)  # all of their GPUs (lower it below if wanted)

    def _set_placement(self, merge: str | None = None, **fields) -> None:
        if self._loading:
            return
        jobs = self.jobs()
        if not 0 <= self.current < len(jobs):
            return
        job = jobs[self.current]
        placement = dataclasses.replace(job.placement, **fields)
        if placement == job.placement:
            return
        job.placement = placement
        what = "servers" if "nodes" in fields else ", ".join(fields)
        self._push(jobs, f"Place job {job.name} ({what})", merge=f"{merge}:{self.current}" if merge else None)

    def set_current(self, index: int) -> None:
        count = len(self.jobs())
        index = max(0, min(index, count - 1))
        changed = index != self.current
        self.current = index
        self._show_current()
        if changed:
            self.shownJobChanged.emit(index)

    # ---- document -> widgets ----
    def _on_doc_changed(self, changes) -> None:
        if any(c.collection in ("jobs", "workload", "parallelism") for c in changes):
            self.load()

    def _on_replaced(self) -> None:
        self.result = None
        self.current = 0
        self.load()
        self.shownJobChanged.emit(0)

    def show_result(self, result) -> None:
        """The rows' figures from a new evaluation (None: the design has no result now; the rows say so)."""
        self.result = result
        self.load()

    def load(self) -> None:
        self._loading = True
        jobs = self.jobs()
        if self.current >= len(jobs):
            self.current = len(jobs) - 1
            self.shownJobChanged.emit(self.current)
        results = {j.name: j for j in (getattr(self.result, "jobs", None) or [])}
        self.table.setRowCount(len(jobs))
        self.selector.clear()
        for row, job in enumerate(jobs):
            got = results.get(job.name)
            self.selector.addItem(job.name)
            for col, text in enumerate(_row_texts(job, got)):
                item = self.table.item(row, col)
                if item is None:
                    item = QTableWidgetItem()
                    self.table.setItem(row, col, item)
                item.setText(text)
                flags = Qt.ItemIsSelectable | Qt.ItemIsEnabled | (Qt.ItemIsEditable if col == 0 else Qt.NoItemFlags)
                item.setFlags(flags)
                if col == len(COLUMNS) - 1:
                    item.setToolTip(_blame_tip(got) or text)
        self.act_remove.setEnabled(len(jobs) > 1)
        self._loading = False
        self._show_current()

    def _show_current(self) -> None:
        jobs = self.jobs()
        if not jobs:
            return
        self._loading = True
        job = jobs[self.current]
        self.selector.setCurrentIndex(self.current)
        if self.table.currentRow() != self.current:
            self.table.setCurrentCell(self.current, 0)
        self.policy.setCurrentText(job.placement.policy)
        self.gpus.setValue(job.placement.gpus or 0)
        listed = job.placement.nodes or job.placement.racks
        self.servers.setText(", ".join(listed) if listed else f"placed by the policy ({job.placement.policy})")
        self.policy.setEnabled(not listed)
        self.act_clear_servers.setEnabled(bool(listed))
        self._loading = False

    def _item_changed(self, item: QTableWidgetItem) -> None:
        if self._loading or item.column() != 0:
            return
        if not self.rename_job(item.row(), item.text()):
            self.load()  # refused or unchanged: the row shows the name the file holds

    # ---- tests and the window ----
    def row_texts(self) -> list[list[str]]:
        return [[self.table.item(r, c).text() for c in range(len(COLUMNS))] for r in range(self.table.rowCount())]


def _row_texts(job: JobSpec, got) -> list[str]:
    if got is None:
        asked = job.placement.gpus or (job.parallelism.num_gpus if job.parallelism else None)
        listed = job.placement.nodes or job.placement.racks
        where = f"{len(listed)} {'servers' if job.placement.nodes else 'racks'}" if listed else "-"
        return [job.name, f"{asked:,}" if asked else where, "-", "-", ""]
    r = got.result
    slow = got.slowdown_vs_alone
    blame = got.interference[0] if got.interference else None
    by = (f"{blame['job']} +{blame['share']:.1%} ({blame['resource']})" + (" ..." if len(got.interference) > 1 else "")
          if blame else "nobody")
    return [job.name, f"{r.num_gpus:,}", f"{r.step_time_s:.3f} s", f"+{slow:.1%}" if slow >= 5e-4 else "same", by]


def _blame_tip(got) -> str:
    if got is None or not got.interference:
        return ""
    return "\n".join(f"{b['job']}: +{b['share']:.1%} on {b['resource']}"
                     + (f" ({', '.join(b.get('elements', []))})" if b.get("elements") else "")
                     for b in got.interference)
