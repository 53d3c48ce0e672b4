"""Rack-scale NVLink domains in the GUI: the Generate dialog's domain control, the
canvas band that shows which GPUs share NVLink, and NVLink switch trays as selectable elements."""
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QComboBox, QDockWidget, QLineEdit

from tests.ui.test_wheel_and_undo import click_into, wheel

EXAMPLE = Path(__file__).resolve().parents[2] / "resources" / "examples" / "gb200-nvl72-144gpu.yaml"
H100_EXAMPLE = EXAMPLE.with_name("h100-64gpu-infiniband.yaml")


@pytest.fixture
def dialog(qtbot):
    from designer.ui.dialogs.generator_dialog import GeneratorDialog

    d = GeneratorDialog()
    qtbot.addWidget(d)
    return d


def test_domain_choices_follow_the_accelerator_and_server_size(dialog):
    combo = dialog.server.nvlink_domain
    assert not combo.isEnabled() and combo.count() == 1 and combo.currentData() == 8  # H100: one server
    assert "nvlink_domain_gpus" not in dialog.options()
    dialog.set_options(gpu="GB200", gpus_per_node=4, nics_per_node=4)
    assert combo.isEnabled()
    assert [combo.itemData(i) for i in range(combo.count())] == list(range(4, 73, 4))
    assert combo.currentData() == 4 and "one server" in combo.currentText()
    dialog.set_options(nvlink_domain_gpus=72)
    assert dialog.options()["nvlink_domain_gpus"] == 72 and combo.currentText().startswith("72 (NVL72")
    dialog.set_options(gpus_per_node=2, nics_per_node=2)  # 72 is still whole servers: kept
    assert combo.currentData() == 72 and combo.count() == 36
    dialog.set_options(gpus_per_node=3)  # multiples of 3 up to 72: 72 is one of them
    assert combo.currentData() == 72
    dialog.set_options(gpus_per_node=4)
    with pytest.raises(ValueError, match="nvlink_domain_gpus must be one of"):
        dialog.set_options(nvlink_domain_gpus=70)
    dialog.set_options(gpu="H100", gpus_per_node=8, nics_per_node=8)  # clamped back to the server
    assert combo.currentData() == 8 and not combo.isEnabled() and "nvlink_domain_gpus" not in dialog.options()


def test_summary_counts_the_switch_trays(dialog):
    dialog.set_options(gpu="GB200", gpus_per_node=4, nics_per_node=4, nodes=36, nvlink_domain_gpus=72)
    text = dialog.summary.text()
    assert "NVLink domains of 72 GPUs: 2 domains, 18 NVLink switch trays" in text
    plan, doc = dialog.plan(), dialog.build_document()
    c = doc.counts()
    assert (c["switches"], c["links"], c["cables"], c["racks"]) == (plan.switches, plan.links, plan.cables,
                                                                     plan.racks)


def test_generate_an_nvl72_design_with_keys_and_the_generate_button(empty_window, qtbot):
    window = empty_window
    seen = {}

    def drive():
        dialog = QApplication.activeModalWidget()
        seen["dialog"] = dialog
        dialog.set_options(gpu="GB200", gpus_per_node=4, nics_per_node=4, nodes=36)
        combo = dialog.server.nvlink_domain
        wheel(combo, -1)  # the wheel over the unfocused field steps nothing
        seen["after_wheel"] = combo.currentData()
        click_into(qtbot, combo)
        QTest.keyClick(combo, Qt.Key_End)  # the largest domain: 72 GPUs, a whole NVL72 rack
        seen["chosen"] = combo.currentData()
        qtbot.mouseClick(dialog.ok_button, Qt.LeftButton)

    QTimer.singleShot(0, drive)
    window.act_generate.trigger()
    assert window.settle()  # the fabric is built in a thread (progress bar, Cancel): wait for it
    assert seen["after_wheel"] == 4 and seen["chosen"] == 72
    doc = window.qdoc.doc
    trays = [s for s in doc.switches if s.fabric == "nvlink"]
    assert doc.num_gpus() == 144 and len(trays) == 18
    assert {s.nvlink_domain for s in trays} == {"nvl0", "nvl1"}
    assert len(window.scene.domain_bands) == 2


