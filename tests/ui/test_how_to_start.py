"""How a newcomer starts: `make run` opens the app with its welcome hint, the hint names File > New,
Open Example and Generate, and an empty canvas (File > New) says how to begin."""
from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtGui import QColor

ROOT = Path(__file__).resolve().parents[2]


def _make_run_argv() -> list[str]:
    """The designer-gui arguments `make run` passes (make -n prints the recipe without running it)."""
    out = subprocess.run(["make", "-n", "-W", "pyproject.toml", "run"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    line = next(line for line in out.splitlines() if "designer-gui" in line)
    return shlex.split(line)[1:]


def test_make_run_opens_the_app_with_its_welcome_hint(qtbot, tmp_path):
    from designer.ui.app import build_parser, create_window

    argv = _make_run_argv()
    assert argv == []  # no file: the built-in example and the hint
    window, error = create_window(build_parser().parse_args(argv), QSettings(str(tmp_path / "s.ini"),
                                                                            QSettings.IniFormat))
    qtbot.addWidget(window)
    assert error is None
    window.show()
    banner = window.welcome_banner
    assert banner.isVisible()
    text = banner.text()
    for words in ("File > New", "File > Open Example", "Generate"):
        assert words in text, (words, text)
    banner.label.linkActivated.emit("act:new")  # the hint's File > New link: the menu's own command
    assert not window.qdoc.doc.racks and not window.qdoc.doc.nodes
    assert window.view.empty_hint() is not None


def test_an_empty_canvas_says_how_to_start(empty_window, qtbot):
    window = empty_window
    window.act_new.trigger()
    hint = window.view.empty_hint()
    assert hint and "Parts" in hint and "File > Open Example" in hint and "Generate" in hint
    picture = window.view.viewport().grab().toImage()
    background = QColor("#fbfbfc").rgb()
    w, h = picture.width(), picture.height()
    inked = sum(picture.pixel(x, h // 2 + dy) != background for x in range(0, w, 2) for dy in range(-12, 13, 3))
    assert inked > 20  # the words are painted across the middle of the canvas
    window.open_file(str(ROOT / "resources/examples/h100-64gpu-infiniband.yaml"))
    assert window.view.empty_hint() is None  # a design: no hint over it
