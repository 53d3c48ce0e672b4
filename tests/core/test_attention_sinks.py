"""Attention sinks (Megatron softmax_type learnable, gpt-oss): which fused attention kernels
Transformer Engine can run them with, refused where it has none, and exported to Megatron-LM."""
import dataclasses
import json
import shutil

from designer.core.io import load_document
from designer.core.io.files import save_document
from designer.core.model.job import Workload
from tests.conftest import EXAMPLES, run_cli

H100 = EXAMPLES / "h100-64gpu-infiniband.yaml"
GB200 = EXAMPLES / "gb200-nvl72-144gpu.yaml"
GPT_OSS = ["--set", "workload.preset=gpt-oss-120b", "--set", "workload.global_batch_size=128",
           "--set", "workload.micro_batch_size=1", "--set", "parallelism.expert_model_parallel_size=8",
           "--set", "parallelism.pipeline_model_parallel_size=1", "--set", "parallelism.tensor_model_parallel_size=1",
           "--set", "parallelism.context_parallel_size=1", "--set", "parallelism.virtual_pipeline_model_parallel_size=1"]


def _evaluate(path, *sets):
    return run_cli("evaluate", path, "--json", *GPT_OSS, *sum((["--set", s] for s in sets), []))


def test_the_gpt_oss_preset_has_learned_sinks_and_megatron_is_told(tmp_path):
    code, out, err = _evaluate(H100)
    assert code == 0, err
    path = tmp_path / "gpt-oss.yaml"
    shutil.copy(H100, path)
    doc = load_document(path)
    doc.spec.workload = Workload(preset="gpt-oss-120b", global_batch_size=128, micro_batch_size=1, precision="bf16")
    doc.spec.parallelism = dataclasses.replace(doc.spec.parallelism, expert_model_parallel_size=8,
                                               tensor_model_parallel_size=1, sequence_parallel=False)
    save_document(doc, path)
    code, out, err = run_cli("export", "megatron", path, "--one-line")
    assert code == 0, err
    assert "--softmax-type learnable" in out


def test_fp8_attention_with_sinks_is_refused_before_blackwell():
    code, _, err = _evaluate(H100, "workload.precision=fp8", "parallelism.fp8_dot_product_attention=true")
    assert code == 65
    assert "spec.parallelism.fp8_dot_product_attention" in err and "H100-SXM5-80GB" in err
    assert "fp8_dot_product_attention: false" in err
    code, _, err = _evaluate(H100, "workload.precision=fp8", "parallelism.fp8_dot_product_attention=true",
                             "workload.softmax_type=vanilla")
    assert code == 0, err
    code, out, err = _evaluate(GB200, "workload.precision=fp8", "parallelism.fp8_dot_product_attention=true",
                               "workload.global_batch_size=144")
    assert code == 0, err
    assert json.loads(out)["step_time_s"] > 0


def test_context_parallel_sinks_need_the_all_to_all_layout():
    cp2 = ["parallelism.context_parallel_size=2", "workload.seq_length=8192"]
    code, _, err = _evaluate(H100, *cp2)
    assert code == 65
    assert "spec.parallelism.cp_comm_type" in err and "cp_comm_type: a2a" in err
    code, _, err = _evaluate(H100, *cp2, "parallelism.cp_comm_type=a2a")
    assert code == 0, err


def test_a_softmax_type_megatron_does_not_have_is_refused():
    code, _, err = _evaluate(H100, "workload.softmax_type=sink")
    assert code != 0
    assert "softmax_type" in err and "learnable" in err


def _attention_ms(path, *sets):
    code, out, err = run_cli("microbench", path, "--predict", "--json", *GPT_OSS,
                             "--set", "workload.global_batch_size=144", *sum((["--set", s] for s in sets), []))
    assert code == 0, err
    return {k["name"]: k["ms"] for k in json.loads(out) if k["kind"].startswith("attention")}


def test_fp8_attention_backward_pays_for_the_whole_sliding_window_row():
    """cuDNN's FP8 attention backward does not skip the key blocks left of gpt-oss's 128-token window:
    on GB200 / GB300 its window kernel takes 3.4-4.5 x the BF16 one at 4k (cudnn-frontend
    sdpa_benchmark_training results/gpt_oss), the unmasked kernel's time; the forward still skips."""
    bf16 = _attention_ms(GB200)
    fp8 = _attention_ms(GB200, "workload.precision=fp8", "parallelism.fp8_recipe=mxfp8",
                        "parallelism.fp8_dot_product_attention=true")
    window, causal = "attention0", "attention1"  # gpt-oss alternates window and full-causal layers
    assert fp8[f"{window}.bwd"] >= 2.5 * bf16[f"{window}.bwd"]
    assert fp8[f"{window}.bwd"] > fp8[f"{causal}.bwd"]  # unmasked: about twice the causal kernel
    assert fp8[f"{window}.fwd"] <= bf16[f"{window}.fwd"]
    assert bf16[f"{window}.bwd"] < bf16[f"{causal}.bwd"] / 2  # BF16 skips the blocks outside the window
