"""`designer import megatron`: a Megatron-LM launch line (or launch script) into a design's job.

The flags are the job keys' own names (core/export/megatron_args.py says which are written in
another form); Megatron's spellings of Designer's own keys go through model/megatron_names.py,
the same translation a file or `--set` uses. What the line sets:

- A full line (it gives --num-layers, --hidden-size and --num-attention-heads) states the job as
  Megatron-LM would run it: a flag left out means Megatron's default (no --sequence-parallel is
  SP off). Keys no Megatron flag states (num_gpus, data_parallel_size, a schedule or rank order
  Megatron-LM does not run, fp8_dot_product_attention, vocab_size without --vocab-size) stay as
  the file had them, and so does the file's spelling of a value that means the same (its preset,
  rank_order tp-cp-pp-dp for --use-tp-pp-dp-mapping).
- A fragment (`--tensor-model-parallel-size 8 --sequence-parallel`) changes only what it gives.

Every argument is accounted for: a design input, a Megatron-LM flag that is not one (--save,
--lr, ...: listed once), or an argument Megatron-LM does not have (named with its line).
"""
from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field

from ...model.megatron_names import PARALLELISM_SPECIAL, WORKLOAD_SPECIAL, flag, same_rank_order
from ...model import megatron_names
from ...model.job import NULL_TOKENIZER, SHARDING_ZERO_STAGE, TOKENIZERS, Parallelism, Workload, resolve_workload
from ...problems import DesignerError, Problem
from ..schema import Builder
from .launch_script import LaunchArgs, ScriptError, read_launch
from .megatron_flag_list import MEGATRON_FLAGS
from .megatron_old_flags import OLD_NOT_INPUTS, modernize
from .megatron_uncosted import WHAT_IT_CHANGES

# Megatron-LM's defaults where Designer's differ or has none (megatron/training/arguments.py).
MLA_DEFAULTS = {"kv_lora_rank": 32, "qk_head_dim": 128, "qk_pos_emb_head_dim": 64, "v_head_dim": 128}
# --attention-backend values Designer has no kernel of its own for: the nearest it models
ATTENTION_BACKENDS = {"fused": "flash", "local": "unfused"}  # cuDNN fused attention; Megatron's unfused
MODEL_FLAGS = ("num_layers", "hidden_size", "num_attention_heads")
# Flags read here beyond the keys' own names (each handled below)
EXTRA_FLAGS = {"bf16", "fp16", "fp8_format", "num_layers_per_virtual_pipeline_stage",
               "num_virtual_stages_per_pipeline_rank", "use_tp_pp_dp_mapping", "group_query_attention",
               "num_query_groups", "moe_layer_freq", "window_size", "recompute_granularity", "recompute_method",
               "recompute_num_layers", "use_distributed_optimizer", "use_megatron_fsdp",
               "data_parallel_sharding_strategy", "decoder_first_pipeline_num_layers",
               "decoder_last_pipeline_num_layers", "cuda_graph_modules", "first_k_dense_replace",
               "max_position_embeddings", "tokenizer_type", "tokenizer_model"}


@dataclass
class Imported:
    """A job read from Megatron-LM arguments, with the flags it did not use and why."""
    workload: Workload | None
    parallelism: Parallelism
    unknown: list[str] = field(default_factory=list)  # "FILE:LINE: --flag: not a Megatron-LM argument"
    not_inputs: list[str] = field(default_factory=list)  # Megatron flags that do not change the design
    not_costed: list[str] = field(default_factory=list)  # "FILE:LINE: --flag V: what it would change"
    notes: list[str] = field(default_factory=list)  # what was read approximately, kept, or derived
    full: bool = True


def _fields(cls) -> dict[str, typing.Any]:
    return typing.get_type_hints(cls)


def _own_flags() -> dict[str, str]:
    """Flag name (underscores) -> section, for every job key named as its Megatron flag."""
    out = {}
    for section, cls, special in (("workload", Workload, WORKLOAD_SPECIAL),
                                  ("parallelism", Parallelism, PARALLELISM_SPECIAL)):
        for f in dataclasses.fields(cls):
            if f.name not in special:
                out[f.name] = section
    return out


def _problem(message: str, where: str, line: int | None, fix: str | None) -> Problem:
    return Problem(message, file=where, line=line, fix=fix)


