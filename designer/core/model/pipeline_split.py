"""Megatron-LM's split of a model's layers over pipeline stages.

Not wired into plan.py or the engine yet: one pure function that says, for each
(stage, chunk), how many decoder layers it holds and whether it holds the embedding
and the loss, or why Megatron-LM would refuse the split. Virtual stage index is
chunk x PP + stage, as in Megatron's pipeline_parallel_layer_layout.py.
"""

from __future__ import annotations

import re


class VirtualStage:
    """What one pipeline chunk holds: decoder and MTP layers, and the embedding or loss."""
    decoder_layers: int
    mtp_layers: int
    embedding: bool
    loss: bool

    __slots__ = ("decoder_layers", "mtp_layers", "embedding", "loss")

    def __init__(self, decoder_layers: int, mtp_layers: int = 0, embedding: bool = False, loss: bool = False) -> None:
        self.decoder_layers = decoder_layers
        self.mtp_layers = mtp_layers
        self.embedding = embedding
        self.loss = loss


class SplitError(ValueError):
    """Megatron would refuse this split; .key names the Parallelism key to change."""

    def __init__(self, key: str, reason: str, fix: str):
        super().__init__(f"{key}: {reason}; {fix}")
        self.key, self.reason, self.fix = key, reason, fix


def expand_layout(layout: str) -> list[str]:
    """'Et*3|(tt|)*2,m|L' -> ['Ettt', 'tt', 'tt', 'm', 'L'] (',' and spaces are separators only)."""
    text = layout.replace(" ", "").replace(",", "")
    group = re.compile(r"\(([^()]*)\)\*(\d+)")
    while "(" in text:
        new = group.sub(lambda m: m.group(1) * int(m.group(2)), text)
        if new == text:
            raise SplitError("pipeline_model_parallel_layout", f"unbalanced parentheses in {layout!r}",
                             "write a repeated group as (tt|)*N")
        text = new
    text = re.sub(r"([EtmL])\*(\d+)", lambda m: m.group(1) * int(m.group(2)), text)
    bad = set(text) - set("EtmL|")
    if bad:
        raise SplitError("pipeline_model_parallel_layout", f"unknown symbols {''.join(sorted(bad))} in {layout!r}",
                         "use E (embedding), t (decoder layer), m (MTP layer), L (loss) and | between stages")
    return text.split("|")


