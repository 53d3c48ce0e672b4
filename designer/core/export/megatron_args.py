"""A design's job as Megatron-LM command-line arguments (`designer export megatron`), or as
Megatron-Bridge recipe overrides (`--nemo`).

Designer's job keys are Megatron-LM's argument names with dashes as underscores (model/job.py),
so most flags are the key's own name: `tensor_model_parallel_size: 8` is
`--tensor-model-parallel-size 8`. Designer's own keys (model/megatron_names.py) are written in
Megatron's form: precision as --bf16/--fp16/--fp8-format, virtual stages as
--num-layers-per-virtual-pipeline-stage (or --num-virtual-stages-per-pipeline-rank where the split
is uneven), rank_order as --use-tp-pp-dp-mapping, zero_stage as the distributed optimizer or
Megatron-FSDP, first_k_dense_replace as a --moe-layer-freq pattern. Keys no Megatron flag states
(the GPU count, a schedule Megatron-LM does not run, ...) are listed in `left_out` with the reason.

The flag names were checked against Megatron-LM's megatron/training/arguments.py and the config
dataclasses its ArgumentGroupFactory turns into flags (tests/data/megatron_args/).
"""
from __future__ import annotations

import dataclasses
import shlex
from dataclasses import dataclass, field

from ..model import megatron_names
from ..model.megatron_names import PARALLELISM_SPECIAL, WORKLOAD_SPECIAL, flag, same_rank_order
from ..model.job import NULL_TOKENIZER, SHARDING_ZERO_STAGE, Parallelism, Workload, resolve_workload
from ..problems import DesignerError, Problem

# Always stated: Megatron-LM needs them, or its default differs from Designer's (--ffn-hidden-size
# is 8h/3 rounded with --swiglu in Megatron, 4h in Designer).
WORKLOAD_ALWAYS = ("num_layers", "hidden_size", "ffn_hidden_size", "num_attention_heads", "seq_length",
                   "vocab_size", "micro_batch_size", "global_batch_size")
MEGATRON_SCHEDULES = ("1f1b", "interleaved")
FULL_RECOMPUTE_ARGS = [["--recompute-method", "uniform"], ["--recompute-num-layers", "1"]]  # every layer, as costed
DEFAULT_FP8_FORMAT = "hybrid"  # Megatron needs one; NVIDIA's recipes use hybrid unless they say e4m3


@dataclass
class MegatronLine:
    """A Megatron-LM command line made from a design, with the keys it could not express and why."""
    args: list[list[str]] = field(default_factory=list)  # one flag with its values per item
    left_out: dict[str, str] = field(default_factory=dict)  # "parallelism.num_gpus" -> why

    def flat(self) -> list[str]:
        return [a for group in self.args for a in group]

    def one_line(self) -> str:
        return " ".join(shlex.quote(a) for a in self.flat())

    def script(self) -> str:
        """One flag per line, continued with backslashes: ready to paste into a launch script."""
        return " \\\n".join(" ".join(shlex.quote(a) for a in group) for group in self.args)


def _value(v) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def _plain_flags(obj, special: tuple[str, ...], base) -> list[list[str]]:
    """Every key of `obj` (a Workload or Parallelism) whose value differs from `base`'s, as its flag."""
    out = []
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if f.name in special or value is None or value == getattr(base, f.name):
            continue
        if isinstance(value, bool):
            if value:
                out.append([flag(f.name)])
            continue  # False: Megatron's store_true default
        if isinstance(value, list):
            out.append([flag(f.name), *map(_value, value)])
        else:
            out.append([flag(f.name), _value(value)])
    return out


