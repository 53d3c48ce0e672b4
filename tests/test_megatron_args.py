"""`designer export megatron` / `designer import megatron`: Megatron-LM's own
flags out, launch lines and scripts in, and export -> import giving the same job on every
published case and every bundled example."""
import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from designer.core.export.megatron_args import (PARALLELISM_SPECIAL, WORKLOAD_SPECIAL, flag, megatron_line,
                                                same_rank_order)
from designer.core.io import load_document
from designer.core.io.files import empty_document, save_document
from designer.core.io.importers.megatron_args import MEGATRON_MODEL_DEFAULTS, read_megatron
from designer.core.io.importers.megatron_flag_list import MEGATRON_FLAGS
from designer.core.io.overrides import apply_overrides
from designer.core.model.catalog import default_catalog
from designer.core.model.job import Parallelism, Workload, resolve_workload
from tests.conftest import EXAMPLES, run_cli
from tests.validation.cases import CASES_FILE, MODERN_CASES_FILE, load_cases, set_args

DATA = Path(__file__).parent / "data" / "megatron_args"
PRESETS = default_catalog().presets()
CASES = [c for f in (CASES_FILE, MODERN_CASES_FILE) for c in load_cases(f)["training"]]


def case_document(case):
    doc = empty_document(case["id"])
    a = set_args(case)
    apply_overrides(doc, a[1::2])  # the case's --set values, as the validation runs them
    return doc


def case_file(case, tmp_path) -> Path:
    path = tmp_path / f"{case['id']}.yaml"
    save_document(case_document(case), path)
    return path


# ---- the flags are Megatron-LM's ---------------------------------------------------------------

def test_every_job_key_named_as_a_flag_is_a_megatron_lm_flag():
    """A key the exporter writes under its own name must be one of Megatron-LM's flags (the list is
    read from its arguments.py); a key that is not belongs in the *_SPECIAL lists."""
    for cls, special in ((Workload, WORKLOAD_SPECIAL), (Parallelism, PARALLELISM_SPECIAL)):
        for f in dataclasses.fields(cls):
            if f.name not in special:
                assert flag(f.name) in MEGATRON_FLAGS, f.name


def test_every_flag_written_for_the_published_cases_is_megatrons():
    for case in CASES:
        doc = case_document(case)
        line = megatron_line(doc.spec.workload, doc.spec.parallelism, PRESETS)
        flags = [group[0] for group in line.args]
        assert flags and all(f in MEGATRON_FLAGS for f in flags), (case["id"], set(flags) - MEGATRON_FLAGS)
        assert len(flags) == len(set(flags)), case["id"]  # each flag once


def test_export_writes_megatrons_forms_of_designers_own_keys(tmp_path):
    path = tmp_path / "c.yaml"
    shutil.copy(EXAMPLES / "h100-64gpu-infiniband.yaml", path)
    doc = load_document(path)
    doc.spec.workload = dataclasses.replace(doc.spec.workload, precision="fp8")
    doc.spec.parallelism = dataclasses.replace(doc.spec.parallelism, pipeline_model_parallel_size=2,
                                               virtual_pipeline_model_parallel_size=4,
                                               pipeline_schedule="interleaved", recompute_granularity="full",
                                               use_distributed_optimizer=False, zero_stage=3,
                                               rank_order="tp-cp-ep-pp-dp")
    save_document(doc, path)
    code, out, err = run_cli("export", "megatron", path, "--one-line")
    assert code == 0, err
    assert "--bf16 --fp8-format hybrid" in out  # precision: fp8 (hybrid when the file names no format)
    assert "--num-layers-per-virtual-pipeline-stage 4" in out  # 32 layers / PP 2 / 4 virtual stages
    assert "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1" in out
    assert "--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params" in out  # zero_stage 3
    assert "--use-tp-pp-dp-mapping" in out and "--pipeline-schedule" not in out and "--zero-stage" not in out
    code, script, _ = run_cli("export", "megatron", path)
    assert script.count(" \\\n") == out.count(" --")  # one flag a line, continued


