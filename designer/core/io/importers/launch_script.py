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
_ARRAY_IN_TEXT = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]\}")  # "... ${ARGS[@]}" inside a string
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_PROGRAM = re.compile(r"\.py$")


@dataclass
class Word:
    """One shell word of a launch script, with the line it is on."""
    text: str
    line: int


@dataclass
class LaunchArgs:
    """The training program's arguments found in a launch script, with what could not be resolved."""
    words: list[Word]  # the program's arguments, in order
    program: str | None = None  # pretrain_gpt.py, when the text runs one
    launcher: list[Word] = field(default_factory=list)  # torchrun's own arguments before it
    unresolved: dict[str, int] = field(default_factory=dict)  # $NAME -> first line it is used on
    sourced: list[str] = field(default_factory=list)  # files read through `. FILE`


class ScriptError(ValueError):
    def __init__(self, message: str, line: int, fix: str):
        super().__init__(message)
        self.line, self.fix = line, fix


def _statements(text: str) -> list[tuple[int, str]]:
    """Logical lines: backslash continuations joined, an array's ( ... ) kept whole; comments kept
    for shlex to drop (it knows when a # is inside quotes)."""
    out, buf, start, depth, quote = [], [], 0, 0, None
    for number, raw in enumerate(text.splitlines(), 1):
        if not buf:
            start = number
        line = raw.rstrip()
        continued = line.endswith("\\") and not line.endswith("\\\\")  # (in "..." too, as in bash)
        body = line[:-1] if continued else line
        code, quote = _strip_comment(body, quote)
        bare = re.sub(r"'[^']*'|\"[^\"]*\"", "", code)  # a ( inside quotes opens nothing
        depth += bare.count("(") - bare.count(")")
        buf.append(code)
        if continued or depth > 0 or quote:  # a quoted string may span lines (TRAINING_CMD="...)
            continue
        out.append((start, "\n".join(buf)))
        buf, depth = [], 0
    if buf:
        out.append((start, "\n".join(buf)))
    return out


def _strip_comment(line: str, quote: str | None = None) -> tuple[str, str | None]:
    """The line without a trailing `# comment` (a # inside quotes or a word stays), and the quote
    still open at its end; `quote`: the one open at its start (a string begun on an earlier line)."""
    escaped = False
    for i, ch in enumerate(line):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\" and quote == '"':
                escaped = True
            elif ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i], None
    return line, quote


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


_SOURCE = re.compile(r"^(?:\.|source)\s+(\S+)\s*$")
_IF = re.compile(r"^(if|elif)\s+(.*?);?\s*(?:then)?$", re.S)
_TEST = re.compile(r"^\[\[?\s+(.*?)\s+\]\]?$", re.S)
MAX_SOURCED = 8  # files a script may pull in with `. FILE` (they may pull in others)


@dataclass
class _Branch:
    """One `if ... fi`: whether the branch being read applies, and whether one already did."""
    outer: bool  # the enclosing branch applies
    active: bool
    taken: bool


