"""Where the Job panel shows each of the design's problems: beside one of its fields, or counted in its
summary as the cluster's. An edit's check keeps the problems of what the edit did not touch (the same
objects, in the same order), so a new list is placed only where it differs from the last one: a cable's
delete among 4,000 problems of a 131,072-GPU design places the one or two that came or went."""
from __future__ import annotations

from itertools import compress, count
from operator import is_not
from typing import Callable, Hashable


class ProblemPlaces:
    """The problems as last shown, each one's field path (None: not beside a field) and the counts the
    summary says, kept up to date by the span of the list that changed."""

    def __init__(self):
        self.problems: list = []
        self.places: list[str | None] = []
        self.errors = 0
        self.elsewhere = 0  # not beside a field: the cluster's, another job's
        self._rules: Hashable = None  # what a problem's place depends on besides the problem (job, last edit)

    def update(self, problems: list, rules: Hashable, place: Callable[[object], str | None]) -> int:
        """Follow `problems`, placing with `place` the ones that came; all of them when `rules` (what
        `place` depends on) changed. Returns how many were placed."""
        if rules != self._rules:
            self._rules, self.problems, self.places, self.errors, self.elsewhere = rules, [], [], 0, 0
        old = self.problems
        same = min(len(old), len(problems))
        head = next(compress(count(), map(is_not, old, problems)), same)  # (compared in C, not a Python loop)
        tail = min(next(compress(count(), map(is_not, reversed(old), reversed(problems))), same), same - head)
        went = slice(head, len(old) - tail)
        came = problems[head:len(problems) - tail]
        came_places = [place(p) for p in came]
        self.errors += _errors(came) - _errors(old[went])
        self.elsewhere += came_places.count(None) - self.places[went].count(None)
        self.places[went] = came_places
        self.problems = list(problems)
        return len(came)

    def beside(self) -> dict[str, list]:
        """Field path -> its problems, in the check's order (the few of the job; picked out in C)."""
        fields: dict[str, list] = {}
        for problem, path in zip(compress(self.problems, self.places), filter(None, self.places)):
            fields.setdefault(path, []).append(problem)
        return fields


def _errors(problems) -> int:
    return sum(p.severity == "error" for p in problems)
