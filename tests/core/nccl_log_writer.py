"""Synthetic nccl-tests logs: what Designer predicts, written in nccl-tests' exact text format.

`designer nccl` prints the table without the device block (no device ran); a real log has one
`#  Rank %2d Group %2d Pid %6d on %10s device %2d [0x%02x] %s` line per GPU (nccl-tests
src/common.cu) under `# Using devices`. This adds them, so the parser reads the log as it reads a
measured one.
"""
from __future__ import annotations

import copy

from designer.core.engine.nccl import format_table, nccl_run


def synthetic_log(doc, op: str, num_gpus: int, calibration: dict | None = None, min_bytes: int = 8,
                  max_bytes: int = 1 << 30) -> str:
    doc = copy.deepcopy(doc)
    if calibration:
        doc.spec.calibration = {**(doc.spec.calibration or {}), **calibration}
    run = nccl_run(doc, op, num_gpus=num_gpus, min_bytes=min_bytes, max_bytes=max_bytes)
    lines = format_table(run).splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("# nThread"))
    devices = ["#", "# Using devices"] + [
        "#  Rank %2d Group %2d Pid %6d on %10s device %2d [0x%02x] %s"
        % (rank, 0, 4000 + rank, run.hosts[rank], run.local_device[rank], 0x18 + rank, "NVIDIA " + run.device_names[rank])
        for rank in range(run.num_gpus)]
    lines[header + 1:header + 2] = devices  # in place of the lone "#" after the header
    return "\n".join(lines) + "\n"
