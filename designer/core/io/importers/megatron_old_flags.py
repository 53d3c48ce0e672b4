"""Megatron-LM's flags of earlier releases, read as today's.

Launch scripts live for years: the SC'21 scripts (Megatron-LM v2.5, 2021) checkpoint activations with
`--activations-checkpoint-method uniform`, the 2019-20 ones with `--checkpoint-activations`, and 2023's
turn FP8 on with `--fp8-hybrid`. Today's arguments.py no longer has some of these and refuses others
(`--checkpoint-activations` exits, `--model-parallel-size` asserts), so a line read by today's names
alone would lose what they did: an SC'21 run costed without its recompute comes out 22 % too fast.

Each entry maps an old flag (with its value, if it takes one) to today's words; the releases are
those whose megatron/arguments.py (megatron/training/arguments.py from 2024) defines the flag.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .launch_script import Word


@dataclass(frozen=True)
class OldFlag:
    """A flag of an older Megatron-LM release and how to write it with today's flags."""
    takes_value: bool
    today: Callable[[str], list[str]]  # the value (or "") -> today's words
    releases: str  # where the flag came from, for the note


def _full_recompute_method(value: str) -> list[str]:
    # the old chunk size defaulted to 1 layer; today's full recompute needs it stated (a later
    # --activations-checkpoint-num-layers in the line replaces it)
    return ["--recompute-granularity", "full", "--recompute-method", value or "uniform", "--recompute-num-layers", "1"]


OLD_FLAGS: dict[str, OldFlag] = {
    # v1.0-v2.4 (2019-21): full activation checkpointing, --checkpoint-num-layers per chunk (default 1)
    "--checkpoint-activations": OldFlag(False, lambda v: _full_recompute_method("uniform"),
                                        "Megatron-LM v1-v2.4 (2019-21)"),
    "--checkpoint-num-layers": OldFlag(True, lambda v: ["--recompute-num-layers", v], "Megatron-LM v1-v2.4"),
    # v2.5-v2.6 (2021-22): the method names the full checkpointing of a layer chunk
    "--activations-checkpoint-method": OldFlag(True, _full_recompute_method, "Megatron-LM v2.5-v2.6 (2021-22)"),
    "--activations-checkpoint-num-layers": OldFlag(True, lambda v: ["--recompute-num-layers", v],
                                                   "Megatron-LM v2.5-v2.6 (2021-22)"),
    "--distribute-checkpointed-activations": OldFlag(False, lambda v: ["--distribute-saved-activations"],
                                                     "Megatron-LM v2.5-v2.6 (2021-22)"),
    # v3.0 (2022): selective recompute; today still read, and turned into the granularity
    "--recompute-activations": OldFlag(False, lambda v: ["--recompute-granularity", "selective"],
                                       "Megatron-LM v3.0+ (2022)"),
    # v1.0 (2019-20): the tensor-parallel size before pipelines existed
    "--model-parallel-size": OldFlag(True, lambda v: ["--tensor-model-parallel-size", v], "Megatron-LM v1 (2019-20)"),
    # 2023 (core 0.2-0.3): FP8 by format switch
    "--fp8-e4m3": OldFlag(False, lambda v: ["--fp8-format", "e4m3"], "Megatron-LM 23.04-23.08"),
    "--fp8-hybrid": OldFlag(False, lambda v: ["--fp8-format", "hybrid"], "Megatron-LM 23.04-23.08"),
    # 2022-23: rotary embeddings and FlashAttention by switch
    "--use-rotary-position-embeddings": OldFlag(False, lambda v: ["--position-embedding-type", "rope"],
                                                "Megatron-LM 2022-23"),
    "--use-flash-attn": OldFlag(False, lambda v: ["--attention-backend", "flash"], "Megatron-LM 2023"),
}


# Old flags that never changed the step Designer costs (a DDP implementation, a pipeline
# communication detail): listed as not design inputs, like today's --lr
OLD_NOT_INPUTS = frozenset({"--DDP-impl", "--no-scatter-gather-tensors-in-pipeline",
                            "--no-async-tensor-model-parallel-allreduce", "--use-legacy-models",
                            "--no-bias-dropout-fusion-in-fp32", "--no-contiguous-buffers-in-local-ddp"})


def modernize(words: list[Word], where: str) -> tuple[list[Word], list[str]]:
    """The words with each old flag replaced by today's, and a note per replacement."""
    out: list[Word] = []
    notes: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        name, eq, inline = word.text.partition("=")
        old = OLD_FLAGS.get(name)
        if old is None:
            out.append(word)
            i += 1
            continue
        value = ""
        if old.takes_value:
            if eq:
                value = inline
            elif i + 1 < len(words) and not words[i + 1].text.startswith("--"):
                value = words[i + 1].text
                i += 1
        i += 1
        today = old.today(value)
        out += [Word(t, word.line) for t in today]
        said = f"{name} {value}".strip()
        notes.append(f"{where}:{word.line}: {said} ({old.releases}) read as today's {' '.join(today)}")
    return out, notes
