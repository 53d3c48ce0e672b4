"""Megatron-LM's own launch scripts as they are (tests/data/megatron_args/README.md names each
source): a quoted string spanning lines that holds the flags array, `"... ${ARGS[@]}"`."""
from pathlib import Path

from designer.core.generate import generate_fat_tree
from designer.core.io import load_document, save_document
from tests.conftest import run_cli

DATA = Path(__file__).resolve().parent / "data" / "megatron_args"


def test_the_megatron_fsdp_deepseek_v3_script_comes_in_as_deepseek_v3(tmp_path):
    design = tmp_path / "c.yaml"
    save_document(generate_fat_tree(nodes=8, gpu="H100", name="dsv3"), design)
    code, _, err = run_cli("import", "megatron", DATA / "sbatch_mfsdp_deepseek_v3.sh", "--into", design)
    assert code == 0, err  # was exit 65: "cannot read the assignment to TRAINING_CMD: No closing quotation"
    doc = load_document(design)
    w, p = doc.spec.workload, doc.spec.parallelism
    # the script: TP ${TP:-1}, EP ${EP:-8}, MBS 4, GBS 2048, 61 layers of hidden 7168, 256 experts,
    # Megatron-FSDP sharding optimizer, gradients and parameters
    assert w.preset == "deepseek-v3" and (w.global_batch_size, w.micro_batch_size) == (2048, 4)
    assert p.expert_model_parallel_size == 8 and (p.tensor_model_parallel_size or 1) == 1
    assert p.use_megatron_fsdp and p.data_parallel_sharding_strategy == "optim_grads_params"
    assert "wrote" in err and "${PRETRAIN_ARGS[@]}" not in err
