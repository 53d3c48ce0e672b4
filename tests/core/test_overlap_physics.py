"""The overlap rules of the 2024-26 recipes: bucketed gradient reduction under the last backward,
and the EP all-to-all hidden behind another micro-batch (overlap_moe_expert_parallel_comm)."""
import json

import pytest

from designer.core.engine.stages.dp import bucketed_reduction_end
from tests.conftest import EXAMPLES, run_cli


def test_a_reduction_shorter_than_the_backward_leaves_only_its_last_bucket_exposed():
    # 100 buckets, 1 s of backward ending at t=10, 0.5 s of reduction: only the last bucket's share is left
    assert bucketed_reduction_end(10.0, 1.0, 0.5, 100, 0.0) == pytest.approx(10.005)


def test_a_reduction_longer_than_the_backward_runs_past_it_by_the_difference():
    # first bucket ready 0.99 s before the end; 3 s of reduction from then
    assert bucketed_reduction_end(10.0, 1.0, 3.0, 100, 0.0) == pytest.approx(9.01 + 3.0)


def test_the_communication_stream_being_busy_delays_the_reduction():
    assert bucketed_reduction_end(10.0, 1.0, 0.5, 100, 9.8) == pytest.approx(10.3)


def test_one_bucket_waits_for_the_whole_backward():
    assert bucketed_reduction_end(10.0, 1.0, 0.5, 1, 0.0) == pytest.approx(10.5)


def _moe(*sets):
    args = ["evaluate", EXAMPLES / "h100-64gpu-infiniband.yaml", "--json", "--set", "workload.preset=qwen3-30b-a3b",
            "--set", "parallelism.tensor_model_parallel_size=1", "--set", "parallelism.pipeline_model_parallel_size=1",
            "--set", "parallelism.expert_model_parallel_size=8", "--set", "workload.global_batch_size=512"]
    for kv in sets:
        args += ["--set", kv]
    code, out, err = run_cli(*args)
    assert code == 0, err
    return json.loads(out)


def test_overlapping_the_expert_all_to_all_hides_most_of_it():
    plain = _moe()
    overlapped = _moe("parallelism.overlap_moe_expert_parallel_comm=true")
    assert plain["breakdown_s"]["ep_comm"] > 0
    assert overlapped["breakdown_s"]["ep_comm"] < 0.5 * plain["breakdown_s"]["ep_comm"]
    assert overlapped["step_time_s"] < plain["step_time_s"]
    # the hidden traffic still slows the compute it runs under
    assert overlapped["breakdown_s"]["compute"] > plain["breakdown_s"]["compute"]
    assert not any("overlap_moe_expert_parallel_comm" in w for w in overlapped["warnings"])


def test_the_paired_all_to_all_hides_whole_only_the_unpaired_micro_batches_wait():
    # Megatron's combined 1F1B runs each dispatch/combine on the communication stream under a compute
    # node of the other micro-batch: nothing of it precedes its window. With 8 micro-batches and no
    # pipeline, the first forward and the last backward have no partner: 1/8 of the traffic waits.
    from designer.core.engine.moe import ep_overlap_share
    plain = _moe()
    overlapped = _moe("parallelism.overlap_moe_expert_parallel_comm=true")
    n = plain["plan"]["num_microbatches"]
    assert n == 8
    unpaired = 1.0 - ep_overlap_share(n, 1, 1)
    assert overlapped["breakdown_s"]["ep_comm"] == pytest.approx(unpaired * plain["breakdown_s"]["ep_comm"], rel=1e-6)


def test_the_backwards_own_traffic_slows_the_reduction_only_while_the_backward_runs():
    # half the links for 1 s of backward, then all of them: 0.5 s done under it, 1.5 s after
    assert bucketed_reduction_end(10.0, 1.0, 2.0, 100, 0.0, rate_during_backward=0.5) == pytest.approx(
        10.0 + 2.0 - 0.99 * 0.5)
    # a short reduction stays under the backward, stretched
    assert bucketed_reduction_end(10.0, 1.0, 0.2, 100, 0.0, rate_during_backward=0.5) == pytest.approx(10.002)
    # never later than running it all after the backward
    for rate in (0.1, 0.5, 0.9):
        assert bucketed_reduction_end(10.0, 1.0, 3.0, 10, 0.0, rate_during_backward=rate) <= 13.0


def test_each_all_to_all_hides_only_under_its_paired_node():
    """schedule_layer_1f1b: the forward's dispatch under the backward's MLP, its combine under the
    backward's attention; the combine's backward under the forward's attention, the dispatch's
    backward under the forward's MLP. A combine longer than the attention it is paired with shows
    the difference, even when the whole other phase could have covered it."""
    from designer.core.engine.constants import engine_constants
    from designer.core.engine.layer_traffic import LayerTraffic, overlap_layer_comm
    from designer.core.engine.phase import GemmTimes, Phase, Sharding

    k = engine_constants(None)
    sh = Sharding(tp=1, cp=1, ep=8, etp=1, sequence_parallel=False, recompute="none", tp_comm_overlap=False,
                  ep_comm_overlap=True)
    # forward: dispatch 1 ms + combine 3 ms; backward: combine's backward 2 ms + dispatch's 1 ms
    tr = LayerTraffic(0.0, 0.0, None, None, 4e-3, 3e-3, 0.0, 0.0, 0.0, 0.0, ep_combine_f=3e-3, ep_combine_b=2e-3)
    gt = GemmTimes(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    fwd, bwd = Phase(), Phase()
    # forward 10 ms of which the attention block 1 ms; backward 20 ms of which the attention block 2 ms
    overlap_layer_comm(fwd, bwd, tr, sh, gt, 0.5e-3, 1e-3, 10e-3, 20e-3, 132, k, attn_block=(1e-3, 2e-3))
    assert fwd.busy["ep_comm"] == pytest.approx(3e-3 - 2e-3)  # combine 3 ms under 2 ms of attention
    assert bwd.busy["ep_comm"] == pytest.approx(2e-3 - 1e-3)  # combine's backward 2 ms under 1 ms
    assert fwd.hidden["ep_comm"] == pytest.approx(1e-3 + 2e-3)
    assert bwd.hidden["ep_comm"] == pytest.approx(1e-3 + 1e-3)
