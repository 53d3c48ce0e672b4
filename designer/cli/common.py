"""What every command shares: messages on stderr, the problems list, `-o` writes, argument types.

Exit codes: 0 ok; 1 failure; 2 usage; 65 bad input data; 66 missing input file;
70 internal error. Machine output goes to stdout, messages to stderr.
"""
from __future__ import annotations

import argparse
import contextlib
import errno
import math
import os
import stat
import sys

from ..core.problems import EXIT_FAILURE, DesignerError, Problem

EPILOG = ("exit codes: 0 ok, 1 failure, 2 usage, 65 bad input data, 66 missing input file, "
          "69 no GPU or PyTorch (microbench), 70 internal error")


class Parser(argparse.ArgumentParser):
    """argparse's parser (and, as their class, its sub-parsers') with HelpFormatter below as its default."""

    def __init__(self, *args, formatter_class=None, **kwargs):
        super().__init__(*args, formatter_class=formatter_class or HelpFormatter, **kwargs)


class HelpFormatter(argparse.HelpFormatter):
    """argparse's own, as wide as the terminal (terminal_columns) found without importing shutil, which
    argparse does to make one for each argument added (with bz2, lzma and fnmatch: ~1.5 ms of every run)."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        super().__init__(prog, indent_increment, max_help_position,
                         terminal_columns() - 2 if width is None else width)


def terminal_columns() -> int:
    """The terminal's width as shutil.get_terminal_size gives it: COLUMNS, else stdout's terminal, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def err(text: str) -> None:
    print(text, file=sys.stderr)


def plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


# A file with 80,000 bad lines needs its first problems shown, not all of them.
MAX_SHOWN_PROBLEMS = 200  # more than a check lists of one kind (check.MAX_LISTED_DUPLICATES)


def report_problems(problems: list[Problem]) -> None:
    for p in problems[:MAX_SHOWN_PROBLEMS]:
        err(p.format())
    if len(problems) > MAX_SHOWN_PROBLEMS:
        more = len(problems) - MAX_SHOWN_PROBLEMS
        err(f"... and {more:,} more problem{'s' if more > 1 else ''} ({len(problems):,} in all; "
            f"the first {MAX_SHOWN_PROBLEMS} are shown)")


# ---- designs written: validated first ------------------------------------------------------------

def design_errors(doc) -> set[str]:
    """The errors `designer validate` finds in `doc` (formatted), to compare before and after an edit."""
    from ..core.design_check import check_document

    return {p.format() for p in check_document(doc) if p.severity == "error"}


def save_validated(doc, output: str, before: set[str] | None = None, what: str = "the design") -> None:
    """Save `doc` to `output` (atomically) only when `designer validate` would pass it: every error
    it has that `before` (the input's own, for a command that edits a design) did not is said and the
    command exits 65 with nothing written. Every command that writes a design saves through here."""
    from ..core.design_check import check_document
    from ..core.io import save_document
    from ..core.problems import EXIT_DATAERR

    errors = [p for p in check_document(doc) if p.severity == "error" and p.format() not in (before or set())]
    if errors:
        shown = errors[:10]
        raise DesignerError([Problem(f"{what} would not validate, so {output} was not written: {p.message}",
                                     p.path, element=p.element, fix=p.fix or "change the input; nothing was written")
                             for p in shown], EXIT_DATAERR)
    with writing_output(output):
        save_document(doc, output)  # atomic: the old file stays whole until the new one is complete


# ---- -o files: one way to say why an output cannot be written ----------------------------------

@contextlib.contextmanager
def writing_output(path: str):
    """Around every `-o` write: a missing folder, a read-only target, a full disk or a device
    in the way is the user's to fix (exit 1 with the path, the reason and the fix), not a bug."""
    fix = "write into an existing folder you can write to"
    if os.path.isdir(path):
        raise DesignerError([Problem("cannot write: it is a folder", file=path, fix="give a file name in it")],
                            EXIT_FAILURE)
    if os.path.exists(path) and not stat.S_ISREG(os.stat(path).st_mode):
        # never rename a file over a device or pipe (an atomic save would replace /dev/full itself)
        raise DesignerError([Problem("cannot write: it is a device or pipe, not a regular file", file=path,
                                     fix="give the path of a file (to pipe the output, write a file and cat it)")],
                            EXIT_FAILURE)
    try:
        yield
    except OSError as exc:
        folder = os.path.dirname(os.path.abspath(path))
        reason = exc.strerror or str(exc)
        if exc.errno == errno.ENOENT:
            reason = f"the folder {folder} does not exist"
        elif exc.errno == errno.ENOTDIR:
            blocker = next((p for p in _parents(folder) if os.path.exists(p) and not os.path.isdir(p)), folder)
            reason = f"{blocker} is a file, not a folder"
        elif exc.errno in (errno.EACCES, errno.EPERM):
            reason = f"permission denied (the folder {folder} or the file is not writable)"
        elif exc.errno == errno.EROFS:
            reason = f"{folder} is on a read-only file system"
        elif exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
            reason, fix = "no space left on the disk (or over quota)", "free some space, or write to another disk"
        raise DesignerError([Problem(f"cannot write: {reason}", file=path, fix=fix)], EXIT_FAILURE) from None


def _parents(folder: str) -> list[str]:
    """The folder and each folder above it, nearest first."""
    out = [folder]
    while os.path.dirname(out[-1]) != out[-1]:
        out.append(os.path.dirname(out[-1]))
    return out


# ---- argument types: a bad value is a usage error naming the flag (argparse adds the flag) ------

def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number greater than 0, got {text}")
    return value


def number_between(low: float, high: float, unit: str):
    """A converter for a float flag with the range that makes sense for it, said with its unit."""
    def convert(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number of {unit}, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be between {low:g} and {high:g} {unit}, got {text}")
        return value
    return convert


def size(text: str) -> int:
    """A byte count: 8, 1K, 1M, 16G (powers of two)."""
    units = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
    t = text.strip().upper().rstrip("B")
    unit = t[-1] if t and t[-1] in units else ""
    number = t[:-1] if unit else t
    try:
        value = float(number) * units[unit]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a size such as 8, 1M or 16G, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"size must be at least 1 byte, got {text!r}")
    if not math.isfinite(value):  # 1e400 reads as inf: no size (a large finite one is reduced as nccl-tests does)
        raise argparse.ArgumentTypeError(f"expected a finite size such as 8, 1M or 16G, got {text!r}")
    return int(value)


def gpu_list(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.replace(" ", "").split(",") if v]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected GPU counts such as 64,128,256, got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive GPU counts such as 64,128,256, got {text!r}")
    return values
