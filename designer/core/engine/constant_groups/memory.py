"""Memory constants: what a GPU holds besides the model's state and activations, and the share of
its HBM a plan leaves free.
"""
from dataclasses import dataclass

from . import Frozen, constant as _c  # the declarations' short name


@dataclass(eq=False, repr=False, init=False)
class MemoryConstants(Frozen):
    """A GPU's memory beyond the plan's tensors."""
    memory_temporaries_gib: float = _c(
        3.0, "CUDA context, NCCL buffers and GEMM workspaces per GPU, GiB", unit="GiB", minimum=0, maximum=1024)
    memory_fragmentation: float = _c(
        0.0, "Allocator fragmentation added to the activations in the memory estimate. 0 by default: the "
        "memory_headroom share of HBM is what covers fragmentation (set both only to model an allocator that "
        "fragments more than the headroom allows)", unit="fraction", minimum=0, maximum=1.0)
    memory_headroom: float = _c(
        0.10, "Share of each GPU's HBM a plan leaves free for allocator fragmentation and transient spikes "
        "(the PyTorch caching allocator's reserved-but-unallocated blocks, NCCL and cuBLAS workspaces grown at "
        "run time, the loss-spike and checkpoint-save peaks). 10% is the margin practitioners keep: a plan "
        "is tuned until torch.cuda.max_memory_reserved() stays under about 90% of the device (PyTorch 'CUDA "
        "semantics: memory management' documents the reserved-vs-allocated gap and expandable_segments; "
        "Megatron-LM and NeMo performance guides size micro-batches and recompute to leave such a margin). "
        "The fit verdict, the plan search and the Advisor hold plans to (1 - memory_headroom) x HBM",
        unit="fraction", minimum=0, maximum=0.9)
