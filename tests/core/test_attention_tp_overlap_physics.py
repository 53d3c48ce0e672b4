"""Two pieces of kernel physics of the 2024-26 runs.

Softmax exponentials: a flash-attention kernel evaluates one exponential per score on the
special-function units, whose rate did not grow with Blackwell's tensor cores (FlashAttention-4;
Blackwell Ultra doubles it again). Where a score needs fewer MMA FLOPs than the SFUs allow (head
dimension 64 on B200/GB200), attention waits on the exponentials.

Tensor-parallel overlap: Transformer Engine's userbuffers run an all-gather feeding a GEMM as a
ring exchange in tp steps and a GEMM's reduce-scatter in 4 pipelined splits; in backward the
input re-gather and the dgrad reduce-scatter are bulk overlaps. Only a first step of each is
exposed, so TP 8 leaves less exposed than a fixed quarter.
"""
import json

import pytest

from designer.core.engine.compute import OpCoster, Sharding, layer_cost
from designer.core.engine.constants import AcceleratorConstants, EngineConstants
from designer.core.engine.flops import ModelShape
from designer.core.model import Workload
from tests.conftest import run_cli


def _cluster(tmp_path, gpu, gpus_per_node=8):
    f = tmp_path / f"{gpu}.yaml"
    code, _, err = run_cli("generate", "fat-tree", "--gpu", gpu, "--gpus-per-node", str(gpus_per_node),
                           "--nodes", "1", "--nics-per-node", str(gpus_per_node), "--nic-gbps", "400",
                           "--fabric", "infiniband", "--switch-radix", "64", "-o", f)
    assert code == 0, err
    return f


def _evaluate(cluster, *sets):
    args = ["evaluate", cluster, "--json", "--set", "workload.preset=llama3-8b",
            "--set", "workload.seq_length=32768", "--set", "workload.global_batch_size=8",
            "--set", "workload.micro_batch_size=1", "--set", "parallelism.tensor_model_parallel_size=1",
            "--set", "parallelism.pipeline_model_parallel_size=1", "--set", "workload.precision=fp8"]
    for kv in sets:
        args += ["--set", kv]
    code, out, err = run_cli(*args)
    assert code == 0, err
    return json.loads(out)


def _head_dim_64(*sets):
    # same attention FLOPs per token: twice the heads at half the width
    return ("workload.num_attention_heads=64", "workload.kv_channels=64", "workload.num_query_groups=16") + sets


def test_small_heads_on_b200_wait_on_the_exponentials(tmp_path):
    b200 = _cluster(tmp_path, "B200")
    no_sfu_limit = "calibration.accelerators.B200.attention_flops_per_exponential=0"
    d128 = _evaluate(b200)
    d128_free = _evaluate(b200, no_sfu_limit)
    d64 = _evaluate(b200, *_head_dim_64())
    d64_free = _evaluate(b200, *_head_dim_64(no_sfu_limit))
    # head dim 128 on B200: tensor cores and SFUs are balanced, nothing changes
    assert d128["step_time_s"] == pytest.approx(d128_free["step_time_s"], rel=1e-9)
    # head dim 64: half the MMA work per exponential, so the blocks take about twice as long (not the
    # tiles' fixed loads and stores nor the launches)
    assert d64["step_time_s"] > 1.10 * d64_free["step_time_s"]


def test_fp8_attention_pays_less_on_gb200_than_on_b300(tmp_path):
    fp8_attention = "parallelism.fp8_dot_product_attention=true"
    gains = {}
    for gpu, per_node in (("GB200", 4), ("B300", 8)):
        cluster = _cluster(tmp_path, gpu, per_node)
        gains[gpu] = 1 - _evaluate(cluster, fp8_attention)["step_time_s"] / _evaluate(cluster)["step_time_s"]
    # cuDNN's FP8 attention gains more on Blackwell Ultra (its doubled SFUs): GB300 forward 1.57 x,
    # backward 1.32 x over BF16 against GB200's 1.31 x and 1.20 x (cudnn-frontend results/llama3.1)
    assert 0 < gains["GB200"] < gains["B300"] - 0.03


def test_a_calibration_can_set_the_exponential_rate_and_a_bad_value_is_refused(tmp_path):
    b200 = _cluster(tmp_path, "B200")
    code, _, err = run_cli("evaluate", b200, "--set", "workload.preset=llama3-8b",
                           "--set", "calibration.accelerators.B200.attention_flops_per_exponential=-1")
    assert code == 65 and "attention_flops_per_exponential" in err and "minimum 0" in err


def _tp_layer(tp, tp_comm_overlap=True):
    m = ModelShape.of(Workload(num_layers=1, hidden_size=8192, ffn_hidden_size=28672, num_attention_heads=64,
                               num_query_groups=8, seq_length=8192, vocab_size=128256, swiglu=True,
                               global_batch_size=8, micro_batch_size=1))
    sh = Sharding(tp=tp, cp=1, ep=1, etp=1, sequence_parallel=True, recompute="none",
                  tp_comm_overlap=tp_comm_overlap)
    ac = AcceleratorConstants(gemm_efficiency_best=0.8, comm_compute_slowdown=0.0)
    # slow GEMMs (plenty of window) and one second per TP collective: what is left exposed is the
    # part no GEMM can hide
    ops = OpCoster(0.1, 0.1, 1.0, ac)
    return layer_cost(m, sh, 1, False, ops, lambda dim, prim, nbytes: 1.0, EngineConstants())


def test_tp8_userbuffers_expose_one_ring_step_of_the_gathers_and_a_quarter_of_the_scatters():
    layer = _tp_layer(8)
    # forward, attention and MLP blocks: an all-gather ring step (1/8) and a reduce-scatter split (1/4) each
    assert layer.fwd.busy["tp_comm"] == pytest.approx(2 * (1 / 8 + 1 / 4))
    # backward: only the ring-exchanged gathers of the output-projection and FC2 dgrads
    assert layer.bwd.busy["tp_comm"] == pytest.approx(2 * (1 / 8))
    # tp 4: the gather's ring step is a quarter too, the same as the forward's old fixed quarter
    assert _tp_layer(4).fwd.busy["tp_comm"] == pytest.approx(2 * (1 / 4 + 1 / 4))


def test_without_tp_comm_overlap_the_forward_collectives_stay_blocking():
    assert _tp_layer(8, tp_comm_overlap=False).fwd.busy["tp_comm"] == pytest.approx(4.0)
