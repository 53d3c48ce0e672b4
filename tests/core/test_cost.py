"""`designer cost`: the bill of materials counts what the generator built, prices come from
resources/catalog/prices.yaml with the file's spec.prices over them, and the economics follow
the documented formulas (docs/cost.md)."""
import json
import math
from pathlib import Path

import pytest
import yaml

from designer.core.analysis.cost import HOURS_PER_YEAR, PUE, estimate_cost
from designer.core.generate.fat_tree import generate_fat_tree
from designer.core.io import load_document, save_document
from designer.core.model.catalog import CATALOG_DIR, default_catalog
from designer.core.model.prices import SECTIONS, shipped_prices
from tests.conftest import EXAMPLES, run_cli

SHAPES = [
    dict(nodes=16, gpu="H100"),  # 2 tiers, rail-optimized, 1:1
    dict(nodes=64, gpu="H100", oversubscription=2),  # 2:1 leaves
    dict(nodes=32, gpu="H100", rail_optimized=False),  # all NICs of a server on one leaf
    dict(nodes=40, gpu="A100", nic_gbps=200, switch_radix=40, tiers=3),  # 3 tiers with pods
    dict(nodes=36, gpu="GB200", gpus_per_node=4, nics_per_node=4, nic_gbps=800, switch_radix=144,
         nvlink_domain_gpus=72),  # two NVL72 racks
    dict(nodes=24, gpu="H100", fabric="ethernet", oversubscription=3, switch_radix=32),  # radix not in the catalog
]


def _tiers(doc, link) -> set:
    return {getattr(doc.device(end.split(":")[0]), "tier", "nic") for end in (link.a, link.b)}


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "-".join(f"{k}={v}" for k, v in s.items()))
def test_switch_and_cable_counts_are_the_generators(shape):
    doc = generate_fat_tree(**shape)
    est = estimate_cost(doc)
    counts = doc.counts()
    assert est.count("switch") == counts["switches"] == len(doc.switches)
    # every network cable is one DAC or one fibre; NVLink cables to the switch trays of an NVL72
    # rack are part of the rack (priced with its servers)
    nvlink_trays = {s.id for s in doc.switches if s.fabric == "nvlink"}
    nvlink_cables = sum(link.count for link in doc.links
                        if {e.split(":")[0] for e in (link.a, link.b)} & nvlink_trays)
    assert est.count("cable") == counts["cables"] - nvlink_cables
    optical = sum(b.count for b in est.bom if b.part == "fibre")
    assert est.count("transceiver") == 2 * optical  # a transceiver at each end of an optical link
    assert est.count("accelerator") == doc.num_gpus()
    assert est.count("nic") == sum(n.nic_count for n in doc.nodes)
    assert est.count("rack") == counts["racks"]
    # per tier: the generator's leaf-spine cables are bundles (Link.count) between the tiers
    leaf_spine = sum(link.count for link in doc.links if _tiers(doc, link) == {"leaf", "spine"})
    assert sum(b.count for b in est.bom if b.kind == "cable" and b.detail.startswith("leaf-spine")) == leaf_spine
    assert math.isclose(est.capex_usd, sum(b.subtotal_usd for b in est.bom))
    fabric = sum(b.subtotal_usd for b in est.bom if b.kind in ("nic", "switch", "transceiver", "cable"))
    assert math.isclose(est.fabric_capex_usd, fabric) and math.isclose(est.fabric_share, fabric / est.capex_usd)


def test_two_to_one_has_fewer_spines_and_a_cheaper_fabric():
    full = estimate_cost(generate_fat_tree(nodes=64, gpu="H100"))
    half = estimate_cost(generate_fat_tree(nodes=64, gpu="H100", oversubscription=2))
    assert half.count("switch") < full.count("switch")
    assert half.fabric_capex_usd < full.fabric_capex_usd
    assert half.capex_usd - full.capex_usd == pytest.approx(half.fabric_capex_usd - full.fabric_capex_usd)


