"""Render resources/icons/designer-gui.svg to the 256 px PNG beside it (Qt's SVG renderer).

    QT_QPA_PLATFORM=offscreen python packaging/make_icon.py
"""
from __future__ import annotations

import sys
from pathlib import Path

ICONS = Path(__file__).resolve().parents[1] / "resources" / "icons"


def render(svg: Path, png: Path, size: int = 256) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841 - fonts, image plugins
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"make_icon: {svg} is not a valid SVG")
    image = QImage(size, size, QImage.Format_ARGB32_Premultiplied)
    image.fill(Qt.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.Antialiasing)
    renderer.render(painter)
    painter.end()
    if not image.save(str(png), "PNG"):
        raise SystemExit(f"make_icon: cannot write {png}")
    print(f"wrote {png} ({size}x{size})")


if __name__ == "__main__":
    render(ICONS / "designer-gui.svg", ICONS / "designer-gui.png")
