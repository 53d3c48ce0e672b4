"""Arrows between events of one step: "waited for" and pipeline send -> receive.

Both the desktop timeline (drawn arrows) and the Chrome / Perfetto trace (flow events) take
their arrows from here, so the two always agree.

- A wait points back to the bar it waited on: on the GPU it waited for, the bar (a compute or
  an exposed comm bar) that ended last by the wait's end, the pipeline send lane first on a tie.
- A pipeline send ("send activation F3 c0" on stage s) points to the op that received it: the
  same micro-batch and chunk on the next stage (a forward) or the previous one (a backward), in
  the same replica; its first compute bar (recompute or the pass itself).

Vectorized with numpy: a 16,384-GPU step holds ~300k events and ~100k arrows.
"""
from __future__ import annotations

from operator import attrgetter

import numpy as np

# Lanes a wait may have waited on, in the order preferred on a tie (the trace's WaitedOn rule).
WAITED_ON_LANES = ("pp", "compute", "dp", "tp", "cp", "ep")
SEND_PREFIX = "send "
RECEIVING_KINDS = ("recompute", "forward", "backward")


def _column(events, name: str, dtype) -> np.ndarray:
    return np.fromiter(map(attrgetter(name), events), dtype=dtype, count=len(events))


def _codes(events, name: str) -> tuple[np.ndarray, list[str]]:
    """An attribute of few distinct string values as (code per event, the values)."""
    values = list(map(attrgetter(name), events))
    names = list(dict.fromkeys(values))
    code_of = {v: i for i, v in enumerate(names)}
    return np.fromiter(map(code_of.__getitem__, values), dtype=np.int64, count=len(values)), names


def wait_arrows(events) -> list[tuple[int, int]]:
    """(bar waited on, wait) for each wait that has one, in the order of the waits."""
    n = len(events)
    if not n:
        return []
    stream, streams = _codes(events, "stream")
    kind, kinds = _codes(events, "kind")
    lane_rank = np.array([WAITED_ON_LANES.index(s) if s in WAITED_ON_LANES else -1 for s in streams], dtype=np.int64)
    hidden = np.array([k.endswith("_hidden") for k in kinds], dtype=bool)
    rank = np.where(hidden[kind], -1, lane_rank[stream])
    device = _column(events, "device", np.int64)
    end = _column(events, "end_s", float)
    waited_for = np.fromiter((-1 if w is None else w for w in map(attrgetter("waited_for"), events)),
                             dtype=np.int64, count=n)
    waits = np.flatnonzero(waited_for >= 0)
    candidates = np.flatnonzero(rank >= 0)
    if not len(waits) or not len(candidates):
        return []
    # sorted by (device, end, lane rank, index); one search key: the device's dense rank, then the end
    order = candidates[np.lexsort((candidates, rank[candidates], end[candidates], device[candidates]))]
    devices, dense = np.unique(device[order], return_inverse=True)
    span = float(end.max() - min(0.0, end.min())) * 2 + 2.0
    end_sorted = end[order]
    key = dense.reshape(-1) * span + end_sorted
    target_dense = np.searchsorted(devices, waited_for[waits])
    known = (target_dense < len(devices)) & (devices[np.minimum(target_dense, len(devices) - 1)] ==
                                              waited_for[waits])
    t = end[waits]
    t = t + np.maximum(1e-9, 1e-9 * np.abs(t))
    lo = np.searchsorted(key, target_dense * span, side="left")
    k = np.searchsorted(key, target_dense * span + t, side="right") - 1
    ok = known & (k >= lo)
    waits, k, lo = waits[ok], k[ok], lo[ok]
    source = order[k]
    # a tie (bars ending together): the lane first in WAITED_ON_LANES, then the first event
    last = end_sorted[k]
    tied = (k - 1 >= lo) & (np.abs(end_sorted[np.maximum(k - 1, 0)] - last) <= 1e-9 * np.maximum(1.0, np.abs(last)))
    for i in np.flatnonzero(tied).tolist():
        j, first, best = int(k[i]), int(lo[i]), (rank[order[k[i]]], order[k[i]])
        while j - 1 >= first and abs(end_sorted[j - 1] - last[i]) <= 1e-9 * max(1.0, abs(last[i])):
            j -= 1
            best = min(best, (rank[order[j]], order[j]))
        source[i] = best[1]
    return list(zip(source.tolist(), waits.tolist()))


