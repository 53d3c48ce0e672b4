"""`--set KEY=VALUE`: dotted paths into spec, values read as YAML scalars, checked like a file.

    workload.preset=gpt3-175b
    parallelism.tensor_model_parallel_size=4
    calibration.nvlink_efficiency=0.78
    calibration.accelerators.H100.gemm_efficiency_best=0.75
    nodes[node3].slowdown=1.25        (an element by id, or by position: links[12].bandwidth_gbps=200)
"""
from __future__ import annotations

import dataclasses
import re

import yaml

from ..model.document import COLLECTIONS, Document
from ..model.job import Parallelism, Workload
from ..problems import DesignerError, Problem, did_you_mean
from .schema import Builder

_ELEMENT = re.compile(r"^(racks|nodes|switches|links)\[([^\]]+)\]\.(\w+)$")


def parse_assignment(text: str) -> tuple[str, object]:
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise DesignerError([Problem(f"--set {text!r}: expected KEY=VALUE", "--set",
                                     fix="e.g. --set parallelism.tensor_model_parallel_size=4")])
    try:
        value = yaml.safe_load(raw) if raw.strip() else None
    except yaml.YAMLError:
        value = raw
    if isinstance(value, (dict, list)):
        value = raw
    key = key.strip()
    if key.startswith("spec."):
        key = key[5:]
    return key, value


def apply_overrides(doc: Document, assignments: list[str]) -> None:
    problems: list[Problem] = []
    for text in assignments:
        try:
            key, value = parse_assignment(text)
            _apply(doc, key, value)
        except DesignerError as exc:
            problems += exc.problems
    if problems:
        raise DesignerError(problems)


def _bad(key, message, fix=None):
    return DesignerError([Problem(message, f"--set {key}", fix=fix)])


def _apply(doc: Document, key: str, value) -> None:
    head, _, rest = key.partition(".")
    if head in ("workload", "parallelism"):
        cls = Workload if head == "workload" else Parallelism
        names = [f.name for f in dataclasses.fields(cls)]
        if rest not in names:
            guess = did_you_mean(rest, names)
            raise _bad(key, f"{head} has no key {rest!r}" + (f" (did you mean {guess}?)" if guess else ""),
                       None if guess else "known: " + ", ".join(names))
        current = getattr(doc.spec, head) or cls()
        data = {f.name: getattr(current, f.name) for f in dataclasses.fields(cls)}
        data = {k: v for k, v in data.items() if v is not None}
        data[rest] = value
        b = Builder()
        built = b.value(cls, data, ("spec", head))
        if b.problems:
            p = next((p for p in b.problems if p.path.endswith(rest)), b.problems[0])
            raise _bad(key, f"{value!r}: {p.message}", p.fix)
        if head == "workload":
            doc.set_job(workload=built)
        else:
            doc.set_job(parallelism=built)
        return
    if head == "calibration":
        parts = rest.split(".")
        if not rest:
            raise _bad(key, "name a constant", "e.g. calibration.nvlink_efficiency=0.8")
        table = doc.spec.calibration
        for part in parts[:-1]:
            table = table.setdefault(part, {})
            if not isinstance(table, dict):
                raise _bad(key, f"{part} is not a mapping")
        table[parts[-1]] = value
        from ..model.catalog import default_catalog
        from ..engine.constants import check_calibration

        problems = check_calibration(doc.spec.calibration, default_catalog())
        if problems:
            raise DesignerError([dataclasses.replace(p, path=f"--set {key}") for p in problems])
        return
    m = _ELEMENT.match(key)
    if m:
        collection, ident, field = m.groups()
        items = getattr(doc.spec, collection)
        element = doc.find(collection, ident)
        if element is None and ident.isdigit() and int(ident) < len(items):
            element = items[int(ident)]
        if element is None:
            guess = did_you_mean(ident, [e.id for e in items])
            raise _bad(key, f"no {collection[:-1]} {ident!r}", f"did you mean {guess}?" if guess else None)
        cls = COLLECTIONS[collection]
        names = [f.name for f in dataclasses.fields(cls)]
        if field not in names:
            guess = did_you_mean(field, names)
            raise _bad(key, f"{collection[:-1]} has no field {field!r}" + (f" (did you mean {guess}?)" if guess else ""))
        data = dataclasses.asdict(element)
        data[field] = value
        b = Builder()
        built = b.value(cls, data, ("spec", collection))
        if b.problems:
            raise _bad(key, f"{value!r}: {b.problems[0].message}", b.problems[0].fix)
        doc.update(element.id, **{field: getattr(built, field)})
        return
    options = ["workload.KEY", "parallelism.KEY", "calibration.KEY", "nodes[ID].FIELD", "links[ID].FIELD",
               "switches[ID].FIELD"]
    guess = did_you_mean(head, ["workload", "parallelism", "calibration"])
    raise _bad(key, "unknown path" + (f" (did you mean {guess}.{rest}?)" if guess else ""), "paths: " + ", ".join(options))
