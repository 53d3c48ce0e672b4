"""YaRN rotary embeddings (gpt-oss: --position-embedding-type yarn) run as eager PyTorch passes:
Megatron-Core's fused RoPE takes no mscale and YaRN's concentration factor is not 1, so the query
and key go through _apply_rotary_pos_emb_bshd (and Megatron-Bridge turns rope fusion off for any
type but rope). Each test fails on the engine without those passes."""
import json

import pytest

from designer.core.engine.compute import Sharding, layer_cost
from designer.core.engine.constants import EngineConstants
from designer.core.engine.flops import ModelShape
from designer.core.model.job import Workload
from tests.conftest import EXAMPLES, run_cli
from tests.core.engine_ops import NO_COMM, ops_of

def _shape(**kw) -> ModelShape:
    """A dense gpt-oss-like layer: 64 query heads and 8 KV heads of 64."""
    base = dict(num_layers=36, hidden_size=2880, ffn_hidden_size=2880, num_attention_heads=64, num_query_groups=8,
                kv_channels=64, seq_length=4096, vocab_size=201088, swiglu=True, global_batch_size=1280,
                micro_batch_size=2)
    base.update(kw)
    return ModelShape.of(Workload(**base))


SH = Sharding(tp=1, cp=1, ep=1, etp=1, sequence_parallel=False, recompute="none", tp_comm_overlap=False)


def test_yarn_pays_the_eager_rope_passes_over_query_and_key():
    """20 bytes forward and 16 backward per query and key element beyond a fused kernel's, and the
    eager kernels (22 forward, 8 backward); plain rope and learned positions pay nothing extra."""
    k, ops = EngineConstants(), ops_of()
    yarn, rope = _shape(position_embedding_type="yarn"), _shape(position_embedding_type="rope")
    assert yarn.rope_eager and not rope.rope_eager and not _shape().rope_eager
    with_yarn, without = layer_cost(yarn, SH, 2, False, ops, NO_COMM, k), layer_cost(rope, SH, 2, False, ops, NO_COMM, k)
    qk = 2 * 4096 * (64 + 8) * 64
    fwd = ops.memory(qk * 20) + 22 * ops.overhead_s
    bwd = ops.memory(qk * 16) + 8 * ops.overhead_s
    assert with_yarn.fwd.busy["compute"] - without.fwd.busy["compute"] == pytest.approx(fwd, rel=1e-6)
    assert with_yarn.bwd.busy["compute"] - without.bwd.busy["compute"] == pytest.approx(bwd, rel=1e-6)
    off = EngineConstants(rope_eager_fwd_bytes_per_element=0, rope_eager_bwd_bytes_per_element=0,
                          rope_eager_fwd_kernels=0, rope_eager_bwd_kernels=0)
    assert layer_cost(yarn, SH, 2, False, ops, NO_COMM, off).fwd.busy["compute"] == pytest.approx(
        without.fwd.busy["compute"], rel=1e-9)


def test_multi_latent_attention_keeps_its_own_rope_path():
    """MLA (DeepSeek) applies YaRN in its own attention module, not through this path."""
    mla = _shape(position_embedding_type="yarn", multi_latent_attention=True, q_lora_rank=1536, kv_lora_rank=512,
                 qk_head_dim=128, qk_pos_emb_head_dim=64, v_head_dim=128)
    assert not mla.rope_eager


def test_a_yarn_job_takes_longer_through_the_cli():
    """Through `designer evaluate` on the gpt-oss preset: YaRN (its own) against plain RoPE."""
    def compute(position: str) -> float:
        code, out, err = run_cli("evaluate", EXAMPLES / "h100-64gpu-infiniband.yaml", "--json",
                                 "--set", "workload.preset=gpt-oss-120b", "--set", "workload.global_batch_size=64",
                                 "--set", "workload.micro_batch_size=1", "--set", "workload.num_layers=4",
                                 "--set", "parallelism.expert_model_parallel_size=8",
                                 "--set", "parallelism.pipeline_model_parallel_size=1",
                                 "--set", "parallelism.tensor_model_parallel_size=1",
                                 "--set", f"workload.position_embedding_type={position}")
        assert code == 0, err
        return json.loads(out)["breakdown_s"]["compute"]
    assert compute("yarn") > compute("rope") * 1.003
