"""The lines `designer export megatron` writes are lines Megatron-LM accepts, and they build the model
that was costed: each export is parsed by a parser made from Megatron-LM's own argument definitions
(names, types, choices, nargs: tests/data/megatron_args/megatron_argument_types.json, read from
megatron/training/arguments.py at the commit it names), then checked against the argument checks
of Megatron's validate_args that a model line must pass, and Megatron's defaults applied to what
the line leaves out must give the costed workload back."""
import argparse
import json
from pathlib import Path

import pytest

from designer.core.export.megatron_args import megatron_line
from designer.core.io import load_document
from designer.core.model.catalog import default_catalog
from designer.core.model.job import resolve_workload
from tests.conftest import EXAMPLES
from tests.test_megatron_args import CASES, case_document

DATA = Path(__file__).parent / "data" / "megatron_args"
TABLE = json.loads((DATA / "megatron_argument_types.json").read_text(encoding="utf-8"))
PRESETS = default_catalog().presets()
TYPES = {"int": int, "float": float, "str": str, "text": str}


def megatron_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pretrain_gpt.py", allow_abbrev=False)  # as Megatron's
    for entry in TABLE["arguments"]:
        dest = entry["names"][0][2:].replace("-", "_")
        if entry["type"] == "flag":
            parser.add_argument(*entry["names"], dest=dest, action="store_true")
            continue
        kind = TYPES[entry["type"]]
        extra = {}
        if entry.get("nargs") is not None:
            extra["nargs"] = entry["nargs"]
        if entry.get("choices"):
            extra["choices"] = [kind(c) for c in entry["choices"]]
        parser.add_argument(*entry["names"], dest=dest, type=kind, **extra)
    return parser


PARSER = megatron_parser()


def parse(words: list[str], what: str) -> argparse.Namespace:
    try:
        return PARSER.parse_args(words)
    except SystemExit:
        pytest.fail(f"{what}: Megatron-LM's parser refuses: {' '.join(words)}")


def check_accepted_and_same_model(words: list[str], workload, what: str) -> None:
    a = parse(words, what)
    # megatron/training/arguments.py validate_args: required model arguments and their checks
    for required in ("num_layers", "hidden_size", "num_attention_heads", "max_position_embeddings"):
        assert getattr(a, required) is not None, f"{what}: --{required.replace('_', '-')} is required"
    assert a.max_position_embeddings >= a.seq_length, what
    assert a.tokenizer_type is not None, f"{what}: build_tokenizer needs --tokenizer-type"
    if a.group_query_attention:
        assert a.num_query_groups is not None, what
    # Megatron's defaults for what the line leaves out, against the costed workload
    w = resolve_workload(workload, PRESETS)
    h, heads = a.hidden_size, a.num_attention_heads
    ffn = a.ffn_hidden_size or (int((4 * h * 2 / 3) / 64) * 64 if a.swiglu else 4 * h)
    built = {
        "num_layers": a.num_layers, "hidden_size": h, "num_attention_heads": heads, "ffn_hidden_size": ffn,
        "num_query_groups": a.num_query_groups if a.group_query_attention else heads,
        "kv_channels": a.kv_channels or h // heads, "seq_length": a.seq_length,
        "swiglu": a.swiglu, "untie_embeddings_and_output_weights": a.untie_embeddings_and_output_weights,
        "normalization": a.normalization or "LayerNorm",
        "position_embedding_type": a.position_embedding_type or "learned_absolute",
        "bias": not a.disable_bias_linear,
    }
    costed = {
        "num_layers": w.num_layers, "hidden_size": w.hidden_size, "num_attention_heads": w.num_attention_heads,
        "ffn_hidden_size": w.ffn_hidden_size, "num_query_groups": w.num_query_groups,
        "kv_channels": w.kv_channels or w.hidden_size // w.num_attention_heads, "seq_length": w.seq_length,
        "swiglu": bool(w.swiglu), "untie_embeddings_and_output_weights": bool(w.untie_embeddings_and_output_weights),
        "normalization": w.normalization or "LayerNorm",
        "position_embedding_type": w.position_embedding_type or "learned_absolute",
        "bias": not w.disable_bias_linear,
    }
    if w.multi_latent_attention:  # MLA has no key/value groups (Megatron refuses GQA beside it)
        built.pop("num_query_groups"), costed.pop("num_query_groups")
    assert built == costed, f"{what}: {set(built.items()) ^ set(costed.items())}"
    if a.tokenizer_type == "NullTokenizer":  # the null tokenizer's vocabulary is --vocab-size
        assert a.vocab_size == w.vocab_size, what
    if w.num_experts:
        # TransformerConfig.moe_router_topk defaults to 2 (megatron/core/transformer/transformer_config.py)
        assert (a.num_experts, a.moe_router_topk or 2) == (w.num_experts, w.moe_router_topk), what
        assert (a.moe_ffn_hidden_size or ffn) == w.moe_ffn_hidden_size, what


