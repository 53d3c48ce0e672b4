"""Prices and power of the parts (resources/catalog/prices.yaml), and a design's overrides of them.

The file and a cluster file's `spec.prices` share one shape: section -> part -> {price_usd,
power_w, ...}. `check_prices` is the one check of an override (loader, `designer validate`,
`designer cost`): an unknown section or part, a wrong type, a negative or non-finite number is a
problem with its path, so the loader places it at FILE:LINE:COLUMN. `price_book` merges the
overrides over the shipped figures; an overridden entry says so in its source.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import os
from dataclasses import dataclass
from typing import Any

from ..problems import DesignerError, Problem, did_you_mean
from .catalog import CATALOG_DIR, Catalog, _read, default_catalog

PRICES_FILE = os.path.join(CATALOG_DIR, "prices.yaml")
PRICES_PATH = ("spec", "prices")

SECTIONS = ("accelerators", "servers", "nics", "switches", "transceivers", "cables", "racks")
# Sections whose parts are the catalog's own (aliases resolve); the others are this file's names.
CATALOG_KIND = {"accelerators": "accelerators", "servers": "accelerators", "nics": "nics", "switches": "switches"}
NUMBER_KEYS = ("price_usd", "power_w", "gpus", "speed_gbps")
TEXT_KEYS = ("source", "date")
# Power-usage effectiveness may also be overridden: spec.prices.pue (facility power / IT power).
PUE_KEY = "pue"
# And the energy price: spec.prices.usd_per_kwh (the CLI's --usd-per-kwh wins over it).
ENERGY_KEY = "usd_per_kwh"
MAX_USD_PER_KWH = 10.0  # ten dollars a kWh is a typo
MAX_PRICE_USD = 1e9  # one part above a billion dollars is a typo
MAX_POWER_W = 1e7  # 10 MW for one part is a typo
MAX_PUE = 3.0  # the worst data centres measured are near 2.5


@dataclass(frozen=True)
class Price:
    """One part's price (and power) from the price book, with its source and date."""
    section: str
    part: str
    price_usd: float
    power_w: float | None = None
    source: str = ""
    date: str = ""
    gpus: int | None = None  # servers: accelerators per server
    speed_gbps: float | None = None  # cables: line rate of a DAC
    overridden: bool = False


@dataclass(frozen=True)
class PriceBook:
    """The prices the cost model uses: the built-in list with the design's overrides applied."""
    parts: dict[str, dict[str, Price]]  # section -> part -> price
    pue: float | None = None  # an override of the cost model's PUE, or None
    usd_per_kwh: float | None = None  # the design's energy price, or None (the cost model's default)

    def get(self, section: str, part: str) -> Price | None:
        return self.parts.get(section, {}).get(part)

    def section(self, section: str) -> dict[str, Price]:
        return self.parts.get(section, {})


def _problem(path: tuple, message: str, fix: str | None = None, at_key: bool = False) -> Problem:
    p = Problem(message, ".".join(str(k) for k in path), fix=fix)
    p._path = path  # type: ignore[attr-defined]  # the loader places it at FILE:LINE:COLUMN
    p._at_key = at_key  # type: ignore[attr-defined]
    return p


@functools.lru_cache(maxsize=1)
def shipped_prices() -> PriceBook:
    """The shipped figures (read once; checked like an override, so a broken file says where)."""
    raw = _read(PRICES_FILE)  # the catalog's reader: a YAML error names FILE:LINE
    problems = check_prices(raw, base=(), catalog=default_catalog(), require_source=True)
    for p in problems:
        p.file = str(PRICES_FILE)
    if problems:
        raise DesignerError(problems)
    return PriceBook(_build(raw, catalog=default_catalog()))


def _canonical(section: str, part, catalog: Catalog) -> str | None:
    """The part's name as the shipped file keys it, or None when unknown."""
    kind = CATALOG_KIND.get(section)
    if kind is not None:
        return catalog.resolve(kind, str(part))
    if section == "transceivers":
        try:
            speed = float(part)
        except (TypeError, ValueError):
            return None
        return f"{speed:g}" if math.isfinite(speed) and speed > 0 else None
    return str(part)


