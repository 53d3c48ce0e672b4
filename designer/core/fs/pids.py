"""Whether a process id still names a running process (to tell a crashed writer's leftovers)."""
from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """True when a process with this id runs (or when that cannot be told: keep its files)."""
    if pid <= 0:
        return False
    if os.name == "nt":  # os.kill(pid, 0) would terminate it there; Designer's files then age out
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: another user's process
        return True
    return True
