import os
import sys
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# The tests never touch the user's real settings, recovery files or documents: Qt finds its
# settings (QSettings' native format), data and documents folders through these, read when
# first used, so they are set before anything imports Qt.
TEST_HOME = Path(tempfile.mkdtemp(prefix="designer-tests-home-"))
os.environ["HOME"] = str(TEST_HOME)
for _var, _sub in (("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share"),
                   ("XDG_CACHE_HOME", ".cache"), ("XDG_STATE_HOME", ".local/state")):
    os.environ[_var] = str(TEST_HOME / _sub)
(TEST_HOME / "Documents").mkdir()

# Property tests search at random on a developer's machine; under CI (CI=true) they replay a fixed
# sequence, so a submission's result does not depend on the draw.
try:
    from hypothesis import settings as _hypothesis_settings

    _hypothesis_settings.register_profile("ci", derandomize=True, database=None)
    if os.environ.get("CI"):
        _hypothesis_settings.load_profile("ci")
except ImportError:  # hypothesis is a dev dependency
    pass

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "resources" / "examples"


def local_dask_cluster(**options):
    """A Dask LocalCluster for a test. Its scheduler's web server takes a free port: with
    dashboard_address=None it still asks for 8787, and while another test process (or anything
    else on the machine) holds that port Dask warns, which the suite's warnings-as-errors turns
    into "Cluster failed to start" and an unclosed socket."""
    import distributed

    return distributed.LocalCluster(dashboard_address=":0", **options)

SMALL = """\
apiVersion: designer/v1
kind: Cluster
metadata:
  name: small
spec:
  racks:
    - id: r0
    - id: net
  nodes:
    - id: n0
      accelerator: H100
      nic_count: 2
      rack: r0
      slot: 0
      gpus_per_nic: 4
    - id: n1
      accelerator: H100
      nic_count: 2
      rack: r0
      slot: 4
      gpus_per_nic: 4
  switches:
    - {id: leaf0, fabric: infiniband, tier: leaf, radix: 8, rack: net, slot: 0}
  links:
    - {id: l0, a: "n0:nic0", b: "leaf0:p0", kind: infiniband, bandwidth_gbps: 400}
    - {id: l1, a: "n0:nic1", b: "leaf0:p1", kind: infiniband, bandwidth_gbps: 400}
    - {id: l2, a: "n1:nic0", b: "leaf0:p2", kind: infiniband, bandwidth_gbps: 400}
    - {id: l3, a: "n1:nic1", b: "leaf0:p3", kind: infiniband, bandwidth_gbps: 400}
  workload:
    preset: llama3-8b
    global_batch_size: 64
    micro_batch_size: 1
  parallelism:
    tensor_model_parallel_size: 8
"""


@pytest.fixture(autouse=True)
def _private_recovery_folder(tmp_path, monkeypatch):
    """Each test autosaves into its own folder (a test that wants another sets it itself)."""
    monkeypatch.setenv("DESIGNER_RECOVERY_DIR", str(tmp_path / "recovery"))


@pytest.fixture
def small_text() -> str:
    return SMALL


@pytest.fixture
def small_doc():
    from designer.core.io import loads_document

    return loads_document(SMALL, "small.yaml")


def run_cli(*args: str):
    """Run the `designer` CLI in-process: (exit code, stdout, stderr)."""
    import contextlib
    import io

    from designer.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def evaluate_json(design, *sets: str) -> dict:
    """`designer evaluate DESIGN --json --set KEY=VALUE ...` as a user runs it; its JSON answer."""
    import json

    args = ["evaluate", design, "--json"]
    for kv in sets:
        args += ["--set", kv]
    code, out, err = run_cli(*args)
    assert code == 0, err
    return json.loads(out)