def test_reach_same_rack_is_dac_between_racks_is_optics(small_doc):
    """conftest's SMALL: servers in r0, the leaf in 'net'; moving the leaf into r0 turns the four
    optical links (8 transceivers + 4 fibres) into four DAC cables."""
    est = estimate_cost(small_doc)
    assert est.count("transceiver") == 8 and {b.part for b in est.bom if b.kind == "cable"} == {"fibre"}
    small_doc.update("leaf0", rack="r0")
    est = estimate_cost(small_doc)
    assert est.count("transceiver") == 0
    assert [(b.part, b.count, b.detail) for b in est.bom if b.kind == "cable"] == [
        ("DAC-400G", 4, "nic-leaf, within a rack")]


def test_power_is_tdp_plus_overheads_from_the_catalogs():
    doc = generate_fat_tree(nodes=16, gpu="H100")
    est = estimate_cost(doc)
    book, cat = shipped_prices(), default_catalog()
    gpus = sum(b.power_w for b in est.bom if b.kind == "accelerator")
    assert gpus == 128 * cat.accelerator("H100").tdp_w
    assert sum(b.power_w for b in est.bom if b.kind == "server") == 16 * book.get("servers", "H100-SXM5-80GB").power_w
    assert est.power_kw == pytest.approx(sum(b.power_w for b in est.bom) / 1000)
    assert est.facility_power_kw == pytest.approx(est.power_kw * PUE)


def test_dollars_per_million_tokens_and_per_mw():
    doc = generate_fat_tree(nodes=16, gpu="H100")
    est = estimate_cost(doc, {"tokens_per_s": 500_000.0, "num_gpus": 128}, usd_per_kwh=0.1, amortisation_years=5)
    per_hour = est.capex_usd / (5 * HOURS_PER_YEAR) + est.power_kw * PUE * 0.1
    assert est.usd_per_hour == pytest.approx(per_hour)
    assert est.usd_per_million_tokens == pytest.approx(per_hour / (500_000 * 3600) * 1e6)
    assert est.tokens_per_s_per_mw == pytest.approx(500_000 / (est.power_kw / 1000))
    # a job on half the GPUs pays half: the same tokens cost half as much
    half = estimate_cost(doc, {"tokens_per_s": 500_000.0, "num_gpus": 64}, usd_per_kwh=0.1, amortisation_years=5)
    assert half.usd_per_million_tokens == pytest.approx(est.usd_per_million_tokens / 2)
    assert half.job_share == 0.5 and any("64 of the 128" in n for n in half.notes)
    as_json = json.loads(json.dumps(est.as_json()))
    assert {"bom", "capex_usd", "fabric_capex_usd", "fabric_share", "power_kw", "tokens_per_s",
            "tokens_per_s_per_mw", "usd_per_million_tokens"} <= set(as_json)
    assert set(as_json["bom"][0]) >= {"part", "kind", "count", "unit_price_usd", "subtotal_usd", "power_w"}


def test_every_shipped_price_has_a_source_and_a_date_and_covers_the_catalog():
    raw = yaml.safe_load(Path(CATALOG_DIR, "prices.yaml").read_text())
    assert set(raw) == set(SECTIONS)
    for section in SECTIONS:
        for part, entry in raw[section].items():
            assert entry["price_usd"] >= 0 and entry["source"].strip(), (section, part)
            assert len(entry["date"]) == 7 and entry["date"][4] == "-", (section, part)
    cat, book = default_catalog(), shipped_prices()
    for name in cat.accelerators:
        assert book.get("accelerators", name) and book.get("servers", name), name
    assert set(cat.nics) <= set(book.section("nics"))
    assert set(cat.switches) <= set(book.section("switches"))


def test_an_override_in_the_file_changes_the_price_and_survives_save_and_reopen(tmp_path):
    doc = generate_fat_tree(nodes=16, gpu="H100")
    before = estimate_cost(doc)
    doc.spec.prices = {"switches": {"QM9700-NDR": {"price_usd": 20000, "source": "our quote", "date": "2026-11"}},
                       "accelerators": {"H100": {"price_usd": 25000}}, "pue": 1.2}
    path = tmp_path / "c.yaml"
    save_document(doc, path)
    again = load_document(path)
    assert again.spec.prices == doc.spec.prices
    after = estimate_cost(again)
    assert after.capex_usd == pytest.approx(before.capex_usd - 10 * 16000 - 128 * 5000)
    line = next(b for b in after.bom if b.part == "QM9700-NDR")
    assert line.unit_price_usd == 20000 and line.source == "our quote"
    assert after.pue == 1.2