def send_receive_arrows(events, devices: dict) -> list[tuple[int, int]]:
    """(send, the first compute bar of the op that received it) per pipeline send."""
    n = len(events)
    place_of = {}  # device -> (replica, stage)
    for d, info in (devices or {}).items():
        if "stage" in info:
            place_of[int(d)] = (int(info.get("replica", 0)), int(info["stage"]))
    if not n or not place_of:
        return []
    device_at = {place: d for d, place in place_of.items()}
    stream, streams = _codes(events, "stream")
    kind, kinds = _codes(events, "kind")
    receiving_kind = np.array([k in RECEIVING_KINDS for k in kinds], dtype=bool)
    hidden = np.array([k.endswith("_hidden") for k in kinds], dtype=bool)
    is_compute = stream == (streams.index("compute") if "compute" in streams else -1)
    is_pp = stream == (streams.index("pp") if "pp" in streams else -1)
    picked = np.flatnonzero((is_compute & receiving_kind[kind]) | (is_pp & ~hidden[kind]))
    ev = [events[i] for i in picked.tolist()]
    labels = list(map(attrgetter("label"), ev))
    is_send = is_pp[picked] & np.fromiter((label.startswith(SEND_PREFIX) for label in labels), dtype=bool,
                                          count=len(ev))
    # the op a bar belongs to is named in its label: "B3 c0", "send gradient B3 c0"
    backward = np.fromiter(((label.rsplit(" ", 2)[-2] if send else label)[:1] == "B"
                            for label, send in zip(labels, is_send.tolist())), dtype=bool, count=len(ev))
    device = _column(ev, "device", np.int64)
    micro = _column(ev, "micro_batch", np.int64)
    chunk = _column(ev, "chunk", np.int64)
    start = _column(ev, "start_s", float)
    # where a send's op goes: the next stage for a forward, the previous for a backward
    shown = np.array(sorted(place_of), dtype=np.int64)
    next_of = np.array([device_at.get((place_of[d][0], place_of[d][1] + 1), -1) for d in shown.tolist()])
    prev_of = np.array([device_at.get((place_of[d][0], place_of[d][1] - 1), -1) for d in shown.tolist()])
    at = np.minimum(np.searchsorted(shown, device), len(shown) - 1)
    known = shown[at] == device
    target = np.where(known, np.where(backward, prev_of[at], next_of[at]), -1)
    m = int(max(micro.max(), 0)) + 2
    c = int(max(chunk.max(), 0)) + 2

    def key(dev, back, mb, ch):
        return ((dev * 2 + back) * m + (mb + 1)) * c + (ch + 1)

    receivers = np.flatnonzero(~is_send)
    receivers = receivers[np.lexsort((start[receivers], key(device[receivers], backward[receivers],
                                                            micro[receivers], chunk[receivers])))]
    rkeys = key(device[receivers], backward[receivers], micro[receivers], chunk[receivers])
    sends = np.flatnonzero(is_send & (target >= 0))
    skeys = key(target[sends], backward[sends], micro[sends], chunk[sends])
    at = np.searchsorted(rkeys, skeys, side="left")  # the first (earliest) bar of that op
    found = at < len(rkeys)
    found[found] = rkeys[at[found]] == skeys[found]
    return list(zip(picked[sends[found]].tolist(), picked[receivers[at[found]]].tolist()))


def arrow_pairs(events, devices: dict):
    """Every arrow as (kind, from event, to event); kind is "wait" or "pp"."""
    for source, target in wait_arrows(events):
        yield "wait", source, target
    for source, target in send_receive_arrows(events, devices):
        yield "pp", source, target
