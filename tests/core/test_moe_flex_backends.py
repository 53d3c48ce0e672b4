"""The flex dispatcher's two backends as they run (engine/moe.py FlexPath): DeepEP sends across
servers of at most 8 GPUs by RDMA, even inside a GB200 NVL72 rack, and copies with 20 SMs; HybridEP
dedups over whole NVLink domains with TMA copies on 16 SMs. Both send a token once per destination
GPU, where Megatron's alltoall sends it once per expert."""
from __future__ import annotations

import json
import math

import pytest

from designer.core.engine.constants import engine_constants
from designer.core.engine.moe import FlexPath, domains_reached, flex_pass_s, ranks_reached
from designer.core.model.catalog import load_catalog
from tests.conftest import run_cli

K = engine_constants(None)
DSV3 = ("--set", "workload.preset=deepseek-v3", "--set", "workload.global_batch_size=1024",
        "--set", "workload.micro_batch_size=1", "--set", "parallelism.pipeline_model_parallel_size=4",
        "--set", "parallelism.virtual_pipeline_model_parallel_size=4",
        "--set", "parallelism.pipeline_schedule=interleaved",
        "--set", "parallelism.pipeline_model_parallel_layout=Et*4|(t*4|)*14tmL",
        "--set", "parallelism.expert_model_parallel_size=64", "--set", "parallelism.tensor_model_parallel_size=1",
        "--set", "parallelism.moe_token_dispatcher_type=flex", "--set", "parallelism.moe_router_force_load_balancing=true",
        "--set", "parallelism.moe_grouped_gemm=true", "--set", "parallelism.recompute_granularity=selective",
        "--set", "parallelism.recompute_modules=[mla_up_proj]", "--set", "parallelism.use_distributed_optimizer=true")


@pytest.fixture(scope="module")
def clusters(tmp_path_factory):
    """256 GPUs each: 32 H100 servers, and GB200 in NVLink domains of 64 (4-GPU trays, 4 x 400G each)."""
    tmp = tmp_path_factory.mktemp("flex")
    h100, gb200 = tmp / "h100.yaml", tmp / "gb200.yaml"
    code, _, err = run_cli("generate", "fat-tree", "-o", h100, "--nodes", "32", "--gpu", "H100")
    assert code == 0, err
    code, _, err = run_cli("generate", "fat-tree", "-o", gb200, "--gpu", "GB200", "--gpus-per-node", "4",
                           "--nics-per-node", "4", "--nic-gbps", "400", "--fabric", "infiniband",
                           "--switch-radix", "64", "--nodes", "64", "--nvlink-domain-gpus", "64")
    assert code == 0, err
    return {"h100": h100, "gb200": gb200}


def _evaluate(path, backend: str, *extra: str) -> dict:
    code, out, err = run_cli("evaluate", path, "--json", *DSV3,
                             "--set", f"parallelism.moe_flex_dispatcher_backend={backend}", *extra)
    assert code == 0, err
    return json.loads(out)


def _ep(data: dict) -> float:
    return data["breakdown_s"]["ep_comm"] + data["hidden_comm_s"]["ep_comm"]


def test_a_token_goes_once_to_each_destination_gpu():
    # DeepSeek-V3: top-8 of 256 experts on 8 GPUs (32 each): 8 (1 - C(224, 8) / C(256, 8)) GPUs
    exact = 8 * (1 - math.comb(224, 8) / math.comb(256, 8))
    assert ranks_reached(8, 256, 8) == pytest.approx(exact)
    assert ranks_reached(8, 256, 8) == pytest.approx(5.29, abs=0.01)  # of top-8
    assert ranks_reached(1, 256, 8) == pytest.approx(1.0)
    assert ranks_reached(8, 256, 256) == pytest.approx(8.0)  # one expert per GPU: no two share one
    sent = []

    def a2a(nbytes: float) -> float:
        sent.append(nbytes)
        return 0.0

    # inside one NVLink domain the rank sends ranks_reached copies, not top-k
    flex_pass_s(FlexPath("hybridep", 1.0, 8.0), K, 8, 256, 8, (0, 0), 1e6, a2a, combine=False)
    assert sent[-1] == pytest.approx(1e6 * exact)
    # across 8 servers: once per domain reached (at most 4 with node-limited routing, 8 groups)
    flex_pass_s(FlexPath("deepep", 8.0, 8.0), K, 64, 256, 8, (8, 4), 1e6, a2a, combine=False)
    assert sent[-1] == pytest.approx(1e6 * domains_reached(8, 8, 8, 4))
    assert domains_reached(8, 8, 8, 4) <= 4