def example_jobs():
    for path in sorted(EXAMPLES.glob("*.yaml")):
        doc = load_document(path)
        if doc.spec.jobs:
            for job in doc.spec.jobs:
                yield pytest.param(job.workload, job.parallelism, id=f"{path.stem}-{job.name}")
        elif doc.spec.workload is not None:
            yield pytest.param(doc.spec.workload, doc.spec.parallelism, id=path.stem)


@pytest.mark.parametrize("workload, parallelism", list(example_jobs()))
def test_every_bundled_example_exports_a_line_megatron_accepts_for_the_costed_model(workload, parallelism):
    line = megatron_line(workload, parallelism, PRESETS)
    check_accepted_and_same_model(line.flat(), workload, "example")


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_every_published_case_exports_a_line_megatron_accepts_for_the_costed_model(case):
    doc = case_document(case)
    line = megatron_line(doc.spec.workload, doc.spec.parallelism, PRESETS)
    check_accepted_and_same_model(line.flat(), doc.spec.workload, case["id"])


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_exports_its_architecture_and_tokenizer(preset):
    from designer.core.model.job import Workload

    workload = Workload(preset=preset)
    line = megatron_line(workload, None, PRESETS)
    check_accepted_and_same_model(line.flat(), workload, preset)
    w = resolve_workload(workload, PRESETS)
    words = line.flat()
    assert ("--tokenizer-model" in words) == (w.tokenizer_model is not None)


def test_a_llama_line_states_what_megatrons_gpt_defaults_would_otherwise_build():
    from designer.core.model.job import Workload

    words = megatron_line(Workload(preset="llama3-8b"), None, PRESETS).one_line()
    for expected in ("--position-embedding-type rope", "--normalization RMSNorm", "--disable-bias-linear",
                     "--swiglu", "--untie-embeddings-and-output-weights", "--group-query-attention",
                     "--num-query-groups 8", "--max-position-embeddings 8192",
                     "--tokenizer-type HuggingFaceTokenizer", "--tokenizer-model meta-llama/Llama-3.1-8B"):
        assert expected in words


def test_the_argument_table_is_megatrons_at_the_commit_of_the_flag_list():
    from designer.core.io.importers.megatron_flag_list import MEGATRON_COMMIT, MEGATRON_FLAGS

    assert TABLE["megatron_lm_commit"] == MEGATRON_COMMIT
    assert {n for e in TABLE["arguments"] for n in e["names"]} == MEGATRON_FLAGS


BRIDGE = json.loads((DATA / "bridge_model_fields.json").read_text(encoding="utf-8"))
MODEL_FIELDS = set(BRIDGE["transformer_config"]["fields"]) | set(BRIDGE["gpt_model_provider"]["fields"])
TOKENIZER_FIELDS = set(BRIDGE["tokenizer_config"]["fields"])


def check_bridge_fields(overrides: list[str], what: str) -> None:
    for item in overrides:
        key = item.split("=", 1)[0]
        section, _, name = key.partition(".")
        if section == "model":
            assert name in MODEL_FIELDS, f"{what}: {key} is no field of the recipe's model provider"
        elif section == "tokenizer":
            assert name in TOKENIZER_FIELDS, f"{what}: {key} is no field of the recipe's tokenizer"


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_every_published_case_as_megatron_bridge_overrides_names_the_recipes_fields(case):
    from designer.core.export.megatron_args import bridge_overrides

    doc = case_document(case)
    line = megatron_line(doc.spec.workload, doc.spec.parallelism, PRESETS)
    check_bridge_fields(bridge_overrides(line, doc.spec.parallelism), case["id"])


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_as_megatron_bridge_overrides_names_the_recipes_fields(preset):
    from designer.core.export.megatron_args import bridge_overrides
    from designer.core.model.job import Workload

    line = megatron_line(Workload(preset=preset), None, PRESETS)
    overrides = bridge_overrides(line, None)
    check_bridge_fields(overrides, preset)
    w = resolve_workload(Workload(preset=preset), PRESETS)
    if w.disable_bias_linear:
        assert "model.add_bias_linear=false" in overrides
    if w.tokenizer_type:
        assert f"tokenizer.tokenizer_type={w.tokenizer_type}" in overrides
    else:
        assert f"tokenizer.vocab_size={w.vocab_size}" in overrides
