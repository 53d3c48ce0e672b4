"""NaN and infinities inside a design: where each one is, by element and field, and the fix.

The loader refuses non-finite numbers, so a file never brings one in; an edit through the
API, or a recovery file written from such a state, can. Saving names them (nothing is written
that loading refuses) and the checks list them like any other problem.
The walk is linear in the elements (NonFiniteNumbers then follows edits element by element);
nested data (calibration, layout) is visited once per object, so shared (YAML alias) sub-trees
cost nothing extra.
"""
from __future__ import annotations

import dataclasses
import math
import re
from functools import partial
from itertools import chain
from operator import attrgetter, is_not

from ..problems import Problem
from .spec import has_range

MAX_NESTED_NODES = 1_000_000  # a bound on the nested-data walk (calibration, layout)

_FIXES = {
    "racks": "type a finite number for it in the Inspector",
    "nodes": "type a finite number for it in the Inspector",
    "switches": "type a finite number for it in the Inspector",
    "links": "type a finite number for it in the Inspector",
    "workload": "set a finite number in the Job panel",
    "parallelism": "set a finite number in the Job panel",
    "calibration": "set a finite number under spec.calibration (or remove the key for the default)",
    "layout": "drag the element on the canvas to give it a position",
    "metadata": "set a finite number",
}


def _bad(value) -> bool:
    return value.__class__ is float and not math.isfinite(value)


def non_finite_problems(doc, limit: int = 50) -> list[Problem]:
    """Up to `limit` problems, one per NaN or infinity, naming the element and the field."""
    return NonFiniteNumbers(doc).problems(doc, limit)


COLLECTIONS = ("racks", "nodes", "switches", "links")


class NonFiniteNumbers:
    """Where a design's elements hold NaN or infinity, kept up to date element by element: the live
    check redoes the elements an edit changed, not the whole design (0.1 s a check at 131k GPUs).
    The nested sections (job, calibration, layout: small) are read each time `problems` is asked."""

    def __init__(self, doc):
        self._keys: dict[str, list[str]] = {}  # collection -> its number fields
        # (collection, position) -> (field, place in a list field or -1, value) of each bad number
        self._found: dict[tuple[str, int], list[tuple[str, int, float]]] = {}
        as_read = doc.elements_as_read()
        for name in COLLECTIONS:
            if name == "links":
                self._scan(name, doc.spec.links, doc.link_values, doc.link_numbers_finite)
            else:  # as read, a field with finite bounds holds no NaN or infinity: not looked at
                items = getattr(doc.spec, name)
                self._scan(name, items, known_finite=_bounded(items[0]).__contains__ if as_read and items else None)

    def _scan(self, name: str, items: list, fields=None, known_finite=None) -> None:
        """`fields`: a field's values of every item by its name (the document's link_values: a design held
        still reads each once for every reader), else read here; `known_finite`: whether a field's values
        are known to hold no NaN or infinity (the file's reader held them within bounds): not looked at."""
        keys = self._keys[name] = _number_fields(items)
        for place in [place for place in self._found if place[0] == name]:
            del self._found[place]
        if known_finite is not None:
            keys = [key for key in keys if not known_finite(key)]
        # the fields that hold a plain number in the first element (not a list, not None) at once: one
        # that holds another kind of value fails the sum at once, and a server's lists and optional slot
        # made that pass a lost ~10 ms at 131k GPUs
        plain = [key for key in keys if items and getattr(items[0], key).__class__ in _NUMBERS]
        if len(plain) > 1 and _all_finite(list(chain.from_iterable(
                map(fields, plain) if fields is not None else map(attrgetter(*plain), items)))):
            keys = [key for key in keys if key not in plain]  # plain numbers, all finite
        for key in keys:
            values = list(map(attrgetter(key), items) if fields is None else fields(key))
            if _all_finite(values):  # the usual case, in C
                continue
            for i, value in enumerate(values):  # item by item: which ones
                bad = _bad_in(key, value)
                if bad:
                    self._found.setdefault((name, i), []).extend(bad)

    def redo(self, doc, name: str, position: int) -> None:
        """The element at `position` of collection `name` again (after an edit of its values)."""
        items = getattr(doc.spec, name)
        if _number_fields(items) != self._keys[name]:  # a field now holds a number: all of them
            self._scan(name, items)
            return
        element = items[position]
        bad = [b for key in self._keys[name] for b in _bad_in(key, getattr(element, key))]
        if bad:
            self._found[(name, position)] = bad
        else:
            self._found.pop((name, position), None)

    def inserted(self, name: str, position: int) -> None:
        """An element was put at `position` of collection `name`: the ones from there on move up one
        (the new one is read by `redo`)."""
        self._found = {(n, i + (n == name and i >= position)): bad for (n, i), bad in self._found.items()}

    def removed(self, name: str, position: int) -> None:
        """The element at `position` of collection `name` was removed: the ones after it move down one."""
        self._found = {(n, i - (n == name and i > position)): bad for (n, i), bad in self._found.items()
                       if (n, i) != (name, position)}

    def problems(self, doc, limit: int = 50) -> list[Problem]:
        """Up to `limit` problems: the elements' by collection, field, element and place, then the
        nested sections'."""
        spec = doc.spec
        found: list[Problem] = []
        rank = {name: r for r, name in enumerate(COLLECTIONS)}
        order = sorted(((rank[name], key, i, j, value, name) for (name, i), bad in self._found.items()
                        for key, j, value in bad), key=lambda f: f[:4])
        for _, key, i, j, value, name in order[:limit]:
            element = getattr(spec, name)[i]
            where = f"spec.{name}[{i}].{key}" + (f"[{j}]" if j >= 0 else "")
            found.append(Problem(f"{element.id}.{key} is {value}, not a finite number", where,
                                 element=element.id, fix=_FIXES[name]))
        if len(found) >= limit:
            return found
        for section in ("workload", "parallelism", "calibration", "layout"):
            for where, v in _nested(getattr(spec, section, None), f"spec.{section}"):
                element = where.split(".")[2].split("[")[0] if section == "layout" and where.count(".") >= 2 else None
                found.append(Problem(f"{where.removeprefix('spec.')} is {v}, not a finite number", where,
                                     element=element, fix=_FIXES[section]))
                if len(found) >= limit:
                    return found
        return found