def parse_flags(args: LaunchArgs, where: str):
    """{flag name with underscores: (values, line)}, unknown arguments, Megatron's non-inputs, and
    the design flags whose value is an unassigned $VARIABLE."""
    given: dict[str, tuple[list[str], int]] = {}
    unknown, not_inputs, not_costed, unsaid = [], [], [], set()
    own = _own_flags()
    words = args.words
    i = 0
    while i < len(words):
        w = words[i]
        i += 1
        if not w.text.startswith("--"):
            unknown.append(f"{where}:{w.line}: {w.text!r}: a word outside any flag")
            continue
        name, eq, inline = w.text.partition("=")
        values = [inline] if eq else []
        while not eq and i < len(words) and not words[i].text.startswith("--"):
            values.append(words[i].text)
            i += 1
        key = name[2:].replace("-", "_")
        if key in own or key in EXTRA_FLAGS:
            hidden = [v for v in values if "$" in v]
            if hidden:  # a variable the script never assigns: the flag's value is not known
                unknown.append(f"{where}:{w.line}: {name} {' '.join(values)}: {hidden[0]} is not assigned in the "
                               "script, so the file's value stays")
                given.pop(key, None)
                unsaid.add(key)
                continue
            given[key] = (values, w.line)
        elif name in WHAT_IT_CHANGES:
            said = " ".join([name, *values])
            not_costed.append(f"{where}:{w.line}: {said}: {WHAT_IT_CHANGES[name]}")
        elif name in MEGATRON_FLAGS or name.replace("_", "-") in MEGATRON_FLAGS or name in OLD_NOT_INPUTS:
            not_inputs.append(name)
        else:
            unknown.append(f"{where}:{w.line}: {name}: not a Megatron-LM argument Designer knows")
    return given, unknown, not_inputs, not_costed, unsaid


def _convert(key: str, section: str, values: list[str], line: int, where: str):
    """A flag's words as the key's type; bad input raises a Problem naming the line and the fix."""
    hint = _fields(Workload if section == "workload" else Parallelism)[key]
    kinds = set(typing.get_args(hint)) or {hint}
    kinds.discard(type(None))
    kind = next(iter(kinds))
    name = flag(key)
    if kind is bool:
        if values:
            raise DesignerError([_problem(f"{name} is a switch and takes no value, got {' '.join(values)!r}",
                                          where, line, f"write {name} alone")])
        return True
    if not values:
        raise DesignerError([_problem(f"{name} needs a value", where, line, f"e.g. {name} 8")])
    if typing.get_origin(kind) is list:
        item = typing.get_args(kind)[0]
        return [_scalar(v, item, name, where, line) for v in values]
    if len(values) > 1:
        raise DesignerError([_problem(f"{name} takes one value, got {' '.join(values)!r}", where, line,
                                      f"e.g. {name} {values[0]}")])
    return _scalar(values[0], kind, name, where, line)


def _scalar(text: str, kind, name: str, where: str, line: int):
    if kind is int:
        try:
            return int(text)
        except ValueError:
            hint = (f"{text} is not assigned in the script: set it (e.g. {text.lstrip('${').rstrip('}')}=8) "
                    f"or write the number" if text.startswith("$") else f"e.g. {name} 8")
            raise DesignerError([_problem(f"{name} {text!r}: expected a whole number", where, line, hint)]) from None
    if kind is float:
        try:
            return float(text)
        except ValueError:
            raise DesignerError([_problem(f"{name} {text!r}: expected a number", where, line,
                                          f"e.g. {name} 1.25")]) from None
    return text


