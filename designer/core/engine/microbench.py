"""The kernels of a design's job, as the engine costs them, and a calibration from their measured times.

`job_kernels` lists one transformer layer's kernels on one GPU (the MoE layer where the model has
them): its GEMMs (forward, dgrad, wgrad), attention forward and backward, the elementwise passes,
grouped expert GEMMs and the token permutation, each with its shape, FLOPs, HBM bytes and the
engine's own time. `designer microbench --predict` prints them; measured on a GPU
(`designer.core.engine.microbench_torch`, which needs PyTorch) the same list gets a `measured_ms`
per kernel, and `calibration_from` turns the ratios into the accelerator constants the engine uses.
"""
from __future__ import annotations

import dataclasses
import statistics
from dataclasses import dataclass, field

from ..model.catalog import Accelerator, Catalog
from ..model.document import Document
from ..problems import DesignerError, Problem
from . import flops as F
from .compute import ACT_BYTES, OpCoster, Sharding, attention_gemms, attention_kernels
from .constants import AcceleratorConstants, constant_fields, engine_constants
from .stages.job import hardware, resolve_job
from .stages.phases import attention_kernel_rate, fp8_costs, job_operand_bytes, precision_gemm_efficiency, sharding_of

KINDS = ("gemm", "attention_fwd", "attention_bwd", "elementwise", "grouped_gemm", "permute")
RECORD_FORMAT = "designer-microbench/1"

# which accelerator constant a kind's measured/predicted ratio scales (its rate: higher = faster)
CALIBRATED = {"gemm": "gemm_efficiency_best", "grouped_gemm": "gemm_efficiency_best",
              "attention_fwd": "attention_efficiency", "attention_bwd": "attention_backward_efficiency",
              "elementwise": "hbm_efficiency", "permute": "hbm_efficiency"}


@dataclass(frozen=True)
class Kernel:
    """One kernel of a layer (GEMM, attention, ...) with its shape, work and the engine's time."""
    name: str
    kind: str  # one of KINDS
    shape: dict
    flops: float
    bytes: float
    ms: float  # the engine's time for one launch
    measured_ms: float | None = None
    launches: float = 1.0  # per layer and micro-batch (attention under context parallelism: one per ring step)
    extra: dict = field(default_factory=dict)

    def as_json(self) -> dict:
        out = {"name": self.name, "kind": self.kind, "shape": self.shape, "flops": self.flops, "bytes": self.bytes,
               "ms": self.ms, "launches": self.launches}
        if self.measured_ms is not None:
            out["measured_ms"] = self.measured_ms
        return out


@dataclass(frozen=True)
class JobKernels:
    """One layer's kernels of the design's job on one of its GPUs, as `designer microbench` lists them."""
    accelerator: str  # catalog name of the GPUs the job runs on
    precision: str
    kernels: list[Kernel]
    ac: AcceleratorConstants


def job_kernels(doc: Document, catalog: Catalog) -> JobKernels:
    """One layer's kernels of the design's job on one of its GPUs, with the engine's times."""
    layer = _layer_on_one_gpu(doc, catalog)
    gemms, quantized = _gemm_kernels(layer)
    kernels = gemms + _attention_kernels(layer) + _elementwise_kernels(layer, quantized)
    return JobKernels(layer.acc.name, layer.m.precision, kernels, layer.ac)


@dataclass(frozen=True)
class _Layer:
    """What the kernels of one layer on one GPU are made from: the job's shape and sharding, the
    accelerator, the engine's op coster, the tokens of this GPU's sequence chunk."""
    m: F.ModelShape
    sh: Sharding
    acc: Accelerator
    ac: AcceleratorConstants
    ops: OpCoster
    tokens: float  # T: tokens of this GPU's sequence chunk
    moe: bool  # the layer is an MoE layer


def _layer_on_one_gpu(doc: Document, catalog: Catalog) -> _Layer:
    """The job resolved on the design's fabric, and the engine's coster of its ops on one GPU."""
    from .evaluate import Engine

    engine = Engine(catalog)
    cal = doc.spec.calibration
    k = engine_constants(cal)
    job = resolve_job(doc, catalog)
    fabric = engine.fabric(doc, k)
    hw = hardware(fabric, job.plan.num_gpus, cal, catalog)
    m, acc, ac = job.shape, hw.acc, hw.ac
    sh = sharding_of(job, hw)
    peak, peak16 = acc.peak_for(m.precision), acc.peak_for("bf16")
    cast_bytes, attn_fp8 = fp8_costs(job, k)
    ops = OpCoster(peak, peak16, acc.hbm_tbps, ac, 1.0, precision_gemm_efficiency(acc, ac, m.precision), cast_bytes,
                   attn_fp8, job_operand_bytes(job), attention_kernel_rate(job, k))
    return _Layer(m, sh, acc, ac, ops, m.micro_batch * m.s / sh.cp, bool(m.experts) and m.moe_layers > 0)


