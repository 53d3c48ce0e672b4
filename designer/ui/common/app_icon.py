"""The app icon: resources/icons/designer-gui.png, found from a checkout, a wheel or a frozen bundle."""
from __future__ import annotations

import sys
from pathlib import Path

ICON_NAME = "designer-gui"  # the .desktop file's Icon= and the files' stem


def icon_dirs() -> list[Path]:
    """Where resources/icons may be, most specific first."""
    from ...core.model.catalog import RESOURCES

    dirs = []
    frozen = getattr(sys, "_MEIPASS", None)  # PyInstaller: packaging/designer.spec bundles resources/ there
    if frozen:
        dirs.append(Path(frozen) / "resources" / "icons")
    dirs += [Path(RESOURCES, "icons"),  # $DESIGNER_RESOURCES, a checkout, or a wheel's share/designer/resources
             Path(__file__).resolve().parents[2] / "resources" / "icons",
             Path(sys.prefix) / "share" / "designer" / "resources" / "icons"]
    return dirs


def icon_file(suffix: str = ".png") -> Path | None:
    for d in icon_dirs():
        path = d / (ICON_NAME + suffix)
        if path.is_file():
            return path
    return None


def app_icon():
    """The window icon (a null QIcon when the file is missing: the app still runs)."""
    from PySide6.QtGui import QIcon

    path = icon_file(".png")
    return QIcon(str(path)) if path else QIcon()