def read_megatron(text: str, where: str, doc_workload: Workload | None, doc_parallelism: Parallelism | None,
                  presets: dict, include=None) -> Imported:
    """The job a launch line states, merged into the file's job as the module docstring says.
    `include(path)`: the text of a file the script sources (`. CONFIG.sh`), or None."""
    try:
        args = read_launch(text, include)
    except ScriptError as exc:
        raise DesignerError([_problem(str(exc), where, exc.line, exc.fix)]) from None
    if not args.words:
        raise DesignerError([_problem("found no Megatron-LM arguments (no --flags, and no `*.py` program "
                                      "followed by them)", where, 1,
                                      "give the flags (--tensor-model-parallel-size 8 ...) or the launch script "
                                      "that runs pretrain_gpt.py")])
    args.words, modernized = modernize(args.words, where)
    given, unknown, not_inputs, not_costed, unsaid = parse_flags(args, where)
    out = Imported(Workload(), Parallelism(), unknown, not_inputs, not_costed,
                   notes=[f"read {path}, which {where} sources" for path in args.sourced] + modernized)
    out.full = all(k in given or k in unsaid for k in MODEL_FLAGS)
    own = _own_flags()
    work: dict = {}
    par: dict = {}
    for key, (values, line) in given.items():
        if key in own:
            (work if own[key] == "workload" else par)[key] = _convert(key, own[key], values, line, where)
    _special(given, work, par, out, where)
    file_workload = _resolved(doc_workload, presets) if doc_workload is not None else None
    if file_workload is not None and out.full and "tokenizer_model" in unsaid and \
            _identity(dataclasses.asdict(file_workload), presets) != _identity(work, presets):
        unsaid.discard("tokenizer_model")  # the file's tokenizer belongs to the file's model, not the line's
    for key in unsaid:  # the file's value stays (its preset's too), as for a key no flag states
        for section, data, old in (("workload", work, file_workload), ("parallelism", par, doc_parallelism)):
            if old is not None and key in {f.name for f in dataclasses.fields(old)} and getattr(old, key) is not None:
                data[key] = getattr(old, key)
    _merge(work, par, out, doc_workload, doc_parallelism, presets, given, where)
    return out


def _switch(given, key, where) -> bool:
    if key not in given:
        return False
    values, line = given[key]
    if values:
        raise DesignerError([_problem(f"{flag(key)} is a switch and takes no value, got {' '.join(values)!r}",
                                      where, line, f"write {flag(key)} alone")])
    return True


def _one(given, key, where, kind=int):
    values, line = given[key]
    if len(values) != 1:
        raise DesignerError([_problem(f"{flag(key)} takes one value, got {' '.join(values) or 'none'}", where, line,
                                      f"e.g. {flag(key)} 2")])
    return _scalar(values[0], kind, flag(key), where, line)


def _special(given, work: dict, par: dict, out: Imported, where: str) -> None:
    """The flags that are Megatron's spelling of Designer's own keys."""
    for key in ("bf16", "fp16"):
        if _switch(given, key, where):
            work[key] = True
    if "fp8_format" in given:
        fmt = _one(given, "fp8_format", where, str)
        work["fp8_format"] = fmt
        par["fp8_format"] = fmt
    if "num_query_groups" in given:
        groups = _one(given, "num_query_groups", where)
        if _switch(given, "group_query_attention", where):
            work["num_query_groups"] = groups
        else:  # Megatron reads --num-query-groups only with --group-query-attention
            out.notes.append("--num-query-groups without --group-query-attention: Megatron-LM ignores it "
                             "(every head keeps its own keys and values)")
    if "window_size" in given:
        work["window_size"] = " ".join(given["window_size"][0])  # "127,0": megatron_names reads it
    if "moe_layer_freq" in given:
        text = " ".join(given["moe_layer_freq"][0]).strip()
        work["moe_layer_freq"] = int(text) if text.isdigit() else text
    _model_identity(given, work, where)
    if "first_k_dense_replace" in given:  # not Megatron's, but Designer's own name may be passed
        work["first_k_dense_replace"] = _one(given, "first_k_dense_replace", where)
    for key in ("num_layers_per_virtual_pipeline_stage", "num_virtual_stages_per_pipeline_rank",
                "decoder_first_pipeline_num_layers", "decoder_last_pipeline_num_layers"):
        if key in given:
            par[key] = _one(given, key, where)
    if _switch(given, "use_tp_pp_dp_mapping", where):
        par["use_tp_pp_dp_mapping"] = True
    _recompute(given, par, out, where)
    _sharding(given, par, where)
    if "cuda_graph_modules" in given:  # the newer name of --cuda-graph-scope
        par["cuda_graph_scope"] = list(given["cuda_graph_modules"][0])
    backend = par.get("attention_backend")
    if backend in ATTENTION_BACKENDS:
        par["attention_backend"] = ATTENTION_BACKENDS[backend]
        out.notes.append(f"--attention-backend {backend} is costed as {ATTENTION_BACKENDS[backend]}")


