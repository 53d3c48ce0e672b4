"""The headless CLI: exit codes, machine output on stdout, messages on stderr."""
import json
import os
import stat
import subprocess
import sys

import pytest

from tests.conftest import EXAMPLES, ROOT, run_cli


def test_catalog_table_and_json():
    code, out, _ = run_cli("catalog")
    assert code == 0
    for name in ("A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM5-141GB", "B200", "GB200", "MI300X", "gpt3-175b"):
        assert name in out
    code, out, _ = run_cli("catalog", "--json")
    data = json.loads(out)
    h100 = data["accelerators"]["H100-SXM5-80GB"]
    assert round(h100["peak_tflops"]["bf16"]) == 989 and "H100" in h100["aliases"]
    # the sustained clock each part holds under its power limit, from the die's power model
    b200, gb200 = data["accelerators"]["B200"], data["accelerators"]["GB200"]
    assert b200["sustained_clock_factor"] * b200["best_gemm_tflops"] == pytest.approx(
        gb200["sustained_clock_factor"] * gb200["best_gemm_tflops"] * (1000 / 1200) ** (1 / 3), rel=1e-3)
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


def test_evaluate_json_has_the_contract_keys():
    code, out, err = run_cli("evaluate", EXAMPLES / "h100-64gpu-infiniband.yaml", "--json")
    assert code == 0, err
    r = json.loads(out)
    for key in ("num_gpus", "step_time_s", "tokens_per_s", "model_tflops_per_gpu", "mfu", "hfu", "breakdown_s",
                "hidden_comm_s", "memory_gib_per_gpu", "fits_in_memory", "bottlenecks", "warnings"):
        assert key in r, key
    assert set(r["breakdown_s"]) == {"compute", "recompute", "tp_comm", "cp_comm", "ep_comm", "pp_comm", "dp_comm",
                                     "bubble", "imbalance_wait", "optimizer"}
    assert abs(sum(r["breakdown_s"].values()) - r["step_time_s"]) < 1e-9 * r["step_time_s"]
    assert {"params", "grads", "optimizer", "activations", "total"} <= set(r["memory_gib_per_gpu"])
    assert r["num_gpus"] == 64 and 0 < r["mfu"] < r["hfu"] < 1
    assert all({"resource", "kind", "utilization"} <= set(b) for b in r["bottlenecks"])


def test_evaluate_table_and_set(tmp_path):
    code, out, err = run_cli("evaluate", EXAMPLES / "h100-64gpu-infiniband.yaml",
                             "--set", "parallelism.tensor_model_parallel_size=4")
    assert code == 0, err
    assert "TP 4" in out and "step time" in out and "breakdown" in out


def test_scenario_file(tmp_path):
    s = tmp_path / "job.yaml"
    s.write_text("apiVersion: designer/v1\nkind: Scenario\nspec:\n  workload: {preset: llama3-8b, global_batch_size: 128}\n"
                 "  parallelism: {tensor_model_parallel_size: 8}\n")
    code, out, err = run_cli("evaluate", EXAMPLES / "h100-64gpu-infiniband.yaml", "--scenario", s, "--json")
    assert code == 0, err
    assert json.loads(out)["plan"]["tp"] == 8


@pytest.mark.parametrize("setting, words", [
    ("parallelism.tensor_model_parallel_size=3", "tensor_model_parallel_size"),
    ("parallelism.pipeline_model_parallel_size=5", "pipeline_model_parallel_size"),
    ("workload.micro_batch_size=3", "global_batch_size"),
    ("parallelism.expert_model_parallel_size=2", "expert_model_parallel_size"),
    ("parallelism.tensr_model_parallel_size=2", "did you mean tensor_model_parallel_size"),
    ("parallelism.tensor_model_parallel_size=two", "expected an integer"),
    ("workload.preset=gpt5", "unknown model preset"),
    ("bogus.key=1", "unknown path"),
    ("links[nope].bandwidth_gbps=100", "no link"),
    ("calibration.nvlink_eficiency=0.5", "did you mean nvlink_efficiency"),
])
def test_impossible_plans_exit_65_naming_the_key(setting, words):
    code, out, err = run_cli("evaluate", EXAMPLES / "h100-64gpu-infiniband.yaml", "--set", setting)
    assert code == 65, (code, err)
    assert words in err and "Traceback" not in err and out == ""


