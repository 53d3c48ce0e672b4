"""`designer compare a.yaml b.yaml [--json]` and `designer report A --compare B`."""
import json
import shutil
import sys
import types

import pytest

from tests.conftest import EXAMPLES, run_cli

EXAMPLE = EXAMPLES / "h100-64gpu-infiniband.yaml"
HEADLINE_KEYS = ["goodput", "num_gpus", "step_time_s", "step_time_range", "tokens_per_s", "mfu",
                 "memory_gib_per_gpu", "fits_in_memory",
                 "bottleneck", "communication_bottleneck", "capex_usd", "fabric_capex_usd", "fabric_share",
                 "power_kw", "tokens_per_s_per_mw", "usd_per_million_tokens"]


def write_spine_designs(folder):
    """Two 64-GPU two-tier fat-trees that differ only in the leaves' oversubscription (1:1 and 4:1),
    with the example's Llama 3 8B job: the 4:1 design has fewer spines and slower gradient reduction."""
    from designer.core.generate import generate_fat_tree
    from designer.core.io import load_document, save_document

    job = load_document(EXAMPLE)
    paths = []
    for ratio in (1, 4):
        doc = generate_fat_tree(nodes=8, gpu="H100", tiers=2, oversubscription=ratio, switch_radix=16,
                                rail_optimized=False, name=f"spine {ratio}:1")
        doc.set_job(job.spec.workload, job.spec.parallelism)
        path = folder / f"spine-{ratio}to1.yaml"
        save_document(doc, path)
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def spines(tmp_path_factory):
    return write_spine_designs(tmp_path_factory.mktemp("spines"))


