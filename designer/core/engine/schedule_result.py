"""What a simulated pipeline schedule gives back: each stage's op times and the records, starts and
waits worked out from them when a caller asks (the breakdown's critical stage, the timeline)."""
from __future__ import annotations

from collections.abc import Sequence
from functools import reduce
from operator import add

import numpy as np


F, B, W = 0, 1, 2
KIND_NAMES = ("F", "B", "W")


class StageTimes:
    """Durations on one stage, per chunk: forward, backward (input grad, plus weight grad unless
    split), weight grad (only for zero-bubble schedules)."""

    fwd: list[float]
    bwd: list[float]
    wgrad: list[float]

    __slots__ = ("fwd", "bwd", "wgrad")

    def __init__(self, fwd: list[float], bwd: list[float], wgrad: list[float]) -> None:
        self.fwd = fwd
        self.bwd = bwd
        self.wgrad = wgrad


class OpRecord:
    """One op (forward, backward or weight gradient) of a micro-batch on a pipeline stage: when it ran and its wait."""
    stage: int
    kind: int
    micro: int
    chunk: int
    start: float
    end: float
    wait: float  # idle time before it on its stage
    wait_pp: float  # part of the wait spent on the activation transfer

    __slots__ = ("stage", "kind", "micro", "chunk", "start", "end", "wait", "wait_pp")

    def __init__(self, stage: int, kind: int, micro: int, chunk: int, start: float, end: float, wait: float,
                 wait_pp: float) -> None:
        self.stage = stage
        self.kind = kind
        self.micro = micro
        self.chunk = chunk
        self.start = start
        self.end = end
        self.wait = wait
        self.wait_pp = wait_pp