def test_deepep_crosses_an_nvl72_rack_over_the_nics():
    """DeepEP reaches 8 GPUs of one server by NVLink; between the 4-GPU trays of a GB200 rack it sends
    by RDMA at the NIC rate, where HybridEP stays on NVLink."""
    nic, nvlink = 50e9, 900e9
    deepep = FlexPath("deepep", 16.0, 4.0, True, nvlink, nic)
    hybridep = FlexPath("hybridep", 1.0, 64.0, False, nvlink, nic)
    copy = 4096 * 7168 * 2.0

    def nvlink_a2a(nbytes: float) -> float:
        return nbytes * 63 / 64 / nvlink

    t_deep = flex_pass_s(deepep, K, 64, 256, 8, (0, 0), copy, nvlink_a2a, combine=False)
    t_hybrid = flex_pass_s(hybridep, K, 64, 256, 8, (0, 0), copy, nvlink_a2a, combine=False)
    rdma = copy * domains_reached(8, 16) * 15 / 16 / nic
    assert t_deep == pytest.approx(rdma)
    assert t_deep > 5 * t_hybrid


def test_the_backends_copy_no_faster_than_their_sms():
    """DeepEP's SM copies: 20 SMs x 20.5 GB/s; HybridEP's TMA: 16 SMs x 33.5 GB/s (Hybrid-EP.md, B200)."""
    assert FlexPath("deepep").sm_rate_Bps(K, combine=False) == pytest.approx(20 * 20.5e9)
    assert FlexPath("hybridep").sm_rate_Bps(K, combine=False) == pytest.approx(16 * 33.5e9)
    copy = 1e9
    t = flex_pass_s(FlexPath("deepep", 1.0, 8.0), K, 8, 256, 8, (0, 0), copy, lambda b: 0.0, combine=True)
    assert t == pytest.approx(copy * ranks_reached(8, 256, 8) / (20 * 17.5e9))


def test_nvl72_deepep_is_slower_than_hybridep(clusters):
    deepep, hybridep = _evaluate(clusters["gb200"], "deepep"), _evaluate(clusters["gb200"], "hybridep")
    assert _ep(deepep) > 3 * _ep(hybridep)  # RDMA at 50 GB/s per GPU against NVLink at 900
    assert deepep["step_time_s"] > hybridep["step_time_s"]


def test_h100_servers_differ_by_the_sms_deepep_takes(clusters):
    """On 32 H100 servers both backends cross between servers once per server reached; with the EP
    overlap on, the 20 SMs DeepEP holds slow the compute under it more than HybridEP's 16."""
    overlap = ("--set", "parallelism.overlap_moe_expert_parallel_comm=true")
    deepep, hybridep = _evaluate(clusters["h100"], "deepep", *overlap), _evaluate(clusters["h100"], "hybridep", *overlap)
    assert _ep(deepep) == pytest.approx(_ep(hybridep), rel=0.05)
    assert deepep["breakdown_s"]["compute"] > hybridep["breakdown_s"]["compute"]
    # SMs that copy so fast that the link is the limit on any count of them: only the share taken varies
    fast = ("--set", "calibration.deepep_dispatch_GBps_per_sm=1000", "--set", "calibration.deepep_combine_GBps_per_sm=1000")
    deepep = _evaluate(clusters["h100"], "deepep", *overlap, *fast)
    one_sm = _evaluate(clusters["h100"], "deepep", *overlap, *fast, "--set", "calibration.deepep_num_sms=1")
    eleven = _evaluate(clusters["h100"], "deepep", *overlap, *fast, "--set", "calibration.deepep_num_sms=11")
    assert deepep["hidden_comm_s"]["ep_comm"] > 0
    assert one_sm["hidden_comm_s"]["ep_comm"] == pytest.approx(deepep["hidden_comm_s"]["ep_comm"], rel=1e-9)
    # the compute under the overlapped all-to-all loses sms / 132 of the SMs: linear in the SMs taken
    lost_19 = deepep["breakdown_s"]["compute"] - one_sm["breakdown_s"]["compute"]
    lost_10 = eleven["breakdown_s"]["compute"] - one_sm["breakdown_s"]["compute"]
    assert lost_19 > 0
    assert lost_19 / lost_10 == pytest.approx(19 / 10, rel=0.02)


def test_node_limited_routing_over_more_servers_than_groups():
    """DeepSeek-V3's 8 expert groups over 32 servers (EP 256): a group spans 4 servers, a token's 4
    groups 16 of them, so its 8 experts reach 16 (1 - (15/16)^8) = 6.1 servers, not free routing's 7.2."""
    assert domains_reached(8, 32, 8, 4) == pytest.approx(16 * (1 - (15 / 16) ** 8))
    assert domains_reached(8, 32, 8, 4) < domains_reached(8, 32) == pytest.approx(32 * (1 - (31 / 32) ** 8))
    assert domains_reached(8, 8, 8, 4) <= 4  # one group per server: at most 4 servers