def _json(*args):
    code, out, err = run_cli("compare", *args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_compare_prints_both_columns_with_the_differences(spines):
    a, b = spines
    code, out, err = run_cli("compare", a, b)
    assert code == 0, err
    for text in ("step time (s)", "tokens/s", "MFU", "memory per GPU, peak (GiB)", "top bottleneck", "capex",
                 "power (kW)", "$ per million tokens", "breakdown (critical path, s)", "dp_comm", "B - A",
                 a.name, b.name, "spine 1:1", "spine 4:1"):
        assert text in out, f"{text!r} missing from\n{out}"
    step = next(line for line in out.splitlines() if line.strip().startswith("step time"))
    assert step.split()[-2].startswith("+") and step.split()[-1].endswith("%")  # B - A and %
    assert "no difference" not in out


def test_compare_json_has_every_row_with_a_b_delta_and_percent(spines):
    data = _json(*spines)
    assert set(data) >= {"a", "b", "identical", "summary", "rows", "breakdown", "notes"}
    assert data["a"]["file"] == spines[0].name and data["b"]["name"] == "spine 4:1"
    assert [r["key"] for r in data["rows"]] == HEADLINE_KEYS
    for row in data["rows"] + data["breakdown"]:
        assert set(row) >= {"key", "label", "a", "b", "delta", "delta_pct", "better"}
    assert {r["key"] for r in data["breakdown"]} >= {"breakdown.compute", "breakdown.dp_comm", "breakdown.bubble"}
    assert "capex_usd" in data["a"]["cost"] and "capex_usd" in data["b"]["cost"]


def test_a_file_compared_with_itself_shows_no_difference(tmp_path):
    design = tmp_path / "same.yaml"
    shutil.copy(EXAMPLE, design)
    code, out, err = run_cli("compare", design, design)
    assert code == 0, err
    assert "no difference" in out
    data = _json(design, design)
    assert data["identical"] is True and data["summary"].startswith("no difference")
    for row in data["rows"] + data["breakdown"]:
        if isinstance(row["a"], str):
            assert row["a"] == row["b"]
        else:
            assert row["delta"] == 0 and row["delta_pct"] == 0, row


def test_more_spine_oversubscription_is_slower_and_cheaper(spines):
    rows = {r["key"]: r for r in (lambda d: d["rows"] + d["breakdown"])(_json(*spines))}
    assert rows["step_time_s"]["delta"] > 0 and rows["step_time_s"]["verdict"] == "worse"
    assert rows["tokens_per_s"]["delta"] < 0 and rows["mfu"]["delta"] < 0
    assert rows["breakdown.dp_comm"]["delta"] > 0  # the gradients cross the thinner spine layer
    assert rows["breakdown.compute"]["delta"] == 0 and rows["memory_gib_per_gpu"]["delta"] == 0
    assert rows["capex_usd"]["delta"] < 0 and rows["fabric_capex_usd"]["delta"] < 0  # fewer spines and cables
    assert rows["capex_usd"]["delta"] == pytest.approx(rows["fabric_capex_usd"]["delta"])  # the same servers
    assert rows["capex_usd"]["verdict"] == "better"
    # the other way round, every difference changes sign
    back = {r["key"]: r for r in (lambda d: d["rows"] + d["breakdown"])(_json(*reversed(spines)))}
    for key in ("step_time_s", "tokens_per_s", "capex_usd", "breakdown.dp_comm"):
        assert back[key]["delta"] == pytest.approx(-rows[key]["delta"])


@pytest.mark.parametrize("broken", ["a", "b"])
def test_an_error_in_either_file_exits_65_naming_that_file(spines, tmp_path, broken):
    bad = tmp_path / "broken.yaml"
    bad.write_text(EXAMPLE.read_text().replace("tensor_model_parallel_size: 2", "tensor_model_parallel_size: 3"))
    args = (bad, spines[1]) if broken == "a" else (spines[0], bad)
    code, out, err = run_cli("compare", *args)
    assert code == 65 and out == ""
    assert str(bad) in err and str(spines[0 if broken == "b" else 1]) not in err
    assert "Traceback" not in err


def test_a_file_that_is_not_yaml_exits_65_with_its_line(spines, tmp_path):
    bad = tmp_path / "not-yaml.yaml"
    bad.write_text("apiVersion: designer/v1\nspec: [\n")
    code, _, err = run_cli("compare", spines[0], bad)
    assert code == 65 and f"{bad}:3" in err


class FakeCost:
    """The cost engine's result as compare reads it (designer.core.analysis.cost.CostEstimate)."""

    def __init__(self, doc, evaluation):
        n = len(doc.switches)
        self.capex_usd = 1_000_000.0 + 10_000.0 * n
        self.fabric_capex_usd = 10_000.0 * n
        self.fabric_share = self.fabric_capex_usd / self.capex_usd
        self.power_kw = 50.0 + n
        self.tokens_per_s = evaluation.tokens_per_s
        self.tokens_per_s_per_mw = evaluation.tokens_per_s / (self.power_kw / 1000)
        self.usd_per_million_tokens = 0.05

    def as_json(self):
        return {"capex_usd": self.capex_usd}


def test_cost_rows_are_the_cost_engines_figures_and_their_differences(spines, monkeypatch):
    module = types.ModuleType("designer.core.analysis.cost")
    module.estimate_cost = lambda document, evaluation=None, *, catalog=None, **kw: FakeCost(document, evaluation)
    monkeypatch.setitem(sys.modules, "designer.core.analysis.cost", module)
    from designer.core.io import load_document

    switches = [len(load_document(p).switches) for p in spines]
    rows = {r["key"]: r for r in _json(*spines)["rows"]}
    assert rows["capex_usd"]["a"] == 1_000_000 + 10_000 * switches[0]
    assert rows["capex_usd"]["delta"] == 10_000 * (switches[1] - switches[0])
    assert rows["capex_usd"]["delta_pct"] == pytest.approx(rows["capex_usd"]["delta"] / rows["capex_usd"]["a"])
    assert rows["usd_per_million_tokens"]["delta"] == 0 and rows["usd_per_million_tokens"]["delta_pct"] == 0
    assert rows["power_kw"]["delta"] == switches[1] - switches[0]


def test_without_the_cost_engine_the_rest_is_compared_and_a_note_says_why(spines, monkeypatch):
    monkeypatch.setitem(sys.modules, "designer.core.analysis.cost", None)  # as in a build without it
    code, out, err = run_cli("compare", *spines)
    assert code == 0, err
    assert "cost figures: not available" in out and "capex" not in out.split("breakdown")[0]
    rows = {r["key"]: r for r in _json(*spines)["rows"]}
    assert rows["capex_usd"]["a"] is None and rows["step_time_s"]["delta"] > 0


def test_report_compare_holds_both_designs(spines, tmp_path):
    from tests.pdf_text import text_lines

    out = tmp_path / "r.pdf"
    code, _, err = run_cli("report", spines[0], "--compare", spines[1], "-o", out)
    assert code == 0, err
    text = "\n".join(text_lines(out.read_bytes()))
    for name in ("spine 1:1", "spine 4:1", spines[0].name, spines[1].name):
        assert name in text
    assert f"Compared with {spines[1].name}" in text
    assert "Step-time breakdown, side by side" in text and f"B: {spines[1].name}" in text
    assert "slower per step" in text
    plain = tmp_path / "plain.pdf"
    assert run_cli("report", spines[0], "-o", plain)[0] == 0
    assert "Compared with" not in "\n".join(text_lines(plain.read_bytes()))


def test_report_compare_with_a_broken_file_names_it_and_writes_nothing(spines, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("spec: [\n")
    out = tmp_path / "r.pdf"
    code, _, err = run_cli("report", spines[0], "--compare", bad, "-o", out)
    assert code == 65 and str(bad) in err and not out.exists()


def test_a_design_the_cost_engine_refuses_is_compared_without_its_cost(spines, monkeypatch):
    """A part without a price is a note naming the file; the performance figures still compare."""
    from designer.core.problems import DesignerError, Problem

    module = types.ModuleType("designer.core.analysis.cost")

    def estimate_cost(document, evaluation=None, *, catalog=None, **kw):
        if document.metadata.name == "spine 4:1":
            raise DesignerError([Problem("no price for switch model QM-unknown", fix="add prices: to the file")])
        return FakeCost(document, evaluation)

    module.estimate_cost = estimate_cost
    monkeypatch.setitem(sys.modules, "designer.core.analysis.cost", module)
    data = _json(*spines)
    rows = {r["key"]: r for r in data["rows"]}
    assert rows["capex_usd"]["a"] > 0 and rows["capex_usd"]["b"] is None and rows["capex_usd"]["delta"] is None
    assert data["notes"] == [f"cost of {spines[1].name}: no price for switch model QM-unknown"]
    assert rows["step_time_s"]["delta"] > 0 and not data["identical"]
