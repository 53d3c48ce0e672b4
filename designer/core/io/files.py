"""Load and save cluster and scenario files (docs/contract.md section 2).

Loading reports every problem at FILE:LINE:COLUMN with the dotted path. Saving is atomic:
the text goes to a temporary file in the same folder, is fsynced, then renamed over the
old file, so a crash mid-save leaves the old file whole.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import stat
from operator import attrgetter
from typing import Any

import yaml

from ..model.document import ClusterSpec, Document
from ..model.elements import Link, Metadata
from ..problems import DesignerError, MissingInputError, Problem
from ..gc_pause import collector_paused
from ..fs.atomic import atomic_write_bytes, atomic_write_text, sweep_stale_temps  # noqa: F401 (the io API)
from . import yaml_source
from .schema import API_VERSION, ScenarioSpec, build_document, bulk_columns, link_columns_of, prebuild_items, prebuild_lines

MAX_FILE_BYTES = 512 * 1024 * 1024


# ---- reading ---------------------------------------------------------------------------------

def read_text(path: str | os.PathLike, what: str = "a design",
              fix: str = "save the design to a .yaml file and pass that") -> str:
    """The file's text, or a DesignerError that says why it cannot be read as a design.

    Only regular files up to MAX_FILE_BYTES: a device (/dev/zero), a pipe (a FIFO blocks
    until a writer comes) or a socket is refused before anything is read.
    """
    name = str(path)
    limit = f"{MAX_FILE_BYTES // 2**20} MiB"
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise MissingInputError([Problem("no such file", file=name, fix="check the path")]) from None
    except PermissionError:
        raise MissingInputError([Problem("permission denied", file=name,
                                         fix="make the file (and its folders) readable")]) from None
    except OSError as exc:
        raise MissingInputError([Problem(f"cannot read: {exc.strerror or exc}", file=name)]) from None
    if stat.S_ISDIR(info.st_mode):
        raise MissingInputError([Problem("is a folder, not a file", file=name, fix="name a .yaml file in it")])
    if not stat.S_ISREG(info.st_mode):
        kind = ("a pipe (FIFO)" if stat.S_ISFIFO(info.st_mode) else "a socket" if stat.S_ISSOCK(info.st_mode)
                else "a device")
        raise DesignerError([Problem(f"is {kind}, not a regular file: {what} is read only from a file",
                                     file=name, fix=fix)])
    if info.st_size > MAX_FILE_BYTES:
        raise DesignerError([Problem(f"file is {info.st_size / 2**20:,.0f} MiB, more than {what} holds "
                                     f"(the limit is {limit})", file=name,
                                     fix="check that this is the right file")])
    try:
        # O_NONBLOCK: should the path be swapped for a FIFO after the check, open() does not hang
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise DesignerError([Problem(f"is not a regular file: {what} is read only from a file",
                                             file=name, fix=fix)])
            raw = fh.read(MAX_FILE_BYTES + 1)  # a file that grows while read stops at the limit
    except PermissionError:
        raise MissingInputError([Problem("permission denied", file=name, fix="make the file readable")]) from None
    except OSError as exc:
        raise MissingInputError([Problem(f"cannot read: {exc.strerror or exc}", file=name)]) from None
    if len(raw) > MAX_FILE_BYTES:
        raise DesignerError([Problem(f"file is more than {limit}, more than {what} holds", file=name,
                                     fix="check that this is the right file")])
    if not raw or raw.isspace():  # not raw.strip(): that copies the whole file (41 MB at 131k GPUs)
        raise DesignerError([Problem("the file is empty", file=name, line=1, column=1,
                                     fix=f"a design starts with apiVersion: {API_VERSION} and kind: Cluster")])
    if b"\x00" in raw[:65536]:
        raise DesignerError([Problem("this is a binary file, not a YAML design", file=name, line=1, column=1)])
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise DesignerError([Problem("not UTF-8 text (a binary or wrongly encoded file)", file=name,
                                     line=line, column=column, fix="save the file as UTF-8")]) from None


def parse(text: str, name: str = "<text>", build_items=None, build_lines=None):
    """(kind, metadata, spec) from YAML text; DesignerError with located problems otherwise.
    `build_items` and `build_lines`: what builds the one-line items as they are read, from their mappings
    and from their lines (default schema.prebuild_items and schema.prebuild_lines; see parse_fast)."""
    with collector_paused():  # a million acyclic objects at 131k GPUs: a quarter of the load (gc_pause.py)
        return _parse(text, name, build_items, build_lines)


def _parse(text: str, name: str, build_items=None, build_lines=None):
    if build_items is None:
        build_items, build_lines = prebuild_items, prebuild_lines
    data = yaml_source.parse_fast(text, build_items, build_lines)
    located = None
    if data is None:
        located = _parse_located(text, name)
        data = located.data
    kind, metadata, spec, problems = build_document(data)
    if located is not None and located.duplicate_keys:
        for path, line, column in located.duplicate_keys:
            problems.append(Problem("key given twice (the second would silently win)",
                                    _dotted(path), fix="remove one of them", line=line, column=column))
    if problems:
        if located is None:
            located = _parse_located(text, name)  # positions are only needed now
        for p in problems:
            if p.line is None and hasattr(p, "_path"):
                p.line, p.column = located.where(p._path, prefer_key=getattr(p, "_at_key", False))
            p.file = name
        raise DesignerError(sorted(problems, key=lambda p: (p.line or 0, p.column or 0)))
    return kind, metadata, spec


LINK_FIELDS = tuple(f.name for f in dataclasses.fields(Link))


class LinkFieldsKept:
    """prebuild_items that also keeps each field of the links as one list, in the file's order: the
    columns the links are made from, which a command that reads the design whole takes as its reading
    of the links' fields (Document.held_still) rather than reading each back from 295k link objects
    (~10 ms a field). `fields` is None when some part of the links was not built whole."""

    __slots__ = ("fields",)

    def __init__(self):
        self.fields: dict[str, list] | None = {name: [] for name in LINK_FIELDS}

    def __call__(self, section: str, items: list) -> list:
        if section != "links":
            return prebuild_items(section, items)
        columns = bulk_columns(Link)(items)
        if columns is None:
            self.fields = None
            return items
        if self.fields is not None:
            for name, column in zip(LINK_FIELDS, columns):
                self.fields[name] += column
        return list(map(Link, *columns))

    def lines(self, section: str, text: str) -> list | None:
        """schema.prebuild_lines, keeping the links' fields as __call__ does."""
        columns = link_columns_of(text) if section == "links" else None
        if columns is None:
            return None
        if self.fields is not None:
            for name, column in zip(LINK_FIELDS, columns):
                self.fields[name] += column
        return list(map(Link, *columns))