def split_layers(num_layers: int, pp: int, vp: int = 1, *, account_for_embedding: bool = False,
                 account_for_loss: bool = False, first_layers: int | None = None,
                 last_layers: int | None = None, layout: str | None = None) -> list[VirtualStage]:
    """The PP x VP virtual stages in Megatron's order, or SplitError with Megatron's reason."""
    n_virtual = pp * vp
    if layout:
        # Megatron builds from the layout first (get_num_layers_to_build); first/last given beside it
        # must say the same (recipes print both), account_for_* has no meaning beside it.
        if account_for_embedding or account_for_loss:
            raise SplitError("pipeline_model_parallel_layout", "the layout places the embedding and loss itself; "
                             "account_for_*_in_pipeline_split cannot be combined with it", "give only the layout")
        stages = expand_layout(layout)
        if len(stages) != n_virtual:
            raise SplitError("pipeline_model_parallel_layout", f"pipeline_model_parallel_layout must be divisible "
                             f"by pipeline_model_parallel_size (len(layout)={len(stages)}, PP {pp}, VP {vp})",
                             f"write {n_virtual} stages separated by |, or set virtual_pipeline_model_parallel_size: "
                             f"{max(1, len(stages) // pp)} with pipeline_schedule: interleaved")
        out = [VirtualStage(s.count("t"), s.count("m"), "E" in s, "L" in s) for s in stages]
        flat = "".join(stages)
        if not flat.startswith("E") or flat.count("E") != 1:
            raise SplitError("pipeline_model_parallel_layout", "The first layer must be embedding, specified "
                             "exactly once", "start the layout with E")
        if not flat.endswith("L") or flat.count("L") != 1:
            raise SplitError("pipeline_model_parallel_layout", "The last layer must be loss, specified exactly "
                             "once", "end the layout with L")
        if flat.count("t") != num_layers:
            raise SplitError("pipeline_model_parallel_layout", f"Number of decoder layers {flat.count('t')} must "
                             f"match num_layers {num_layers}", f"write {num_layers} t")
        if "m" in flat and "t" in flat[flat.index("m"):]:
            raise SplitError("pipeline_model_parallel_layout", "decoder layers must be placed before MTP layers",
                             "move every m after the last t")
        per_stage = [sum(out[c * pp + st].decoder_layers for c in range(vp)) for st in range(pp)]
        for key, n, st in (("decoder_first_pipeline_num_layers", first_layers, 0),
                           ("decoder_last_pipeline_num_layers", last_layers, pp - 1)):
            if n is not None and n != per_stage[st]:
                raise SplitError(key, f"{n} disagrees with the layout's {per_stage[st]} decoder layers on that "
                                 "stage", f"set {key}: {per_stage[st]}, or remove it")
        return out
    if first_layers is not None or last_layers is not None:
        if account_for_embedding or account_for_loss:
            raise SplitError("decoder_first_pipeline_num_layers", "Does not support standalone embedding stage "
                             "and standalone loss stage with uneven pp", "remove account_for_*_in_pipeline_split")
        rest, rest_stages = num_layers, pp
        for key, n in (("decoder_first_pipeline_num_layers", first_layers),
                       ("decoder_last_pipeline_num_layers", last_layers)):
            if n is not None:
                if n % vp:
                    raise SplitError(key, f"{n} layers are not divisible by VP {vp}", f"use a multiple of {vp}")
                rest, rest_stages = rest - n, rest_stages - 1
        if rest < 0 or (rest_stages and rest % (rest_stages * vp)) or (not rest_stages and rest):
            raise SplitError("decoder_first_pipeline_num_layers", f"the {max(rest, 0)} remaining layers do not "
                             f"divide evenly over the other {rest_stages} stages x VP {vp}",
                             "choose first/last so the rest divides")
        mid = rest // (rest_stages * vp) if rest_stages else 0
        per_stage = [mid * vp] * pp
        if first_layers is not None:
            per_stage[0] = first_layers
        if last_layers is not None:
            per_stage[-1] = last_layers
        out = [VirtualStage(per_stage[s] // vp) for c in range(vp) for s in range(pp)]
    else:
        total = num_layers + int(account_for_embedding) + int(account_for_loss)
        if total % n_virtual:
            key = "virtual_pipeline_model_parallel_size" if vp > 1 else "pipeline_model_parallel_size"
            extra = " (+ embedding/loss)" if total != num_layers else ""
            raise SplitError(key, f"PP {pp} x VP {vp} = {n_virtual} does not divide the {total} layers{extra}",
                             f"choose PP x VP dividing {total}, or set account_for_embedding/loss_in_pipeline_split")
        each = total // n_virtual
        out = [VirtualStage(each) for _ in range(n_virtual)]
        if account_for_embedding:
            out[0] = VirtualStage(each - 1)
        if account_for_loss:
            out[-1] = VirtualStage(out[-1].decoder_layers - 1)
    out[0] = VirtualStage(out[0].decoder_layers, out[0].mtp_layers, True, out[0].loss)
    out[-1] = VirtualStage(out[-1].decoder_layers, out[-1].mtp_layers, out[-1].embedding, True)
    return out


def split_options(par) -> dict:
    """The keyword arguments of split_layers from a Parallelism; {} for Megatron's even split."""
    opts = dict(account_for_embedding=bool(par.account_for_embedding_in_pipeline_split),
                account_for_loss=bool(par.account_for_loss_in_pipeline_split),
                first_layers=par.decoder_first_pipeline_num_layers,
                last_layers=par.decoder_last_pipeline_num_layers,
                layout=par.pipeline_model_parallel_layout or None)
    return opts if any(v not in (None, False) for v in opts.values()) else {}
