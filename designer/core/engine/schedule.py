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

from dataclasses import dataclass, field

F, B, W = 0, 1, 2
KIND_NAMES = ("F", "B", "W")


@dataclass
class StageTimes:
    """Durations on one stage, per chunk: forward, backward (input grad, plus weight grad unless
    split), weight grad (only for zero-bubble schedules)."""

    fwd: list[float]
    bwd: list[float]
    wgrad: list[float]


@dataclass
class OpRecord:
    stage: int
    kind: int
    micro: int
    chunk: int
    start: float
    end: float
    wait: float  # idle time before it on its stage
    wait_pp: float  # part of the wait spent on the activation transfer


@dataclass
class ScheduleResult:
    records: list[OpRecord] | None  # filled by the zero-bubble path; else built on demand
    stage_end: list[float]
    stage_busy: list[float]
    last_backward_end: list[list[float]]  # per stage, per chunk: when its last backward finished
    order: list[list[tuple[int, int, int]]] = field(default_factory=list)
    starts: list[list[float]] = field(default_factory=list)  # per stage, per op in `order`
    ends: list[list[float]] = field(default_factory=list)
    ready: list[list[float]] = field(default_factory=list)  # when the op's input had arrived
    transfer: list[list[float]] = field(default_factory=list)

    @property
    def ops(self) -> list[OpRecord]:
        if self.records is None:
            self.records = [op for s in range(len(self.order)) for op in self.stage_ops(s)]
        return self.records

    def stage_ops(self, stage: int) -> list[OpRecord]:
        if self.records is not None:
            return [op for op in self.records if op.stage == stage]
        out, prev = [], 0.0
        for j, (kind, i, c) in enumerate(self.order[stage]):
            start, finish, ready = self.starts[stage][j], self.ends[stage][j], self.ready[stage][j]
            wait = start - prev
            wait_pp = min(wait, self.transfer[stage][j]) if ready > prev else 0.0
            out.append(OpRecord(stage, kind, i, c, start, finish, wait, wait_pp))
            prev = finish
        return out


def op_order(schedule: str, p: int, s: int, m: int, v: int) -> list[tuple[int, int, int]]:
    """(kind, micro-batch, chunk) in the order stage s runs them."""
    if schedule == "gpipe":
        return [(F, i, 0) for i in range(m)] + [(B, i, 0) for i in range(m)]
    if schedule == "interleaved" and v > 1:
        total = m * v

        def virtual(k: int, forward: bool) -> tuple[int, int]:
            group, within = divmod(k, p * v)
            chunk = within // p
            if not forward:
                chunk = v - 1 - chunk
            return group * p + within % p, chunk

        if m == p:
            warmup = total
        else:
            warmup = min((p - s - 1) * 2 + (v - 1) * p, total)
        order = [(F, *virtual(k, True)) for k in range(warmup)]
        f_next, b_next = warmup, 0
        while f_next < total:
            order.append((F, *virtual(f_next, True)))
            f_next += 1
            order.append((B, *virtual(b_next, False)))
            b_next += 1
        while b_next < total:
            order.append((B, *virtual(b_next, False)))
            b_next += 1
        return order
    warmup = min(p - s - 1, m)
    order = [(F, i, 0) for i in range(warmup)]
    f_next, b_next = warmup, 0
    while f_next < m:
        order.append((F, f_next, 0))
        f_next += 1
        order.append((B, b_next, 0))
        b_next += 1
    while b_next < m:
        order.append((B, b_next, 0))
        b_next += 1
    return order  # zero-bubble schedules place their W ops while simulating (see simulate)


_STRUCTURES: dict[tuple, tuple] = {}


