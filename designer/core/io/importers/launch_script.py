"""The arguments of a launch line or launch script, read the way bash would for the common forms.

Megatron-LM's own example scripts (examples/gpt3/train_gpt3_175b_distributed.sh) assign
variables (`TP=8`), bash arrays (`GPT_MODEL_ARGS=( --num-layers 96 ... )`, one flag a line with
`# comments`) and strings (`GPT_ARGS="--num-layers 24 ..."`), then run
`torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py ${GPT_MODEL_ARGS[@]} $GPT_ARGS \\`. This reads
those forms without running anything: the arguments after the `*.py` program (or every word, for
a bare line of flags), each with the line it was written on. A `$NAME` the text never assigns is
kept as written and listed in `unresolved`.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

_ASSIGN = re.compile(r"^(?:export\s+|declare\s+(?:-\w+\s+)*|local\s+)?([A-Za-z_][A-Za-z0-9_]*)(\+?)=(.*)$", re.S)
_ARRAY = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]\}$")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_PROGRAM = re.compile(r"\.py$")


@dataclass
class Word:
    text: str
    line: int


@dataclass
class LaunchArgs:
    words: list[Word]  # the program's arguments, in order
    program: str | None = None  # pretrain_gpt.py, when the text runs one
    launcher: list[Word] = field(default_factory=list)  # torchrun's own arguments before it
    unresolved: dict[str, int] = field(default_factory=dict)  # $NAME -> first line it is used on


class ScriptError(ValueError):
    def __init__(self, message: str, line: int, fix: str):
        super().__init__(message)
        self.line, self.fix = line, fix


def _statements(text: str) -> list[tuple[int, str]]:
    """Logical lines: backslash continuations joined, an array's ( ... ) kept whole; comments kept
    for shlex to drop (it knows when a # is inside quotes)."""
    out, buf, start, depth = [], [], 0, 0
    for number, raw in enumerate(text.splitlines(), 1):
        if not buf:
            start = number
        line = raw.rstrip()
        continued = line.endswith("\\") and not line.endswith("\\\\")
        body = line[:-1] if continued else line
        code = _strip_comment(body)
        bare = re.sub(r"'[^']*'|\"[^\"]*\"", "", code)  # a ( inside quotes opens nothing
        depth += bare.count("(") - bare.count(")")
        buf.append(code)
        if continued or depth > 0:
            continue
        out.append((start, "\n".join(buf)))
        buf, depth = [], 0
    if buf:
        out.append((start, "\n".join(buf)))
    return out


def _strip_comment(line: str) -> str:
    """The line without a trailing `# comment` (a # inside quotes or a word stays)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def _split(text: str, first_line: int) -> list[Word]:
    """Words of one statement, each with its own line number."""
    words = []
    for offset, part in enumerate(text.split("\n")):
        try:
            pieces = shlex.split(part, posix=True)
        except ValueError:  # a quote spanning lines: split the whole statement once
            return [Word(w, first_line) for w in shlex.split(text, posix=True)]
        words += [Word(w, first_line + offset) for w in pieces]
    return words


def read_launch(text: str) -> LaunchArgs:
    scalars: dict[str, str] = {}
    arrays: dict[str, list[Word]] = {}
    unresolved: dict[str, int] = {}
    command: list[Word] | None = None
    bare: list[Word] = []
    for start, statement in _statements(text):
        stripped = statement.strip()
        if not stripped:
            continue
        m = _ASSIGN.match(stripped)
        if m and not stripped.startswith("-"):
            name, append, value = m.group(1), m.group(2), m.group(3).strip()
            if value.startswith("("):
                inner = value[1:value.rfind(")")] if ")" in value else value[1:]
                lead = stripped[:stripped.index("(") + 1].count("\n")
                items = _expand(_split(inner, start + lead), scalars, arrays, unresolved)
                arrays[name] = (arrays.get(name, []) if append else []) + items
            else:
                try:
                    words = shlex.split(value, posix=True)
                except ValueError as exc:
                    raise ScriptError(f"cannot read the assignment to {name}: {exc}", start,
                                      "close the quote") from None
                joined = " ".join(words)
                joined = _substitute(joined, scalars, unresolved, start) if "$(" not in joined else joined
                scalars[name] = scalars.get(name, "") + joined if append else joined
            continue
        try:
            words = _split(statement, start)
        except ValueError as exc:
            raise ScriptError(f"cannot read this line: {exc}", start, "close the quote") from None
        words = _expand(words, scalars, arrays, unresolved)
        program = next((i for i, w in enumerate(words) if _PROGRAM.search(w.text) and " " not in w.text), None)
        if program is not None:
            command = words
            at = program
        elif words and words[0].text.startswith("-"):
            bare += words
    if command is not None:
        return LaunchArgs(command[at + 1:], command[at].text, command[1:at], unresolved)
    return LaunchArgs(bare, None, [], unresolved)


def _substitute(text: str, scalars: dict[str, str], unresolved: dict[str, int], line: int) -> str:
    def one(m):
        name = m.group(1) or m.group(3)
        if name in scalars:
            return scalars[name]
        if m.group(2) is not None:  # ${NAME:-default}
            return m.group(2)
        unresolved.setdefault("$" + name, line)
        return m.group(0)
    return _VAR.sub(one, text)


def _expand(words: list[Word], scalars, arrays, unresolved) -> list[Word]:
    out = []
    for w in words:
        m = _ARRAY.match(w.text)
        if m:
            if m.group(1) in arrays:  # unquoted: an element "--fp8-format hybrid" is two words, as in bash
                out += [Word(t, item.line) for item in arrays[m.group(1)] for t in item.text.split()]
            else:
                unresolved.setdefault(w.text, w.line)
            continue
        whole = _VAR.fullmatch(w.text)
        if whole and (whole.group(1) or whole.group(3)) in scalars:
            # an unquoted $GPT_ARGS holding several flags splits into words, as in bash
            out += [Word(t, w.line) for t in scalars[whole.group(1) or whole.group(3)].split()]
            continue
        out.append(Word(_substitute(w.text, scalars, unresolved, w.line), w.line))
    return out
