"""The headless CLI: exit codes, machine output on stdout, messages on stderr."""
import json

import pytest

from tests.conftest import EXAMPLES, run_cli


def test_catalog_table_and_json():
    code, out, _ = run_cli("catalog")
    assert code == 0
    for name in ("A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM5-141GB", "B200", "GB200", "MI300X", "gpt3-175b"):
        assert name in out
    code, out, _ = run_cli("catalog", "--json")
    data = json.loads(out)
    h100 = data["accelerators"]["H100-SXM5-80GB"]
    assert round(h100["peak_tflops"]["bf16"]) == 989 and "H100" in h100["aliases"]
    for kind in ("accelerators", "nics", "switches", "models"):
        assert data[kind]
        for name, item in data[kind].items():
            assert item["sources"], f"{kind} {name} has no sources"


def test_generate_then_validate(tmp_path):
    out = tmp_path / "c.yaml"
    code, stdout, err = run_cli("generate", "fat-tree", "-o", out, "--nodes", "16", "--gpu", "H100")
    assert code == 0 and stdout == "" and "128 GPUs" in err
    code, _, err = run_cli("validate", out)
    assert code == 0, err


def test_generate_flags(tmp_path):
    out = tmp_path / "c.yaml"
    code, _, err = run_cli("generate", "fat-tree", "-o", out, "--nodes", "64", "--gpu", "A100", "--gpus-per-node", "8",
                           "--nics-per-node", "4", "--nic-gbps", "200", "--fabric", "ethernet", "--tiers", "3",
                           "--switch-radix", "32", "--oversubscription", "2", "--no-rail-optimized")
    assert code == 0, err
    from designer.core.io import load_document
    doc = load_document(out)
    assert doc.num_gpus() == 512 and {s.tier for s in doc.switches} == {"leaf", "spine", "core"}
    assert all(s.fabric == "ethernet" for s in doc.switches)


def test_generate_bad_input(tmp_path):
    code, _, err = run_cli("generate", "fat-tree", "-o", tmp_path / "x.yaml", "--nodes", "4", "--gpu", "H1000")
    assert code == 65 and "H100" in err
    with pytest.raises(SystemExit) as exc:
        run_cli("generate", "fat-tree", "-o", tmp_path / "x.yaml", "--nodes", "0", "--gpu", "H100")
    assert exc.value.code == 2


def test_validate_reports_every_problem(tmp_path, small_text):
    p = tmp_path / "broken.yaml"
    p.write_text(small_text.replace('b: "leaf0:p3"', 'b: "leaf7:p3"').replace("tensor_model_parallel_size: 8",
                                                                              "tensor_model_parallel_size: 3"))
    code, out, err = run_cli("validate", p)
    assert code == 65 and out == ""
    assert "spec.links[3].b: link l3 ends at 'leaf7', which does not exist (dangling)" in err
    assert "spec.parallelism.tensor_model_parallel_size" in err
    assert str(p) in err


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.name)
def test_examples_validate(example):
    code, _, err = run_cli("validate", example)
    assert code == 0, err


def test_engine_commands_say_not_yet():
    for cmd in ("evaluate", "trace", "nccl"):
        code, _, err = run_cli(cmd, EXAMPLES / "h100-64gpu-infiniband.yaml")
        assert code == 70 and "not implemented yet" in err


def test_no_command_is_usage_error():
    assert run_cli()[0] == 2
