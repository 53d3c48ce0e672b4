"""All-reduce as NCCL runs it between 2-4 servers and inside NVLink domains, against measured nccl-tests.

Each case is generated and run through the CLI (`designer generate`, `designer nccl --json`), as a user
would; the measured figures are real public runs (sources beside each one).
"""
import json
from pathlib import Path

import pytest

from designer.core.engine.collective_bandwidth import dtree_max_edges
from designer.core.io.importers.nccl_tests_log import parse_nccl_tests
from tests.conftest import run_cli

DATA = Path(__file__).parents[1] / "data" / "nccl-tests"


def nccl_rows(tmp_path, generate: list, op="all_reduce", num_gpus=None, algo="auto", min_bytes=8,
              max_bytes="16G") -> dict:
    path = tmp_path / "c.yaml"
    code, _, err = run_cli("generate", "fat-tree", "-o", path, *generate)
    assert code == 0, err
    args = ["nccl", path, "--op", op, "--algo", algo, "--min-bytes", min_bytes, "--max-bytes", max_bytes, "--json"]
    if num_gpus:
        args += ["--num-gpus", num_gpus]
    code, out, err = run_cli(*args)
    assert code == 0, err
    return {r["size_bytes"]: r for r in json.loads(out)["designer_rows"]}


def test_double_binary_tree_edges_follow_nccl_trees():
    # trees.cc: 2 servers share one edge in each tree; 3 give one server 2 + 1 edges; from 4 on an
    # inner node of one tree (parent + 2 children) is a leaf of the other: 4
    assert [dtree_max_edges(n) for n in (1, 2, 3, 4, 8, 16)] == [0, 2, 3, 4, 4, 4]


def test_two_servers_all_reduce_beats_the_nic_rate_as_measured(tmp_path):
    """2 x 8 H200 on 400G ConnectX-7 (nccl-tests#256): 488.8 GB/s busbw at 9.7 GB, above the 8 NICs'
    8 x 48 = 384 GB/s: NVLS_TREE sends each server's reduced buffer once over the NICs (a ring sends
    2 (n-1)/n of it), so the NVLS stage, not the network, sets the rate."""
    measured = parse_nccl_tests((DATA / "h200-2node-all_reduce.txt").read_text(), "h200.txt")[0]
    rows = nccl_rows(tmp_path, ["--nodes", "2", "--gpu", "H200", "--nic-gbps", "400"], min_bytes="1G",
                     max_bytes="16G")
    nic_cap = 8 * 400 / 8 * 0.96
    for m in measured.rows:
        # the log steps by 3x; the engine's rows step by 2x: compare busbw (flat at these sizes) at the nearest
        row = rows[min(rows, key=lambda s: abs(s - m.size_bytes))]
        assert row["busbw"] > nic_cap
        assert row["busbw"] == pytest.approx(m.busbw_gbps, rel=0.05), (m.size_bytes, row)
        assert row["algorithm"] == "nvls_tree"


def test_two_servers_on_slower_nics_are_nic_bound_above_the_ring_rate(tmp_path):
    """Google Cloud A3 Mega, 2 x 8 H100 on 8 x 200G (tests/data/nccl-tests/a3mega...): 338.8 GB/s at 8 GiB,
    1.7x the 8 NICs' 200 GB/s: the tree's inter-server share is S, the ring's 1.875 S."""
    measured = parse_nccl_tests((DATA / "a3mega-h100-2node-all_reduce.txt").read_text(), "a3.txt")[0]
    rows = nccl_rows(tmp_path, ["--nodes", "2", "--gpu", "H100", "--nic-gbps", "200", "--fabric", "ethernet"],
                     min_bytes="1G", max_bytes="8G")
    for m in measured.rows[-2:]:  # 4-8 GiB: the bandwidth-bound end of the curve
        assert rows[m.size_bytes]["busbw"] == pytest.approx(m.busbw_gbps, rel=0.05), m.size_bytes
        assert rows[m.size_bytes]["busbw"] > 200 * 0.92 * 1.5


GB200_3_RACKS = ["--nodes", "3", "--gpu", "GB200", "--gpus-per-node", "4", "--nics-per-node", "4",
                 "--nic-gbps", "400", "--nvlink-domain-gpus", "4"]


def test_tree_between_three_racks_as_measured_and_ring_chosen_as_nccl_does(tmp_path):
    """NVIDIA/nccl#1801, GB200 NVL72, three 4-GPU partitions in three racks joined by 400G IB: tree forced
    234.43 GB/s at 16 GiB (the busiest server's NICs carry 1.5 S: 4 x 48 / 1.5 x 2 x 11/12 = 234.7), while
    NCCL's own choice, ring, gives 196.72: NCCL's tuner rates tree at half its bus bandwidth x 0.92 and so
    prefers the ring although the tree is faster."""
    forced = nccl_rows(tmp_path, GB200_3_RACKS, algo="tree", min_bytes="16G")
    assert forced[16 << 30]["busbw"] == pytest.approx(234.43, rel=0.03)
    chosen = nccl_rows(tmp_path, GB200_3_RACKS, min_bytes="16G")
    assert chosen[16 << 30]["algorithm"] == "ring"
    assert chosen[16 << 30]["busbw"] == pytest.approx(196.72, rel=0.05)


