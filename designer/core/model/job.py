"""The training job: workload (the model and batch) and parallelism (the plan).

Key names follow Megatron-LM's command-line arguments with dashes as underscores
(docs/contract.md section 3), except nine of Designer's own (`precision`, `zero_stage`,
`pipeline_schedule`, `virtual_pipeline_model_parallel_size`, `first_k_dense_replace`,
`rank_order`, `data_parallel_size`, `num_gpus`, `preset`); Megatron's forms of those are read
as aliases (megatron_names.py). Workload keys left out come from `preset`, then from the
Megatron defaults in `resolve_workload`.

Without `from __future__ import annotations`: the ~100 fields' types are builtins (int | None, ...),
which as objects rather than texts spare dataclass two pattern matches per field (is it a ClassVar,
an InitVar?) as each class is made, at every start.
"""
import dataclasses
from dataclasses import dataclass

from ..by_name import FieldsByName, compared_by_value
from .spec import spec_field

PRECISIONS = ("bf16", "fp16", "fp8", "fp4")
SCHEDULES = ("gpipe", "1f1b", "interleaved", "zb-h1", "dualpipe")
RECOMPUTE = ("none", "selective", "full")
# What Megatron-LM builds beyond the sizes (megatron/training/arguments.py's choices)
NORMALIZATIONS = ("LayerNorm", "RMSNorm")
POSITION_EMBEDDINGS = ("learned_absolute", "rope", "yarn", "mrope", "relative", "none")
TOKENIZERS = ("GPT2BPETokenizer", "SentencePieceTokenizer", "GPTSentencePieceTokenizer", "HuggingFaceTokenizer",
              "Llama2Tokenizer", "TikTokenizer", "NullTokenizer")
# Megatron-LM's build_tokenizer needs a type; its null tokenizer over --vocab-size builds the costed
# vocabulary and trains on --mock-data (megatron/core/tokenizers/utils/build_tokenizer.py): what a
# workload without a tokenizer means.
NULL_TOKENIZER = "NullTokenizer"
ATTENTION_BACKENDS = ("auto", "flash", "unfused")
# generations of fused attention kernels (engine constants attention_rate_*)
ATTENTION_KERNELS = ("current", "cudnn-9.0", "flash-attn-2")
MOE_DISPATCHERS = ("allgather", "alltoall", "flex")
MOE_FLEX_BACKENDS = ("deepep", "hybridep")
# Megatron --moe-router-load-balancing-type
MOE_BALANCING_TYPES = ("aux_loss", "seq_aux_loss", "global_aux_loss", "sinkhorn", "none")
# Megatron --moe-dispatch-fwd-dtype / --moe-combine-bwd-dtype
MOE_WIRE_DTYPES = ("bf16", "mxfp8")
CUDA_GRAPH_IMPLS = ("none", "local", "transformer_engine", "full_iteration")
DP_SHARDING_STRATEGIES = ("no_shard", "optim", "optim_grads", "optim_grads_params")
# Megatron-FSDP's sharding strategies are the ZeRO stages (Megatron-LM docs, megatron_fsdp).
SHARDING_ZERO_STAGE = {"no_shard": 0, "optim": 1, "optim_grads": 2, "optim_grads_params": 3}
CP_COMM_TYPES = ("p2p", "a2a", "allgather", "a2a+p2p")
# Megatron TransformerConfig.softmax_type (--softmax-type): learnable adds a learned logit per head to
# each softmax denominator (gpt-oss's attention sinks), off-by-one a fixed 1
SOFTMAX_TYPES = ("vanilla", "off-by-one", "learnable")
FRAMEWORKS = ("megatron", "nemo", "torchtitan", "deepspeed")
# Transformer Engine's FP8 scaling recipes (Megatron --fp8-recipe)
FP8_RECIPES = ("delayed", "tensorwise", "blockwise", "mxfp8")
# Transformer Engine's FP4 recipes (Megatron --fp4-recipe; --fp4-format e2m1)
FP4_RECIPES = ("nvfp4", "mxfp4")
# Keys of the 2025-26 recipes the engine accepts but does not model yet: the result names them
# (the Megatron-FSDP pair is costed through zero_stage where the two agree, stages/job.py).
UNMODELLED_WORKLOAD_KEYS = ()  # MLA, MTP, qk_layernorm and sliding windows are costed (engine/flops.py)
# moe_router_force_load_balancing is costed: the engine spreads tokens evenly over the experts, which is
# what forcing gives (an unforced router is warned about: stages/job.py).
# The dispatchers are costed too (engine/compute.py): allgather gathers the EP group's tokens, flex
# sends a token once per remote unit and destination GPU, per backend (engine/moe.py FlexPath).
UNMODELLED_PARALLELISM_KEYS = ("use_megatron_fsdp", "data_parallel_sharding_strategy",
                               "fsdp_double_buffer")

