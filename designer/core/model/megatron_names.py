"""Megatron-LM's own spellings of the job keys Designer names differently.

Most job keys are Megatron-LM's arguments (dashes as underscores). A few are Designer's own
(`precision`, `virtual_pipeline_model_parallel_size`, `first_k_dense_replace`, `rank_order`,
...): Megatron states them in other forms, which a file or `--set` may use instead. Each is
read and turned into Designer's key here (a saved file then holds Designer's names):

    bf16: true / fp16: true / fp8_format: hybrid|e4m3   -> precision (also fp8: hybrid, the
                                                          attribute --fp8-format sets)
    num_layers_per_virtual_pipeline_stage: n            -> virtual_pipeline_model_parallel_size
                                                          = num_layers / PP / n (and the
                                                          interleaved schedule, as in Megatron)
    num_virtual_stages_per_pipeline_rank: v             -> virtual_pipeline_model_parallel_size
    moe_layer_freq: "[0]*3+[1]*58" or [0, 0, 0, 1, ...]  -> first_k_dense_replace: 3
    use_tp_pp_dp_mapping: true                          -> rank_order: tp-cp-ep-pp-dp

Semantics follow Megatron-LM (megatron/training/arguments.py, megatron/training/initialize.py,
megatron/core/transformer/transformer_config.py). An alias that disagrees with Designer's own
key in the same place is an error naming both.
"""
from __future__ import annotations

import re

from .job import parse_rank_order
from .megatron_aliases import (  # noqa: F401 (this module's API too)
    ALIASES,
    PARALLELISM_ALIASES,
    WORKLOAD_ALIASES,
    is_alias,
    is_pattern,
    needs_translation,
)

FP8_FORMATS = ("e4m3", "hybrid")
MEGATRON_ORDER = "tp-cp-ep-dp-pp"  # Megatron's default rank order
TP_PP_DP_ORDER = "tp-cp-ep-pp-dp"  # with --use-tp-pp-dp-mapping
MAX_PATTERN_LAYERS = 16_384  # the same bound as num_layers

# Descriptions for the JSON Schema (editors show them on hover).
ALIAS_DOCS = {
    "bf16": "Megatron-LM's --bf16: true means precision: bf16",
    "fp16": "Megatron-LM's --fp16: true means precision: fp16",
    "fp8_format": "Megatron-LM's --fp8-format (e4m3 or hybrid): means precision: fp8",
    "fp8": "Megatron-LM's fp8 attribute (the --fp8-format value, e4m3 or hybrid): means precision: fp8",
    "num_layers_per_virtual_pipeline_stage": "Megatron-LM's --num-layers-per-virtual-pipeline-stage: "
    "virtual stages = num_layers / PP / this (the interleaved schedule when above 1)",
    "num_virtual_stages_per_pipeline_rank": "Megatron-LM's --num-virtual-stages-per-pipeline-rank: "
    "means virtual_pipeline_model_parallel_size (the interleaved schedule when above 1)",
    "use_tp_pp_dp_mapping": "Megatron-LM's --use-tp-pp-dp-mapping: true means rank_order: tp-cp-ep-pp-dp",
}


class AliasProblem:
    """A conflict or bad value among a section's Megatron-LM flag-name keys, with the fix."""
    key: str  # the key in the section the problem is about
    message: str
    fix: str | None

    __slots__ = ("key", "message", "fix")

    def __init__(self, key: str, message: str, fix: str | None = None) -> None:
        self.key = key
        self.message = message
        self.fix = fix


# ---- moe_layer_freq's pattern: "[0]*3+[1]*58", "([1]*3+[0])*2", or a plain list -----------

class PatternError(ValueError):
    pass


_TOKEN = re.compile(r"\s*(\d+|[\[\]\(\)\+\*,])")


def parse_layer_pattern(text: str) -> list[int]:
    """A Megatron layer pattern, read without eval: lists, +, * and parentheses of integers.

    Megatron allows the same characters (megatron/training/arguments.py `_eval_pattern`) and
    hands them to Python's eval; this reads the same language and bounds its length.
    """
    tokens, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise PatternError(f"unexpected {text[pos:].strip()[:10]!r} at character {pos + 1}")
        tokens.append(m.group(1))
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    parser = _PatternParser(tokens)
    value = parser.sum()
    if parser.i != len(tokens):
        raise PatternError(f"unexpected {tokens[parser.i]!r} after a complete pattern")
    if isinstance(value, int):
        raise PatternError("a pattern is a list such as [0]*3+[1]*58")
    return value


