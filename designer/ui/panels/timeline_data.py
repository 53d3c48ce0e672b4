"""What the Timeline draws from one result, computed without Qt so that it can be built off the UI thread.

A long interleaved pipeline has ~73k events at 1,024 GPUs: reading them into columns and finding
their arrows takes ~200 ms of Python. The engine worker builds this (worker.py) after the step time
is on screen and hands it to the panel with the result, so the UI thread only slices numpy arrays;
the panel builds it on the spot for a result shown without it (tests, exports, the compare dialog).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.export.flows import send_receive_arrows, wait_arrows

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

    def same_as(self, other: EventColumns) -> bool:
        """The same bars: compared column by column in numpy (no event read)."""
        return (self.streams == other.streams and self.kinds == other.kinds
                and all(np.array_equal(a, b) for a, b in ((self.start, other.start), (self.end, other.end),
                                                         (self.device, other.device), (self.stream, other.stream),
                                                         (self.code, other.code))))


@dataclass(frozen=True)
class TimelineData:
    events: list  # the result's events these columns were read from
    columns: EventColumns
    arrow_kinds: np.ndarray  # 0: wait -> bar waited on, 1: pipeline send -> receive
    arrow_sources: np.ndarray
    arrow_targets: np.ndarray
    waited_on: dict  # wait event -> the bar it waited on

    def same_as(self, other: TimelineData) -> bool:
        """The same bars and arrows (what the panel draws of them)."""
        return (self.columns.same_as(other.columns) and np.array_equal(self.arrow_kinds, other.arrow_kinds)
                and np.array_equal(self.arrow_sources, other.arrow_sources)
                and np.array_equal(self.arrow_targets, other.arrow_targets))


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
    """The result's events as columns, with their arrows (any thread)."""
    return timeline_data_of(result.events, result.devices)


def timeline_data_of(events, devices) -> TimelineData:
    """`events` as columns, with the arrows of their waits and pipeline sends."""
    waits = wait_arrows(events)
    sends = send_receive_arrows(events, devices)
    kinds = np.array([0] * len(waits) + [1] * len(sends), dtype=np.int64)
    pairs = np.array(waits + sends, dtype=np.int64).reshape(-1, 2)
    return TimelineData(events, event_columns(events), kinds, pairs[:, 0], pairs[:, 1], {b: a for a, b in waits})
