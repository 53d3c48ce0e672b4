"""Every constant of the cost engine: named, with units and source, overridable per file.

A cluster file's `calibration` mapping overrides them:

    calibration:
      nvlink_efficiency: 0.78            # any field of EngineConstants
      infiniband_nic_efficiency: 0.95
      accelerators:
        H100-SXM5-80GB: {gemm_efficiency_best: 0.78}   # any field of AcceleratorConstants

Defaults for an accelerator kind come from its catalog entry (`calibration:` there), then
from the fields' defaults below. Sources are in the field docs; "fitted" means fitted once
per accelerator or fabric kind to tests/validation/data/published-cases*.yaml, never per case.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ..problems import Problem, did_you_mean


def _c(default, doc):
    return field(default=default, metadata={"doc": doc})


@dataclass(frozen=True)
class AcceleratorConstants:
    """Compute efficiencies of one accelerator kind (catalog `calibration`, then these)."""

    gemm_efficiency_best: float = _c(
        0.80, "Large-GEMM throughput / dense peak: the catalog's best_gemm_tflops / peak_tflops")
    gemm_overhead_us: float = _c(
        5.0, "Fixed cost of one GEMM kernel (launch, prologue, tail wave), us. Fitted to XLA's H100 "
        "matmul table (tests/validation/data/published-cases.yaml, hardware.gemm_shape_dependence_h100): t = max(F/P, B/BW) + 5 us")
    gemm_tile_m: int = _c(128, "GEMM tile rows; M below a tile multiple wastes tensor-core work (wave quantisation)")
    gemm_tile_n: int = _c(256, "GEMM tile columns")
    num_sms: int = _c(132, "Streaming multiprocessors (tiles run in waves of this many)")
    sustained_clock_factor: float = _c(
        1.0, "Tensor-core throughput under sustained training load / in a short GEMM benchmark (power and "
        "thermal limits lower the clock in a long run); fitted per accelerator")
    wgrad_output_bytes: float = _c(
        8.0, "HBM bytes per element of a weight-gradient GEMM's output: fp32 main_grad read + write "
        "(Megatron's gradient_accumulation_fusion)")
    hbm_efficiency: float = _c(
        0.85, "Achievable / peak HBM bandwidth for streaming kernels (STREAM-like copy reaches 85-90%)")
    attention_efficiency: float = _c(
        0.55, "Core attention (flash kernel) throughput / dense peak, forward; fitted per accelerator")
    attention_backward_flops_factor: float = _c(
        2.5, "Backward / forward FLOPs of flash attention (recomputes QK^T in backward; FlashAttention-2 paper)")
    memory_bound_bytes_per_token_layer: float = _c(
        0.0, "Extra HBM traffic per token per layer per unit of hidden size, bytes (LayerNorm, dropout, "
        "residual, activation, RoPE); 0 = use the op-by-op count of compute.py")
    kernel_gap_fraction: float = _c(
        0.03, "Idle share of compute between kernels (launch gaps, host sync); fitted")
    flash_attention: bool = _c(
        True, "Attention kernel assumed when the plan says attention_backend: auto. False for data taken "
        "with Megatron's fused-softmax kernels (scores in HBM), as the 2021-22 A100 runs were")
    attention_dropout: bool = _c(True, "Unfused attention applies dropout to the scores (GPT-3-style models)")
    nvls_supported: bool = _c(
        False, "NVSwitch with NVLink SHARP (third-generation NVSwitch, Hopper and later): NCCL's NVLS algorithm")
    comm_compute_slowdown: float = _c(
        0.10, "Compute slowdown while a collective shares the SMs and HBM (arXiv:2507.03114 measures 10-19%)")


@dataclass(frozen=True)
class EngineConstants:
    # ---- scale-up (inside a server) ----
    nvlink_efficiency: float = _c(
        0.82, "NCCL ring busbw / NVLink line rate: ~370 of 450 GB/s on H100 (nccl-tests#212, nccl#1455)")
    nvlink_ll_efficiency: float = _c(
        0.30, "NCCL LL protocol busbw / line rate on NVLink (8-byte stores with flags); fitted to the "
        "DGX H100 all_reduce curve (NCCL-DGXH100-ALLREDUCE-8, 128 KB-1 MB)")
    nvlink_ll128_efficiency: float = _c(
        0.70, "NCCL LL128 protocol busbw / line rate on NVLink; fitted to the same curve (4-16 MB)")
    nvls_efficiency: float = _c(
        0.59, "NVLS all-reduce: per-GPU send (= receive) rate / line rate; 275 GB/s algbw of 450 "
        "(nccl-tests#212: ~480 GB/s busbw on 8 H100)")
    pcie_efficiency: float = _c(0.80, "PCIe achievable / line rate (TLP and DLLP overhead; SimAI H100_PCIE_BW 64 x 0.8)")
    host_bounce_efficiency: float = _c(
        0.50, "Without GPUDirect RDMA, NIC traffic is staged through host memory: two PCIe crossings "
        "through the CPU root complex halve the usable rate")
    # ---- scale-out NICs and fabric ----
    infiniband_nic_efficiency: float = _c(
        0.96, "InfiniBand NIC achievable / line rate: NDR 400G reaches 46-49 GB/s (nccl-tests #212, #267)")
    ethernet_nic_efficiency: float = _c(
        0.92, "RoCE NIC achievable / line rate (RoCEv2 headers, PFC/ECN pauses); Baidu/Meta report 90-95%")
    infiniband_adaptive_routing_efficiency: float = _c(
        0.97, "InfiniBand adaptive routing spreads flows over equal-cost up-links almost ideally")
    ecmp_qps_per_connection: int = _c(
        4, "Queue pairs (flows) per NCCL connection on RoCE (NCCL_IB_QPS_PER_CONNECTION); more flows, "
        "fewer ECMP hash collisions")
    # ---- collective latency (NCCL src/graph/tuning.cc, Hopper tables) ----
    nccl_base_latency_us: dict = field(default_factory=lambda: {
        "ring": {"LL": 6.6, "LL128": 14.0, "Simple": 8.4},
        "tree": {"LL": 6.8, "LL128": 14.0, "Simple": 0.0},
        "nvls": {"Simple": 0.0}, "collnet": {"Simple": 0.0}},
        metadata={"doc": "NCCL baseLat per algorithm and protocol, us (tuning.cc)"})
    nccl_nvlink_step_latency_us: dict = field(default_factory=lambda: {
        "ring": {"LL": 0.6, "LL128": 1.25, "Simple": 3.4},
        "tree": {"LL": 0.6, "LL128": 1.25, "Simple": 28.0},
        "nvls": {"Simple": 60.0}, "collnet": {"Simple": 3.7}},
        metadata={"doc": "NCCL hwLat[NVLINK] per step, us (tuning.cc). Fitted to the DGX H100 all_reduce "
                  "curve: LL128 ring 1.25 (NCCL 1.9); NVLS 60 (NCCL 23; the measured curve carries ~60 us "
                  "of fixed cost, NVLS's pipeline fill, from 16 MB to 16 GB)"})
    nccl_net_step_latency_us: dict = field(default_factory=lambda: {
        "ring": {"LL": 2.7, "LL128": 4.0, "Simple": 14.0},
        "tree": {"LL": 5.0, "LL128": 8.5, "Simple": 28.0},
        "nvls": {"Simple": 18.0}, "collnet": {"Simple": 31.0}},
        metadata={"doc": "NCCL hwLat[NET] per step, us (tuning.cc); the switch hops are added on top"})
    nccl_ll_max_bytes: int = _c(
        1 << 20, "Above this size NCCL's tuner stops choosing LL (its bandwidth cap makes it lose)")
    nccl_ring_plateau_factor: float = _c(
        1.4, "Multi-node ring Simple latency multiplier for large messages (tuning.cc, Hopper)")
    nccl_tree_bandwidth_factor: float = _c(0.92, "Tree bandwidth / ring bandwidth (tuning.cc: busBw x 0.92)")
    net_overhead_us: float = _c(
        1.0, "Per-step host/proxy overhead of a network hop, us (tuning.cc netOverhead, Intel CPUs)")
    cable_latency_us: float = _c(0.01, "Propagation over ~2 m of cable, us (5 ns/m)")
    # ---- training framework ----
    dp_bucket_params: int = _c(
        40_000_000, "Megatron DDP bucket size in parameters: max(4e7, 1e6 x dp) "
        "(DistributedDataParallelConfig.bucket_size)")
    grad_reduce_bytes_per_param: int = _c(
        4, "Gradient bytes per parameter in the DP reduction: fp32 main grads (Megatron default)")
    param_gather_bytes_per_param: int = _c(2, "Bytes per parameter in the distributed optimizer's all-gather (bf16)")
    optimizer_bytes_per_param: float = _c(
        32.0, "HBM bytes moved per local parameter by the fused Adam step: read fp32 param, grad, m, v "
        "(16) and write param, m, v (12) and the bf16 copy (2), rounded up")
    microbatch_overhead_s: float = _c(
        0.0, "Host-side cost per micro-batch per stage (data loader, Python), seconds")
    step_overhead_s: float = _c(
        0.0, "Fixed host cost per step (logging, loss all-reduce launch), seconds")
    memory_temporaries_gib: float = _c(
        3.0, "CUDA context, NCCL buffers and GEMM workspaces per GPU, GiB")
    memory_fragmentation: float = _c(0.08, "Allocator fragmentation on top of the activations (5-15% is typical)")


BOOL_FIELDS = {"nvls_supported", "flash_attention", "attention_dropout"}
ENGINE_FIELDS = {f.name for f in dataclasses.fields(EngineConstants)}
ACCEL_FIELDS = {f.name for f in dataclasses.fields(AcceleratorConstants)}


def check_calibration(calibration: dict, catalog) -> list[Problem]:
    """Unknown calibration keys and non-numbers, each with a did-you-mean."""
    out = []
    for key, value in (calibration or {}).items():
        path = f"spec.calibration.{key}"
        if key == "accelerators":
            if not isinstance(value, dict):
                out.append(Problem("expected a mapping of accelerator names", path))
                continue
            for name, values in value.items():
                if catalog.resolve("accelerators", name) is None:
                    out.append(Problem(f"unknown accelerator {name!r}", f"{path}.{name}",
                                       fix=catalog.suggest("accelerators", name)))
                    continue
                for k, v in (values or {}).items():
                    if k not in ACCEL_FIELDS:
                        g = did_you_mean(k, ACCEL_FIELDS)
                        out.append(Problem("unknown accelerator constant" + (f" (did you mean {g}?)" if g else ""),
                                           f"{path}.{name}.{k}", fix=None if g else "known: " + ", ".join(sorted(ACCEL_FIELDS))))
                    elif not isinstance(v, (int, float)) or (isinstance(v, bool) and k not in BOOL_FIELDS):
                        out.append(Problem(f"expected a number, got {v!r}", f"{path}.{name}.{k}"))
        elif key not in ENGINE_FIELDS:
            g = did_you_mean(key, ENGINE_FIELDS | {"accelerators"})
            out.append(Problem("unknown engine constant" + (f" (did you mean {g}?)" if g else ""), path,
                               fix=None if g else "see `designer calibration` for the names"))
        elif isinstance(getattr(EngineConstants(), key), dict):
            if not isinstance(value, dict):
                out.append(Problem("expected a mapping", path))
        elif not isinstance(value, (int, float)) or isinstance(value, bool):
            out.append(Problem(f"expected a number, got {value!r}", path))
    return out


def engine_constants(calibration: dict | None) -> EngineConstants:
    values = {k: v for k, v in (calibration or {}).items() if k in ENGINE_FIELDS}
    base = EngineConstants()
    for k, v in list(values.items()):
        default = getattr(base, k)
        if isinstance(default, dict):  # merge nested tables
            merged = {a: dict(p) for a, p in default.items()}
            for a, p in v.items():
                merged.setdefault(a, {}).update(p)
            values[k] = merged
    return dataclasses.replace(base, **values)


def uses_flash_attention(ac: "AcceleratorConstants", attention_backend: str) -> bool:
    """The plan's attention kernel: the accelerator's calibrated default unless the plan names one."""
    return ac.flash_attention if attention_backend == "auto" else attention_backend == "flash"


def accelerator_constants(accelerator, calibration: dict | None, catalog) -> AcceleratorConstants:
    values = {k: v for k, v in accelerator.calibration.items() if k in ACCEL_FIELDS}
    for name, overrides in ((calibration or {}).get("accelerators") or {}).items():
        if catalog.resolve("accelerators", name) == accelerator.name:
            values.update({k: v for k, v in overrides.items() if k in ACCEL_FIELDS})
    return dataclasses.replace(AcceleratorConstants(), **values)


def describe_constants() -> list[tuple[str, str, object, str]]:
    """(scope, name, default, doc) for every constant, for `designer calibration` and reports."""
    rows = []
    for scope, cls in (("engine", EngineConstants), ("accelerator", AcceleratorConstants)):
        inst = cls()
        for f in dataclasses.fields(cls):
            rows.append((scope, f.name, getattr(inst, f.name), f.metadata.get("doc", "")))
    return rows