def _parse_located(text: str, name: str):
    try:
        return yaml_source.parse_located(text)
    except yaml_source.YamlSyntaxError as exc:
        raise DesignerError([Problem(exc.message, file=name, line=exc.line, column=exc.column)]) from None
    except RecursionError:
        raise DesignerError([Problem("invalid YAML: nested too deeply", file=name, line=1, column=1)]) from None


def _dotted(path):
    from .schema import dotted

    return dotted(path)


def load_document(path: str | os.PathLike, keep_link_fields: bool = False) -> Document:
    """A Cluster file as a Document. `keep_link_fields`: the document keeps the columns the links were
    made from, for its first `held_still` block (a command that reads the design whole at once; a
    design that stays open would hold them for nothing: ~24 MB at 131k GPUs)."""
    text = read_text(path)
    reader = LinkFieldsKept() if keep_link_fields else None
    kind, metadata, spec = parse(text, str(path), reader, reader.lines if reader is not None else None)
    if kind != "Cluster":
        raise DesignerError([Problem(f"this is a {kind} file; a Cluster file is needed here", file=str(path),
                                     line=1, column=1, fix="open the cluster and pass this file with --scenario")])
    return Document(spec, metadata, link_fields=reader.fields if reader is not None else None)


def load_scenario(path: str | os.PathLike) -> ScenarioSpec:
    """The workload and parallelism of a Scenario file (or of a Cluster file)."""
    text = read_text(path)
    kind, _, spec = parse(text, str(path))
    if kind == "Cluster":
        return ScenarioSpec(spec.workload, spec.parallelism, spec.calibration)
    return spec


def loads_document(text: str, name: str = "<text>") -> Document:
    kind, metadata, spec = parse(text, name)
    if kind != "Cluster":
        raise DesignerError([Problem(f"expected kind Cluster, got {kind}", file=name)])
    return Document(spec, metadata)


