"""The window's file commands: New, Open (off the UI thread), Open Recent, Save, Save As, and the
unsaved-changes prompt before a design is dropped."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QMessageBox

from ...core.problems import DesignerError
from ..common.action_guard import connect_action
from ..dialogs.dialog_folders import design_folder

FILE_FILTER = "Designer files (*.yaml *.yml);;All files (*)"
MAX_RECENT = 8


class FileActions:
    """File > New, Open..., Open Recent, Save, Save As of `window` (its document, canvas, palette,
    settings and status bar)."""

    def __init__(self, window):
        self.window = window
        self.qdoc = window.qdoc
        self.recent_menu = None  # File > Open Recent, once the menus are built
        self.example_menu = None  # File > Open Example
        # a big design's canvas is built in slices: each slice's items out of the collector's walks too
        window.scene.buildProgress.connect(lambda made, total: self.qdoc.keep_shown_design_out_of_collections())

    # ---- open ----
    def open_file(self, path: str) -> None:
        """Open a design on the UI thread; a file that fails leaves the open design as it was."""
        w = self.window
        self.qdoc.open(path)
        w.scene.build.finish()  # this call returns with the canvas whole (File > Open does not wait)
        self.add_recent(path)
        w.view.fit()

    def new(self) -> None:
        if self.maybe_save():
            self.qdoc.new()

    def open_dialog(self) -> None:
        if not self.maybe_save():
            return
        path, _ = QFileDialog.getOpenFileName(self.window, "Open design", str(design_folder(self.qdoc)), FILE_FILTER)
        if path:
            self.open_reporting(path)

    def open_reporting(self, path: str) -> None:
        """File > Open and Open Recent: the file is read off the UI thread, under a progress bar with
        Cancel; a file that fails leaves the open design as it was (and says why)."""
        from ...core.io import load_document
        from ...core.model.parts_in_use import parts_in_use
        from ..canvas.scene_plan import plan_if_large

        w = self.window

        def work():
            from ...core.gc_pause import collector_paused

            with collector_paused():  # a full collection walks the growing design: seconds of stalls at 131k
                new = load_document(path)
                new.make_index()  # the editor looks elements up by id: made here, not on the UI thread
                if w.progress is not None:
                    w.progress.say(f"Laying out {Path(path).name}...")
                plan = plan_if_large(new)  # a big design's cables and boxes, worked out here too
                parts = parts_in_use(new, w.palette._catalog)  # what the palette starts from
                if plan is not None:  # a big design, before the collector resumes
                    self.qdoc.keep_read_design_out_of_collections()
                return new, plan, parts

        def opened(loaded) -> None:
            from ...core.gc_pause import collector_paused

            new, plan, parts = loaded
            with collector_paused():  # the canvas makes an item per element, no cyclic garbage (10-20 %)
                w.scene.build.use_plan(plan)
                w.palette.expect_parts(new.spec, parts)
                self.qdoc.take(new, path)
                self.add_recent(path)
                w.view.fit()
                if plan is not None:  # a big design
                    self.qdoc.keep_shown_design_out_of_collections()

        def failed(exc) -> None:
            if self.offer_import(path):
                return
            QMessageBox.critical(w, "Cannot open the file", str(exc) if isinstance(exc, (DesignerError, OSError))
                                 else f"{path}: internal error: {type(exc).__name__}: {exc}")

        w.run_in_background("Open", f"Reading {Path(path).name}...", work, opened, failed,
                            lambda: w.tell(f"open of {Path(path).name} cancelled"))

    def offer_import(self, path: str) -> bool:
        """A file that is no design but another tool's output (ibnetdiscover, topology.conf, ...):
        offer its importer (File > Import) instead of a YAML error. True when it was offered."""
        from ...core.io.importers.formats import recognise

        fmt = recognise(path)
        if fmt is None:
            return False
        answer = QMessageBox.question(
            self.window, "Not a design file",
            f"{Path(path).name} is {fmt.what}, not a Designer design.\n\nImport it (File > Import > "
            f"{fmt.title.rstrip('.')})?", QMessageBox.Yes | QMessageBox.Cancel, QMessageBox.Yes)
        if answer == QMessageBox.Yes:
            self.window.imports.import_file(fmt.key, path)
        else:
            self.window.tell(f"{Path(path).name} not opened: it is {fmt.what}")
        return True

    # ---- save ----
    def save(self) -> bool:
        """Save to the document's file; an untitled one (new, generated, an example's copy) asks where."""
        if not self.qdoc.path:
            return self.save_as()
        return self.save_to(self.qdoc.path)

    def save_as(self) -> bool:
        path, _ = QFileDialog.getSaveFileName(self.window, "Save design", self.save_dialog_start(), FILE_FILTER)
        if not path:
            return False
        if not path.endswith((".yaml", ".yml")):
            path += ".yaml"
        return self.save_to(path)

    def save_dialog_start(self) -> str:
        """The document's own file, else its suggested name in the user's documents folder."""
        from ...core.io.bundled import is_bundled

        if self.qdoc.path and not is_bundled(self.qdoc.path):
            return self.qdoc.path
        from PySide6.QtCore import QStandardPaths

        documents = QStandardPaths.writableLocation(QStandardPaths.DocumentsLocation)
        # a missing folder would make the dialog open in the working directory (often Designer's own)
        folder = documents if documents and Path(documents).is_dir() else str(Path.home())
        return str(Path(folder) / self.qdoc.suggested_file_name())

    def save_to(self, path: str) -> bool:
        """The one way the window writes a design (Save, Save As, save before closing)."""
        w = self.window
        try:
            self.qdoc.save(path)
        except DesignerError as exc:  # a NaN or infinity in the design, or a target in Designer's own files
            QMessageBox.critical(w, "Cannot save", f"{exc}\n\nNothing was written; the design is still open.")
            return False
        except OSError as exc:
            QMessageBox.critical(w, "Cannot save", f"{path}: {exc.strerror or exc}\nThe design is still open; "
                                 "try another folder.")
            return False
        self.add_recent(path)
        w.tell(f"saved {path}")
        if w.autosaver is not None:
            w.autosaver.discard()
        return True

    def maybe_save(self) -> bool:
        """True when it is fine to drop the current design."""
        if not self.qdoc.dirty:
            return True
        answer = QMessageBox.question(self.window, "Unsaved changes", f"Save the changes to {self.qdoc.name}?",
                                      QMessageBox.Save | QMessageBox.Discard | QMessageBox.Cancel, QMessageBox.Save)
        if answer == QMessageBox.Save:
            return self.save()
        return answer == QMessageBox.Discard

    # ---- Open Example ----
    def fill_example_menu(self, menu) -> None:
        """File > Open Example: each bundled example by name; it opens as an untitled copy
        ("<name> (example)"), so Save asks for a file of the user's."""
        from ...core.io.bundled import bundled_examples

        self.example_menu = menu
        for path in bundled_examples():
            act = menu.addAction(path.stem)
            act.setToolTip(str(path))
            act.setStatusTip(f"Open the example {path.stem} (a copy: Save asks where to keep it)")
            connect_action(act, self.window, lambda p=str(path): self.maybe_save() and self.open_reporting(p))
        menu.setEnabled(bool(menu.actions()))

    # ---- Open Recent ----
    def recent(self) -> list[str]:
        value = self.window.settings.value("recent", [])
        if isinstance(value, str):
            value = [value]
        return [v for v in (value or []) if v]

    def add_recent(self, path: str) -> None:
        path = str(Path(path).resolve())
        recent = [path] + [p for p in self.recent() if p != path]
        self.window.settings.setValue("recent", recent[:MAX_RECENT])
        self.update_recent_menu()

    def update_recent_menu(self) -> None:
        menu = self.recent_menu
        if menu is None:
            return
        menu.clear()
        for path in self.recent():
            act = menu.addAction(Path(path).name)
            act.setToolTip(path)
            connect_action(act, self.window, lambda p=path: self.maybe_save() and self.open_reporting(p))
        menu.setEnabled(bool(self.recent()))