def megatron_line(workload: Workload | None, parallelism: Parallelism | None, presets: dict) -> MegatronLine:
    """The Megatron-LM arguments of a job. Raises DesignerError when the job has no workload."""
    if workload is None:
        raise DesignerError([Problem("the design has no workload to export", "spec.workload",
                                     fix="add workload: {preset: llama3-8b} (or the model's keys)")])
    try:
        w = resolve_workload(workload, presets)
    except KeyError:
        raise DesignerError([Problem(f"unknown preset {workload.preset!r}", "spec.workload.preset",
                                     fix="designer catalog lists the presets")]) from None
    missing = [k for k in WORKLOAD_ALWAYS if getattr(w, k) is None]
    if missing:
        raise DesignerError([Problem(f"the workload does not give {', '.join(missing)}", "spec.workload",
                                     fix="set them (or a preset) before exporting")])
    p = parallelism or Parallelism()
    line = MegatronLine()
    _model_args(w, p, line)
    _parallel_args(p, w, line)
    return line


def _model_args(w: Workload, p: Parallelism, line: MegatronLine) -> None:
    line.args += [[flag(k), _value(getattr(w, k))] for k in WORKLOAD_ALWAYS]
    # validate_args requires it, and at least the sequence
    line.args.append(["--max-position-embeddings", str(w.max_position_embeddings or w.seq_length)])
    _tokenizer(w, line)
    # what import would fill in from these alone: only keys that differ from it need a flag
    base = resolve_workload(Workload(**{k: getattr(w, k) for k in WORKLOAD_ALWAYS}), {})
    skip = WORKLOAD_SPECIAL + WORKLOAD_ALWAYS
    line.args += _plain_flags(w, skip, base)
    if w.num_query_groups is not None and w.num_query_groups != w.num_attention_heads:
        if w.multi_latent_attention:
            line.left_out["workload.num_query_groups"] = ("Megatron-LM refuses --group-query-attention with "
                                                          "--multi-latent-attention")
        else:
            line.args += [["--group-query-attention"], ["--num-query-groups", str(w.num_query_groups)]]
    if w.window_size is not None:
        line.args.append(["--window-size", ",".join(map(str, w.window_size))])  # Megatron's tuple_type: "127,0"
    _moe_layers(w, line)
    _precision(w, p, line)


def _tokenizer(w: Workload, line: MegatronLine) -> None:
    line.args.append(["--tokenizer-type", w.tokenizer_type or NULL_TOKENIZER])
    if w.tokenizer_model:
        line.args.append(["--tokenizer-model", w.tokenizer_model])
    if not w.tokenizer_type or w.tokenizer_type == NULL_TOKENIZER:
        line.left_out["workload.tokenizer_type"] = (f"none given: {NULL_TOKENIZER} over --vocab-size {w.vocab_size} "
                                                    "trains on --mock-data; give the model's tokenizer "
                                                    "(tokenizer_type, tokenizer_model) to train on --data-path")
    elif w.tokenizer_type in ("GPT2BPETokenizer",):
        line.left_out["workload.tokenizer_type"] = (f"{w.tokenizer_type} also needs --vocab-file and --merge-file, "
                                                    "which are paths on the training cluster")


def _moe_layers(w: Workload, line: MegatronLine) -> None:
    k, freq = w.first_k_dense_replace or 0, w.moe_layer_freq or 1
    if k and freq == 1:
        line.args.append(["--moe-layer-freq", f"[0]*{k}+[1]*{w.num_layers - k}"])
    elif k:
        line.left_out["workload.first_k_dense_replace"] = (f"{k} dense layers before every-{freq}th-layer MoE has "
                                                           "no Megatron-LM pattern Designer reads back")
        line.args.append(["--moe-layer-freq", str(freq)])
    elif freq != 1:
        line.args.append(["--moe-layer-freq", str(freq)])


def _precision(w: Workload, p: Parallelism, line: MegatronLine) -> None:
    if w.precision == "fp16":
        line.args.append(["--fp16"])
        return
    line.args.append(["--bf16"])
    if w.precision == "fp8":
        line.args.append(["--fp8-format", p.fp8_format or DEFAULT_FP8_FORMAT])
    elif p.fp8_format:
        line.left_out["parallelism.fp8_format"] = (f"{p.fp8_format} is given but the workload runs in {w.precision}; "
                                                   "Megatron-LM's --fp8-format would switch FP8 on")


