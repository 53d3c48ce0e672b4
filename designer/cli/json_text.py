"""`json.dumps(value, indent=2)`, the same text, made faster for large outputs.

With an indent, the standard library encodes in Python, one generator per nested container, for
every value; without one it encodes in C. Here each run of values that are not containers (most of
a command's output: rows of figures) is encoded by the C encoder, the line break and indent of its
depth given as its item separator; only the containers that hold others are walked in Python.
"""
from __future__ import annotations

import json
from json.encoder import c_make_encoder, encode_basestring_ascii

_INDENT = "  "
_CONTAINERS = (dict, list, tuple)


def dumps_indented(value) -> str:
    """Exactly `json.dumps(value, indent=2)` (the same errors for what JSON cannot hold)."""
    if c_make_encoder is None or not isinstance(value, _CONTAINERS):  # no C encoder (not CPython), a scalar
        return json.dumps(value, indent=2)
    return _Writer().text(value, 0)


class _Writer:
    """The text of nested containers, one level of indent per depth."""

    def __init__(self):
        self.encoders: list = []  # per depth: a C encoder that puts items on lines of their own
        self.open: set[int] = set()  # the containers being written: one met again is a cycle

    def text(self, value, depth: int) -> str:
        if not value:
            return "{}" if isinstance(value, dict) else "[]"
        is_dict = isinstance(value, dict)
        if id(value) in self.open:
            raise ValueError("Circular reference detected")
        self.open.add(id(value))
        pieces = self._dict_pieces(value, depth) if is_dict else self._list_pieces(value, depth)
        self.open.discard(id(value))
        inner = "\n" + _INDENT * (depth + 1)
        return ("{" if is_dict else "[") + inner + ("," + inner).join(pieces) + "\n" + _INDENT * depth + \
            ("}" if is_dict else "]")

    def _dict_pieces(self, value: dict, depth: int) -> list[str]:
        pieces, run = [], {}
        for key, item in value.items():
            if isinstance(item, _CONTAINERS):
                if run:
                    pieces.append(self._run_text(run, depth))
                    run = {}
                pieces.append(_key_text(key) + self.text(item, depth + 1))
            else:
                run[key] = item
        if run:
            pieces.append(self._run_text(run, depth))
        return pieces

    def _list_pieces(self, value, depth: int) -> list[str]:
        pieces, run = [], []
        for item in value:
            if isinstance(item, _CONTAINERS):
                if run:
                    pieces.append(self._run_text(run, depth))
                    run = []
                pieces.append(self.text(item, depth + 1))
            else:
                run.append(item)
        if run:
            pieces.append(self._run_text(run, depth))
        return pieces

    def _run_text(self, run: dict | list, depth: int) -> str:
        """The items of a run of non-containers of a container at `depth`, each on a line of its own."""
        while len(self.encoders) <= depth:
            self.encoders.append(c_make_encoder(None, _unserializable, encode_basestring_ascii, None, ": ",
                                                ",\n" + _INDENT * (len(self.encoders) + 1), False, False, True))
        return "".join(self.encoders[depth](run, 0))[1:-1]


def _key_text(key) -> str:
    """'"key": ' as json.dumps writes it: a number, true, false or null as its text, quoted."""
    if not isinstance(key, str):
        if not isinstance(key, (int, float)) and key is not None:
            raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")
        key = json.dumps(key)
    return encode_basestring_ascii(key) + ": "


def _unserializable(value):
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")
