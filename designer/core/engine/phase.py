"""What one GPU spends on a micro-batch through a chunk, and how the layer's work is split on it:
the terms the compute model (compute.py) and the layer's traffic (layer_traffic.py) share."""
# No `from __future__ import annotations`: Sharding's field types as objects, not texts, spare dataclass
# two pattern matches per field (is it a ClassVar, an InitVar?) as the class is made, at every start.

from dataclasses import dataclass, field
from typing import Callable

from ..by_name import FieldsByName, FieldValues, Frozen
from .moe import FlexPath

ACT_BYTES = 2  # bf16/fp16 activations (fp8 training keeps activations and communication in bf16)
KINDS = ("compute", "recompute", "tp_comm", "cp_comm", "ep_comm", "dp_comm")

CommFn = Callable[[str, str, float], float]  # (dimension, primitive, bytes) -> seconds


class Phase:
    """Seconds of one direction (forward or backward) of a micro-batch through a chunk."""

    busy: dict[str, float]  # on the critical path, per KINDS (all 0.0 to start)
    hidden: dict[str, float]  # overlapped with compute: tp_comm, cp_comm, ep_comm, dp_comm (0.0 to start)
    wgrad_s: float  # weight-gradient GEMMs (what a zero-bubble schedule may defer)
    flops: float  # hardware FLOPs executed

    __slots__ = ("busy", "hidden", "wgrad_s", "flops")

    def __init__(self, busy: dict[str, float] | None = None, hidden: dict[str, float] | None = None,
                 wgrad_s: float = 0.0, flops: float = 0.0) -> None:
        self.busy = dict.fromkeys(KINDS, 0.0) if busy is None else busy
        self.hidden = {"tp_comm": 0.0, "cp_comm": 0.0, "ep_comm": 0.0, "dp_comm": 0.0} if hidden is None else hidden
        self.wgrad_s = wgrad_s
        self.flops = flops

    @property
    def total_s(self) -> float:
        return sum(self.busy.values())

    def add(self, other: "Phase", times: float = 1.0) -> None:
        busy, hidden = self.busy, self.hidden
        for k, v in other.busy.items():
            busy[k] += v * times
        for k, v in other.hidden.items():
            hidden[k] += v * times
        self.wgrad_s += other.wgrad_s * times
        self.flops += other.flops * times

    def scaled(self, factor: float) -> "Phase":
        p = Phase()
        p.add(self, factor)
        return p


# init=False, eq=False and Frozen rather than frozen=True: its __init__ takes the fields by name and its
# __eq__, __hash__, __setattr__ and __delattr__ are written once (core/by_name.py), not generated.
@dataclass(repr=False, init=False, eq=False)
class Sharding(Frozen):
    """How a layer's work is split on one GPU (TP, CP, EP, recompute, ...): what its compute cost depends on."""
    tp: int
    cp: int
    ep: int
    etp: int
    sequence_parallel: bool
    recompute: str  # none | selective | full
    tp_comm_overlap: bool
    flash_attention: bool = True
    zero3: bool = False  # ZeRO-3 / FSDP: gather each layer's parameters before using them
    ep_comm_overlap: bool = False  # EP all-to-all hidden behind another micro-batch's compute
    recompute_modules: tuple = ("core_attn",)  # what selective recompute re-runs (Megatron's default)
    grouped_gemm: bool = True  # experts' GEMMs in one grouped kernel (else one launch per local expert)
    cp_comm: str = "p2p"  # context-parallel exchange: p2p ring, a2a (Ulysses), allgather, a2a+p2p
    moe_dispatcher: str = "alltoall"  # Megatron --moe-token-dispatcher-type: allgather, alltoall, flex
    flex: FlexPath = field(default_factory=FlexPath)  # the flex dispatcher's backend and paths (engine/moe.py)
    framework: str = "megatron"  # megatron | nemo (fused kernels) | torchtitan | deepspeed (eager elementwise)
    moe_balance: str = "forced"  # router balance: forced (benchmark), aux_loss, bias, none (engine/moe.py)
    moe_capacity_factor: float | None = None  # Megatron --moe-expert-capacity-factor (None: dropless)
    moe_pad_to_capacity: bool = False  # Megatron --moe-pad-expert-input-to-capacity
    ep_overlap_share: float = 1.0  # forwards the EP overlap pairs with a backward (moe.ep_overlap_share)
    router_groups: tuple[int, int] = (0, 0)  # group-limited routing: (groups, groups per token)
    dispatch_fwd_bytes: float = ACT_BYTES  # bytes per element of the forward dispatch (moe.wire_bytes)
    combine_bwd_bytes: float = ACT_BYTES  # bytes per element of the combine's backward
    grad_reduce_in_bf16: bool = False  # gradients reduced in BF16, not as fp32 main grads (--grad-reduce-in-bf16)
    moe_host_sync: bool = False  # the dispatcher waits for the GPU's token counts each MoE forward (dropless, eager)
    te_op_fuser: bool = False  # experts' MLP as Transformer Engine fused ops (--use-transformer-engine-op-fuser)

    @property
    def eager(self) -> bool:
        """Elementwise passes as eager PyTorch kernels (no Transformer Engine / Megatron fusions)."""
        return self.framework in ("torchtitan", "deepspeed")

    def __init__(self, **values):
        _SHARDING_INIT.set(self, values)

    def __eq__(self, other):
        return _SHARDING_VALUES.equal(self, other)

    def __hash__(self):
        return _SHARDING_VALUES.hash(self)


_SHARDING_INIT = FieldsByName(Sharding)  # its __init__
_SHARDING_VALUES = FieldValues(Sharding)  # its __eq__ and __hash__


class GemmTimes:
    """Seconds of a layer's GEMMs in each pass, their forward FLOPs, and the elements Transformer
    Engine quantizes for FP8 GEMMs (activation inputs in forward, output gradients in backward)."""
    fwd: float
    dgrad: float
    wgrad: float
    flops: float
    fp8_inputs: float
    fp8_grads: float

    __slots__ = ("fwd", "dgrad", "wgrad", "flops", "fp8_inputs", "fp8_grads")

    def __init__(self, fwd: float, dgrad: float, wgrad: float, flops: float, fp8_inputs: float,
                 fp8_grads: float) -> None:
        self.fwd = fwd
        self.dgrad = dgrad
        self.wgrad = wgrad
        self.flops = flops
        self.fp8_inputs = fp8_inputs
        self.fp8_grads = fp8_grads