def test_the_jobs_sm_count_replaces_the_backends(clusters):
    """parallelism.moe_flex_dispatcher_num_sms (Megatron --moe-flex-dispatcher-num-sms) sets the SMs the
    kernels hold: more of them copy faster but take more from the compute they overlap."""
    overlap = ("--set", "parallelism.overlap_moe_expert_parallel_comm=true")
    default = _evaluate(clusters["h100"], "deepep", *overlap)
    same = _evaluate(clusters["h100"], "deepep", *overlap, "--set", "parallelism.moe_flex_dispatcher_num_sms=20")
    more = _evaluate(clusters["h100"], "deepep", *overlap, "--set", "parallelism.moe_flex_dispatcher_num_sms=40")
    assert same["step_time_s"] == pytest.approx(default["step_time_s"], rel=1e-12)
    assert more["breakdown_s"]["compute"] > default["breakdown_s"]["compute"]


def test_a_launch_line_brings_its_dispatcher_sms(tmp_path):
    design, script = tmp_path / "c.yaml", tmp_path / "train.sh"
    code, _, err = run_cli("generate", "fat-tree", "-o", design, "--nodes", "1", "--gpu", "H100")
    assert code == 0, err
    script.write_text("torchrun pretrain_gpt.py --num-layers 4 --hidden-size 1024 --num-attention-heads 8 "
                      "--seq-length 2048 --micro-batch-size 1 --global-batch-size 64 --num-experts 8 "
                      "--moe-router-topk 2 --expert-model-parallel-size 8 --moe-token-dispatcher-type flex "
                      "--moe-flex-dispatcher-backend hybridep --moe-flex-dispatcher-num-sms 24 --bf16 "
                      "--vocab-size 32000\n")
    code, _, err = run_cli("import", "megatron", script, "--into", design)
    assert code == 0, err
    from designer.core.io import load_document
    p = load_document(design).spec.parallelism
    assert (p.moe_flex_dispatcher_backend, p.moe_flex_dispatcher_num_sms) == ("hybridep", 24)


def test_hybridep_slows_as_its_nvlink_domain_ranks_grow():
    """HybridEP's own GB200 table (docs/README_Hybrid-EP.md, 16 SMs): combine 538/474/444/423/418 GB/s
    on 8/16/24/32/36 ranks, dispatch 550/473/442/486/470. The rate per SM is the 8-rank one; above 8
    ranks it falls by the fitted falloff per doubling, within 0.5 % (combine) and 8 % (dispatch)."""
    hybridep = FlexPath("hybridep")
    combine = [538.44, 474.48, 444.40, 423.19, 418.27]
    dispatch = [550.10, 472.84, 441.89, 485.50, 469.96]
    for ranks, c, d in zip((8, 16, 24, 32, 36), combine, dispatch):
        ratio_c = hybridep.sm_rate_Bps(K, True, ranks) / hybridep.sm_rate_Bps(K, True, 8)
        ratio_d = hybridep.sm_rate_Bps(K, False, ranks) / hybridep.sm_rate_Bps(K, False, 8)
        assert ratio_c == pytest.approx(c / combine[0], rel=0.005)
        assert ratio_d == pytest.approx(d / dispatch[0], rel=0.08)
    # 8 ranks or fewer: the measured rate itself; DeepEP is not touched
    assert hybridep.sm_rate_Bps(K, True, 4) == hybridep.sm_rate_Bps(K, True, 8) == pytest.approx(16 * 33.2e9)
    assert FlexPath("deepep").sm_rate_Bps(K, True, 64) == pytest.approx(20 * 17.5e9)
    # a pass inside one 64-GPU domain takes the 64-rank rate; across domains, the ranks of one domain
    copy = 1e9
    inside = flex_pass_s(FlexPath("hybridep", 1.0, 64.0), K, 64, 256, 8, (0, 0), copy, lambda b: 0.0, combine=True)
    assert inside == pytest.approx(copy * ranks_reached(8, 256, 64) / hybridep.sm_rate_Bps(K, True, 64))
    assert FlexPath("hybridep", 4.0, 16.0).domain_ranks(64) == 16.0


