"""The pictures of the design-review report: the rack canvas, the logical fabric view and the
step's timeline (Gantt), rendered offscreen as PNG for designer.core.export.report.

designer/core never imports Qt, so the report takes its pictures from its caller: the window's
File > Export Report and `designer report` (which renders them here, on Qt's offscreen platform).
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ...core.export.report_layout import Figure, ReportPictures

CANVAS_PX = 2000  # the canvas picture's longer side, pixels (the report scales it to the page)
LOGICAL_SIZE = (1600, 900)  # the logical view's window, pixels
TIMELINE_PX = 1000  # the timeline's width before the PNG's 2x: its text stays legible on an A4 page


def render_report_pictures(doc, result, design_name: str = "", scene=None) -> ReportPictures:
    """The three pictures of `result` (an evaluation of `doc`). `scene`: a CanvasScene already
    showing `doc` (the window's), else one is built. Never raises: a picture that cannot be made
    is left out, and the report says why."""
    try:
        _application()
    except Exception as exc:  # no Qt platform at all (a broken install): the report goes on without pictures
        return ReportPictures(missing=f"Qt could not start ({exc})")
    figures, problems = [], []
    for make in (_canvas, _logical, _timeline):
        try:
            figures.append(make(doc, result, design_name, scene))
        except Exception as exc:  # one picture failing must not cost the user the report
            problems.append(f"{make.__doc__}: {exc}")
    return ReportPictures(figures=tuple(figures), missing="; ".join(problems))


def _application():
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # a command-line run: no window is shown
        app = QApplication(["designer"])
    return app


def _png_of(export) -> bytes:
    """The bytes of the PNG that `export(path)` writes (the UI's exporters write files)."""
    with tempfile.TemporaryDirectory(prefix="designer-report-") as folder:
        path = Path(folder) / "picture.png"
        export(path)
        return path.read_bytes()


def _qdoc(doc):
    from ..document.qt_document import QtDocument

    return QtDocument(doc)


def _canvas(doc, result, design_name, scene) -> Figure:
    """the rack canvas"""
    from ..canvas.scene import CanvasScene
    from .export import default_source, export_scene

    own = scene is None
    if own:
        scene = CanvasScene(_qdoc(doc))
    try:
        scene.build.finish()  # a big design's items are made in slices: all of them now
        scene.heat.show(result)
        source = default_source(scene)
        scale = min(2.0, CANVAS_PX / max(source.width(), source.height(), 1.0))
        png = _png_of(lambda path: export_scene(scene, path, scale=scale, source=source))
    finally:
        if own:
            scene.clear()
    return Figure("canvas", "Racks and cables",
                  png, "The design as the canvas draws it; cables coloured by how busy they are in the step.")


def _logical(doc, result, design_name, scene) -> Figure:
    """the logical fabric view"""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    from .export import png_bytes
    from ..logical.view import LogicalView

    view = LogicalView(_qdoc(doc))
    try:
        view.setAttribute(Qt.WA_DontShowOnScreen, True)
        view.resize(*LOGICAL_SIZE)
        view.show()
        QApplication.processEvents()
        view.rebuild()
        view.fit()
        png = png_bytes(view.grab().toImage())
    finally:
        view.close()
        view.deleteLater()
    return Figure("logical", "Logical fabric", png,
                  "Servers and switches by tier, with the cable bundles between them (View > Logical Fabric View).")


def _timeline(doc, result, design_name, scene) -> Figure:
    """the timeline"""
    from ..panels.timeline import TimelinePanel
    from ..panels.timeline_export import export_whole_timeline

    panel = TimelinePanel()
    try:
        panel.design_name = design_name
        panel.show_result(result)
        png = _png_of(lambda path: export_whole_timeline(panel, path, width=TIMELINE_PX))
    finally:
        panel.close()
        panel.deleteLater()
    return Figure("timeline", "Timeline of one step", png,
                  "Each device's compute and communication over one step, as the Timeline panel shows it.")
