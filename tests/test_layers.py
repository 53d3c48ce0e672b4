"""The import layers of pyproject.toml's [tool.importlinter] hold: the core and the command line
never import Qt or the window; each layer imports only those below it (the model below the engine
below the analysis); files in (io) and files out (export) do not import each other."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytest.importorskip("importlinter", reason="import-linter is in the dev extra: pip install -e .[dev]")

LINT = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True, no_logo=True))"


def _lint(tree) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run([sys.executable, "-c", LINT], cwd=tree, env=env, capture_output=True, text=True,
                          timeout=300)


def test_the_code_keeps_its_layers():
    done = _lint(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


@pytest.mark.parametrize("module, line, broken", [
    ("core/model/spec.py", "from ..engine import constants", "designer.core.model is not allowed to import "
                                                             "designer.core.engine"),
    ("core/export/trace.py", "from ..io import files", "designer.core.export is not allowed to import "
                                                      "designer.core.io"),
    ("core/engine/units_view.py", "import PySide6", "designer.core.engine.units_view -> PySide6"),
])
def test_an_import_against_the_layers_is_found(tmp_path, module, line, broken):
    """The contracts catch what they forbid: a copy of the package with one bad import fails."""
    shutil.copytree(ROOT / "designer", tmp_path / "designer", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / "designer" / module
    with open(target, "a", encoding="utf-8") as fh:
        fh.write(f"\n{line}\n")
    done = _lint(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert broken in " ".join(done.stdout.split())
