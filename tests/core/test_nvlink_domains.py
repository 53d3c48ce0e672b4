"""Rack-scale NVLink domains: GB200 trays of 4 GPUs sharing a 72-GPU NVLink domain."""
from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli

from designer.core.io import load_document, save_document


def _generate(tmp_path, name="c.yaml", nodes=36, domain=72, gpu="GB200", gpus_per_node=4):
    path = tmp_path / name
    args = ["generate", "fat-tree", "--gpu", gpu, "--gpus-per-node", gpus_per_node, "--nics-per-node",
            gpus_per_node, "--nic-gbps", 400, "--nodes", nodes, "-o", path]
    if domain is not None:
        args += ["--nvlink-domain-gpus", domain]
    code, out, err = run_cli(*args)
    assert code == 0, err
    return path


def _step_s(path, tp, *extra):
    code, out, err = run_cli("evaluate", path, "--set", "workload.preset=llama3-8b", "--set",
                             f"parallelism.tensor_model_parallel_size={tp}", "--set",
                             "workload.global_batch_size=288", "--json", *extra)
    assert code == 0, err
    return json.loads(out), err


def test_generate_groups_trays_in_domains_and_validates(tmp_path):
    path = _generate(tmp_path)
    doc = load_document(path)
    domains = [n.nvlink_domain for n in doc.nodes]
    assert domains == [f"nvl{i // 18}" for i in range(36)]  # 18 trays of 4 GPUs per NVL72 domain
    code, out, err = run_cli("validate", path)
    assert code == 0, err


def test_default_domain_is_one_server_and_file_unchanged(tmp_path):
    path = _generate(tmp_path, domain=None, gpu="H100", gpus_per_node=8, nodes=4)
    assert "nvlink_domain" not in path.read_text()
    assert all(n.nvlink_domain is None for n in load_document(path).nodes)


def test_domain_round_trips_through_save(tmp_path):
    path = _generate(tmp_path, nodes=4, domain=16)
    doc = load_document(path)
    again = tmp_path / "again.yaml"
    save_document(doc, again)
    assert [n.nvlink_domain for n in load_document(again).nodes] == ["nvl0"] * 4


def test_domain_not_whole_trays_is_refused_naming_flag(tmp_path):
    code, out, err = run_cli("generate", "fat-tree", "--gpu", "GB200", "--gpus-per-node", "4", "--nodes", "4",
                             "--nvlink-domain-gpus", "70", "-o", tmp_path / "x.yaml")
    assert code == 65
    assert "--nvlink-domain-gpus 70" in err and "use --nvlink-domain-gpus 68" in err


def test_domain_larger_than_part_allows_is_refused(tmp_path):
    code, out, err = run_cli("generate", "fat-tree", "--gpu", "H100", "--gpus-per-node", "8", "--nodes", "4",
                             "--nvlink-domain-gpus", "16", "-o", tmp_path / "x.yaml")
    assert code == 65
    assert "use --nvlink-domain-gpus 8" in err
    code, out, err = run_cli("generate", "fat-tree", "--gpu", "GB200", "--gpus-per-node", "4", "--nodes", "40",
                             "--nvlink-domain-gpus", "80", "-o", tmp_path / "y.yaml")
    assert code == 65 and "use --nvlink-domain-gpus 72" in err


def _edit_domains(path, domains: dict[str, str]):
    """What a user does in the inspector or a text editor: set servers' nvlink_domain, save."""
    doc = load_document(path)
    for node in doc.nodes:
        if node.id in domains:
            node.nvlink_domain = domains[node.id]
    save_document(doc, path)
    return path


def test_checks_refuse_oversized_domain_and_a_split_domain(tmp_path):
    path = _generate(tmp_path, nodes=20, domain=72)
    # trays 18, 19 are domain nvl1; putting them into nvl0 makes 80 GPUs in one GB200 domain
    _edit_domains(path, {"node18": "nvl0", "node19": "nvl0"})
    code, out, err = run_cli("validate", path)
    assert code == 65
    assert "spec.nodes[0].nvlink_domain" in err and "80" in err
    # a tray of nvl0 listed after a tray of nvl1: the domain is no longer one block of trays
    path2 = _edit_domains(_generate(tmp_path, name="d.yaml", nodes=8, domain=16),
                          {"node2": "nvl1", "node3": "nvl0"})
    code, out, err = run_cli("validate", path2)
    assert code == 65
    assert "spec.nodes[3].nvlink_domain" in err and "listed together" in err


def test_tp8_on_trays_inside_a_domain_costs_nvlink_not_nics(tmp_path):
    in_domain, _ = _step_s(_generate(tmp_path, "a.yaml"), 8)
    own_servers, _ = _step_s(_generate(tmp_path, "b.yaml", domain=4), 8)
    # the same TP 8 on 4-GPU servers crosses the NICs (NCCL's tree between the two servers: each NIC
    # carries S / 4 each way); inside an NVL72 domain it stays on NVLink
    tp_in, tp_out = in_domain["collectives"]["tp:all_reduce"], own_servers["collectives"]["tp:all_reduce"]
    assert tp_in["time_s"] < 0.6 * tp_out["time_s"]
    assert in_domain["step_time_s"] < 0.8 * own_servers["step_time_s"]


def test_tp_across_domains_is_warned(tmp_path):
    path = _generate(tmp_path)
    code, out, err = run_cli("evaluate", path, "--set", "workload.preset=llama3-8b", "--set",
                             "parallelism.tensor_model_parallel_size=16", "--set", "workload.global_batch_size=288")
    assert code == 0, err
    assert "TP 16 spans two NVLink domains of 72 GPUs: its traffic goes over the NICs" in out + err
    # TP 8 (72 = 9 x 8) stays inside the domains: no warning
    data, err = _step_s(path, 8)
    assert not any("NVLink domains" in w for w in data.get("warnings", []))


def _busbw_gbs(path, n):
    code, out, err = run_cli("nccl", path, "--op", "all_reduce", "--num-gpus", n, "--min-bytes", "8G",
                             "--max-bytes", "8G")
    assert code == 0, err
    line = next(l for l in out.splitlines() if "Avg bus bandwidth" in l)
    return float(line.split(":")[1])


def test_nccl_all_reduce_inside_a_domain_runs_at_nvlink_speed(tmp_path):
    nvl72 = _busbw_gbs(_generate(tmp_path, "a.yaml"), 72)
    trays = _busbw_gbs(_generate(tmp_path, "b.yaml", domain=4), 72)
    # 72 GPUs of one NVL72 rack: hundreds of GB/s (NVLink); as separate trays the NICs (50 GB/s each) cap it
    assert nvl72 > 500 and trays < 200


def test_tp_past_an_eight_gpu_server_is_warned_with_the_tp_that_stays_inside():
    """Servers that share no NVLink domain are each their own: TP 16 on 8-GPU servers crosses the NICs."""
    example = Path(__file__).parents[2] / "resources" / "examples" / "h100-64gpu-infiniband.yaml"
    code, out, err = run_cli("evaluate", example, "--set", "parallelism.tensor_model_parallel_size=16", "--json")
    assert code == 0, err
    assert ("TP 16 spans two NVLink domains of 8 GPUs: its traffic goes over the NICs (TP 8 keeps each group "
            "inside one)") in json.loads(out)["warnings"]
    code, out, err = run_cli("evaluate", example, "--set", "parallelism.tensor_model_parallel_size=8", "--json")
    assert not any("NVLink domains" in w for w in json.loads(out)["warnings"])
