"""A rack-to-rack line shows the heat of its hottest cable bundle, also between an edit and the next
evaluation: after Edit > Delete of a line's hottest bundle and after Edit > Undo, the heat each line
shows is the one worked out from the bundles it holds at that moment."""
import numpy as np

from designer.ui.canvas.minimap import overview_marks

from tests.ui.test_editor import window  # noqa: F401  (the fixture)
from tests.ui.test_live_edits import A100, open_example


def shown_line_heat(layer) -> np.ndarray:
    return overview_marks(layer)[:, 4]


def line_heat_from_bundles(layer) -> np.ndarray:
    expected = np.full(len(layer.aggregates.a), -1, dtype=np.int64)
    rows = layer.bundle_aggregate
    inside = rows >= 0
    np.maximum.at(expected, rows[inside], layer.heat[inside])
    return expected


def test_a_rack_line_shows_its_hottest_bundle_right_after_a_delete_and_an_undo(window):
    open_example(window, A100)
    if not window.act_heat.isChecked():
        window.act_heat.trigger()
    assert window.settle()
    layer = window.scene.link_layer
    assert layer.heat is not None and len(layer.aggregates.a)
    # heat that differs between the bundles of a line (the example's loads are even): as a result sets it
    layer.heat = np.arange(len(layer.heat), dtype=np.int64) % 11
    shown_line_heat(layer)  # the lines' heat worked out once and kept
    # the hottest bundle of a line that has other bundles: deleting it cools the line
    lines = layer.bundle_aggregate
    counts = np.bincount(lines[lines >= 0], minlength=len(layer.aggregates.a))
    candidates = [r for r in np.argsort(-layer.heat).tolist() if lines[r] >= 0 and counts[lines[r]] > 1
                  and (layer.heat[lines == lines[r]] < layer.heat[r]).any()]
    assert candidates, "the example has a rack-to-rack line whose bundles differ in heat"
    row = candidates[0]
    ids = list(layer.bundles[row].link_ids)
    window.scene.select_ids(ids)
    window.actions["delete"].trigger()  # the canvas changes at once; the new heat comes later
    assert layer.bundle_aggregate[row] == -1
    assert (shown_line_heat(layer) == line_heat_from_bundles(layer)).all()
    assert window.settle()
    layer.heat = np.arange(len(layer.lines.a), dtype=np.int64) % 11
    shown_line_heat(layer)
    window.actions["undo"].trigger()
    assert layer.bundle_aggregate[row] >= 0
    assert (shown_line_heat(layer) == line_heat_from_bundles(layer)).all()
    assert window.settle()
    if layer.heat is not None:  # the result after the undo
        assert (shown_line_heat(layer) == line_heat_from_bundles(layer)).all()