# Physical ranges (the schema shows them, the loader enforces them): far above any model or
# cluster built so far, low enough that the engine's arithmetic and lists stay small.
MAX_LAYERS = 16_384
MAX_WIDTH = 1 << 22  # hidden, MLP and head widths (4,194,304)
MAX_HEADS = 1 << 16
MAX_TOKENS = 1 << 24  # sequence length and vocabulary (16,777,216)
MAX_EXPERTS = 1 << 16
MAX_BATCH = 1 << 30  # samples per step (1,073,741,824)
MAX_MICRO_BATCH = 1 << 16
MAX_GPUS = 1 << 22  # 4,194,304 GPUs in one job
# Micro-batches of one step: the pipeline simulation and the trace grow with them.
MAX_MICROBATCHES = 1 << 20
PARALLEL_DIMS = ("tp", "cp", "ep", "dp", "pp")


# init=False, eq=False, repr=False: its __init__ takes the fields by name and its __eq__ and __repr__ are
# written once (core/by_name.py), not generated over 41 fields.
@compared_by_value
@dataclass(init=False, eq=False, repr=False)
class Workload:
    """The `workload` section: the model's shape, batch and precision that a training step runs."""
    preset: str | None = spec_field(None, doc="Built-in model whose values the explicit keys override")
    num_layers: int | None = spec_field(None, doc="Transformer layers", minimum=1, maximum=MAX_LAYERS)
    hidden_size: int | None = spec_field(None, doc="Model width h", minimum=1, maximum=MAX_WIDTH)
    ffn_hidden_size: int | None = spec_field(None, doc="MLP width (default 4h)", minimum=1, maximum=MAX_WIDTH)
    num_attention_heads: int | None = spec_field(None, doc="Query heads", minimum=1, maximum=MAX_HEADS)
    num_query_groups: int | None = spec_field(None, doc="KV heads for GQA (default: = heads, MHA)", minimum=1,
                                               maximum=MAX_HEADS)
    kv_channels: int | None = spec_field(None, doc="Head dimension (default h / heads)", minimum=1, maximum=MAX_WIDTH)
    seq_length: int | None = spec_field(None, doc="Tokens per sample", minimum=1, maximum=MAX_TOKENS)
    vocab_size: int | None = spec_field(None, doc="Vocabulary (padded) size", minimum=1, maximum=MAX_TOKENS)
    swiglu: bool | None = spec_field(None, doc="SwiGLU MLP (three weight matrices)")
    quick_geglu: bool | None = spec_field(None, doc="Gated MLP with quick-GELU, x * sigmoid(1.702 x), instead of "
                                          "SiLU (three weight matrices; Megatron --quick-geglu, gpt-oss)")
    activation_func_clamp_value: float | None = spec_field(
        None, doc="Clamp of the gated MLP's inputs before the activation (Megatron --activation-func-clamp-value; "
        "gpt-oss: 7). With quick_geglu, Megatron-Core clamps the experts' FC1 output in eager PyTorch passes "
        "unless use_transformer_engine_op_fuser fuses the experts' MLP", minimum=0, maximum=1e9)
    untie_embeddings_and_output_weights: bool | None = spec_field(
        None, doc="Separate output (LM head) matrix instead of the input embedding"
    )
    num_experts: int | None = spec_field(None, doc="Experts per MoE layer (absent: dense)", minimum=1,
                                          maximum=MAX_EXPERTS)
    moe_router_topk: int | None = spec_field(None, doc="Experts each token is routed to", minimum=1,
                                              maximum=MAX_EXPERTS)
    moe_ffn_hidden_size: int | None = spec_field(None, doc="MLP width of one expert", minimum=1, maximum=MAX_WIDTH)
    moe_shared_expert_intermediate_size: int | None = spec_field(
        None, doc="MLP width of the shared expert(s), 0 for none", minimum=0, maximum=MAX_WIDTH
    )
    moe_layer_freq: int | None = spec_field(None, doc="Every n-th layer is MoE (1: all)", minimum=1,
                                             maximum=MAX_LAYERS)
    first_k_dense_replace: int | None = spec_field(None, doc="The first k layers stay dense", minimum=0,
                                                    maximum=MAX_LAYERS)
    moe_router_num_groups: int | None = spec_field(
        None, doc="Router expert groups for group-limited (node-limited) routing: each token picks its experts "
        "from moe_router_group_topk of them (Megatron --moe-router-num-groups; DeepSeek-V3: 8)", minimum=1,
        maximum=MAX_HEADS)
    moe_router_group_topk: int | None = spec_field(
        None, doc="Groups each token's experts come from (Megatron --moe-router-group-topk; DeepSeek-V3: 4 nodes)",
        minimum=1, maximum=MAX_HEADS)
    global_batch_size: int | None = spec_field(None, doc="Samples per optimizer step", minimum=1,
                                                maximum=MAX_BATCH)
    micro_batch_size: int | None = spec_field(None, doc="Samples per micro-batch per GPU", minimum=1,
                                               maximum=MAX_MICRO_BATCH)
    precision: str | None = spec_field(None, doc="Compute precision", enum=PRECISIONS)
    # The models of 2025-26 (Megatron-LM's arguments; UNMODELLED_WORKLOAD_KEYS: not modelled yet).
    multi_latent_attention: bool | None = spec_field(None, doc="Multi-latent attention (DeepSeek MLA, Megatron "
                                                      "--multi-latent-attention)")
    q_lora_rank: int | None = spec_field(None, doc="MLA: rank of the query down-projection", minimum=1,
                                         maximum=MAX_WIDTH)
    kv_lora_rank: int | None = spec_field(None, doc="MLA: rank of the compressed key/value latent", minimum=1,
                                          maximum=MAX_WIDTH)
    qk_head_dim: int | None = spec_field(None, doc="MLA: query/key head dimension without RoPE", minimum=1,
                                         maximum=MAX_WIDTH)
    qk_pos_emb_head_dim: int | None = spec_field(None, doc="MLA: RoPE part of the query/key head dimension",
                                                 minimum=0, maximum=MAX_WIDTH)
    v_head_dim: int | None = spec_field(None, doc="MLA: value head dimension", minimum=1, maximum=MAX_WIDTH)
    mtp_num_layers: int | None = spec_field(None, doc="Multi-token prediction layers after the last decoder "
                                            "layer (Megatron --mtp-num-layers)", minimum=0, maximum=MAX_LAYERS)
    qk_layernorm: bool | None = spec_field(None, doc="LayerNorm on queries and keys (Megatron --qk-layernorm)")
    window_size: list[int] | None = spec_field(None, doc="Sliding-window attention [left, right] tokens "
                                               "(Megatron --window-size; -1: unbounded)", minimum=-1,
                                               maximum=MAX_TOKENS)
    window_attn_skip_freq: int | None = spec_field(None, doc="With window_size: every n-th layer attends to the "
                                                   "full sequence (Megatron --window-attn-skip-freq)", minimum=1,
                                                   maximum=MAX_LAYERS)
    softmax_type: str | None = spec_field(None, doc="Attention softmax (Megatron --softmax-type): learnable adds a "
                                          "learned per-head sink logit to every row's denominator (gpt-oss's "
                                          "attention sinks), off-by-one a fixed one; absent: vanilla. Decides "
                                          "which fused attention kernels Transformer Engine can run",
                                          enum=SOFTMAX_TYPES)
    # What Megatron-LM must be told to build the model that was costed. A norm or a bias is a
    # rounding error of a layer's time, so the engine does not cost them apart; the export writes them.
    normalization: str | None = spec_field(None, doc="Megatron --normalization (absent: LayerNorm, Megatron's "
                                           "default)", enum=NORMALIZATIONS)
    position_embedding_type: str | None = spec_field(None, doc="Megatron --position-embedding-type (absent: "
                                                     "learned_absolute, Megatron's default)", enum=POSITION_EMBEDDINGS)
    disable_bias_linear: bool | None = spec_field(None, doc="No bias in the linear layers (Megatron "
                                                  "--disable-bias-linear)")
    max_position_embeddings: int | None = spec_field(None, doc="Longest sequence the position embedding covers "
                                                     "(default: seq_length)", minimum=1, maximum=MAX_TOKENS)
    tokenizer_type: str | None = spec_field(None, doc="Megatron --tokenizer-type (absent: NullTokenizer over "
                                            "vocab_size, which trains on --mock-data)", enum=TOKENIZERS)
    tokenizer_model: str | None = spec_field(None, doc="Megatron --tokenizer-model: the tokenizer's Hugging Face "
                                             "name or path")

    def __init__(self, **values):
        _WORKLOAD_INIT.set(self, values)


