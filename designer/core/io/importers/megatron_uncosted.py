"""Megatron-LM flags that change a training step but that no design key holds: an import lists each
with what it would change, so that a user knows where the prediction and the run may part.

Flags that are design keys are read as such (a key the engine gains leaves this list by itself:
the importer asks the job's fields first). The words say what the flag does in Megatron-LM
(megatron/training/arguments.py and the config dataclasses' docstrings at the flag list's commit).
"""
from __future__ import annotations

WHAT_IT_CHANGES: dict[str, str] = {
    "--rampup-batch-size": "the global batch grows over the first samples: early steps are shorter than the "
                           "costed one, and the time to train is shorter than steps x step time",
    "--hierarchical-context-parallel-sizes": "CP in levels (all-to-all inside, ring across): the engine costs "
                                             "one CP group",
    "--moe-expert-capacity-factor": "tokens over an expert's capacity are dropped: the busiest expert does "
                                    "less work than costed",
    "--moe-pad-expert-input-to-capacity": "every expert computes its full capacity, padded",
    "--moe-token-drop-policy": "which tokens an expert over capacity drops",
    "--moe-router-load-balancing-type": "how evenly the router spreads tokens: the busiest expert sets the "
                                        "expert layer's time",
    "--moe-aux-loss-coeff": "how strongly the router is pushed to balance: the busiest expert's share",
    "--moe-router-enable-expert-bias": "bias-based balancing (DeepSeek-V3): the busiest expert's share",
    "--moe-enable-deepep": "DeepEP's dispatch kernels instead of the all-to-all",
    "--moe-shared-expert-overlap": "the shared expert runs beside the token all-to-all",
    "--moe-router-dtype": "the router's precision (fp32 or fp64): a small extra pass",
    "--num-distributed-optimizer-instances": "the optimizer state sharded within groups: more memory per GPU "
                                             "and a second level of gradient reduction",
    "--overlap-p2p-communication": "pipeline sends overlapped with the micro-batches' compute",
    "--microbatch-group-size-per-vp-stage": "the interleaved schedule's grouping of micro-batches: its "
                                            "bubble and the activations in flight",
    "--delay-wgrad-compute": "weight gradients computed later, to hide the expert all-to-all",
    "--tp-comm-overlap-cfg": "the TP overlap's per-GEMM settings (SMs and method)",
    "--fine-grained-activation-offloading": "activations to host memory: less HBM, PCIe traffic not costed",
    "--offload-modules": "the modules whose activations go to host memory",
    "--activation-offload-fraction": "the share of activations sent to host memory",
    "--cpu-offloading": "activations and weights to host memory: less HBM, PCIe traffic not costed",
    "--optimizer-cpu-offload": "optimizer states in host memory: less HBM, the optimizer step on the CPU",
    "--use-precision-aware-optimizer": "optimizer states in lower precision: less memory",
    "--use-torch-fsdp2": "PyTorch FSDP2 shards the model: per-layer all-gathers the engine costs as ZeRO-3",
}
