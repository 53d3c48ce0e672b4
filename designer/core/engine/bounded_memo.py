"""Memos of a bounded size, shared by the engine's threads (the window's evaluation, timeline and
link-load threads read the same module-level memos): the oldest entry goes first."""
from __future__ import annotations


def remember(memo: dict, key, value, most: int):
    """memo[key] = value, the oldest entry dropped first once `most` are held; returns `value`.
    Iterates a copy and drops a key only if still there, so another thread doing the same at
    once cannot make it fail."""
    if len(memo) >= most:
        memo.pop(next(iter(memo.copy()), None), None)
    memo[key] = value
    return value