def _model_identity(given, work: dict, where: str) -> None:
    """The tokenizer and the position range: kept only where they say more than Designer's absent
    value does (the null tokenizer over --vocab-size; a range of exactly the sequence)."""
    if "tokenizer_type" in given:
        kind = _one(given, "tokenizer_type", where, str)
        if kind not in TOKENIZERS:
            values, line = given["tokenizer_type"]
            raise DesignerError([_problem(f"--tokenizer-type {kind!r} is not one Designer knows ("
                                          + ", ".join(TOKENIZERS) + ")", where, line,
                                          "--tokenizer-type HuggingFaceTokenizer --tokenizer-model NAME")])
        if kind != NULL_TOKENIZER:
            work["tokenizer_type"] = kind
    if "tokenizer_model" in given:
        work["tokenizer_model"] = _one(given, "tokenizer_model", where, str)
    if "max_position_embeddings" in given:
        positions = _one(given, "max_position_embeddings", where)
        if "seq_length" not in given or positions != _one(given, "seq_length", where):
            work["max_position_embeddings"] = positions


def _recompute(given, par: dict, out: Imported, where: str) -> None:
    if "recompute_granularity" not in given:
        return
    granularity = _one(given, "recompute_granularity", where, str)
    values, line = given["recompute_granularity"]
    if granularity not in ("full", "selective"):
        raise DesignerError([_problem(f"--recompute-granularity {granularity!r}: Megatron-LM takes full or "
                                      "selective", where, line, "--recompute-granularity full")])
    par["recompute_granularity"] = granularity
    method = _one(given, "recompute_method", where, str) if "recompute_method" in given else None
    layers = _one(given, "recompute_num_layers", where) if "recompute_num_layers" in given else None
    if granularity == "full" and not (method == "uniform" and layers == 1):
        out.notes.append(f"--recompute-method {method} --recompute-num-layers {layers} is costed as full recompute "
                         "of every layer (Designer's full)")


def _sharding(given, par: dict, where: str) -> None:
    if _switch(given, "use_distributed_optimizer", where):
        par["use_distributed_optimizer"] = True
    strategy = _one(given, "data_parallel_sharding_strategy", where, str) \
        if "data_parallel_sharding_strategy" in given else None
    if strategy is not None:
        if strategy not in SHARDING_ZERO_STAGE:
            line = given["data_parallel_sharding_strategy"][1]
            raise DesignerError([_problem(f"--data-parallel-sharding-strategy {strategy!r} is not one of "
                                          + ", ".join(SHARDING_ZERO_STAGE), where, line,
                                          "--data-parallel-sharding-strategy optim_grads_params")])
        par["data_parallel_sharding_strategy"] = strategy
    if _switch(given, "use_megatron_fsdp", where):
        par["use_megatron_fsdp"] = True
        # Megatron-FSDP turns the distributed optimizer on itself (arguments.py); its sharding is the strategy's
        par.pop("use_distributed_optimizer", None)
        # Megatron-FSDP shards as its strategy says (Megatron's default: optim_grads_params)
        par["zero_stage"] = SHARDING_ZERO_STAGE[strategy or "optim_grads_params"]


# ---- into the file's job ---------------------------------------------------------------------------

# Keys no Megatron-LM flag states: a full line keeps the file's
KEPT_PARALLELISM = ("num_gpus", "data_parallel_size", "fp8_dot_product_attention")


