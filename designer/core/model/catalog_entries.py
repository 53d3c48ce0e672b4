"""A catalog file's entries found in its text, so that the shipped catalog composes, checks and builds
an entry only when something first asks for it by name: reading the files whole, every entry of them,
was a twentieth of `designer evaluate` at 1,024 GPUs, which names four of the ~45 entries.

The layout the shipped files are written in: comments and blank lines, the file's key alone at the
left margin (`accelerators:`), then each entry a block item whose first line is `  - name: NAME`,
with its `aliases`, if any, on one line as a flow list of plain words (`    aliases: [a, b]`). Every
name and alias is known from the text at once (lookups, "did you mean", the names' uniqueness); the
rest of an entry is read when it is asked for, its text composed alone. A file in any other layout
is read whole (catalog.py), and so is an entry whose text does not read alone as the whole file reads
it (an alias to another entry's anchor, say), which `NamedEntries` checks as it builds one.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping

# Each pattern starts with the line break before the line it looks for: the search then skips from one
# line break to the next rather than trying every character (a `^` in MULTILINE mode does).
_ITEM = re.compile(r"\n  - ")
_HEAD = re.compile(r"  - name: ([A-Za-z0-9][\w.+-]*)[ \t]*(?:#[^\n]*)?\n")
_ALIASES = re.compile(r"\n    aliases:([^\n]*)")
_FLOW_WORDS = re.compile(r" \[([\w.+\-, ]*)\][ \t]*(?:#.*)?")
_WORD = re.compile(r"[A-Za-z0-9][\w.+-]*")
_AT_MARGIN = re.compile(r"\n[^\s#]")  # a line that starts at the left margin and is no comment


class EntryText:
    """One entry of a catalog file as its text: its place in the list, its name and aliases."""
    index: int
    name: str
    aliases: tuple[str, ...]
    text: str  # blank lines, then the entry's own: YAML's line numbers in it are the file's

    __slots__ = ("index", "name", "aliases", "text")

    def __init__(self, index: int, name: str, aliases: tuple[str, ...], text: str) -> None:
        self.index = index
        self.name = name
        self.aliases = aliases
        self.text = text


def entry_texts(text: str, key: str) -> list[EntryText] | None:
    """The entries of the file's `key` list, or None when the file is not in the layout above."""
    text = "\n" + text  # each line, the first too, follows a line break
    first = _AT_MARGIN.search(text)
    head = f"{key}:\n"
    if first is None or not text.startswith(head, first.start() + 1):
        return None
    body = first.start() + len(head)  # the line break that ends the key's line
    if _AT_MARGIN.search(text, body):  # another key, a document marker, ...
        return None
    starts = [m.start() + 1 for m in _ITEM.finditer(text, body)]
    if not starts or any(line.strip() and not line.lstrip().startswith("#")
                         for line in text[body:starts[0]].splitlines()):
        return None
    out, line = [], 0
    for index, (start, end) in enumerate(zip(starts, starts[1:] + [len(text)])):
        piece = text[start:end]
        name = _HEAD.match(piece)
        aliases = _aliases(piece)
        if name is None or aliases is None:
            return None
        line += text.count("\n", starts[index - 1] if index else 0, start)
        out.append(EntryText(index, name.group(1), aliases, "\n" * (line - 1) + piece))
    return out


def _aliases(piece: str) -> tuple[str, ...] | None:
    """The entry's aliases as its text spells them, () for none; None when not a plain flow list."""
    lines = _ALIASES.findall(piece)  # not on the entry's first line, `  - name: ...`
    if not lines:
        return ()
    words = _FLOW_WORDS.fullmatch(lines[0]) if len(lines) == 1 else None
    if words is None:
        return None
    out = tuple(w.strip() for w in words.group(1).split(",") if w.strip())
    return out if all(_WORD.fullmatch(w) for w in out) else None


class NamedEntries(Mapping):
    """One kind's entries by name, each read and built the first time it is asked for.

    `read(entry)` is the entry's mapping as its text reads alone, checked (None when it does not read
    alone as the file's list item with that name and those aliases); `read_whole()` the file's entries,
    checked, as the whole file reads (its problems raised); `build(mapping)` the catalog's object."""

    def __init__(self, entries: list[EntryText], read: Callable[[EntryText], dict | None],
                 read_whole: Callable[[], list[dict]], build: Callable[[dict], object]):
        self._entries = {e.name: e for e in entries}
        self._read, self._read_whole, self._build = read, read_whole, build
        self._built: dict[str, object] = {}

    def aliases_of(self, name: str) -> tuple[str, ...]:
        return self._entries[name].aliases

    def __getitem__(self, name: str):
        built = self._built.get(name)
        if built is None:
            entry = self._entries[name]  # KeyError for a name the file does not have, as a dict's
            mapping = self._read(entry)
            if mapping is None:
                mapping = self._read_whole()[entry.index]
            # (setdefault: two threads that read an entry at once both get the one object kept)
            built = self._built.setdefault(name, self._build(mapping))
        return built

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)