def _gemm_kernels(layer: _Layer) -> tuple[list[Kernel], dict[str, float]]:
    """The layer's GEMMs (forward, dgrad, wgrad each; the MoE layer's router, grouped expert GEMMs and
    token permutation), and the elements Transformer Engine quantizes for them (FP8/FP4 jobs)."""
    m, sh, ops, T, t = layer.m, layer.sh, layer.ops, layer.tokens, layer.sh.tp
    out: list[Kernel] = []
    quantized = {"inputs": 0.0, "grads": 0.0}

    def gemm(name: str, M: float, N: float, K: float, kind: str = "gemm", groups: float = 1.0):
        if name != "router":  # the router stays in BF16
            quantized["inputs"] += M * K * groups
            quantized["grads"] += M * N * groups
        for direction, (a, b, c), out_bytes in (("fwd", (M, N, K), ACT_BYTES), ("dgrad", (M, K, N), ACT_BYTES),
                                                ("wgrad", (K, N, M), ops.wgrad_out_bytes)):
            moved = ((a * c + c * b) * ops.operand_bytes + a * b * out_bytes) * groups
            shape = {"m": round(a), "n": round(b), "k": round(c)}
            if kind == "grouped_gemm":
                shape["groups"] = round(groups)
            out.append(Kernel(f"{name}.{direction}", kind, shape, 2.0 * a * b * c * groups, moved,
                              ops.gemm(a, b, c, groups, out_bytes) * 1e3))

    names = ["qkv", "proj"] if len(m.attn_weights) == 2 else [f"attn{i}" for i in range(len(m.attn_weights))]
    for name, (M, N, K) in zip(names, attention_gemms(m, T, t)):
        gemm(name, M, N, K)
    if layer.moe:
        gemm("router", T, m.experts, m.h)
        local = max(1, m.experts // sh.ep)
        per_expert = T * m.topk * sh.etp * sh.ep / (t * m.experts)
        gemm("experts.fc1", per_expert, m.f_expert * (m.phi - 1) / sh.etp, m.h, "grouped_gemm", local)
        gemm("experts.fc2", per_expert, m.h, m.f_expert / sh.etp, "grouped_gemm", local)
        rows = T * m.topk / t
        permute = 2 * rows * m.h * ACT_BYTES  # gather the routed copies: read and write each
        out.append(Kernel("permute", "permute", {"rows": round(rows), "h": m.h}, 0.0, permute,
                          ops.memory(permute) * 1e3))
        out.append(Kernel("unpermute", "permute", {"rows": round(rows), "h": m.h}, 0.0, permute,
                          ops.memory(permute) * 1e3))
    else:
        gemm("fc1", T, m.f * (m.phi - 1) / t, m.h)
        gemm("fc2", T, m.h, m.f / t)
    return out, quantized


def _attention_kernels(layer: _Layer) -> list[Kernel]:
    """Flash attention forward and backward, each kernel with its launches (one per ring step under
    context parallelism); none without flash attention (its GEMMs and softmax cost elsewhere)."""
    m, sh, ops = layer.m, layer.sh, layer.ops
    if not sh.flash_attention:
        return []
    out: list[Kernel] = []
    for i, (kern, launches) in enumerate(attention_kernels(m, sh, m.micro_batch)):
        shape = {"batch": _whole(kern.batch), "heads": _whole(kern.heads), "s_q": round(kern.s_q),
                 "s_k": round(kern.s_k), "qk_dim": kern.qk_dim, "v_dim": kern.v_dim, "mask": kern.mask, "window": kern.window}
        qkvo = kern.batch * kern.heads * (kern.s_q * (kern.qk_dim + kern.v_dim) +
                                          kern.s_k * (kern.qk_dim + kern.v_dim)) * ACT_BYTES
        for backward, kind, factor in ((False, "attention_fwd", 1.0), (True, "attention_bwd", 2.5)):
            out.append(Kernel(f"attention{i}.{'bwd' if backward else 'fwd'}", kind, shape, kern.flops * factor,
                              qkvo * (2 if backward else 1), ops.attention_kernel_seconds(kern, backward) * 1e3,
                              launches=launches))
    return out


def _elementwise_kernels(layer: _Layer, quantized: dict[str, float]) -> list[Kernel]:
    """The memory-bound passes: norm, residual add, the MLP's activation and, for FP8/FP4 jobs, the
    recipe's quantization of the GEMMs' inputs and output gradients."""
    m, sh, ops, T, t = layer.m, layer.sh, layer.ops, layer.tokens, layer.sh.tp
    X = T * m.h * ACT_BYTES
    X_sp = X / t if sh.sequence_parallel else X
    width = (m.f_shared + m.f_expert * m.topk * sh.etp / t) if layer.moe else m.f
    tokens_sp = T / t if sh.sequence_parallel else T
    out: list[Kernel] = []
    for name, nbytes, shape in (
            ("rmsnorm", 2 * X_sp, {"tokens": round(tokens_sp), "h": m.h}),
            ("residual_add", 3 * X_sp, {"tokens": round(tokens_sp), "h": m.h}),
            ("swiglu" if m.phi == 3 else "gelu", (3 if m.phi == 3 else 2) * T * width * ACT_BYTES / t,
             {"tokens": round(T), "width": round(width / t)})):
        out.append(Kernel(name, "elementwise", shape, 0.0, nbytes, ops.memory(nbytes) * 1e3))
    if ops.fp8_cast_bytes:  # the recipe's quantization passes: forward GEMM inputs, backward output gradients
        for which, elements in quantized.items():
            out.append(Kernel(f"quantize.{which}", "elementwise", {"elements": round(elements)}, 0.0,
                              elements * ops.fp8_cast_bytes, ops.fp8_cast(elements) * 1e3))
    return out


def _whole(x: float) -> float | int:
    return int(x) if float(x).is_integer() else x


def record(jk: JobKernels, measured_ms: list[float | None], device: str, versions: dict) -> dict:
    """The JSON a measurement writes (and `designer microbench --recorded` reads)."""
    kernels = [dataclasses.replace(kern, measured_ms=ms).as_json() for kern, ms in zip(jk.kernels, measured_ms)]
    return {"format": RECORD_FORMAT, "accelerator": jk.accelerator, "device": device, "precision": jk.precision,
            "versions": versions, "kernels": kernels}


def read_record(data, source: str) -> dict:
    """A recorded measurement, checked: each problem names the place in `source`."""
    def bad(where: str, why: str, fix: str | None = None):
        raise DesignerError([Problem(why, where, file=source, fix=fix)])

    if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT:
        bad("format", f"not a designer microbench record (expected format: {RECORD_FORMAT})",
            "give the JSON that `designer microbench FILE --record OUT.json` wrote on a GPU machine")
    if not isinstance(data.get("accelerator"), str):
        bad("accelerator", "missing the accelerator the kernels ran on", "e.g. accelerator: H100-SXM5-80GB")
    kernels = data.get("kernels")
    if not isinstance(kernels, list) or not kernels:
        bad("kernels", "no kernels recorded")
    for i, kern in enumerate(kernels):
        where = f"kernels[{i}]"
        if not isinstance(kern, dict):
            bad(where, "expected an object with name, kind, ms and measured_ms")
        if kern.get("kind") not in KINDS:
            bad(f"{where}.kind", f"unknown kernel kind {kern.get('kind')!r}", "one of " + ", ".join(KINDS))
        for key in ("ms", "measured_ms"):
            value = kern.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                      or not value > 0 or value == float("inf")):
                bad(f"{where}.{key}", f"expected a positive number of milliseconds, got {value!r}")
        if kern.get("ms") is None:
            bad(f"{where}.ms", "missing the engine's time for the kernel")
    return data


