"""Change notification without Qt: the document calls its listeners after each edit.

The UI wraps this in a Qt signal (one adapter object); the core stays free of Qt.
Edits made inside `Document.batch()` are announced once, as one list, when it closes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..by_name import FieldValues, Frozen


# Listeners read its fields; nothing compares two changes (eq=False). Its __init__ and __repr__ are written
# and it is frozen through core/by_name.Frozen: dataclass would compile all four methods at start.
@dataclass(eq=False, init=False, repr=False)
class Change(Frozen):
    """One edit of a design (added, removed, changed, replaced), as listeners are told of it."""
    action: str  # "added" | "removed" | "changed" | "replaced"
    collection: str  # "racks" | "nodes" | "switches" | "links" | "workload" | ... | "document"
    id: str | None = None
    field: str | None = None
    old: Any = None
    new: Any = None
    # where an added element now is, or where a removed one was, in its list (a listener that keeps
    # something per position follows the list's order without searching it)
    position: int | None = None

    def __init__(self, action: str, collection: str, id: str | None = None, field: str | None = None,
                 old: Any = None, new: Any = None, position: int | None = None) -> None:
        vars(self).update(action=action, collection=collection, id=id, field=field, old=old, new=new,
                          position=position)

    def __repr__(self) -> str:
        return _CHANGE_VALUES.repr(self)


_CHANGE_VALUES = FieldValues(Change)  # its __repr__


Listener = Callable[[list[Change]], None]


class Events:
    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._pending: list[Change] | None = None
        self._depth = 0

    def connect(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def disconnect(self, listener: Listener) -> None:
        self._listeners.remove(listener)

    def emit(self, change: Change) -> None:
        if self._depth:
            self._pending.append(change)
        else:
            self._send([change])

    def begin(self) -> None:
        if self._depth == 0:
            self._pending = []
        self._depth += 1

    def end(self) -> None:
        self._depth -= 1
        if self._depth == 0:
            pending, self._pending = self._pending, None
            if pending:
                self._send(pending)

    def _send(self, changes: list[Change]) -> None:
        for listener in list(self._listeners):
            listener(changes)
