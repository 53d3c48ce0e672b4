"""Problems found in a document: one record type for YAML errors and consistency checks.

A problem names where it is (file, line, column, dotted path, element id), what is wrong
and how to fix it, so that the CLI prints it compiler-style and the GUI jumps to it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter

from .by_name import NEW, FieldValues, compared_by_value

# sysexits(3) codes used by the CLI (os.EX_* exists on Unix only).
EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_DATAERR = 65
EXIT_NOINPUT = 66
EXIT_SOFTWARE = 70


# Its __init__ written, its __eq__ and __repr__ from core/by_name.py: dataclass would compile all three at start.
@compared_by_value
@dataclass(init=False, eq=False, repr=False)
class Problem:
    """One thing wrong with a design (or a warning), with where it is in the file and how to fix it."""
    message: str
    path: str = ""  # dotted path into the document, e.g. spec.links[12].bandwidth_gbps
    element: str | None = None  # id of the rack, node, switch or link concerned
    fix: str | None = None  # what to do about it
    severity: str = "error"  # error | warning
    file: str | None = None
    line: int | None = None  # 1-based
    column: int | None = None  # 1-based
    job: str | None = None  # the job of spec.jobs it stops, when it is one job's

    def __init__(self, message: str, path: str = "", element: str | None = None, fix: str | None = None,
                 severity: str = "error", file: str | None = None, line: int | None = None,
                 column: int | None = None, job: str | None = None) -> None:
        self.message, self.path, self.element, self.fix, self.severity = message, path, element, fix, severity
        self.file, self.line, self.column, self.job = file, line, column, job

    def format(self) -> str:
        where = ""
        if self.file:
            where = self.file
            if self.line is not None:
                where += f":{self.line}:{self.column or 1}"
            where += ": "
        text = f"{where}{self.path + ': ' if self.path else ''}{self.message}"
        if self.fix:
            text += f" ({self.fix})"
        if self.severity != "error":
            text = f"{text} [{self.severity}]"
        return text

    def __str__(self) -> str:  # pragma: no cover - convenience
        return self.format()


# eq=False: equal only to itself, as an exception is (and so hashable); its __init__ and __repr__ written
# (dataclass would compile both at start)
@dataclass(eq=False, init=False, repr=False)
class DesignerError(Exception):
    """Bad input: carries every problem found, not only the first."""

    problems: list[Problem] = field(default_factory=list)
    exit_code: int = EXIT_DATAERR

    def __init__(self, problems: list[Problem] = NEW, exit_code: int = EXIT_DATAERR) -> None:
        self.problems = [] if problems is NEW else problems
        self.exit_code = exit_code

    def __repr__(self) -> str:
        return _DESIGNER_ERROR_VALUES.repr(self)

    def __str__(self) -> str:
        return "\n".join(p.format() for p in self.problems)


_DESIGNER_ERROR_VALUES = FieldValues(DesignerError)  # its __repr__


class MissingInputError(DesignerError):
    def __init__(self, problems):
        super().__init__(problems, EXIT_NOINPUT)


def close_matches(word: str, choices, n: int = 3) -> list[str]:
    """Known names close to a misspelt one, best first."""
    import difflib

    return difflib.get_close_matches(word, list(choices), n=n, cutoff=0.5)


def did_you_mean(word: str, choices) -> str | None:
    """The closest known name to a misspelt one, or None."""
    found = close_matches(word, choices, n=1)
    return found[0] if found else None


def count_text(problems) -> str:
    """'no problems', '1 error', '2 errors, 1 warning': the one summary every view shows."""
    errors = list(map(_severity, problems)).count("error")  # (counted in C: thousands at 131k GPUs)
    return counts_text(errors, len(problems) - errors)


def counts_text(errors: int, warnings: int) -> str:
    """count_text of a list with these counts (a view that keeps its counts need not count again)."""
    if not errors and not warnings:
        return "no problems"
    parts = [f"{n} {word}{'' if n == 1 else 's'}" for n, word in ((errors, "error"), (warnings, "warning")) if n]
    return ", ".join(parts)


def first_error(problems) -> Problem | None:
    """The problem a view names first: the first error, else the first warning."""
    severities = list(map(_severity, problems))  # (searched in C: thousands of warnings at 131k GPUs)
    return problems[severities.index("error")] if "error" in severities else problems[0] if problems else None


_severity = attrgetter("severity")