def test_nvl72_nvls_is_slower_than_the_hopper_board_figure(tmp_path):
    """A full GB200 NVL72 rack (coreweave/nccl-tests README, single rack): 834.6 GB/s busbw at 8 GiB over 72 GPUs;
    the Hopper board's NVLS efficiency (0.6875) would give 1219."""
    rows = nccl_rows(tmp_path, ["--nodes", "18", "--gpu", "GB200", "--gpus-per-node", "4", "--nics-per-node", "4",
                                "--nic-gbps", "400", "--nvlink-domain-gpus", "72"], min_bytes="8G", max_bytes="8G")
    row = rows[8 << 30]
    assert row["algorithm"] == "nvls"
    assert row["busbw"] == pytest.approx(834.57, rel=0.05)
    assert row["busbw"] < 900 * 0.6875 * 2 * 71 / 72 / (1 + 1 / 72) * 0.9


def test_nvl72_nvls_pays_a_fixed_cost_that_grows_with_its_ranks(tmp_path):
    """The same full rack from 512 MiB to 2 GiB (coreweave/nccl-tests README, single rack): 586, 681 and 758
    GB/s busbw, well below the 8 GiB rate: 72 ranks carry about half a millisecond per call, where 8 H100
    carry 80 us (NCCL's 25 + 6.875 per rank)."""
    rows = nccl_rows(tmp_path, ["--nodes", "18", "--gpu", "GB200", "--gpus-per-node", "4", "--nics-per-node", "4",
                                "--nic-gbps", "400", "--nvlink-domain-gpus", "72"], min_bytes="512M", max_bytes="2G")
    for size, measured in ((512 << 20, 586.06), (1 << 30, 681.17), (2 << 30, 757.78)):
        assert rows[size]["algorithm"] == "nvls"
        assert rows[size]["busbw"] == pytest.approx(measured, rel=0.05), size
    h100 = nccl_rows(tmp_path, ["--nodes", "1", "--gpu", "H100"], algo="nvls", min_bytes="256M", max_bytes="256M")
    assert h100[256 << 20]["busbw"] == pytest.approx(444.8, rel=0.01)  # 8 ranks: as before, 80 us in all


def test_b200_board_nvls_as_measured(tmp_path):
    """8x B200 (stas00/ml-engineering, p6-b200): NVLS on 6 GPUs 778.2 GB/s busbw at 8 GiB."""
    rows = nccl_rows(tmp_path, ["--nodes", "1", "--gpu", "B200"], num_gpus=6, algo="nvls", min_bytes="8G",
                     max_bytes="8G")
    assert rows[8 << 30]["busbw"] == pytest.approx(778.2, rel=0.03)


ONE_GPU_SERVERS = ["--nodes", "64", "--gpu", "H100", "--gpus-per-node", "1", "--nics-per-node", "1"]


def test_pat_for_all_gather_with_one_gpu_per_server(tmp_path):
    """NCCL 2.23+ runs all-gather and reduce-scatter with one GPU per server as PAT (log2 steps, tuning.cc:
    log2(nNodes) x interLat / 3.5 + nRanks x 2.8 us): at 1 MiB on 64 servers it beats the ring's 63 network
    steps; NCCL 2.21 (calibration nccl_version) has no PAT."""
    current = nccl_rows(tmp_path, ONE_GPU_SERVERS, op="all_gather", min_bytes="1M", max_bytes="1M")[1 << 20]
    ring = nccl_rows(tmp_path, ONE_GPU_SERVERS, op="all_gather", algo="ring", min_bytes="1M", max_bytes="1M")[1 << 20]
    assert current["algorithm"] == "pat" and current["protocol"] == "Simple"
    assert current["time_us"] < 0.85 * ring["time_us"]
    path = tmp_path / "c.yaml"
    code, out, err = run_cli("nccl", path, "--op", "all_gather", "--min-bytes", "1M", "--max-bytes", "1M", "--json",
                             "--set", "calibration.nccl_version=2.21")
    assert code == 0, err
    assert json.loads(out)["designer_rows"][0]["algorithm"] == "ring"
    code, _, err = run_cli("nccl", path, "--op", "all_gather", "--algo", "pat", "--set",
                           "calibration.nccl_version=2.21")
    assert code != 0 and "--algo pat is not available" in err and "use auto or ring" in err


def test_tree_between_two_servers_without_nvls_is_set_by_its_chain(tmp_path):
    """2 x 8 A100 (no NVLS) on 16 x 100G RoCE: the ring is held to the NICs' 16 x 12.5 x 0.92 = 184 GB/s;
    NCCL's tree sends S over the NICs (not 1.875 S) and chains the 8 GPUs of each server, 2 S through
    each GPU's NVLink (300 GB/s x 0.82): busbw 1.875 x 246 / 2 = 231, above the NICs' rate."""
    flags = ["--nodes", "2", "--gpu", "A100", "--nics-per-node", "16", "--nic-gbps", "100", "--fabric", "ethernet"]
    chosen = nccl_rows(tmp_path, flags, min_bytes="8G", max_bytes="8G")[8 << 30]
    ring = nccl_rows(tmp_path, flags, algo="ring", min_bytes="8G", max_bytes="8G")[8 << 30]
    assert ring["busbw"] == pytest.approx(184, rel=0.01)
    assert chosen["algorithm"] == "tree"
    assert chosen["busbw"] == pytest.approx(1.875 * 300 * 0.82 / 2, rel=0.01)


def test_nccls_estimate_of_a_one_gpu_per_server_tree_is_its_network(tmp_path):
    """2 servers of 1 GPU: no chain inside a server, so NCCL's tree estimate is the network's rate x 0.46
    (algbw half of busBw x 0.92), below the ring's 0.5: large all-reduces take the ring."""
    flags = ["--nodes", "2", "--gpu", "H100", "--gpus-per-node", "1", "--nics-per-node", "1"]
    assert nccl_rows(tmp_path, flags, min_bytes="1G", max_bytes="1G")[1 << 30]["algorithm"] == "ring"
