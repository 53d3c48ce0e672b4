"""A leaf switch with no up-links: validate names it, evaluate exits 65 with the reason, and no
prediction is ever inf or NaN with exit 0."""
import re

import pytest

from designer.core.engine.evaluate import Engine
from designer.core.io import load_document
from designer.core.problems import DesignerError
from tests.conftest import run_cli

JOB = """\
  workload:
    preset: llama3-8b
    global_batch_size: 128
    micro_batch_size: 1
  parallelism:
    tensor_model_parallel_size: 8
"""


@pytest.fixture
def leaf0_without_uplinks(tmp_path):
    """16 servers, every NIC of a server on one leaf (4 servers a leaf); leaf0's spine cables removed."""
    full = tmp_path / "full.yaml"
    code, _, err = run_cli("generate", "fat-tree", "--nodes", "16", "--gpu", "H100", "--no-rail-optimized",
                           "-o", full)
    assert code == 0, err
    lines = full.read_text().splitlines(keepends=True)
    kept = [line for line in lines if not re.search(r'"a": "leaf0:p\d+", "b": "spine', line)]
    assert len(kept) < len(lines)
    path = tmp_path / "no-uplinks.yaml"
    path.write_text("".join(kept) + JOB)
    (tmp_path / "with-uplinks.yaml").write_text("".join(lines) + JOB)
    return path


def test_validate_names_the_leaf_and_the_fix(leaf0_without_uplinks):
    code, _, err = run_cli("validate", leaf0_without_uplinks)
    assert code == 65, err
    assert re.search(r"no-uplinks\.yaml:\d+:\d+: spec\.switches\[0\]: leaf switch leaf0 has no up-links: its 4 "
                     r"server\(s\) \(node0, node1, node2, \.\.\.\) cannot reach the other 12 server\(s\)", err), err
    assert "connect leaf0 to a spine switch" in err


def test_evaluate_exits_65_not_an_infinite_step(leaf0_without_uplinks):
    code, out, err = run_cli("evaluate", leaf0_without_uplinks)
    assert code == 65 and "leaf0" in err and out == "", (out, err)
    assert "inf" not in out.lower()


def test_the_engine_itself_refuses_traffic_with_no_path(leaf0_without_uplinks):
    """The API (no validate in front): a DesignerError naming the leaf, never a step of inf s."""
    doc = load_document(leaf0_without_uplinks)
    with pytest.raises(DesignerError) as caught:
        Engine().evaluate(doc)
    text = str(caught.value)
    assert "has no path: leaf switch leaf0 has no up-links" in text and "spec.switches[0]" in text


def test_the_same_fabric_with_its_uplinks_is_fine(leaf0_without_uplinks):
    code, out, err = run_cli("evaluate", leaf0_without_uplinks.parent / "with-uplinks.yaml", "--json")
    assert code == 0, err
    assert "step_time_s" in out
