"""glibc's allocator: one malloc arena for the whole app (set once by the app's start-up, app.py:
set_up_the_process, which says why), and giving free pages back after a big job."""
from __future__ import annotations

import ctypes
import ctypes.util
import sys

M_ARENA_MAX = -8  # mallopt's parameter number (malloc.h)
_done = False
_libc = None


def use_one_arena() -> bool:
    """Limit glibc to one arena (once, before the app's threads allocate); False where there is no glibc."""
    global _done
    if _done or not sys.platform.startswith("linux"):
        return _done
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        _done = bool(libc.mallopt(M_ARENA_MAX, 1))
        global _libc
        _libc = libc if _done else None
    except (OSError, AttributeError):  # musl or another libc: its own allocator, nothing to set
        _done = False
    return _done


def give_back_free_memory() -> float:
    """Hand the pages malloc holds free back to the system (glibc's malloc_trim, after a big job of the
    worker: an evaluation's or an analysis's temporary arrays of a 131k-GPU design leave tens of MB free
    inside the heap, counted as the window's memory until reused). Its seconds; 0 where there is no glibc."""
    if _libc is None:
        return 0.0
    import time

    started = time.perf_counter()
    _libc.malloc_trim(0)
    return time.perf_counter() - started