def _parallel_args(p: Parallelism, w: Workload, line: MegatronLine) -> None:
    # The sizes first, in Megatron's order, then the rest as the dataclass lists them.
    line.args += _plain_flags(p, PARALLELISM_SPECIAL, Parallelism())
    _pipeline(p, w, line)
    if p.recompute_granularity != "none":
        line.args.append(["--recompute-granularity", p.recompute_granularity])
        if p.recompute_granularity == "full":
            line.args += FULL_RECOMPUTE_ARGS
    _sharding(p, line)
    ep = p.expert_model_parallel_size
    if same_rank_order(p.rank_order, megatron_names.TP_PP_DP_ORDER, ep):
        line.args.append(["--use-tp-pp-dp-mapping"])
    elif not same_rank_order(p.rank_order, megatron_names.MEGATRON_ORDER, ep):
        line.left_out["parallelism.rank_order"] = (f"{p.rank_order}: Megatron-LM orders ranks "
                                                   f"{megatron_names.MEGATRON_ORDER} or, with --use-tp-pp-dp-mapping, "
                                                   f"{megatron_names.TP_PP_DP_ORDER}")
    if p.framework and p.framework not in ("megatron", "nemo"):
        line.left_out["parallelism.framework"] = f"a Designer key: the job runs on {p.framework}, not Megatron-LM"
    if p.attention_kernels != "current":
        line.left_out["parallelism.attention_kernels"] = (
            f"a Designer key: {p.attention_kernels} names the software stack's attention kernels, no flag")
    if p.fp8_dot_product_attention:
        line.left_out["parallelism.fp8_dot_product_attention"] = (
            "a Megatron-Bridge setting (mixed_precision.fp8_dot_product_attention), no Megatron-LM flag")
    if p.data_parallel_size is not None:
        line.left_out["parallelism.data_parallel_size"] = ("Megatron-LM derives DP from the world size: "
                                                           "GPUs / (TP x PP x CP)")
    if p.num_gpus is not None:
        line.left_out["parallelism.num_gpus"] = (f"{p.num_gpus} GPUs: the launcher's world size (torchrun "
                                                 "--nnodes N --nproc-per-node G), not a Megatron-LM argument")


