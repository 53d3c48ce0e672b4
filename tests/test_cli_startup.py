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
# masked arrays (np.unique imports them unless asked for indices) and string functions (the link ends'
# ports are read from their characters' codes), statistics (only MoE layers and a
# screened job use its normal distribution), the reliability constants (a file without
# calibration.reliability), the --set parser (a command line without --set); nor what other commands
# build on: the window (Qt) and its live check (check_incremental: a command checks once), the
# reports (reportlab, export), the importers, the Advisor and plan search, the prices, and what only
# a bad file needs (the error locator, "did you mean", tracebacks); nor pathlib (the catalog and the
# design are found and read through os.path; only a save makes Path objects), nor shutil (argparse's
# help formatter, made for each argument added, imports it for the terminal's width), nor the
# translation of Megatron-LM's spellings of job keys (a file written in Designer's)
NOT_IMPORTED = ("numpy.ma", "numpy.strings", "numpy._core.strings", "designer.core.generate", "designer.cli.advise", "designer.cli.search", "designer.cli.import_export",
                "designer.cli.calibrate", "designer.cli.generate", "statistics", "designer.core.model.reliability",
                "designer.core.io.overrides", "designer.ui", "PySide6", "reportlab", "designer.core.export",
                "designer.core.io.importers", "designer.core.analysis.advice", "designer.core.analysis.search",
                "designer.core.analysis.sweep", "designer.core.model.prices", "designer.core.io.locate", "difflib",
                "traceback", "designer.core.model.check_incremental", "pathlib", "shutil",
                "designer.core.model.megatron_names")

# the modules the command imports: not those the interpreter's start (site, .pth files) imported before it
PROBE = r"""
import contextlib, io, json, sys
at_start = set(sys.modules)
from designer.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["evaluate", sys.argv[1], "--json"])
print(json.dumps({"code": code, "modules": sorted(set(sys.modules) - at_start)}))
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


def test_what_is_imported_on_demand_still_checks_its_part(tmp_path, capsys):
    """The reliability constants and the --set parser, no longer imported at start, still check a
    file's calibration.reliability and a --set."""
    from designer.cli import main

    text = EXAMPLE.read_text().replace("  workload:\n", "  calibration:\n    reliability: {hot_sparez: 2}\n  workload:\n", 1)
    design = tmp_path / "design.yaml"
    design.write_text(text)
    assert main(["evaluate", str(design), "--json"]) == 65
    line = text.splitlines().index("    reliability: {hot_sparez: 2}") + 1
    assert (f"{design}:{line}:19: spec.calibration.reliability.hot_sparez: unknown reliability constant "
            "(did you mean hot_spares?)") in capsys.readouterr().err
    assert main(["evaluate", str(EXAMPLE), "--json", "--set", "parallelism.tensor_model_parallel_size=3"]) == 65
    assert "tensor_model_parallel_size" in capsys.readouterr().err
