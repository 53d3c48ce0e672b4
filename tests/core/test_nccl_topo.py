"""`designer import nccl-topo topo.xml --into c.yaml`: a server's insides from NCCL's topology dump.

Real public dumps (tests/data/nccl-topo/README.md names each source)."""
import json
from pathlib import Path

import pytest

from designer.core.generate import generate_fat_tree
from designer.core.io import load_document, save_document
from designer.core.io.importers.nccl_topo import parse_nccl_topo
from designer.core.problems import DesignerError
from tests.conftest import run_cli

DATA = Path(__file__).parents[1] / "data" / "nccl-topo"
IBM = DATA / "ibm-cloud-h100-8nic.xml"


def test_real_h100_dump_gpus_nics_switches_numa_nvlinks():
    topo = parse_nccl_topo(IBM.read_text(), str(IBM))
    assert [g.dev for g in topo.gpus] == list(range(8))
    assert [n.name for n in topo.nics] == [f"mlx5_{i}" for i in range(8)]
    assert {n.speed_gbps for n in topo.nics} == {200.0}  # speed="200000" Mb/s
    assert topo.scale_up() == "nvswitch" and {g.nvlinks for g in topo.gpus} == {18}  # 5+5+4+4 to 4 NVSwitches
    assert [g.numa for g in topo.gpus] == ["0"] * 4 + ["1"] * 4
    # each GPU shares its PCIe switch with one NIC, in reverse order: GPU 0 with mlx5_7
    assert topo.nearest_nic() == [7, 6, 5, 4, 3, 2, 1, 0]
    groups = topo.switch_groups()
    assert len(groups) == 8 and groups[0] == ("0000:a1:00.0", [0], [7])


def test_import_changes_the_matching_servers_and_the_engine_reads_them(tmp_path):
    doc = generate_fat_tree(nodes=2, gpu="H100", name="t")
    path, before_path = tmp_path / "c.yaml", tmp_path / "before.yaml"
    save_document(doc, path)
    save_document(doc, before_path)
    code, _, stderr = run_cli("import", "nccl-topo", IBM, "--into", path)
    assert code == 0, stderr
    assert "2 server(s) changed" in stderr and "GPU0->nic7 (mlx5_7)" in stderr
    after = load_document(path)
    for node in after.nodes:
        assert node.nic_count == 8 and node.nic_gbps == 200 and node.gpus_per_nic == 1
        assert node.gpu_nic_affinity == [7, 6, 5, 4, 3, 2, 1, 0] and node.scale_up == "nvswitch"
    code, _, stderr = run_cli("validate", path)
    assert code == 0, stderr
    # the engine costs the imported NICs: 200 Gb/s instead of 400 makes a cross-server all_gather slower
    times = []
    for design in (before_path, path):
        code, out, stderr = run_cli("nccl", design, "--op", "all_gather", "--num-gpus", "16",
                                    "--min-bytes", "1G", "--max-bytes", "1G", "--json")
        assert code == 0, stderr
        times.append(json.loads(out)["designer_rows"][0]["time_us"])
    assert times[1] > 1.5 * times[0]


def test_only_the_named_server_changes(tmp_path):
    doc = generate_fat_tree(nodes=3, gpu="H100", name="t")
    path = tmp_path / "c.yaml"
    save_document(doc, path)
    code, _, stderr = run_cli("import", "nccl-topo", IBM, "--into", path, "--node", "node1")
    assert code == 0, stderr
    assert "1 server(s) changed (node1)" in stderr
    after = load_document(path)
    assert [n.nic_gbps for n in after.nodes] == [400, 200, 400]
    assert [bool(n.gpu_nic_affinity) for n in after.nodes] == [False, True, False]


def test_no_server_with_that_gpu_count_changes_nothing(tmp_path):
    doc = generate_fat_tree(nodes=2, gpu="H100", gpus_per_node=4, nics_per_node=4, name="t")
    path = tmp_path / "c.yaml"
    save_document(doc, path)
    before = path.read_bytes()
    code, _, stderr = run_cli("import", "nccl-topo", IBM, "--into", path)
    assert code == 1 and "no server has 8 GPUs" in stderr and "--node" in stderr
    assert path.read_bytes() == before


@pytest.mark.parametrize("name, line, words", [
    ("h200-nccl-tests-256-truncated.xml", 53, "truncated"),
    ("azure-ndv5-no-gpu.xml", 1, "no <gpu>"),
])
def test_broken_dumps_exit_65_with_file_and_line(tmp_path, name, line, words):
    doc = generate_fat_tree(nodes=2, gpu="H200", name="t")
    path = tmp_path / "c.yaml"
    save_document(doc, path)
    before = path.read_bytes()
    code, _, stderr = run_cli("import", "nccl-topo", DATA / name, "--into", path)
    assert code == 65
    assert f"{DATA / name}:{line}:" in stderr and words in stderr
    assert path.read_bytes() == before
    with pytest.raises(DesignerError):
        parse_nccl_topo((DATA / name).read_text(), name)