# ---- writing ---------------------------------------------------------------------------------

def _plain_number(v: float):
    """Whole floats as ints (5.0 -> 5, equal on reload); -0.0 stays a float to keep its sign."""
    if math.isfinite(v) and v.is_integer() and abs(v) < 1e15 and not (v == 0 and math.copysign(1.0, v) < 0):
        return int(v)
    return v


def _negative_zero(value) -> bool:
    """-0.0 equals the default 0.0 but is another number: it is written, not left out."""
    return type(value) is float and value == 0 and math.copysign(1.0, value) < 0


def yaml_float(value: float) -> str:
    """The shortest text that reads back as exactly `value` (repr) in YAML 1.1 and in JSON.

    YAML 1.1 (PyYAML) reads `1e-05` as a string: a float needs a '.' and a signed exponent,
    so repr's `1e-05` / `1e+16` become `1.0e-05` / `1.0e+16`. Non-finite values use YAML's
    .nan / .inf (JSON has none; the loader names them as errors where they are not allowed).
    """
    if value != value:
        return ".nan"
    if value in (math.inf, -math.inf):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value)
    mantissa, e, exponent = text.partition("e")
    if e and "." not in mantissa:
        text = f"{mantissa}.0e{exponent}"
    return text


def _needs_exponent(value: float) -> bool:
    """True when repr writes `value` with an exponent (the YAML-1.1 trap), cheaply."""
    a = abs(value)
    return a != 0 and (a < 1e-4 or a >= 1e16)


def _to_plain(obj, omit_defaults: bool = True, _memo: dict | None = None):
    if dataclasses.is_dataclass(obj):
        out = {}
        for f in dataclasses.fields(obj):
            v = getattr(obj, f.name)
            if omit_defaults and f.metadata.get("omit_default", True):
                if (f.default is not dataclasses.MISSING and v == f.default and type(v) is type(f.default)
                        and not _negative_zero(v)):
                    continue
                if f.default is None and v is None:
                    continue
                if f.default_factory is not dataclasses.MISSING and v == f.default_factory():
                    continue  # an empty list of a job's placement, say
            out[f.name] = _to_plain(v, omit_defaults, _memo)
        return out
    if isinstance(obj, (dict, list, tuple)):
        # A container shared in the data (a YAML alias, e.g. under spec.layout) stays one shared
        # object, which the dumper writes once with an anchor: an alias bomb is not expanded here.
        _memo = {} if _memo is None else _memo
        done = _memo.get(id(obj))
        if done is not None:
            return done[1]
        out = {} if isinstance(obj, dict) else []
        _memo[id(obj)] = (obj, out)  # the source kept alive, so its id is not reused meanwhile
        if isinstance(obj, dict):
            out.update((k, _to_plain(v, omit_defaults, _memo)) for k, v in obj.items())
        else:
            out.extend(_to_plain(v, omit_defaults, _memo) for v in obj)
        return out
    if isinstance(obj, float):
        return _plain_number(obj)
    return obj


class _Dumper(yaml.SafeDumper):
    pass


def _float_repr(dumper, value: float):
    return dumper.represent_scalar("tag:yaml.org,2002:float", yaml_float(value))


_Dumper.add_representer(float, _float_repr)

# YAML's own line breaks besides \n: PyYAML folds them inside plain and single-quoted scalars, so a
# string holding one is written double-quoted, where they are escapes (\N, \L, \P).
_YAML_BREAKS = ("\x85", "\u2028", "\u2029")


def _str_repr(dumper, value: str):
    style = '"' if any(ch in value for ch in _YAML_BREAKS) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_repr)


def _block(data: dict, indent: int) -> str:
    text = yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True,
                     width=100)
    pad = " " * indent
    # split on newlines only: str.splitlines also breaks at \x85, \u2028, \x1c..., which PyYAML
    # may write inside a quoted scalar (a description holding them would not reload)
    return "".join(pad + line + "\n" for line in text.rstrip("\n").split("\n"))


_omit_cache: dict[type, tuple] = {}  # class -> (defaults left out, field names, their getter)


