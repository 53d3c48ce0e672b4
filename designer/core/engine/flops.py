"""FLOPs of a GPT step: Megatron-LM's `num_floating_point_operations` formula.

Per token, forward + backward (3 GEMMs per weight: forward, dgrad, wgrad; 2 FLOPs per MAC),
causal attention (the s-dependent term counts half the score matrix):

    F_tok = 6 * L * [ h*(q + 2*kv) + q*h + q*s ]              attention: QKV, output, core
          + 6 * h * [ f*phi*L_dense + (f_e*k*phi + f_sh*phi)*L_moe ]   MLP (phi = 3 SwiGLU, 2 GeLU)
          + 6 * h * V                                          logits

with q = heads x kv_channels and kv = query_groups x kv_channels. Multi-latent attention
(DeepSeek-V3) replaces the QKV projection by its low-rank down/up projections and scores with
heads x (qk_head_dim + qk_pos_emb_head_dim) against values of v_head_dim; sliding-window layers
attend to their window instead of half the sequence; MTP layers add a decoder layer, a 2h x h
projection and a second logits head each (Megatron's formula does the same). MFU counts these model
FLOPs; HFU adds the recomputed forward passes (selective: the core attention; full: the
whole layer stack, not the logits). Source: Megatron-LM megatron/training/training.py
`num_floating_point_operations`; Narayanan et al., SC21, appendix.
"""
# No `from __future__ import annotations`: ModelShape's field types as objects, not texts, spare dataclass
# two pattern matches per field (is it a ClassVar, an InitVar?) as the class is made, at every start.

from dataclasses import dataclass

from ..by_name import FieldsByName, FieldValues, Frozen
from ..model.job import Workload


# init=False, eq=False and Frozen rather than frozen=True: its __init__ takes the fields by name and its
# __eq__, __hash__, __setattr__ and __delattr__ are written once (core/by_name.py), not generated.
@dataclass(repr=False, init=False, eq=False)
class ModelShape(Frozen):
    """The workload reduced to the sizes the formulas need."""

    layers: int
    dense_layers: int
    moe_layers: int
    h: int
    q: int  # query projection width = heads x head dim
    kv: int  # key (= value) projection width = groups x head dim
    heads: int
    groups: int
    head_dim: int
    f: int  # dense MLP width
    f_expert: int
    f_shared: int
    phi: int  # weight matrices in the MLP
    experts: int
    topk: int
    s: int
    vocab: int
    untied: bool
    global_batch: int
    micro_batch: int
    precision: str
    # attention weights as (out N, in K, how TP shards it: col = N/t, row = K/t, rep = whole)
    attn_weights: tuple = ()
    qk_dim: int = 0  # per-head query.key width (MLA: nope + rope part)
    v_dim: int = 0  # per-head value width
    keys_per_query: float = 0.0  # keys a query attends to, averaged over layers (causal: s/2)
    mtp_layers: int = 0
    qk_norm: bool = False
    window: int = -1  # sliding-window width in keys of the windowed layers (-1: none)
    full_share: float = 1.0  # share of the layers with full causal attention when some are windowed
    expert_bias: bool = False  # the experts' linear layers carry biases (disable_bias_linear: false)
    expert_act_clamp: bool = False  # the experts' quick-GeGLU clamps its inputs (activation_func_clamp_value)
    rope_eager: bool = False  # RoPE as eager PyTorch passes (YaRN: Megatron's fused kernel takes no mscale)

    @property
    def kv_comm_width(self) -> int:
        """Key + value width a context-parallel ring passes on (per token)."""
        return self.groups * (self.qk_dim + self.v_dim) if self.qk_dim else 2 * self.kv

    @staticmethod
    def of(w: Workload) -> "ModelShape":
        head_dim = w.kv_channels or w.hidden_size // w.num_attention_heads
        groups = w.num_query_groups or w.num_attention_heads
        experts = w.num_experts or 0
        if experts:
            freq = w.moe_layer_freq or 1
            candidates = [i for i in range(w.num_layers) if i >= (w.first_k_dense_replace or 0) and i % freq == 0]
            moe = len(candidates)
        else:
            moe = 0
        heads = w.num_attention_heads
        h = w.hidden_size
        if w.multi_latent_attention:
            # Megatron MLASelfAttention: down projections are replicated across TP, up
            # projections split by heads, the output projection by its input (DeepSeek-V3 report).
            rope = w.qk_pos_emb_head_dim if w.qk_pos_emb_head_dim is not None else 64
            nope = w.qk_head_dim or head_dim
            v_dim = w.v_head_dim or head_dim
            qk_dim = nope + rope
            q_weights = ([(w.q_lora_rank, h, "rep"), (heads * qk_dim, w.q_lora_rank, "col")] if w.q_lora_rank
                         else [(heads * qk_dim, h, "col")])
            kv_lora = w.kv_lora_rank or 512
            attn_weights = tuple(q_weights + [(kv_lora + rope, h, "rep"), (heads * (nope + v_dim), kv_lora, "col"),
                                              (h, heads * v_dim, "row")])
            groups = heads  # MLA's up projection gives every head its own keys and values
        else:
            qk_dim = v_dim = head_dim
            attn_weights = ((heads * head_dim + 2 * groups * head_dim, h, "col"), (h, heads * head_dim, "row"))
        keys = w.seq_length / 2  # causal: a query sees half the sequence on average
        window = (w.window_size or [-1])[0]
        window = -1 if window is None else window
        full_share = 1.0
        if window >= 0 and window + 1 < w.seq_length:
            # a left window of w tokens: w + 1 keys, fewer for the first w queries
            windowed = (window + 1) - (window + 1) ** 2 / (2 * w.seq_length)
            full_share = 1 / w.window_attn_skip_freq if w.window_attn_skip_freq else 0.0
            keys = full_share * keys + (1 - full_share) * windowed
        return ModelShape(
            attn_weights=attn_weights, qk_dim=qk_dim, v_dim=v_dim, keys_per_query=keys,
            mtp_layers=w.mtp_num_layers or 0, qk_norm=bool(w.qk_layernorm), window=window, full_share=full_share,
            layers=w.num_layers, dense_layers=w.num_layers - moe, moe_layers=moe, h=w.hidden_size,
            q=w.num_attention_heads * head_dim, kv=groups * head_dim, heads=w.num_attention_heads, groups=groups,
            head_dim=head_dim, f=w.ffn_hidden_size or 4 * w.hidden_size,
            f_expert=w.moe_ffn_hidden_size or w.ffn_hidden_size or 4 * w.hidden_size,
            f_shared=w.moe_shared_expert_intermediate_size or 0, phi=3 if w.swiglu or w.quick_geglu else 2, experts=experts,
            topk=w.moe_router_topk or 1 if experts else 0, s=w.seq_length, vocab=w.vocab_size,
            untied=bool(w.untie_embeddings_and_output_weights), global_batch=w.global_batch_size,
            micro_batch=w.micro_batch_size or 1, precision=w.precision or "bf16",
            expert_bias=bool(experts) and w.disable_bias_linear is False,
            expert_act_clamp=bool(experts) and bool(w.quick_geglu) and w.activation_func_clamp_value is not None,
            rope_eager=w.position_embedding_type == "yarn" and not w.multi_latent_attention,
        )

    def is_moe_layer(self, index: int, w: Workload | None = None) -> bool:
        return index >= self.dense_layers  # MoE layers are the last moe_layers (first_k_dense_replace)

    def __init__(self, **values):
        _MODEL_SHAPE_INIT.set(self, values)

    def __eq__(self, other):
        return _MODEL_SHAPE_VALUES.equal(self, other)

    def __hash__(self):
        return _MODEL_SHAPE_VALUES.hash(self)