def test_export_names_what_no_flag_states(tmp_path):
    path = tmp_path / "c.yaml"
    shutil.copy(EXAMPLES / "h100-64gpu-infiniband.yaml", path)
    doc = load_document(path)
    doc.spec.parallelism = dataclasses.replace(doc.spec.parallelism, pipeline_model_parallel_size=2,
                                               pipeline_schedule="zb-h1", data_parallel_size=16)
    save_document(doc, path)
    code, out, err = run_cli("export", "megatron", path)
    assert code == 0
    assert "not in the line: parallelism.pipeline_schedule: zb-h1" in err
    assert "not in the line: parallelism.data_parallel_size" in err
    assert "zb-h1" not in out


def test_export_without_workload_is_bad_input(tmp_path):
    path = tmp_path / "empty.yaml"
    save_document(empty_document("empty"), path)
    code, out, err = run_cli("export", "megatron", path)
    assert code == 65 and out == "" and "no workload" in err and "preset" in err


def test_nemo_form_is_megatron_bridge_overrides(tmp_path):
    case = next(c for c in CASES if c["id"] == "MB2606-GB300-DSV3-MXFP8-256")
    code, out, err = run_cli("export", "megatron", case_file(case, tmp_path), "--nemo", "--one-line")
    assert code == 0, err
    items = out.split()
    sections = ("model", "train", "dataset", "ddp", "optimizer", "mixed_precision", "comm_overlap", "tokenizer")
    assert all("=" in i and i.split(".")[0] in sections for i in items), items
    assert "model.tensor_model_parallel_size=1" in items and "model.expert_model_parallel_size=32" in items
    assert "model.num_moe_experts=256" in items  # TransformerConfig's name of --num-experts
    assert "mixed_precision.fp8=e4m3" in items and "mixed_precision.fp8_recipe=mxfp8" in items
    assert "train.global_batch_size=" + str(case["workload"]["global_batch_size"]) in items
    assert "ddp.use_distributed_optimizer=true" in items
    freq = next(i for i in items if i.startswith("model.moe_layer_freq="))
    assert freq == "model.moe_layer_freq=[" + ",".join(["0"] * 3 + ["1"] * 58) + "]"  # a list, not Python text


# ---- round trip ---------------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_export_then_import_into_the_file_is_the_identity_on_every_published_case(case, tmp_path):
    path = case_file(case, tmp_path)
    before = path.read_text()
    code, line, err = run_cli("export", "megatron", path, "-o", tmp_path / "launch.sh")
    assert code == 0, err
    code, _, err = run_cli("import", "megatron", tmp_path / "launch.sh", "--into", path)
    assert code == 0, err
    assert "not a Megatron-LM argument" not in err and "not assigned" not in err
    assert path.read_text() == before, err


def same_job(a_w, a_p, b_w, b_p, left_out) -> list:
    """Differences between two jobs as Designer costs them: the resolved model, and every plan key
    but those the line could not state (left_out)."""
    ra, rb = resolve_workload(a_w, PRESETS), resolve_workload(b_w, PRESETS)
    # a key left out means Megatron's default: a preset that states the default is the same model
    ra, rb = (dataclasses.replace(w, **{k: v for k, v in MEGATRON_MODEL_DEFAULTS.items() if getattr(w, k) is None})
              for w in (ra, rb))
    diffs = [f.name for f in dataclasses.fields(Workload)
             if f.name != "preset" and getattr(ra, f.name) != getattr(rb, f.name)]
    for f in dataclasses.fields(Parallelism):
        x, y = getattr(a_p, f.name), getattr(b_p, f.name)
        if "parallelism." + f.name in left_out or x == y:
            continue
        if f.name == "rank_order" and same_rank_order(x, y, a_p.expert_model_parallel_size):
            continue
        if f.name == "fp8_format" and (x or "hybrid") == (y or "hybrid"):
            continue  # Megatron needs a format; Designer writes hybrid for "not named"
        diffs.append(f.name)
    return diffs


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_export_then_import_into_a_design_without_a_job_gives_the_same_job(case):
    doc = case_document(case)
    line = megatron_line(doc.spec.workload, doc.spec.parallelism, PRESETS)
    got = read_megatron(line.script(), "launch.sh", None, None, PRESETS)
    assert not got.unknown and got.full
    assert same_job(doc.spec.workload, doc.spec.parallelism, got.workload, got.parallelism, line.left_out) == []


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.stem)
def test_round_trip_on_the_bundled_examples(example, tmp_path):
    path = tmp_path / example.name
    shutil.copy(example, path)
    code, line, err = run_cli("export", "megatron", path, "--one-line")
    assert code == 0, err
    code, _, err = run_cli("import", "megatron", line.strip(), "--into", path)
    assert code == 0, err
    assert path.read_bytes() == example.read_bytes()


