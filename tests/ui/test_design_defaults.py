"""The Parts palette and the Generate dialog start from the open design's own parts (its
accelerator, NIC model and speed, switch model and radix, fabric), not from H100 / 400G / 64."""
import shutil

import pytest
from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QDialogButtonBox

from tests.conftest import EXAMPLES
from tests.ui.test_editor import drop


@pytest.fixture
def window(empty_window):
    return empty_window


def open_example(window, tmp_path, name):
    path = tmp_path / name  # a copy: the test never writes beside the installed examples
    shutil.copy(EXAMPLES / name, path)
    window.open_file(str(path))
    window.settle()


def generate_dialog(window, monkeypatch):
    """Generate... from the menu, with the modal dialog caught instead of run."""
    from designer.ui.dialogs.generator_dialog import GeneratorDialog

    shown = []
    monkeypatch.setattr(GeneratorDialog, "exec", lambda self: (shown.append(self), 0)[1])
    window.act_generate.trigger()
    assert len(shown) == 1
    return shown[0]


A100_PARTS = dict(gpu="A100-SXM4-80GB", gpus_per_node=8, nics_per_node=8, nic_gbps=200.0, fabric="infiniband",
                  switch_radix=40, rail_optimized=True, nodes=128)


def test_generate_dialog_starts_from_the_a100_design(window, tmp_path, monkeypatch):
    open_example(window, tmp_path, "a100-1024gpu-rail-infiniband.yaml")
    dialog = generate_dialog(window, monkeypatch)
    options = dialog.options()
    assert {k: options[k] for k in A100_PARTS} == A100_PARTS
    assert dialog.server.accelerator.currentText() == "A100-SXM4-80GB"
    assert dialog.network.nic_gbps.currentText() == "200"
    assert "ConnectX-6-HDR-200G" in dialog.parts.text() and "QM8700-HDR" in dialog.parts.text()
    assert dialog.is_valid()
    # Restore Defaults goes back to the design's parts, not to the CLI's H100 / 400G / 64
    dialog.network.nic_gbps.setCurrentText("800")
    dialog.server.accelerator.setCurrentText("H100-SXM5-80GB")
    dialog.buttons.button(QDialogButtonBox.RestoreDefaults).click()
    assert {k: dialog.options()[k] for k in A100_PARTS} == A100_PARTS
    # a fabric generated from these defaults is built of the design's parts
    built = dialog.build_document()
    assert {n.nic_model for n in built.nodes} == {"ConnectX-6-HDR-200G"}
    assert {s.model for s in built.switches} == {"QM8700-HDR"}


def test_generate_dialog_follows_the_document_each_time(window, tmp_path, monkeypatch):
    open_example(window, tmp_path, "a100-1024gpu-rail-infiniband.yaml")
    assert generate_dialog(window, monkeypatch).options()["gpu"] == "A100-SXM4-80GB"
    monkeypatch.undo()
    open_example(window, tmp_path, "h100-roce-2to1-ethernet.yaml")
    options = generate_dialog(window, monkeypatch).options()
    assert (options["gpu"], options["fabric"], options["nic_gbps"]) == ("H100-SXM5-80GB", "ethernet", 400.0)


@pytest.mark.slow
def test_palette_parts_are_the_designs_own(window, tmp_path):
    palette = window.palette
    open_example(window, tmp_path, "a100-1024gpu-rail-infiniband.yaml")
    assert palette.accelerator.currentText() == "A100-SXM4-80GB"
    assert palette.nic_gbps.currentText() == "200" and palette.nic_kind.currentText() == "infiniband"
    assert palette.nic_model.text() == "ConnectX-6-HDR-200G"
    assert palette.switch_model.currentText() == "QM8700-HDR" and palette.switch_radix.value() == 40

    doc = window.qdoc.doc
    empty = QPointF(-3000, -3000)  # outside every rack: the part lands loose
    drop(window, palette.describe("server"), empty)
    node = doc.nodes[-1]
    assert (node.accelerator, node.nic_gbps, node.nic_model, node.nic_kind) == (
        "A100-SXM4-80GB", 200.0, "ConnectX-6-HDR-200G", "infiniband")
    drop(window, palette.describe("infiniband-switch"), empty + QPointF(0, -400))
    switch = doc.switches[-1]
    assert (switch.model, switch.radix, switch.port_gbps) == ("QM8700-HDR", 40, 200.0)

    open_example(window, tmp_path, "h100-roce-2to1-ethernet.yaml")  # another design: its parts
    assert palette.accelerator.currentText() == "H100-SXM5-80GB"
    assert palette.nic_kind.currentText() == "ethernet" and palette.nic_gbps.currentText() == "400"
    assert palette.switch_model.currentText() == "SN5400-400GbE"
