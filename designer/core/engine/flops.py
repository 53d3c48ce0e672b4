"""FLOPs of a GPT step: Megatron-LM's `num_floating_point_operations` formula.

Per token, forward + backward (3 GEMMs per weight: forward, dgrad, wgrad; 2 FLOPs per MAC),
causal attention (the s-dependent term counts half the score matrix):

    F_tok = 6 * L * [ h*(q + 2*kv) + q*h + q*s ]              attention: QKV, output, core
          + 6 * h * [ f*phi*L_dense + (f_e*k*phi + f_sh*phi)*L_moe ]   MLP (phi = 3 SwiGLU, 2 GeLU)
          + 6 * h * V                                          logits

with q = heads x kv_channels and kv = query_groups x kv_channels. MFU counts these model
FLOPs; HFU adds the recomputed forward passes (selective: the core attention; full: the
whole layer stack, not the logits). Source: Megatron-LM megatron/training/training.py
`num_floating_point_operations`; Narayanan et al., SC21, appendix.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..model.job import Workload


@dataclass(frozen=True)
class ModelShape:
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
        return ModelShape(
            layers=w.num_layers, dense_layers=w.num_layers - moe, moe_layers=moe, h=w.hidden_size,
            q=w.num_attention_heads * head_dim, kv=groups * head_dim, heads=w.num_attention_heads, groups=groups,
            head_dim=head_dim, f=w.ffn_hidden_size or 4 * w.hidden_size,
            f_expert=w.moe_ffn_hidden_size or w.ffn_hidden_size or 4 * w.hidden_size,
            f_shared=w.moe_shared_expert_intermediate_size or 0, phi=3 if w.swiglu else 2, experts=experts,
            topk=w.moe_router_topk or 1 if experts else 0, s=w.seq_length, vocab=w.vocab_size,
            untied=bool(w.untie_embeddings_and_output_weights), global_batch=w.global_batch_size,
            micro_batch=w.micro_batch_size or 1, precision=w.precision or "bf16",
        )

    def is_moe_layer(self, index: int, w: Workload | None = None) -> bool:
        return index >= self.dense_layers  # MoE layers are the last moe_layers (first_k_dense_replace)


def attention_flops_per_token(m: ModelShape) -> float:
    """Forward FLOPs of one attention block per token (projections + causal core)."""
    return 2 * (m.h * (m.q + 2 * m.kv) + m.q * m.h) + 2 * m.q * m.s


def core_attention_flops_per_token(m: ModelShape) -> float:
    """Forward FLOPs of QK^T and AV per token, causal (half the score matrix)."""
    return 2 * m.q * m.s


def mlp_flops_per_token(m: ModelShape, moe: bool) -> float:
    if moe:
        return 2 * m.h * (m.f_expert * m.topk * m.phi + m.f_shared * m.phi)
    return 2 * m.h * m.f * m.phi


def logits_flops_per_token(m: ModelShape) -> float:
    return 2 * m.h * m.vocab


def model_flops_per_token(m: ModelShape) -> float:
    """Forward + backward FLOPs per token, no recomputation (Megatron's formula)."""
    fwd = (m.layers * attention_flops_per_token(m) + m.dense_layers * mlp_flops_per_token(m, False)
           + m.moe_layers * mlp_flops_per_token(m, True) + logits_flops_per_token(m))
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
    attn = m.h * (m.q + 2 * m.kv) + m.q * m.h + 2 * m.h  # projections + 2 norms
    dense_mlp = m.h * m.f * m.phi
    expert = m.h * m.f_expert * m.phi
    moe_mlp = m.experts * expert + m.h * m.f_shared * m.phi + m.h * m.experts  # + router
    return {
        "embedding": m.vocab * m.h,
        "output": m.vocab * m.h if m.untied else 0.0,
        "layers": m.layers * attn + m.dense_layers * dense_mlp + m.moe_layers * moe_mlp,
        "experts": m.moe_layers * m.experts * expert,
    }