def _build(raw: dict, catalog: Catalog, overridden: bool = False) -> dict[str, dict[str, Price]]:
    out: dict[str, dict[str, Price]] = {}
    for section in SECTIONS:
        for part, values in (raw.get(section) or {}).items():
            name = _canonical(section, part, catalog) or str(part)
            out.setdefault(section, {})[name] = Price(
                section=section, part=name, price_usd=float(values["price_usd"]),
                power_w=float(values["power_w"]) if values.get("power_w") is not None else None,
                source=str(values.get("source", "")), date=str(values.get("date", "")),
                gpus=int(values["gpus"]) if values.get("gpus") is not None else None,
                speed_gbps=float(values["speed_gbps"]) if values.get("speed_gbps") is not None else None,
                overridden=overridden)
    return out


def check_prices(raw, base: tuple = PRICES_PATH, catalog: Catalog | None = None,
                 require_source: bool = False) -> list[Problem]:
    """Every problem of a prices mapping (the shipped file with `require_source`, or an override)."""
    if raw is None:
        return []
    if not isinstance(raw, dict):
        return [_problem(base, f"expected a mapping of sections ({', '.join(SECTIONS)}), got {type(raw).__name__}",
                         "e.g. prices: {switches: {QM9700-NDR: {price_usd: 30000}}}")]
    catalog = catalog or default_catalog()
    shipped = None if require_source else shipped_prices()
    out: list[Problem] = []
    for section, parts in raw.items():
        path = base + (section,)
        if section == PUE_KEY and not require_source:
            if isinstance(parts, bool) or not isinstance(parts, (int, float)) or not math.isfinite(parts) \
                    or not 1.0 <= parts <= MAX_PUE:
                out.append(_problem(path, f"expected a number from 1 to {MAX_PUE:g} (facility power / IT power), "
                                          f"got {parts!r}", "e.g. pue: 1.2"))
            continue
        if section == ENERGY_KEY and not require_source:
            if isinstance(parts, bool) or not isinstance(parts, (int, float)) or not math.isfinite(parts) \
                    or not 0.0 <= parts <= MAX_USD_PER_KWH:
                out.append(_problem(path, f"expected dollars per kWh from 0 to {MAX_USD_PER_KWH:g}, got {parts!r}",
                                    "e.g. usd_per_kwh: 0.08"))
            continue
        if section not in SECTIONS:
            keys = (PUE_KEY, ENERGY_KEY)
            guess = did_you_mean(str(section), SECTIONS + (() if require_source else keys))
            out.append(_problem(path, "unknown section" + (f" (did you mean {guess}?)" if guess else ""),
                                None if guess else "known: " + ", ".join(SECTIONS + keys), at_key=True))
            continue
        if not isinstance(parts, dict):
            out.append(_problem(path, f"expected a mapping of part names, got {type(parts).__name__}"))
            continue
        for part, values in parts.items():
            out += _check_part(section, part, values, path + (part,), catalog, shipped, require_source)
    return out


