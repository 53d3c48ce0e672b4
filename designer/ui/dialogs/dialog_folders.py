"""Where the window's file dialogs open: the design's own folder, not the working directory.

An export (canvas, plots, report, trace) of /projects/dc/pod.yaml opens in /projects/dc with
the design's name as the file name. A design without a folder of its own (new, generated, a
bundled example, whose folder is Designer's own) opens in the user's documents folder.
"""
from __future__ import annotations

from pathlib import Path


def design_folder(qdoc) -> Path:
    """The open design's folder, else the documents folder (else home)."""
    from ...core.io.bundled import is_bundled

    if qdoc.path and not is_bundled(qdoc.path):
        return Path(qdoc.path).resolve().parent
    from PySide6.QtCore import QStandardPaths

    documents = QStandardPaths.writableLocation(QStandardPaths.DocumentsLocation)
    # a missing folder would make the dialog open in the working directory (often Designer's own)
    return Path(documents) if documents and Path(documents).is_dir() else Path.home()


def export_start(qdoc, suffix: str, tail: str = "") -> str:
    """The path an export dialog proposes: "<folder>/<design name><tail><suffix>"."""
    stem = Path(qdoc.suggested_file_name()).stem or "design"
    return str(design_folder(qdoc) / f"{stem}{tail}{suffix}")