class ScheduleResult:
    """The simulated pipeline schedule of one step: when each stage's ops ended and how busy it was."""
    records: list[OpRecord] | None  # filled by the zero-bubble path; else built on demand
    stage_end: list[float]
    stage_busy: list[float]
    last_backward_end: list[list[float]]  # per stage, per chunk: when its last backward finished
    order: Sequence[list[tuple[int, int, int]]]  # per stage (a list, or _StageOrders)
    ends: list[list[float]]  # per stage, per op in `order`
    # what the starts, arrivals and transfers of a stage's ops are worked out from when asked
    # (see stage_timing): only the breakdown's critical stage needs them in a plan search
    timing: tuple | None
    codes: Sequence[list[int]]  # per stage, per op: kind * chunks + chunk
    chunks: int  # model chunks per stage the schedule ran (v of an interleaved one, else 1)
    # stage -> its OpRecords: a plan search re-reads the critical stage of a reused schedule
    _stage_ops: dict
    _stage_timing: dict

    __slots__ = ("records", "stage_end", "stage_busy", "last_backward_end", "order", "ends", "timing", "codes",
                 "chunks", "_stage_ops", "_stage_timing")

    def __init__(self, records: list[OpRecord] | None, stage_end: list[float], stage_busy: list[float],
                 last_backward_end: list[list[float]], order: Sequence[list[tuple[int, int, int]]] | None = None,
                 ends: list[list[float]] | None = None, timing: tuple | None = None,
                 codes: Sequence[list[int]] | None = None, chunks: int = 1) -> None:
        self.records = records
        self.stage_end = stage_end
        self.stage_busy = stage_busy
        self.last_backward_end = last_backward_end
        self.order = [] if order is None else order
        self.ends = [] if ends is None else ends
        self.timing = timing
        self.codes = [] if codes is None else codes
        self.chunks = chunks
        self._stage_ops = {}
        self._stage_timing = {}

    @property
    def ops(self) -> list[OpRecord]:
        if self.records is None:
            self.records = [op for s in range(len(self.order)) for op in self.stage_ops(s)]
        return self.records

    def stage_timing(self, stage: int) -> tuple[list[float], list[float], list[float]]:
        """Per op of `stage`: its start, when its input had arrived (0.0 without one) and its
        input's transfer time. The same floats the simulation's loop compared: each op starts
        at the later of its stage's previous end and its input's arrival."""
        hit = self._stage_timing.get(stage)
        if hit is None:
            end, crosses, prevs, deps, offsets, _, p2p_s = self.timing
            a = offsets[stage]
            b = a + len(self.order[stage])
            trans = np.where(crosses[a:b], p2p_s, 0.0).tolist()
            starts, ready = [], []
            for f_slot, d, t in zip(prevs[a:b].tolist(), deps[a:b].tolist(), trans):
                f = end[f_slot]
                if d >= 0:
                    r = end[d] + t
                    ready.append(r)
                    starts.append(r if r > f else f)
                else:
                    ready.append(0.0)
                    starts.append(f)
            hit = self._stage_timing[stage] = (starts, ready, trans)
        return hit

    def stage_waits_pp(self, stage: int) -> list[float]:
        """Per op of `stage`: the part of its wait spent on its input's transfer (OpRecord.wait_pp)."""
        if self.records is not None:
            return [op.wait_pp for op in self.records if op.stage == stage]
        starts, ready, transfer = self.stage_timing(stage)
        ends = self.ends[stage]
        # the wait before each op is its start minus the previous op's end (0.0 before the first)
        return [(t if t < start - prev else start - prev) if r > prev else 0.0  # min(wait, transfer), as min() picks
                for start, r, t, prev in zip(starts, ready, transfer, [0.0] + ends[:-1])]

    def stage_transfer_wait_s(self, stage: int) -> float:
        """The sum of stage_waits_pp(stage), in op order, worked on arrays: the same elementwise
        floats, added one after the other (np.add.accumulate is a running sum, never pairwise)."""
        if self.records is not None or self.timing is None:
            return reduce(add, self.stage_waits_pp(stage), 0.0)
        hit = self._stage_timing.get(("wait", stage))
        if hit is None:
            hit = self._stage_timing[("wait", stage)] = self._transfer_wait_s(stage)
        return hit

    def _transfer_wait_s(self, stage: int) -> float:
        end, _, _, _, _, arrays, p2p_s = self.timing
        if arrays[stage] is None:
            return 0.0
        pick, doubles, has_dep, crosses, _, _ = arrays[stage]
        # the picked floats packed as doubles and read as an array: twice as fast as np.fromiter,
        # which takes them one by one (the same numbers, bit for bit)
        picked = np.frombuffer(doubles.pack(*pick(end)))
        n = len(picked) // 2
        f = picked[:n]  # the previous op's end on the stage (the stage's start offset for the first)
        # (None: every op's input crosses, every op has one; the same floats as the masks of all True give)
        transfer = p2p_s if crosses is None else np.where(crosses, p2p_s, 0.0)
        r = picked[n:] + transfer  # the input's arrival
        start = np.where(r > f, r, f)
        ready = r if has_dep is None else np.where(has_dep, r, 0.0)
        # the previous op's end (0.0 before the first): what each op's stage was free at, but the first's
        prev = f.copy()
        prev[0] = 0.0
        wait = start - prev
        wait_pp = np.where(ready > prev, np.where(transfer < wait, transfer, wait), 0.0)
        return 0.0 + float(np.add.accumulate(wait_pp)[-1])  # 0.0 +: a sum that starts from 0.0

    def stage_codes(self, stage: int) -> list[int]:
        """The distinct kind * chunks + chunk of the ops of `stage`, in order."""
        if self.timing is not None:
            arrays = self.timing[5][stage]
            return [] if arrays is None else arrays[5]
        return sorted(set(self.codes[stage]))

    def stage_op_sums(self, stage: int, per_code: np.ndarray) -> np.ndarray:
        """Per row of `per_code` (rows of values by kind * chunks + chunk): the sum over the ops of
        `stage`, in op order, of each op's value (a running sum, as adding them one at a time)."""
        if self.timing is not None:
            arrays = self.timing[5][stage]
            codes = None if arrays is None else arrays[4]
        else:
            codes = np.array(self.codes[stage], np.int64) if self.codes[stage] else None
        if codes is None:
            return np.zeros(len(per_code))
        # the ops' rows (a row per op, a column per row of per_code) added down the columns: each
        # column's running sum is the row's, and whole rows are taken and added at a time
        return 0.0 + np.add.accumulate(np.ascontiguousarray(per_code.T).take(codes, axis=0), axis=0)[-1]

    def stage_ops(self, stage: int) -> list[OpRecord]:
        if self.records is not None:
            return [op for op in self.records if op.stage == stage]
        hit = self._stage_ops.get(stage)
        if hit is None:
            starts, _, _ = self.stage_timing(stage)
            ends = self.ends[stage]
            hit = self._stage_ops[stage] = [
                OpRecord(stage, kind, i, c, start, finish, start - prev, wait_pp)
                for (kind, i, c), start, finish, prev, wait_pp
                in zip(self.order[stage], starts, ends, [0.0] + ends[:-1], self.stage_waits_pp(stage))]
        return list(hit)