def test_gpu_nic_affinity_is_checked(tmp_path):
    doc = generate_fat_tree(nodes=1, gpu="H100", name="t")
    doc.nodes[0].gpu_nic_affinity = [0, 1, 2, 3, 4, 5, 6, 9]
    path = tmp_path / "c.yaml"
    save_document(doc, path)
    code, _, stderr = run_cli("validate", path)
    assert code == 65 and "gpu_nic_affinity[7]" in stderr and "nic0..nic7" in stderr


def test_a_topology_that_does_not_fit_the_cabling_changes_nothing(tmp_path):
    import re

    text = IBM.read_text()
    for i in range(4, 8):  # the same server with NICs mlx5_4..7 taken out: 4 NICs, 8 cables plugged in
        text = re.sub(r'\s*<pci busid="[^"]*" class="0x020000"[^>]*>\s*<nic>\s*<net name="mlx5_%d".*?</nic>\s*</pci>'
                      % i, "", text, flags=re.S)
    four = tmp_path / "four-nics.xml"
    four.write_text(text)
    doc = generate_fat_tree(nodes=2, gpu="H100", name="t")
    path = tmp_path / "c.yaml"
    save_document(doc, path)
    before = path.read_bytes()
    code, _, stderr = run_cli("import", "nccl-topo", four, "--into", path)
    assert code == 1 and "past the last port" in stderr and "unchanged" in stderr
    assert path.read_bytes() == before


def test_real_a100_pcie_dump_nvlink_pairs_one_nic_without_gdr(tmp_path):
    path = DATA / "azure-ncv4-a100-4gpu.xml"
    topo = parse_nccl_topo(path.read_text(), str(path))
    assert len(topo.gpus) == 4 and topo.scale_up() == "nvlink" and {g.nvlinks for g in topo.gpus} == {12}
    assert [(n.name, n.speed_gbps, n.gdr) for n in topo.nics] == [("eth0", 100.0, False)]
    assert topo.nearest_nic() == [0, 0, 0, 0] and [g.numa for g in topo.gpus] == ["0", "1", "2", "3"]
    doc = generate_fat_tree(nodes=2, gpu="A100", gpus_per_node=4, nics_per_node=1, nic_gbps=100,
                            fabric="ethernet", name="t")
    target = tmp_path / "c.yaml"
    save_document(doc, target)
    code, _, stderr = run_cli("import", "nccl-topo", path, "--into", target)
    assert code == 0, stderr
    node = load_document(target).nodes[0]
    assert (node.scale_up, node.nic_count, node.gpus_per_nic, node.gpudirect_rdma) == ("nvlink", 1, 4, False)
    assert node.scale_up_gbps in (None, 2400.0)  # 12 links x 25 GB/s: the catalog's figure or it


def _a100_design(tmp_path, gpus_per_node, nics_per_node, nic_gbps):
    doc = generate_fat_tree(nodes=2, gpu="A100", gpus_per_node=gpus_per_node, nics_per_node=nics_per_node,
                            nic_gbps=nic_gbps, fabric="ethernet", name="t")
    target = tmp_path / "c.yaml"
    save_document(doc, target)
    return target


def test_a_dual_port_nic_in_an_x8_slot_shares_the_slot(tmp_path):
    # NVIDIA/nccl#2397: a 2 x 100G ConnectX-6 Dx in a PCIe 4.0 x8 slot (126 Gb/s for both ports);
    # the other host of the post has it in an x16 slot (252 Gb/s: each port at its 100)
    x8, x16 = DATA / "nccl-issue-2397-a100-pcie-dual-port-x8.xml", DATA / "nccl-issue-2397-a100-pcie-dual-port-x16.xml"
    topo = parse_nccl_topo(x8.read_text(), str(x8))
    assert [(n.name, n.slot_ports, round(n.slot_gbps, 1)) for n in topo.nics] == [("mlx5_0", 2, 126.0),
                                                                                  ("mlx5_1", 2, 126.0)]
    assert topo.nic_speed_gbps() == pytest.approx(63.015)
    assert parse_nccl_topo(x16.read_text(), str(x16)).nic_speed_gbps() == 100
    target = _a100_design(tmp_path, 2, 2, 100)
    code, _, stderr = run_cli("import", "nccl-topo", x8, "--into", target)
    assert code == 0, stderr
    assert "mlx5_0: one of 2 ports of a card in a PCIe 16.0 GT/s x8 slot (126 Gb/s for all of them): 63 Gb/s" in stderr
    assert [n.nic_gbps for n in load_document(target).nodes] == pytest.approx([63.015, 63.015])
    assert run_cli("validate", target)[0] == 0


def test_an_a100_pcie_does_not_become_an_sxm_part_silently(tmp_path):
    target = _a100_design(tmp_path, 2, 2, 100)
    path = DATA / "nccl-issue-2397-a100-pcie-dual-port-x8.xml"
    code, _, stderr = run_cli("import", "nccl-topo", path, "--into", target)
    assert code == 0
    assert ("node0: warning: the topology's GPUs are A100 PCIe 80GB cards (PCI device 0x20b5); the design's "
            "A100-SXM4-80GB is the SXM part") in stderr
    node = load_document(target).nodes[0]
    assert (node.scale_up, node.accelerator_count) == ("pcie", 2)
