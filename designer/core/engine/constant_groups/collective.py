"""The collectives' constants: NCCL's latency tables and tuning model (src/graph/tuning.cc) of the
release nccl_version names, its protocol and algorithm factors, and the network's per-step costs.
"""
from dataclasses import dataclass

from ..nccl_tuning import CURRENT_NCCL, latency_constants
from . import FRACTION, Frozen, constant as _c, table as _table  # the declarations' short name


@dataclass(eq=False, repr=False, init=False)
class CollectiveConstants(Frozen):
    """NCCL's latencies and its estimates of the algorithms' and protocols' bandwidth."""
    # ---- collective latency (NCCL src/graph/tuning.cc, the tables of the release nccl_version names) ----
    nccl_base_latency_us: dict = _table(lambda: latency_constants(CURRENT_NCCL)["nccl_base_latency_us"],
        "NCCL baseLat per algorithm and protocol, us: tuning.cc of the release named by nccl_version "
        "(engine/nccl_tuning.py: tree Simple 0 before 2.23, 8.4 from it); PAT's 8 us base time as RCCL's port "
        "of it writes it. A calibration entry overrides single values of the release's table",
        unit="us", minimum=0, maximum=100_000)
    nccl_nvlink_step_latency_us: dict = _table(lambda: latency_constants(CURRENT_NCCL)["nccl_nvlink_step_latency_us"],
        "NCCL hwLat[NVLINK] per step, us: tuning.cc of the release named by nccl_version (engine/nccl_tuning.py: "
        "tree Simple 28 in 2.19-2.22, 4 otherwise; ring LL128 1.25, fitted on the DGX H100 all_reduce curve "
        "(NCCL: 1.9); NVLS 23 before 2.21, 25 from it, to which nvls_rank_latency_us adds a cost per rank of "
        "the NVLink domain)", unit="us", minimum=0,
        maximum=100_000)
    nvls_rank_latency_us: float = _c(
        6.875, "NVLS's fixed cost per call grows with the ranks it joins in one NVLink domain, us per rank (the "
        "steps' synchronisation across every peer): 8 H100 carry 80 us of fixed cost besides moving (1 + 1/g) S "
        "at nvls_efficiency (DGX H100 all_reduce curve, 16 MB-16 GB), NCCL's 25 us plus 8 x 6.875. A full GB200 "
        "NVL72 rack (72 ranks) then carries 25 + 495 us, where its nccl-tests curve's intercept is 574 us "
        "(coreweave/nccl-tests README, 'Expected Performance', single rack, NCCL 2.26.2: 1806.7 us at 512 MiB "
        "to 20299 us at 8 GiB)", unit="us", minimum=0, maximum=10_000)
    nccl_net_step_latency_us: dict = _table(lambda: latency_constants(CURRENT_NCCL)["nccl_net_step_latency_us"],
        "NCCL hwLat[NET] per step, us: tuning.cc of the release named by nccl_version (engine/nccl_tuning.py: "
        "tree Simple 28 in 2.19-2.22, 14 otherwise; PAT takes the ring's Simple figure); the switch hops are "
        "added on top", unit="us", minimum=0, maximum=100_000)
    nccl_version: float = _c(
        CURRENT_NCCL, "The NCCL release whose algorithms the engine offers, as major.minor (2.27 = 2.27.x, the current one "
        "when written): NVLS from 2.17, NVLS_TREE from 2.18, PAT (all-gather and reduce-scatter with one GPU per "
        "server) from 2.23 (NCCL release notes)", unit="version", minimum=2.0, maximum=99.0)
    nccl_pat_rank_latency_us: float = _c(
        2.8, "PAT's latency per rank, us: tuning.cc (2.23+) gives PAT log2(nNodes) x interLat / 3.5 + nRanks x 2.8 "
        "('still a linear part')", unit="us", minimum=0, maximum=10_000)
    nccl_pat_bandwidth_factor: float = _c(
        0.75, "PAT bus bandwidth / ring's (tuning.cc: busBw x 0.75 for PAT)", **FRACTION)
    nccl_ll_max_bytes: int = _c(
        0, "Above this size LL is never chosen (old NCCL's NCCL_LL_THRESHOLD); 0: NCCL's tuning model alone "
        "decides, as NCCL 2.5 and later do", unit="bytes", minimum=0, maximum=1 << 40)
    nccl_ll_bus_factor: float = _c(
        0.5, "NCCL's estimate of the ring LL protocol's bus bandwidth / Simple's (tuning.cc, 2.21 and later: "
        "busBw x 0.5, LL's 8-byte lines carry 4 bytes of data and a 4-byte flag); nccl_version below 2.21 takes "
        "nccl_ll_bus_factor_legacy", **FRACTION)
    nccl_ll_bus_factor_legacy: float = _c(
        0.25, "The same before NCCL 2.21 (tuning.cc 2.4-2.20: busBw x 1/4 for all-reduce or across servers, "
        "x 1/3 for an all-gather or reduce-scatter inside one server)", **FRACTION)
    nccl_tree_ll_bus_factor: float = _c(
        1 / 3.8, "NCCL's estimate of the tree LL protocol's bus bandwidth / the tree's Simple (tuning.cc: "
        "busBw x 1/3.8)", **FRACTION)
    nccl_ll_max_bus_gbps_two_servers: float = _c(
        39.0, "NCCL's cap on the LL protocol's estimated bus bandwidth across 2 servers, GB/s (tuning.cc llMaxBws, "
        "the Intel-CPU row, N2); inside one server the accelerator's nccl_ll_max_bus_gbps", unit="GB/s",
        minimum=0.1, maximum=100_000)
    nccl_ll_max_bus_gbps_more_servers: float = _c(
        20.4, "The same across 3 or more servers (tuning.cc llMaxBws, Intel-CPU row, N4)", unit="GB/s",
        minimum=0.1, maximum=100_000)
    nccl_ring_plateau_factor: float = _c(
        1.4, "Multi-node ring Simple latency multiplier for large messages (tuning.cc, Hopper)",
        unit="x", minimum=1, maximum=10)
    nccl_tree_bandwidth_factor: float = _c(0.92, "Tree bandwidth / ring bandwidth (tuning.cc: busBw x 0.92): NCCL's "
        "estimate when it chooses; a tree between servers is costed on its links' own rates",
        **FRACTION)
    net_overhead_us: float = _c(
        1.0, "Per-step host/proxy overhead of a network hop, us (tuning.cc netOverhead, Intel CPUs)",
        unit="us", minimum=0, maximum=10_000)
    cable_latency_us: float = _c(0.01, "Propagation over ~2 m of cable, us (5 ns/m)",
        unit="us", minimum=0, maximum=10_000)