def _check_part(section, part, values, path, catalog, shipped, require_source) -> list[Problem]:
    name = _canonical(section, part, catalog)
    known = name is not None and (shipped is None or shipped.get(section, name) is not None)
    if not known:
        choices = list(shipped.section(section)) if shipped is not None else []
        if section in CATALOG_KIND:
            hint = catalog.suggest(CATALOG_KIND[section], str(part))
        else:
            guess = did_you_mean(str(part), choices)
            hint = f"did you mean {guess}?" if guess else "known: " + ", ".join(choices)
        return [_problem(path, f"unknown part {part!r} in {section}", hint, at_key=True)]
    if not isinstance(values, dict):
        return [_problem(path, f"expected a mapping such as {{price_usd: 30000, power_w: 700}}, got {values!r}")]
    out = []
    for key, value in values.items():
        where = path + (key,)
        if key in TEXT_KEYS:
            if not isinstance(value, str) or not value.strip():
                out.append(_problem(where, f"expected text, got {value!r}"))
            continue
        if key not in NUMBER_KEYS:
            guess = did_you_mean(str(key), NUMBER_KEYS + TEXT_KEYS)
            out.append(_problem(where, "unknown key" + (f" (did you mean {guess}?)" if guess else ""),
                                None if guess else "known: " + ", ".join(NUMBER_KEYS + TEXT_KEYS), at_key=True))
            continue
        limit = {"price_usd": MAX_PRICE_USD, "power_w": MAX_POWER_W}.get(key, 1e6)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            out.append(_problem(where, f"expected a number from 0 to {limit:,.0f}, got {value!r}"))
        elif value < 0:
            out.append(_problem(where, f"{value:g} is negative (a price or power is at least 0)",
                                f"e.g. {key}: {abs(value):g}"))
        elif value > limit:
            out.append(_problem(where, f"{value:,.0f} is above the maximum {limit:,.0f}"))
        elif key == "gpus" and (not float(value).is_integer() or value < 1):
            out.append(_problem(where, f"expected a whole number of accelerators of at least 1, got {value!r}"))
    if require_source:
        for key in ("price_usd", "source", "date"):
            if key not in values:
                out.append(_problem(path, f"missing {key}", "every figure carries its price, source and date"))
    return out


def price_book(overrides: dict | None = None, catalog: Catalog | None = None) -> PriceBook:
    """The shipped prices with a design's `spec.prices` over them (checked first: DesignerError)."""
    base = shipped_prices()
    if not overrides:
        return base
    catalog = catalog or default_catalog()
    problems = check_prices(overrides, catalog=catalog)
    if problems:
        raise DesignerError(problems)
    parts = {section: dict(table) for section, table in base.parts.items()}
    for section, table in overrides.items():
        if section in (PUE_KEY, ENERGY_KEY):
            continue
        for part, values in table.items():
            name = _canonical(section, part, catalog)
            old = parts[section][name]
            changes: dict[str, Any] = {k: v for k, v in values.items() if k in NUMBER_KEYS + TEXT_KEYS}
            for k in ("price_usd", "power_w", "speed_gbps"):
                if k in changes:
                    changes[k] = float(changes[k])
            if "gpus" in changes:
                changes["gpus"] = int(changes["gpus"])
            if "source" not in changes:
                changes["source"] = "the design's spec.prices"
            if "date" not in changes:
                changes["date"] = ""
            parts[section][name] = dataclasses.replace(old, overridden=True, **changes)
    pue, energy = overrides.get(PUE_KEY), overrides.get(ENERGY_KEY)
    return PriceBook(parts, float(pue) if pue is not None else None,
                     float(energy) if energy is not None else None)


def prices_schema() -> dict:
    """JSON Schema of `spec.prices` (for `designer schema`): the sections, each a mapping of part
    names to their figures; the part names themselves are checked by `check_prices`."""
    number = {"type": "number", "minimum": 0}
    entry = {"type": "object", "additionalProperties": False,
             "properties": {"price_usd": {**number, "description": "US dollars per unit"},
                            "power_w": {**number, "description": "watts per unit, maximum"},
                            "gpus": {"type": "integer", "minimum": 1, "description": "servers: accelerators each"},
                            "speed_gbps": {**number, "description": "cables: line rate of a DAC"},
                            "source": {"type": "string"}, "date": {"type": "string", "description": "YYYY-MM"}}}
    props: dict = {s: {"type": "object", "additionalProperties": entry} for s in SECTIONS}
    props[PUE_KEY] = {"type": "number", "minimum": 1, "maximum": MAX_PUE,
                      "description": "power-usage effectiveness: facility power / IT power"}
    return {"type": "object", "additionalProperties": False, "properties": props,
            "description": "Overrides of resources/catalog/prices.yaml for `designer cost` (docs/cost.md)"}
