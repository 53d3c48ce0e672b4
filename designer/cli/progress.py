"""Progress of long command-line work on stderr: only when stderr is a terminal.

`designer advise` at 131k GPUs runs for a minute; a person at a terminal sees which phase it is
in, how far a count has got and the seconds so far, redrawn on one line. A pipe, a file or a
test's captured stream stays quiet (scripts read stderr for warnings and errors only). The line
is erased when the work ends, so what the command prints afterwards starts on a clean line.
"""
from __future__ import annotations

import sys
import threading
import time


def is_terminal(stream) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):  # a closed or detached stream
        return False


class Progress:
    """`with Progress("advise") as p: p.phase("loading"); p.count(3, 40, "changes")`."""

    def __init__(self, command: str, stream=None, interval_s: float = 0.5):
        self.command = command
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = is_terminal(self.stream)
        self.interval_s = interval_s
        self._text = ""
        self._t0 = time.monotonic()
        self._width = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def __enter__(self) -> Progress:
        if self.enabled:  # redraw the elapsed seconds while a phase runs without reporting
            self._ticker = threading.Thread(target=self._tick, name="cli-progress", daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        self.clear()

    def clear(self) -> None:
        """Erase the line (before a warning or an error is printed on stderr)."""
        self._text = ""
        if self.enabled and self._width:
            with self._lock:
                self._write("\r" + " " * self._width + "\r")
                self._width = 0

    def phase(self, text: str) -> None:
        if not text:
            self.clear()
            return
        self._text = text
        self._draw()

    def count(self, done: int, total: int | None = None, what: str = "") -> None:
        """'12 of 40 changes costed'."""
        of = f" of {total:,}" if total else ""
        self.phase(f"{done:,}{of} {what}".strip())

    # a callback of the form the analyses take: progress(done, total)
    def counter(self, what: str):
        return lambda done, total=None: self.count(done, total, what)

    def _tick(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._draw()

    def _draw(self) -> None:
        if not self.enabled or not self._text:
            return
        line = f"{self.command}: {self._text} ({time.monotonic() - self._t0:.0f} s)"
        with self._lock:
            pad = " " * max(0, self._width - len(line))
            self._write("\r" + line + pad)
            self._width = len(line)

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: progress is not worth a failure
            self.enabled = False
