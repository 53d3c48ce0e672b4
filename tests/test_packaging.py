"""packaging/: the PyInstaller spec, build.sh, the desktop entry and the icon agree; the frozen app runs.

The frozen-app test builds dist/designer/ with packaging/build.sh (a few minutes) unless it is
newer than every source file; it runs only where PyInstaller is installed (not in `make test`).
"""
import configparser
import importlib.util
import os
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, ROOT

PACKAGING = ROOT / "packaging"
SPEC = PACKAGING / "designer.spec"
BUILD_SH = PACKAGING / "build.sh"
DESKTOP = PACKAGING / "designer.desktop"
ICONS = ROOT / "resources" / "icons"
FROZEN_APP = ROOT / "dist" / "designer" / "designer-gui"


def _png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


def _desktop_entry() -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # keys are case-sensitive
    parser.read_string(DESKTOP.read_text(encoding="utf-8"))
    return parser["Desktop Entry"]


def test_packaging_files_exist_and_agree():
    from designer.ui.common.app_icon import ICON_NAME

    entry = _desktop_entry()
    for key in ("Type", "Name", "Exec", "Icon"):
        assert entry.get(key), f"{DESKTOP.name} has no {key}="
    assert entry["Type"] == "Application"
    assert entry["Icon"] == ICON_NAME
    assert entry["Exec"].split()[0] == "designer-gui"
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'designer-gui = "designer.ui.app:main"' in pyproject  # the Exec= command exists once installed

    svg, png = ICONS / f"{ICON_NAME}.svg", ICONS / f"{ICON_NAME}.png"
    assert ET.parse(svg).getroot().tag.endswith("svg")
    assert _png_size(png) == (256, 256)
    for data_file in (f"resources/icons/{ICON_NAME}.png", f"resources/icons/{ICON_NAME}.svg",
                      "packaging/designer.desktop"):
        assert data_file in pyproject, f"a wheel would not carry {data_file}"

    spec = SPEC.read_text(encoding="utf-8")
    assert 'name="designer-gui"' in spec and 'name="designer"' in spec  # dist/designer/designer-gui
    assert '"packaging", "designer_gui.py"' in spec and (PACKAGING / "designer_gui.py").is_file()
    assert '"resources"), "resources")' in spec  # catalog, examples and icons, found at sys._MEIPASS/resources
    assert f'"icons", "{ICON_NAME}.png"' in spec
    launcher = (PACKAGING / "designer_gui.py").read_text(encoding="utf-8")
    assert "from designer.ui.app import main" in launcher  # absolute: app.py itself uses relative imports

    assert BUILD_SH.is_file() and os.access(BUILD_SH, os.X_OK), "packaging/build.sh is not executable"
    syntax = subprocess.run(["bash", "-n", str(BUILD_SH)], capture_output=True, text=True)
    assert syntax.returncode == 0, syntax.stderr
    script = BUILD_SH.read_text(encoding="utf-8")
    assert "set -euo pipefail" in script and "packaging/designer.spec" in script
    assert "--screenshot" in script and "h100-64gpu-infiniband.yaml" in script

    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert "build/" in ignored and "dist/" in ignored


def _sources_mtime() -> float:
    newest = (ROOT / "pyproject.toml").stat().st_mtime
    for folder in ("designer", "resources", "packaging"):
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                newest = max(newest, path.stat().st_mtime)
    return newest


@pytest.fixture(scope="module")
def frozen_app():
    if importlib.util.find_spec("PyInstaller") is None:
        pytest.skip("PyInstaller not installed: run packaging/build.sh (it builds and smoke-tests the app "
                    "in its own venv), or pip install pyinstaller to have this test build and check it")
    if shutil.which("bash") is None:
        pytest.skip("bash not found: packaging/build.sh needs it")
    if not (FROZEN_APP.is_file() and FROZEN_APP.stat().st_mtime > _sources_mtime()):
        if Path(sys.prefix).resolve() == (ROOT / "build" / "venv").resolve():
            pytest.fail("dist/designer is out of date, and this Python is build/venv, which packaging/build.sh "
                        "recreates: run packaging/build.sh first")
        build = subprocess.run(["bash", str(BUILD_SH)], cwd=ROOT, capture_output=True, text=True, timeout=1800)
        assert build.returncode == 0, f"packaging/build.sh failed:\n{build.stdout[-4000:]}\n{build.stderr[-4000:]}"
    assert os.access(FROZEN_APP, os.X_OK)
    return FROZEN_APP


def test_frozen_app_renders_the_example(frozen_app, tmp_path):
    out = tmp_path / "frozen.png"
    run = subprocess.run([str(frozen_app), str(EXAMPLES / "h100-64gpu-infiniband.yaml"), "--screenshot", str(out),
                          "--size", "1600x1000"],
                         capture_output=True, text=True, timeout=300,
                         env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    assert _png_size(out) == (1600, 1000)
    assert out.stat().st_size > 20_000  # a rendered window, not a blank one
