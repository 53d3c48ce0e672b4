"""Export a QGraphicsScene as PNG, SVG or PDF, chosen by the file's extension.

The picture is rendered into memory first and then written atomically (a temporary file in
the same folder, fsynced, renamed over the target), so a failed export never leaves a
half-written file. Only Qt is used: pyqtgraph's exporters are not (its SVGExporter crashes
with PySide6 6.12).
"""
from __future__ import annotations

import math
import os
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QRectF, QSize, QSizeF, Qt
from PySide6.QtGui import QColor, QImage, QPageLayout, QPageSize, QPainter, QPdfWriter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QGraphicsScene

from ...core.io.files import atomic_write_bytes

SOURCE_MARGIN = 20.0  # scene units around the items when no source rect is given
MAX_PNG_SIDE = 16384  # pixels; the scale is reduced to stay within
PDF_DPI = 300
# Scene units are screen pixels at 96 per inch; a PDF point is 1/72 inch.
POINTS_PER_SCENE_UNIT = 72.0 / 96.0
# PDF viewers (Acrobat) refuse pages larger than 14,400 points (200 inches) a side.
MAX_PDF_SIDE_POINTS = 14400.0
FORMATS = {".png": "PNG", ".svg": "SVG", ".pdf": "PDF"}
# Paper for a PDF that goes into a printed report; None: one page of the drawing's own size.
PAGE_SIZES = {"A4": QPageSize.A4, "Letter": QPageSize.Letter}
PAGE_MARGIN_POINTS = 36.0  # half an inch of paper around the drawing

_HINTS = QPainter.Antialiasing | QPainter.TextAntialiasing | QPainter.SmoothPixmapTransform


def default_source(scene: QGraphicsScene) -> QRectF:
    """The items' bounding rect plus a margin (a small square around 0,0 for an empty scene)."""
    rect = scene.itemsBoundingRect()
    if rect.isNull():
        rect = QRectF(0, 0, 0, 0)
    return rect.adjusted(-SOURCE_MARGIN, -SOURCE_MARGIN, SOURCE_MARGIN, SOURCE_MARGIN)


def export_scene(scene: QGraphicsScene, path: str | os.PathLike, scale: float = 2.0, source: QRectF | None = None,
                 background=Qt.white, *, title: str | None = None, description: str | None = None,
                 page: str | None = None) -> Path:
    """Write `source` (default: all items plus a margin) of `scene` to `path`; returns the path.

    .png: `scale` pixels per scene unit (reduced so neither side exceeds 16384 px), ARGB32,
    filled with `background` (None or Qt.transparent for a transparent picture).
    .svg: viewBox = `source` in scene units, with a title and a description.
    .pdf: one page of the content's aspect at its natural size (96 scene units per inch,
    shrunk to at most 200 inches a side), 300 dpi, no margins; with `page` ("A4" or "Letter") the
    drawing scaled to fit that paper (turned to landscape for a wide drawing), half-inch margins.
    Selection highlights are not drawn: the selection is cleared while rendering and restored.
    """
    target = Path(path)
    fmt = FORMATS.get(target.suffix.lower())
    if fmt is None:
        raise ValueError(f"cannot export to {target.name!r}: unknown extension {target.suffix or '(none)'!r}; "
                         f"use one of {', '.join(FORMATS)}")
    source = QRectF(source) if source is not None else default_source(scene)
    if not (source.width() > 0 and source.height() > 0) or not all(
            math.isfinite(v) for v in (source.x(), source.y(), source.width(), source.height())):
        raise ValueError(f"cannot export an empty area ({source.width():g} x {source.height():g})")
    if page is not None and page not in PAGE_SIZES:
        raise ValueError(f"unknown page size {page!r}; use one of {', '.join(PAGE_SIZES)}")
    if fmt == "PNG" and not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a positive number, got {scale!r}")
    color = QColor(Qt.transparent) if background is None else QColor(background)
    title = title if title is not None else target.stem
    description = description if description is not None else "Exported from Designer"

    selected = scene.selectedItems()
    scene.clearSelection()
    try:
        if fmt == "PNG":
            data = _png(scene, source, scale, color, title, description)
        elif fmt == "SVG":
            data = _svg(scene, source, color, title, description)
        else:
            data = _pdf(scene, source, color, title, page)
    finally:
        for item in selected:
            if item.scene() is scene:
                item.setSelected(True)
    atomic_write_bytes(target, data)
    return target


# ---- formats ------------------------------------------------------------------------------------

def png_size(source: QRectF, scale: float) -> tuple[QSize, float]:
    """(image size, effective scale) of a PNG export: sides rounded up, capped at MAX_PNG_SIDE."""
    scale = min(scale, MAX_PNG_SIDE / source.width(), MAX_PNG_SIDE / source.height())
    w = min(MAX_PNG_SIDE, max(1, math.ceil(source.width() * scale - 1e-6)))
    h = min(MAX_PNG_SIDE, max(1, math.ceil(source.height() * scale - 1e-6)))
    return QSize(w, h), scale


def _render(scene: QGraphicsScene, painter: QPainter, target: QRectF, source: QRectF, background: QColor) -> None:
    painter.setRenderHints(_HINTS)
    if background.alpha():
        painter.fillRect(target, background)
    scene.render(painter, target, source, Qt.IgnoreAspectRatio)


