"""The links' one-line items as `save` writes them, read into columns by one regular expression.

A saved link line is `  - {"id": "l0", "a": "node0:nic0", "b": "leaf0:p0", "kind": "infiniband",
"bandwidth_gbps": 400, "latency_us": 0.01}`: the fields in Link's order, those at their default left out,
json.dumps's separators. One `split` over a part's text gives each line's id, ends and the rest of its
fields as one text (a slice each), with no mapping per link: the JSON decoder's mappings, read back into
columns, took twice as long (a 131k-GPU file has 295k links). The rest (kind, speed, latency, count...)
repeats from link to link: each distinct rest is read once, by a second expression, and its values
shared by every line that has it (a capture per field on every line took 1.6 times as long). A line in any
other form (other spacing or order, an escape or a control character in a text, a sign on a number, a
float where an integer goes, white space after the item) makes the part None, and it is read as JSON,
whose rules and messages are the file's.

What is accepted reads exactly as the JSON decoder reads it: a text holds no quote, backslash or
control character, so its characters are its value; a number is written as JSON writes one,
unsigned (every number of a link has a minimum of at least 0: a sign could only be refused later),
made a float where the field holds floats (an integer there is made one anyway, to the same value)
and an int where it holds integers.
"""
from __future__ import annotations

import re

import numpy as np

from .column_values import CodedColumn

# The expression is loose where a check over the distinct values is cheaper than one per character: a
# text is any run of characters but quotes, a number any run of digits, signs, points and exponents from
# a digit.
_TEXT = r'"([^"]*+)"'
_NUMBER = r"([0-9][0-9.eE+-]*+)"
_OPTIONAL_TEXT = r'(?:, "{}": "([^"]*+)")?+'
# JSON's numbers (unsigned), checked on each distinct rest's values
_JSON_NUMBER = re.compile(r"(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_JSON_INTEGER = re.compile(r"0|[1-9][0-9]*")

# (field, what its value is: text, number or integer, whether a line may leave it out), in Link's order
# (a test holds them to Link's fields)
FIELDS = (("id", "text", False), ("a", "text", False), ("b", "text", False), ("kind", "text", False),
          ("bandwidth_gbps", "number", False), ("latency_us", "number", True), ("count", "integer", True),
          ("slowdown", "number", True), ("note", "text", True), ("state", "text", True))
_OWN = 3  # the fields each link has a value of its own for (id, a, b); the others make the rest


def _rest_pattern() -> re.Pattern:
    """The rest of a line's fields (after "b"), up to the closing brace. The optional fields are
    possessive (?+): a field's key tells whether it is there, so giving one up could never make a rest
    match; without the states kept to try that, reading is faster."""
    parts = []
    for i, (name, what, optional) in enumerate(FIELDS[_OWN:]):
        if optional and what == "text":
            parts.append(_OPTIONAL_TEXT.format(name))
            continue
        part = ("" if i == 0 else ", ") + f'"{name}": ' + (_TEXT if what == "text" else _NUMBER)
        parts.append(f"(?:{part})?+" if optional else part)
    return re.compile("".join(parts))


# a line: its own fields, then the rest as one text (checked by _REST); [^\n]* gives back only the "}"
_ROW = re.compile(r'^  - \{"id": ' + _TEXT + r', "a": ' + _TEXT + r', "b": ' + _TEXT + r', ("kind": [^\n]*)\}$',
                  re.MULTILINE)
_REST = _rest_pattern()
_STEP = _OWN + 2  # split's pieces per line: the text before it, then its groups


def link_columns(text: str, absent) -> tuple[dict[str, list | CodedColumn], dict[str, set[type]]] | None:
    """(each field's values over the lines of `text` (each starting "  - {", joined by line breaks),
    `absent` where a line leaves the field out, no entry for a field no line has: the own fields as lists,
    the others as columns coded by each line's rest (read once per distinct rest); the set of each
    column's types, known here without a look at each value); None when some line is not in the layout
    `save` writes."""
    if "\\" in text:
        return None  # an escape: JSON decides
    # the text before the first line, each line's groups, the text up to the next line, and so on: each
    # column is then one slice
    pieces = _ROW.split(text)
    n = (len(pieces) - 1) // _STEP
    between = pieces[_STEP:-1:_STEP]
    if pieces[0] or pieces[-1] or between.count("\n") != n - 1 or not n:
        return None  # some text is not a line in the layout: each match runs from a line's start to its end
    if _control_characters(text) != n - 1:
        return None  # a control character (other than the line breaks) in a text: JSON decides
    columns: dict[str, list | CodedColumn] = {name: pieces[k::_STEP]
                                              for k, (name, _, _) in enumerate(FIELDS[:_OWN], 1)}
    kinds = {name: {str} for name in columns}
    rests = pieces[_OWN + 1::_STEP]
    distinct = [rests[0]] if rests.count(rests[0]) == n else list(set(rests))
    values = _rest_values(distinct, absent)
    if values is None:
        return None
    for name, value_of in values.items():
        columns[name] = CodedColumn(rests, value_of)
        kinds[name] = set(map(type, value_of.values()))
    return columns, kinds


def _rest_values(rests: list[str], absent) -> dict[str, dict[str, object]] | None:
    """For each field after the own ones that some rest has: each rest's value of it (`absent` where the
    rest leaves it out); equal number texts one object. None when a rest is not in the layout, or a number
    is not a JSON number (an integer, for an integer field) or has more digits than int() reads (the JSON
    reader says so)."""
    fields = FIELDS[_OWN:]
    groups = []
    for rest in rests:
        match = _REST.fullmatch(rest)
        if match is None:
            return None
        groups.append(match.groups())
    values = {}
    for k, (name, what, _) in enumerate(fields):
        texts = [g[k] for g in groups]
        if all(t is None for t in texts):
            continue  # no line has it
        if what == "text":
            value_of = dict(zip(rests, (absent if t is None else t for t in texts)))
        else:
            number_of = _numbers(set(texts) - {None}, what)
            if number_of is None:
                return None
            number_of[None] = absent
            value_of = dict(zip(rests, map(number_of.__getitem__, texts)))
        values[name] = value_of
    return values


def _control_characters(text: str) -> int:
    """How many characters below U+0020 the text holds (JSON allows none in a text), at C speed: in
    UTF-8 those are the only bytes below 0x20."""
    return int(np.count_nonzero(np.frombuffer(text.encode("utf-8", "surrogatepass"), np.uint8) < 0x20))


def _numbers(texts: set[str], what: str) -> dict[str, object] | None:
    """Each distinct text's value (equal texts one object), or None when one is not a JSON number (an
    integer, for an integer field) or has more digits than int() reads (the JSON reader says so)."""
    grammar = _JSON_INTEGER if what == "integer" else _JSON_NUMBER
    if not all(map(grammar.fullmatch, texts)):
        return None
    convert = int if what == "integer" else float
    try:
        return {t: convert(t) for t in texts}
    except ValueError:
        return None