@pytest.mark.parametrize("prices, where, words", [
    ("{switches: {QM9999: {price_usd: 1}}}", "spec.prices.switches.QM9999", "unknown part"),
    ("{nics: {ConnectX-7: {price_usd: -3}}}", "spec.prices.nics.ConnectX-7.price_usd", "negative"),
    ("{racks: {rack: {price_usd: .nan}}}", "spec.prices.racks.rack.price_usd", "expected a number"),
    ("{gpus: {H100: {price_usd: 1}}}", "spec.prices.gpus", "unknown section"),
    ("{pue: 0.7}", "spec.prices.pue", "from 1 to 3"),
])
def test_a_bad_override_is_exit_65_naming_the_key_and_line(tmp_path, small_text, prices, where, words):
    path = tmp_path / "bad.yaml"
    path.write_text(small_text + f"  prices: {prices}\n")
    code, out, err = run_cli("cost", str(path))
    assert code == 65 and out == ""
    line = len(small_text.splitlines()) + 1
    assert f"{path}:{line}:" in err and where in err and words in err
    assert "Traceback" not in err
    code, _, err2 = run_cli("validate", str(path))
    assert code == 65 and where in err2


def test_cli_cost_table_and_json():
    example = EXAMPLES / "h100-64gpu-infiniband.yaml"
    code, out, err = run_cli("cost", str(example), "--json", "--usd-per-kwh", "0.12", "--years", "3")
    assert code == 0, err
    data = json.loads(out)
    doc = load_document(example)
    assert sum(b["count"] for b in data["bom"] if b["kind"] == "switch") == len(doc.switches)
    assert data["usd_per_kwh"] == 0.12 and data["amortisation_years"] == 3
    code, ev, _ = run_cli("evaluate", str(example), "--json")
    assert data["tokens_per_s"] == pytest.approx(json.loads(ev)["tokens_per_s"])
    assert data["usd_per_million_tokens"] > 0 and 0 < data["fabric_share"] < 1
    code, text, err = run_cli("cost", str(example))
    assert code == 0, err
    for words in ("QM9700-NDR", "transceiver 400G", "capex", "power (IT)", "tokens/s per MW", "$ per M tokens",
                  f"{data['fabric_share']:.1%} of capex"):
        assert words in text
    with pytest.raises(SystemExit) as exc:  # argparse's usage error
        run_cli("cost", str(example), "--usd-per-kwh", "-1")
    assert exc.value.code == 2


def test_cli_cost_without_a_job_prints_the_bill_only(tmp_path, small_text):
    path = tmp_path / "c.yaml"
    path.write_text(small_text[:small_text.index("  workload:")])
    code, out, err = run_cli("cost", str(path), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["tokens_per_s"] is None and data["usd_per_million_tokens"] is None and data["capex_usd"] > 0


def test_docs_cost_lists_every_shipped_price_with_its_date():
    """docs/cost.md's price table is the file's content: a price changed in one is changed in both."""
    docs = (Path(CATALOG_DIR).parents[1] / "docs" / "cost.md").read_text()
    raw = yaml.safe_load(Path(CATALOG_DIR, "prices.yaml").read_text())
    for section, parts in raw.items():
        for part, entry in parts.items():
            assert f"| {section} | {part}" in docs, (section, part)
            row = next(line for line in docs.splitlines() if line.startswith(f"| {section} | {part}"))
            assert f"| {entry['price_usd']:,} |" in row and f"| {entry['date']} |" in row, row


def test_a_catalog_switch_with_no_price_is_named_not_a_crash():
    """A switch model the price book lacks (a catalog entry added without its price) is a located
    error naming the part and the spec.prices key to add, never an internal error."""
    import dataclasses

    from designer.core.problems import DesignerError

    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    book = shipped_prices()
    used = {sw.model for sw in doc.switches if sw.model}
    assert used
    parts = {**book.parts, "switches": {k: v for k, v in book.parts["switches"].items() if k not in used}}
    with pytest.raises(DesignerError) as caught:
        estimate_cost(doc, prices=dataclasses.replace(book, parts=parts))
    message = str(caught.value)
    assert "no price for switch" in message and "spec.prices.switches" in message