# init=False, eq=False, repr=False: its __init__ takes the fields by name and its __eq__ and __repr__ are
# written once (core/by_name.py), not generated over 57 fields.
@compared_by_value
@dataclass(init=False, eq=False, repr=False)
class Parallelism:
    """The `parallelism` section: how the job splits over GPUs (TP, PP, CP, EP, DP) and its options."""
    tensor_model_parallel_size: int = spec_field(1, doc="TP: GPUs sharing each layer's matrices", minimum=1,
                                                 maximum=MAX_GPUS)
    pipeline_model_parallel_size: int = spec_field(1, doc="PP: pipeline stages", minimum=1, maximum=MAX_LAYERS)
    context_parallel_size: int = spec_field(1, doc="CP: GPUs sharing each sequence", minimum=1, maximum=MAX_GPUS)
    expert_model_parallel_size: int = spec_field(1, doc="EP: GPUs sharing the experts", minimum=1, maximum=MAX_GPUS)
    expert_tensor_parallel_size: int | None = spec_field(
        None, doc="TP inside an expert (default: = TP)", minimum=1, maximum=MAX_GPUS
    )
    data_parallel_size: int | None = spec_field(
        None, doc="DP: derived from the GPU count when absent, checked when given", minimum=1, maximum=MAX_GPUS
    )
    num_gpus: int | None = spec_field(None, doc="GPUs the job uses (default: all in the cluster)", minimum=1,
                                       maximum=MAX_GPUS)
    virtual_pipeline_model_parallel_size: int | None = spec_field(
        None, doc="Model chunks per pipeline stage (interleaved schedule)", minimum=1, maximum=MAX_LAYERS
    )
    pipeline_schedule: str = spec_field("1f1b", doc="Pipeline schedule", enum=SCHEDULES)
    sequence_parallel: bool = spec_field(False, doc="Shard LayerNorm/dropout activations across TP")
    recompute_granularity: str = spec_field("none", doc="Activation recomputation", enum=RECOMPUTE)
    use_distributed_optimizer: bool = spec_field(False, doc="Shard optimizer states across DP (ZeRO-1)")
    zero_stage: int = spec_field(0, doc="ZeRO stage 0..3 (3 = FSDP)", minimum=0, maximum=3)
    overlap_grad_reduce: bool = spec_field(False, doc="Overlap the DP gradient reduction with backward")
    overlap_param_gather: bool = spec_field(False, doc="Overlap the parameter all-gather with forward")
    tp_comm_overlap: bool = spec_field(False, doc="Overlap TP communication with GEMMs")
    grad_reduce_in_bf16: bool | None = spec_field(
        None, doc="Gradients accumulated and reduced over DP in BF16, 2 bytes a parameter instead of the fp32 "
        "main grads' 4 (Megatron --grad-reduce-in-bf16; Megatron-Bridge grad_reduce_in_fp32: false; default "
        "fp32, Megatron-LM's)")
    ddp_bucket_size: int | None = spec_field(
        None, doc="Parameters per DP gradient bucket (Megatron --ddp-bucket-size; default max(4e7, 1e6 x DP))",
        minimum=1, maximum=10**12)
    rank_order: str = spec_field("tp-cp-ep-dp-pp", doc="Order of the dimensions in the global rank, fastest first")
    attention_backend: str = spec_field(
        "auto", doc="Core attention kernel (Megatron --attention-backend): flash, unfused (softmax in HBM), "
        "or auto (the accelerator's calibrated default)", enum=ATTENTION_BACKENDS)
    attention_kernels: str = spec_field(
        "current", doc="Generation of the fused attention kernels the software stack runs: current (cuDNN 9.1x, "
        "FlashAttention-3 class), cudnn-9.0 (Transformer Engine 1.4-1.7 with cuDNN 9.0, NeMo/PyTorch containers "
        "of early 2024) or flash-attn-2 (FlashAttention-2, PyTorch's flash SDPA backend); each runs at its "
        "engine constant attention_rate_* share of the current kernels' rate", enum=ATTENTION_KERNELS)
    # Megatron-LM's uneven pipeline splits (designer/core/model/pipeline_split.py).
    account_for_embedding_in_pipeline_split: bool = spec_field(
        False, doc="The embedding counts as one layer in the pipeline split (Megatron "
        "--account-for-embedding-in-pipeline-split)")
    account_for_loss_in_pipeline_split: bool = spec_field(
        False, doc="The output layer and loss count as one layer in the pipeline split (Megatron "
        "--account-for-loss-in-pipeline-split)")
    decoder_first_pipeline_num_layers: int | None = spec_field(
        None, doc="Decoder layers on the first pipeline stage (Megatron --decoder-first-pipeline-num-layers)",
        minimum=0, maximum=MAX_LAYERS)
    decoder_last_pipeline_num_layers: int | None = spec_field(
        None, doc="Decoder layers on the last pipeline stage (Megatron --decoder-last-pipeline-num-layers)",
        minimum=0, maximum=MAX_LAYERS)
    pipeline_model_parallel_layout: str | None = spec_field(
        None, doc="Layers of each of the PP x VP virtual stages: E embedding, t decoder layer, m MTP layer, "
        "L loss, | between stages, (..)*N and x*N repeat (Megatron --pipeline-model-parallel-layout)")
    # Megatron-LM's switches of the 2025-26 recipes (UNMODELLED_PARALLELISM_KEYS: not modelled yet).
    moe_token_dispatcher_type: str | None = spec_field(None, doc="MoE token dispatcher (Megatron "
                                                       "--moe-token-dispatcher-type)", enum=MOE_DISPATCHERS)
    moe_flex_dispatcher_backend: str | None = spec_field(None, doc="Backend of the flex dispatcher: deepep or "
                                                         "hybridep (NVLink-domain-aware all-to-all)",
                                                         enum=MOE_FLEX_BACKENDS)
    moe_flex_dispatcher_num_sms: int | None = spec_field(None, doc="SMs the flex dispatcher's kernels occupy "
                                                         "(Megatron --moe-flex-dispatcher-num-sms; default the "
                                                         "backend's own: calibration deepep_num_sms, hybridep_num_sms)",
                                                         minimum=1, maximum=1024)
    moe_router_force_load_balancing: bool | None = spec_field(None, doc="Benchmark routing forced to an even "
                                                              "expert load (Megatron "
                                                              "--moe-router-force-load-balancing)")
    moe_router_load_balancing_type: str | None = spec_field(
        None, doc="How a trained router is kept balanced (Megatron --moe-router-load-balancing-type; default "
        "aux_loss): the busiest expert-parallel GPU sets each MoE layer's pace", enum=MOE_BALANCING_TYPES)
    moe_router_enable_expert_bias: bool | None = spec_field(
        None, doc="DeepSeek's auxiliary-loss-free bias balancing (Megatron --moe-router-enable-expert-bias): "
        "a far more even expert load than an auxiliary loss")
    moe_expert_capacity_factor: float | None = spec_field(
        None, doc="Tokens an expert takes, as a multiple of its mean share; the rest are dropped (Megatron "
        "--moe-expert-capacity-factor; absent: dropless)", exclusive_minimum=0, maximum=1024)
    moe_pad_expert_input_to_capacity: bool | None = spec_field(
        None, doc="With a capacity factor: every expert computes exactly its capacity (Megatron "
        "--moe-pad-expert-input-to-capacity)")
    moe_dispatch_fwd_dtype: str | None = spec_field(
        None, doc="Data type the forward dispatch all-to-all sends (Megatron --moe-dispatch-fwd-dtype; default "
        "bf16)", enum=MOE_WIRE_DTYPES)
    moe_combine_bwd_dtype: str | None = spec_field(
        None, doc="Data type the combine's backward all-to-all sends (Megatron --moe-combine-bwd-dtype; default "
        "bf16)", enum=MOE_WIRE_DTYPES)
    moe_grouped_gemm: bool | None = spec_field(None, doc="A rank's experts run as one grouped GEMM (Megatron "
                                               "--moe-grouped-gemm)")
    use_transformer_engine_op_fuser: bool | None = spec_field(
        None, doc="The experts' FC1, activation and FC2 as one Transformer Engine fused-ops sequence (Megatron "
        "--use-transformer-engine-op-fuser; Megatron-Bridge cutedsl_fused_grouped_mlp): the activation's clamp "
        "runs inside the fused activation instead of as eager passes")
    overlap_moe_expert_parallel_comm: bool | None = spec_field(None, doc="Hide the EP all-to-all behind another "
                                                               "micro-batch's compute (Megatron "
                                                               "--overlap-moe-expert-parallel-comm)")
    recompute_modules: list[str] | None = spec_field(None, doc="Modules recomputed by selective recompute "
                                                     "(Megatron --recompute-modules)")
    cuda_graph_impl: str | None = spec_field(None, doc="CUDA graphs (Megatron --cuda-graph-impl): none, "
                                             "transformer_engine (per module) or full_iteration",
                                             enum=CUDA_GRAPH_IMPLS)
    cuda_graph_scope: list[str] | None = spec_field(None, doc="Modules captured in CUDA graphs (Megatron "
                                                    "--cuda-graph-scope)")
    use_megatron_fsdp: bool | None = spec_field(None, doc="Megatron-FSDP (Megatron --use-megatron-fsdp)")
    data_parallel_sharding_strategy: str | None = spec_field(
        None, doc="Megatron-FSDP sharding (optim_grads_params = ZeRO-3)", enum=DP_SHARDING_STRATEGIES)
    fsdp_double_buffer: bool | None = spec_field(None, doc="Megatron-FSDP double buffering of gathered "
                                                 "parameters")
    cpu_offloading_num_layers: int | None = spec_field(None, doc="Layers whose activations are offloaded to host "
                                                       "memory (Megatron --cpu-offloading-num-layers)", minimum=0,
                                                       maximum=MAX_LAYERS)
    framework: str | None = spec_field(
        None, doc="Training framework: megatron (default) and nemo run Megatron-Core's fused kernels; torchtitan "
        "and deepspeed run eager PyTorch elementwise kernels, and with zero_stage 3 torchtitan's FSDP2 copies "
        "each layer's parameters in and out of its gather buffer while DeepSpeed gathers parameter by parameter",
        enum=FRAMEWORKS)
    cp_comm_type: str | None = spec_field(None, doc="Context-parallel communication (Megatron --cp-comm-type)",
                                          enum=CP_COMM_TYPES)
    fp8_format: str | None = spec_field(None, doc="FP8 format as Megatron-Bridge recipes give it beside the plan "
                                        "(e4m3 or hybrid; both run at the FP8 GEMM rate); the job runs in FP8 "
                                        "only with workload precision: fp8 (or workload.fp8_format)",
                                        enum=("e4m3", "hybrid"))
    fp8_recipe: str | None = spec_field(None, doc="FP8 scaling recipe of Transformer Engine (Megatron "
                                        "--fp8-recipe)", enum=FP8_RECIPES)
    fp8_param_gather: bool | None = spec_field(None, doc="Parameters all-gathered in FP8, half the bytes of BF16 "
                                               "(Megatron --fp8-param-gather)")
    fp8_dot_product_attention: bool | None = spec_field(None, doc="FP8 attention kernels (Transformer Engine; "
                                                        "Megatron-Bridge setting)")
    fp4_recipe: str | None = spec_field(None, doc="FP4 scaling recipe with workload precision: fp4 (Megatron "
                                        "--fp4-recipe; NVFP4: 16-value blocks with an E4M3 scale)", enum=FP4_RECIPES)
    fp4_param_gather: bool | None = spec_field(None, doc="Parameters all-gathered in FP4 (Megatron --fp4-param-gather)")
    first_last_layers_bf16: bool | None = spec_field(None, doc="Keep the first and last decoder layers in BF16 in an "
                                                     "FP8/FP4 run (Megatron --first-last-layers-bf16)")
    num_layers_at_start_in_bf16: int | None = spec_field(None, doc="With first_last_layers_bf16: layers kept in BF16 "
                                                         "at the start (Megatron's default 1)", minimum=0,
                                                         maximum=MAX_LAYERS)
    num_layers_at_end_in_bf16: int | None = spec_field(None, doc="With first_last_layers_bf16: layers kept in BF16 "
                                                       "at the end (Megatron's default 1)", minimum=0,
                                                       maximum=MAX_LAYERS)

    def __init__(self, **values):
        _PARALLELISM_INIT.set(self, values)


