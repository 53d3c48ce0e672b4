"""Reading YAML text into plain data, with the line and column of every key and value.

Two paths:
- `parse_fast`: the layout `save` writes (each rack, node, switch and link on one line as a
  JSON object inside a YAML flow sequence item). Those lines go through `json.loads` (or, as
  the caller's `build_lines` asks, straight into elements: the links, io/link_rows.py), the
  small rest through PyYAML's C loader. 130k-GPU files load in about a second this way;
  PyYAML alone needs ~130 us per element.
- `parse_located`: any YAML, via PyYAML's composer (safe: plain data only), keeping marks.
  Used when the fast path does not apply and, for the error positions, when a file is bad.

Both paths bound what a file may make the loader build, before any data is constructed:
nesting deeper than MAX_DEPTH and aliases that would expand to more than MAX_ALIAS_VALUES
values (a "billion laughs" bomb) are refused with the position of the offending value.
"""
from __future__ import annotations

import json
import re
from itertools import repeat

import yaml

SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_PySafeLoader = yaml.SafeLoader

# No design nests deeper than a dozen levels; 64 leaves room and keeps every recursive walk
# after loading (checks, saving, JSON) far from Python's recursion limit.
MAX_DEPTH = 64
# Values that exist only through aliases (*name repeating an &name): a real design needs few.
MAX_ALIAS_VALUES = 1_000_000

FAST_SECTIONS = ("racks", "nodes", "switches", "links")
_ITEM = re.compile(r"^  - (\{.*\})\s*$")
_SPEC_KEY = re.compile(r"^  ([A-Za-z_][\w-]*):")
_TOP_KEY = re.compile(r"^([A-Za-z_][\w-]*):")
_RUN_END = re.compile(r"\n(?!  - \{)")  # the line break after a run of lines that start like an item


class YamlSyntaxError(Exception):
    def __init__(self, message: str, line: int | None, column: int | None):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


class Located:
    """Data plus positions: path tuple -> (line, column), both 1-based."""

    data: object
    key_pos: dict[tuple, tuple[int, int]]
    value_pos: dict[tuple, tuple[int, int]]
    duplicate_keys: list[tuple[tuple, int, int]]

    __slots__ = ("data", "key_pos", "value_pos", "duplicate_keys")

    def __init__(self, data: object, key_pos: dict[tuple, tuple[int, int]] | None = None,
                 value_pos: dict[tuple, tuple[int, int]] | None = None,
                 duplicate_keys: list[tuple[tuple, int, int]] | None = None) -> None:
        self.data = data
        self.key_pos = {} if key_pos is None else key_pos
        self.value_pos = {} if value_pos is None else value_pos
        self.duplicate_keys = [] if duplicate_keys is None else duplicate_keys

    def where(self, path: tuple, prefer_key: bool = False) -> tuple[int | None, int | None]:
        """The best position for a path: the key or value itself, else the nearest parent."""
        probe = tuple(path)
        while True:
            tables = (self.key_pos, self.value_pos) if prefer_key else (self.value_pos, self.key_pos)
            for table in tables:
                if probe in table:
                    return table[probe]
            if not probe:
                return (1, 1)
            probe = probe[:-1]


def _reject_constant(name: str):
    raise ValueError(name)


# Characters of item lines read per call (~3 ms each: 2,048 lines of links): the window's thread waits
# at most that long. The reading's time goes with the characters, not the lines.
RUN_CHARS = 1 << 18


def parse_fast(text: str, build_items=None, build_lines=None) -> object | None:
    """Data of a file in the layout `save` writes; None when the text is not in that layout.

    `build_items(section, items)`, when given, turns each part of a section's one-line items into
    what the section's list then holds (schema.prebuild_items: the elements themselves), so that
    the mappings of 295k links never all exist at once (~150 MB at 131k GPUs, most of a load's peak).
    `build_lines(section, text)`, when given, is asked first for what a part's item lines (one slice
    of the text) make (schema.prebuild_lines: the links straight from their text, without the
    mappings); None from it reads the part as JSON."""
    reader = _LayoutReader(build_items, build_lines)
    if not reader.read(text):
        return None
    return _with_sections(reader.skeleton, reader.sections)