def _png(scene, source: QRectF, scale: float, background: QColor, title: str, description: str) -> bytes:
    size, scale = png_size(source, scale)
    image = QImage(size, QImage.Format_ARGB32)
    if image.isNull():
        raise MemoryError(f"cannot allocate a {size.width()} x {size.height()} image; use a smaller scale")
    image.fill(background if background.alpha() else QColor(Qt.transparent))
    dots_per_metre = round(96.0 * scale / 0.0254)  # prints at the scene's natural size
    image.setDotsPerMeterX(dots_per_metre)
    image.setDotsPerMeterY(dots_per_metre)
    image.setText("Title", title)
    image.setText("Description", description)
    image.setText("Software", "Designer")
    painter = QPainter(image)
    try:
        # Exactly `scale` per unit; the last row/column of pixels may stay background.
        _render(scene, painter, QRectF(0, 0, source.width() * scale, source.height() * scale), source,
                QColor(Qt.transparent))
    finally:
        painter.end()
    return png_bytes(image)


def png_bytes(image: QImage) -> bytes:
    """The image encoded as PNG, in memory (written atomically by the caller)."""
    array = QByteArray()
    buffer = QBuffer(array)
    buffer.open(QIODevice.WriteOnly)
    ok = image.save(buffer, "PNG")
    buffer.close()
    if not ok:
        raise OSError("the PNG encoder failed")
    return bytes(array.data())


def _svg(scene, source: QRectF, background: QColor, title: str, description: str) -> bytes:
    # viewBox coordinates are scene coordinates
    return svg_bytes(lambda painter: _render(scene, painter, source, source, background), source, title, description)


def svg_bytes(paint, view_box: QRectF, title: str, description: str) -> bytes:
    """An SVG document of what `paint(painter)` draws in `view_box`, at 96 units per inch."""
    array = QByteArray()
    buffer = QBuffer(array)
    buffer.open(QIODevice.WriteOnly)
    generator = QSvgGenerator()
    generator.setOutputDevice(buffer)
    generator.setTitle(title)
    generator.setDescription(description)
    generator.setSize(QSize(math.ceil(view_box.width()), math.ceil(view_box.height())))
    generator.setViewBox(view_box)
    generator.setResolution(96)
    painter = QPainter()
    if not painter.begin(generator):
        raise OSError("cannot start the SVG generator")
    try:
        paint(painter)
    finally:
        painter.end()
    buffer.close()
    return bytes(array.data())


def pdf_page_points(source: QRectF) -> QSizeF:
    """Page size in points: the content at 96 units per inch, shrunk to fit MAX_PDF_SIDE_POINTS."""
    w, h = source.width() * POINTS_PER_SCENE_UNIT, source.height() * POINTS_PER_SCENE_UNIT
    shrink = min(1.0, MAX_PDF_SIDE_POINTS / w, MAX_PDF_SIDE_POINTS / h)
    return QSizeF(max(1.0, w * shrink), max(1.0, h * shrink))


def _pdf(scene, source: QRectF, background: QColor, title: str, page: str | None = None) -> bytes:
    return pdf_bytes(lambda painter, target: scene.render(painter, target, source, Qt.IgnoreAspectRatio),
                     source.size(), background, title, page)


def pdf_bytes(render, size: QSizeF, background: QColor, title: str, page: str | None = None) -> bytes:
    """One PDF page holding a picture of `size` scene units (96 per inch, shrunk to fit):
    `render(painter, target_rect)` draws it. Shared by the canvas and the plot exports.
    `page` ("A4", "Letter"): that paper, the picture scaled to fit inside half-inch margins."""
    array = QByteArray()
    buffer = QBuffer(array)
    buffer.open(QIODevice.WriteOnly)
    writer = QPdfWriter(buffer)
    writer.setResolution(PDF_DPI)
    writer.setTitle(title)
    writer.setCreator("Designer")
    if page is not None:  # paper: the picture fits inside the margins, turned with the picture
        landscape = size.width() > size.height()
        m = PAGE_MARGIN_POINTS
        layout = QPageLayout(QPageSize(PAGE_SIZES[page]), QPageLayout.Landscape if landscape else QPageLayout.Portrait,
                             QMarginsF(m, m, m, m), QPageLayout.Point)
    else:
        natural = pdf_page_points(QRectF(0, 0, size.width(), size.height()))
        # Page sizes are portrait; a wide picture is a portrait page turned to landscape.
        landscape = natural.width() > natural.height()
        portrait = QSizeF(natural.height(), natural.width()) if landscape else natural
        layout = QPageLayout(QPageSize(portrait, QPageSize.Point, "", QPageSize.ExactMatch),
                             QPageLayout.Landscape if landscape else QPageLayout.Portrait,
                             QMarginsF(0, 0, 0, 0), QPageLayout.Point)
        layout.setMode(QPageLayout.FullPageMode)
    if not writer.setPageLayout(layout):
        raise OSError("the PDF writer refused the page layout")
    painter = QPainter()
    if not painter.begin(writer):
        raise OSError("cannot start the PDF writer")
    try:
        full = QRectF(0, 0, writer.width(), writer.height())
        # The page has the content's aspect up to rounding to whole device pixels: keep it exact.
        s = min(full.width() / size.width(), full.height() / size.height())
        target = QRectF(0, 0, size.width() * s, size.height() * s)
        target.moveCenter(full.center())
        painter.setRenderHints(_HINTS)
        if background.alpha():
            painter.fillRect(full, background)
        render(painter, target)
    finally:
        painter.end()
    buffer.close()
    return bytes(array.data())


# ---- writing ------------------------------------------------------------------------------------

