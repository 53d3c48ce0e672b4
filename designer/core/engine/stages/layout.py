"""Stage 3: where the job's work sits: the layers of each pipeline stage, the ranks of each
pipeline, and the distinct straggler patterns (replicas that run at the same pace share one)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import flops as F
from ..fabric import Fabric
from ..placement import Placement
from .job import Job


@dataclass(frozen=True)
class Layout:
    placement: Placement
    stage_layers: list[list[list[int]]]  # [stage][chunk] -> layer indices
    pipelines: np.ndarray  # (replicas, pp): rank of each stage in each replica
    patterns: np.ndarray  # (distinct patterns, pp): slowdown of each stage
    pattern_of_replica: np.ndarray  # (replicas,): index into `patterns`


def stage_layers(shape: F.ModelShape, pp: int, vp: int) -> list[list[list[int]]]:
    """Layer indices of each (stage, chunk): Megatron's interleaved assignment."""
    per_chunk = shape.layers // (pp * vp)
    out = []
    for s in range(pp):
        chunks = []
        for c in range(vp):
            first = (c * pp + s) * per_chunk
            chunks.append(list(range(first, first + per_chunk)))
        out.append(chunks)
    return out


def lay_out(job: Job, fabric: Fabric, placement: Placement) -> Layout:
    plan = job.plan
    slow = fabric.gpu_slowdown[:plan.num_gpus]
    # The slowest member of every TP/CP/EP group sets its pace; a replica's stage is as slow
    # as the slowest GPU among the ranks that share that stage in that replica.
    patterns, pattern_of_replica = np.unique(replica_slowdowns(placement, slow), axis=0, return_inverse=True)
    return Layout(placement, stage_layers(job.shape, plan.pp, plan.vp), placement.groups("pp"), patterns,
                  pattern_of_replica.reshape(-1))


def replica_slowdowns(placement: Placement, slow: np.ndarray) -> np.ndarray:
    """(replicas, pp): per replica and stage, the slowest GPU that shares that stage's work."""
    grid, axes = placement.dense_grid, placement.dense_axes
    # ranks of a (replica, stage): all tp and cp ranks with that dp and pp coordinate
    moved = np.moveaxis(grid, [axes.index("dp"), axes.index("pp")], [0, 1])
    d, p = moved.shape[0], moved.shape[1]
    ranks = moved.reshape(d, p, -1)
    return slow[ranks].max(axis=2)


def representative_replicas(pattern_of_replica: np.ndarray) -> list[int]:
    """The first replica of each straggler pattern."""
    seen, out = set(), []
    for r, pat in enumerate(pattern_of_replica.tolist()):
        if pat not in seen:
            seen.add(pat)
            out.append(r)
    return out