class _LayoutReader:
    """parse_fast's pass over the lines: the one-line items of spec's FAST_SECTIONS into their lists,
    every other line into the skeleton PyYAML reads (the items' lines left out: their section's value
    there must be empty, so they do not change what the rest means)."""

    def __init__(self, build_items, build_lines=None):
        self.build_items = build_items
        self.build_lines = build_lines
        self.skeleton: list[str] = []
        self.sections: dict[str, list] = {}
        self.top: str | None = None  # the top-level key being read
        self.spec_key: str | None = None  # the key under spec being read
        # The decoder's C scanner on each item: what `decode` does (the item starts with "{" and ends
        # with "}", so there is no white space to skip) without its Python wrapper, a third of the time.
        self.scan = json.JSONDecoder(parse_constant=_reject_constant).scan_once

    def read(self, text: str) -> bool:
        """Reads every line; False when the text is not in the layout.

        A run of lines that start like an item, in one of the sections, is read a part at a time, each
        part one slice of the text (no string per line, no Python per line); any other line, and the
        lines of a run from a part that is not plain items, one by one."""
        pos, size = 0, len(text)
        while True:
            if self.in_items() and text.startswith("  - {", pos):
                stop, left = self._read_run(text, pos)  # stop: the end of the run's last line
                if left is not None and not all(map(self._read_line, text[left:stop].split("\n"))):
                    return False
            else:
                stop = text.find("\n", pos)
                stop = size if stop < 0 else stop
                if not self._read_line(text[pos:stop]):
                    return False
            if stop == size:
                return bool(self.sections)
            pos = stop + 1

    def in_items(self) -> bool:
        return self.top == "spec" and self.spec_key in FAST_SECTIONS

    def _read_run(self, text: str, start: int) -> tuple[int, int | None]:
        """The run of item lines from `start` of the current section, a part at a time: each call
        over a part holds the interpreter's lock, and a file read in a thread must leave the window's
        thread its turns (131k GPUs: 0.5 s). (Where the run ends: the line break after its last line, or
        the text's end; where the lines left to read one by one start (all from the first part that is
        not plain items), or None.)

        A part that build_lines reads is proved lines of items by it, so the run's end is looked for
        only from a part it does not read (looking behind each of the 295k line breaks of a 131k-GPU
        design's links took ~25 ms): the part where the run ends, or one build_lines leaves to JSON."""
        items_of = self.sections[self.spec_key]
        size = len(text)
        stop = None  # the run's end, once looked for
        while True:
            end = _part_end(text, start, size if stop is None else stop)
            part = text[start:end]
            built = None if self.build_lines is None else self.build_lines(self.spec_key, part)
            if built is None and stop is None:
                stop = _run_end(text, start)
                if stop < end:
                    continue  # the run ends in this part: read it up to there
            if built is None:
                items = _scan_run(part, self.scan)
                if items is None:
                    return stop, start
                built = items if self.build_items is None else self.build_items(self.spec_key, items)
            items_of += built
            if end == size or end == stop:
                return end, None
            start = end + 1
            if stop is None and not text.startswith("  - {", start):
                return end, None  # the next line starts no item: the run ends with this part

    def _read_line(self, line: str) -> bool:
        """One line: an item of the section being read, or a skeleton line, which may open a section.
        False when the text is not in the layout (the full parser reports any problem at its place)."""
        m = _ITEM.match(line) if self.in_items() else None
        if m:
            item = _one_item(m.group(1), self.scan, line)
            if item is None:
                return False
            self.sections[self.spec_key].append(item)
            return True
        t = _TOP_KEY.match(line)
        if t:
            self.top, self.spec_key = t.group(1), None
        elif self.top == "spec":
            s = _SPEC_KEY.match(line)
            if s:
                self.spec_key = s.group(1)
                if self.spec_key in FAST_SECTIONS:
                    if self.spec_key in self.sections:
                        return False  # the same section twice: let the full parser report it
                    self.sections[self.spec_key] = []
        self.skeleton.append(line)
        return True


