"""Reading YAML text into plain data, with the line and column of every key and value.

Two paths:
- `parse_fast`: the layout `save` writes (each rack, node, switch and link on one line as a
  JSON object inside a YAML flow sequence item). Those lines go through `json.loads`, the
  small rest through PyYAML's C loader. 130k-GPU files load in about a second this way;
  PyYAML alone needs ~130 us per element.
- `parse_located`: any YAML, via PyYAML's composer (safe: plain data only), keeping marks.
  Used when the fast path does not apply and, for the error positions, when a file is bad.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import yaml

SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_PySafeLoader = yaml.SafeLoader

FAST_SECTIONS = ("racks", "nodes", "switches", "links")
_ITEM = re.compile(r"^  - (\{.*\})\s*$")
_SPEC_KEY = re.compile(r"^  ([A-Za-z_][\w-]*):")
_TOP_KEY = re.compile(r"^([A-Za-z_][\w-]*):")


class YamlSyntaxError(Exception):
    def __init__(self, message: str, line: int | None, column: int | None):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


@dataclass
class Located:
    """Data plus positions: path tuple -> (line, column), both 1-based."""

    data: object
    key_pos: dict[tuple, tuple[int, int]] = field(default_factory=dict)
    value_pos: dict[tuple, tuple[int, int]] = field(default_factory=dict)
    duplicate_keys: list[tuple[tuple, int, int]] = field(default_factory=list)

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


def parse_fast(text: str) -> object | None:
    """Data of a file in the layout `save` writes; None when the text is not in that layout."""
    lines = text.split("\n")
    skeleton: list[str] = []
    sections: dict[str, list] = {}
    top = spec_key = None
    decode = json.JSONDecoder(parse_constant=_reject_constant).decode
    for line in lines:
        m = _ITEM.match(line) if top == "spec" and spec_key in FAST_SECTIONS else None
        if m:
            try:
                item = decode(m.group(1))
            except ValueError:
                return None
            if not isinstance(item, dict):
                return None
            sections[spec_key].append(item)
            skeleton.append("")
            continue
        t = _TOP_KEY.match(line)
        if t:
            top, spec_key = t.group(1), None
        elif top == "spec":
            s = _SPEC_KEY.match(line)
            if s:
                spec_key = s.group(1)
                if spec_key in FAST_SECTIONS:
                    if spec_key in sections:
                        return None  # the same section twice: let the full parser report it
                    sections[spec_key] = []
        skeleton.append(line)
    if not sections:
        return None
    try:
        data = yaml.load("\n".join(skeleton), Loader=SafeLoader)
    except yaml.YAMLError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("spec"), dict):
        return None
    spec = data["spec"]
    for name, items in sections.items():
        if spec.get(name) is not None:
            return None  # a section mixes one-line items with block items: take the full path
        spec[name] = items
    return data


def parse_located(text: str) -> Located:
    """Parse any YAML text safely, keeping the position of every key and value."""
    try:
        node = yaml.compose(text, Loader=SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = exc.problem or exc.context or "invalid YAML"
        if exc.context and exc.problem:
            what = f"{exc.context}, {exc.problem}"
        raise YamlSyntaxError(f"invalid YAML: {what}", mark.line + 1 if mark else None,
                              mark.column + 1 if mark else None) from None
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(f"invalid YAML: {exc}", None, None) from None
    located = Located(None)
    if node is None:
        return located
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