def parse_rank_order(order: str) -> list[str] | None:
    """'tp-cp-ep-dp-pp' -> ['tp','cp','ep','dp','pp']; None when it is not a permutation."""
    dims = [d.strip().lower() for d in order.split("-")]
    if "ep" not in dims and "dp" in dims:
        # an order without ep (tp-cp-pp-dp, as TP_PP_DP_MAPPING runs write it): Megatron carves the
        # expert ranks out of the data-parallel ones, so ep sits just inside dp
        dims.insert(dims.index("dp"), "ep")
    if sorted(dims) != sorted(PARALLEL_DIMS):
        return None
    return dims


# Megatron-LM's defaults for keys a preset or the user may leave out.
WORKLOAD_DEFAULTS = {
    "swiglu": False,
    "untie_embeddings_and_output_weights": False,
    "moe_router_topk": 2,
    "moe_shared_expert_intermediate_size": 0,
    "moe_layer_freq": 1,
    "first_k_dense_replace": 0,
    "micro_batch_size": 1,
    "precision": "bf16",
}

_WORKLOAD_FIELDS = tuple(f.name for f in dataclasses.fields(Workload))  # what resolve_workload copies
_WORKLOAD_INIT = FieldsByName(Workload)  # its __init__
_PARALLELISM_INIT = FieldsByName(Parallelism)  # its __init__