def _one_item(text_item: str, scan, line: str) -> dict | None:
    """The mapping of one item line's "{...}", or None when it is not exactly one JSON object nested at
    most MAX_DEPTH deep."""
    try:
        item, end = scan(text_item, 0)
    except (StopIteration, ValueError, RecursionError):
        return None
    if end != len(text_item) or not isinstance(item, dict):
        return None
    if line.count("[") + line.count("{") > MAX_DEPTH and _depth(item) > MAX_DEPTH:
        return None
    return item


def _with_sections(skeleton: list[str], sections: dict[str, list]) -> object | None:
    """The skeleton's data with each section's items in its place; None when PyYAML, the bounds or the
    layout refuse it (the full parser then says why and where)."""
    try:
        node = yaml.compose("\n".join(skeleton), Loader=SafeLoader)
    except (yaml.YAMLError, RecursionError):
        return None
    if node is None or bound_problem(node) is not None:
        return None
    try:
        data = yaml.constructor.SafeConstructor().construct_document(node)
    except yaml.YAMLError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("spec"), dict):
        return None
    spec = data["spec"]
    for name, items in sections.items():
        existing = spec.get(name)
        if existing is not None and (existing != [] or items):
            return None  # a section mixes one-line items with block items: take the full path
        spec[name] = items
    return data


class _Separator:
    """Between two items of a run read as one JSON array (_scan_run): what the decoder makes of NaN."""


_SEPARATOR = _Separator()


def _separator_constant(name: str):
    if name == "NaN":
        return _SEPARATOR
    raise ValueError(name)


# The decoders of a whole run: "[]", "null" or "NaN" (which no item holds, see _scan_run) stands between
# the items; either refuses the other constants, as `parse_fast` does.
_scan_joined = json.JSONDecoder(parse_constant=_reject_constant).scan_once
_scan_joined_nan = json.JSONDecoder(parse_constant=_separator_constant).scan_once


def _run_end(text: str, start: int) -> int:
    """The line break after the last line of the run of lines that start like an item from `start`, or
    the text's end."""
    after = _RUN_END.search(text, start)
    return len(text) if after is None else after.start()


def _part_end(text: str, start: int, stop: int) -> int:
    """The end of the part of the run text[start:stop] that starts at `start`: its last line break within
    RUN_CHARS characters (the first after them, for a line that long)."""
    if stop - start <= RUN_CHARS:
        return stop
    end = text.rfind("\n", start, start + RUN_CHARS)
    if end < 0:
        end = text.find("\n", start + RUN_CHARS, stop)
    return stop if end < 0 else end


def _scan_run(part: str, scan) -> list[dict] | None:
    """The items of a part's lines (joined by line breaks), all starting with "  - {": each line one
    JSON object and nothing else but trailing white space (what _ITEM matches and `scan` reads whole),
    none nested deeper than MAX_DEPTH. None when some line is otherwise: then the lines are read one by
    one, which decides.

    The part is decoded as one JSON array, the items' "  - " made a separator that only we can have
    put there ([], null or NaN: the first the text cannot hold, having no "[", "null" or "NaN"): one
    call, and each key made once for the whole part rather than once per item (a tenth of the reading
    at 131k GPUs). Exactly one item between each two separators, each a mapping, proves each line one
    object."""
    # [] or null: read in C (NaN calls back into Python per item); a "[" is found faster than a "null"
    square = "[" in part
    if not square:
        separator, word, decode = [], ",[],", _scan_joined
    elif "null" not in part:
        separator, word, decode = None, ",null,", _scan_joined
    elif "NaN" not in part:
        separator, word, decode = _SEPARATOR, ",NaN,", _scan_joined_nan
    else:
        return _scan_lines(part.split("\n"), scan)
    # each line's "{...}" between separators: its line break and "  - " (no other "\n  - " is in the part)
    joined = "[" + part[4:].replace("\n  - ", word) + "]"
    try:
        values, end = decode(joined, 0)
    except (StopIteration, ValueError, RecursionError):
        return None
    n = part.count("\n") + 1
    items = values[0::2]
    if (end != len(joined) or len(values) != 2 * n - 1 or values[1::2].count(separator) != n - 1
            or set(map(type, items)) != {dict}):
        return None
    # no line nests deeper than MAX_DEPTH unless the part holds that many more brackets than items
    extra = (part.count("[") if square else 0) + part.count("{") - n
    if extra >= MAX_DEPTH and any(_depth(item) > MAX_DEPTH for item in items):
        return None
    return items