class _PatternParser:
    """sum := product ('+' product)*; product := atom ('*' atom)*; atom := int | list | (sum)."""

    def __init__(self, tokens: list[str]):
        self.tokens, self.i, self.depth = tokens, 0, 0

    def peek(self):
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, expected=None):
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise PatternError(f"expected {expected or 'more'} " + (f"but found {token!r}" if token else "at the end"))
        self.i += 1
        return token

    def sum(self):
        value = self.product()
        while self.peek() == "+":
            self.take()
            right = self.product()
            if isinstance(value, int) != isinstance(right, int):
                raise PatternError("+ joins two lists (or two numbers)")
            value = value + right
            _bound(value)
        return value

    def product(self):
        value = self.atom()
        while self.peek() == "*":
            self.take()
            right = self.atom()
            if isinstance(value, list) and isinstance(right, list):
                raise PatternError("* repeats a list a number of times, not a list by a list")
            count = right if isinstance(value, list) else value
            if isinstance(value, list) or isinstance(right, list):
                if count > MAX_PATTERN_LAYERS:
                    raise PatternError(f"a repeat of {count:,} is more layers than any model has")
            value = value * right
            _bound(value)
        return value

    def atom(self):
        token = self.take()
        if token.isdigit():
            return int(token)
        if token == "(":
            self.depth += 1
            if self.depth > 32:  # Megatron's own patterns nest once or twice
                raise PatternError("parentheses nested more than 32 deep")
            value = self.sum()
            self.take(")")
            self.depth -= 1
            return value
        if token == "[":
            items = []
            while self.peek() != "]":
                item = self.take()
                if not item.isdigit():
                    raise PatternError(f"a list holds numbers, found {item!r}")
                items.append(int(item))
                if self.peek() == ",":
                    self.take()
                elif self.peek() != "]":
                    raise PatternError("expected , or ] in a list")
            self.take("]")
            _bound(items)
            return items
        raise PatternError(f"unexpected {token!r}")


def _bound(value) -> None:
    if isinstance(value, list) and len(value) > MAX_PATTERN_LAYERS:
        raise PatternError(f"the pattern has more than {MAX_PATTERN_LAYERS:,} layers")
    if isinstance(value, int) and value > MAX_PATTERN_LAYERS:
        raise PatternError(f"{value:,} is more layers than any model has")


def _pattern_of(value) -> list[int]:
    if isinstance(value, list):
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise PatternError("a pattern list holds 0 (dense) and 1 (MoE) per layer")
        if len(value) > MAX_PATTERN_LAYERS:
            raise PatternError(f"the pattern has more than {MAX_PATTERN_LAYERS:,} layers")
        return value
    return parse_layer_pattern(value)


def _dense_prefix(pattern: list[int]) -> int | None:
    """k when the pattern is k dense layers then MoE layers only; None otherwise."""
    k = 0
    while k < len(pattern) and pattern[k] == 0:
        k += 1
    return k if all(v == 1 for v in pattern[k:]) else None


def _every_nth(pattern: list[int]) -> int | None:
    """N when the pattern is Megatron's int form N (layer i is MoE when i % N == 0)."""
    ones = [i for i, v in enumerate(pattern) if v]
    if len(ones) < 2 or ones[0] != 0:
        return None
    n = ones[1]
    return n if pattern == [1 if i % n == 0 else 0 for i in range(len(pattern))] else None


def _show(pattern: list[int]) -> str:
    """[0,0,0,1,1,...] -> '[0]*3+[1]*58' (runs), for messages."""
    runs, out = [], []
    for v in pattern:
        if runs and runs[-1][0] == v:
            runs[-1][1] += 1
        else:
            runs.append([v, 1])
    out = [f"[{v}]*{n}" if n > 1 else f"[{v}]" for v, n in runs]
    text = "+".join(out)
    return text if len(text) <= 60 else text[:57] + "..."


# ---- translation -------------------------------------------------------------------------

def translate(section: str, data: dict, num_layers=None, pp=None) -> tuple[dict, list[AliasProblem]]:
    """`data` (one section's mapping) with Megatron's spellings turned into Designer's keys.

    `num_layers` (the model's layer count, from the file or its preset, or None when not
    known) checks a pattern's length and turns layers per virtual stage into stages; `pp` is
    the pipeline size (default 1). The problems name the keys as written.
    """
    out = dict(data)
    problems: list[AliasProblem] = []
    if section == "workload":
        _precision(out, problems)
        _moe_pattern(out, problems, num_layers)
        _window_size(out, problems)
    elif section == "parallelism":
        _virtual_stages(out, problems, num_layers, pp)
        _rank_order(out, problems)
    return out, problems


