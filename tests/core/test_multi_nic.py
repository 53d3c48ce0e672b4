"""Servers with several NICs per GPU (AWS p5en: 16 x 200G for 8 H200) drive all of them, and an
imported NCCL topology's GPU-to-NIC map decides which NIC a GPU uses."""
import json

import pytest

from designer.core.engine.fabric import build_fabric
from designer.core.engine.constants import EngineConstants
from designer.core.io.files import load_document
from designer.core.model.catalog import default_catalog
from tests.conftest import run_cli


def _busbw(tmp_path, nics, gbps, size="4G"):
    path = tmp_path / f"h200-{nics}x{gbps}.yaml"
    code, _, err = run_cli("generate", "fat-tree", "--gpu", "H200", "--nodes", "4", "--nics-per-node", str(nics),
                           "--nic-gbps", str(gbps), "--fabric", "ethernet", "-o", path)
    assert code == 0, err
    code, out, err = run_cli("nccl", path, "--op", "all_reduce", "--algo", "ring", "--min-bytes", size,
                             "--max-bytes", size, "--json")
    assert code == 0, err
    return json.loads(out)["designer_rows"][-1]["busbw"], path


def test_two_200g_nics_per_gpu_carry_what_one_400g_nic_does(tmp_path):
    two_by_200, _ = _busbw(tmp_path, 16, 200)
    one_by_400, _ = _busbw(tmp_path, 8, 400)
    one_by_200, _ = _busbw(tmp_path, 8, 200)
    assert two_by_200 == pytest.approx(one_by_400, rel=0.05)
    assert two_by_200 > 1.8 * one_by_200


def test_an_imported_gpu_to_nic_map_decides_each_gpus_nic(tmp_path):
    _, path = _busbw(tmp_path, 8, 400)
    doc = load_document(path)
    doc.nodes[0].gpu_nic_affinity = [7, 6, 5, 4, 3, 2, 1, 0]
    fabric = build_fabric(doc, default_catalog(), EngineConstants())
    assert fabric.gpu_nic[:8].tolist() == list(range(7, -1, -1))
    assert fabric.gpu_nic[8:16].tolist() == list(range(8, 16))  # the other servers keep nic(i)
