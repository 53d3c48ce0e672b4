"""The gradient reduction's precision and the DDP bucket size are plan inputs (Megatron
--grad-reduce-in-bf16, --ddp-bucket-size): BF16 gradients halve the bytes the DP reduction sends
and the gradient buffer the step zeroes and holds; the bucket size sets how many collectives the
reduction takes. Read from and written to Megatron launch lines."""

import pytest

from designer.core.io import load_document
from designer.core.io.files import save_document
from designer.core.io.overrides import apply_overrides
from tests.conftest import EXAMPLES, evaluate_json, run_cli
from tests.core.test_per_step_passes import hbm_bytes_per_s, llama3_8b_params

CLUSTER = EXAMPLES / "h100-64gpu-infiniband.yaml"  # 64 H100, 8 a server: DP 64 crosses the NICs
# Llama 3 8B at DP 64, gradients all-reduced after the backward (not overlapped): its whole time shows
PLAN = ["workload.preset=llama3-8b", "workload.global_batch_size=64", "workload.micro_batch_size=1",
        "parallelism.tensor_model_parallel_size=1", "parallelism.pipeline_model_parallel_size=1",
        "parallelism.use_distributed_optimizer=false", "parallelism.overlap_grad_reduce=false"]


def evaluate(*sets: str) -> dict:
    return evaluate_json(CLUSTER, *PLAN, *sets)


def test_bf16_gradients_halve_the_reduction_and_the_zeroing_and_the_buffer():
    fp32 = evaluate()
    bf16 = evaluate("parallelism.grad_reduce_in_bf16=true")
    # 32 GB of fp32 gradients all-reduced over 64 GPUs in 126 buckets: half the bytes, each bucket's
    # latency the same
    assert 0.5 < bf16["breakdown_s"]["dp_comm"] / fp32["breakdown_s"]["dp_comm"] < 0.6
    # the buffer zeroed before each step is 2 bytes a parameter instead of 4
    saved = fp32["breakdown_s"]["optimizer"] - bf16["breakdown_s"]["optimizer"]
    assert saved == pytest.approx(llama3_8b_params() * 2 / hbm_bytes_per_s(), rel=0.01)
    assert bf16["memory_gib_per_gpu"]["grads"] == pytest.approx(fp32["memory_gib_per_gpu"]["grads"] / 2)


def test_the_bucket_size_sets_how_many_collectives_the_reduction_takes():
    default = evaluate()["breakdown_s"]["dp_comm"]
    # Megatron's default at DP 64 is max(4e7, 1e6 x 64) = 64M parameters: stating it changes nothing
    assert evaluate("parallelism.ddp_bucket_size=64000000")["breakdown_s"]["dp_comm"] == default
    # 100k-parameter buckets: 80,000 latency-bound collectives instead of 126
    assert evaluate("parallelism.ddp_bucket_size=100000")["breakdown_s"]["dp_comm"] > 3 * default
    # the MLPerf Llama 3.1 8B runs' 768M: 11 buckets, fewer latencies, about the same bytes
    assert evaluate("parallelism.ddp_bucket_size=768000000")["breakdown_s"]["dp_comm"] < default


def test_a_bad_bucket_size_names_the_key():
    code, _, err = run_cli("evaluate", CLUSTER, "--set", "parallelism.ddp_bucket_size=0")
    assert code != 0 and "ddp_bucket_size" in err and "Traceback" not in err


def test_megatron_flags_in_and_out(tmp_path):
    doc = load_document(CLUSTER)
    apply_overrides(doc, PLAN + ["parallelism.grad_reduce_in_bf16=true", "parallelism.ddp_bucket_size=768000000"])
    source = tmp_path / "source.yaml"
    save_document(doc, source)
    code, line, err = run_cli("export", "megatron", source, "--one-line")
    assert code == 0, err
    assert "--grad-reduce-in-bf16" in line.split() and "--ddp-bucket-size 768000000" in line
    code, nemo, err = run_cli("export", "megatron", source, "--nemo", "--one-line")
    assert code == 0, err
    assert "mixed_precision.grad_reduce_in_fp32=false" in nemo.split() and "ddp.bucket_size=768000000" in nemo.split()
    script = tmp_path / "launch.sh"
    script.write_text(f"torchrun pretrain_gpt.py {line}\n")
    design = tmp_path / "d.yaml"
    design.write_text(CLUSTER.read_text())
    code, _, err = run_cli("import", "megatron", script, "--into", design)
    assert code == 0, err
    assert "--ddp-bucket-size" not in err  # an input now, not a flag read but not costed
    text = design.read_text()
    assert "grad_reduce_in_bf16: true" in text and "ddp_bucket_size: 768000000" in text
