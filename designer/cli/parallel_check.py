"""`designer evaluate` as a program on a large design: the design's check runs in a forked copy of
the process while this one evaluates the step, each on its own core.

The check (0.1 s at 16k GPUs, 0.7 s at 131k) and the evaluation read the same loaded design and
nothing of each other, and the evaluation is printed only when the check finds no error. So:
- the child checks and sends its errors back (pickled, through a pipe); when it finds any, it first
  interrupts this process (SIGUSR1), so that the engine never runs on long on a design the check
  refuses, and the errors are reported exactly as when the check runs first;
- this process waits for the child's answer before it prints anything; when the evaluation fails,
  it reports the check's errors if there are any (as the check run first would have), else the failure;
- no fork on this system, a small design (a check of a few ms), no free core (the copy costs CPU
  on both sides) or a child that gives no answer: the check runs here, as before.
Only as a program (main() without argv), where nothing else shares the process: no threads (one
BLAS thread, cli._one_blas_thread), no handlers of SIGUSR1 of anyone else's.
"""
from __future__ import annotations

import os
import pickle
import signal
import sys
from typing import Callable

# Below this many racks, servers, switches and links the check takes a few ms: not worth a fork.
MIN_ELEMENTS = 5000


class CheckFailed(BaseException):
    """The child found errors (its signal). A BaseException: no `except Exception` on the way out of
    the engine holds it up."""


class _Interrupts:
    armed = False


def _on_signal(signum, frame) -> None:
    if _Interrupts.armed:
        raise CheckFailed


def forks(doc) -> bool:
    """True on a system that forks, for a large design, when a core is free: the copy costs both
    sides (pages written after the fork are copied: the check takes 40 % more CPU in the child), which
    only a second core turns into less time."""
    if not (sys.platform.startswith("linux") and hasattr(os, "fork")):
        return False
    if len(doc.racks) + len(doc.nodes) + len(doc.switches) + len(doc.links) < MIN_ELEMENTS:
        return False
    try:
        cores = len(os.sched_getaffinity(0))
        with open("/proc/loadavg") as fh:  # "0.52 0.61 0.70 2/180 4242": 2 tasks runnable now, this one too
            others = int(fh.read().split()[3].split("/")[0]) - 1
    except (AttributeError, OSError, ValueError, IndexError):
        return False
    return others <= cores - 2  # a core left for the child (the 1-minute average lags: it would count
    # a benchmark's own previous runs)


def evaluate_while_checking(doc, evaluate: Callable, check_errors: Callable, report: Callable):
    """evaluate(doc), with check_errors(doc) (the check's errors, a list) run beside it when this
    system forks and the design is large; report(errors) raises them (it never returns)."""
    pending = None
    if forks(doc):
        _parse_link_ends(doc)  # before the fork: both sides read this parse (the check, the engine's fabric)
        pending = _start(lambda: check_errors(doc))
    if pending is None:
        errors = check_errors(doc)
        if errors:
            report(errors)
        return evaluate(doc)
    try:
        try:
            _Interrupts.armed = True
            result = evaluate(doc)
        finally:
            _Interrupts.armed = False
    except CheckFailed:
        result = None
    except KeyboardInterrupt:
        pending.abandon()
        raise
    except BaseException:
        errors = pending.errors()
        if errors is None:  # no answer from the child: the check here decides, as before
            errors = check_errors(doc)
        if errors:
            report(errors)
        raise
    errors = pending.errors()
    if errors is None:
        errors = check_errors(doc)
    if errors:
        report(errors)
    if result is None:  # interrupted, yet no error reached us: evaluate as if checked first
        result = evaluate(doc)
    return result


def _parse_link_ends(doc) -> None:
    """The links' ends parsed into the memo both sides read (model/endpoints.py): a quarter of the
    check at 131k GPUs, which the engine would otherwise repeat on its side."""
    from operator import attrgetter

    from ..core.model.endpoints import parse_endpoints

    node_ids = list(map(attrgetter("id"), doc.nodes))
    switch_ids = list(map(attrgetter("id"), doc.switches))
    for side in ("a", "b"):
        parse_endpoints(list(map(attrgetter(side), doc.links)), node_ids, switch_ids)


class _Pending:
    def __init__(self, pid: int, fd: int, old_handler) -> None:
        self.pid, self.fd, self.old_handler = pid, fd, old_handler

    def abandon(self) -> None:
        """Stop the child and forget its answer (the user interrupted)."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        os.close(self.fd)
        os.waitpid(self.pid, 0)
        signal.signal(signal.SIGUSR1, self.old_handler)

    def errors(self) -> list | None:
        """The child's errors, once it has sent them all; None when it gave no answer."""
        chunks = []
        try:
            while True:
                chunk = os.read(self.fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            os.close(self.fd)
            _, status = os.waitpid(self.pid, 0)
            signal.signal(signal.SIGUSR1, self.old_handler)
        if status != 0 or not chunks:
            return None
        try:
            return pickle.loads(b"".join(chunks))
        except Exception:  # a torn answer: the check here decides
            return None


def _start(errors_of: Callable) -> _Pending | None:
    """The child that computes errors_of() and sends them back; None when it cannot be started."""
    read_fd, write_fd = os.pipe()
    parent = os.getpid()
    old_handler = signal.signal(signal.SIGUSR1, _on_signal)
    try:
        pid = os.fork()
    except OSError:
        os.close(read_fd)
        os.close(write_fd)
        signal.signal(signal.SIGUSR1, old_handler)
        return None
    if pid == 0:  # the child: never returns, never writes but to the pipe
        code = 1
        try:
            os.close(read_fd)
            signal.signal(signal.SIGUSR1, signal.SIG_DFL)
            errors = errors_of()
            data = pickle.dumps(errors)
            if errors:
                os.kill(parent, signal.SIGUSR1)  # before writing: a full pipe would wait for the reader
            view = memoryview(data)
            while view:
                view = view[os.write(write_fd, view):]
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)
    return _Pending(pid, read_fd, old_handler)