def _merge(work: dict, par: dict, out: Imported, doc_w: Workload | None, doc_p: Parallelism | None,
           presets: dict, given: dict, where: str) -> None:
    old_p = doc_p or Parallelism()
    old_w_data = {f.name: getattr(doc_w, f.name) for f in dataclasses.fields(Workload)} if doc_w else {}
    old_w_data = {k: v for k, v in old_w_data.items() if v is not None}
    if out.full:
        if "precision" not in work and not any(k in work for k in ("bf16", "fp16", "fp8_format")):
            raise DesignerError([_problem("the line trains in fp32 (no --bf16, --fp16 or --fp8-format), which "
                                          "Designer does not model", where, given.get("num_layers", ([], 1))[1],
                                          "add --bf16 (or --fp16)")])
        if work.get("swiglu") and "ffn_hidden_size" not in work:  # Megatron's default MLP width with SwiGLU
            work["ffn_hidden_size"] = int((4 * work["hidden_size"] * 2 / 3) / 64) * 64
        if work.get("multi_latent_attention"):
            for key, value in MLA_DEFAULTS.items():
                work.setdefault(key, value)
        if "vocab_size" not in work:  # Megatron-LM takes it from the tokenizer
            vocab, why = _line_vocabulary(work, out.not_inputs, doc_w, presets)
            if vocab is not None:
                work["vocab_size"] = vocab
                out.notes.append(why)
        w_data, p_data = work, par
    else:
        w_data = {**_without_restated(old_w_data, work), **work}
        p_data = {f.name: getattr(old_p, f.name) for f in dataclasses.fields(Parallelism)}
        p_data = {k: v for k, v in p_data.items() if v is not None}
        p_data = {**_without_restated(p_data, par), **par}
    num_layers = megatron_names.known_num_layers(w_data, presets)
    w_data, w_problems = megatron_names.translate("workload", w_data, num_layers=num_layers)
    # Megatron counts the embedding and loss as layers when the split accounts for them
    split_layers = None if num_layers is None else num_layers + sum(
        bool(p_data.get(k)) for k in ("account_for_embedding_in_pipeline_split", "account_for_loss_in_pipeline_split"))
    p_data, p_problems = megatron_names.translate("parallelism", p_data, num_layers=split_layers,
                                                  pp=p_data.get("pipeline_model_parallel_size", 1))
    problems = [_alias_problem(p, given, where) for p in w_problems + p_problems]
    if problems:
        raise DesignerError(problems)
    if out.full:
        _keep_unsaid(p_data, old_p, given, out)
    _layout_stages(p_data)
    workload = _build(Workload, w_data, "workload", given, where)
    parallelism = _build(Parallelism, p_data, "parallelism", given, where)
    if out.full:
        line_model = dataclasses.asdict(workload)
        file_model = dataclasses.asdict(_resolved(doc_w, presets)) if doc_w is not None else None
        other_model = file_model is None or _identity(file_model, presets) != _identity(line_model, presets)
        same = _preset_of(line_model, presets) if other_model else None
        # a known model that is not the file's is said as its own preset (the line's choices kept),
        # not as the file's preset with every size overridden
        workload = _keep_preset(workload, Workload(preset=same) if same else doc_w, presets)
        parallelism = _same_spelling(parallelism, old_p) if doc_p is not None else parallelism
    if doc_w is None and workload == Workload():
        workload = None  # a fragment of plan flags into a design without a model: no empty workload
    out.workload, out.parallelism = workload, parallelism


# What makes two lines the same model (a preset's, or the file's)
MODEL_IDENTITY = ("num_layers", "hidden_size", "num_attention_heads", "ffn_hidden_size", "num_query_groups",
                  "kv_channels", "num_experts", "moe_ffn_hidden_size", "moe_router_topk")
# The GPT-2 BPE vocabulary (encoder.json of Radford et al. 2019) that --vocab-file/--merge-file name in
# Megatron-LM's GPT scripts; Megatron pads it to a multiple of 128 x TP at run time, as the engine does.
GPT2_BPE_VOCABULARY = 50257


def _identity(values: dict, presets: dict) -> tuple:
    w = _resolved(Workload(**{k: values[k] for k in MODEL_IDENTITY if values.get(k) is not None}), presets)
    return tuple(getattr(w, k) for k in MODEL_IDENTITY)


def _preset_of(values: dict, presets: dict) -> str | None:
    """The preset whose model the line's sizes are (layers, width, heads, MLP, groups, experts)."""
    if any(values.get(k) is None for k in MODEL_FLAGS):
        return None
    mine = _identity(values, presets)
    for name in sorted(presets):
        if presets[name].name == name and _identity(_resolved(Workload(preset=name), presets).__dict__, presets) == mine:
            return name
    return None