class _Reader:
    """The bash a launch script uses to build its arguments, read without running anything:
    assignments, arrays, `. FILE` (when given a way to read FILE), and if/elif/else on string tests
    it can decide (a test on a value the script never assigns keeps every branch, as before)."""

    def __init__(self, include):
        self.scalars: dict[str, str] = {}
        self.arrays: dict[str, list[Word]] = {}
        self.unresolved: dict[str, int] = {}
        self.command: list[Word] | None = None
        self.at = 0
        self.bare: list[Word] = []
        self.flag_strings: list[list[Word]] = []  # assigned strings that hold --flags, last one last
        self.include = include
        self.sourced: list[str] = []
        self.branches: list[_Branch] = []

    def active(self) -> bool:
        return not self.branches or self.branches[-1].active

    def read(self, text: str, at_line: int | None = None) -> None:
        for start, statement in _statements(text):
            line = at_line or start
            stripped = statement.strip()
            if not stripped or self._branching(stripped, line) or not self.active():
                continue
            source = _SOURCE.match(stripped)
            if source and self.include is not None:
                self._source(source.group(1), line)
                continue
            m = _ASSIGN.match(stripped)
            if m and not stripped.startswith("-"):
                self._assign(m, stripped, line)
                continue
            try:
                words = _split(statement, line)
            except ValueError as exc:
                raise ScriptError(f"cannot read this line: {exc}", line, "close the quote") from None
            if at_line is not None:
                words = [Word(w.text, at_line) for w in words]
            words = _expand(words, self.scalars, self.arrays, self.unresolved)
            program = next((i for i, w in enumerate(words) if _PROGRAM.search(w.text) and " " not in w.text), None)
            if program is not None:
                self.command, self.at = words, program
            elif words and words[0].text.startswith("-"):
                self.bare += words

    def _assign(self, m, stripped: str, start: int) -> None:
        name, append, value = m.group(1), m.group(2), m.group(3).strip()
        if value.startswith("("):
            inner = value[1:value.rfind(")")] if ")" in value else value[1:]
            lead = stripped[:stripped.index("(") + 1].count("\n")
            items = _expand(_split(inner, start + lead), self.scalars, self.arrays, self.unresolved)
            self.arrays[name] = (self.arrays.get(name, []) if append else []) + items
            return
        try:
            words = shlex.split(value, posix=True)
        except ValueError as exc:
            raise ScriptError(f"cannot read the assignment to {name}: {exc}", start, "close the quote") from None
        joined = _ARRAY_IN_TEXT.sub(lambda a: " ".join(item.text for item in self.arrays[a.group(1)])
                                    if a.group(1) in self.arrays else a.group(0), " ".join(words))
        joined = _substitute(joined, self.scalars, self.unresolved, start) if "$(" not in joined else joined
        self.scalars[name] = self.scalars.get(name, "") + joined if append else joined
        if re.search(r"(^|\s)--[a-z]", self.scalars[name]):  # `export PARAMS="--num-layers 24 ..."`
            self.flag_strings.append([Word(t, start) for t in self.scalars[name].split()])

    def _source(self, target: str, line: int) -> None:
        path = re.sub(r"`pwd`|\$\(pwd\)|\$\{?PWD\}?", ".", target.strip("\"'"))
        path = _substitute(path, self.scalars, {}, line)
        if "$" in path or len(self.sourced) >= MAX_SOURCED:
            return
        text = self.include(path)
        if text is None:
            return
        self.sourced.append(path)
        self.read(text, at_line=line)  # its words are placed at the line that sources it

    def _branching(self, stripped: str, line: int) -> bool:
        """True when the statement opens, turns or closes an if (and is read here)."""
        word = stripped.split(None, 1)[0]
        if word == "fi" or stripped.endswith("; fi") and word != "if":
            if self.branches:
                self.branches.pop()
            return True
        if word == "else":
            if self.branches:
                b = self.branches[-1]
                b.active = b.outer and not b.taken
                b.taken = b.taken or b.active
            return True
        if word in ("then", "done", "do"):
            return True
        m = _IF.match(stripped)
        if not m or word not in ("if", "elif"):
            return False
        outcome = self._test(m.group(2)) if self.active() or word == "elif" else False
        if word == "if":
            outer = self.active()
            active = outer and outcome is not False
            self.branches.append(_Branch(outer, active, taken=active and outcome is True))
        elif self.branches:
            b = self.branches[-1]
            b.active = b.outer and not b.taken and outcome is not False
            b.taken = b.taken or (b.active and outcome is True)
        return True

    def _test(self, condition: str) -> bool | None:
        """The value of `[ A == B ]`, `[[ -z A ]]` and their `||` / `&&`; None when it cannot be told."""
        parts = re.split(r"\s*(\|\||&&)\s*", condition.strip())
        value = self._one_test(parts[0])
        for op, part in zip(parts[1::2], parts[2::2]):
            value = _either(value, self._one_test(part)) if op == "||" else _both(value, self._one_test(part))
        return value

    def _one_test(self, part: str) -> bool | None:
        m = _TEST.match(part.strip())
        if not m:
            return None
        body = _substitute(m.group(1), self.scalars, {}, 0)
        if "$" in body:
            return None
        try:
            words = shlex.split(body, posix=True)
        except ValueError:
            return None
        if len(words) == 3 and words[1] in ("==", "=", "!="):
            return (words[0] == words[2]) == (words[1] != "!=")
        if len(words) == 2 and words[0] in ("-n", "-z"):
            return bool(words[1]) == (words[0] == "-n")
        if len(words) == 1 and words[0] in ("-n", "-z"):  # `[ -z $UNSET ]` after substitution of ""
            return words[0] == "-z"
        return None


def _either(a: bool | None, b: bool | None) -> bool | None:
    return True if (a or b) else None if (a is None or b is None) else False


def _both(a: bool | None, b: bool | None) -> bool | None:
    return False if (a is False or b is False) else None if (a is None or b is None) else True


def read_launch(text: str, include=None) -> LaunchArgs:
    """The program's arguments. `include(path)` gives the text of a file the script sources with
    `. FILE` or `source FILE` (relative to the script's folder), or None when there is none."""
    reader = _Reader(include)
    reader.read(text)
    if reader.command is not None:
        words = reader.command
        return LaunchArgs(words[reader.at + 1:], words[reader.at].text, words[1:reader.at], reader.unresolved,
                          reader.sourced)
    if not reader.bare and reader.flag_strings:  # run elsewhere (sbatch SRUN.sh) with the flags it exports
        return LaunchArgs(reader.flag_strings[-1], None, [], reader.unresolved, reader.sourced)
    return LaunchArgs(reader.bare, None, [], reader.unresolved, reader.sourced)


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