def _is_bool(value) -> bool:
    return isinstance(value, bool)


def _precision(out: dict, problems: list[AliasProblem]) -> None:
    given = [k for k in ("bf16", "fp16", "fp8_format", "fp8") if k in out]
    if not given:
        return
    values = {k: out.pop(k) for k in given}
    for k in ("bf16", "fp16"):
        if k in values and not _is_bool(values[k]):
            problems.append(AliasProblem(k, f"expected true or false, got {values[k]!r}", f"{k}: true"))
            return
    fmt_keys = [k for k in ("fp8_format", "fp8") if values.get(k) is not None]
    if len(fmt_keys) == 2 and values["fp8_format"] != values["fp8"]:
        problems.append(AliasProblem("fp8", f"fp8_format: {values['fp8_format']} and fp8: {values['fp8']} disagree",
                                     "keep one of them"))
        return
    for k in fmt_keys:
        if values[k] not in FP8_FORMATS:
            problems.append(AliasProblem(k, f"{values[k]!r} is not an fp8 format: Megatron-LM's --fp8-format takes "
                                            "e4m3 or hybrid", f"{k}: hybrid (or precision: fp8)"))
            return
    if values.get("bf16") and values.get("fp16"):
        problems.append(AliasProblem("fp16", "bf16: true and fp16: true both set: Megatron-LM trains with one "
                                             "of them", "keep one (or write precision: bf16 or fp16)"))
        return
    if fmt_keys:
        derived, source = "fp8", f"{fmt_keys[0]}: {values[fmt_keys[0]]}"
    elif values.get("fp16"):
        derived, source = "fp16", "fp16: true"
    elif values.get("bf16"):
        derived, source = "bf16", "bf16: true"
    else:
        shown = ", ".join(f"{k}: {str(values[k]).lower() if _is_bool(values[k]) else 'null'}" for k in given)
        own = out.get("precision")
        if own is not None and not (own in values and values[own] is False):
            return  # "off" flags only, none of them the precision given: no disagreement
        if own is not None:
            problems.append(AliasProblem(own, f"precision: {own} and {own}: false disagree", "keep one of them"))
            return
        problems.append(AliasProblem(given[0], f"{shown} leaves Megatron-LM in fp32, which Designer does not "
                                               "model (it models bf16, fp16 and fp8)",
                                     "set bf16: true (or precision: bf16, fp16 or fp8)"))
        return
    own = out.get("precision")
    if own == "fp8" and not fmt_keys:
        return  # bf16/fp16: true is the base an fp8 run keeps in Megatron-LM
    if own is not None and own != derived:
        problems.append(AliasProblem(given[0], f"precision: {own} and {source} disagree (Megatron-LM's "
                                               f"{source} means precision: {derived})",
                                     "keep one of them"))
        return
    out["precision"] = derived


def _window_size(out: dict, problems: list[AliasProblem]) -> None:
    """Megatron's --window-size written as text, "[127, 0]" or "(127, 0)": the list [127, 0]."""
    value = out.get("window_size")
    if not isinstance(value, str):
        return
    parts = [p.strip() for p in value.strip().strip("[]()").split(",")]
    try:
        out["window_size"] = [int(p) for p in parts]
    except ValueError:
        out.pop("window_size")
        problems.append(AliasProblem("window_size", f"{value!r} is not a window [left, right]",
                                     "e.g. window_size: [127, 0] (tokens before and after; -1 unbounded)"))
        return
    if len(parts) != 2:
        out.pop("window_size")
        problems.append(AliasProblem("window_size", f"{value!r} has {len(parts)} numbers, a window has two",
                                     "e.g. window_size: [127, 0]"))


def _moe_pattern(out: dict, problems: list[AliasProblem], num_layers) -> None:
    value = out.get("moe_layer_freq")
    if isinstance(value, str) and value.strip().isdigit():
        out["moe_layer_freq"] = int(value)  # Megatron's "N" form
        return
    if not is_pattern(value):
        return
    before = len(problems)
    _read_moe_pattern(out, problems, num_layers, value)
    if len(problems) > before:
        out.pop("moe_layer_freq", None)  # said once, with the reason; not again as "expected an integer"


