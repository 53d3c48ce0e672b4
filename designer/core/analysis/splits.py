"""The pipeline splits a plan search offers for one PP x VP: Megatron's even split where the
layers divide, and a few of the uneven splits Megatron accepts.

A split is a small frozen record of Megatron's own keys, so that a plan's text, its `--set`
arguments and the engine all read the same thing. The choice is bounded: at most
MAX_UNEVEN splits per (PP, VP), each one of these shapes:

  * account_for_embedding / account_for_loss (the embedding or the loss counted as a layer),
    when PP x VP divides the layers plus one or two;
  * the middle stages equal and the first and/or the last stage lighter
    (decoder_first/last_pipeline_num_layers): Meta's Llama 3.1 405B split (126 layers on
    PP 16: 7 | 8 x 14 | 7) and the "last stage lighter" split (8 x 15 | 6).

The first/last shapes only take an end at most MAX_LIGHTER_BY layer-chunks lighter than the
middle stages: moving more than that off an end moves the bottleneck onto the middle. When
the layers divide evenly, the uneven shapes are only offered when the loss stage is the
bottleneck: its output layer costs at least half a layer-chunk (LOSS_STAGE_HEAVY).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..engine import flops as F
from ..model.pipeline_split import SplitError, split_layers

MAX_UNEVEN = 5  # uneven splits per (PP, VP), at most (two account_for_*, three first/last)
MAX_LIGHTER_BY = 2  # an end is at most this many layer-chunks (x VP layers) lighter than the middle
LOSS_STAGE_HEAVY = 0.5  # output layer + loss, in decoder-layer chunks, above which an even split is unbalanced


@dataclass(frozen=True)
class Split:
    """Megatron's split keys; all unset is the even split."""

    first_layers: int | None = None  # decoder_first_pipeline_num_layers
    last_layers: int | None = None  # decoder_last_pipeline_num_layers
    account_embedding: bool = False  # account_for_embedding_in_pipeline_split
    account_loss: bool = False  # account_for_loss_in_pipeline_split
    layout: str | None = None  # pipeline_model_parallel_layout (only a file's own plan has one)

    @property
    def even(self) -> bool:
        return self == EVEN

    def kwargs(self) -> dict:
        """The keywords of pipeline_split.split_layers ({} for the even split)."""
        if self.even:
            return {}
        return dict(account_for_embedding=self.account_embedding, account_for_loss=self.account_loss,
                    first_layers=self.first_layers, last_layers=self.last_layers, layout=self.layout)

    def parallelism_keys(self) -> dict:
        """The Parallelism fields this split sets (every one of them, so a plan never inherits the
        file's own split)."""
        return {"decoder_first_pipeline_num_layers": self.first_layers,
                "decoder_last_pipeline_num_layers": self.last_layers,
                "account_for_embedding_in_pipeline_split": self.account_embedding,
                "account_for_loss_in_pipeline_split": self.account_loss,
                "pipeline_model_parallel_layout": self.layout}

    def megatron_keys(self) -> dict:
        """Only the keys that are set: what a plan's text and JSON show."""
        return {k: v for k, v in self.parallelism_keys().items() if v not in (None, False)}

    def label(self) -> str:
        return ", ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}"
                         for k, v in self.megatron_keys().items())

    @classmethod
    def of(cls, par) -> "Split":
        return cls(par.decoder_first_pipeline_num_layers, par.decoder_last_pipeline_num_layers,
                   bool(par.account_for_embedding_in_pipeline_split), bool(par.account_for_loss_in_pipeline_split),
                   par.pipeline_model_parallel_layout or None)


EVEN = Split()


@lru_cache(maxsize=4096)
def stage_layer_counts(layers: int, pp: int, vp: int, split: Split) -> tuple[int, ...] | None:
    """Decoder layers of each pipeline stage (all its chunks), or None when Megatron refuses."""
    if split.even:
        return (layers // pp,) * pp if layers % (pp * vp) == 0 else None
    try:
        virtual = split_layers(layers, pp, vp, **split.kwargs())
    except SplitError:
        return None
    return tuple(sum(virtual[c * pp + s].decoder_layers for c in range(vp)) for s in range(pp))


def loss_stage_extra_chunks(shape: F.ModelShape) -> float:
    """The output layer and loss, in decoder layers (forward FLOPs per token)."""
    layer = F.attention_flops_per_token(shape) + F.mlp_flops_per_token(shape, shape.dense_layers == 0)
    return F.logits_flops_per_token(shape) / layer if layer > 0 else 0.0


def splits_for(layers: int, pp: int, vp: int, loss_layers: float = 0.0) -> list[Split]:
    """The splits offered for PP x VP: the even one where it exists, then the uneven ones (bounded
    by MAX_UNEVEN). `loss_layers`: the loss stage's extra work in decoder layers
    (loss_stage_extra_chunks); below LOSS_STAGE_HEAVY x VP an even split is offered alone."""
    if pp <= 1:
        return [EVEN]
    n = pp * vp
    divides = layers % n == 0
    out = [EVEN] if divides else []
    if divides and loss_layers < LOSS_STAGE_HEAVY * vp:
        return out
    uneven: list[Split] = []
    if not divides:  # with the layers dividing, PP x VP cannot divide layers + 1 or + 2 (n > 2)
        if (layers + 2) % n == 0:
            uneven.append(Split(account_embedding=True, account_loss=True))
        if (layers + 1) % n == 0:
            uneven += [Split(account_loss=True), Split(account_embedding=True)]
    # Middle stages of `mid` layers (a multiple of VP): the smallest that holds the layers, and
    # one chunk more when the layers divide (the ends then give their share to the middle).
    mid = -(-layers // n) * vp
    if divides:
        mid += vp
    lightest = max(vp, mid - MAX_LIGHTER_BY * vp)
    last_only = layers - (pp - 1) * mid
    if lightest <= last_only < mid:
        uneven.append(Split(last_layers=last_only))
    rest = layers - (pp - 2) * mid if pp > 2 else 0
    if pp > 2:
        last = (rest // 2) // vp * vp  # the loss stage the lighter one of the two
        first = rest - last
        if lightest <= last <= first <= mid and (first, last) != (mid, mid) and first % vp == 0:
            uneven.append(Split(first_layers=first, last_layers=last))
    first_only = layers - (pp - 1) * mid
    if lightest <= first_only < mid:
        uneven.append(Split(first_layers=first_only))
    seen: set[tuple[int, ...]] = set()
    for s in uneven:  # Megatron must accept it, and two splits with the same stages are one
        counts = stage_layer_counts(layers, pp, vp, s)
        if counts is None or (counts in seen and not (s.account_embedding or s.account_loss)):
            continue
        seen.add(counts)
        out.append(s)
    return out[:MAX_UNEVEN + (1 if divides else 0)]