def _scan_lines(lines: list[str], scan) -> list[dict] | None:
    """_scan_run line by line (a run whose text holds NaN somewhere, e.g. in a name)."""
    stripped = list(map(str.rstrip, lines))
    if not all(map(str.endswith, stripped, repeat("}"))):
        return None
    try:
        items, ends = zip(*map(scan, stripped, repeat(4)))
    except (StopIteration, ValueError, RecursionError):
        return None
    if list(ends) != list(map(len, stripped)):
        return None  # text after the object
    # no line nests deeper than MAX_DEPTH unless the run holds that many more brackets than items
    extra = sum(map(str.count, stripped, repeat("["))) + sum(map(str.count, stripped, repeat("{"))) - len(lines)
    if extra >= MAX_DEPTH and any(_depth(item) > MAX_DEPTH for item in items):
        return None
    return list(items)


def _reader_error(exc: yaml.reader.ReaderError, text: str) -> YamlSyntaxError:
    """A character YAML refuses (a control character), at its line and column rather than the
    reader's character offset."""
    position = min(max(exc.position, 0), len(text))
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    character = exc.character if isinstance(exc.character, int) else ord(exc.character)
    return YamlSyntaxError(f"invalid YAML: control character U+{character:04X} is not allowed "
                           "(delete it, or write it as an escape inside double quotes)", line, column)


def parse_located(text: str) -> Located:
    """Parse any YAML text safely, keeping the position of every key and value."""
    try:
        node = yaml.compose(text, Loader=SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = exc.problem or exc.context or "invalid YAML"
        if exc.context and exc.problem:
            what = f"{exc.context}, {exc.problem}"
        if "nesting depth" in what:  # libyaml stops at 1000 levels; say it as our own bound does
            what = f"nested more than {MAX_DEPTH} levels deep (no design needs that; flatten the value)"
        raise YamlSyntaxError(f"invalid YAML: {what}", mark.line + 1 if mark else None,
                              mark.column + 1 if mark else None) from None
    except yaml.reader.ReaderError as exc:
        raise _reader_error(exc, text) from None
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(f"invalid YAML: {exc}", None, None) from None
    except RecursionError:  # only the pure-Python parser recurses; libyaml stops at 1000 levels
        raise YamlSyntaxError(f"invalid YAML: nested more than {MAX_DEPTH} levels deep", 1, 1) from None
    located = Located(None)
    if node is None:
        return located
    problem = bound_problem(node)
    if problem is not None:
        raise YamlSyntaxError(*problem)
    constructor = yaml.constructor.SafeConstructor()
    located.data = _build(node, (), located, constructor)
    return located


_PLAIN_TAGS = {
    "tag:yaml.org,2002:" + t for t in ("map", "seq", "str", "int", "float", "bool", "null", "timestamp", "binary")
}


def _pos(mark) -> tuple[int, int]:
    return (mark.line + 1, mark.column + 1)


def _build(node, path: tuple, located: Located, constructor) -> object:
    located.value_pos[path] = _pos(node.start_mark)
    if node.tag not in _PLAIN_TAGS:
        raise YamlSyntaxError(f"invalid YAML: tag {node.tag!r} is not allowed (plain data only)",
                              *_pos(node.start_mark))
    if isinstance(node, yaml.MappingNode):
        constructor.flatten_mapping(node)  # merge keys (<<) resolve like the safe loader
        result = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise YamlSyntaxError("invalid YAML: a mapping key must be a plain value",
                                      *_pos(key_node.start_mark))
            key = constructor.construct_object(key_node)
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                key = str(key)
            child = path + (key,)
            if key in result:
                located.duplicate_keys.append((child, *_pos(key_node.start_mark)))
            located.key_pos[child] = _pos(key_node.start_mark)
            result[key] = _build(value_node, child, located, constructor)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_build(item, path + (i,), located, constructor) for i, item in enumerate(node.value)]
    try:
        return constructor.construct_object(node)
    except yaml.constructor.ConstructorError as exc:
        raise YamlSyntaxError(f"invalid YAML: {exc.problem}", *_pos(node.start_mark)) from None


