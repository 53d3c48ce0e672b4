"""The cyclic garbage collector paused around work that makes many objects and no cyclic garbage.

Building a long pipeline's 73k timeline events or evaluating a large design makes objects by the
ten thousand; each batch of them sets off a collection that walks every object alive (the whole
design too). At 1,024 GPUs that tripled the events' time (250 -> 780 ms) and, since a collection
holds the GIL throughout, stalled the window's thread for up to 330 ms. Nothing made inside is a
cycle, so nothing waits for the collector; it resumes afterwards.

Thread-safe enough: a pause that finds the collector already paused (another thread's) leaves it
to that thread to resume, so the collector is never left off.
"""
from __future__ import annotations

import contextlib
import gc


@contextlib.contextmanager
def collector_paused():
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