def test_hybridep_gains_little_from_more_than_16_sms():
    """HybridEP's TMA copies are near their most on 16 SMs: its GB200 table (docs/README_Hybrid-EP.md,
    8 ranks) gives dispatch 550.10 / 545.71 GB/s and combine 538.44 / 568.94 on 16 / 32 SMs, not
    twice as much; Megatron-Bridge's performance scripts run it on 32. DeepEP's SM copies still scale."""
    sixteen, thirty_two = FlexPath("hybridep", num_sms=16), FlexPath("hybridep", num_sms=32)
    assert thirty_two.sm_rate_Bps(K, combine=False) == pytest.approx(545.71e9, rel=0.001)
    assert thirty_two.sm_rate_Bps(K, combine=True) == pytest.approx(568.94e9, rel=0.001)
    for combine, measured in ((False, 545.71 / 550.10), (True, 568.94 / 538.44)):
        gain = thirty_two.sm_rate_Bps(K, combine) / sixteen.sm_rate_Bps(K, combine)
        assert gain == pytest.approx(measured, rel=0.05)
    # with the rank falloff, the table's 32-SM rows on 16-36 ranks: dispatch within 7 %, combine 4 %
    for ranks, d, c in ((16, 523.48, 521.55), (24, 507.32, 483.76), (32, 484.22, 464.54), (36, 479.02, 447.89)):
        assert thirty_two.sm_rate_Bps(K, False, ranks) == pytest.approx(d * 1e9, rel=0.07)
        assert thirty_two.sm_rate_Bps(K, True, ranks) == pytest.approx(c * 1e9, rel=0.04)
    assert FlexPath("deepep", num_sms=40).sm_rate_Bps(K, combine=False) == pytest.approx(40 * 20.5e9)


def test_hybridep_ceiling_is_the_files_to_change(clusters):
    """On 32 SMs the all-to-all takes the ceiling's time; a file's calibration can raise the ceiling."""
    sms = ("--set", "parallelism.moe_flex_dispatcher_num_sms=32")
    capped = _evaluate(clusters["gb200"], "hybridep", *sms)
    raised = _evaluate(clusters["gb200"], "hybridep", *sms, "--set", "calibration.hybridep_dispatch_max_GBps=5000",
                       "--set", "calibration.hybridep_combine_max_GBps=5000")
    assert _ep(capped) > 1.15 * _ep(raised)


def test_hybridep_rank_falloff_is_the_files_to_change(clusters):
    """On a GB200 rack with EP 64 the all-to-all takes longer than at the 8-rank rate; a file's
    calibration of 0 restores the 8-rank rate."""
    falloff = _evaluate(clusters["gb200"], "hybridep")
    flat = _evaluate(clusters["gb200"], "hybridep", "--set", "calibration.hybridep_combine_rank_falloff=0",
                     "--set", "calibration.hybridep_dispatch_rank_falloff=0")
    assert _ep(falloff) > 1.2 * _ep(flat)
    assert falloff["step_time_s"] > flat["step_time_s"]


def test_deepep_takes_its_sms_from_the_parts_own_count(clusters):
    """The compute under DeepEP's overlapped all-to-all loses 20 of the part's SMs: GB200 has 152 (its
    catalog entry), not the H100's 132, so it loses 19/152 more per second of hidden all-to-all than with
    one SM, and a file's calibration can still give the part another count."""
    catalog = load_catalog()
    assert {p: catalog.accelerator(p).calibration["num_sms"] for p in
            ("A100", "H100", "H200", "B200", "GB200", "B300", "GB300", "MI300X", "MI355X")} == {
        "A100": 108, "H100": 132, "H200": 132, "B200": 148, "GB200": 152, "B300": 148, "GB300": 152,
        "MI300X": 304, "MI355X": 256}
    overlap = ("--set", "parallelism.overlap_moe_expert_parallel_comm=true",
               "--set", "calibration.deepep_dispatch_GBps_per_sm=1000",
               "--set", "calibration.deepep_combine_GBps_per_sm=1000")

    def lost_per_hidden_second(*extra: str) -> float:
        twenty = _evaluate(clusters["gb200"], "deepep", *overlap, *extra)
        one = _evaluate(clusters["gb200"], "deepep", *overlap, *extra, "--set", "calibration.deepep_num_sms=1")
        assert twenty["hidden_comm_s"]["ep_comm"] == pytest.approx(one["hidden_comm_s"]["ep_comm"], rel=1e-9)
        return (twenty["breakdown_s"]["compute"] - one["breakdown_s"]["compute"]) / twenty["hidden_comm_s"]["ep_comm"]

    own = lost_per_hidden_second()
    as_hopper = lost_per_hidden_second("--set", "calibration.accelerators.GB200.num_sms=132")
    assert own == pytest.approx(19 / 152, rel=0.05)  # (the compute's kernel gaps add 3 %)
    assert own / as_hopper == pytest.approx(132 / 152, rel=1e-6)
