"""The one way the window runs work off the UI thread: newest request per kind, cancellable, results
delivered on the UI thread.

A `LatestWorker` owns one daemon thread. Requests come in kinds ("evaluate", "advise", "search",
...); of each kind only the newest request waits: a new one replaces the pending one and makes the
running one unwanted. Kinds run in the order of `kinds`. A request can be cancelled (`cancel`) and
the whole worker stopped (`stop`, when the window closes). Long work asks `wanted()` or calls
`check()` (which raises `Cancelled`) at its progress points, so that it unwinds soon after nobody
waits for it. A subclass says what a request does (`work`) and declares the Qt signals its results
go out on; `emit` sends them, and Qt delivers them on the UI thread. Emits are guarded: once the
receiver is gone (the window closed), the thread ends. The worker needs no Qt parent, so its thread
may outlive the window.
"""
from __future__ import annotations

import threading

from PySide6.QtCore import QObject, Signal

from ...core.problems import DesignerError


class Cancelled(Exception):
    """Raised inside work that nobody waits for any more, to unwind it (see `LatestWorker.check`)."""


def emit_guarded(signal, *args) -> bool:
    """Deliver to the UI thread; False when the window (and the worker's Qt side) is gone."""
    try:
        signal.emit(*args)
        return True
    except RuntimeError:  # "Signal source has been deleted": the window closed meanwhile
        return False


def error_text(exc: Exception) -> str:
    """What a worker shows for a failed job: the problems of bad input, else an internal error."""
    if isinstance(exc, DesignerError):
        return str(exc)
    return f"internal error: {type(exc).__name__}: {exc}"


class LatestWorker(QObject):
    """One thread; of each kind only the newest request waits. Subclasses set `kinds` (in the order
    they run) and `thread_name`, and implement `work(kind, request, *args)`; `prepare()` runs once
    on the thread before the first request (engines that live as long as the thread)."""

    kinds: tuple[str, ...] = ("work",)
    thread_name = "designer-worker"

    def __init__(self, parent=None):
        super().__init__(parent)
        self._lock = threading.Condition()
        self._pending: dict[str, tuple] = {}  # kind -> (request, args)
        self._wanted: dict[str, int] = {}  # kind -> the request still waited for (absent: none)
        self._stop = False
        self._gone = False  # an emit failed: nobody receives any more
        self._thread: threading.Thread | None = None
        self.running: str | None = None  # the kind being worked on now (tests, status)
        self.outcome: dict[str, str] = {}  # kind -> how its last request ended: "done", "cancelled", ...

    # ---- the UI thread's side ----
    def start(self) -> None:
        """Start the thread now (else the first request starts it)."""
        with self._lock:
            self._start_locked()

    def submit(self, kind: str, request: int, *args) -> bool:
        """Ask for `kind` (request number `request`, chosen by the caller); False once stopped."""
        with self._lock:
            if self._stop:
                return False
            self._pending[kind] = (request, args)
            self._wanted[kind] = request  # an older one of this kind is no longer wanted
            self._start_locked()
            self._lock.notify()
            return True

    def cancel(self, kind: str | None = None) -> None:
        """Nobody waits for `kind` (every kind: None) any more: its pending request is dropped, the
        running one is unwanted (it stops at its next `check`)."""
        with self._lock:
            for k in (self.kinds if kind is None else (kind,)):
                self._pending.pop(k, None)
                self._wanted.pop(k, None)

    def stop(self) -> None:
        """No more requests; the thread ends after the running one (whose result is dropped)."""
        with self._lock:
            self._stop = True
            self._pending.clear()
            self._wanted.clear()
            self._lock.notify()

    @property
    def stopped(self) -> bool:
        return self._stop

    @property
    def thread(self) -> threading.Thread | None:
        return self._thread

    @property
    def idle(self) -> bool:
        """Nothing running, nothing pending."""
        with self._lock:
            return self.running is None and not self._pending

    # ---- the worker thread's side ----
    def wanted(self, kind: str, request: int) -> bool:
        """Someone still waits for this request's result."""
        return not self._stop and not self._gone and self._wanted.get(kind) == request

    def check(self, kind: str, request: int) -> None:
        """Raise Cancelled when nobody waits for this request any more (call it at progress points)."""
        if not self.wanted(kind, request):
            raise Cancelled

    def emit(self, signal, *args) -> bool:
        """Send a result to the UI thread; False (and the thread ends) once the receiver is gone."""
        if self._gone or not emit_guarded(signal, *args):
            self._gone = True
            return False
        return True

    def prepare(self) -> None:
        """Runs once on the thread before its first request."""

    def work(self, kind: str, request: int, *args) -> str | None:
        """Do one request (raise Cancelled to unwind it); may return how it ended ("error")."""
        raise NotImplementedError

    def _start_locked(self) -> None:
        if self._thread is None and not self._stop:
            self._thread = threading.Thread(target=self._run, name=self.thread_name, daemon=True)
            self._thread.start()

    def _next(self):
        """The next request, waiting for one; None once stopped."""
        with self._lock:
            while not self._pending and not self._stop:
                self._lock.wait()
            if self._stop:
                return None
            kind = next(k for k in self.kinds if k in self._pending)
            request, args = self._pending.pop(kind)
            self.running = kind
            return kind, request, args

    def _run(self) -> None:
        self.prepare()
        while True:
            job = self._next()
            if job is None:
                return
            kind, request, args = job
            del job
            try:
                outcome = self.work(kind, request, *args) or "done"
            except Cancelled:
                outcome = "cancelled"
            # the request's arguments go before the thread waits again: a snapshot of the document
            # (~40 MB at 131k GPUs) would otherwise live until the next request
            del args
            with self._lock:
                self.running = None
                self.outcome[kind] = outcome
            if self._stop or self._gone:
                return


class CallWorker(LatestWorker):
    """One function call off the UI thread (open, generate, compare): `done` brings back its result
    or its exception; the thread ends after it. `stop()` before it ends drops the result."""

    kinds = ("call",)
    done = Signal(object, object)  # result, exception (on the UI thread)

    def __init__(self, thread_name: str):
        super().__init__()
        self.thread_name = thread_name

    def call(self, function) -> bool:
        return self.submit("call", 1, function)

    def work(self, kind: str, request: int, function) -> None:
        try:
            result, error = function(), None
        except Exception as exc:  # noqa: BLE001 - handed to the receiver on the UI thread
            result, error = None, exc
        self.check(kind, request)  # stopped meanwhile: dropped
        self.emit(self.done, result, error)
        self.stop()