def _read_moe_pattern(out: dict, problems: list[AliasProblem], num_layers, value) -> None:
    try:
        pattern = _pattern_of(value)
    except PatternError as exc:
        problems.append(AliasProblem("moe_layer_freq", f"{value!r} is not a layer pattern: {exc}",
                                     "write an integer N (every N-th layer is MoE) or a pattern such as "
                                     "'[0]*3+[1]*58' (0 dense, 1 MoE, one per layer)"))
        return
    if any(v not in (0, 1) for v in pattern):
        problems.append(AliasProblem("moe_layer_freq", "a layer pattern holds 0 (dense) or 1 (MoE) per layer",
                                     "e.g. '[0]*3+[1]*58'"))
        return
    if not pattern:
        problems.append(AliasProblem("moe_layer_freq", "the layer pattern is empty", "e.g. '[0]*3+[1]*58'"))
        return
    if num_layers is not None and len(pattern) != num_layers:
        problems.append(AliasProblem("moe_layer_freq", f"the pattern lists {len(pattern)} layers, the model has "
                                                       f"num_layers {num_layers}",
                                     "give one 0 or 1 per layer (Megatron-LM requires the same)"))
        return
    k = _dense_prefix(pattern)
    n = _every_nth(pattern) if k is None else None
    if k is None and n is None:
        problems.append(AliasProblem(
            "moe_layer_freq", f"the pattern {_show(pattern)} has a dense layer after an MoE layer: Designer models "
                              "k dense layers followed by MoE layers, or every N-th layer MoE",
            "use a pattern such as '[0]*k+[1]*n', or an integer N"))
        return
    if k is not None:
        own = out.get("first_k_dense_replace")
        if own is not None and own != k:
            problems.append(AliasProblem("moe_layer_freq", f"first_k_dense_replace: {own} and moe_layer_freq "
                                                           f"{_show(pattern)} ({k} dense layers first) disagree",
                                         "keep one of them"))
            return
        out["first_k_dense_replace"] = k
        out["moe_layer_freq"] = 1
    else:
        own = out.get("first_k_dense_replace")
        if own:
            problems.append(AliasProblem("moe_layer_freq", f"first_k_dense_replace: {own} and moe_layer_freq "
                                                           f"{_show(pattern)} (layer 0 is MoE) disagree",
                                         "keep one of them"))
            return
        out["moe_layer_freq"] = n


