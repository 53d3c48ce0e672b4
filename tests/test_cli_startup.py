"""`designer evaluate` starts by importing only what it uses: every module imported is paid by
every run (a third of `designer evaluate` at 1,024 GPUs was the start-up)."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "resources" / "examples" / "a100-1024gpu-rail-infiniband.yaml"

# What the command uses none of: the generator (and its systems file), the other commands, numpy's
# masked arrays (np.unique imports them unless asked for indices), statistics (only MoE layers and a
# screened job use its normal distribution)
NOT_IMPORTED = ("numpy.ma", "designer.core.generate", "designer.cli.advise", "designer.cli.search", "designer.cli.import_export",
                "designer.cli.calibrate", "designer.cli.generate", "statistics")

PROBE = r"""
import contextlib, io, json, sys
from designer.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["evaluate", sys.argv[1], "--json"])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


@pytest.fixture(scope="module")
def evaluate_modules() -> set[str]:
    out = subprocess.run([sys.executable, "-c", PROBE, str(EXAMPLE)], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    import json

    result = json.loads(out)
    assert result["code"] == 0
    return set(result["modules"])


@pytest.mark.parametrize("module", NOT_IMPORTED)
def test_evaluate_does_not_import_what_it_does_not_use(evaluate_modules, module):
    assert not {m for m in evaluate_modules if m == module or m.startswith(module + ".")}


def test_every_command_a_command_line_names_has_its_own_help(capsys):
    from designer.cli import COMMAND_NAMES, main

    for name in sorted(COMMAND_NAMES):
        with pytest.raises(SystemExit) as exit_info:
            main([name, "--help"])
        assert exit_info.value.code == 0 and capsys.readouterr().out.startswith(f"usage: designer {name} ")
    with pytest.raises(SystemExit):
        main(["--help"])
    listed = capsys.readouterr().out
    assert all(re.search(rf"^    {name}(\s|$)", listed, re.M) for name in COMMAND_NAMES)
