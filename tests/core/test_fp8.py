"""FP8 as it really runs: the measured FP8 GEMM efficiency per accelerator.

FP8 GEMMs reach a smaller share of their peak than BF16 ones (H100: 1402.6 of 1979 TFLOP/s against
794.5 of 989), so an FP8 run is 1.32-1.46x faster than the same run in BF16, not ~1.5-1.7x.
"""
import json

import pytest

from designer.core.engine.compute import OpCoster
from designer.core.engine.constants import accelerator_constants
from designer.core.engine.stages.phases import precision_gemm_efficiency
from designer.core.model.catalog import load_catalog
from tests.conftest import EXAMPLES, run_cli

CLUSTER = EXAMPLES / "h100-64gpu-infiniband.yaml"
# as the measured runs are set up (NeMo recipes): sequence parallel with TP communication overlap
LLAMA70_TP8_PP4 = ["workload.preset=llama3-70b", "workload.global_batch_size=1024",
                   "parallelism.tensor_model_parallel_size=8", "parallelism.pipeline_model_parallel_size=4",
                   "parallelism.sequence_parallel=true", "parallelism.tp_comm_overlap=true"]


def step_time_s(precision: str) -> float:
    sets = LLAMA70_TP8_PP4 + [f"workload.precision={precision}"]
    code, out, err = run_cli("evaluate", CLUSTER, "--json", *sum((["--set", s] for s in sets), []))
    assert code == 0, err
    return json.loads(out)["step_time_s"]


def test_fp8_gemm_runs_at_the_measured_share_of_its_peak():
    catalog = load_catalog()
    acc = catalog.accelerator("H100-SXM5-80GB")
    ac = accelerator_constants(acc, None, catalog)
    bf16 = OpCoster(acc.peak_for("bf16"), acc.peak_for("bf16"), acc.hbm_tbps, ac)
    fp8 = OpCoster(acc.peak_for("fp8"), acc.peak_for("bf16"), acc.hbm_tbps, ac,
                   gemm_efficiency=precision_gemm_efficiency(acc, ac, "fp8"))
    # the measured FP8 ceiling over the BF16 one, and FP8's larger share of it under the power limit
    assert fp8.flops_per_s / bf16.flops_per_s == pytest.approx(1503.7 / 794.5 * 1.026, rel=1e-3)
    assert precision_gemm_efficiency(acc, ac, "bf16") is None  # BF16 keeps its calibration


def test_fp8_speed_up_over_bf16_is_in_the_measured_range():
    speed_up = step_time_s("bf16") / step_time_s("fp8")
    assert 1.32 <= speed_up <= 1.46, speed_up


def _fp8_run(*sets: str) -> dict:
    import json

    from tests.conftest import EXAMPLES, run_cli

    args = ["evaluate", EXAMPLES / "h100-64gpu-infiniband.yaml", "--json", "--set", "workload.precision=fp8",
            "--set", "parallelism.use_distributed_optimizer=true", "--set", "parallelism.overlap_param_gather=false"]
    for kv in sets:
        args += ["--set", kv]
    code, out, err = run_cli(*args)
    assert code == 0, err
    return json.loads(out)


def test_fp8_recipes_cost_their_quantization_traffic():
    """Transformer Engine's casts are HBM work: current scaling (a separate amax pass) costs more
    than delayed scaling (fused into the producing kernel); nothing is named 'not modelled'."""
    delayed = _fp8_run("parallelism.fp8_recipe=delayed")
    tensorwise = _fp8_run("parallelism.fp8_recipe=tensorwise")
    default = _fp8_run()
    assert default["step_time_s"] == delayed["step_time_s"]  # Megatron's default recipe is delayed
    assert tensorwise["breakdown_s"]["compute"] > delayed["breakdown_s"]["compute"]
    for result in (delayed, tensorwise):
        assert not any(w.startswith("accepted, not modelled") and "fp8" in w for w in result["warnings"])


def test_fp8_param_gather_halves_the_parameter_all_gather():
    plain = _fp8_run()
    fp8_gather = _fp8_run("parallelism.fp8_param_gather=true")
    assert fp8_gather["step_time_s"] < plain["step_time_s"]
    assert fp8_gather["breakdown_s"]["dp_comm"] < plain["breakdown_s"]["dp_comm"]


def test_fp8_attention_runs_at_the_fp8_rate_only_when_asked():
    bf16_attention = _fp8_run()
    fp8_attention = _fp8_run("parallelism.fp8_dot_product_attention=true")
    assert fp8_attention["breakdown_s"]["compute"] < bf16_attention["breakdown_s"]["compute"]


def test_an_fp8_recipe_the_accelerator_lacks_is_refused_with_one_it_has(tmp_path):
    import yaml

    from tests.conftest import EXAMPLES, run_cli

    example = EXAMPLES / "h100-64gpu-infiniband.yaml"
    code, _, err = run_cli("evaluate", example, "--set", "parallelism.fp8_recipe=fp4")
    assert code == 65 and "delayed, tensorwise, blockwise, mxfp8" in err
    code, _, err = run_cli("evaluate", example, "--set", "workload.precision=fp8", "--set", "parallelism.fp8_recipe=mxfp8")
    assert code == 65
    assert "spec.parallelism.fp8_recipe" in err and "mxfp8" in err and "use fp8_recipe: delayed" in err
    data = yaml.safe_load(example.read_text())
    data["spec"].setdefault("parallelism", {})["fp8_recipe"] = "mxfp8"
    design = tmp_path / "mxfp8-on-h100.yaml"
    design.write_text(yaml.safe_dump(data))
    code, _, err = run_cli("validate", design)
    assert code == 65 and "H100-SXM5-80GB does not have" in err and "fp8_recipe" in err


def test_fp8_format_beside_the_plan_is_accepted_and_a_mismatch_is_said():
    import json

    from tests.conftest import EXAMPLES, run_cli

    example = EXAMPLES / "h100-64gpu-infiniband.yaml"
    code, out, err = run_cli("evaluate", example, "--json", "--set", "parallelism.fp8_format=hybrid")
    assert code == 0, err
    assert any("fp8_format is hybrid but the workload's precision is bf16" in w for w in json.loads(out)["warnings"])
    code, out, err = run_cli("evaluate", example, "--json", "--set", "parallelism.fp8_format=hybrid",
                             "--set", "workload.precision=fp8")
    assert code == 0, err
    assert not any("fp8_format" in w for w in json.loads(out)["warnings"])


def test_a_part_named_by_its_alias_and_its_full_name_is_refused_once():
    """Servers that name the same accelerator two ways ("H100" and "H100-SXM5-80GB") hold one part:
    a recipe it cannot run is one problem, not one per spelling."""
    from designer.core.design_check import check_document
    from designer.core.generate.fat_tree import generate_fat_tree
    from designer.core.model import Parallelism, Workload

    doc = generate_fat_tree(nodes=4, gpu="H100")
    spelled = doc.nodes[0].accelerator
    other = "H100" if spelled != "H100" else "H100-SXM5-80GB"
    doc.update(doc.nodes[0].id, accelerator=other)
    assert {n.accelerator for n in doc.nodes} == {"H100", "H100-SXM5-80GB"}
    doc.set_job(Workload(preset="llama3-8b", global_batch_size=32, micro_batch_size=1),
                Parallelism(tensor_model_parallel_size=1, num_gpus=32, fp8_recipe="mxfp8"))
    refused = [p.message for p in check_document(doc) if "fp8_recipe mxfp8" in p.message]
    assert refused == ["fp8_recipe mxfp8 needs mxfp8 tensor cores, which H100-SXM5-80GB does not have"]
