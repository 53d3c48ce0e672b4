"""Stage 3: where the job's work sits: the layers of each pipeline stage, the ranks of each
pipeline, and the distinct straggler patterns (replicas that run at the same pace share one)."""
from __future__ import annotations

import functools
import itertools

import numpy as np

from .. import flops as F
from ..fabric import Fabric
from ..placement import Placement
from ...model.pipeline_split import split_layers, split_options
from .job import Job


class Layout:
    """Which layers each pipeline stage holds and where each replica's stages run, with their slowdowns."""
    placement: Placement
    stage_layers: list[list[list[int]]]  # [stage][chunk] -> layer indices
    pipelines: np.ndarray  # (replicas, pp): rank of each stage in each replica
    patterns: np.ndarray  # (distinct patterns, pp): slowdown of each stage
    pattern_of_replica: np.ndarray  # (replicas,): index into `patterns`
    layers_key: tuple  # stage_layers as a value (the engine's memos key on it): see layers_key()

    __slots__ = ("placement", "stage_layers", "pipelines", "patterns", "pattern_of_replica", "layers_key")

    def __init__(self, placement: Placement, stage_layers: list[list[list[int]]], pipelines: np.ndarray,
                 patterns: np.ndarray, pattern_of_replica: np.ndarray, layers_key: tuple = ()) -> None:
        self.placement = placement
        self.stage_layers = stage_layers
        self.pipelines = pipelines
        self.patterns = patterns
        self.pattern_of_replica = pattern_of_replica
        self.layers_key = layers_key


def stage_layers(shape: F.ModelShape, pp: int, vp: int, split: dict | None = None) -> list[list[list[int]]]:
    """Layer indices of each (stage, chunk): Megatron's interleaved assignment. `split` (the
    keywords of split_layers) gives Megatron's uneven splits; virtual stage c x PP + s holds
    the next layers in order, as in Megatron's get_layer_offset. Shared: do not edit the lists."""
    return stage_layers_and_key(shape, pp, vp, split)[0]


def stage_layers_and_key(shape: F.ModelShape, pp: int, vp: int,
                         split: dict | None = None) -> tuple[list[list[list[int]]], tuple]:
    """stage_layers, and the same as a value (layers_key)."""
    try:
        options = tuple(sorted(split.items())) if split else ()
        hash(options)
    except TypeError:  # an unhashable split option (a layout given as a list): work it out
        return _stage_layers(shape.layers, pp, vp, split)
    return _kept_stage_layers(shape.layers, pp, vp, options)


# the same few shapes come back for every plan of a search
@functools.lru_cache(maxsize=256)
def _kept_stage_layers(layers: int, pp: int, vp: int, options: tuple) -> tuple[list[list[list[int]]], tuple]:
    return _stage_layers(layers, pp, vp, dict(options))


def _stage_layers(layers: int, pp: int, vp: int, split: dict | None) -> tuple[list[list[list[int]]], tuple]:
    """The stage layers and their key, from each virtual stage's layer count: virtual stage c x PP + s
    starts where the one before ends."""
    if split:
        counts = [v.decoder_layers for v in split_layers(layers, pp, vp, **split)]
    else:
        counts = [layers // (pp * vp)] * (pp * vp)
    starts = [0, *itertools.accumulate(counts)]
    virtual = [range(starts[i], starts[i] + counts[i]) for i in range(pp * vp)]
    stages = [virtual[s::pp] for s in range(pp)]  # stage s: its virtual stages c x PP + s, c = 0 .. VP - 1
    # per (stage, chunk) its first layer (-1: none) and count, what a memo keys on (layers_key)
    key = tuple([(chunk.start if chunk else -1, len(chunk)) for stage in stages for chunk in stage])
    return [[list(chunk) for chunk in stage] for stage in stages], key


def lay_out(job: Job, fabric: Fabric, placement: Placement) -> Layout:
    plan = job.plan
    every = fabric.gpu_slowdown
    slow = every[:plan.num_gpus]
    # The slowest member of every TP/CP/EP group sets its pace; a replica's stage is as slow
    # as the slowest GPU among the ranks that share that stage in that replica. Every GPU of the
    # fabric at one pace (nearly always) is a fact of the fabric, kept with it: then every job's too.
    one_pace = slow.size > 0 and fabric.remembered("gpus_at_one_pace", (every,),
                                                   lambda: bool(every.min() == every.max()))
    patterns, pattern_of_replica = straggler_patterns(placement, slow, one_pace)
    layers, key = stage_layers_and_key(job.shape, plan.pp, plan.vp, split_options(job.parallelism))
    return Layout(placement, layers, placement.groups("pp"), patterns, pattern_of_replica.reshape(-1), key)


def layers_key(layers: list[list[list[int]]]) -> tuple:
    """Stage layers as a hashable value: per (stage, chunk) its first layer and count (each chunk
    holds consecutive layers: _stage_layers), what a memo keys on instead of the lists' identity."""
    return tuple((chunk[0] if chunk else -1, len(chunk)) for stage in layers for chunk in stage)


def straggler_patterns(placement: Placement, slow: np.ndarray,
                       one_pace: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of replica_slowdowns (sorted) and each replica's row. When every GPU runs
    at one pace (no straggler: nearly always) that is one row of that pace, without the sort.
    `one_pace`: known already that every one of `slow` (at least one) is the same."""
    lo = slow[0] if one_pace else slow.min() if slow.size else None
    if lo is not None and (one_pace or lo == slow.max()):  # (a NaN never equals: it takes the general way)
        grid, axes = placement.dense_grid, placement.dense_axes
        replicas, pp = grid.shape[axes.index("dp")], grid.shape[axes.index("pp")]
        return np.full((1, pp), lo, dtype=slow.dtype), np.zeros(replicas, dtype=np.intp)
    return np.unique(replica_slowdowns(placement, slow), axis=0, return_inverse=True)


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
