"""Tools > Parts and Costs: prices, power and failure rates edited in the table go into the document
as one undo step each, the cost and goodput follow, undo restores them, and the file keeps them."""
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "resources" / "examples"


@pytest.fixture
def dialog(empty_window):
    window = empty_window
    window.open_file(str(EXAMPLES / "h100-64gpu-infiniband.yaml"))
    assert window.settle() and window.result is not None
    window.act_costs.trigger()  # Tools > Parts and Costs...
    d = window.tools.costs_dialog
    assert d.settle()  # its figures come from a worker thread
    assert d.isVisible() and d.cost is not None and d.goodput is not None
    return window, d


def row_of(table, first: str) -> int:
    return next(r for r in range(table.rowCount()) if table.item(r, 0).text() == first)


def edit(table, row: int, col: int, text: str) -> None:
    table.item(row, col).setText(text)  # what the cell's editor commits


def test_a_price_edit_changes_the_cost_and_undo_restores_it(dialog):
    window, d = dialog
    table = d.prices
    row = row_of(table, "accelerators: H100-SXM5-80GB")
    assert table.item(row, 1).text() == "64"
    assert "spec.prices.accelerators.H100-SXM5-80GB" in table.item(row, 2).toolTip()
    assert "https://" in table.item(row, 2).toolTip()  # the shipped figure's source
    capex, per_token = d.cost.capex_usd, d.cost.usd_per_million_tokens
    old = float(table.item(row, 2).text().replace(",", ""))
    edit(table, row, 2, "40000")
    assert window.settle() and d.settle()
    assert window.qdoc.doc.spec.prices == {"accelerators": {"H100-SXM5-80GB": {"price_usd": 40000.0}}}
    assert d.cost.capex_usd == pytest.approx(capex + 64 * (40000 - old))
    assert d.cost.usd_per_million_tokens > per_token
    row = row_of(d.prices, "accelerators: H100-SXM5-80GB")
    assert "the design's spec.prices" in d.prices.item(row, 2).toolTip()
    window.act_undo.trigger()
    assert window.settle() and d.settle()
    assert window.qdoc.doc.spec.prices == {} and d.cost.capex_usd == pytest.approx(capex)


def test_energy_price_and_power_edits_go_into_the_file(dialog, tmp_path):
    window, d = dialog
    before = d.cost.usd_per_hour
    edit(d.prices, row_of(d.prices, "energy price ($ per kWh)"), 2, "0.30")
    assert window.settle() and d.settle() and d.cost.usd_per_kwh == pytest.approx(0.30) and d.cost.usd_per_hour > before
    row = row_of(d.prices, "nics: ConnectX-7-NDR-400G")
    edit(d.prices, row, 3, "40")
    assert window.settle() and d.settle()
    assert window.qdoc.doc.spec.prices["nics"]["ConnectX-7-NDR-400G"] == {"power_w": 40.0}
    path = tmp_path / "saved.yaml"
    assert window.files.save_to(str(path))
    from designer.core.io import load_document

    assert load_document(path).spec.prices == {"usd_per_kwh": 0.3, "nics": {"ConnectX-7-NDR-400G": {"power_w": 40.0}}}
    from tests.conftest import run_cli

    code, out, err = run_cli("cost", path, "--json")
    assert code == 0, err
    import json

    assert json.loads(out)["usd_per_kwh"] == pytest.approx(0.3)


def test_a_failure_rate_edit_changes_the_goodput_and_a_bad_value_is_refused(dialog):
    window, d = dialog
    rates = d.rates
    row = row_of(rates, "gpu_failures_per_mh")
    assert "Llama 3" in rates.item(row, 1).toolTip() and "default" in rates.item(row, 1).toolTip()
    before = d.goodput.interruptions_per_day
    index = window.qdoc.undo_stack.index()
    edit(rates, row, 1, "100")
    assert window.settle() and d.settle()
    assert window.qdoc.doc.spec.calibration["reliability"] == {"gpu_failures_per_mh": 100.0}
    assert d.goodput.interruptions_per_day > before
    assert window.qdoc.undo_stack.index() == index + 1
    edit(d.rates, row_of(d.rates, "restart_s"), 1, "-5")  # below the figure's range
    assert window.settle() and d.settle()
    assert window.qdoc.undo_stack.index() == index + 1  # refused: nothing pushed
    assert "not changed" in window.statusBar().currentMessage()
    assert d.rates.item(row_of(d.rates, "restart_s"), 1).text() == "600"
    edit(d.rates, row_of(d.rates, "restart_s"), 1, "soon")
    assert window.qdoc.undo_stack.index() == index + 1
    window.act_undo.trigger()
    assert window.settle() and d.settle()
    assert not (window.qdoc.doc.spec.calibration or {}).get("reliability")
    assert d.goodput.interruptions_per_day == pytest.approx(before)


def test_an_energy_price_out_of_range_in_the_file_is_located(tmp_path):
    from tests.conftest import run_cli

    text = (EXAMPLES / "h100-64gpu-infiniband.yaml").read_text()
    path = tmp_path / "c.yaml"
    path.write_text(text.replace("\nspec:\n", "\nspec:\n  prices:\n    usd_per_kwh: 99\n", 1))
    code, _out, err = run_cli("validate", path)
    assert code == 65 and f"{path}:" in err and "spec.prices.usd_per_kwh" in err and "0 to 10" in err, err
