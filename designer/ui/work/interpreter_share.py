"""The window's thread's share of the interpreter while other threads compute.

Reading a file, planning a big canvas, checking and evaluating run on threads of their own, but
Python runs one thread at a time: a thread that wants the interpreter waits up to the switch
interval (5 ms by default) before the running one is made to let go. The window's thread asks
again at every Python handler and every Python-drawn item of a repaint, so each repaint during a
16,384-GPU open waited many times 5 ms: the window stalled 220-230 ms; at 0.5 ms, 140-150 ms
(benchmarks/bench_live.py, this machine). The price is more switches between the working threads.
"""
from __future__ import annotations

import sys

UI_SWITCH_INTERVAL_S = 0.0005  # sys.setswitchinterval for a process with a window


def share_the_interpreter(interval_s: float = UI_SWITCH_INTERVAL_S) -> None:
    if sys.getswitchinterval() > interval_s:
        sys.setswitchinterval(interval_s)
