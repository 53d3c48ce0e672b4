"""Ranks onto accelerators, and every communication group of every parallel dimension.

Megatron's RankGenerator: with order tp-cp-ep-dp-pp the leftmost dimension varies fastest,
rank = tp + t*(cp + c*(dp + d*pp)) for the dense layers (EP folded into DP there), and a
second generator (tp := expert-TP, ep, dp := expert-DP, cp := 1) for the expert layers.
Rank r runs on the r-th accelerator of the cluster (servers in file order, then local index),
as launchers place ranks block-wise. Groups are rows of integer matrices, so that 100k GPUs
cost a few numpy operations (docs/engine-model.md, "Rank order").
"""
from __future__ import annotations

import math

import numpy as np

from ..model.plan import ResolvedPlan


class Placement:
    """A plan's ranks laid on GPUs: the dense and expert rank grids that communication groups come from
    (the expert grid made when first asked for: a dense model's plans never ask)."""
    plan: ResolvedPlan
    dense_grid: np.ndarray  # rank grid, axes in DENSE_AXES order
    dense_axes: tuple[str, ...]

    __slots__ = ("plan", "dense_grid", "dense_axes", "_expert")

    def __init__(self, plan: ResolvedPlan, dense_grid: np.ndarray, dense_axes: tuple[str, ...]) -> None:
        self.plan = plan
        self.dense_grid = dense_grid
        self.dense_axes = dense_axes
        self._expert: tuple[np.ndarray, tuple[str, ...]] | None = None

    @property
    def expert_grid(self) -> np.ndarray:
        return self._expert_layout()[0]

    @property
    def expert_axes(self) -> tuple[str, ...]:
        return self._expert_layout()[1]

    def _expert_layout(self) -> tuple[np.ndarray, tuple[str, ...]]:
        """The expert layers' rank grid and its axes (tp := expert-TP, ep, dp := expert-DP, pp; no cp)."""
        if self._expert is None:
            plan = self.plan
            edp = plan.num_gpus // (plan.etp * plan.ep * plan.pp)
            expert_order = [d for d in plan.rank_order if d != "cp"]
            self._expert = _grid({"tp": plan.etp, "ep": plan.ep, "dp": edp, "pp": plan.pp}, expert_order)
        return self._expert

    def groups(self, dim: str, expert: bool = False) -> np.ndarray:
        """(number of groups, group size) matrix of ranks (= GPU indices) of one dimension."""
        grid, axes = self._expert_layout() if expert else (self.dense_grid, self.dense_axes)
        if dim == "dp-cp":  # the gradient group of the dense layers spans DP and CP
            cp, dp = axes.index("cp"), axes.index("dp")
            return _last(grid, (cp, dp)).reshape(-1, grid.shape[dp] * grid.shape[cp])
        axis = axes.index(dim)
        return _last(grid, (axis,)).reshape(-1, grid.shape[axis])

    def stage_of_rank(self) -> np.ndarray:
        """Pipeline stage of every rank."""
        grid, axes = self.dense_grid, self.dense_axes
        stages = np.empty(grid.size, dtype=np.int32)
        pp_axis = axes.index("pp")
        index = np.indices(grid.shape)[pp_axis]
        stages[grid.ravel()] = index.ravel()
        return stages

    def pp_pairs(self) -> np.ndarray:
        """(number of pairs, 2) ranks that send activations from stage i to stage i+1: pipeline after
        pipeline, each stage boundary after boundary (pair j crosses boundary j % (pp - 1))."""
        groups = self.groups("pp")  # each row: the ranks of one pipeline, stage order
        if groups.shape[1] < 2:
            return np.empty((0, 2), dtype=groups.dtype)
        # (each pipeline's senders beside its receivers, in one copy: np.stack of the two raveled took twice as long)
        return np.concatenate((groups[:, :-1, None], groups[:, 1:, None]), axis=2).reshape(-1, 2)


def _last(grid: np.ndarray, moved: tuple[int, ...]) -> np.ndarray:
    """`grid` with the axes `moved` put last, in that order, the others in theirs: np.moveaxis's
    view, by one transpose (moveaxis's checks cost four times the transpose, ~6 calls a plan)."""
    return grid.transpose([a for a in range(grid.ndim) if a not in moved] + list(moved))


def _grid(sizes: dict[str, int], order: list[str]) -> tuple[np.ndarray, tuple[str, ...]]:
    """Rank grid whose axis k is the k-th dimension of `order` (fastest first)."""
    dims = [d for d in order if d in sizes]
    shape_slow_first = [sizes[d] for d in reversed(dims)]
    # int32: a placement is kept per plan of a search (128 of them at 16k GPUs, two grids each)
    ranks = np.arange(math.prod(shape_slow_first), dtype=np.int32).reshape(shape_slow_first)
    grid = np.transpose(ranks, list(range(len(dims)))[::-1])  # axis k = dims[k]
    return grid, tuple(dims)


def place(plan: ResolvedPlan) -> Placement:
    dense, dense_axes = _grid({"tp": plan.tp, "cp": plan.cp, "dp": plan.dp, "pp": plan.pp}, list(plan.rank_order))
    return Placement(plan, dense, dense_axes)