def test_a_model_that_fits_nowhere_exits_65():
    code, _, err = run_cli("evaluate", EXAMPLES / "h100-64gpu-infiniband.yaml", "--set", "workload.preset=llama3-405b",
                           "--set", "parallelism.tensor_model_parallel_size=8", "--set", "workload.global_batch_size=64")
    assert code == 65 and "fits nowhere" in err and "GPUs" in err


def test_a_plan_that_does_not_fit_says_why():
    code, out, err = run_cli("evaluate", EXAMPLES / "h100-64gpu-infiniband.yaml", "--json",
                             "--set", "workload.preset=llama3-70b", "--set", "parallelism.tensor_model_parallel_size=8",
                             "--set", "parallelism.use_distributed_optimizer=false",
                             "--set", "parallelism.recompute_granularity=none", "--set", "workload.global_batch_size=64")
    assert code == 0, err
    r = json.loads(out)
    assert r["fits_in_memory"] is False and "GiB" in r["memory_reason"] and "try" in r["memory_reason"]


def test_nccl_json_rows(tmp_path):
    code, out, err = run_cli("nccl", EXAMPLES / "h100-64gpu-infiniband.yaml", "--op", "all_reduce", "--num-gpus", "16",
                             "--min-bytes", "1K", "--max-bytes", "1G", "--json")
    assert code == 0, err
    rows = json.loads(out)["designer_rows"]  # beside nccl-tests' own -J shape (tests/test_nccl_table.py)
    assert [r["size_bytes"] for r in rows] == [2**k for k in range(10, 31)]
    for r in rows:
        assert {"size_bytes", "time_us", "algbw", "busbw"} <= set(r)
        assert abs(r["busbw"] - r["algbw"] * 2 * 15 / 16) < 0.01
    code, out, err = run_cli("nccl", EXAMPLES / "h100-64gpu-infiniband.yaml", "--op", "all_gather")
    assert code == 0 and "Avg bus bandwidth" in out
    assert run_cli("nccl", EXAMPLES / "h100-64gpu-infiniband.yaml", "--op", "all_reduce", "--num-gpus", "999")[0] == 65