# ---- bounds on what a file may make the loader build -----------------------------------------

def _depth(value) -> int:
    """Nesting depth of plain data (1 for a scalar), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if level > MAX_DEPTH:
            break
        if isinstance(item, dict):
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, level + 1) for v in item)
    return deepest


def _children(node) -> list:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def bound_problem(root) -> tuple[str, int, int] | None:
    """(message, line, column) when the composed YAML nests deeper than MAX_DEPTH, refers to
    itself through an alias, or expands through aliases to more than MAX_ALIAS_VALUES values.

    Aliases share one node in the composed graph, so each node's height and expanded size
    are computed once (memoised, iterative): linear in the file, however big the expansion.
    """
    cap = MAX_ALIAS_VALUES * 4 + 1  # sizes above this are all "too many": no huge integers
    height: dict[int, int] = {}
    size: dict[int, int] = {}
    on_stack: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            kids = _children(node)
            height[key] = 1 + max((height[id(k)] for k in kids), default=0)
            size[key] = min(cap, 1 + sum(size[id(k)] for k in kids))
            on_stack.discard(key)
            continue
        if key in height:
            continue
        on_stack.add(key)
        stack.append((node, True))
        for kid in _children(node):
            if id(kid) in on_stack:
                return ("invalid YAML: an alias refers to the value that contains it (an endless value)",
                        *_pos(kid.start_mark))
            if id(kid) not in height:
                stack.append((kid, False))
        if len(on_stack) > MAX_DEPTH + 1:
            return _too_deep(node)
    distinct = len(height)
    if height[id(root)] > MAX_DEPTH:
        return _too_deep(_deepest_at(root, height, MAX_DEPTH + 1))
    if size[id(root)] - distinct > MAX_ALIAS_VALUES:
        # the smallest value that alone expands past the bound: where the bomb sits
        node = root
        while True:
            big = [k for k in _children(node) if size[id(k)] > MAX_ALIAS_VALUES]
            if not big:
                break
            node = max(big, key=lambda k: size[id(k)])
        total = "more than " + f"{MAX_ALIAS_VALUES * 4:,}" if size[id(node)] >= cap else f"{size[id(node)]:,}"
        return (f"invalid YAML: aliases (*name) expand this value to {total} values; at most "
                f"{MAX_ALIAS_VALUES:,} values may come from aliases (write the values out, or fewer aliases)",
                *_pos(node.start_mark))
    return None


def _too_deep(node) -> tuple[str, int, int]:
    return (f"invalid YAML: nested more than {MAX_DEPTH} levels deep (no design needs that; "
            "flatten the value)", *_pos(node.start_mark))


def _deepest_at(root, height: dict[int, int], level: int):
    """The node at `level` on the deepest path from the root."""
    node = root
    for _ in range(level - 1):
        node = max(_children(node), key=lambda k: height[id(k)])
    return node


def load_value(text: str) -> object:
    """Plain data of a small YAML text (a --set value, a field typed in a form), with the same
    bounds as a file: YamlSyntaxError when it is invalid, too deep or an alias bomb."""
    try:
        node = yaml.compose(text, Loader=SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise YamlSyntaxError(f"invalid YAML: {exc.problem or exc.context}", mark.line + 1 if mark else None,
                              mark.column + 1 if mark else None) from None
    except yaml.reader.ReaderError as exc:
        raise _reader_error(exc, text) from None
    except (yaml.YAMLError, RecursionError) as exc:
        raise YamlSyntaxError(f"invalid YAML: {exc}", None, None) from None
    if node is None:
        return None
    problem = bound_problem(node)
    if problem is not None:
        raise YamlSyntaxError(*problem)
    return _build(node, (), Located(None), yaml.constructor.SafeConstructor())  # plain tags only, as a file
