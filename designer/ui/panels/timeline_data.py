"""What the Timeline draws from one result, computed without Qt so that it can be built off the UI thread.

A long interleaved pipeline has ~73k events at 1,024 GPUs: reading them into columns and finding
their arrows takes ~200 ms of Python. The engine worker builds this (worker.py) after the step time
is on screen, so the UI thread only slices numpy arrays. It is kept on the result itself, once per
result; the panel builds it on the spot for a result that has none (tests, exports, the compare dialog).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.export.flows import send_receive_arrows, wait_arrows

ATTRIBUTE = "_timeline_data"  # on the Evaluation (a plain dataclass: it takes a new attribute)


@dataclass(frozen=True)
class EventColumns:
    start: np.ndarray
    end: np.ndarray
    device: np.ndarray
    stream: np.ndarray  # code into streams
    streams: list[str]
    code: np.ndarray  # code into kinds
    kinds: list[str]

    def as_tuple(self) -> tuple:
        return self.start, self.end, self.device, self.stream, self.streams, self.code, self.kinds


@dataclass(frozen=True)
class TimelineData:
    events: list  # the result's events these columns were read from
    columns: EventColumns
    arrow_kinds: np.ndarray  # 0: wait -> bar waited on, 1: pipeline send -> receive
    arrow_sources: np.ndarray
    arrow_targets: np.ndarray
    waited_on: dict  # wait event -> the bar it waited on


def event_columns(events) -> EventColumns:
    n = len(events)
    start = np.fromiter((e.start_s for e in events), dtype=float, count=n)
    end = np.fromiter((e.end_s for e in events), dtype=float, count=n)
    device = np.fromiter((e.device for e in events), dtype=np.int64, count=n)
    streams = list(dict.fromkeys(e.stream for e in events))
    stream_of = {k: i for i, k in enumerate(streams)}
    stream = np.fromiter((stream_of[e.stream] for e in events), dtype=np.int64, count=n)
    kinds = [e.kind for e in events]
    names = list(dict.fromkeys(kinds))
    code_of = {k: i for i, k in enumerate(names)}
    code = np.fromiter((code_of[k] for k in kinds), dtype=np.int64, count=n)
    return EventColumns(start, end, device, stream, streams, code, names)


def timeline_data(result) -> TimelineData:
    """The result's timeline data, built on first use (any thread) and kept on the result."""
    data = result.__dict__.get(ATTRIBUTE)
    if data is not None:
        return data
    events = result.events
    waits = wait_arrows(events)
    sends = send_receive_arrows(events, result.devices)
    kinds = np.array([0] * len(waits) + [1] * len(sends), dtype=np.int64)
    pairs = np.array(waits + sends, dtype=np.int64).reshape(-1, 2)
    data = TimelineData(events, event_columns(events), kinds, pairs[:, 0], pairs[:, 1], {b: a for a, b in waits})
    result.__dict__[ATTRIBUTE] = data
    return data


def has_timeline_data(result) -> bool:
    return result is not None and ATTRIBUTE in result.__dict__