def _pipeline(p: Parallelism, w: Workload, line: MegatronLine) -> None:
    vp = p.virtual_pipeline_model_parallel_size or 1
    if p.pipeline_schedule not in MEGATRON_SCHEDULES:
        line.left_out["parallelism.pipeline_schedule"] = (f"{p.pipeline_schedule}: Megatron-LM runs 1F1B, or the "
                                                          "interleaved schedule with virtual stages")
    layout = p.pipeline_model_parallel_layout
    first, last = p.decoder_first_pipeline_num_layers, p.decoder_last_pipeline_num_layers
    if layout:  # the layout places every layer and sets VP itself; Megatron refuses the other split flags
        for key, value in (("decoder_first_pipeline_num_layers", first), ("decoder_last_pipeline_num_layers", last)):
            if value is not None:
                line.left_out["parallelism." + key] = (f"{value}: Megatron-LM refuses it beside "
                                                       "--pipeline-model-parallel-layout, which places every layer")
        return
    line.args += [[flag(k), str(v)] for k, v in (("decoder_first_pipeline_num_layers", first),
                                                  ("decoder_last_pipeline_num_layers", last)) if v is not None]
    if vp <= 1:
        return
    uneven = (first is not None or last is not None or p.account_for_embedding_in_pipeline_split
              or p.account_for_loss_in_pipeline_split)
    pp = p.pipeline_model_parallel_size
    if not uneven and w.num_layers % (pp * vp) == 0:
        line.args.append(["--num-layers-per-virtual-pipeline-stage", str(w.num_layers // pp // vp)])
    else:  # Megatron asks for this form with an uneven split
        line.args.append(["--num-virtual-stages-per-pipeline-rank", str(vp)])


def _sharding(p: Parallelism, line: MegatronLine) -> None:
    """zero_stage in Megatron's words: 1 the distributed optimizer, 2 and 3 Megatron-FSDP's strategies."""
    strategy = p.data_parallel_sharding_strategy
    fsdp = bool(p.use_megatron_fsdp)
    if (p.use_distributed_optimizer or p.zero_stage == 1) and not p.use_megatron_fsdp:
        line.args.append(["--use-distributed-optimizer"])  # Megatron-FSDP turns it on itself
    if p.zero_stage in (2, 3) and not (fsdp and strategy and SHARDING_ZERO_STAGE[strategy] == p.zero_stage):
        fsdp = True
        if strategy is None or SHARDING_ZERO_STAGE[strategy] != p.zero_stage:
            strategy = next(s for s, z in SHARDING_ZERO_STAGE.items() if z == p.zero_stage)
    if fsdp:
        line.args.append(["--use-megatron-fsdp"])
    if strategy is not None:
        line.args.append(["--data-parallel-sharding-strategy", strategy])


# ---- Megatron-Bridge (NeMo) recipe overrides -----------------------------------------------------

# Where Megatron-Bridge's ConfigContainer keeps what is not on `model` (a TransformerConfig /
# GPTModelProvider, whose fields are Megatron-LM's names): scripts/training/run_recipe.py KEY=VALUE.
BRIDGE_SECTION = {"global_batch_size": "train", "micro_batch_size": "train",
                  "use_distributed_optimizer": "ddp", "overlap_grad_reduce": "ddp", "overlap_param_gather": "ddp",
                  "use_megatron_fsdp": "ddp", "data_parallel_sharding_strategy": "ddp", "fsdp_double_buffer": "ddp",
                  "tp_comm_overlap": "comm_overlap", "overlap_moe_expert_parallel_comm": "comm_overlap",
                  "fp8_recipe": "mixed_precision", "fp8_param_gather": "mixed_precision",
                  "fp8_dot_product_attention": "mixed_precision", "bf16": "mixed_precision",
                  "fp16": "mixed_precision", "fp8_format": "mixed_precision",
                  "tokenizer_type": "tokenizer", "tokenizer_model": "tokenizer",
                  "grad_reduce_in_bf16": "mixed_precision", "ddp_bucket_size": "ddp"}
# Megatron-LM flags whose TransformerConfig field has another name
BRIDGE_RENAMED = {"num_experts": "num_moe_experts", "fp8_format": "fp8",
                  "decoder_first_pipeline_num_layers": "num_layers_in_first_pipeline_stage",
                  "decoder_last_pipeline_num_layers": "num_layers_in_last_pipeline_stage",
                  "swiglu": "gated_linear_unit", "quick_geglu": "gated_linear_unit"}
# Flags with no ConfigContainer field: the provider builds positions for model.seq_length
BRIDGE_NOT_CONFIG = ("--group-query-attention", "--use-tp-pp-dp-mapping", "--num-layers-per-virtual-pipeline-stage",
                     "--max-position-embeddings")


def bridge_overrides(line: MegatronLine, parallelism: Parallelism | None) -> list[str]:
    """The same job as Megatron-Bridge ConfigContainer overrides (`model.tensor_model_parallel_size=8`).

    With --swiglu (or --quick-geglu) the override is model.gated_linear_unit=true; the recipe's
    activation (SiLU in the Llama-style recipes, quick-GELU in gpt-oss's) is not a value a command
    line can set, so it stays the recipe's."""
    out = []
    p = parallelism or Parallelism()
    for group in line.args:
        name, values = group[0], group[1:]
        if name in BRIDGE_NOT_CONFIG or name in ("--recompute-method", "--recompute-num-layers"):
            continue
        key = name[2:].replace("-", "_")
        if key == "num_virtual_stages_per_pipeline_rank":
            key = "virtual_pipeline_model_parallel_size"
        section = BRIDGE_SECTION.get(key, "model")
        key = BRIDGE_RENAMED.get(key, key) if section in ("model", "mixed_precision") else key
        value = "true" if not values else values[0] if len(values) == 1 else "[" + ",".join(values) + "]"
        if key == "untie_embeddings_and_output_weights":  # GPTModelProvider's name, the other way round
            key, value = "share_embeddings_and_output_weights", "false"
        elif key == "grad_reduce_in_bf16":  # MixedPrecisionConfig's name, the other way round
            key, value = "grad_reduce_in_fp32", "false"
        elif key == "ddp_bucket_size":  # DistributedDataParallelConfig's name
            key = "bucket_size"
        elif key == "disable_bias_linear":  # TransformerConfig's name, the other way round
            key, value = "add_bias_linear", "false"
        elif key == "window_size":
            value = f"[{value}]"
        elif key == "moe_layer_freq" and not value.isdigit():  # a list, not Megatron-LM's pattern text
            value = "[" + ",".join(map(str, megatron_names.parse_layer_pattern(value))) + "]"
        out.append(f"{section}.{key}={value}")
        if key == "use_distributed_optimizer":
            out.append("optimizer.use_distributed_optimizer=true")  # Bridge keeps it in both places
        if key == "seq_length":
            out.append(f"dataset.seq_length={value}")
        if key == "tokenizer_type" and value == NULL_TOKENIZER:  # the null tokenizer's vocabulary
            vocab = next(g[1] for g in line.args if g[0] == "--vocab-size")
            out.append(f"tokenizer.vocab_size={vocab}")
    vp = p.virtual_pipeline_model_parallel_size
    if vp and vp > 1 and not any(o.startswith("model.virtual_pipeline_model_parallel_size=") for o in out):
        out.append(f"model.virtual_pipeline_model_parallel_size={vp}")
    if p.recompute_granularity == "full":
        out += ["model.recompute_method=uniform", "model.recompute_num_layers=1"]
    if p.fp8_dot_product_attention:
        out.append("mixed_precision.fp8_dot_product_attention=true")
    # A recipe has its own plan: the plan's keys are stated even where Megatron-LM's default would do
    given = {o.split("=", 1)[0] for o in out}
    for key, value in _bridge_plan(p).items():
        if key not in given:
            out.append(f"{key}={value}")
    return out


def _bridge_plan(p: Parallelism) -> dict[str, str]:
    vp = p.virtual_pipeline_model_parallel_size
    return {"model.tensor_model_parallel_size": str(p.tensor_model_parallel_size),
            "model.pipeline_model_parallel_size": str(p.pipeline_model_parallel_size),
            "model.virtual_pipeline_model_parallel_size": str(vp) if vp and vp > 1 else "null",
            "model.context_parallel_size": str(p.context_parallel_size),
            "model.expert_model_parallel_size": str(p.expert_model_parallel_size),
            "model.sequence_parallel": _value(p.sequence_parallel),
            "model.recompute_granularity": "null" if p.recompute_granularity == "none" else p.recompute_granularity,
            "ddp.use_distributed_optimizer": "false", "optimizer.use_distributed_optimizer": "false",
            "ddp.overlap_grad_reduce": "false", "ddp.overlap_param_gather": "false",
            "comm_overlap.tp_comm_overlap": "false"}


# ---- a plan of the search, or a change of the Advisor, as its line ------------------------------

def plan_line(doc, point, presets: dict) -> MegatronLine:
    """The Megatron-LM arguments of the file's job with a searched plan (analysis/space.Point) in it."""
    return megatron_line(point.workload(doc.spec.workload), point.parallelism(doc.spec.parallelism), presets)
