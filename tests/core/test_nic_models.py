"""A server's `nic_model` is an input: its transport (InfiniBand, RoCE ECMP, Spectrum-X, EFA's SRD, packet
spraying) changes how the network is costed. Through the CLI, as a user would."""
import json
import statistics

import pytest

from tests.conftest import run_cli
from tests.validation.cases import MODERN_CASES_FILE, load_cases


def generate(tmp_path, *flags, name="c.yaml"):
    path = tmp_path / name
    code, _, err = run_cli("generate", "fat-tree", "-o", path, *flags)
    assert code == 0, err
    return path


def nccl(path, *flags) -> dict:
    code, out, err = run_cli("nccl", path, "--json", *flags)
    assert code == 0, err
    return {r["size_bytes"]: r for r in json.loads(out)["designer_rows"]}


EFA_CLUSTER = ["--nodes", "4", "--gpu", "B200", "--fabric", "ethernet", "--nic-gbps", "400"]


def test_published_efa_curve_with_srd_figures(tmp_path):
    """4 x p6-b200 (8 x 400G EFA v4 each), 32 ranks, 32 KiB-16 GiB (stas00/ml-engineering): with EFA's
    per-message latency (SRD through libfabric) and SRD's efficiency the curve comes within a few per cent
    over most sizes; costed as ConnectX-7 RoCE, 256 KiB-8 MiB come out 2-7x too fast."""
    case = next(c for c in load_cases(MODERN_CASES_FILE)["collectives"] if c["id"] == "MLENG-B200-EFA-AR-32")
    sizes = ["--op", "all_reduce", "--num-gpus", "32", "--min-bytes", "32K", "--max-bytes", "16G"]
    efa = nccl(generate(tmp_path, *EFA_CLUSTER, "--nic-model", "EFA-v4-400G"), *sizes)
    roce = nccl(generate(tmp_path, *EFA_CLUSTER, name="roce.yaml"), *sizes)
    errors = {m["size_bytes"]: efa[m["size_bytes"]]["busbw"] / m["busbw"] - 1 for m in case["measured"]}
    assert statistics.median(abs(e) for e in errors.values()) < 0.06, errors
    assert abs(errors[16 << 30]) < 0.02  # SRD's bandwidth, 0.955 of the line rate
    for size in (1 << 18, 1 << 20, 1 << 23):  # the latency floor: 360-460 us measured
        assert abs(errors[size]) < 0.1, (size, errors[size])
        assert roce[size]["time_us"] < 0.5 * efa[size]["time_us"]


# 16 servers, all NICs of a server on one leaf, leaves 3:1 oversubscribed: an all-to-all crosses the up-links
RAILLESS = ["--nodes", "16", "--gpu", "H100", "--no-rail-optimized", "--oversubscription", "3"]


def a2a_busbw(tmp_path, fabric, nic_model=None, *extra):
    flags = [*RAILLESS, "--fabric", fabric, *extra] + (["--nic-model", nic_model] if nic_model else [])
    path = generate(tmp_path, *flags, name=f"{fabric}-{nic_model}-{len(extra)}.yaml")
    rows = nccl(path, "--op", "all_to_all", "--min-bytes", "1G", "--max-bytes", "1G")
    return rows[1 << 30]["busbw"]


def test_roce_hashing_is_slower_than_spraying_and_adaptive_routing(tmp_path):
    """The same 400G Ethernet fabric of Spectrum-4 switches: RoCE hashes each flow onto one up-link (ECMP
    collisions), a Spectrum-X SuperNIC (with the switches' adaptive routing) or a Pollara NIC spreads its
    packets over all of them, InfiniBand routes adaptively; an all-to-all across leaves shows it."""
    roce = a2a_busbw(tmp_path, "ethernet")
    spectrum_x = a2a_busbw(tmp_path, "ethernet", "BlueField-3-SuperNIC-400G")
    pollara = a2a_busbw(tmp_path, "ethernet", "AMD-Pollara-400")
    thor = a2a_busbw(tmp_path, "ethernet", "Broadcom-Thor2-400G")
    infiniband = a2a_busbw(tmp_path, "infiniband")
    assert roce < 0.93 * spectrum_x
    assert pollara == pytest.approx(spectrum_x)
    assert thor == pytest.approx(roce)  # RoCE with ECMP, whoever makes the NIC
    assert roce < 0.9 * infiniband


def test_nic_model_flag_refuses_unknown_and_mismatched_models(tmp_path):
    code, _, err = run_cli("generate", "fat-tree", "-o", tmp_path / "a.yaml", *EFA_CLUSTER, "--nic-model", "EFA-v9")
    assert code == 65 and "--nic-model 'EFA-v9' is not in the catalog" in err
    code, _, err = run_cli("generate", "fat-tree", "-o", tmp_path / "b.yaml", "--nodes", "2", "--gpu", "H100",
                           "--nic-model", "EFA-v4-400G")
    assert code == 65 and "--fabric ethernet" in err
    assert not (tmp_path / "a.yaml").exists() and not (tmp_path / "b.yaml").exists()


def test_catalog_lists_each_nics_transport():
    code, out, err = run_cli("catalog", "--json")
    assert code == 0, err
    nics = json.loads(out)["nics"]
    assert nics["EFA-v4-400G"]["transport"] == "srd"
    assert nics["ConnectX-7-400GbE"]["transport"] == "roce"
    assert nics["BlueField-3-SuperNIC-400G"]["transport"] == "spectrum-x"
    assert nics["ConnectX-7-NDR-400G"]["transport"] == "infiniband"


def test_spectrum_x_needs_switches_that_route_adaptively(tmp_path):
    """32-port leaves are no catalog switch (no Spectrum-4 model, so no adaptive routing): there a
    Spectrum-X SuperNIC's flows are hashed like RoCE's, while Pollara sprays its packets itself."""
    plain = ["--switch-radix", "32"]
    roce = a2a_busbw(tmp_path, "ethernet", None, *plain)
    assert a2a_busbw(tmp_path, "ethernet", "BlueField-3-SuperNIC-400G", *plain) == pytest.approx(roce)
    assert a2a_busbw(tmp_path, "ethernet", "AMD-Pollara-400", *plain) > 1.05 * roce
