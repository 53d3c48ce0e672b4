"""Reading another tool's output file: the checks of a design file, with that tool's words."""
from __future__ import annotations

import os

from ...problems import DesignerError, Problem
from ..files import read_text


def read_source(path: str | os.PathLike, what: str, fix: str) -> str:
    """The text of `path`; missing -> exit 66, empty/binary/not UTF-8 -> exit 65 naming `what`."""
    try:
        return read_text(path, what, f"save {what} to a file and pass that")
    except DesignerError as exc:
        first = exc.problems[0] if exc.problems else None
        if first is not None and first.line is not None:  # empty, binary or not UTF-8: not the design words
            message = first.message.replace("a YAML design", what).replace("the file is empty",
                                                                            f"the file is empty, not {what}")
            raise DesignerError([Problem(message, file=first.file, line=first.line, column=first.column,
                                         fix=fix)], exc.exit_code) from None
        raise
