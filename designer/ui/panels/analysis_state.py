"""What one off-thread analysis of the Advisor knows: the request it waits for, whether it runs, and
what it last showed (a result or an error) for which revision of the design.

The Advisor runs several analyses (the advice report, the scaling curve, the plan search), each
with the same life: a request goes to a worker thread, edits bump the panel's revision meanwhile,
and the answer comes back later, maybe for a request nobody waits for any more, maybe for a
design that has changed since. `AnalysisState.receive` decides once, the same way for all of
them, what such an answer means, so that a stale answer is never shown as current and every
answer (an error too) ends the busy state. No Qt: the rules are tested as plain Python.
"""
from __future__ import annotations

from enum import Enum


class Answer(Enum):
    """What `receive` made of an answer."""

    SUPERSEDED = "superseded"  # for an older (or cancelled) request: ignore it, still busy with the newer one
    OUTDATED = "outdated"  # for the request waited for, but the design changed while it ran: dropped
    ERROR = "error"  # the design cannot be analysed (as it is now): show why
    RESULT = "result"  # a result for the design as it is now: show it


class AnalysisState:
    """One analysis: `request` (the newest asked for), `busy`, `result` or `error` and the `revision`
    of the design they were computed for."""

    def __init__(self, name: str):
        self.name = name  # "advise", "scale", "search": the worker's kind, the status line's word
        self.request = 0  # the newest request; answers to any other are superseded
        self.busy = False
        self.result = None  # the result shown (kept, marked stale, after edits)
        self.revision = -1  # the revision `result` is for (-1: none)
        self.error: str | None = None  # why the design could not be analysed
        self.error_revision = -1

    def start(self) -> int:
        """A new request: the one answer now wanted. Returns its number for the worker."""
        self.request += 1
        self.busy = True
        return self.request

    def cancel(self) -> None:
        """Nobody waits any more: the running request's answer, when it comes, is superseded."""
        self.request += 1
        self.busy = False

    def receive(self, request: int, revision: int, current_revision: int, result, error: str | None) -> Answer:
        """Take an answer computed for `revision` while the design is at `current_revision`."""
        if request != self.request or not self.busy:
            return Answer.SUPERSEDED
        self.busy = False
        if revision != current_revision:  # what is shown stays, marked stale; never this old answer
            return Answer.OUTDATED
        if error:
            self.error, self.error_revision = error, revision
            self.result, self.revision = None, -1
            return Answer.ERROR
        self.error, self.error_revision = None, -1
        self.result, self.revision = result, revision
        return Answer.RESULT

    def stale(self, current_revision: int) -> bool:
        """A result is shown, computed for an older version of the design."""
        return self.result is not None and self.revision != current_revision

    def current(self, current_revision: int):
        """The result if it is for the design as it is now, else None."""
        return self.result if self.result is not None and self.revision == current_revision else None

    def settled(self, current_revision: int) -> bool:
        """Nothing to do for this revision: its result or its error is in."""
        return self.current(current_revision) is not None or \
            (self.error is not None and self.error_revision == current_revision)
