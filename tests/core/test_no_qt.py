"""designer/core and the CLI never import Qt (architecture rule)."""
import subprocess
import sys
from pathlib import Path

import designer


def test_core_and_cli_do_not_import_qt():
    code = (
        "import sys, pkgutil, importlib, designer.core, designer.cli\n"
        "for m in pkgutil.walk_packages(designer.core.__path__, 'designer.core.'):\n"
        "    importlib.import_module(m.name)\n"
        "designer.cli.main(['catalog'])\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'PyQt5', 'PyQt6', 'pyqtgraph', 'shiboken6')]\n"
        "assert not bad, bad\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_no_qt_import_statement_in_core_sources():
    core = Path(designer.__file__).parent / "core"
    for path in core.rglob("*.py"):
        text = path.read_text()
        for word in ("PySide6", "PyQt", "pyqtgraph"):
            assert f"import {word}" not in text and f"from {word}" not in text, path
