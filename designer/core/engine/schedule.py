"""Pipeline schedules simulated as per-stage op lists with cross-stage dependencies.

Op orders follow Megatron-LM's schedules.py: GPipe (all forwards, then all backwards),
1F1B (warm-up min(p-s-1, m) forwards, steady one-forward-one-backward, cool-down),
interleaved 1F1B (v chunks per stage, warm-up (p-s-1)*2 + (v-1)*p, micro-batches in groups
of p), and ZB-H1 (backward split into input- and weight-gradient, the weight gradients of
the warm-up deferred into the cool-down bubble; Qi et al., ICLR'24). An op starts when its
stage is free and the op it depends on (the same micro-batch's forward on the previous
stage, or backward on the next) has finished and its activation has crossed the link.
Each op is visited once, so the cost is linear in the number of ops.
"""
from __future__ import annotations

import functools
import heapq
import math
import struct
from collections.abc import Sequence
from itertools import chain
from operator import itemgetter

import numpy as np

from .schedule_result import B, F, W, OpRecord, ScheduleResult, StageTimes


def op_order(schedule: str, p: int, s: int, m: int, v: int) -> list[tuple[int, int, int]]:
    """(kind, micro-batch, chunk) in the order stage s runs them."""
    if schedule == "gpipe":
        return [(F, i, 0) for i in range(m)] + [(B, i, 0) for i in range(m)]
    # Warm-up forwards, then one forward and one backward in turn, then the cool-down backwards;
    # built with numpy (a cold evaluation spent most of its time here) as lists of Python ints.
    interleaved = schedule == "interleaved" and v > 1
    total = m * v if interleaved else m
    if interleaved:
        warmup = total if m == p else min((p - s - 1) * 2 + (v - 1) * p, total)
    else:
        warmup = min(p - s - 1, m)
    steady = total - warmup
    kind = np.concatenate([np.zeros(warmup, np.int64), np.tile(np.array([F, B], np.int64), steady),
                           np.full(total - steady, B, np.int64)])
    index = np.concatenate([np.arange(warmup), np.stack([np.arange(warmup, total), np.arange(steady)], axis=1).ravel(),
                            np.arange(steady, total)])
    micro, chunk = _micro_and_chunk(kind, index, p, v, interleaved)
    return list(zip(kind.tolist(), micro.tolist(), chunk.tolist()))  # zero-bubble: W ops placed in _zero_bubble_orders


def _micro_and_chunk(kind: np.ndarray, index: np.ndarray, p: int, v: int, interleaved: bool):
    """The micro-batch and chunk of the index-th forward (backward) of a stage."""
    if not interleaved:
        return index, np.zeros_like(index)
    group, within = np.divmod(index, p * v)
    chunk = within // p
    return group * p + within % p, np.where(kind == B, v - 1 - chunk, chunk)


# What depends only on (schedule, p, m, v) is kept (pure functions of those values), shared by
# zb-h1 and DualPipe (one order). A plan search visits a few hundred shapes: the least recently
# used goes, not the whole memo (clearing made every shape after the 32nd rebuild its order and
# structure, and the clear itself cost).
MEMO_ENTRIES = 96


def _memo_key(schedule: str, p: int, m: int, v: int) -> tuple:
    return ("zb" if schedule in ("zb-h1", "dualpipe") else schedule, p, m, v)