@pytest.fixture
def nvl_window(empty_window):
    w = empty_window
    w.open_file(str(EXAMPLE))
    w.settle()
    w.findChild(QDockWidget, "Inspector").raise_()
    w.view.fitInView(w.scene.itemsBoundingRect(), Qt.KeepAspectRatio)
    return w


def test_domain_band_surrounds_exactly_its_trays_and_is_labelled(nvl_window):
    scene = nvl_window.scene
    bands = {b.domain: b for b in scene.domain_bands}
    assert set(bands) == {"nvl0", "nvl1"}
    doc = nvl_window.qdoc.doc
    for domain, band in bands.items():
        assert band.label.text().replace("\n", " · ") == f"NVL72 · {domain} · 72 GPUs"
        area = band.sceneBoundingRect()
        members = [e.id for e in list(doc.nodes) + list(doc.switches) if e.nvlink_domain == domain]
        assert len(members) == 27
        for element_id in members:
            assert area.contains(scene.devices[element_id].sceneBoundingRect())
        others = [e.id for e in doc.nodes if e.nvlink_domain not in (None, domain)]
        assert not any(area.intersects(scene.devices[i].sceneBoundingRect()) for i in others)
    scene.detail.apply(0.2)  # zoomed far out: no label (it would not read)
    assert not any(b.label.isVisible() for b in bands.values())
    scene.detail.apply(1.0)
    assert all(b.label.isVisible() for b in bands.values())


def test_switch_tray_is_selectable_and_inspectable(nvl_window):
    window = nvl_window
    scene = window.scene
    item = scene.devices["nvl0-switch4"]
    window.view.centerOn(item)
    for _ in range(6):
        window.view.scale(1.6, 1.6)
    window.view.centerOn(item)
    QApplication.processEvents()
    point = window.view.mapFromScene(item.sceneBoundingRect().center())
    QTest.mouseClick(window.view.viewport(), Qt.LeftButton, Qt.NoModifier, point)
    inspector = window.inspector
    assert inspector.ids == ["nvl0-switch4"]
    assert "switch nvl0-switch4" in inspector.title.text()
    domain = inspector.editors["nvlink_domain"]
    assert isinstance(domain, QLineEdit) and domain.text() == "nvl0"
    assert isinstance(inspector.editors["fabric"], QComboBox) and inspector.editors["fabric"].currentText() == "nvlink"
    assert "NVLink switch tray nvl0-switch4" in item.toolTip()


def test_hgx_design_has_no_domain_band(empty_window):
    empty_window.open_file(str(H100_EXAMPLE))
    empty_window.settle()
    assert empty_window.scene.domain_bands == []


def test_moving_a_tray_to_another_domain_in_the_inspector_redraws_the_bands(nvl_window, qtbot):
    window = nvl_window
    window.scene.select_ids(["node18"])  # the first tray of nvl1, in rack1
    inspector = window.inspector
    qtbot.waitUntil(lambda: inspector.ids == ["node18"])
    field = inspector.editors["nvlink_domain"]
    field.setFocus()
    field.selectAll()
    QTest.keyClicks(field, "nvl0")
    QTest.keyClick(field, Qt.Key_Return)
    assert window.qdoc.doc.find("nodes", "node18").nvlink_domain == "nvl0"
    rack1 = {b.domain for b in window.scene.domain_bands if b.parentItem() is window.scene.racks["rack1"]}
    assert rack1 == {"nvl0", "nvl1"}  # node18 now shares NVLink with rack0's trays: its own band says so
    window.act_undo.trigger()
    rack1 = {b.domain for b in window.scene.domain_bands if b.parentItem() is window.scene.racks["rack1"]}
    assert rack1 == {"nvl1"}
