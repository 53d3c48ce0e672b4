"""Whole-column work done in parts of a fixed size, with the same result as done at once.

One C call over a column of a big design (np.fromiter of a map, list of a map, ndarray.tolist over 295k
links) holds the interpreter for tens of ms: a worker thread doing it keeps the window's thread, which
wants the interpreter for a paint, waiting that long. Between parts the interpreter may switch threads.
"""

from __future__ import annotations

from itertools import islice, repeat

import numpy as np

# items handled in one C call: ~2-4 ms of a column's work at a time
PART_ITEMS = 32768


def part_starts(count: int) -> range:
    """Where each part of `count` items starts."""
    return range(0, count, PART_ITEMS)


def array_in_parts(function, items, dtype, *more) -> np.ndarray:
    """np.fromiter(map(function, items, *more), dtype, len(items)), a part at a time (`more`: iterables
    read in step with `items`, such as itertools.repeat; each is read on from where the last part left);
    function None: np.fromiter(items, dtype, len(items))."""
    made = np.empty(len(items), dtype)
    rest = iter(items)  # parts read from one iterator: a slice would copy (and count a reference to) each
    for start in part_starts(len(items)):
        size = min(PART_ITEMS, len(items) - start)
        part = islice(rest, size)
        values = part if function is None else map(function, part, *more)
        made[start:start + size] = np.fromiter(values, dtype, size)
    return made


def list_in_parts(function, items) -> list:
    """list(map(function, items)), a part at a time."""
    made: list = []
    rest = iter(items)
    for _ in part_starts(len(items)):
        made += map(function, islice(rest, PART_ITEMS))
    return made


def tolist_in_parts(array: np.ndarray) -> list:
    """array.tolist() of a one-dimensional array, a part at a time."""
    made: list = []
    for start in part_starts(len(array)):
        made += array[start:start + PART_ITEMS].tolist()
    return made


def texts_array(texts: list) -> np.ndarray:
    """np.array(texts) of a non-empty list, a part at a time when all are strings (the width of the
    longest, at least 1); at once otherwise (a mix of kinds makes one dtype of them all)."""
    width, rest = 1, iter(texts)
    for _ in part_starts(len(texts)):
        part = list(islice(rest, PART_ITEMS))
        if not all(map(isinstance, part, repeat(str))):
            return np.array(texts)
        width = max(width, max(map(len, part)))
    return array_in_parts(None, texts, f"<U{width}")

