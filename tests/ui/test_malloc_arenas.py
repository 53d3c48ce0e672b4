"""The window limits glibc to one malloc arena (designer/ui/work/malloc_arenas.py): what a thread frees is
reused by the others, so a big open in threads peaks lower."""
from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's arenas")
def test_threads_share_one_arena_once_the_window_module_is_used():
    # a fresh process: 4 threads each allocate; with one arena malloc_info lists a single heap
    script = r"""
import ctypes, threading, tempfile, os
from designer.ui.work.malloc_arenas import use_one_arena
assert use_one_arena()
keep = []
def work():
    keep.append([bytearray(200) for _ in range(20000)])
threads = [threading.Thread(target=work) for _ in range(4)]
[t.start() for t in threads]; [t.join() for t in threads]
libc = ctypes.CDLL("libc.so.6")
libc.fdopen.restype = ctypes.c_void_p
path = tempfile.mktemp()
fd = os.open(path, os.O_WRONLY | os.O_CREAT)
f = libc.fdopen(fd, b"w")
libc.malloc_info(0, ctypes.c_void_p(f))
libc.fclose(ctypes.c_void_p(f))
print(open(path).read().count("<heap nr="))
os.remove(path)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip()) == 1