def _virtual_stages(out: dict, problems: list[AliasProblem], num_layers, pp) -> None:
    per_stage = out.pop("num_layers_per_virtual_pipeline_stage", None)
    stages = out.pop("num_virtual_stages_per_pipeline_rank", None)
    if per_stage is None and stages is None:
        return
    for key, value in (("num_layers_per_virtual_pipeline_stage", per_stage),
                       ("num_virtual_stages_per_pipeline_rank", stages)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            problems.append(AliasProblem(key, f"expected a positive integer, got {value!r}", f"{key}: 2"))
            return
    if per_stage is not None and stages is not None:
        problems.append(AliasProblem("num_layers_per_virtual_pipeline_stage",
                                     "num_layers_per_virtual_pipeline_stage and num_virtual_stages_per_pipeline_rank "
                                     "both set (Megatron-LM accepts one)", "keep one of them"))
        return
    pp = pp if isinstance(pp, int) and pp >= 1 else 1
    if stages is not None:
        key, vp = "num_virtual_stages_per_pipeline_rank", stages
    else:
        key = "num_layers_per_virtual_pipeline_stage"
        if num_layers is None:
            problems.append(AliasProblem(key, "the model's num_layers is not known, so the virtual stages cannot be "
                                              "derived", "set workload.num_layers or a preset, or write "
                                                         "virtual_pipeline_model_parallel_size"))
            return
        if num_layers % pp:
            problems.append(AliasProblem(key, f"PP {pp} does not divide the {num_layers} layers",
                                         "pick a PP that divides num_layers"))
            return
        if (num_layers // pp) % per_stage:
            fit = [d for d in range(1, num_layers // pp + 1) if (num_layers // pp) % d == 0]
            problems.append(AliasProblem(key, f"{per_stage} layers per virtual stage do not divide the "
                                              f"{num_layers // pp} layers of each of the {pp} pipeline stages",
                                         "use one of " + ", ".join(map(str, fit[:8]))))
            return
        vp = num_layers // pp // per_stage
    own = out.get("virtual_pipeline_model_parallel_size")
    if own is not None and own != vp and not (own == 1 and vp == 1):
        problems.append(AliasProblem(key, f"virtual_pipeline_model_parallel_size: {own} and {key}: "
                                          f"{per_stage if stages is None else stages} ({vp} virtual stages) disagree",
                                     "keep one of them"))
        return
    if vp > 1:  # Megatron runs the interleaved schedule whenever there are virtual stages
        out["virtual_pipeline_model_parallel_size"] = vp
        schedule = out.get("pipeline_schedule")
        if schedule is None:
            out["pipeline_schedule"] = "interleaved"
        elif schedule != "interleaved":
            problems.append(AliasProblem(key, f"{vp} virtual stages need the interleaved schedule, but "
                                              f"pipeline_schedule is {schedule}",
                                         "set pipeline_schedule: interleaved (or leave it out)"))


def _rank_order(out: dict, problems: list[AliasProblem]) -> None:
    if "use_tp_pp_dp_mapping" not in out:
        return
    flag = out.pop("use_tp_pp_dp_mapping")
    if flag is None:
        return
    if not _is_bool(flag):
        problems.append(AliasProblem("use_tp_pp_dp_mapping", f"expected true or false, got {flag!r}",
                                     "use_tp_pp_dp_mapping: true"))
        return
    derived = TP_PP_DP_ORDER if flag else MEGATRON_ORDER
    own = out.get("rank_order")
    if own is not None and own != derived:
        problems.append(AliasProblem("use_tp_pp_dp_mapping", f"rank_order: {own} and use_tp_pp_dp_mapping: "
                                                             f"{str(flag).lower()} (order {derived}) disagree",
                                     "keep one of them"))
        return
    out["rank_order"] = derived


def fp8_on_base(key_a: str, key_b: str) -> bool:
    """Two `--set` keys that together mean fp8 in Megatron-LM: bf16 (or fp16) and an fp8 format."""
    names = {key_a.rpartition(".")[2], key_b.rpartition(".")[2]}
    return len(names & {"bf16", "fp16"}) == 1 and len(names & {"fp8_format", "fp8"}) == 1


def known_num_layers(workload: dict | None, presets: dict | None = None):
    """The layer count a workload mapping states, itself or through its preset; None if unknown."""
    if not isinstance(workload, dict):
        return None
    n = workload.get("num_layers")
    if isinstance(n, int) and not isinstance(n, bool):
        return n
    if isinstance(n, float) and n.is_integer():
        return int(n)
    preset = workload.get("preset")
    if n is None and isinstance(preset, str):
        if presets is None:
            from .catalog import default_catalog

            presets = default_catalog().presets()
        found = presets.get(preset)
        value = found.values.get("num_layers") if found is not None else None
        return value if isinstance(value, int) else None
    return None


# ---- the names both ways (export/megatron_args writes a line, io/importers/megatron_args reads one) ----

# Keys with no Megatron-LM flag of their own name: each is written in Megatron's form below, or
# is left out with the reason (keys of Designer's own, and one Megatron-Bridge setting).
WORKLOAD_SPECIAL = ("preset", "precision", "moe_layer_freq", "first_k_dense_replace", "num_query_groups",
                    "window_size", "max_position_embeddings", "tokenizer_type", "tokenizer_model")
PARALLELISM_SPECIAL = ("zero_stage", "pipeline_schedule", "virtual_pipeline_model_parallel_size", "rank_order",
                       "data_parallel_size", "num_gpus", "fp8_dot_product_attention", "fp8_format",
                       "recompute_granularity", "use_distributed_optimizer", "use_megatron_fsdp",
                       "data_parallel_sharding_strategy", "decoder_first_pipeline_num_layers",
                       "decoder_last_pipeline_num_layers", "framework",
                       "attention_kernels")

def flag(key: str) -> str:
    """A job key's Megatron-LM flag: the same name with dashes."""
    return "--" + key.replace("_", "-")


def same_rank_order(a: str | None, b: str | None, ep: int) -> bool:
    """Two rank orders place every rank alike: equal, or equal but for where EP 1 sits."""
    pa, pb = parse_rank_order(a or MEGATRON_ORDER), parse_rank_order(b or MEGATRON_ORDER)
    if pa is None or pb is None:
        return False
    if ep == 1:
        pa, pb = [d for d in pa if d != "ep"], [d for d in pb if d != "ep"]
    return pa == pb