def test_trace_is_valid_perfetto_json(tmp_path):
    out = tmp_path / "trace.json"
    code, _, err = run_cli("trace", EXAMPLES / "h100-roce-2to1-ethernet.yaml", "-o", out)
    assert code == 0, err
    data = json.loads(out.read_text())
    events = data["traceEvents"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert any("waits" in n for n in names.values()) and any("compute" in n for n in names.values())
    processes = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert all(p.startswith("node") for p in processes)
    by_track: dict = {}
    for e in events:
        if e["ph"] == "X":
            assert e["dur"] >= 0 and {"name", "ts", "pid", "tid", "cat"} <= set(e)
            by_track.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    assert by_track
    for spans in by_track.values():  # Perfetto: slices on one thread must not partly overlap
        spans.sort()
        for (s1, e1), (s2, e2) in zip(spans, spans[1:]):
            assert s2 >= e1 - 1e-6 or e2 <= e1 + 1e-6


def test_no_command_is_usage_error():
    assert run_cli()[0] == 2


def test_evaluate_refuses_a_link_to_nowhere(tmp_path, small_text):
    p = tmp_path / "broken.yaml"
    p.write_text(small_text.replace('b: "leaf0:p3"', 'b: "leaf9:p3"'))
    code, out, err = run_cli("evaluate", p)
    assert code == 65 and "dangling" in err and str(p) in err and out == ""


# ---- -o: a target that cannot be written is the user's to fix (exit 1), never "please report it" ----

def _output_command(command, tmp_path, small_text, output):
    if command == "generate":
        return ("generate", "fat-tree", "--nodes", "2", "--gpu", "H100", "-o", output)
    design = tmp_path / "small.yaml"  # where the output goes is tested, not the design: the 16-GPU one
    design.write_text(small_text)
    return (command, design, "-o", output)


def _assert_cannot_write(code, err, output, reason):
    assert code == 1, err
    assert "internal error" not in err and "please report it" not in err, err
    assert f"{output}: cannot write: " in err and reason in err, err


@pytest.mark.parametrize("command", ["generate", "trace", "report"])
def test_output_under_a_regular_file_names_the_file(tmp_path, small_text, command):
    (tmp_path / "file.txt").write_text("not a folder")
    output = tmp_path / "file.txt" / "out.yaml"
    code, _, err = run_cli(*_output_command(command, tmp_path, small_text, output))
    _assert_cannot_write(code, err, output, f"{tmp_path / 'file.txt'} is a file, not a folder")
    assert "write into an existing folder you can write to" in err


@pytest.mark.parametrize("command", ["generate", "trace"])
def test_output_in_a_missing_folder_names_the_folder(tmp_path, small_text, command):
    output = tmp_path / "no-such-folder" / "out.json"
    code, _, err = run_cli(*_output_command(command, tmp_path, small_text, output))
    _assert_cannot_write(code, err, output, f"the folder {tmp_path / 'no-such-folder'} does not exist")


@pytest.mark.parametrize("command", ["generate", "trace"])
def test_output_on_a_full_disk_says_so(tmp_path, small_text, command, monkeypatch):
    import errno

    from designer.core.fs import atomic as files

    def disk_full(fh, data):  # the disk fills up in the middle of the write
        fh.write(data[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(files, "_write_all", disk_full)
    output = tmp_path / "out.json"
    code, _, err = run_cli(*_output_command(command, tmp_path, small_text, output))
    _assert_cannot_write(code, err, output, "no space left on the disk")
    assert not output.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".out.json")]


@pytest.mark.parametrize("command", ["generate", "trace"])
def test_output_onto_a_pipe_is_refused_and_the_pipe_kept(tmp_path, small_text, command):
    """A FIFO here, not /dev/full: code that renames its file over the target must not be able to
    replace a real device when this test runs as root."""
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this system")
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    code, _, err = run_cli(*_output_command(command, tmp_path, small_text, pipe))
    _assert_cannot_write(code, err, pipe, "it is a device or pipe, not a regular file")
    assert stat.S_ISFIFO(os.stat(pipe).st_mode)  # an atomic save must not rename a file over it


@pytest.mark.parametrize("command", ["generate", "trace"])
def test_output_in_a_read_only_folder(tmp_path, small_text, command):
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders: the other -o tests cover the message")
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        code, _, err = run_cli(*_output_command(command, tmp_path, small_text, folder / "out.json"))
    finally:
        folder.chmod(0o755)
    _assert_cannot_write(code, err, folder / "out.json", "permission denied")


def test_search_on_servers_with_unconnected_gpus_is_bad_input_not_an_internal_error(tmp_path, small_text):
    """The plan search's bounds route like evaluate: a GPU with no NIC is named (was exit 70)."""
    path = tmp_path / "small.yaml"
    path.write_text(small_text.replace("      gpus_per_nic: 4\n", ""))  # 2 NICs, one GPU each, 8 GPUs
    code, _, err = run_cli("search", path, "--top", "3", "--workers", "1")
    assert code == 65, err
    assert "GPU 2 has no NIC" in err and "set gpus_per_nic" in err and f"{path}:" in err


def test_numpy_starts_one_blas_thread_as_a_program(tmp_path):
    """No command multiplies large matrices; a BLAS thread per core cost 40-60 ms of every start."""
    program = ("import os, sys\nfrom designer.cli import main\ncode = main()\nimport numpy\n"
               "print(os.environ.get('OPENBLAS_NUM_THREADS'), len(os.listdir('/proc/self/task')))\n")
    if not os.path.isdir("/proc/self/task"):
        pytest.skip("counts threads in /proc")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    done = subprocess.run([sys.executable, "-c", program, "schema"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    value, threads = done.stdout.split()[-2:]
    assert value == "1" and threads == "1"
    kept = subprocess.run([sys.executable, "-c", program, "schema"], cwd=ROOT,
                          env=dict(env, OPENBLAS_NUM_THREADS="2"), capture_output=True, text=True, timeout=120)
    assert kept.stdout.split()[-2] == "2"  # the user's own setting stays
