"""A field's values over a whole section as the readers hand them to the bulk checker (schema._make_bulk):
a plain list, or a coded column (each item's key into a table of its distinct values) that a test, a
default or a conversion reads once per distinct value; equal values one object either way.
"""
from __future__ import annotations

SHARE_SAMPLE = 64  # a column whose first values repeat this much is worth sharing (below)


def shared_values(col: list, kinds: set, distinct: set | None = None) -> list:
    """The column with equal strings or floats as one object each: the reader makes a new object per
    value, so 295k links' "infiniband", 400.0 and 0.01 were ~31 MB of copies at 131k GPUs. Only a
    column of `kinds` str or float whose first SHARE_SAMPLE values repeat (a kind, a speed; not ids
    or ends) is looked at; floats with a zero (0.0 and -0.0 are one dict key, not one value) or a NaN
    (no dict key) stay as they are. `distinct`: the column's set of values, when already made."""
    if len(col) < SHARE_SAMPLE or not _sharable(kinds):
        return col
    if distinct is None:
        if len(set(col[:SHARE_SAMPLE])) * 2 > SHARE_SAMPLE:
            return col
        distinct = set(col)
    if len(distinct) * 2 > len(col) or not _sharable(kinds, distinct):
        return col
    if len(distinct) == 1:
        return [distinct.pop()] * len(col)
    return list(map({v: v for v in distinct}.__getitem__, col))


def _sharable(kinds: set, values=()) -> bool:
    """Whether equal values of these kinds may be one object: strings, and floats but a zero or a NaN."""
    if kinds == {str}:
        return True
    return kinds == {float} and not (0.0 in values or any(v != v for v in values))


class CodedColumn:
    """A column as each item's key (`keys`, hashable: a line's text, say) into `table`, key -> value: a
    reader whose items repeat a few texts (the links' kinds, speeds and counts) reads each text once,
    and the bulk checker tests, fills in and converts each distinct value once (over 295k links at 131k
    GPUs: ~20 ms of sets and lists less). The values are immutable (no lists): items of one key share one."""

    __slots__ = ("keys", "table")

    def __init__(self, keys: list, table: dict):
        self.keys = keys
        self.table = table

    def __len__(self) -> int:
        return len(self.keys)

    def distinct(self) -> list:
        """Every value some item has (equal ones possibly more than once)."""
        return list(self.table.values())

    def mapped(self, convert) -> "CodedColumn":
        """The column of convert(value) of each item, convert called once per key. (Not for a value
        each item must have a copy of, such as a new list.)"""
        return CodedColumn(self.keys, {key: convert(value) for key, value in self.table.items()})

    def expanded(self, kinds: set) -> list:
        """The items' values as a list, equal values one object where `kinds` allow (shared_values)."""
        table = self.table
        values = table.values()
        if _sharable(kinds, values):
            one = {value: value for value in values}
            table = {key: one[value] for key, value in table.items()}
            values = table.values()
        first = next(iter(values), None)
        if all(value is first for value in values):
            return [first] * len(self.keys)
        return list(map(table.__getitem__, self.keys))
