"""Slurm hostlist expressions: `node[001-004,07]` <-> node001 node002 node003 node004 node07.

The syntax is Slurm's (src/common/hostlist.c): a prefix, then brackets holding comma-separated
numbers and ranges; zero padding is kept from the range's first number; several bracket
groups multiply out (`rack[1-2]-n[1-2]`); top-level commas separate expressions.
"""
from __future__ import annotations

import re

# A range as huge as node[0-99999999] is a typo, not a cluster: refuse it instead of running out of memory.
MAX_HOSTS = 1_000_000


class HostlistError(ValueError):
    """The expression cannot be read; the message says where."""


def _split_top(text: str) -> list[str]:
    """Split at commas that are not inside brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
            if depth > 1:
                raise HostlistError(f"nested '[' in {text!r}")
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise HostlistError(f"']' without '[' in {text!r}")
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth:
        raise HostlistError(f"'[' without ']' in {text!r}")
    parts.append(text[start:])
    return [p for p in (s.strip() for s in parts) if p]


def _bracket_values(body: str, whole: str) -> list[str]:
    values = []
    for item in body.split(","):
        item = item.strip()
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", item)
        if not m:
            raise HostlistError(f"{item!r} in {whole!r} is not a number or a range like 1-8")
        lo_text, hi_text = m.group(1), m.group(2)
        if hi_text is None:
            values.append(lo_text)
            continue
        lo, hi = int(lo_text), int(hi_text)
        if hi < lo:
            raise HostlistError(f"range {item} in {whole!r} runs backwards (write {hi_text}-{lo_text})")
        if hi - lo + 1 > MAX_HOSTS:
            raise HostlistError(f"range {item} in {whole!r} names more than {MAX_HOSTS:,} hosts")
        width = len(lo_text) if lo_text.startswith("0") and len(lo_text) > 1 else 0
        values.extend(str(v).zfill(width) for v in range(lo, hi + 1))
    return values


def expand(text: str) -> list[str]:
    """All host names of a hostlist expression, in order (duplicates kept out)."""
    out: list[str] = []
    seen: set[str] = set()
    for expr in _split_top(text.strip()):
        names = [""]
        for literal, body in re.findall(r"([^\[\]]*)(?:\[([^\]]*)\])?", expr):
            names = [n + literal for n in names]
            if body:
                values = _bracket_values(body, expr)
                names = [n + v for n in names for v in values]
                if len(names) > MAX_HOSTS:
                    raise HostlistError(f"{expr!r} names more than {MAX_HOSTS:,} hosts")
        for name in names:
            if name and name not in seen:
                seen.add(name)
                out.append(name)
    return out


def compress(names: list[str]) -> str:
    """The usual hostlist of `names`: numbers of one prefix and zero padding in brackets.

    Prefixes keep the order of their first appearance; numbers within one are sorted.
    `compress` then `expand` gives the same set of names.
    """
    by_prefix: dict[str, list[str]] = {}
    order: list[str] = []
    literals: dict[str, None] = {}
    for name in names:
        m = re.fullmatch(r"(.*?)(\d+)", name)
        if not m:
            if name not in literals:
                literals[name] = None
                order.append("\0" + name)
            continue
        prefix, digits = m.group(1), m.group(2)
        if prefix not in by_prefix:
            by_prefix[prefix] = []
            order.append(prefix)
        by_prefix[prefix].append(digits)
    parts = []
    for key in order:
        if key.startswith("\0"):
            parts.append(key[1:])
            continue
        digits_list = by_prefix[key]
        padded = [d for d in digits_list if d.startswith("0") and len(d) > 1]
        width = len(padded[0]) if padded else 0
        groups: dict[int, set[int]] = {}
        for d in digits_list:
            w = width if str(int(d)).zfill(width) == d else 0
            groups.setdefault(w, set()).add(int(d))
        for w in sorted(groups, reverse=True):
            parts.append(_bracket(key, sorted(groups[w]), w))
    return ",".join(parts)


def _bracket(prefix: str, nums: list[int], width: int) -> str:
    ranges = []
    start = prev = nums[0]
    for n in nums[1:] + [None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        a, b = str(start).zfill(width), str(prev).zfill(width)
        ranges.append(a if start == prev else f"{a}-{b}")
        if n is not None:
            start = prev = n
    if len(nums) == 1:
        return f"{prefix}{ranges[0]}"
    return f"{prefix}[{','.join(ranges)}]"
