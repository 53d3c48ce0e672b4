"""NCCL's latency tables follow the release the file names (calibration.nccl_version): tuning.cc's
baseLat and hwLat of that release (engine/nccl_tuning.py), under the calibration's own entries."""
from __future__ import annotations

import json

import pytest

from designer.core.engine.constants import engine_constants
from designer.core.engine.nccl_tuning import latency_tables
from tests.conftest import run_cli


def test_each_release_has_its_own_simple_tree_latency():
    assert latency_tables(2.18).nvlink["tree"]["Simple"] == 4.0  # v2.18.3-1 .. v2.18.6-1
    assert latency_tables(2.20).nvlink["tree"]["Simple"] == 28.0  # v2.19.1-1 .. v2.22.3-1
    assert latency_tables(2.22).net["tree"]["Simple"] == 28.0
    assert latency_tables(2.27).base["tree"]["Simple"] == 8.4  # v2.23.4-1 on
    assert latency_tables(2.27).nvlink["tree"]["Simple"] == 4.0
    assert latency_tables(2.20).nvlink["nvls"]["Simple"] == 23.0 and latency_tables(2.21).nvlink["nvls"]["Simple"] == 25.0
    assert latency_tables(2.27).nvlink["ring"]["LL128"] == 1.25  # fitted (NCCL: 1.9 in every release)
    assert engine_constants(None).nccl_nvlink_step_latency_us["tree"]["Simple"] == 4.0
    old = engine_constants({"nccl_version": 2.21})
    assert old.nccl_nvlink_step_latency_us["tree"]["Simple"] == 28.0
    # a calibration entry still overrides one value of the release's table
    mixed = engine_constants({"nccl_version": 2.21, "nccl_nvlink_step_latency_us": {"tree": {"Simple": 9.0}}})
    assert mixed.nccl_nvlink_step_latency_us["tree"]["Simple"] == 9.0
    assert mixed.nccl_net_step_latency_us["tree"]["Simple"] == 28.0


def test_tree_all_reduce_pays_the_release_latency(tmp_path):
    """Tree Simple all-reduce on 2 x 8 H100: 2 ((8 - 1) x NVLink step + log2(2) x network step) + base.
    2.21's 28/28/0 us against 2.27's 4/14/8.4 us: 2 (7 x 24 + 14) - 8.4 = 355.6 us more."""
    path = tmp_path / "h2.yaml"
    code, _, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", "2", "--gpu", "H100")
    assert code == 0, err

    def time_us(version: str) -> float:
        code, out, err = run_cli("nccl", path, "--op", "all_reduce", "--num-gpus", "16", "--algo", "tree",
                                 "--min-bytes", str(2**30), "--max-bytes", str(2**30), "--json",
                                 "--set", f"calibration.nccl_version={version}")
        assert code == 0, err
        row = json.loads(out)["designer_rows"][-1]
        assert (row["algorithm"], row["protocol"]) == ("tree", "Simple")
        return row["time_us"]

    assert time_us("2.21") - time_us("2.27") == pytest.approx(355.6, abs=0.5)
    assert time_us("2.27") - time_us("2.18") == pytest.approx(8.4, abs=0.5)


def test_one_node_tree_ll128_is_rated_at_seven_ninths(tmp_path):
    """tuning.cc rates the tree's LL128 inside one node at 7/9 of its Simple (the ring's at 0.92): on 8
    H100 at 16 MiB NCCL keeps the ring, even with NCCL's own larger ring LL128 step (1.9 us)."""
    path = tmp_path / "d8.yaml"
    code, _, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", "1", "--gpu", "H100")
    assert code == 0, err
    code, out, err = run_cli("nccl", path, "--op", "all_reduce", "--num-gpus", "8", "--min-bytes", str(16 * 2**20),
                             "--max-bytes", str(16 * 2**20), "--json",
                             "--set", "calibration.nccl_nvlink_step_latency_us.ring.LL128=1.9")
    assert code == 0, err
    row = json.loads(out)["designer_rows"][-1]
    assert (row["algorithm"], row["protocol"]) == ("ring", "LL128")
