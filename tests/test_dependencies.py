"""Every runtime dependency in pyproject.toml earns its place: Designer runs without the packages
that only the tests use."""
import subprocess
import sys

from tests.conftest import EXAMPLES, ROOT

TEST_ONLY = ("networkx", "pypdf", "hypothesis", "jsonschema")


def test_every_module_imports_and_evaluate_runs_without_the_test_only_packages():
    blocked = "; ".join(f"sys.modules[{name!r}] = None" for name in TEST_ONLY)  # `import X` raises
    code = (
        f"import sys; {blocked}\n"
        "import pkgutil, importlib, designer\n"
        "for m in pkgutil.walk_packages(designer.__path__, 'designer.'):\n"
        "    if not m.name.startswith('designer.ui') and not m.name.endswith('__main__'):\n"
        "        importlib.import_module(m.name)\n"
        "from designer.cli import main\n"
        f"sys.exit(main(['evaluate', {str(EXAMPLES / 'h100-64gpu-infiniband.yaml')!r}, '--json']))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert '"step_time_s"' in done.stdout


def test_the_runtime_dependencies_leave_the_test_only_packages_out():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = {d.split(">")[0].split("<")[0].split("=")[0].strip().lower() for d in project["dependencies"]}
    assert not runtime & set(TEST_ONLY)
