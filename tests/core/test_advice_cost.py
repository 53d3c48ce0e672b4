"""The Advisor ranks changes by tokens per dollar as well as by speed (docs/cost.md)."""
import json

import pytest

from designer.core.analysis.advice_cost import cost_text
from designer.core.analysis.cost import estimate_cost
from designer.core.generate.fat_tree import generate_fat_tree
from designer.core.io import load_document, save_document
from tests.conftest import EXAMPLES, run_cli

EXAMPLE = EXAMPLES / "h100-64gpu-infiniband.yaml"


def test_advise_json_has_the_cost_of_each_change_and_ranks_by_tokens_per_dollar():
    code, out, err = run_cli("advise", str(EXAMPLE), "--json", "--by", "cost", "--no-scale")
    assert code == 0, err
    report = json.loads(out)
    assert report["ranked_by"] == "cost"
    assert report["cost"]["capex_usd"] > 0 and report["cost"]["usd_per_million_tokens"] > 0
    same = [a for a in report["ranked"] if a["fits_in_memory"] and a["category"] != "scale"]
    priced = [a["tokens_per_usd_change"] for a in same if a["tokens_per_usd_change"] is not None]
    assert len(priced) >= 10 and priced == sorted(priced, reverse=True)
    by_id = {a["id"]: a for a in report["ranked"]}
    # a job-only change keeps the hardware: same capex, tokens per dollar move with the speed
    job = next(a for a in same if a["job_only"] and a["tokens_per_usd_change"] is not None)
    assert job["capex_change"] == 0 and job["tokens_per_usd_change"] == pytest.approx(job["speedup"], rel=1e-9)
    # doubling every NIC buys almost no speed on this compute-bound job but costs fabric: fewer tokens/$
    nic = by_id["nic-2x"]
    assert nic["capex_change"] > 0 and nic["fabric_capex_change"] > nic["capex_change"]
    assert nic["tokens_per_usd_change"] < 0
    assert "fabric cost" in nic["cost_note"] and "tokens/$" in nic["cost_note"]
    # by speed the order is the speed-up's
    code, out, _ = run_cli("advise", str(EXAMPLE), "--json", "--no-scale")
    speed = [a for a in json.loads(out)["ranked"] if a["fits_in_memory"] and a["category"] != "scale"]
    assert [a["speedup"] for a in speed] == sorted((a["speedup"] for a in speed), reverse=True)
    assert json.loads(out)["ranked_by"] == "speed"


def test_leaves_two_to_one_is_offered_and_priced_as_the_generated_fabric(tmp_path):
    doc = generate_fat_tree(nodes=64, gpu="H100")
    src = load_document(EXAMPLE)
    doc.spec.workload, doc.spec.parallelism = src.spec.workload, src.spec.parallelism
    path = tmp_path / "c.yaml"
    save_document(doc, path)
    code, out, err = run_cli("advise", str(path), "--json", "--no-scale")
    assert code == 0, err
    advice = next(a for a in json.loads(out)["ranked"] if a["id"] == "leaves-2to1")
    full = estimate_cost(doc)
    half = estimate_cost(generate_fat_tree(nodes=64, gpu="H100", oversubscription=2))
    assert advice["fabric_capex_change"] == pytest.approx(half.fabric_capex_usd / full.fabric_capex_usd - 1)
    assert advice["fabric_capex_change"] < -0.05
    assert f"{advice['fabric_capex_change']:+.0%} fabric cost" in advice["cost_note"]


def test_cost_text_reads_like_the_issue():
    assert cost_text(-0.018, -0.02, -0.14, 0.004) == "-1.8% speed, -14% fabric cost, -2.0% capex, +0.4% tokens/$"


def test_advise_text_shows_the_cost_columns():
    code, out, err = run_cli("advise", str(EXAMPLE), "--by", "cost", "--no-scale")
    assert code == 0, err
    assert "best first by tokens per dollar" in out and "tokens/$" in out and "now: capex $" in out
