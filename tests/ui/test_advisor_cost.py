"""The Advisor's table shows each change's tokens-per-dollar change beside its speed-up, and the
capex / fabric-cost change in the row's tooltip (docs/cost.md)."""
from tests.ui.test_advisor import analysed, raise_advisor, window  # noqa: F401  (the fixture)


def test_advisor_rows_show_the_tokens_per_dollar_column(window, qtbot):  # noqa: F811
    from designer.ui.panels.advisor_changes import COL_COST, COLUMNS

    panel = raise_advisor(window, qtbot)
    analysed(panel, qtbot)
    assert panel.changes.table.horizontalHeaderItem(COL_COST).text() == COLUMNS[COL_COST] == "Tokens/$"
    rows = [a for a in panel.changes.advice() if not a.error]
    priced = [a for a in rows if a.tokens_per_usd_change is not None]
    assert len(priced) >= 10
    for a in priced:
        item = panel.changes.table.item(panel.changes.row_of(a), COL_COST)
        assert item.text() == f"{a.tokens_per_usd_change * 100:+.1f}%"
        assert "cost: " + a.cost_note in item.toolTip()
    nic = next(a for a in rows if a.id == "nic-2x")  # more fabric for no speed: fewer tokens per dollar
    assert panel.changes.table.item(panel.changes.row_of(nic), COL_COST).text().startswith("-")
    assert "fabric cost" in panel.changes.table.item(panel.changes.row_of(nic), COL_COST).toolTip()
    unpriced = next(a for a in rows if a.id == "scale-up-2x")
    assert panel.changes.table.item(panel.changes.row_of(unpriced), COL_COST).text() == "\u2013"
    assert "not priced" in panel.changes.table.item(panel.changes.row_of(unpriced), COL_COST).toolTip()
