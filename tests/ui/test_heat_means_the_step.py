"""Link heat means the step: a cable is coloured by the share of the step it is busy, not by its
busiest phase; View > Heat by Busiest Phase switches to the phase view; the legend says which;
the Logical Fabric view's bundles show the same heat."""
import numpy as np
import pytest
from PySide6.QtCore import QSettings

from tests.conftest import EXAMPLES

DESIGN = "h100-64gpu-infiniband.yaml"  # its rail cables: ~4 % of the step, ~93 % of the short DP phase


@pytest.fixture
def window(qtbot, tmp_path):
    from designer.ui.window.main_window import MainWindow

    w = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat))
    qtbot.addWidget(w)
    w.resize(1600, 1000)
    w.show()
    qtbot.waitExposed(w)
    w.open_file(str(EXAMPLES / DESIGN))
    assert w.settle()
    w.act_heat.trigger()  # View > Link Heat
    assert w.settle()
    yield w
    w.qdoc.undo_stack.setClean()
    w.close()


def _rail_cable(w):
    """A server-to-leaf cable, its share of the step and of its busiest phase (the engine's numbers)."""
    result, links = w.result, w.qdoc.doc.links
    index = next(i for i, link in enumerate(links) if link.a.startswith("node0:") and "leaf" in link.b)
    busy = {kind: float(b[index]) for kind, b in result.link_busy_s.items()}
    step = float(result.link_utilization_array[index])
    phase = max(busy[kind] / result.link_phase_s[kind] for kind in busy if result.link_phase_s[kind] > 0)
    return index, step, min(phase, 1.0)


def _menu_action(w, text):
    view_menu = next(a.menu() for a in w.menuBar().actions() if a.text().replace("&", "") == "View")
    return next(a for a in view_menu.actions() if a.text().replace("&", "") == text)


def test_a_cable_busy_a_few_percent_of_the_step_is_cold_and_the_phase_view_is_a_menu_choice(window):
    from designer.ui.canvas import style

    w = window
    index, step, phase = _rail_cable(w)
    assert step < 0.06 and phase > 0.8  # busy all its short phase, idle most of the step
    scene, layer = w.scene, w.scene.link_layer
    row = layer.index[scene.cables.bundle_key(w.qdoc.doc.links[index])]
    bundle = layer.bundles.link_ids(row)
    positions = {link.id: i for i, link in enumerate(w.qdoc.doc.links)}
    busiest_step = max(float(w.result.link_utilization_array[positions[i]]) for i in bundle)

    # share of the step (the default): the bundle's colour is its busiest cable's share of the step
    assert scene.heat.mode == "step"
    assert layer.heat[row] == round(busiest_step * 10) <= 1
    assert style.heat_color(layer.heat[row] / 10).green() > style.heat_color(1.0).green() + 60  # green, not red
    assert row not in layer.marked  # its phase exposes under 5 % of the step: not outlined
    assert w.view.legend.rows()[0] == ("title", "Cables (heat: share of the step)")
    assert "of the step" in layer.heat_tip(row).splitlines()[0]

    action = _menu_action(w, "Heat by Busiest Phase")
    action.trigger()  # View > Heat by Busiest Phase
    assert scene.heat.mode == "phase" and action.isChecked()
    assert layer.heat[row] >= round(phase * 10) >= 8  # amber to red: busy most of its phase
    assert row in layer.marked  # the bottleneck of an exposed phase
    assert w.view.legend.rows()[0] == ("title", "Cables (heat: busiest phase)")
    assert "DP phase" in layer.heat_tip(row).splitlines()[0]
    assert QSettings(w.settings.fileName(), QSettings.IniFormat).value("view/heat_by_phase", type=bool)

    action.trigger()  # back to the share of the step
    assert scene.heat.mode == "step" and layer.heat[row] == round(busiest_step * 10)


def test_the_logical_view_bundles_show_the_same_heat(window, qtbot):
    w = window
    index, step, phase = _rail_cable(w)
    w.act_logical.trigger()  # View > Logical Fabric View
    qtbot.waitUntil(lambda: w.logical_view.bundle_layer is not None)
    view = w.logical_view
    model = view.layout_model
    k = next(k for k, b in enumerate(model.bundles) if index in np.asarray(b.link_rows).tolist())
    rows = np.asarray(model.bundles[k].link_rows)
    assert view.bundle_heat(k) == pytest.approx(float(np.max(w.result.link_utilization_array[rows])))
    assert view.bundle_heat(k) < 0.06
    _menu_action(w, "Heat by Busiest Phase").trigger()
    assert view.bundle_heat(k) >= phase - 1e-9 and view.bundle_heat(k) > 0.8
    w.act_heat.trigger()  # heat off: the bundles take their kind colours again
    assert view.bundle_heat(k) is None
