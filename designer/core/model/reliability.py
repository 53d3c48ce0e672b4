"""Failure rates, checkpoint and restart figures of a training run: named, sourced, overridable.

A cluster file overrides any of them under `calibration.reliability`:

    calibration:
      reliability: {storage_write_tbps: 0.5, hot_spares: 2}

The per-part rates come from the one published breakdown of unexpected interruptions of a
large synchronous run: Meta's Llama 3 405B pre-training, 419 unexpected interruptions in a
54-day snapshot on 16,384 H100 in 2,048 servers (Dubey et al., "The Llama 3 Herd of Models",
2024, section 3.3.4 and Table 5). The exposure is 16,384 x 54 x 24 = 21.23 million GPU-hours
and 2,048 x 54 x 24 = 2.654 million server-hours; each rate below is Table 5's count over the
exposure of the part it names. Kokolis et al., "Revisiting Reliability in Large-Scale Machine
Learning Research Clusters" (Meta RSC-1/RSC-2, 2024) report a mean time to failure of a few hours
for jobs of thousands of GPUs, the same order (docs/decide.md).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

LLAMA3 = ("Dubey et al., 'The Llama 3 Herd of Models' (2024), Table 5: 419 unexpected interruptions in 54 days "
          "on 16,384 H100 (2,048 servers)")
GPU_HOURS = 16384 * 54 * 24 / 1e6  # million GPU-hours of the Llama 3 snapshot
SERVER_HOURS = 2048 * 54 * 24 / 1e6  # million server-hours


def _c(default, doc, *, unit, minimum=0.0, maximum=None):
    return field(default=default, metadata={"doc": doc, "unit": unit, "minimum": minimum, "maximum": maximum,
                                            "exclusive_minimum": None})


@dataclass(frozen=True)
class ReliabilityConstants:
    """Fault rates, checkpoint storage and restart times of the goodput model, each with its source;
    a design's `calibration.reliability` overrides them."""
    gpu_failures_per_mh: float = _c(
        round(196 / GPU_HOURS, 3), "GPU faults per million GPU-hours (faulty GPU incl. NVLink 148, GPU SRAM 19, "
        "GPU system processor 17, thermal interface/sensor 6, silent data corruption 6 = 196). " + LLAMA3,
        unit="per million GPU-hours", maximum=1e5)
    hbm_failures_per_mh: float = _c(
        round(72 / GPU_HOURS, 3), "HBM faults per million GPU-hours (GPU HBM3 memory 72). " + LLAMA3,
        unit="per million GPU-hours", maximum=1e5)
    nic_failures_per_mh: float = _c(
        round(7 / GPU_HOURS, 3), "NIC faults per million NIC-hours (NIC 7; one 400G NIC per GPU). " + LLAMA3,
        unit="per million NIC-hours", maximum=1e5)
    link_failures_per_mh: float = _c(
        round(35 / GPU_HOURS, 3), "Network switch or cable faults per million NIC-link-hours (network "
        "switch/cable 35; Table 5 does not split switches from cables, so the rate is per scale-out link "
        "with its share of switch ports). " + LLAMA3, unit="per million link-hours", maximum=1e5)
    host_failures_per_mh: float = _c(
        round(46 / SERVER_HOURS, 3), "Host faults per million server-hours (host maintenance 32, SSD 3, power "
        "supply 3, chassis 2, IO expansion board 2, CPU 2, system memory 2 = 46). " + LLAMA3,
        unit="per million server-hours", maximum=1e5)
    software_failures_per_mh: float = _c(
        round(63 / GPU_HOURS, 3), "Software interruptions per million GPU-hours (software bug 54, NCCL watchdog "
        "timeouts 7, dependency 2 = 63; they grow with the ranks a job has). " + LLAMA3,
        unit="per million GPU-hours", maximum=1e5)
    checkpoint_bytes_per_param: float = _c(
        14.0, "Bytes a checkpoint holds per parameter: BF16 weights (2) + FP32 master weights (4) + Adam's two "
        "FP32 moments (8), what Megatron-LM's distributed checkpoint saves with the optimizer",
        unit="bytes", maximum=64)
    storage_write_tbps: float = _c(
        2.0, "Sustained write bandwidth of the checkpoint storage, TB/s. Meta's Tectonic for Llama 3: 240 PB on "
        "7,500 servers, 2 TB/s sustained, 7 TB/s peak (Dubey et al. 2024, section 3.3.1). A design's own "
        "storage goes here", unit="TB/s", maximum=1e3)
    storage_read_tbps: float = _c(
        2.0, "Sustained read bandwidth of the checkpoint storage at restart, TB/s (as storage_write_tbps)",
        unit="TB/s", maximum=1e3)
    restart_s: float = _c(
        600.0, "Time from an interruption to training again, checkpoint load apart: detection (NCCL watchdog), "
        "rescheduling, container and process start, NCCL communicator set-up. Estimate: 10 minutes; Meta names "
        "job start-up among the times it cut (Dubey et al. 2024, section 3.3.4) without a figure",
        unit="s", maximum=1e6)
    replacement_wait_s: float = _c(
        7200.0, "Extra wait after a hardware fault when no hot spare is ready: draining the failed server (or "
        "rack) and bringing a healthy one into the job. Estimate: 2 hours; with enough hot_spares it is not paid",
        unit="s", maximum=1e7)
    repair_hours: float = _c(
        24.0, "Hours a failed unit (a server, or an NVL72 rack waiting for a tray swap) is out of the job's pool "
        "before it is back: diagnosis, swap from stock, burn-in. Estimate: one day", unit="h", maximum=1e5)
    hot_spares: int = _c(
        -1, "Spare blast-radius units (servers, or NVLink domains such as NVL72 racks) kept ready: a hardware "
        "fault restarts on a spare instead of waiting replacement_wait_s; they are paid for (their share of "
        "capex) for the run's hours. -1: as many as spare_target needs; 0: none",
        unit="units", minimum=-1, maximum=1e5)
    spare_target: float = _c(
        0.99, "With hot_spares -1, the chance a spare is ready at a hardware fault that the spares are sized for "
        "(failed units out for repair are Poisson: hardware faults per hour x repair_hours)",
        unit="probability", maximum=0.999999)


RELIABILITY_FIELDS = {f.name: f for f in dataclasses.fields(ReliabilityConstants)}
RELIABILITY_KEY = "reliability"  # calibration.reliability


def reliability_constants(calibration: dict | None) -> ReliabilityConstants:
    """The defaults with the file's calibration.reliability over them (checked by check_calibration)."""
    overrides = (calibration or {}).get(RELIABILITY_KEY) or {}
    return dataclasses.replace(ReliabilityConstants(), **{k: v for k, v in overrides.items()
                                                          if k in RELIABILITY_FIELDS})
