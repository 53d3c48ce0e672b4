"""The links' one-line items as `save` writes them, read into columns by one regular expression.

A saved link line is `  - {"id": "l0", "a": "node0:nic0", "b": "leaf0:p0", "kind": "infiniband",
"bandwidth_gbps": 400, "latency_us": 0.01}`: the fields in Link's order, those at their default left out,
json.dumps's separators. One `split` over a part's lines gives each field's text as a column (a slice),
with no mapping per link: the JSON decoder's mappings, read back into columns, took twice as long (a
131k-GPU file has 295k links). A line in any other form (other spacing or order, an escape or a control character
in a text, a sign on a number, a float where an integer goes, white space after the item) makes the part
None, and it is read as JSON, whose rules and messages are the file's.

What is accepted reads exactly as the JSON decoder reads it: a text holds no quote, backslash or
control character, so its characters are its value; a number is written as JSON writes one,
unsigned (every number of a link has a minimum of at least 0: a sign could only be refused later),
made a float where the field holds floats (an integer there is made one anyway, to the same value)
and an int where it holds integers.
"""
from __future__ import annotations

import re

import numpy as np

# The expression is loose where a check over a column is cheaper than one per character: a text is any
# run of characters but quotes, a number any run of digits, signs, points and exponents from a digit.
_TEXT = r'"([^"]*+)"'
_NUMBER = r"([0-9][0-9.eE+-]*+)"
_OPTIONAL_TEXT = r'(, "{}": "[^"]*+")?+'  # with its key: an absent text ("") differs from an empty one
# JSON's numbers (unsigned), checked on each column's distinct texts
_JSON_NUMBER = re.compile(r"(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_JSON_INTEGER = re.compile(r"0|[1-9][0-9]*")

# (field, what its value is: text, number or integer, whether a line may leave it out), in Link's order
# (a test holds them to Link's fields)
FIELDS = (("id", "text", False), ("a", "text", False), ("b", "text", False), ("kind", "text", False),
          ("bandwidth_gbps", "number", False), ("latency_us", "number", True), ("count", "integer", True),
          ("slowdown", "number", True), ("note", "text", True), ("state", "text", True))


def _row_pattern() -> re.Pattern:
    """The optional fields are possessive (?+): a field's key tells whether it is there, so giving one up
    could never make a line match; without the states kept to try that, reading is ~15% faster."""
    parts = []
    for i, (name, what, optional) in enumerate(FIELDS):
        if optional and what == "text":
            parts.append(_OPTIONAL_TEXT.format(name))
            continue
        part = ("" if i == 0 else ", ") + f'"{name}": ' + (_TEXT if what == "text" else _NUMBER)
        parts.append(f"(?:{part})?+" if optional else part)
    return re.compile(r"^  - \{" + "".join(parts) + r"\}$", re.MULTILINE)


_ROW = _row_pattern()


def link_columns(lines: list[str], absent) -> tuple[dict[str, list], dict[str, set[type]]] | None:
    """(each field's values over `lines` (each starting "  - {"), `absent` where a line leaves the field
    out, no entry for a field no line has; the set of each column's types, known here without a look at
    each value); None when some line is not in the layout `save` writes."""
    text = "\n".join(lines)
    if "\\" in text or _control_characters(text) != len(lines) - 1:
        return None  # an escape or a control character (other than the line breaks): JSON decides
    # the text before the first match, each match's fields (None: a field left out), the text up to the
    # next match, and so on: each field's column is then one slice (findall's rows, turned into columns
    # by zip, took ~10% longer at 131k GPUs)
    pieces = _ROW.split(text)
    step = len(FIELDS) + 1
    if len(pieces) != len(lines) * step + 1:  # each match runs from a line's start to its end: one a line
        return None
    columns, kinds = {}, {}
    for k, (name, what, optional) in enumerate(FIELDS, 1):
        texts = pieces[k::step]
        some_absent = False
        if optional:
            if not any(texts):
                continue  # no line has it
            some_absent = None in texts
            if what == "text":
                start = len(f', "{name}": "')
                texts = [t[start:-1] if t else absent for t in texts]
        if what == "text":
            columns[name], kinds[name] = texts, {str, type(absent)} if some_absent else {str}
            continue
        if texts and texts.count(texts[0]) == len(texts):  # the usual part: one value throughout (a speed,
            value_of = _numbers({texts[0]}, what)  # a latency), told in C without hashing 2,048 new texts
            if value_of is None:
                return None
            columns[name] = [value_of[texts[0]]] * len(texts)
            kinds[name] = {type(value_of[texts[0]])}
            continue
        value_of = _numbers(set(texts) - {None}, what)
        if value_of is None:
            return None
        if some_absent:
            value_of[None] = absent
        columns[name] = list(map(value_of.__getitem__, texts))
        kinds[name] = set(map(type, value_of.values()))
    return columns, kinds


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