def _element_plain(obj) -> dict:
    """Plain data of a flat element, defaults left out: the hot path of saving 100k elements."""
    cls = type(obj)
    cached = _omit_cache.get(cls)
    if cached is None:
        names = tuple(f.name for f in dataclasses.fields(cls))
        cached = _omit_cache[cls] = ({
            f.name: (f.default if f.default is not dataclasses.MISSING else f.default_factory())
            for f in dataclasses.fields(cls)
            if f.metadata.get("omit_default", True) and (
                f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING)
        }, names, attrgetter(*names) if len(names) > 1 else (lambda o: (getattr(o, names[0]),)))
    omit, names, values = cached
    out = {}
    for key, value in zip(names, values(obj)):  # the fields in their order (the elements have slots, no __dict__)
        if key in omit:
            default = omit[key]
            if value is default or (value == default and (type(value) is bool) == (type(default) is bool)
                                    and not _negative_zero(value)):
                continue
        if type(value) is float:
            value = _plain_number(value)
        elif type(value) is list:
            value = [_plain_number(v) if type(v) is float else v for v in value]
        out[key] = value
    return out


def _json_line(item: dict) -> str:
    try:
        if any(_needs_exponent(v) if type(v) is float else type(v) is list and any(
                type(x) is float and _needs_exponent(x) for x in v) for v in item.values()):
            return _flow_line(item)  # rare: a float repr would write as 1e-05, which YAML 1.1 reads as text
        return json.dumps(item, ensure_ascii=False, allow_nan=False)
    except ValueError:  # NaN or an infinity (JSON has none): the item as a YAML flow mapping with
        # .nan / .inf, so a recovery file keeps it and the loader names the value when it is read
        return yaml.dump(item, Dumper=_Dumper, default_flow_style=True, allow_unicode=True, sort_keys=False,
                         width=math.inf).strip()


def _flow_value(value) -> str:
    if type(value) is float:
        if not math.isfinite(value):
            raise ValueError("non-finite")  # as json.dumps(allow_nan=False): the caller's fallback
        return yaml_float(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return _flow_line(value)
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _flow_line(item: dict) -> str:
    """One element as JSON (what json.dumps writes) with every float YAML-1.1-safe."""
    return "{" + ", ".join(f"{json.dumps(str(k), ensure_ascii=False)}: {_flow_value(v)}"
                           for k, v in item.items()) + "}"


def dumps(kind: str, metadata: Metadata | None, spec) -> str:
    """The text of a file in the layout that loads fast: one element per line."""
    out = [f"apiVersion: {API_VERSION}\n", f"kind: {kind}\n"]
    meta = _to_plain(metadata or Metadata(), omit_defaults=True)
    out.append("metadata:\n" + _block(meta, 2))
    out.append("spec:\n")
    for f in dataclasses.fields(spec):
        value = getattr(spec, f.name)
        if f.name in ("racks", "nodes", "switches", "links"):
            if not value:
                out.append(f"  {f.name}: []\n")
                continue
            out.append(f"  {f.name}:\n")
            out.extend(f"  - {_json_line(_element_plain(item))}\n" for item in value)
        elif value is None:
            continue
        elif isinstance(value, (dict, list)) and not value:
            continue  # an empty calibration, or no jobs: the file reads the same without the key
        else:
            plain = _to_plain(value)
            if plain == {}:
                out.append(f"  {f.name}: {{}}\n")
            else:
                out.append(f"  {f.name}:\n" + _block(plain, 4))
    return "".join(out)


def dumps_document(doc: Document) -> str:
    return dumps("Cluster", doc.metadata, doc.spec)


def dumps_scenario(spec: ScenarioSpec, metadata: Metadata | None = None) -> str:
    return dumps("Scenario", metadata, spec)


def save_document(doc: Document, path: str | os.PathLike) -> None:
    atomic_write_text(path, dumps_document(doc))


def save_scenario(spec: ScenarioSpec, path: str | os.PathLike, metadata: Metadata | None = None) -> None:
    atomic_write_text(path, dumps_scenario(spec, metadata))


def empty_document(name: str = "untitled") -> Document:
    return Document(ClusterSpec(), Metadata(name=name))


def as_plain(obj: Any) -> Any:
    """Plain (JSON-able) data of a model object, defaults included."""
    return _to_plain(obj, omit_defaults=False)
