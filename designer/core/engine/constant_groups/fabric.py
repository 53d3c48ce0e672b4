"""The fabric's constants: the achievable share of each link's line rate inside a server (NVLink,
NVLS, PCIe) and between servers (NICs, adaptive routing, packet spraying, ECMP).
"""
from dataclasses import dataclass

from . import FRACTION, Frozen, constant as _c  # the declarations' short name


@dataclass(eq=False, repr=False, init=False)
class FabricConstants(Frozen):
    """Achievable rates of the scale-up links and of the network (NICs and up-links)."""
    # ---- scale-up (inside a server) ----
    nvlink_efficiency: float = _c(
        0.82, "NCCL ring busbw / NVLink line rate: ~370 of 450 GB/s on H100 (nccl-tests#212, nccl#1455)", **FRACTION)
    nvlink_ll_efficiency: float = _c(
        0.30, "NCCL LL protocol busbw / line rate on NVLink (8-byte stores with flags); fitted to the "
        "DGX H100 all_reduce curve (NCCL-DGXH100-ALLREDUCE-8, 128 KB-1 MB)", **FRACTION)
    nvlink_ll128_efficiency: float = _c(
        0.70, "NCCL LL128 protocol busbw / line rate on NVLink; fitted to the same curve (4-16 MB)", **FRACTION)
    nvls_efficiency: float = _c(
        0.6875, "NVLS all-reduce on an NVLink 4 board (H100/H200, third-generation NVSwitch): the rate each "
        "GPU moves its (1 + 1/g) x S bytes at (multimem.ld_reduce of its 1/g shard reads S from it; the "
        "multimem.st of the result writes S/g), over the one-way line rate. 8 H100: algbw 275 GB/s "
        "(nccl-tests#212, nccl#2140) x 9/8 / 450 = 0.6875; 4 H100: busbw 370 (nccl#1455), algbw 247 x 5/4 / 450 "
        "= 0.685. An accelerator's nvls_link_efficiency replaces it", **FRACTION)
    nvls_tree_efficiency: float = _c(
        0.94, "NVLS_TREE (NVLS inside each server, a tree of NICs between them): its NVLS stage's rate / NVLS's "
        "inside one server, when the network is not the limit. 2 x 8 H100: busbw 470 against 480 on one "
        "(nccl-tests#309), algbw 250.7 / 274.3 = 0.914; 2 x 8 H200: 488.8 at 9.7 GB (nccl-tests#256) against "
        "475 on one (nccl-tests#272), 260.7 / 271.4 = 0.96; their mean", **FRACTION)
    pcie_efficiency: float = _c(0.80, "PCIe achievable / line rate (TLP and DLLP overhead; SimAI H100_PCIE_BW 64 x 0.8)",
        **FRACTION)
    host_bounce_efficiency: float = _c(
        0.50, "Without GPUDirect RDMA, NIC traffic is staged through host memory: two PCIe crossings "
        "through the CPU root complex halve the usable rate", **FRACTION)
    # ---- scale-out NICs and fabric ----
    infiniband_nic_efficiency: float = _c(
        0.96, "InfiniBand NIC achievable / line rate: NDR 400G reaches 46-49 GB/s (nccl-tests #212, #267)", **FRACTION)
    ethernet_nic_efficiency: float = _c(
        0.92, "RoCE NIC achievable / line rate (RoCEv2 headers, PFC/ECN pauses); Baidu/Meta report 90-95%", **FRACTION)
    infiniband_adaptive_routing_efficiency: float = _c(
        0.97, "InfiniBand adaptive routing spreads flows over equal-cost up-links almost ideally", **FRACTION)
    packet_spraying_efficiency: float = _c(
        0.95, "Usable share of Ethernet up-link capacity when the NICs spread each flow's packets over every path "
        "(Spectrum-X adaptive routing with reordering in the SuperNIC, EFA's SRD, Pollara's multipathing) instead "
        "of hashing it onto one: NVIDIA Spectrum-X: 95 % effective bandwidth at scale against about 60 % for "
        "hashed RoCE (NVIDIA Spectrum-X networking platform overview)", **FRACTION)
    srd_nic_efficiency: float = _c(
        0.955, "AWS EFA (SRD) achievable / line rate for NCCL's large messages: 4 x p6-b200, 8 x 400G EFA v4 per "
        "server, ring all-reduce busbw 381.8 GB/s at 16 GiB of the 400 GB/s of a server's NICs (stas00/ml-engineering "
        "network README; tests/validation/data, MLENG-B200-EFA-AR-32): no PFC pauses, SRD retransmits per packet",
        **FRACTION)
    srd_message_latency_us: float = _c(
        80.0, "Latency EFA's SRD (libfabric and the aws-ofi-nccl plugin's proxy, a completion per message) adds per "
        "network step beyond NCCL's InfiniBand hwLat[NET], us. Fitted to the one public EFA curve (4 x p6-b200, "
        "32 ranks, 32 KiB-16 GiB, MLENG-B200-EFA-AR-32: its 256 KiB-8 MiB floor of 360-460 us against 60-100 us "
        "on InfiniBand); 2-server small all-reduces then take about 190 us", unit="us", minimum=0, maximum=10_000)
    ecmp_qps_per_connection: int = _c(
        4, "Queue pairs (flows) per NCCL connection on RoCE (NCCL_IB_QPS_PER_CONNECTION); more flows, "
        "fewer ECMP hash collisions", unit="queue pairs", minimum=1, maximum=1024)