_MODEL_SHAPE_INIT = FieldsByName(ModelShape)  # its __init__
_MODEL_SHAPE_VALUES = FieldValues(ModelShape)  # its __eq__ and __hash__


def attention_weight_count(m: ModelShape) -> float:
    return float(sum(n * k for n, k, _ in m.attn_weights))


def attention_flops_per_token(m: ModelShape) -> float:
    """Forward FLOPs of one attention block per token (projections + causal core)."""
    return 2 * attention_weight_count(m) + core_attention_flops_per_token(m)


def core_attention_flops_per_token(m: ModelShape) -> float:
    """Forward FLOPs of QK^T and AV per token: 2 x heads x (qk + v width) per key attended
    (causal: half the sequence, a sliding window: its width)."""
    return 2 * m.heads * (m.qk_dim + m.v_dim) * m.keys_per_query


def mtp_flops_per_token(m: ModelShape) -> float:
    """Forward FLOPs of the multi-token-prediction layers: each a decoder layer (MoE when the
    model's last layers are), the 2h -> h projection of [embedding; hidden] and its own logits."""
    layer = attention_flops_per_token(m) + mlp_flops_per_token(m, m.moe_layers > 0)
    return m.mtp_layers * (layer + 2 * 2 * m.h * m.h + logits_flops_per_token(m))


def mlp_flops_per_token(m: ModelShape, moe: bool) -> float:
    if moe:
        return 2 * m.h * (m.f_expert * m.topk * m.phi + m.f_shared * m.phi)
    return 2 * m.h * m.f * m.phi


def logits_flops_per_token(m: ModelShape) -> float:
    return 2 * m.h * m.vocab


def model_flops_per_token(m: ModelShape) -> float:
    """Forward + backward FLOPs per token, no recomputation (Megatron's formula)."""
    fwd = (m.layers * attention_flops_per_token(m) + m.dense_layers * mlp_flops_per_token(m, False)
           + m.moe_layers * mlp_flops_per_token(m, True) + logits_flops_per_token(m) + mtp_flops_per_token(m))
    return 3 * fwd


def recompute_flops_per_token(m: ModelShape, granularity: str) -> float:
    """Extra forward FLOPs per token spent recomputing activations."""
    if granularity == "full":
        return (m.layers * attention_flops_per_token(m) + m.dense_layers * mlp_flops_per_token(m, False)
                + m.moe_layers * mlp_flops_per_token(m, True))
    if granularity == "selective":
        return m.layers * core_attention_flops_per_token(m)
    return 0.0


def step_model_flops(m: ModelShape) -> float:
    return model_flops_per_token(m) * m.global_batch * m.s


def parameter_count(m: ModelShape) -> dict[str, float]:
    """Parameters by part (embedding counted once, output layer apart when untied)."""
    attn = attention_weight_count(m) + 2 * m.h  # projections + 2 norms
    dense_mlp = m.h * m.f * m.phi
    expert = m.h * m.f_expert * m.phi
    moe_mlp = m.experts * expert + m.h * m.f_shared * m.phi + m.h * m.experts  # + router
    mtp_mlp = moe_mlp if m.moe_layers else dense_mlp
    return {
        "embedding": m.vocab * m.h,
        "output": m.vocab * m.h if m.untied else 0.0,
        "layers": (m.layers * attn + m.dense_layers * dense_mlp + m.moe_layers * moe_mlp
                   + m.mtp_layers * (attn + mtp_mlp + 2 * m.h * m.h)),
        "experts": (m.moe_layers + (m.mtp_layers if m.moe_layers else 0)) * m.experts * expert,
    }
