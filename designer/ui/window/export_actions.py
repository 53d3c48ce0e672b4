"""The window's exports of the design and its result: the canvas picture, the Breakdown and
Timeline plots, the Perfetto trace and the PDF report."""
from __future__ import annotations

from PySide6.QtWidgets import QFileDialog, QMessageBox

from ..dialogs.dialog_folders import export_start


class ExportActions:
    """File > Export Canvas, Export Breakdown/Timeline Plot, Export Trace, Report of `window`."""

    def __init__(self, window):
        self.window = window
        self.qdoc = window.qdoc

    def _ask(self, title: str, suffix: str, filters: str, tail: str = "") -> str | None:
        path, _ = QFileDialog.getSaveFileName(self.window, title, export_start(self.qdoc, suffix, tail), filters)
        return path or None

    def canvas(self) -> None:
        from ..common.export import export_scene

        w = self.window
        # a PDF for a printed report on A4 or Letter paper, or one page of the drawing's own size
        pages = {"PDF on A4 paper (*.pdf)": "A4", "PDF on Letter paper (*.pdf)": "Letter"}
        path, chosen = QFileDialog.getSaveFileName(
            w, "Export canvas", export_start(self.qdoc, ".png"),
            ";;".join(["PNG image (*.png)", "SVG drawing (*.svg)", "PDF document (*.pdf)", *pages]))
        if path:
            try:
                export_scene(w.scene, path, page=pages.get(chosen) if path.lower().endswith(".pdf") else None)
                w.tell(f"exported {path}")
            except (OSError, ValueError) as exc:
                QMessageBox.critical(w, "Cannot export", str(exc))

    def panel(self, which: str, path: str | None = None) -> str | None:
        """The Breakdown ("breakdown") or Timeline ("timeline") plot as PNG, SVG, PDF or CSV."""
        w = self.window
        panel = w.breakdown_panel if which == "breakdown" else w.timeline_panel
        w.timeline_panel.design_name = self.qdoc.name  # the exported timeline's title names the design
        if w.result is None:
            w.tell("no evaluation to export yet")
            return None
        path = path or self._ask(f"Export {which}", ".png",
                                 "PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf);;CSV data (*.csv)",
                                 f"-{which}")
        if path is None:
            return None
        try:
            panel.export(path)
        except (OSError, ValueError) as exc:
            QMessageBox.critical(w, "Cannot export", str(exc))
            return None
        w.tell(f"exported {path}")
        return path

    def report(self, path: str | None = None) -> str | None:
        w = self.window
        if w.result is None:
            w.tell("no evaluation to report yet")
            return None
        path = path or self._ask("Report", ".pdf", "PDF document (*.pdf)")
        if path is None:
            return None
        from ...core.export.report import build_report
        from ..common.report_pictures import render_report_pictures

        pictures = render_report_pictures(self.qdoc.doc, w.result, self.qdoc.name, scene=w.scene)
        try:
            pages = build_report(self.qdoc.doc, w.result, path, self.qdoc.path or self.qdoc.name, pictures=pictures)
        except OSError as exc:
            QMessageBox.critical(w, "Cannot write the report", f"{path}: {exc}")
            return None
        w.tell(f"wrote {path}: {pages} pages")
        return path

    def trace(self, path: str | None = None) -> str | None:
        w = self.window
        if w.result is None:
            w.tell("no evaluation to export yet")
            return None
        path = path or self._ask("Export trace", ".json", "Perfetto / Chrome trace (*.json)")
        if path is None:
            return None
        import json

        import numpy as np

        from ...core.export.trace import trace_events
        from ...core.io.files import atomic_write_text

        doc = self.qdoc.doc
        counts = np.array([n.accelerator_count for n in doc.nodes], dtype=np.int64)
        gpu_node = np.repeat(np.arange(len(counts)), counts)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]) if len(counts) else counts
        gpu_local = np.arange(len(gpu_node)) - np.repeat(starts, counts)
        data = trace_events(w.result, gpu_node, [n.id for n in doc.nodes], gpu_local)
        try:
            atomic_write_text(path, json.dumps(data, separators=(",", ":")))
        except OSError as exc:
            QMessageBox.critical(w, "Cannot write the trace", f"{path}: {exc.strerror or exc}")
            return None
        w.tell(f"wrote {path}: {len(data['traceEvents'])} trace events")
        return path
