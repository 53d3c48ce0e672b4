"""Per-step constants: the small kernels and HBM passes besides the GEMMs and attention (embedding
gradient, context-parallel ring merges, TP overlap splits, eager frameworks' passes, FSDP2 copies), the
launches and host synchronisations of a step, the pipeline's blocking sends, the spread of the GPUs'
speed and the host's fixed costs.
"""
from dataclasses import dataclass

from . import FRACTION, Frozen, constant as _c  # the declarations' short name


@dataclass(eq=False, repr=False, init=False)
class StepConstants(Frozen):
    """Per-step kernels, launches, host synchronisations, stragglers and host costs."""
    embedding_grad_bytes_per_element: float = _c(
        12.0, "HBM bytes per element of the input embedding's vocabulary shard (vocab / TP x hidden) in each "
        "micro-batch's backward: PyTorch's embedding_dense_backward writes a dense BF16 gradient (zero-fill 2, "
        "scattered into), and Megatron's DDP hook adds it to the fp32 main_grad (param.main_grad.add_(param.grad): "
        "read 2 + 4, write 4); the embedding is not a Transformer Engine layer, so no fused accumulation",
        unit="bytes", minimum=0, maximum=1024)
    cp_merge_bytes_per_element: float = _c(
        6.0, "HBM bytes per element of one merge step of context-parallel ring attention (p2p): Transformer "
        "Engine adds each ring step's partial output (forward) and dQ, dK/dV (backward) into the running result "
        "in a separate kernel, reading both and writing one 2-byte value (AttnFuncWithCPAndKVP2P: "
        "flash_attn_fwd_out_correction, dq.add_, dkv.add_)", unit="bytes", minimum=0, maximum=1024)
    cp_ring_fwd_kernels_per_step: float = _c(
        3.0, "Small kernels per context-parallel p2p ring step in the forward besides the attention: the KV "
        "send/recv (one NCCL kernel), the softmax-LSE correction and the output correction (Transformer Engine "
        "AttnFuncWithCPAndKVP2P.forward; engine/cp_ring.py), each at the kernel fixed cost gemm_overhead_us",
        unit="kernels", minimum=0, maximum=100)
    cp_ring_bwd_kernels_per_step: float = _c(
        4.0, "Small kernels per context-parallel p2p ring step in the backward besides the attention: the KV and "
        "dKV send/recv (one NCCL kernel) and the step's dQ, dK and dV written or added into the gradients "
        "(copy_ / add_; Transformer Engine AttnFuncWithCPAndKVP2P.backward; engine/cp_ring.py)",
        unit="kernels", minimum=0, maximum=100)
    tp_overlap_pipeline_splits: int = _c(
        4, "Pieces Transformer Engine's userbuffers split a GEMM + reduce-scatter into (the 'pipeline' method "
        "of the output projection and FC2; the last piece's scatter is exposed). The all-gathers feeding a "
        "GEMM run as a ring exchange in tp steps instead. Source: transformer_engine/pytorch/module/base.py "
        "initialize_ub defaults (num_splits: tp_size for ring_exchange, else 4)",
        unit="splits", minimum=1, maximum=1024)
    cuda_graph_partial_capture: float = _c(
        0.5, "Share of the launch gaps (kernel_gap_fraction) CUDA graphs remove when only some modules are "
        "captured (cuda_graph_scope lists e.g. attn, moe_router, moe_preprocess); whole-layer or full-iteration "
        "graphs remove them all. Estimate: the attention block issues about half a layer's kernels",
        **FRACTION)
    rank_speed_cv: float = _c(
        0.025, "Spread of identical GPUs' sustained speed within one job (coefficient of variation of a "
        "normal spread): a synchronous step waits for the slowest of N, about cv x sqrt(2 ln N) behind the mean "
        "(the expected maximum of N normal draws). Measured per-GPU spread under power and thermal management: "
        "Sinha et al., 'Not All GPUs Are Created Equal' (SC'22, arXiv:2208.11035), over 90 % of the GPUs of "
        "Summit, Vortex, Frontera, Longhorn and Corona: 8 % mean performance variation between GPUs of one SKU "
        "(up to 22 %), outliers 1.5x slower than the median. The value is the growth of the step with N in the "
        "weak-scaling series DGXC-GPT3-175B 128 -> 2048 GPUs (+2.2 % measured, 0.78 cv of compute predicted)",
        unit="fraction", minimum=0, maximum=0.5)
    rank_speed_screened_share: float = _c(
        0.0, "Share of the slowest GPUs a burn-in screen takes out of the job with their servers before it "
        "starts (a GEMM sweep of every node, replaced from the spare pool): the slowest of N is then at most "
        "the (1 - share) quantile of the spread. Node qualification sweeps of this kind: Guard / NodeSweep "
        "(arXiv:2605.17879). 0: no screen", unit="fraction", minimum=0, maximum=0.5)
    multi_tensor_max_tensors_adam: int = _c(
        36, "Tensors one fused Adam launch takes (apex/Transformer Engine multi_tensor_apply, depth 4: grad, "
        "param, m, v; csrc/multi_tensor_apply.cuh depth_to_max_tensors[3])", unit="tensors", minimum=1,
        maximum=100_000)
    multi_tensor_max_tensors_norm: int = _c(
        110, "Tensors one fused L2-norm launch takes (multi_tensor_l2norm, depth 1: depth_to_max_tensors[0])",
        unit="tensors", minimum=1, maximum=100_000)
    multi_tensor_launch_elements: float = _c(
        20_971_520, "Elements one multi_tensor_apply launch covers at most: 320 blocks of 65,536 (chunk_size "
        "2048 x 32, depth_to_max_blocks)", unit="elements", minimum=1, maximum=1e12)
    step_host_syncs: int = _c(
        2, "Host synchronisations per step that drain the GPU: Megatron's gradient norm (clip_grad_norm "
        "returns total_norm.item() for the clip decision and the log) and the reduced loss for logging "
        "(training.py train_step / training_log)", unit="syncs", minimum=0, maximum=1000)
    host_sync_gap_us: float = _c(
        30.0, "GPU idle per host synchronisation: the host wakes from cudaStreamSynchronize and issues the next "
        "kernels through PyTorch's eager dispatch (10-20 us per op, a few ops before the GPU is busy again); "
        "an estimate, no public measurement", unit="us", minimum=0, maximum=1_000_000)
    moe_host_syncs_per_layer: float = _c(
        1.0, "Host synchronisations per MoE layer forward of a dropless Megatron token dispatcher: the host needs "
        "the routed token counts to size the all-to-all and the grouped GEMM's m_splits, so it waits for the GPU "
        "once per layer (alltoall: _maybe_dtoh_and_synchronize at cuda_sync_point 'before_ep_alltoall'; allgather: "
        "tokens_per_expert .cpu(); flex: HybridEP sizes its buffers with a CPU sync, DeepEP's tokens_per_expert "
        ".item()). Each costs host_sync_gap_us; none with --moe-pad-expert-input-to-capacity or a graph that "
        "captures the MoE layer (full-iteration CUDA graph). Source: Megatron-LM "
        "megatron/core/transformer/moe/token_dispatcher.py, counted from the code",
        unit="syncs", minimum=0, maximum=100)
    tensors_per_layer: int = _c(
        6, "Parameter tensors of a dense transformer layer (QKV, projection, FC1, FC2 and two norms), what the "
        "optimizer's fused launches count; an MoE layer adds two per local expert and the router",
        unit="tensors", minimum=1, maximum=10_000)
    eager_activation_slowdown: float = _c(
        3.6, "Time of an eager PyTorch gated activation (SwiGLU: silu, then multiply: two kernels, five passes) "
        "/ the fused kernel's, for frameworks without fused elementwise kernels (torchtitan, deepspeed): "
        "tests/validation/data/h200-kernels.json, swiglu_fwd eager / triton 3.59 (Llama-3 8B) and 3.64 (70B)",
        unit="x", minimum=1, maximum=100)
    eager_norm_slowdown: float = _c(
        1.5, "Time of the eager norm and residual passes (F.rms_norm, a separate add) / the fused ones: "
        "h200-kernels.json rmsnorm_fwd eager / triton 1.22, 1.51, 1.57 (8B, 70B, 175B widths), residual add "
        "+ norm unfused / fused 1.40 (8B)", unit="x", minimum=1, maximum=100)
    fsdp2_copy_bytes_per_param: float = _c(
        8.0, "HBM bytes per parameter FSDP2 moves around each all-gather besides the collective: copy-in of the "
        "local shards into the gather buffer and copy-out into the per-parameter tensors, each a BF16 read and "
        "write (PyTorch FSDP2 foreach_all_gather / foreach_all_gather_copy_out); the reduce-scatter's copy-in "
        "of the gradients is half of it", unit="bytes", minimum=0, maximum=1024)
    pp_p2p_blocking_share_1f1b: float = _c(
        1.0, "Share of each stage-to-stage send/receive that the compute stream of a non-interleaved 1F1B "
        "pipeline waits for: Megatron-LM runs the forward's send_forward_recv_backward and the backward's "
        "send_backward_recv_forward synchronously (megatron/core/pipeline_parallel/p2p_communication.py "
        "_communicate waits on its requests; schedules.py forward_backward_pipelining_without_interleaving "
        "refuses overlap_p2p_comm). The interleaved schedule overlaps them with compute. 0: fully hidden",
        unit="fraction", minimum=0, maximum=1)
    microbatch_overhead_s: float = _c(
        0.0, "Host-side cost per micro-batch per stage (data loader, Python), seconds", unit="s", minimum=0, maximum=60)
    step_overhead_s: float = _c(
        0.0, "Fixed host cost per step (logging, loss all-reduce launch), seconds", unit="s", minimum=0, maximum=3600)
