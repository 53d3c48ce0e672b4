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
import typing

from ..model.document import COLLECTIONS, Document
from ..model import megatron_names
from ..model.job import Parallelism, Workload
from ..problems import DesignerError, Problem, did_you_mean
from . import yaml_source
from .schema import Builder

_ELEMENT = re.compile(r"^(racks|nodes|switches|links)\[([^\]]+)\]\.(\w+)$")
# Numbers YAML 1.1 reads as text (1e300, 5e-324) and the spellings of NaN and infinity: a shell
# user means a number, so it is read as one and then checked against the key's range.
_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^[-+]?(nan|inf|infinity)$", re.IGNORECASE)


def parse_assignment(text: str) -> tuple[str, object]:
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise DesignerError([Problem(f"--set {text!r}: expected KEY=VALUE", "--set",
                                     fix="e.g. --set parallelism.tensor_model_parallel_size=4")])
    try:  # bounded like a file: a deep or alias-bomb value is text, which the key's check refuses
        value = yaml_source.load_value(raw) if raw.strip() else None
    except yaml_source.YamlSyntaxError as exc:
        if "is not allowed" in str(exc):  # a !!python/... tag: refused as in a file, not read as text
            raise DesignerError([Problem(str(exc), f"--set {key.strip()}",
                                         fix="write a plain value: a number, text, true or false")]) from None
        value = raw
    if isinstance(value, list) and all(isinstance(v, (int, float, str)) for v in value):
        value = [float(v) if isinstance(v, str) and _NUMBER.match(v.strip()) else v for v in value]
    elif isinstance(value, (dict, list)):
        value = raw
    if isinstance(value, str) and _NUMBER.match(value.strip()):
        value = float(value)
    key = key.strip()
    if key.startswith("spec."):
        key = key[5:]
    return key, value


def apply_overrides(doc: Document, assignments: list[str]) -> None:
    problems: list[Problem] = []
    written: dict[str, tuple[str, object]] = {}  # Designer's key -> (the key as typed, its value)
    # Megatron-LM's forms that depend on other keys (layers per virtual stage needs PP and the
    # layer count; a layer pattern the layer count) are read after the rest, as Megatron does.
    later = ("num_layers_per_virtual_pipeline_stage", "moe_layer_freq")
    assignments = sorted(assignments, key=lambda t: t.partition("=")[0].strip().endswith(later))
    for text in assignments:
        try:
            key, value = parse_assignment(text)
            value = _text_where_text(key, value, text.partition("=")[2].strip())
            for target, new in (_apply(doc, key, value) or {}).items():
                earlier = written.get(target)
                if (earlier and earlier[0] != key and earlier[1] != new  # an alias and its own key disagree
                        and not megatron_names.fp8_on_base(earlier[0], key)):
                    raise _bad(key, f"{key} and {earlier[0]} disagree (both set {target})", "keep one of them")
                written[target] = (key, new)
        except DesignerError as exc:
            problems += exc.problems
    if problems:
        raise DesignerError(problems)


def _text_where_text(key: str, value, raw: str):
    """A key that holds text keeps what was typed: a server named 1e3 is not the number 1000."""
    if not isinstance(value, float):
        return value
    head, _, rest = key.partition(".")
    m = _ELEMENT.match(key)
    if m:
        cls, field = COLLECTIONS[m.group(1)], m.group(3)
    elif head in ("workload", "parallelism"):
        cls, field = (Workload if head == "workload" else Parallelism), rest
    else:
        return value
    hints = typing.get_type_hints(cls)
    if field not in hints:
        return value
    kinds = set(typing.get_args(hints[field])) or {hints[field]}
    return raw if str in kinds and not kinds & {int, float} else value


def _bad(key, message, fix=None):
    return DesignerError([Problem(message, f"--set {key}", fix=fix)])


def _megatron_value(doc: Document, head: str, key: str, rest: str, value) -> dict:
    """Designer's keys and values for one of Megatron-LM's spellings (model/megatron_names.py)."""
    work = doc.spec.workload
    work_data = {f.name: getattr(work, f.name) for f in dataclasses.fields(Workload)} if work else None
    par = doc.spec.parallelism or Parallelism()
    given = {rest: value}
    if rest in ("bf16", "fp16") and work is not None and work.precision == "fp8":
        given["precision"] = "fp8"  # bf16/fp16 is the base an fp8 run keeps, as in a file
    out, found = megatron_names.translate(head, given, num_layers=megatron_names.known_num_layers(work_data),
                                          pp=par.pipeline_model_parallel_size)
    if found:
        raise DesignerError([Problem(p.message, f"--set {key}", fix=p.fix) for p in found])
    return out


def _apply(doc: Document, key: str, value) -> dict | None:
    """Apply one assignment; for a job key, the Designer keys it set and their values."""
    head, _, rest = key.partition(".")
    if head in ("workload", "parallelism"):
        cls = Workload if head == "workload" else Parallelism
        names = [f.name for f in dataclasses.fields(cls)]
        if rest not in names and not megatron_names.is_alias(head, rest):
            guess = did_you_mean(rest, names + list(megatron_names.ALIASES[head]))
            raise _bad(key, f"{head} has no key {rest!r}" + (f" (did you mean {guess}?)" if guess else ""),
                       None if guess else "known: " + ", ".join(names))
        current = getattr(doc.spec, head) or cls()
        data = {f.name: getattr(current, f.name) for f in dataclasses.fields(cls)}
        data = {k: v for k, v in data.items() if v is not None}
        if megatron_names.needs_translation(head, {rest: value}):  # Megatron-LM's spelling of a key
            written = _megatron_value(doc, head, key, rest, value)
            data.update(written)
        else:
            written = {rest: value}
            data[rest] = value
        b = Builder()
        built = b.value(cls, data, ("spec", head))
        if b.problems:
            p = next((p for p in b.problems if p.path.endswith(rest)), b.problems[0])
            raise _bad(key, p.message, p.fix)
        if head == "workload":
            doc.set_job(workload=built)
        else:
            doc.set_job(parallelism=built)
        return {f"{head}.{k}": getattr(built, k) for k in written}
    if head == "calibration":
        parts = rest.split(".")
        if not rest:
            raise _bad(key, "name a constant", "e.g. calibration.nvlink_efficiency=0.8")
        import copy

        from ..engine.calibration_check import check_calibration

        calibration = copy.deepcopy(doc.spec.calibration)
        table = calibration
        for part in parts[:-1]:
            table = table.setdefault(part, {})
            if not isinstance(table, dict):
                raise _bad(key, f"{part} is not a mapping")
        table[parts[-1]] = value
        problems = check_calibration(calibration)  # the loader's check: same ranges, same messages
        if problems:
            raise DesignerError([dataclasses.replace(p, path=f"--set {key}") for p in problems])
        doc.spec.calibration = calibration
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
            raise _bad(key, b.problems[0].message, b.problems[0].fix)
        doc.update(element.id, **{field: getattr(built, field)})
        return
    options = ["workload.KEY", "parallelism.KEY", "calibration.KEY", "nodes[ID].FIELD", "links[ID].FIELD",
               "switches[ID].FIELD"]
    guess = did_you_mean(head, ["workload", "parallelism", "calibration"])
    raise _bad(key, "unknown path" + (f" (did you mean {guess}.{rest}?)" if guess else ""), "paths: " + ", ".join(options))