def _line_vocabulary(work: dict, not_inputs: list[str], doc_w: Workload | None, presets: dict):
    """(vocab_size, why) for a line that gives its model but no --vocab-size."""
    same = _preset_of(work, presets)
    if same is not None:
        vocab = presets[same].values.get("vocab_size")
        return vocab, f"vocab_size {vocab} of {same}, whose model the line's sizes are (the line has no --vocab-size)"
    tokenizer = work.get("tokenizer_model")
    for name in sorted(presets):
        if tokenizer and presets[name].values.get("tokenizer_model") == tokenizer:
            vocab = presets[name].values.get("vocab_size")
            return vocab, f"vocab_size {vocab} of the tokenizer {tokenizer} ({name}'s)"
    if "--vocab-file" in not_inputs or work.get("tokenizer_type") == "GPT2BPETokenizer":
        return GPT2_BPE_VOCABULARY, (f"vocab_size {GPT2_BPE_VOCABULARY}: the GPT-2 BPE vocabulary that --vocab-file "
                                     "and --merge-file name (Megatron pads it to a multiple of 128 x TP)")
    old = _resolved(doc_w, presets) if doc_w else None
    if old is not None and old.vocab_size:
        same_model = _identity(dataclasses.asdict(old), presets) == _identity(work, presets)
        guess = "" if same_model else (", a guess: the line's model is not the file's and names no vocabulary "
                                       "or known tokenizer; give --vocab-size")
        return old.vocab_size, f"vocab_size {old.vocab_size} kept from the file{guess}"
    return None, ""


def _without_restated(old: dict, new: dict) -> dict:
    """The file's keys less those the fragment states in Megatron's other words (no disagreement)."""
    drop = set()
    if any(k in new for k in ("bf16", "fp16", "fp8_format")):
        drop.add("precision")
    if any(k in new for k in ("num_layers_per_virtual_pipeline_stage", "num_virtual_stages_per_pipeline_rank")):
        drop |= {"virtual_pipeline_model_parallel_size", "pipeline_schedule"}
    if "use_tp_pp_dp_mapping" in new:
        drop.add("rank_order")
    if "moe_layer_freq" in new:
        drop.add("first_k_dense_replace")
    return {k: v for k, v in old.items() if k not in drop}


def _alias_problem(p, given, where) -> Problem:
    line = given.get(p.key, ([], None))[1]
    return _problem(f"{flag(p.key)}: {p.message}", where, line, p.fix)


def _keep_unsaid(p_data: dict, old: Parallelism, given: dict, out: Imported) -> None:
    for key in KEPT_PARALLELISM:
        value = getattr(old, key)
        if value is not None:
            p_data.setdefault(key, value)
    if old.attention_kernels != "current":  # the software stack's kernels: no Megatron-LM flag says them
        p_data.setdefault("attention_kernels", old.attention_kernels)
    if "data_parallel_size" in p_data and old.data_parallel_size is not None:
        size = lambda d: (d.get("tensor_model_parallel_size", 1) * d.get("pipeline_model_parallel_size", 1)
                          * d.get("context_parallel_size", 1))
        old_size = (old.tensor_model_parallel_size * old.pipeline_model_parallel_size * old.context_parallel_size)
        if size(p_data) != old_size:  # a new model-parallel size: DP follows from the GPU count again
            del p_data["data_parallel_size"]
            out.notes.append("data_parallel_size dropped (the model-parallel size changed; DP is derived again)")
    vp = p_data.get("virtual_pipeline_model_parallel_size") or 1
    if (old.pipeline_schedule not in ("1f1b", "interleaved") and vp <= 1
            and not p_data.get("pipeline_model_parallel_layout")):
        p_data["pipeline_schedule"] = old.pipeline_schedule
        out.notes.append(f"pipeline_schedule {old.pipeline_schedule} kept from the file (no Megatron-LM flag)")
    ep = p_data.get("expert_model_parallel_size", 1)
    if "rank_order" not in p_data and old.rank_order and not any(
            same_rank_order(old.rank_order, o, ep) for o in (megatron_names.MEGATRON_ORDER,
                                                              megatron_names.TP_PP_DP_ORDER)):
        p_data["rank_order"] = old.rank_order
        out.notes.append(f"rank_order {old.rank_order} kept from the file (no Megatron-LM flag)")
    if p_data.get("pipeline_model_parallel_layout"):
        for key in ("decoder_first_pipeline_num_layers", "decoder_last_pipeline_num_layers"):
            if key not in p_data and getattr(old, key) is not None:
                p_data[key] = getattr(old, key)  # Megatron refuses them beside a layout; the file's stay