def calibration_from(rec: dict, ac: AcceleratorConstants) -> dict:
    """Accelerator constants that make the engine's kernel times match the measured ones: each
    constant scaled by the median of predicted / measured over its kernels (a rate constant: a
    kernel measured slower than predicted lowers it), kept inside its physical range."""
    ratios: dict[str, list[float]] = {}
    for kern in rec["kernels"]:
        if kern.get("measured_ms"):
            ratios.setdefault(CALIBRATED[kern["kind"]], []).append(kern["ms"] / kern["measured_ms"])
    fields = constant_fields(AcceleratorConstants)
    values = {}
    for name, rs in sorted(ratios.items()):
        meta = fields[name].metadata
        value = getattr(ac, name) * statistics.median(rs)
        values[name] = round(min(meta["maximum"], max(meta["minimum"], value)), 4)
    return {"accelerators": {rec["accelerator"]: values}} if values else {}


def merged_calibration(current: dict | None, new: dict) -> dict:
    """The design's calibration with `new`'s accelerator constants laid over it."""
    out = dict(current or {})
    accels = {name: dict(v or {}) for name, v in (out.get("accelerators") or {}).items()}
    for name, values in new.get("accelerators", {}).items():
        accels.setdefault(name, {}).update(values)
    if accels:
        out["accelerators"] = accels
    return out
