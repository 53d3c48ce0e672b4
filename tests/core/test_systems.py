"""Systems: `designer generate fat-tree --system NAME`, and --gpu alone following its accelerator's
system (a GB200 is sold in 4-GPU trays of a 72-GPU NVLink domain, an A100 with 200G HDR NICs)."""
import pytest

from designer.core.generate.systems import default_systems, options_for, system_of
from designer.core.io import load_document
from designer.core.model.catalog import default_catalog
from designer.core.model.parts_in_use import parts_in_use
from tests.conftest import run_cli

SYSTEMS = sorted(default_systems())


@pytest.mark.parametrize("name", SYSTEMS)
def test_every_system_builds_a_design_that_validates_with_its_own_parts(tmp_path, name):
    system = default_systems()[name]
    out = tmp_path / f"{name}.yaml"
    nodes = 36 if system.values.get("nvlink_domain_gpus") else 16
    code, _, err = run_cli("generate", "fat-tree", "-o", out, "--nodes", nodes, "--system", name)
    assert code == 0, err
    assert run_cli("validate", out)[0] == 0
    parts = parts_in_use(load_document(out), default_catalog())
    v = system.values
    assert parts.accelerator == default_catalog().resolve("accelerators", v["gpu"])
    assert (parts.gpus_per_node, parts.nics_per_node, parts.nic_gbps, parts.fabric, parts.switch_radix) == \
        (v["gpus_per_node"], v["nics_per_node"], v["nic_gbps"], v["fabric"], v["switch_radix"])
    assert system.sources.get("server") and system.sources.get("fabric")


def test_every_accelerator_of_the_catalog_but_the_export_parts_has_one_system():
    owners = {}
    for system in default_systems().values():
        for name in system.default_for:
            assert name not in owners, f"{name}: {owners.get(name)} and {system.name}"
            owners[name] = system.name
    assert set(owners) <= set(default_catalog().accelerators)
    assert {"A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM5-141GB", "B200", "B300", "GB200", "GB300", "MI300X",
            "MI355X"} <= set(owners)


def test_gb200_alone_builds_nvl72_trays_not_an_hgx_board(tmp_path):
    out = tmp_path / "gb200.yaml"
    code, _, err = run_cli("generate", "fat-tree", "-o", out, "--nodes", "36", "--gpu", "GB200")
    assert code == 0, err  # before: "a GB200 server holds at most 4 accelerators, not 8"
    parts = parts_in_use(load_document(out), default_catalog())
    assert (parts.gpus_per_node, parts.nics_per_node) == (4, 4)
    code, out_text, _ = run_cli("evaluate", out, "--set", "workload.preset=llama3-8b", "--set",
                                "parallelism.tensor_model_parallel_size=8", "--set", "workload.global_batch_size=288",
                                "--json")
    assert code == 0 and "NVLink domains" not in out_text  # TP 8 stays inside the 72-GPU domain


def test_the_options_given_win_over_the_system_and_follow_the_accelerator_given():
    # an H200 in a DGX H100 system with 200G NICs: the flags win, the rest is the system's
    options = options_for({"gpu": "H200", "nic_gbps": 200.0, "gpus_per_node": None}, "dgx-h100")
    assert options["gpu"] == "H200" and options["nic_gbps"] == 200.0 and options["switch_radix"] == 64
    # after an A100 (200G HDR, radix 40) comes an H100 (400G NDR, radix 64), not the A100's fabric
    assert options_for({"gpu": "A100"})["nic_gbps"] == 200 and options_for({"gpu": "H100"})["nic_gbps"] == 400
    assert system_of("an accelerator nobody sells") is None


def test_generate_without_an_accelerator_says_how_to_give_one(tmp_path):
    code, _, err = run_cli("generate", "fat-tree", "-o", tmp_path / "x.yaml", "--nodes", "4")
    assert code == 2 and "--gpu H100" in err and "--system dgx-h100" in err
    assert not (tmp_path / "x.yaml").exists()


def test_the_catalog_lists_the_systems_with_their_sources():
    code, out, _ = run_cli("catalog")
    assert code == 0 and "gb200-nvl72    GB200            4 GPUs, NVL72, 4 x 400 Gb/s infiniband" in out
    import json

    code, out, _ = run_cli("catalog", "--json")
    systems = json.loads(out)["systems"]
    assert systems["gb300-nvl72"]["values"]["nic_gbps"] == 800 and systems["gb300-nvl72"]["sources"]["server"]


def test_a_systems_nic_goes_only_with_its_own_fabric_and_speed():
    assert options_for({"gpu": "MI355X"})["nic_model"] == "AMD-Pollara-400"
    assert "nic_model" not in options_for({"gpu": "MI355X", "fabric": "infiniband"})
    assert "nic_model" not in options_for({"gpu": "MI355X", "nic_gbps": 800.0})


def test_an_unknown_system_is_refused_with_the_names_to_choose_from(tmp_path):
    with pytest.raises(SystemExit) as exit_info:
        run_cli("generate", "fat-tree", "-o", tmp_path / "x.yaml", "--nodes", "4", "--system", "dgx-h1000")
    assert exit_info.value.code == 2 and not (tmp_path / "x.yaml").exists()