def _layout_stages(p_data: dict) -> None:
    """A layout sets the virtual stages itself: its stage count / PP (Megatron's arguments.py)."""
    layout = p_data.get("pipeline_model_parallel_layout")
    if not layout or p_data.get("virtual_pipeline_model_parallel_size"):
        return
    from ...model.pipeline_split import SplitError, expand_layout

    try:
        stages = len(expand_layout(layout))
    except SplitError:
        return  # the check of the design says why, with the key
    pp = p_data.get("pipeline_model_parallel_size", 1)
    if stages % pp == 0 and stages // pp > 1:
        p_data["virtual_pipeline_model_parallel_size"] = stages // pp
        p_data.setdefault("pipeline_schedule", "interleaved")


def _build(cls, data: dict, section: str, given: dict, where: str):
    b = Builder()
    built = b.value(cls, data, ("spec", section))
    if b.problems:
        problems = []
        for p in b.problems:
            key = p.path.rsplit(".", 1)[-1]
            line = given.get(key, ([], None))[1]
            problems.append(_problem(f"{flag(key)}: {p.message}", where, line, p.fix))
        raise DesignerError(problems)
    return built


def _resolved(w: Workload, presets: dict) -> Workload:
    try:
        return resolve_workload(w, presets)
    except KeyError:
        return w


def _keep_preset(new: Workload, old: Workload | None, presets: dict) -> Workload:
    """The same model in the file's words: the file's workload (its preset, the keys it wrote)
    changed only where the line's model differs, when that resolves to the same model."""
    if old is None or (old.preset and old.preset not in presets):
        return new
    target = _bare(_resolved(new, presets))
    cand = old
    for _ in range(3):  # a changed width changes the defaults derived from it (4h, h / heads)
        now = _bare(resolve_workload(cand, presets))
        if target.tokenizer_model is None:  # a tokenizer path the line leaves unsaid: the preset's may stand
            now = dataclasses.replace(now, tokenizer_model=None)
        if now == target:
            return cand
        cand = dataclasses.replace(cand, **{f.name: getattr(target, f.name) for f in dataclasses.fields(Workload)
                                             if getattr(now, f.name) != getattr(target, f.name)})
    return new


# Megatron-LM's defaults for what a line need not say (megatron/training/arguments.py): a key left
# out means this, so a preset that states it is the same model
MEGATRON_MODEL_DEFAULTS = {"normalization": "LayerNorm", "position_embedding_type": "learned_absolute",
                           "disable_bias_linear": False}


def _bare(w: Workload) -> Workload:
    defaults = {k: v for k, v in MEGATRON_MODEL_DEFAULTS.items() if getattr(w, k) in (None, v)}
    return dataclasses.replace(w, preset=None, **{k: None for k in defaults})


def _same_meaning(key: str, new, old, p: Parallelism) -> bool:
    if key == "rank_order":
        return same_rank_order(new, old, p.expert_model_parallel_size)
    if key == "virtual_pipeline_model_parallel_size":
        return (new or 1) == (old or 1)
    if key == "expert_tensor_parallel_size":
        return (new or p.tensor_model_parallel_size) == (old or p.tensor_model_parallel_size)
    if key == "fp8_format":
        return (new or "hybrid") == (old or "hybrid")
    if isinstance(new, bool) or isinstance(old, bool):
        return bool(new) == bool(old)
    return False


def _same_spelling(new: Parallelism, old: Parallelism) -> Parallelism:
    """Where the file says the same thing in other words, keep the file's words."""
    changes = {}
    for f in dataclasses.fields(Parallelism):
        a, b = getattr(new, f.name), getattr(old, f.name)
        if a != b and _same_meaning(f.name, a, b, new):
            changes[f.name] = b
    # Megatron-FSDP's strategy and Designer's zero_stage are the same sharding
    if old.zero_stage in (2, 3) and new.zero_stage == old.zero_stage and not old.use_megatron_fsdp:
        changes.update(use_megatron_fsdp=old.use_megatron_fsdp,
                       data_parallel_sharding_strategy=old.data_parallel_sharding_strategy)
    # zero_stage 1 and the distributed optimizer are the same sharding
    if (old.zero_stage == 1 and not old.use_distributed_optimizer and new.use_distributed_optimizer
            and new.zero_stage == 0):
        changes.update(zero_stage=1, use_distributed_optimizer=False)
    return dataclasses.replace(new, **changes) if changes else new