def _bad_in(key: str, value) -> list[tuple[str, int, float]]:
    """(key, place in the list or -1, value) of each NaN or infinity in one field's value."""
    if value.__class__ is list:
        return [(key, j, v) for j, v in enumerate(value) if _bad(v)]
    return [(key, -1, value)] if _bad(value) else []


_NUMBERS = {int, float, bool}
_NUMBERS_OR_NONE = _NUMBERS | {type(None)}


def _all_finite(values: list) -> bool:
    """True when the values (numbers, None, or lists of numbers: per-GPU factors) hold no NaN or
    infinity, found without a Python step per value; False when that is not sure (then the caller
    looks value by value)."""
    try:
        return math.isfinite(math.fsum(values))  # the usual case: numbers only
    except (TypeError, OverflowError, ValueError):  # ValueError: inf and -inf in one sum
        pass
    kinds = set(map(type, values))
    try:
        if kinds <= _NUMBERS_OR_NONE:
            return float not in kinds or math.isfinite(math.fsum(filter(partial(is_not, None), values)))
        if kinds == {list}:
            flat = list(chain.from_iterable(values))
            return set(map(type, flat)) <= _NUMBERS and math.isfinite(math.fsum(flat))
    except (TypeError, OverflowError, ValueError):  # huge numbers, inf and -inf: value by value
        pass
    return False


def _number_fields(items: list) -> list[str]:
    """The fields of these elements that hold numbers: declared so, or holding one now (an API edit)."""
    if not items:
        return []
    first = items[0]
    declared = {f.name for f in dataclasses.fields(first) if _numeric(f.type)}
    held = ((f.name, getattr(first, f.name)) for f in dataclasses.fields(first))  # slots: no vars()
    return sorted(declared | {k for k, v in held
                              if isinstance(v, float) or (isinstance(v, list) and v and isinstance(v[0], float))})


def _bounded(element) -> frozenset[str]:
    """The fields of this element's class held between two finite bounds (spec_field's minimum or
    exclusive minimum, and maximum)."""
    out = set()
    for f in dataclasses.fields(element):
        bounds = [f.metadata.get(k) for k in ("minimum", "exclusive_minimum", "maximum")]
        if has_range(f.metadata) and all(math.isfinite(b) for b in bounds if b is not None):
            out.add(f.name)
    return frozenset(out)


def _numeric(tp) -> bool:
    text = tp if isinstance(tp, str) else getattr(tp, "__name__", str(tp))
    return re.search(r"\b(float|int)\b", text) is not None


def _nested(data, base: str):
    """(dotted path, value) of every non-finite number in dataclasses, dicts and lists."""
    stack = [(base, data)]
    seen: set[int] = set()
    visited = 0
    while stack and visited < MAX_NESTED_NODES:
        where, value = stack.pop()
        visited += 1
        if _bad(value):
            yield where, value
            continue
        if isinstance(value, (dict, list)) or dataclasses.is_dataclass(value):
            if id(value) in seen:  # shared (an alias) or recursive: walked once
                continue
            seen.add(id(value))
        if isinstance(value, dict):
            stack.extend((f"{where}.{k}", v) for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", v) for i, v in reversed(list(enumerate(value))))
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            stack.extend((f"{where}.{f.name}", getattr(value, f.name))
                         for f in reversed(dataclasses.fields(value)))
