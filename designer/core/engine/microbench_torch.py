"""Times a job's kernels (microbench.job_kernels) on this machine's CUDA GPU with PyTorch.

Needs the optional extra `gpu` (PyTorch with CUDA); `available()` says whether it can run here.
Each kernel runs on random data (never zeros: the tensor cores draw less power on zeros) after a
warm-up, timed with CUDA events; the median of the repeats is its `measured_ms`. GEMMs run in
BF16 (FP8 jobs through torch._scaled_mm with per-tensor scales where the GPU has FP8), attention
through scaled_dot_product_attention (causal, unmasked; a sliding window as causal over the window's
keys), the elementwise passes as PyTorch's own kernels.
"""
from __future__ import annotations

from .microbench import JobKernels, Kernel

REPEATS = 20
WARMUP = 3


def available() -> str | None:
    """None when PyTorch and a CUDA GPU are here, else why not (for the message)."""
    try:
        import torch  # noqa: F401 - optional extra `gpu`
    except ImportError:
        return "PyTorch is not installed (pip install 'designer[gpu]')"
    if not torch.cuda.is_available():
        return "PyTorch sees no CUDA GPU"
    return None


def device_name() -> str:
    import torch

    return torch.cuda.get_device_name(0)


def versions() -> dict:
    import torch

    return {"torch": torch.__version__, "cuda": torch.version.cuda or "", "cudnn": str(torch.backends.cudnn.version())}


def _timed(fn) -> float:
    import torch

    for _ in range(WARMUP):
        fn()
    times = []
    for _ in range(REPEATS):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def _gemm(kern: Kernel, fp8: bool):
    import torch

    s = kern.shape
    groups = s.get("groups", 1)
    a = torch.randn(groups, s["m"], s["k"], device="cuda", dtype=torch.bfloat16)
    b = torch.randn(groups, s["k"], s["n"], device="cuda", dtype=torch.bfloat16)
    if fp8 and groups == 1 and hasattr(torch, "_scaled_mm") and torch.cuda.get_device_capability() >= (8, 9):
        a8 = a[0].to(torch.float8_e4m3fn)
        b8 = b[0].t().contiguous().to(torch.float8_e4m3fn).t()  # column-major second operand
        one = torch.ones((), device="cuda")
        return lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    if groups == 1:
        return lambda: torch.mm(a[0], b[0])
    return lambda: torch.bmm(a, b)


def _attention(kern: Kernel, backward: bool):
    import torch
    import torch.nn.functional as F

    s = kern.shape
    batch, heads = max(1, round(s["batch"])), max(1, round(s["heads"]))
    s_k = s["s_k"] if s["mask"] != "window" else min(s["s_k"], s["window"] + 1)
    q = torch.randn(batch, heads, s["s_q"], s["qk_dim"], device="cuda", dtype=torch.bfloat16, requires_grad=backward)
    k = torch.randn(batch, heads, s_k, s["qk_dim"], device="cuda", dtype=torch.bfloat16, requires_grad=backward)
    v = torch.randn(batch, heads, s_k, s["v_dim"], device="cuda", dtype=torch.bfloat16, requires_grad=backward)
    causal = s["mask"] != "full" and s["s_q"] == s_k
    if not backward:
        return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    grad = torch.randn_like(out)
    return lambda: torch.autograd.grad(out, (q, k, v), grad, retain_graph=True)


def _elementwise(kern: Kernel):
    import torch

    s = kern.shape
    if kern.name.startswith("quantize."):  # Transformer Engine's cast kernels, not PyTorch's
        raise RuntimeError("no PyTorch kernel for the recipe's quantization passes")
    if kern.kind == "permute":
        x = torch.randn(s["rows"], s["h"], device="cuda", dtype=torch.bfloat16)
        index = torch.randperm(s["rows"], device="cuda")
        return lambda: x.index_select(0, index)
    if kern.name in ("swiglu", "gelu"):
        x = torch.randn(s["tokens"], 2 * s["width"], device="cuda", dtype=torch.bfloat16)
        if kern.name == "swiglu":
            return lambda: torch.nn.functional.silu(x[:, :s["width"]]) * x[:, s["width"]:]
        return lambda: torch.nn.functional.gelu(x[:, :s["width"]])
    x = torch.randn(s["tokens"], s["h"], device="cuda", dtype=torch.bfloat16)
    if kern.name == "residual_add":
        y = torch.randn_like(x)
        return lambda: x + y
    weight = torch.ones(s["h"], device="cuda", dtype=torch.bfloat16)
    return lambda: torch.nn.functional.rms_norm(x, (s["h"],), weight)


def measure(jk: JobKernels) -> list[float | None]:
    """Milliseconds of each kernel of `jk` on GPU 0 (None where PyTorch cannot run its shape)."""
    import torch

    out: list[float | None] = []
    fp8 = jk.precision in ("fp8", "fp4")
    for kern in jk.kernels:
        try:
            if kern.kind in ("gemm", "grouped_gemm"):
                fn = _gemm(kern, fp8 and kern.kind == "gemm")
            elif kern.kind in ("attention_fwd", "attention_bwd"):
                fn = _attention(kern, kern.kind == "attention_bwd")
            else:
                fn = _elementwise(kern)
            out.append(_timed(fn))
        except (RuntimeError, torch.cuda.OutOfMemoryError):  # a shape this GPU or build cannot run
            out.append(None)
        torch.cuda.empty_cache()
    return out