def _structure(schedule, p, m, v, orders, oid, dependency):
    """Dependencies of every op, which depend only on (schedule, p, m, v): cached."""
    key = (schedule, p, m, v)
    hit = _STRUCTURES.get(key)
    if hit is None:
        deps, has_transfer, owns, kinds, chunk_of = [], [], [], [], []
        for s in range(p):
            d_s, h_s, o_s = [], [], []
            for kind, i, c in orders[s]:
                dep, _ = dependency(kind, s, i, c)
                d_s.append(dep)
                h_s.append(dep >= 0 and (dep // (m * v)) % p != s)  # crosses a stage boundary
                o_s.append(oid(kind, s, i, c))
            deps.append(d_s)
            has_transfer.append(h_s)
            owns.append(o_s)
            kinds.append([kind for kind, _, _ in orders[s]])
            chunk_of.append([c for _, _, c in orders[s]])
        if len(_STRUCTURES) > 32:
            _STRUCTURES.clear()
        hit = _STRUCTURES[key] = (deps, has_transfer, owns, kinds, chunk_of)
    return hit


_ORDERS: dict[tuple, list] = {}


def _orders(schedule: str, p: int, m: int, v: int) -> list[list[tuple[int, int, int]]]:
    key = (schedule, p, m, v)
    hit = _ORDERS.get(key)
    if hit is None:
        if len(_ORDERS) > 32:
            _ORDERS.clear()
        if schedule in ("zb-h1", "dualpipe"):
            hit = _zero_bubble_orders(p, m)
        else:
            hit = [op_order(schedule, p, s, m, v) for s in range(p)]
        _ORDERS[key] = hit
    return hit


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
    size = 3 * p * m * v
    end = [-1.0] * size  # end time per op id

    def oid(kind: int, s: int, i: int, c: int) -> int:
        return ((kind * p + s) * m + i) * v + c

    def dependency(kind: int, s: int, i: int, c: int) -> tuple[int, float]:
        """(op id it waits for, transfer time), or (-1, 0)."""
        if kind == F:
            if s > 0:
                return oid(F, s - 1, i, c), p2p_s
            if c > 0:
                return oid(F, p - 1, i, c - 1), p2p_s
            return -1, 0.0
        if kind == B:
            if s < p - 1:
                return oid(B, s + 1, i, c), p2p_s
            if c < v - 1:
                return oid(B, 0, i, c + 1), p2p_s
            return oid(F, s, i, c), 0.0
        return oid(B, s, i, c), 0.0

    free = list(start_offset) if start_offset else [0.0] * p
    busy = [0.0] * p
    ptr = [0] * p
    last_b = [[0.0] * v for _ in range(p)]

    def duration_of(s: int, kind: int, c: int) -> float:
        st = times[s]
        if kind == F:
            return st.fwd[c]
        if kind == B:
            return st.bwd[c] - (st.wgrad[c] if zb else 0.0)
        return st.wgrad[c]

    # Every schedule runs a fixed op order per stage (zero-bubble ones: _zero_bubble_orders).
    # The hot loop: flat lists, one visit per op (18k ops of GPT-3 on 1,024 GPUs in ~10 ms).
    deps, has_transfer, owns, kinds, chunk_of = _structure(schedule, p, m, v, orders, oid, dependency)
    trans = [[p2p_s if h else 0.0 for h in hs] for hs in has_transfer]
    durs = []
    for s in range(p):
        durs.append([duration_of(s, kind, c) for kind, c in zip(kinds[s], chunk_of[s])])
    starts = [[0.0] * len(o) for o in orders]
    ready_at = [[0.0] * len(o) for o in orders]
    waiter = [-1] * size
    stack = list(range(p - 1, -1, -1))
    while stack:
        s = stack.pop()
        k_ = ptr[s]
        n_s = len(orders[s])
        d_s, t_s, du_s, o_s, st_s, rd_s = deps[s], trans[s], durs[s], owns[s], starts[s], ready_at[s]
        f = free[s]
        while k_ < n_s:
            d = d_s[k_]
            if d >= 0:
                e = end[d]
                if e < 0:
                    waiter[d] = s
                    break
                r = e + t_s[k_]
                start = r if r > f else f
                rd_s[k_] = r
            else:
                start = f
            st_s[k_] = start
            f = start + du_s[k_]
            o = o_s[k_]
            end[o] = f
            k_ += 1
            w = waiter[o]
            if w >= 0:
                waiter[o] = -1
                stack.append(w)
        ptr[s] = k_
        free[s] = f
    ends = []
    for s in range(p):
        busy[s] = sum(durs[s])
        ends.append([end[o] for o in owns[s]])
        for (kind, i, c), e in zip(orders[s], ends[s]):
            if kind != F and e > last_b[s][c]:
                last_b[s][c] = e
    if any(ptr[s] < len(orders[s]) for s in range(p)):  # pragma: no cover - a schedule bug
        raise RuntimeError("pipeline schedule deadlocked")
    return ScheduleResult(None, free, busy, last_b, orders, starts, ends, ready_at, trans)


def _greedy_zero_bubble(p: int, m: int, times: list[StageTimes], p2p_s: float) -> list[OpRecord]:
    """ZB-H1 run by its greedy rule, only to derive the fixed order (see _zero_bubble_orders)."""
    v = 1
    orders = [op_order("zb-h1", p, s, m, v) for s in range(p)]
    size = 3 * p * m * v
    end = [-1.0] * size

    def oid(kind: int, s: int, i: int, c: int) -> int:
        return ((kind * p + s) * m + i) * v + c

    def dependency(kind: int, s: int, i: int, c: int) -> tuple[int, float]:
        if kind == F:
            return (oid(F, s - 1, i, c), p2p_s) if s > 0 else (-1, 0.0)
        if kind == B:
            return (oid(B, s + 1, i, c), p2p_s) if s < p - 1 else (oid(F, s, i, c), 0.0)
        return oid(B, s, i, c), 0.0

    free = [0.0] * p
    ptr = [0] * p
    waiting: dict[int, int] = {}
    records: list[OpRecord] = []
    pending_w: list[list[tuple[int, int]]] = [[] for _ in range(p)]
    defer = [min(p - s - 1, m) for s in range(p)]  # ZB-H1 keeps the warm-up's W ops for the cool-down

    def run(s: int, kind: int, i: int, c: int, start: float, duration: float, wait: float, wait_pp: float):
        finish = start + duration
        records.append(OpRecord(s, kind, i, c, start, finish, wait, wait_pp))
        me = oid(kind, s, i, c)
        end[me] = finish
        free[s] = finish
        return me

    def duration_of(s: int, kind: int, c: int) -> float:
        st = times[s]
        if kind == F:
            return st.fwd[c]
        if kind == B:
            return st.bwd[c] - st.wgrad[c]
        return st.wgrad[c]

    if True:
        # Event order matters here: a stage with nothing ready runs a deferred W instead of idling.
        import heapq

        heap = [(free[s], s) for s in range(p)]
        heapq.heapify(heap)
        while heap:
            _, s = heapq.heappop(heap)
            order = orders[s]
            if ptr[s] >= len(order):
                if pending_w[s]:
                    i, c = pending_w[s].pop(0)
                    run(s, W, i, c, free[s], duration_of(s, W, c), 0.0, 0.0)
                    heapq.heappush(heap, (free[s], s))
                continue
            kind, i, c = order[ptr[s]]
            dep, transfer = dependency(kind, s, i, c)
            blocked = dep >= 0 and (end[dep] < 0 or end[dep] + transfer > free[s])
            if pending_w[s] and (blocked or len(pending_w[s]) > defer[s]):
                wi, wc = pending_w[s].pop(0)
                run(s, W, wi, wc, free[s], duration_of(s, W, wc), 0.0, 0.0)
                heapq.heappush(heap, (free[s], s))
                continue
            if dep >= 0 and end[dep] < 0:
                waiting[dep] = s
                continue
            ready = end[dep] + transfer if dep >= 0 else 0.0
            start = max(free[s], ready)
            wait = start - free[s]
            wait_pp = min(wait, transfer) if dep >= 0 and ready > free[s] else 0.0
            me = run(s, kind, i, c, start, duration_of(s, kind, c), wait, wait_pp)
            if kind == B:
                pending_w[s].append((i, c))
            ptr[s] += 1
            heapq.heappush(heap, (free[s], s))
            nxt = waiting.pop(me, None)
            if nxt is not None:
                heapq.heappush(heap, (free[nxt], nxt))
    if any(ptr[s] < len(orders[s]) or pending_w[s] for s in range(p)):  # pragma: no cover - a bug
        raise RuntimeError("pipeline schedule deadlocked")
    return records


def ideal_bubble_s(schedule: str, p: int, m: int, v: int, f: float, b: float, w: float) -> float:
    """The schedule's bubble with identical stages (closed form, docs/research/cost-model.md section 4.1).

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