# ---- reading real launch scripts ----------------------------------------------------------------

def fresh_design(tmp_path, gpus: int = 64) -> Path:
    """The 64-GPU example, or a fat-tree of `gpus` H100s for a script's plan that needs more or fewer:
    an import writes only a design whose plan the design can run."""
    path = tmp_path / "c.yaml"
    if gpus == 64:
        shutil.copy(EXAMPLES / "h100-64gpu-infiniband.yaml", path)
    else:
        from designer.core.generate import generate_fat_tree
        from designer.core.io import save_document

        save_document(generate_fat_tree(nodes=gpus // 8, gpu="H100", name="sized"), path)
    return path


def test_megatrons_gpt3_175b_example_script(tmp_path):
    small = fresh_design(tmp_path)
    before = small.read_bytes()
    code, _, err = run_cli("import", "megatron", DATA / "train_gpt3_175b_distributed.sh", "--into", small)
    assert code == 65 and small.read_bytes() == before, err  # TP 8 x PP 16 cannot run on 64 GPUs: not written
    assert "TP x PP x CP = 8 x 16 x 1 = 128 does not divide the 64 GPUs" in err
    path = fresh_design(tmp_path, gpus=128)
    code, _, err = run_cli("import", "megatron", DATA / "train_gpt3_175b_distributed.sh", "--into", path)
    assert code == 0, err
    doc = load_document(path)
    w, p = resolve_workload(doc.spec.workload, PRESETS), doc.spec.parallelism
    assert (w.num_layers, w.hidden_size, w.num_attention_heads, w.seq_length) == (96, 12288, 96, 2048)
    assert (w.micro_batch_size, w.global_batch_size, w.precision) == (1, 1536, "fp16")
    assert (p.tensor_model_parallel_size, p.pipeline_model_parallel_size) == (8, 16)  # from the bash arrays
    assert not p.sequence_parallel and not p.use_distributed_optimizer  # not in the script: Megatron's default
    ignored = next(line for line in err.splitlines() if line.startswith("not a design input"))
    assert all(f in ignored.split() for f in ("--save", "--load", "--data-path", "--lr", "--train-iters"))
    # the script takes it from GPT-2 BPE files; its sizes are GPT-3 175B's: that preset, with its vocabulary
    assert "vocab_size 51200 of gpt3-175b" in err and doc.spec.workload.preset == "gpt3-175b"


def test_megatrons_llama3_8b_fp8_example_script(tmp_path):
    path = fresh_design(tmp_path)
    code, _, err = run_cli("import", "megatron", DATA / "train_llama3_8b_h100_fp8.sh", "--into", path)
    assert code == 0, err
    doc = load_document(path)
    w, p = resolve_workload(doc.spec.workload, PRESETS), doc.spec.parallelism
    # "--fp8-format hybrid" is one quoted element of DTYPE_ARGS+=( ... ), split by the unquoted ${...[@]}
    assert w.precision == "fp8" and p.fp8_format is None and p.fp8_param_gather  # hybrid: the file's default
    assert (w.num_query_groups, w.kv_channels, w.vocab_size, w.swiglu) == (8, 128, 128256, True)
    assert p.sequence_parallel and p.use_distributed_optimizer and p.overlap_grad_reduce
    assert p.attention_backend == "flash" and "--attention-backend fused is costed as flash" in err
    assert doc.spec.workload.preset == "llama3-8b"  # the same model as the file's preset: kept


def test_megatron_fsdp_example_script(tmp_path):
    path = fresh_design(tmp_path)
    code, _, err = run_cli("import", "megatron", DATA / "train_llama3_8b_fsdp_h100_fp8.sh", "--into", path)
    assert code == 0, err
    p = load_document(path).spec.parallelism
    assert p.use_megatron_fsdp and p.zero_stage == 3 and not p.use_distributed_optimizer
    assert "warning" not in err  # no "ZeRO stage and the distributed optimizer both" from Megatron's own line


def test_variables_resolve_and_unassigned_ones_are_named(tmp_path):
    path = fresh_design(tmp_path)
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/bash\nTP=4\nPP=${PP:-2}\nGPT_ARGS=\"--num-layers 32 --hidden-size 4096\"\n"
                      "torchrun --nproc_per_node 8 pretrain_gpt.py \\\n"
                      "    $GPT_ARGS --num-attention-heads 32 \\\n"
                      "    --tensor-model-parallel-size $TP --pipeline-model-parallel-size $PP \\\n"
                      "    --context-parallel-size $CP \\\n"
                      "    --seq-length 4096 --micro-batch-size 1 --global-batch-size 64 --bf16 # end\n")
    code, _, err = run_cli("import", "megatron", script, "--into", path)
    assert code == 0, err
    p = load_document(path).spec.parallelism
    assert (p.tensor_model_parallel_size, p.pipeline_model_parallel_size) == (4, 2)
    assert f"{script}:8: --context-parallel-size $CP: $CP is not assigned in the script" in err
    assert p.context_parallel_size == 1  # the file's value stays


def test_a_fragment_changes_only_what_it_gives(tmp_path):
    path = fresh_design(tmp_path)
    before = load_document(path)
    code, _, err = run_cli("import", "megatron", "--tensor-model-parallel-size 4 --num-virtual-stages-per-pipeline-"
                           "rank 2 --pipeline-model-parallel-size 2", "--into", path)
    assert code == 0, err
    after = load_document(path)
    assert after.spec.workload == before.spec.workload
    p = after.spec.parallelism
    assert (p.tensor_model_parallel_size, p.pipeline_model_parallel_size) == (4, 2)
    assert (p.virtual_pipeline_model_parallel_size, p.pipeline_schedule) == (2, "interleaved")
    assert p.sequence_parallel == before.spec.parallelism.sequence_parallel  # not given: kept


def test_unknown_arguments_are_named_with_their_line(tmp_path):
    path = fresh_design(tmp_path)
    script = tmp_path / "run.sh"
    script.write_text("python pretrain_gpt.py \\\n  --tensor-model-paralel-size 8 \\\n  --save /ckpt --bf16\n")
    code, _, err = run_cli("import", "megatron", script, "--into", path)
    assert code == 0, err
    assert f"{script}:2: --tensor-model-paralel-size: not a Megatron-LM argument Designer knows" in err
    assert "not a design input (ignored): --save" in err


@pytest.mark.parametrize("text, where, words", [
    ("TP=eight\npython pretrain_gpt.py \\\n --tensor-model-parallel-size $TP --bf16\n", ":3", "expected a whole number"),
    ("python pretrain_gpt.py --num-layers 32 --hidden-size 4096 \\\n --num-attention-heads 32 --seq-length 8\n",
     ":1", "fp32"),
    ("python pretrain_gpt.py --sequence-parallel yes\n", ":1", "takes no value"),
    ("python pretrain_gpt.py --recompute-granularity some\n", ":1", "full or selective"),
    ("echo hello\n", ":1", "found no Megatron-LM arguments"),
])
def test_bad_input_is_exit_65_with_file_line_and_the_target_untouched(tmp_path, text, where, words):
    path = fresh_design(tmp_path)
    before = path.read_bytes()
    script = tmp_path / "run.sh"
    script.write_text(text)
    code, _, err = run_cli("import", "megatron", script, "--into", path)
    assert code == 65, err
    assert f"{script}{where}" in err and words in err and "Traceback" not in err
    assert path.read_bytes() == before


def test_bad_value_in_an_argument_string(tmp_path):
    path = fresh_design(tmp_path)
    code, _, err = run_cli("import", "megatron", "--tensor-model-parallel-size abc --bf16", "--into", path)
    assert code == 65 and "--tensor-model-parallel-size 'abc': expected a whole number" in err


def test_unreadable_inputs(tmp_path):
    path = fresh_design(tmp_path)
    code, _, err = run_cli("import", "megatron", tmp_path / "missing.sh", "--into", path)
    assert code == 66 and "missing.sh" in err
    binary = tmp_path / "bin.sh"
    binary.write_bytes(b"\x00\x01\x02")
    code, _, err = run_cli("import", "megatron", binary, "--into", path)
    assert code == 65 and "bin.sh:1" in err


# ---- search offers the line for each plan ---------------------------------------------------------

@pytest.mark.slow
def test_search_json_has_each_plans_megatron_args(tmp_path):
    path = tmp_path / "one-server.yaml"  # 8 GPUs: a search of seconds
    code, _, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", "1", "--gpu", "H100")
    assert code == 0, err
    job = ["--set", "workload.preset=llama3-8b", "--set", "workload.global_batch_size=64",
           "--set", "parallelism.recompute_granularity=selective"]
    code, out, err = run_cli("search", path, "--top", "2", "--workers", "1", "--json", *job)
    assert code == 0, err
    result = json.loads(out)
    for row in result["top"] + [result["current"]]:
        args = row["megatron_args"]
        assert args.startswith("--num-layers 32 ") and "--bf16" in args
        tp = next(s for s in row["set"] if s.startswith("parallelism.tensor_model_parallel_size="))
        size = tp.split("=")[1]
        assert (f"--tensor-model-parallel-size {size}" in args) == (size != "1")
    code, out, err = run_cli("search", path, "--top", "1", "--workers", "1", "--megatron", *job)
    assert code == 0 and "megatron: --num-layers 32" in out


def test_an_sc21_script_keeps_its_recompute_under_the_2021_flag_name(tmp_path):
    """Megatron-LM v2.5's --activations-checkpoint-method uniform is full recompute: read by today's
    names alone it was ignored, and the run was costed without its recompute."""
    path = fresh_design(tmp_path, gpus=128)  # TP 8 x PP 16
    code, _, err = run_cli("import", "megatron", DATA / "pretrain_gpt3_175B_2021.sh", "--into", path)
    assert code == 0, err
    doc = load_document(path)
    p = doc.spec.parallelism
    assert p.recompute_granularity == "full"
    assert "--activations-checkpoint-method uniform (Megatron-LM v2.5-v2.6 (2021-22)) read as today's " \
           "--recompute-granularity full" in err
    assert "not a Megatron-LM argument" not in err
    # GPT-3 175B's sizes: the preset, with its vocabulary (not the file's Llama 3 vocabulary)
    assert doc.spec.workload.preset == "gpt3-175b" and "vocab_size 51200 of gpt3-175b" in err


@pytest.mark.parametrize("old, today", [
    ("--checkpoint-activations --checkpoint-num-layers 2", ("full", 2)),
    ("--activations-checkpoint-method block --activations-checkpoint-num-layers 4", ("full", None)),
    ("--recompute-activations", ("selective", None)),
])
def test_old_recompute_flags_read_as_todays(old, today):
    line = ("--num-layers 24 --hidden-size 2048 --num-attention-heads 16 --seq-length 2048 "
            "--micro-batch-size 1 --global-batch-size 64 --bf16 " + old)
    got = read_megatron(line, "<arguments>", None, None, PRESETS)
    assert got.parallelism.recompute_granularity == today[0] and not got.unknown


def test_old_parallel_and_fp8_switches_read_as_todays():
    line = ("--num-layers 24 --hidden-size 2048 --num-attention-heads 16 --seq-length 2048 --micro-batch-size 1 "
            "--global-batch-size 64 --bf16 --model-parallel-size 4 --fp8-hybrid --use-flash-attn "
            "--use-rotary-position-embeddings")
    got = read_megatron(line, "<arguments>", None, None, PRESETS)
    assert got.parallelism.tensor_model_parallel_size == 4
    assert got.workload.precision == "fp8" and got.parallelism.attention_backend == "flash"
    assert got.workload.position_embedding_type == "rope" and not got.unknown


def test_a_mixtral_script_into_a_llama_design_becomes_mixtral_with_its_vocabulary(tmp_path):
    """The line's model replaces the file's: the Mixtral preset with Mixtral's 32,000-token vocabulary,
    not the file's llama3-8b preset and 128,256 tokens (+10 % on the step)."""
    path = fresh_design(tmp_path)
    assert load_document(path).spec.workload.preset == "llama3-8b"
    code, _, err = run_cli("import", "megatron", DATA / "train_mixtral_8x7b_distributed.sh", "--into", path)
    assert code == 0, err
    w = load_document(path).spec.workload
    assert w.preset == "mixtral-8x7b" and resolve_workload(w, PRESETS).vocab_size == 32000
    assert w.tokenizer_model is None  # the file's tokenizer was Llama 3's: not carried to Mixtral
    assert "vocab_size 32000 of mixtral-8x7b" in err


def test_a_line_of_an_unknown_model_without_a_vocabulary_says_the_files_is_a_guess():
    line = ("--num-layers 20 --hidden-size 2560 --num-attention-heads 20 --seq-length 2048 "
            "--micro-batch-size 1 --global-batch-size 64 --bf16")
    got = read_megatron(line, "<arguments>", Workload(preset="llama3-8b"), Parallelism(), PRESETS)
    assert got.workload.vocab_size == 128256
    assert any("a guess" in n and "give --vocab-size" in n for n in got.notes)


def test_the_sc21_table_scripts_read_as_bash_would_run_them(tmp_path):
    """run_table_1.sh sets the 1.7B row's sizes in an if/elif chain on MODEL_SIZE, sources CONFIG.sh
    (which exports the flags as MEGATRON_PARAMS, the 2021 recompute flag among them) and submits
    SRUN.sh: the import reads the 1.7B row, not the last branch, with its recompute."""
    folder = tmp_path / "sc21"
    shutil.copytree(DATA / "sc21", folder)
    path = fresh_design(tmp_path, gpus=32)  # the 1.7B row of the paper's table 1: 32 GPUs
    code, _, err = run_cli("import", "megatron", folder / "run_table_1.sh", "--into", path)
    assert code == 0, err
    doc = load_document(path)
    w, p = doc.spec.workload, doc.spec.parallelism
    assert (w.num_layers, w.hidden_size, w.num_attention_heads, w.seq_length) == (24, 2304, 24, 2048)
    assert (w.micro_batch_size, w.global_batch_size, w.precision) == (16, 512, "fp16")
    assert (p.tensor_model_parallel_size, p.pipeline_model_parallel_size) == (1, 1)
    assert p.recompute_granularity == "full" and w.vocab_size == 50257
    assert "read ./CONFIG.sh, which" in err
    assert "not a Megatron-LM argument" not in err  # --DDP-impl is an old flag, not a design input


def test_a_branch_on_an_unassigned_value_keeps_every_branch_as_before():
    script = ("if [ \"$SIZE\" == small ]; then\n  L=12\nelse\n  L=24\nfi\n"
              "python pretrain_gpt.py --num-layers $L --hidden-size 1024 --num-attention-heads 16 "
              "--seq-length 2048 --micro-batch-size 1 --global-batch-size 8 --bf16\n")
    got = read_megatron(script, "run.sh", None, None, PRESETS)
    assert got.workload.num_layers == 24  # the last assignment, as bash would leave it with both run
    decided = read_megatron("SIZE=small\n" + script, "run.sh", None, None, PRESETS)
    assert decided.workload.num_layers == 12


def test_flags_that_change_the_step_but_no_key_holds_are_listed_with_what_they_change(tmp_path):
    path = fresh_design(tmp_path, gpus=128)  # TP 8 x PP 16
    code, _, err = run_cli("import", "megatron", DATA / "pretrain_gpt3_175B_2021.sh", "--into", path)
    assert code == 0, err
    said = [line for line in err.splitlines() if line.startswith("read, not costed: ")]
    assert said == [f"read, not costed: {DATA / 'pretrain_gpt3_175B_2021.sh'}:61: --rampup-batch-size 16 16 5859375: "
                    "the global batch grows over the first samples: early steps are shorter than the costed one, "
                    "and the time to train is shorter than steps x step time"]
    assert "--rampup-batch-size" not in next(line for line in err.splitlines() if line.startswith("not a design"))
