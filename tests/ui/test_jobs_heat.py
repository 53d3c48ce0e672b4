"""Link heat with several jobs: a cable is as busy as all the jobs on it together, its tooltip says
which job uses it how much, and (in the phase view) the outline marks every bottleneck link of an
exposed phase."""
import numpy as np
import pytest
from PySide6.QtCore import QSettings

from tests.conftest import EXAMPLES


@pytest.mark.slow
def test_heat_adds_the_jobs_and_names_them(qtbot, tmp_path):
    from designer.ui.window.main_window import MainWindow

    w = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat))
    qtbot.addWidget(w)
    w.resize(1600, 1000)
    w.show()
    qtbot.waitExposed(w)
    w.open_file(str(EXAMPLES / "shared-roce-512gpu-3jobs.yaml"))
    assert w.settle()
    w.act_heat.trigger()  # View > Link Heat
    assert w.settle()
    result = w.result
    first = result.jobs[0].result.link_utilization_array
    moe = result.jobs[2].result.link_utilization_array
    only_moe = np.flatnonzero((moe > 0.05) & (first == 0))  # cables the first job never uses
    assert only_moe.size
    layer, scene = w.scene.link_layer, w.scene
    link = w.qdoc.doc.links[int(only_moe[0])]
    row = layer.index[scene.cables.bundle_key(link)]
    assert layer.heat[row] > 0  # the first job alone would leave it cold
    assert "by job: qwen3-30b-moe" in layer.heat_tip(row)
    w.close()


@pytest.mark.slow
def test_the_outline_marks_every_bundle_holding_a_critical_link(qtbot, tmp_path):
    """View > Heat by Busiest Phase outlines each bundle with a link that is the bottleneck of an exposed
    phase: the same bundles a link-by-link look-up finds (the scene finds them for all links in one pass)."""
    from designer.ui.window.main_window import MainWindow

    w = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat))
    qtbot.addWidget(w)
    w.resize(1600, 1000)
    w.show()
    for name in ("a100-1024gpu-rail-infiniband.yaml", "shared-roce-512gpu-3jobs-spine-down.yaml"):
        w.open_file(str(EXAMPLES / name))
        assert w.settle()
        if not w.act_heat.isChecked():
            w.act_heat.trigger()  # View > Link Heat
        if not w.act_heat_phase.isChecked():
            w.act_heat_phase.trigger()  # View > Heat by Busiest Phase
        assert w.settle()
        scene, layer, links = w.scene, w.scene.link_layer, w.qdoc.doc.links
        critical = np.flatnonzero(w.result.link_critical)
        assert critical.size, name
        keys = {scene.cables.bundle_key(links[i]) for i in critical.tolist()}
        assert layer.marked == {layer.index[k] for k in keys if k in layer.index} and layer.marked, name
        w.qdoc.undo_stack.setClean()
    w.close()
