"""The window's tools that make or judge a whole design: Generate Fat-Tree, Calibrate from
nccl-tests, Compare With."""
from __future__ import annotations

import time

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialog, QFileDialog, QMessageBox

from ...core.problems import DesignerError
from ..document import commands
from ..dialogs.dialog_folders import design_folder
from .file_actions import FILE_FILTER


class DesignTools:
    """Tools > Generate Fat-Tree, File > Calibrate from nccl-tests and Compare With of `window`."""

    def __init__(self, window):
        self.window = window
        self.qdoc = window.qdoc
        self.calibration_dialog = None  # the last one shown (tests)
        self.compare_dialog = None
        self.decide_dialog = None
        self.costs_dialog = None  # Tools > Parts and Costs, once opened

    def generate(self) -> None:
        from ..dialogs.generator_dialog import GeneratorDialog

        w = self.window
        dialog = GeneratorDialog(w, design=self.qdoc.doc)  # starts from the design's own parts
        if not dialog.exec():
            return
        options, catalog = dialog.options(), dialog.catalog
        if options["nic_gbps"] is None or options["switch_radix"] is None:
            QMessageBox.critical(w, "Cannot generate", dialog.error() or "NIC speed and switch radix must be numbers")
            return
        from ...core.generate import generate_fat_tree

        def build():
            from ..canvas.scene_plan import plan_if_large

            new = generate_fat_tree(**options, catalog=catalog)
            return new, plan_if_large(new)  # a big fabric's canvas planned here too, as for an open

        def built(made) -> None:
            from ...core.gc_pause import collector_paused
            from ...core.io.bundled import untitled_title

            new, plan = made
            w.scene.build.use_plan(plan)  # used if the next rebuild is of this very design
            if self.qdoc.doc.spec.workload is not None:
                new.set_job(self.qdoc.doc.spec.workload, self.qdoc.doc.spec.parallelism)
            # A new design with no file: Save asks where, so it never overwrites the design it replaced.
            with collector_paused():  # as for an open: the canvas's items are no cyclic garbage
                self.qdoc.push(commands.ReplaceDocument(self.qdoc, new, "Generate fat-tree",
                                                        identity=(None, untitled_title(new.metadata.name))))
                w.view.fit()

        # the dialog validated the options; anything else the builder raises is shown, never a crash
        w.run_in_background(
            "Generate", f"Building a fat-tree of {options['nodes']:,} servers...",
            build, built,
            lambda exc: QMessageBox.critical(w, "Cannot generate", str(exc)),
            lambda: w.tell("generate cancelled: the design is unchanged"))

    def calibrate_from_logs(self, paths: list[str] | None = None) -> bool:
        """File > Calibrate from nccl-tests...: fit the design's link efficiencies to the logs
        picked (as `designer calibrate` does), show the fit, and apply it as one undo step."""
        w = self.window
        if paths is None:
            paths, _ = QFileDialog.getOpenFileNames(w, "Calibrate from nccl-tests logs",
                                                    str(design_folder(self.qdoc)),
                                                    "nccl-tests logs (*.txt *.log *.out *.json);;All files (*)")
            if not paths:
                return False
        from ...core.analysis.calibrate import calibrate, described_source, read_logs
        from ..dialogs.calibrate_dialog import CalibrationDialog

        doc = self.qdoc.doc.snapshot()
        QApplication.setOverrideCursor(Qt.WaitCursor)
        try:
            result = calibrate(doc, read_logs(list(paths)), sources=list(paths))
        except DesignerError as exc:
            QMessageBox.warning(w, "Cannot calibrate", str(exc))
            return False
        finally:
            QApplication.restoreOverrideCursor()
        dialog = CalibrationDialog(w, result)
        self.calibration_dialog = dialog
        if dialog.exec() == QDialog.Accepted:
            result = dialog.fit  # the fit shown: the whole one, or the one by size range
        if dialog.result() != QDialog.Accepted or not result.accepted:
            w.tell("calibration not applied" + (f": {result.refusals[0]}" if result.refusals else ""))
            return False
        new = self.qdoc.doc.copy()
        new.spec.calibration = result.calibration
        new.metadata.description = described_source(new.metadata.description, list(paths),
                                                    time.strftime("%Y-%m-%d"))
        self.qdoc.push(commands.ReplaceDocument(self.qdoc, new, "Calibrate from nccl-tests"))
        w.tell("calibrated: " + ", ".join(f"{c.name} {c.value:.3f}" for c in result.constants))
        return True

    def parts_and_costs(self):
        """Tools > Parts and Costs...: the non-modal dialog of prices, power and failure rates
        (dialogs/costs_dialog.py), one per window. Returns it."""
        from ..dialogs.costs_dialog import CostsDialog

        if self.costs_dialog is None:
            self.costs_dialog = CostsDialog(self.window)
        if self.costs_dialog.isVisible():
            self.costs_dialog.raise_()  # open already: to the front
        self.costs_dialog.show()
        self.costs_dialog.refresh()
        return self.costs_dialog

    def compare_clusters(self):
        """Tools > Compare Clusters for a Model...: the open design's job on several designs, each at
        its best plan, per run (dialogs/decide_dialog.py). Returns the dialog, or None without a job."""
        from ..dialogs.decide_dialog import open_decide_dialog

        self.decide_dialog = open_decide_dialog(self.window)
        return self.decide_dialog

    def compare_with(self, path: str | None = None):
        """File > Compare With...: the open design (as the Breakdown panel shows it) beside another
        file, in a dialog that evaluates that file off the UI thread. Returns the dialog."""
        w = self.window
        if w.result is None or w.stale_reason:
            w.tell("no current evaluation to compare yet" + (f": {w.stale_reason}" if w.stale_reason else ""))
            return None
        if path is None:
            path, _ = QFileDialog.getOpenFileName(w, "Compare with", str(design_folder(self.qdoc)), FILE_FILTER)
            if not path:
                return None
        from ..dialogs.compare_dialog import CompareDialog

        dialog = CompareDialog(w, self.qdoc.doc.snapshot(), w.result, self.qdoc.path or self.qdoc.name, path)
        dialog.setAttribute(Qt.WA_DeleteOnClose)
        self.compare_dialog = dialog
        dialog.resize(dialog.sizeHint())
        dialog.show()
        return dialog
