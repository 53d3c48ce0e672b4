"""File > Import: each importer of `designer import`, in the window.

A file dialog, then the importer on the window's background worker (the window keeps painting),
then the import summary (what the file held, what was inferred or guessed, the warnings); Open
takes the result as one undo step: a fabric becomes a new untitled design, an NCCL topology
changes the servers of the open one, a Megatron-LM script sets the current job (or comes in as
a new job on the free GPUs). A bad file shows
the importer's located message and leaves the open design as it was.
"""
from __future__ import annotations

import copy
from pathlib import Path

from PySide6.QtWidgets import QDialog, QFileDialog, QMessageBox

from ...core.io.importers.formats import BY_KEY
from ...core.problems import DesignerError
from ..dialogs.dialog_folders import design_folder
from ..document import commands


class ImportActions:
    """File > Import ▸ of `window`; `last_summary` is the last summary dialog shown (tests)."""

    def __init__(self, window):
        self.window = window
        self.qdoc = window.qdoc
        self.last_summary = None

    def import_file(self, key: str, path: str | None = None, options: dict | None = None) -> None:
        """`options`: gpu=, gpus_per_node= and compute= of a fabric importer (Read Again); default the CLI's."""
        fmt = BY_KEY[key]
        options = options or {}
        w = self.window
        if path is None:
            path, _ = QFileDialog.getOpenFileName(w, f"Import {fmt.what}", str(design_folder(self.qdoc)),
                                                  fmt.file_filter)
            if not path:
                return
        from ...core.io.importers import formats

        if fmt.kind == "fabric":
            def work():
                from ..canvas.scene_plan import plan_if_large

                done = formats.import_fabric(key, path, **options)
                return done, plan_if_large(done.doc)
        elif fmt.kind == "servers":
            design = self.qdoc.doc.copy()  # the importer changes its servers

            def work():
                return formats.import_servers(design, path), None
        else:
            workload, parallelism = self._current_job()

            def work():
                return formats.import_job(path, workload, parallelism), None

        def failed(exc) -> None:
            text = str(exc) if isinstance(exc, (DesignerError, OSError)) else \
                f"{path}: internal error: {type(exc).__name__}: {exc}"
            QMessageBox.critical(w, f"Cannot import {fmt.what}", f"{text}\n\nThe open design is unchanged.")

        w.run_in_background("Import", f"Reading {Path(path).name}...", work,
                            lambda done: self._imported(fmt, done, path, options), failed,
                            lambda: w.tell(f"import of {Path(path).name} cancelled: the design is unchanged"))

    # ---- the summary, then the change ----
    def _imported(self, fmt, done, path: str, options: dict) -> None:
        from ..dialogs.import_summary_dialog import ImportSummaryDialog

        result, plan = done
        w = self.window
        accept = {"fabric": "Open as New Design", "servers": "Apply to the Servers",
                  "job": "Set the Current Job"}[fmt.kind]
        # a launch script may also come in beside the jobs there are, on the GPUs they leave free
        other = "Add as a New Job" if fmt.kind == "job" and self._current_job()[0] is not None else None
        servers = None
        if fmt.kind == "fabric":
            computing = [n for n in result.doc.nodes if n.role == "compute"]
            per_server = options.get("gpus_per_node")  # None: one per HCA port, as the CLI's default
            if per_server is None and fmt.key == "slurm-topology" and computing:
                per_server = computing[0].accelerator_count  # topology.conf has no HCAs to count
            servers = (computing[0].accelerator if computing else options.get("gpu", "H100"), per_server,
                       options.get("compute"))
        dialog = ImportSummaryDialog(w, f"Import {fmt.what}", result.summary, accept, other, servers)
        self.last_summary = dialog
        if dialog.exec() != QDialog.Accepted:
            w.tell("import not applied: the design is unchanged")
            return
        if dialog.choice == "again":  # other GPUs: read the file again, then this summary again
            self.import_file(fmt.key, path, dialog.options())
            return
        if fmt.kind == "fabric":
            self._open_fabric(result.doc, plan, fmt)
        elif fmt.kind == "servers":
            self.qdoc.push(commands.ReplaceDocument(self.qdoc, result.doc, f"Import {fmt.what}"))
        elif dialog.choice == "other":
            if w.jobs_panel.add_new_job(result.workload, result.parallelism, "Import Megatron-LM script as") < 0:
                return  # no GPU free for it: the Jobs panel said so
        else:
            self._set_job(result.workload, result.parallelism)
        w.tell(f"imported {Path(result.summary.source).name}")

    def _open_fabric(self, new, plan, fmt) -> None:
        """The imported fabric as a new untitled design (undo brings the open one back); the open
        design's job comes along, as for Generate."""
        from ...core.gc_pause import collector_paused
        from ...core.io.bundled import untitled_title

        w = self.window
        w.scene.build.use_plan(plan)
        if self.qdoc.doc.spec.workload is not None:
            new.set_job(self.qdoc.doc.spec.workload, self.qdoc.doc.spec.parallelism)
        with collector_paused():
            self.qdoc.push(commands.ReplaceDocument(self.qdoc, new, f"Import {fmt.what}",
                                                    identity=(None, untitled_title(new.metadata.name))))
            w.view.fit()

    def _current_job(self):
        """(workload, parallelism) of the job the Jobs panel shows (the design's job without spec.jobs)."""
        spec = self.qdoc.doc.spec
        if spec.jobs:
            job = spec.jobs[self._current_index()]
            return copy.deepcopy(job.workload), copy.deepcopy(job.parallelism)
        return copy.deepcopy(spec.workload), copy.deepcopy(spec.parallelism)

    def _current_index(self) -> int:
        jobs = self.qdoc.doc.spec.jobs
        return max(0, min(self.window.jobs_panel.current, len(jobs) - 1))

    def _set_job(self, workload, parallelism) -> None:
        """The script's job into the current job: one undo step."""
        import dataclasses

        from ..document.job_commands import SetJobs

        spec = self.qdoc.doc.spec
        if not spec.jobs:
            self.qdoc.push(commands.SetJob(self.qdoc, workload, parallelism, "Import Megatron-LM script"))
            return
        jobs = copy.deepcopy(list(spec.jobs))
        index = self._current_index()
        jobs[index] = dataclasses.replace(jobs[index], workload=workload, parallelism=parallelism)
        self.qdoc.push(SetJobs(self.qdoc, jobs, "Import Megatron-LM script"))