REQUIRED_WORKLOAD_KEYS = (
    "num_layers",
    "hidden_size",
    "num_attention_heads",
    "seq_length",
    "vocab_size",
    "global_batch_size",
)


def resolve_workload(workload: Workload, presets: dict) -> Workload:
    """The workload with the preset and the defaults filled in (explicit keys win).

    Raises KeyError with the preset name when it is unknown; the checker reports it.
    """
    values = {}
    if workload.preset:
        values.update(presets[workload.preset].values)
    for name in _WORKLOAD_FIELDS:
        v = getattr(workload, name)
        if v is not None:
            values[name] = v
    for key, default in WORKLOAD_DEFAULTS.items():
        values.setdefault(key, default)
    h = values.get("hidden_size")
    heads = values.get("num_attention_heads")
    if h and "ffn_hidden_size" not in values:
        values["ffn_hidden_size"] = 4 * h
    if heads and "num_query_groups" not in values:
        values["num_query_groups"] = heads
    if h and heads and "kv_channels" not in values and h % heads == 0:
        values["kv_channels"] = h // heads
    if values.get("num_experts") and "moe_ffn_hidden_size" not in values and "ffn_hidden_size" in values:
        values["moe_ffn_hidden_size"] = values["ffn_hidden_size"]
    return Workload(**values)
