"""Megatron-LM's uneven pipeline splits: the pure split function."""

import pytest

from designer.core.model.pipeline_split import SplitError, expand_layout, split_layers


def test_llama405b_account_for_embedding_and_loss_on_pp8_vp8():
    stages = split_layers(126, 8, 8, account_for_embedding=True, account_for_loss=True)
    assert len(stages) == 64
    assert (stages[0].decoder_layers, stages[0].embedding) == (1, True)
    assert (stages[-1].decoder_layers, stages[-1].loss) == (1, True)
    assert sum(s.decoder_layers for s in stages) == 126


def test_even_split_refused_with_reason_and_key():
    with pytest.raises(SplitError) as err:
        split_layers(126, 8, 8)
    assert err.value.key == "virtual_pipeline_model_parallel_size"
    assert "does not divide the 126 layers" in err.value.reason


def test_decoder_first_last_qwen3_94_on_pp8():
    stages = split_layers(94, 8, first_layers=10, last_layers=12)
    assert [s.decoder_layers for s in stages] == [10, 12, 12, 12, 12, 12, 12, 12]
    with pytest.raises(SplitError) as err:
        split_layers(94, 8, first_layers=11, last_layers=12)
    assert err.value.key == "decoder_first_pipeline_num_layers"


def test_layout_with_repetition_deepseek_v3():
    assert expand_layout("Et*3|(tt|)*2,m|L") == ["Ettt", "tt", "tt", "m", "L"]
    stages = split_layers(61, 16, layout="Et*4|(t*4|)*14tmL")
    assert stages[0].embedding and stages[-1].loss and stages[-1].mtp_layers == 1
    assert sum(s.decoder_layers for s in stages) == 61
    with pytest.raises(SplitError, match="must be divisible by pipeline_model_parallel_size"):
        split_layers(61, 5, layout="Et*4|(t*4|)*14tmL")


# Through the CLI, as a user runs it: 30 layers on PP 8 (TP 2, 16 GPUs).
import json  # noqa: E402

from tests.conftest import run_cli  # noqa: E402


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    path = tmp_path_factory.mktemp("c") / "c.yaml"
    code, _, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", "2", "--gpu", "H100")
    assert code == 0, err
    return path


BASE = ["--set", "workload.preset=llama3-8b", "--set", "workload.num_layers=30",
        "--set", "parallelism.tensor_model_parallel_size=2", "--set", "parallelism.pipeline_model_parallel_size=8"]
BOTH = ["--set", "parallelism.account_for_embedding_in_pipeline_split=true",
        "--set", "parallelism.account_for_loss_in_pipeline_split=true"]


def test_uneven_refused_without_flags_and_names_the_alternative(cluster):
    code, _, err = run_cli("evaluate", cluster, *BASE)
    assert code == 65
    assert "pipeline_model_parallel_size" in err and "account_for_embedding_in_pipeline_split" in err


def test_account_for_embedding_and_loss_accepted_and_stages_uneven(cluster):
    code, out, err = run_cli("evaluate", cluster, *BASE, *BOTH, "--json")
    assert code == 0, err
    stages = json.loads(out)["stages"]
    assert [s["layers"] for s in stages] == [3, 4, 4, 4, 4, 4, 4, 3]
    # the middle stages do more decoder work than the first; their busy time differs, and every
    # stage ends the step together: the less loaded stages wait
    assert stages[0]["forward_s"] < stages[1]["forward_s"]
    assert stages[0]["busy_s"] < stages[1]["busy_s"] < stages[-1]["end_s"]


def test_decoder_first_and_layout_through_set(cluster):
    code, out, err = run_cli("evaluate", cluster, *BASE, "--set", "parallelism.decoder_first_pipeline_num_layers=2",
                             "--json")
    assert code == 0, err
    assert [s["layers"] for s in json.loads(out)["stages"]] == [2] + [4] * 7
    code, _, err = run_cli("evaluate", cluster, *BASE, "--set", "parallelism.decoder_first_pipeline_num_layers=5")
    assert code == 65 and "decoder_first_pipeline_num_layers" in err and "remaining layers" in err
    code, out, err = run_cli("evaluate", cluster, *BASE, "--set",
                             "parallelism.pipeline_model_parallel_layout=Et*2|(t*4|)*6t*4L", "--json")
    assert code == 0, err
    assert [s["layers"] for s in json.loads(out)["stages"]] == [2] + [4] * 7
    code, _, err = run_cli("evaluate", cluster, *BASE, "--set", "parallelism.pipeline_model_parallel_layout=Et*30L")
    assert code == 65 and "pipeline_model_parallel_layout" in err


def test_memory_is_the_most_loaded_stage(cluster):
    """Moving layers to the last stage (which holds the logits) raises the per-GPU peak."""
    _, even, _ = run_cli("evaluate", cluster, *BASE, *BOTH, "--json")
    code, heavy, err = run_cli("evaluate", cluster, *BASE, "--set", "parallelism.decoder_first_pipeline_num_layers=2",
                               "--set", "parallelism.decoder_last_pipeline_num_layers=10", "--json")
    assert code == 0, err
    assert json.loads(heavy)["memory_gib_per_gpu"]["total"] > json.loads(even)["memory_gib_per_gpu"]["total"]


def test_layout_with_matching_first_last_as_recipes_print_them():
    stages = split_layers(61, 8, layout="Et*8|(t*8|)*6t*5mL", first_layers=8, last_layers=5)
    assert [s.decoder_layers for s in stages] == [8] * 7 + [5]
    with pytest.raises(SplitError) as err:
        split_layers(61, 8, layout="Et*8|(t*8|)*6t*5mL", first_layers=8, last_layers=6)
    assert err.value.key == "decoder_last_pipeline_num_layers"
    with pytest.raises(SplitError, match="standalone embedding"):
        split_layers(94, 8, first_layers=10, last_layers=12, account_for_loss=True)
