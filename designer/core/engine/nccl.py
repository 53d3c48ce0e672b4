"""The table nccl-tests would print (`all_reduce_perf -b MIN -e MAX -f 2`) on the first N GPUs.

Groups: one communicator of the first N accelerators in rank order. Bandwidths in GB/s
(10^9 B/s) as nccl-tests defines them: algbw = size / time; busbw = algbw x 2(n-1)/n for
all_reduce, x (n-1)/n for all_gather, reduce_scatter and all_to_all.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model.catalog import Catalog, default_catalog
from ..model.document import Document
from ..problems import DesignerError, Problem
from .collectives import PRIMITIVES, CollectiveModel, bus_factor
from .constants import accelerator_constants, engine_constants
from .fabric import build_fabric, require_routes


@dataclass
class NcclRow:
    size_bytes: int
    time_us: float
    algbw: float
    busbw: float
    algorithm: str
    protocol: str

    def as_json(self) -> dict:
        return {"size_bytes": self.size_bytes, "time_us": round(self.time_us, 3), "algbw": round(self.algbw, 3),
                "busbw": round(self.busbw, 3), "algorithm": self.algorithm, "protocol": self.protocol}


def sizes(min_bytes: int, max_bytes: int, factor: int = 2) -> list[int]:
    out, s = [], max(1, min_bytes)
    while s <= max_bytes:
        out.append(int(s))
        s *= factor
    return out


def nccl_table(doc: Document, op: str, num_gpus: int | None = None, algo: str = "auto", min_bytes: int = 8,
               max_bytes: int = 16 * 2**30, catalog: Catalog | None = None) -> list[NcclRow]:
    catalog = catalog or default_catalog()
    if op not in PRIMITIVES or op in ("send_recv", "broadcast"):
        raise DesignerError([Problem(f"unknown op {op!r}", "--op", fix="all_reduce, all_gather, reduce_scatter or all_to_all")])
    total = doc.num_gpus()
    n = num_gpus or total
    if n < 2 or n > total:
        raise DesignerError([Problem(f"--num-gpus {n}: the cluster has {total} GPUs", "--num-gpus",
                                     fix=f"use 2..{total}")])
    k = engine_constants(doc.spec.calibration)
    fabric = build_fabric(doc, catalog, k)
    members = np.arange(n, dtype=np.int64).reshape(1, n)
    if len(set(fabric.gpu_node[:n].tolist())) > 1:
        require_routes(fabric, members[0], "this collective")
    accelerators = {catalog.accelerator(a).name for a in fabric.node_accelerator[: fabric.gpu_node[n - 1] + 1]}
    nvls = all(accelerator_constants(catalog.accelerator(a), doc.spec.calibration, catalog).nvls_supported
               for a in accelerators) and all(kind == "nvswitch" for kind in fabric.node_scale_up_kind)
    model = CollectiveModel(fabric, members, k, nvls, name=op)
    if algo != "auto" and algo not in model._algorithms(op, int(model.shape.n_nodes[0]), np.array([0]), "auto"):
        raise DesignerError([Problem(f"--algo {algo} is not available for {op} on these GPUs", "--algo",
                                     fix="use auto, ring or tree" + (", nvls" if nvls and op == "all_reduce" else ""))])
    rows = []
    for size in sizes(min_bytes, max_bytes):
        c = model.cost(op, size, algo)
        t = c.time_s
        algbw = size / t / 1e9 if t > 0 else 0.0
        rows.append(NcclRow(size, t * 1e6, algbw, algbw * bus_factor(op, n), c.algorithm, c.protocol))
    return rows


def format_table(rows: list[NcclRow], op: str, n: int) -> str:
    """The layout of nccl-tests' output (float, sum), out-of-place and in-place alike; #wrong is
    N/A since nothing ran. A last column says which algorithm and protocol the model chose."""
    redop = "sum" if op in ("all_reduce", "reduce_scatter") else "none"
    lines = [f"# designer nccl: predicted {op}_perf -b {rows[0].size_bytes if rows else 0} "
             f"-e {rows[-1].size_bytes if rows else 0} -f 2 on {n} GPUs",
             "#",
             "#                                                              out-of-place                       in-place",
             "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
             "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)"]
    for r in rows:
        count = max(1, r.size_bytes // 4) if op != "all_gather" else max(1, r.size_bytes // 4 // n)
        cell = f"{r.time_us:8.2f} {r.algbw:7.2f} {r.busbw:7.2f}    N/A"
        lines.append(f"{r.size_bytes:>12} {count:>13}     float {redop:>7}      -1 {cell} {cell}   {r.algorithm}/{r.protocol}")
    avg = sum(r.busbw for r in rows) / len(rows) if rows else 0.0
    lines += ["# Out of bounds values : N/A (predicted)", f"# Avg bus bandwidth    : {avg:.3f}", "#"]
    return "\n".join(lines)
