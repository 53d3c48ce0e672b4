"""Ethernet switches of other makers: catalog entries an architect buys (Broadcom Tomahawk 5 / 4 /
Ultra, Jericho3-AI's scheduled fabric), picked with `designer generate --switch-model`, and costed by
how each spreads flows: ECMP hashes each flow onto one up-link; a cell-scheduled fabric has no
collisions."""
import json

import pytest

from designer.core.io import load_document
from designer.core.model.catalog import default_catalog
from tests.conftest import run_cli


def _generate(path, *extra):
    code, _, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", "32", "--gpu", "H100", "--fabric", "ethernet",
                           "--oversubscription", "3", "--no-rail-optimized", *extra)
    assert code == 0, err
    assert run_cli("validate", path)[0] == 0
    return path


def _a2a_busbw(path) -> float:
    code, out, err = run_cli("nccl", path, "--op", "all_to_all", "--min-bytes", "1G", "--max-bytes", "1G", "--json")
    assert code == 0, err
    return json.loads(out)["designer_rows"][0]["busbw"]


def test_every_new_switch_has_its_figures_sourced_and_is_not_picked_by_default():
    cat = default_catalog()
    for name in ("Tomahawk5-800GbE", "Tomahawk4-400GbE", "TomahawkUltra-800GbE", "Jericho3AI-800GbE"):
        s = cat.switches[name]
        assert s.kind == "ethernet" and not s.default
        assert all(s.sources.get(k, "").strip() for k in ("radix", "port_gbps", "latency_us", "sharp", "routing"))
    assert cat.switches["Jericho3AI-800GbE"].routing == "scheduled"
    assert cat.switches["Tomahawk5-800GbE"].routing == "ecmp"
    assert cat.switch_for("ethernet", 800).name == "SN5600-800GbE"  # the default stays NVIDIA's


def test_generate_builds_the_fabric_of_the_named_switch_with_its_ports_split(tmp_path):
    path = _generate(tmp_path / "th5.yaml", "--switch-model", "Tomahawk5")
    switches = load_document(path).switches
    assert {s.model for s in switches} == {"Tomahawk5-800GbE"}
    assert {s.radix for s in switches} == {128}  # 64 x 800G as 128 x 400G for 400G NICs
    assert {s.latency_us for s in switches} == {0.6}


def test_a_scheduled_fabric_has_no_ecmp_collisions(tmp_path):
    # the same leaves and spines (radix 64): only how the flows spread over the up-links differs
    ecmp = _a2a_busbw(_generate(tmp_path / "th5.yaml", "--switch-model", "Tomahawk5-800GbE", "--switch-radix", "64"))
    cells = _a2a_busbw(_generate(tmp_path / "j3.yaml", "--switch-model", "Jericho3AI-800GbE", "--switch-radix", "64"))
    assert cells > 1.03 * ecmp
    # a file may say it too: scheduled routing on the Tomahawk fabric's switches costs it as the cells do
    path = tmp_path / "th5.yaml"
    code, out, err = run_cli("nccl", path, "--op", "all_to_all", "--min-bytes", "1G", "--max-bytes", "1G", "--json",
                             *sum((["--set", f"switches[{s.id}].routing=scheduled"]
                                   for s in load_document(path).switches), []))
    assert code == 0, err
    assert json.loads(out)["designer_rows"][0]["busbw"] > 1.03 * ecmp  # (and its 0.6 us hops beat Jericho's 2 us)


@pytest.mark.parametrize("extra, message", [
    (["--fabric", "infiniband", "--switch-model", "Tomahawk5-800GbE"], "is an ethernet switch; use --fabric ethernet"),
    (["--fabric", "ethernet", "--nic-gbps", "300", "--switch-model", "Tomahawk5-800GbE"],
     "do not split into 300 Gb/s NIC links; use --nic-gbps 800"),
    (["--fabric", "ethernet", "--switch-model", "Tomahawk9"], "did you mean Tomahawk5-800GbE"),
])
def test_a_switch_model_that_does_not_fit_is_refused_with_the_fix(tmp_path, extra, message):
    out = tmp_path / "x.yaml"
    code, _, err = run_cli("generate", "fat-tree", "-o", out, "--nodes", "4", "--gpu", "H100", *extra)
    assert code == 65 and message in err and not out.exists()


def test_the_catalog_lists_each_switchs_routing():
    code, out, _ = run_cli("catalog")
    assert code == 0
    line = next(l for l in out.splitlines() if l.strip().startswith("Jericho3AI-800GbE"))
    assert "scheduled" in line and "36 x 800 Gb/s" in line
