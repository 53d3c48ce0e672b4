"""Export a pyqtgraph plot (PNG, SVG, PDF) and tables (CSV), atomically.

PNG goes through pyqtgraph's ImageExporter (at twice the on-screen size). SVG and PDF are rendered
with Qt only (QSvgGenerator / QPdfWriter painting the plot's graphics scene): pyqtgraph's
SVGExporter crashes with PySide6 6.12 (ValueError in correctCoordinates) and is never used.
Every file is written to a temporary file next to the target and renamed over it, so a failed
export never leaves a half-written file.
"""
from __future__ import annotations

import csv
import io
import math
import os
from pathlib import Path

from pyqtgraph.exporters import ImageExporter
from PySide6.QtCore import QPoint, QRectF, QSize, QSizeF, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene, QGraphicsView, QWidget

from ...core.io.files import atomic_write_bytes as _atomic_write_bytes
from ...core.io.files import atomic_write_text
from ..common.export import pdf_bytes, png_bytes, svg_bytes

PLOT_FORMATS = (".png", ".svg", ".pdf")
PNG_SCALE = 2.0
MAX_PNG_SIDE = 16384
_HINTS = QPainter.Antialiasing | QPainter.TextAntialiasing | QPainter.SmoothPixmapTransform


def _target(obj) -> tuple[QGraphicsScene, QGraphicsItem | None, QRectF]:
    """(scene, item to export or None for the whole scene, source rect in scene coordinates)."""
    if isinstance(obj, QGraphicsView):
        item = getattr(obj, "centralWidget", None)  # pg.GraphicsView: the PlotItem / GraphicsLayout
        if isinstance(item, QGraphicsItem):
            obj = item
        else:
            scene = obj.scene()
            return scene, None, QRectF(obj.mapToScene(obj.viewport().rect()).boundingRect())
    if isinstance(obj, QGraphicsItem):
        if obj.scene() is None:
            raise ValueError("cannot export a plot item that is not in a scene")
        return obj.scene(), obj, obj.sceneBoundingRect()
    if isinstance(obj, QGraphicsScene):
        return obj, None, obj.itemsBoundingRect()
    raise TypeError(f"cannot export {type(obj).__name__}: pass a pyqtgraph widget, plot item or scene")


def _check(path) -> tuple[Path, str]:
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in PLOT_FORMATS:
        raise ValueError(f"cannot export a plot to {target.name!r}: unknown extension {target.suffix or '(none)'!r}; "
                         f"use one of {', '.join(PLOT_FORMATS)}")
    return target, suffix


def export_plot(widget_or_plotitem, path: str | os.PathLike, scale: float = PNG_SCALE) -> Path:
    """Write the plot to `path` (.png at `scale` x its size, .svg, .pdf); returns the path.

    `widget_or_plotitem`: a pyqtgraph PlotWidget / GraphicsLayoutWidget, a PlotItem or
    GraphicsLayout in a scene, or a plain QWidget (rendered with QWidget.render).
    """
    target, suffix = _check(path)
    if isinstance(widget_or_plotitem, QWidget) and not isinstance(widget_or_plotitem, QGraphicsView):
        data = _widget(widget_or_plotitem, suffix, scale, target.stem)
    else:
        scene, item, source = _target(widget_or_plotitem)
        if not (source.width() > 0 and source.height() > 0):
            raise ValueError(f"cannot export an empty plot ({source.width():g} x {source.height():g})")
        if suffix == ".png":
            data = _png(scene, item, source, scale)
        elif suffix == ".svg":
            data = _svg(lambda p, t: scene.render(p, t, source, Qt.IgnoreAspectRatio), source.size(), target.stem)
        else:
            data = _pdf(lambda p, t: scene.render(p, t, source, Qt.IgnoreAspectRatio), source.size(), target.stem)
    _atomic_write_bytes(target, data)
    return target


def write_csv(path: str | os.PathLike, header, rows) -> Path:
    """Write a CSV table (header row, then `rows`) atomically; returns the path."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(list(header))
    writer.writerows(rows)
    target = Path(path)
    atomic_write_text(target, buffer.getvalue())
    return target


def fmt_float(value: float) -> str:
    """A float for CSV: full precision, no exponent surprises for ordinary values."""
    return repr(float(value))


# ---- formats ------------------------------------------------------------------------------------

def _png(scene: QGraphicsScene, item, source: QRectF, scale: float) -> bytes:
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a positive number, got {scale!r}")
    scale = min(scale, MAX_PNG_SIDE / source.width(), MAX_PNG_SIDE / source.height())
    exporter = ImageExporter(item if item is not None else scene)
    params = exporter.parameters()
    params["background"] = QColor(Qt.white)
    params["antialias"] = True
    params["width"] = max(1, int(round(source.width() * scale)))  # the height follows the aspect
    image = exporter.export(toBytes=True)
    if image is None or image.isNull():
        raise OSError("the image exporter produced no image")
    return png_bytes(image)


def _svg(render, size: QSizeF, title: str) -> bytes:
    box = QRectF(0, 0, size.width(), size.height())

    def paint(painter: QPainter) -> None:
        painter.setRenderHints(_HINTS)
        painter.fillRect(box, QColor(Qt.white))
        render(painter, box)

    return svg_bytes(paint, box, title, "Exported from Designer")


def _pdf(render, size: QSizeF, title: str) -> bytes:
    return pdf_bytes(render, size, QColor(Qt.white), title)


def _widget(widget: QWidget, suffix: str, scale: float, title: str) -> bytes:
    size = QSizeF(max(1, widget.width()), max(1, widget.height()))

    def render(painter: QPainter, box: QRectF) -> None:
        painter.save()
        painter.translate(box.topLeft())
        painter.scale(box.width() / size.width(), box.height() / size.height())
        widget.render(painter, QPoint())  # PySide6 has no render(painter) without the offset
        painter.restore()

    if suffix == ".png":
        image = QImage(QSize(math.ceil(size.width() * scale), math.ceil(size.height() * scale)),
                       QImage.Format_ARGB32)
        image.fill(QColor(Qt.white))
        painter = QPainter(image)
        try:
            painter.setRenderHints(_HINTS)
            render(painter, QRectF(0, 0, image.width(), image.height()))
        finally:
            painter.end()
        return png_bytes(image)
    return (_svg if suffix == ".svg" else _pdf)(render, size, title)


__all__ = ["export_plot", "write_csv", "PLOT_FORMATS", "fmt_float"]