@functools.lru_cache(maxsize=MEMO_ENTRIES)
def _structure_of(key: tuple):
    """Dependencies of every op, which depend only on (schedule, p, m, v): cached.

    An op waits for: a forward, the same micro-batch's forward on the previous stage (stage 0,
    chunk c > 0: on the last stage, chunk c - 1); a backward, the one on the next stage (the last
    stage, chunk c < v - 1: stage 0, chunk c + 1; else its own forward, no transfer); a W, its B.

    Returns the number of ops per stage, per stage the duration index of each op in the stage's
    (F per chunk, B per chunk, W per chunk) table (_StageLists) and, per chunk, the positions of
    its backward ops (_BackwardPositions, for last_backward_end), and the flat plan of `_flat_plan`."""
    _, p, m, v = key
    orders = _orders_of(key)
    # The rule above on the ops of all stages at once, stage after stage (a loop over stages
    # and a plain loop over ops were most of a cold evaluation)
    inputs = last = None
    if isinstance(orders, _StageOrders):  # the arrays it makes its tuples from
        sizes = [orders.per_stage] * p
        kind, c = orders.kind, orders.chunk
        ticks = orders.ticks
        if orders.grid is not None:
            inputs = _grid_inputs(orders.grid, p, v)
            last = _grid_last_backwards(orders.grid, p, v) if orders.grid.total else None  # (none to read)
        if inputs is None:
            i = orders.arrays[1]
    else:  # zero-bubble orders: lists of tuples
        sizes = [len(o) for o in orders]
        ticks = None
        ops = np.fromiter(chain.from_iterable(chain.from_iterable(orders)), np.int64, 3 * sum(sizes)).reshape(-1, 3)
        kind, i, c = ops[:, 0], ops[:, 1], ops[:, 2]
    s = np.repeat(np.arange(p), sizes)
    code = kind * v + c
    codes = _StageLists(code, sizes)
    backward_at = _BackwardPositions(kind, s, c, sizes, p, v, last)
    if inputs is not None:
        dep_at, crosses = inputs
        return sizes, codes, backward_at, _flat_plan(p, v, sizes, dep_at, crosses, code, s, ticks)
    f_dep = np.where(s > 0, _oid(F, s - 1, i, c, p, m, v),
                     np.where(c > 0, _oid(F, p - 1, i, c - 1, p, m, v), -1))
    b_dep = np.where(s < p - 1, _oid(B, s + 1, i, c, p, m, v),
                     np.where(c < v - 1, _oid(B, 0, i, c + 1, p, m, v), _oid(F, s, i, c, p, m, v)))
    dep = np.where(kind == F, f_dep, np.where(kind == B, b_dep, _oid(B, s, i, c, p, m, v)))
    crosses = (dep >= 0) & ((dep // (m * v)) % p != s)  # crosses a stage boundary
    flat = _flat_plan(p, v, sizes, _positions_of(dep, _oid(kind, s, i, c, p, m, v)), crosses, code, s, ticks)
    return sizes, codes, backward_at, flat


class _PerStage(Sequence):
    """A list of one list per stage, each made (by `_make`) when that stage is first read: a plan's
    costing reads one stage (the breakdown's critical stage), the timeline all of them. Reads,
    compares and prints as the list of lists it stands for."""

    def __init__(self, stages: int):
        self._lists: list[list | None] = [None] * stages

    def _make(self, s: int) -> list:
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self._lists)

    def __getitem__(self, s):
        if isinstance(s, slice):
            return [self[i] for i in range(len(self))[s]]
        s = range(len(self))[s]  # an IndexError past the last stage, as a list
        hit = self._lists[s]
        if hit is None:
            hit = self._lists[s] = self._make(s)
        return hit

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    def __repr__(self) -> str:
        return repr(list(self))


class _StageLists(_PerStage):
    """Per stage, a list of its ops' values (all stages' in one array, stage after stage), made when
    a stage is first read: a plan's costing reads one stage's (the breakdown's critical stage)."""

    def __init__(self, values: np.ndarray, sizes: list[int]):
        self._values = values
        self._starts = [0]
        for size in sizes:
            self._starts.append(self._starts[-1] + size)
        super().__init__(len(sizes))

    def _make(self, s: int) -> list:
        return self._values[self._starts[s]:self._starts[s + 1]].tolist()


class _BackwardPositions:
    """Per stage and chunk, the positions in the stage of its backward ops (W ops included), in
    order. Each simulation reads only the last of each (`last`, -1 for none): its ops end in
    order when every time is finite and 0 or more; all of them (`all`) only when not."""

    def __init__(self, kind: np.ndarray, stage_of: np.ndarray, chunk: np.ndarray, sizes: list[int], p: int,
                 v: int, last: list[list[int]] | None = None):
        """`last`: `last` when the caller knows it (_grid_last_backwards)."""
        self._args = (kind, stage_of, chunk, sizes, p, v)
        if last is None:
            backward, group, starts = self._groups()
            at = np.full(p * v, -1, np.int64)
            np.maximum.at(at, group, backward)  # positions grow along the array: the largest is the last
            last = _per_stage(np.where(at >= 0, at - starts, -1).tolist(), [v] * p)
        self.last = last
        self._all: list[list[list[int]]] | None = None
        self._last_slots: dict[int, list[int]] = {}

    def last_slots(self, s: int, offset: int, op_slots: np.ndarray) -> list[int]:
        """`last` of stage s as end slots (op_slots: per op of all stages, its end's slot; -1 for none)."""
        hit = self._last_slots.get(s)
        if hit is None:
            hit = self._last_slots[s] = [int(op_slots[offset + at]) if at >= 0 else -1 for at in self.last[s]]
        return hit

    def _groups(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The positions of the backward ops, their stage * v + chunk, and each such group's stage start."""
        kind, stage_of, chunk, sizes, p, v = self._args
        backward = np.flatnonzero(kind != F)
        return backward, stage_of[backward] * v + chunk[backward], np.repeat(np.cumsum([0] + sizes[:-1]), v)

    @property
    def all(self) -> list[list[list[int]]]:
        if self._all is None:
            p, v = self._args[4:]
            backward, group, starts = self._groups()
            # the backward ops sorted (stably) by stage and chunk, cut by their counts
            by_group = backward[np.argsort(group, kind="stable")]
            counts = np.bincount(group, minlength=p * v)
            within = (by_group - np.repeat(starts, counts)).tolist()
            self._all = _per_stage(_per_stage(within, counts.tolist()), [v] * p)
        return self._all


def _per_stage(items: list, sizes: list[int]) -> list[list]:
    """`items` cut into consecutive lists of `sizes` items."""
    out, a = [], 0
    for size in sizes:
        out.append(items[a:a + size])
        a += size
    return out


class _StageArrays:
    """Per stage, what ScheduleResult.stage_transfer_wait_s and stage_op_sums work on: what picks
    each op's previous end, then each op's input end (the -inf slot for none), out of the ends in
    one tuple, what packs those as doubles, whether it has an input, whether that crosses a stage
    boundary (each None where every op of the stage does: most stages, then worked on without a
    mask), its kind * v + chunk and the distinct ones of those, in order (None for a stage without
    ops). Made when first asked: a plan search asks for its critical stage only. (The distinct codes
    by a set: np.unique imports numpy.ma, a twentieth of a command's start-up.)"""

    def __init__(self, offsets, sizes, prevs, dep_slots, crosses, codes, none_slot):
        self._args = (offsets, sizes, prevs, dep_slots, crosses, codes, none_slot)
        self._made: dict[int, tuple | None] = {}

    def __getitem__(self, s: int):
        if s not in self._made:
            offsets, sizes, prevs, dep_slots, crosses, codes, none_slot = self._args
            a, b = offsets[s], offsets[s] + sizes[s]
            if b == a:
                self._made[s] = None
            else:
                dep = dep_slots[a:b]
                has_dep, cross = dep >= 0, crosses[a:b]
                picked = prevs[a:b].tolist() + np.where(has_dep, dep, none_slot).tolist()  # 2 or more: a tuple
                self._made[s] = (itemgetter(*picked), struct.Struct(f"{len(picked)}d"),
                                 None if has_dep.all() else has_dep, None if cross.all() else cross,
                                 codes[a:b], sorted(set(codes[a:b].tolist())))
        return self._made[s]


def _positions_of(dep_ids: np.ndarray, own_ids: np.ndarray) -> np.ndarray:
    """Per op (stage after stage), the position of the op it waits for (-1: none), from op ids, by
    an array from op id to position (a dict of 4,608 ids cost a cold evaluation 1 ms)."""
    n = len(own_ids)
    position_of = np.full(max(int(own_ids.max()) if n else 0, int(dep_ids.max()) if n else 0) + 1, -1, np.int64)
    position_of[own_ids] = np.arange(n)
    has_input = dep_ids >= 0
    dep_at = np.where(has_input, position_of[np.where(has_input, dep_ids, 0)], -1)
    if (dep_at[has_input] < 0).any():  # pragma: no cover - a schedule bug: an op waits for one no stage runs
        raise RuntimeError("pipeline schedule waits for an op it does not run")
    return dep_at


def _flat_plan(p, v, sizes, dep_at, crosses, codes, stage_of, ticks=None):
    """The ops of all stages in one list, in an order where every op comes after the op it
    waits for and after the previous op of its stage: `simulate`'s hot loop then runs straight
    through, with no waiting list. An op's end is a max of sums fixed by the op order per stage,
    so any such order gives the same floats.

    Takes, per op of all stages (stage after stage): the position of the op it waits for (-1:
    none), whether that crosses a stage boundary, its kind * v + chunk, its stage and its tick
    (_backward_tick; None: the ops are visited one by one).

    Global position g of op k of stage s: offsets[s] + k. End slots: p slots for the stages'
    start offsets, one that holds -inf (what an op with no input waits for: -inf + transfer is
    never later than its stage is free), then one per op in visit order (the hot loop appends
    each end). Returns (offsets, duration codes into a table of 3 v entries per stage, per g the
    slot of its stage's previous end, per g the slot of its input's end or -1 (arrays: a stage's
    are read as lists when its timing is asked for), the _StageArrays, crossings per g (bool
    array), per g the slot of its own end, per stage the slot of its last end (its start
    offset's for a stage without ops), and in visit order: the slot of the previous end on its
    stage (a list: the hot loop's), the slot of the end it waits from another stage (a list, the
    -inf slot for an input on its own stage: see `simulate`), the slot of the end it waits for
    (an array), its duration code (a list: the hot loop reads its duration out of the table) and
    the crossings (an array))."""
    offsets = [0] * p
    for s in range(1, p):
        offsets[s] = offsets[s - 1] + sizes[s - 1]
    has_input = dep_at >= 0
    starts = [o for o, size in zip(offsets, sizes) if size]  # each stage's first op
    order = np.argsort(ticks, kind="stable") if ticks is not None else None
    if order is not None:
        op_slot, prev_slot, dep_slot = _end_slots(order, p, stage_of, starts, dep_at)
        if not ((dep_slot < op_slot).all() and (prev_slot < op_slot).all()):
            order = None  # the ticks put an op before its input or before its stage's previous op
    if order is None:
        order = np.array(_visit_order(p, sizes, offsets, dep_at.tolist()), np.int64)
        op_slot, prev_slot, dep_slot = _end_slots(order, p, stage_of, starts, dep_at)
    flat_codes = 3 * v * stage_of + codes
    dep_slots = np.where(has_input, dep_slot, -1)
    arrays = _StageArrays(offsets, sizes, prev_slot, dep_slots, crosses, codes, p)
    last_slots = [int(op_slot[o + size - 1]) if size else s for s, (o, size) in enumerate(zip(offsets, sizes))]
    visit_inputs, visit_crosses = dep_slot[order], crosses[order]
    from_other_stage = np.where(visit_crosses, visit_inputs, p).tolist()  # (p: the -inf slot)
    return (offsets, flat_codes, prev_slot, dep_slots, arrays, crosses, op_slot, last_slots,
            prev_slot[order].tolist(), from_other_stage, visit_inputs, flat_codes[order].tolist(), visit_crosses)


def _end_slots(order, p, stage_of, starts, dep_at):
    """Per op (stage after stage), with the ops visited in `order`: the slot of its own end, of its
    stage's previous end (its stage's start offset for a stage's first op) and of its input's end
    (the -inf slot p for none). An op with no input, or the first of its stage, waits for a slot
    below p + 1: the order is one the hot loop can run when every op's own slot is above both."""
    n = len(order)
    # each op's end slot, then the -inf slot p: what an input of -1 (none) picks
    slot_of = np.empty(n + 1, np.int64)
    slot_of[order] = np.arange(p + 1, n + p + 1)
    slot_of[n] = p
    op_slot = slot_of[:n]
    prev_slot = np.empty(n, np.int64)
    prev_slot[1:] = op_slot[:-1]
    prev_slot[starts] = stage_of[starts]
    return op_slot, prev_slot, slot_of[dep_at]


def _visit_order(p, sizes, offsets, waits_on):
    """The visiting order of the event loop `_flat_plan` replaced: run a stage until its next op
    waits for one not yet run (`waits_on`: the position of that op, -1 for none)."""
    n = len(waits_on)
    done = [False] * n
    ptr = [0] * p
    waiter = [-1] * n  # per op, the stage stopped until it ends
    stack = list(range(p - 1, -1, -1))
    visit = []
    while stack:
        s = stack.pop()
        k, n_s, base = ptr[s], sizes[s], offsets[s]
        while k < n_s:
            g = base + k
            dg = waits_on[g]
            if dg >= 0 and not done[dg]:
                waiter[dg] = s
                break
            visit.append(g)
            done[g] = True
            k += 1
            w = waiter[g]
            if w >= 0:
                stack.append(w)
        ptr[s] = k
    if len(visit) != n:  # pragma: no cover - a schedule bug
        raise RuntimeError("pipeline schedule deadlocked")
    return visit


def _oid(kind, s, i, c, p, m, v):
    """The op id of `simulate` (((kind * p + s) * m + i) * v + c), on arrays."""
    return ((kind * p + s) * m + i) * v + c


def _orders(schedule: str, p: int, m: int, v: int) -> list[list[tuple[int, int, int]]]:
    return _orders_of(_memo_key(schedule, p, m, v))


@functools.lru_cache(maxsize=MEMO_ENTRIES)
def _orders_of(key: tuple) -> list[list[tuple[int, int, int]]]:
    schedule, p, m, v = key
    if schedule == "zb":
        return _zero_bubble_orders(p, m)
    return _StageOrders(*_op_arrays(schedule, p, m, v), p)


class _StageOrders(_PerStage):
    """Per stage, the (kind, micro-batch, chunk) of its ops in order (op_order), made from the
    arrays of all stages when a stage is first read: an evaluation reads them only for its
    timeline, and tuples for every op cost a new plan 0.3 ms (much of it in garbage collections)."""

    def __init__(self, kind: np.ndarray, chunk: np.ndarray, micro, ticks: np.ndarray, grid: _Grid | None, p: int):
        """`micro`: a function that makes the micro-batch array (only the timeline and the generic
        path of _structure_of read it)."""
        self.kind, self.chunk = kind, chunk  # all stages, stage after stage: `_structure_of` reads these
        self._micro = micro
        self._arrays: tuple | None = None
        self.ticks = ticks  # and these (_backward_tick)
        self.grid = grid  # and this (_grid_inputs; None: the inputs are found by op id)
        self.per_stage = len(kind) // p if p else 0
        super().__init__(p)

    @property
    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(kind, micro-batch, chunk) of every op, stage after stage."""
        if self._arrays is None:
            self._arrays = (self.kind, self._micro(), self.chunk)
        return self._arrays

    def _make(self, s: int) -> list[tuple[int, int, int]]:
        a, b = s * self.per_stage, (s + 1) * self.per_stage
        return list(zip(*(x[a:b].tolist() for x in self.arrays)))


def _op_arrays(schedule: str, p: int, m: int, v: int) -> tuple:
    """op_order of every stage at once, stage after stage, as (kind, chunk) arrays and a function
    that makes the micro-batch array: each stage runs 2 * (micro-batches * chunks) ops, so one
    (p, ops) grid holds them all. The fourth is each op's tick (see _backward_tick), the fifth the _Grid
    the closed form of each op's input is worked out from (_grid_inputs).

    Worked out on the (stage, index) tables of the forwards and of the backwards: where each runs
    (see _Grid), and its chunk, micro-batch and tick, put at those positions."""
    interleaved = schedule == "interleaved" and v > 1
    total = m * v if interleaved else m
    s = np.arange(p)[:, None]
    if schedule == "gpipe":
        warmup = np.full((p, 1), total)  # all forwards, then all backwards
    elif interleaved:
        warmup = np.full((p, 1), total) if m == p else np.minimum((p - s - 1) * 2 + (v - 1) * p, total)
    else:
        warmup = np.minimum(p - s - 1, m)
    j = np.arange(total)
    # warm-up forwards, then forward and backward in turn, then the cool-down backwards
    rows = s * (2 * total)
    at_f = rows + np.where(j < warmup, j, 2 * j - warmup)
    at_b = rows + np.where(j < total - warmup, 2 * j + warmup + 1, j + total)
    n = 2 * total * p
    kind = np.zeros(n, np.int64)
    kind[at_b] = B
    if interleaved:
        group, within = np.divmod(j, p * v)
        chunk_f = within // p
        chunk = np.empty(n, np.int64)
        chunk[at_f] = chunk_f
        chunk[at_b] = v - 1 - chunk_f
        micro_j = group * p + within % p
    else:
        chunk = np.zeros(n, np.int64)
        micro_j = j

    def micro() -> np.ndarray:
        out = np.empty(n, np.int64)
        out[at_f] = micro_j
        out[at_b] = micro_j
        return out

    b = 2 if interleaved else 1
    ticks = np.empty(n, np.int64)
    ticks[at_f] = 2 * j + b * s
    ticks[at_b] = 2 * j + _backward_tick(p, total, b, s, warmup)
    # the closed form needs whole groups of p micro-batches (what the interleaved schedule requires)
    grid = _Grid(at_f, at_b, warmup[:, 0], total) if not interleaved or m % p == 0 else None
    return kind, chunk, micro, ticks, grid


class _Grid:
    """The ops of 1F1B, interleaved 1F1B or GPipe as a (stage, position) grid: where the j-th
    forward and the j-th backward of each stage run (as positions among the ops of all stages,
    stage after stage), and per stage its warm-up forwards. The j-th forward of a stage runs at
    position j during the warm-up and at 2 j - w after it; the j-th backward at 2 j + w + 1 in the
    steady state and at j + total in the cool-down. The j-th forward (backward) runs the same
    micro-batch and chunk on every stage."""
    at_f: np.ndarray  # (p, total)
    at_b: np.ndarray  # (p, total)
    warmup: np.ndarray  # (p,)
    total: int  # forwards (and backwards) per stage

    __slots__ = ("at_f", "at_b", "warmup", "total")

    def __init__(self, at_f: np.ndarray, at_b: np.ndarray, warmup: np.ndarray, total: int) -> None:
        self.at_f = at_f
        self.at_b = at_b
        self.warmup = warmup
        self.total = total


def _grid_last_backwards(grid: _Grid, p: int, v: int) -> list[list[int]]:
    """Per stage and chunk, the position in the stage of its last backward (_BackwardPositions.last):
    the j-th backward runs chunk v - 1 - (j mod p v) // p, and the grid holds whole groups of p v
    of them, so chunk c's last is the one of index total - 1 - c p."""
    at = grid.at_b[:, grid.total - 1 - np.arange(v) * p] - np.arange(p)[:, None] * (2 * grid.total)
    return at.tolist()


def _grid_inputs(grid: _Grid, p: int, v: int) -> tuple[np.ndarray, np.ndarray] | None:
    """_structure_of's rule in closed form: per op, stage after stage, the position of the op it
    waits for (-1: none) and whether that is on another stage. The micro-batch and chunk of the
    j-th forward (backward) are the same on every stage, so an input is found by its index:
    a forward waits for the same forward of the stage before (stage 0, chunk c > 0: the last
    stage's forward p indices earlier, chunk c - 1); a backward for the same backward of the stage
    after (the last stage, chunk c < v - 1: stage 0's backward p indices earlier, chunk c + 1;
    chunk v - 1: its own micro-batch's forward of chunk v - 1, (v - 1) p indices later). None when
    an input falls outside the grid (the generic path then says so).

    Worked out on the (stage, index) tables of the forwards and of the backwards (half the ops
    each, and the stage before or after is a shifted row), then put at the ops' positions."""
    total, at_f, at_b = grid.total, grid.at_f, grid.at_b
    ops = 2 * total
    j = np.arange(total)
    first_chunk = j % (p * v) < p  # the j-th forward runs chunk 0, the j-th backward chunk v - 1
    if v > 1 and total and j[first_chunk][-1] + (v - 1) * p >= total:
        return None
    earlier = np.maximum(j - p, 0)  # p indices earlier (where the chunk is not the first)
    dep_f = np.empty_like(at_f)
    dep_f[1:] = at_f[:-1]
    dep_f[0] = np.where(first_chunk, -1, at_f[p - 1][earlier])
    dep_b = np.empty_like(at_b)
    dep_b[:-1] = at_b[1:]
    dep_b[p - 1] = np.where(first_chunk, at_f[p - 1][np.minimum(j + (v - 1) * p, total - 1)], at_b[0][earlier])
    dep_at = np.empty(p * ops, np.int64)
    dep_at[at_f] = dep_f
    dep_at[at_b] = dep_b
    crosses = np.ones(p * ops, bool)
    if p > 1:
        crosses[at_f[0][first_chunk]] = False  # stage 0's chunk-0 forwards wait for nothing
        crosses[at_b[p - 1][first_chunk]] = False  # the last stage's chunk v - 1 backwards wait for its own forwards
    else:
        crosses[:] = False
    return dep_at, crosses


def _backward_tick(p, total, b, s, warmup):
    """The ops' ticks (_op_arrays): per op, a number that grows along every dependency and along each
    stage's order when the schedule is 1F1B, interleaved or GPipe: sorting the ops by it gives
    `_flat_plan` its order without visiting them one by one (it checks the order and falls back to
    the visit if not).

    The j-th forward of stage s at 2j + b s, its j-th backward at 2j + b s + 2 w + 1 (w: the
    stage's warm-up forwards; b = 2 interleaved, 1 else): in the steady state the j-th backward
    sits between the (w + j)-th and the (w + j + 1)-th forward, a forward comes after the same
    one on the stage before, a backward after the same one on the stage after (w shrinks by 2,
    or 1, a stage). A stage that runs only forwards, then only backwards (GPipe, or too few
    micro-batches) puts its backwards after all forwards, later on earlier stages.

    Returns what the j-th backward adds to 2 j, per stage (warmup: shape (p, 1))."""
    return np.where(warmup < total, b * s + 2 * warmup + 1, 2 * total + 2 * b * p - b * s)


def _zero_bubble_orders(p: int, m: int) -> list[list[tuple[int, int, int]]]:
    """ZB-H1's op order per stage, W ops included, fixed before any timing is known.

    It is the order the greedy rule (a stage with nothing ready runs a deferred weight
    gradient) makes when F, B and W take the same time, as in Qi et al.'s hand-made schedule.
    Fixing it matters: with the order chosen while timing the real durations, a slower GPU
    could change which W fills which gap and finish the step sooner (a scheduling anomaly).
    With a fixed order every op's end is a max of sums of durations, so a slower part can
    never make the step faster."""
    unit = [StageTimes([1.0], [2.0], [1.0]) for _ in range(p)]
    records = _greedy_zero_bubble(p, m, unit, 0.0)
    orders: list[list[tuple[int, int, int]]] = [[] for _ in range(p)]
    for r in sorted(records, key=lambda r: (r.stage, r.start, r.end)):
        orders[r.stage].append((r.kind, r.micro, r.chunk))
    return orders


def simulate(schedule: str, p: int, m: int, v: int, times: list[StageTimes], p2p_s: float,
             start_offset: list[float] | None = None) -> ScheduleResult:
    """Run the schedule; `p2p_s` is the time an activation (or its gradient) takes between stages."""
    zb = schedule in ("zb-h1", "dualpipe")
    v = v if schedule == "interleaved" else 1
    orders = _orders(schedule, p, m, v)

    # Every schedule runs a fixed op order per stage (zero-bubble ones: _zero_bubble_orders).
    # The hot loop: flat lists in a precomputed dependency order (_flat_plan), one visit per op.
    sizes, codes, backward_at, flat = _structure_of(_memo_key(schedule, p, m, v))
    offsets, flat_codes, prevs, dep_slots, arrays, crosses, op_slots, last_slots, prev_slots, from_other_stage, \
        visit_inputs, visit_codes, visit_crosses = flat
    table = []
    no_w = [0.0] * v
    for s in range(p):
        st = times[s]
        # per stage, by kind * v + chunk: F, then B (input gradient only when W is split off), then W
        table += st.fwd[:v]
        if zb:  # W ops only in zero-bubble orders
            table += [b - w for b, w in zip(st.bwd[:v], st.wgrad[:v])]
            table += st.wgrad[:v]
        else:
            table += st.bwd[:v]
            table += no_w
    # per op, by position, its duration (for the stages' sums; the loop reads the table's own floats by
    # each op's code: a list subscript in the loop costs less than picking a tuple of them first)
    dur = np.array(table)[flat_codes]
    # end slots (see _flat_plan): the stages' start offsets, -inf (no input), then each op's end as it is
    # worked out (visit order)
    end = (list(start_offset) if start_offset else [0.0] * p) + [-math.inf]
    # With finite durations and transfers of 0 or more, each op of a stage ends no sooner than
    # the one before it: the last backward of a chunk is also its latest
    ordered = (p2p_s >= 0.0 and math.isfinite(p2p_s) and all(map(math.isfinite, table))
               and (not table or min(table) >= 0.0) and all(map(math.isfinite, end[:p])))
    # zip of flat lists, not a list of step tuples: zip reuses its tuple, so a new shape makes
    # no 4,608 tuples (they cost more to make, and in garbage collections, than they save here)
    if ordered:
        # An input on the op's own stage (the last stage's backward after its forward, a W after its
        # B) ended no later than the stage's previous op: it never decides the start, so it waits
        # for the -inf slot, and every input pays the transfer (-inf + a finite transfer is -inf).
        for prev, d, c in zip(prev_slots, from_other_stage, visit_codes):
            f = end[prev]
            r = end[d] + p2p_s
            # (end.append, not a bound method kept in a local: 3.11 calls the list's append in place,
            # a tenth of the loop)
            end.append((r if r > f else f) + table[c])  # starts when both its stage and its input are ready
    else:  # each input as it is: with its transfer when it crosses a stage boundary, none else
        visit_trans = np.where(visit_crosses, p2p_s, 0.0).tolist()
        for prev, d, t, c in zip(prev_slots, visit_inputs.tolist(), visit_trans, visit_codes):
            f = end[prev]
            r = end[d] + t
            end.append((r if r > f else f) + table[c])
    # a stage's busy time: its durations added one after the other, as sum() adds them
    # (np.add.accumulate is a running sum, never pairwise, along each row too; 0.0 + as sum's start)
    if p and sizes[0] and sizes.count(sizes[0]) == p:  # stages of as many ops: one pass over all rows
        busy = (0.0 + np.add.accumulate(dur.reshape(p, sizes[0]), axis=1)[:, -1]).tolist()
    else:
        busy = [0.0 + float(np.add.accumulate(dur[a:a + size])[-1]) if size else 0
                for a, size in zip(offsets, sizes)]
    last_b = []
    for s in range(p):
        a = offsets[s]
        if ordered:
            last_b.append([(end[slot] if end[slot] > 0.0 else 0.0) if slot >= 0 else 0.0
                           for slot in backward_at.last_slots(s, a, op_slots)])
        else:  # max keeps the first of equals and never takes a NaN over 0.0, as `if e > best` did
            last_b.append([max(chain((0.0,), (end[slot] for slot in op_slots[a + np.array(at, np.int64)].tolist())))
                           if at else 0.0 for at in backward_at.all[s]])
    return ScheduleResult(None, [end[slot] for slot in last_slots], busy, last_b, orders,
                          _StageEnds(end, op_slots, offsets, sizes),
                          (end, crosses, prevs, dep_slots, offsets, arrays, p2p_s), codes, v)


class _StageEnds(_PerStage):
    """Per stage, the ends of its ops in its order, read out of the simulation's ends (kept in
    visit order) when a stage is first asked for: a plan's costing reads one stage's."""

    def __init__(self, end: list[float], op_slots: np.ndarray, offsets: list[int], sizes: list[int]):
        self._end, self._op_slots, self._offsets, self._sizes = end, op_slots, offsets, sizes
        super().__init__(len(sizes))

    def _make(self, s: int) -> list[float]:
        a, end = self._offsets[s], self._end
        return [end[slot] for slot in self._op_slots[a:a + self._sizes[s]].tolist()]


def _greedy_zero_bubble(p: int, m: int, times: list[StageTimes], p2p_s: float) -> list[OpRecord]:
    """ZB-H1 run by its greedy rule, only to derive the fixed order (see _zero_bubble_orders)."""
    return _GreedyZeroBubble(p, m, times, p2p_s).run()


class _GreedyZeroBubble:
    """ZB-H1's greedy rule, stage by stage in the order they become free: a stage runs its next F or B
    when its input has arrived, and a deferred weight gradient (W) instead when that input is late,
    when it holds more deferred W ops than its warm-up, or when its F and B ops are all done."""

    def __init__(self, p: int, m: int, times: list[StageTimes], p2p_s: float):
        self.p, self.m, self.times, self.p2p_s = p, m, times, p2p_s
        self.orders = [op_order("zb-h1", p, s, m, 1) for s in range(p)]
        self.end = [-1.0] * (3 * p * m)  # per op id: when it ended (-1: not run yet)
        self.free = [0.0] * p  # when each stage is next free
        self.ptr = [0] * p  # each stage's next F or B in its order
        self.waiting: dict[int, int] = {}  # op id -> the stage stopped until it ends
        self.pending_w: list[list[tuple[int, int]]] = [[] for _ in range(p)]  # deferred W ops (micro, chunk)
        self.defer = [min(p - s - 1, m) for s in range(p)]  # ZB-H1 keeps the warm-up's W ops for the cool-down
        self.records: list[OpRecord] = []
        self.heap: list[tuple[float, int]] = []  # (free at, stage): the stage to move next

    def run(self) -> list[OpRecord]:
        # Event order matters here: a stage with nothing ready runs a deferred W instead of idling.
        self.heap = [(self.free[s], s) for s in range(self.p)]
        heapq.heapify(self.heap)
        while self.heap:
            _, s = heapq.heappop(self.heap)
            self._step(s)
        if any(self.ptr[s] < len(self.orders[s]) or self.pending_w[s] for s in range(self.p)):  # pragma: no cover
            raise RuntimeError("pipeline schedule deadlocked")
        return self.records

    def _step(self, s: int) -> None:
        """Stage s is free: run a deferred W, its next F or B, or wait for that op's input."""
        order = self.orders[s]
        if self.ptr[s] >= len(order):  # only deferred W ops left
            if self.pending_w[s]:
                self._run_deferred_w(s)
            return
        kind, i, c = order[self.ptr[s]]
        dep, transfer = self._dependency(kind, s, i, c)
        end = self.end
        blocked = dep >= 0 and (end[dep] < 0 or end[dep] + transfer > self.free[s])
        if self.pending_w[s] and (blocked or len(self.pending_w[s]) > self.defer[s]):
            self._run_deferred_w(s)
            return
        if dep >= 0 and end[dep] < 0:  # its input has not been computed: wake s when it has
            self.waiting[dep] = s
            return
        self._run_next(s, kind, i, c, dep, transfer)

    def _run_deferred_w(self, s: int) -> None:
        i, c = self.pending_w[s].pop(0)
        self._record(s, W, i, c, self.free[s], self._duration(s, W, c), 0.0, 0.0)
        heapq.heappush(self.heap, (self.free[s], s))

    def _run_next(self, s: int, kind: int, i: int, c: int, dep: int, transfer: float) -> None:
        """Stage s runs its next F or B once its input has arrived; a B defers its W."""
        free = self.free[s]
        ready = self.end[dep] + transfer if dep >= 0 else 0.0
        start = max(free, ready)
        wait = start - free
        wait_pp = min(wait, transfer) if dep >= 0 and ready > free else 0.0
        me = self._record(s, kind, i, c, start, self._duration(s, kind, c), wait, wait_pp)
        if kind == B:
            self.pending_w[s].append((i, c))
        self.ptr[s] += 1
        heapq.heappush(self.heap, (self.free[s], s))
        nxt = self.waiting.pop(me, None)
        if nxt is not None:
            heapq.heappush(self.heap, (self.free[nxt], nxt))

    def _record(self, s: int, kind: int, i: int, c: int, start: float, duration: float, wait: float,
                wait_pp: float) -> int:
        finish = start + duration
        self.records.append(OpRecord(s, kind, i, c, start, finish, wait, wait_pp))
        me = self._oid(kind, s, i, c)
        self.end[me] = finish
        self.free[s] = finish
        return me

    def _oid(self, kind: int, s: int, i: int, c: int) -> int:
        return ((kind * self.p + s) * self.m + i) + c  # one chunk (v = 1)

    def _dependency(self, kind: int, s: int, i: int, c: int) -> tuple[int, float]:
        """The op this one waits for (-1: none) and the transfer after it."""
        p, p2p_s = self.p, self.p2p_s
        if kind == F:
            return (self._oid(F, s - 1, i, c), p2p_s) if s > 0 else (-1, 0.0)
        if kind == B:
            return (self._oid(B, s + 1, i, c), p2p_s) if s < p - 1 else (self._oid(F, s, i, c), 0.0)
        return self._oid(B, s, i, c), 0.0

    def _duration(self, s: int, kind: int, c: int) -> float:
        st = self.times[s]
        if kind == F:
            return st.fwd[c]
        if kind == B:
            return st.bwd[c] - st.wgrad[c]
        return st.wgrad[c]


def ideal_bubble_s(schedule: str, p: int, m: int, v: int, f: float, b: float, w: float) -> float:
    """The schedule's bubble with identical stages (closed form, docs/engine-model.md, "Pipeline schedule").

    f, b, w: forward, backward and weight-gradient time of one micro-batch through a whole
    stage (all its chunks)."""
    if p <= 1:
        return 0.0
    if schedule == "interleaved" and v > 1:
        return (p - 1) * (f + b) / v
    if schedule in ("zb-h1", "dualpipe"):
        return max(0.0, (p - 1) * (f + b - 2 * w))
    return (p - 1) * (f + b)


def steady_pace_s(times: list[StageTimes], schedule: str = "1f1b") -> float:
    """Time per micro-batch in the steady state: the slowest stage's forward + backward
    (a permutation flow shop with identical jobs runs at its bottleneck's pace). GPipe runs
    all forwards, then all backwards: the slowest forward plus the slowest backward."""
    if schedule == "gpipe":
        return max(sum(t.fwd) for t in times) + max(sum(t.bwd) for t in times)
    return max(sum(t.fwd) + sum(t.bwd) for t in times)


def simulate_steady(schedule: str, p: int, m: int, v: int, times: list[StageTimes], p2p_s: float,
                    max_ops: int = 4096) -> tuple[ScheduleResult, int]:
    """The schedule's stage end times for m micro-batches, simulating at most ~max_ops ops.

    With more micro-batches than that, it simulates m' (a multiple of p, at least 2p) and
    adds (m - m') steady-state periods: warm-up and cool-down are the same for m and m', and
    in between the pipeline advances one micro-batch per `steady_pace_s`. Returns the result
    (for m' micro-batches, with end times extrapolated) and m'.
    """
    vv = v if schedule == "interleaved" else 1
    if m * vv * p * 2 <= max_ops or m <= 2 * p or schedule == "gpipe":
        return simulate(schedule, p, m, v, times, p2p_s), m
    m_small = max(2 * p, (max_ops // (2 * vv * p)) // p * p)
    if m_small >= m:
        return simulate(schedule, p, m, v, times, p2p_s), m
    r = simulate(schedule, p, m_small, v, times, p2p_s)
    shift = (m - m_small) * steady_pace_s(times, schedule)
    r.stage_end = [e + shift for e in r.stage_end]
    r.stage_busy = [b * m / m_small for b in r.stage_busy]
    r.last_backward_end = [[e + shift for e in chunks] for chunks in r.last_backward_end]
    return r, m_small
