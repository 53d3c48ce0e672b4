"""Which job keys are Megatron-LM's spellings of Designer's (megatron_names.py turns them into
Designer's): what loading a design asks of every job, apart from the translation itself, which only
a file written in those spellings needs."""
from __future__ import annotations

# alias -> the Designer key it stands for, per section
WORKLOAD_ALIASES = {"bf16": "precision", "fp16": "precision", "fp8_format": "precision", "fp8": "precision"}
PARALLELISM_ALIASES = {
    "num_layers_per_virtual_pipeline_stage": "virtual_pipeline_model_parallel_size",
    "num_virtual_stages_per_pipeline_rank": "virtual_pipeline_model_parallel_size",
    "use_tp_pp_dp_mapping": "rank_order",
}
ALIASES = {"workload": WORKLOAD_ALIASES, "parallelism": PARALLELISM_ALIASES}


def is_alias(section: str, key: str) -> bool:
    return key in ALIASES.get(section, {})


def needs_translation(section: str, data: dict) -> bool:
    """Whether the section (a job's workload or parallelism) holds a key in Megatron-LM's spelling,
    or a value in its form (moe_layer_freq's layer pattern, window_size as text)."""
    if not isinstance(data, dict):
        return False
    if any(k in ALIASES.get(section, {}) for k in data):
        return True
    return section == "workload" and (is_pattern(data.get("moe_layer_freq"))
                                      or isinstance(data.get("window_size"), str))


def is_pattern(value) -> bool:
    """Whether moe_layer_freq's value is Megatron-LM's layer pattern (a list, or its text)."""
    return isinstance(value, list) or (isinstance(value, str) and value.strip() != "")
