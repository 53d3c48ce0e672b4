"""The wheel scrolls the forms without editing them; Ctrl+Z undoes the document from any field.

Real QWheelEvents over unfocused fields (Job panel, Inspector, Generate dialog) must leave the
value and the undo stack alone; once the user clicks into the field the wheel steps it as usual.
Undo/redo keys pressed in a focused Job field reach the document's undo stack.
"""
import shutil

import pytest

from tests.conftest import EXAMPLES
from tests.ui.test_editor import window  # noqa: F401  (the fixture)



def wheel(widget, notches: int = -1) -> None:
    """One real wheel event over the widget's centre (negative: the wheel turned towards the user)."""
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    centre = QPointF(widget.rect().center())
    event = QWheelEvent(centre, QPointF(widget.mapToGlobal(centre)), QPoint(0, 0), QPoint(0, 120 * notches),
                        Qt.NoButton, Qt.NoModifier, Qt.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)
    QApplication.processEvents()


def click_into(qtbot, widget) -> None:
    """The user clicks into the field and so gives it the focus.

    A click on a combo box also opens its popup list, which the offscreen platform cannot show
    without warnings (no keyboard grab, no raise); for a combo the click's focus alone is given."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QComboBox

    if isinstance(widget, QComboBox):
        widget.setFocus(Qt.MouseFocusReason)
    else:
        qtbot.mouseClick(widget, Qt.LeftButton, pos=widget.rect().center())
    qtbot.waitUntil(widget.hasFocus)


@pytest.fixture
def opened(window, tmp_path):  # noqa: F811
    design = tmp_path / "design.yaml"
    shutil.copy(EXAMPLES / "h100-64gpu-infiniband.yaml", design)
    window.open_file(str(design))
    assert window.settle()
    window.activateWindow()
    return window


def scroll_area_of(widget):
    from PySide6.QtWidgets import QScrollArea

    parent = widget.parentWidget()
    while not isinstance(parent, QScrollArea):
        parent = parent.parentWidget()
    return parent


def test_the_wheel_over_an_unfocused_job_field_scrolls_the_form_and_edits_nothing(opened, qtbot):
    window = opened
    window.job_dock.raise_()  # the Job tab in front of Parts, as when the user reads it
    panel = window.job_panel
    combo = panel.editors["workload.swiglu"]
    window.view.setFocus()
    qtbot.waitUntil(window.view.hasFocus)
    stack = window.qdoc.undo_stack
    index, text, workload = stack.index(), combo.currentText(), window.qdoc.doc.spec.workload
    bar = scroll_area_of(combo).verticalScrollBar()
    bar.setValue(bar.minimum())
    for _ in range(3):
        wheel(combo)
    assert combo.currentText() == text and window.qdoc.doc.spec.workload == workload
    assert stack.index() == index, f"the wheel made an undo step: {stack.text(stack.index() - 1)!r}"
    assert not combo.hasFocus()
    assert bar.maximum() > 0  # the form is taller than its dock (1200 x 800 window) ...
    assert bar.value() > bar.minimum()  # ... and the wheel scrolled it instead of stepping the field

    schedule = panel.editors["parallelism.pipeline_schedule"]
    wheel(schedule)
    assert stack.index() == index and window.qdoc.doc.spec.parallelism.pipeline_schedule == schedule.currentText()

    click_into(qtbot, combo)
    wheel(combo)
    assert combo.currentText() != text
    assert stack.index() == index + 1 and stack.text(index) == "Edit job"


def test_the_wheel_over_an_unfocused_inspector_field_edits_nothing(opened, qtbot):
    window = opened
    window.scene.select_ids(["node0"])
    combo = window.inspector.editors["nic_kind"]
    window.view.setFocus()
    qtbot.waitUntil(window.view.hasFocus)
    stack = window.qdoc.undo_stack
    index = stack.index()
    for notches in (-1, 1, -1):
        wheel(combo, notches)
    assert window.qdoc.doc.find("nodes", "node0").nic_kind == "infiniband" and combo.currentText() == "infiniband"
    assert stack.index() == index

    click_into(qtbot, combo)
    wheel(combo, 1)  # away from the user: the kind above in the list
    assert window.qdoc.doc.find("nodes", "node0").nic_kind == combo.currentText() != "infiniband"
    assert stack.index() == index + 1


def test_the_wheel_over_unfocused_generate_dialog_fields_changes_nothing(window, qtbot):  # noqa: F811
    from designer.ui.dialogs.generator_dialog import GeneratorDialog

    dialog = GeneratorDialog(window)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    qtbot.waitUntil(dialog.server.servers.hasFocus)  # the dialog opens with the focus in Servers
    before = dialog.options()
    for field in (dialog.server.gpus_per_node, dialog.server.nics_per_node, dialog.server.accelerator,
                  dialog.network.tiers, dialog.network.switch_radix, dialog.network.oversubscription):
        wheel(field, 1)
        wheel(field, -1)
        wheel(field, -1)
    assert dialog.options() == before

    click_into(qtbot, dialog.server.gpus_per_node)
    wheel(dialog.server.gpus_per_node, -1)
    assert dialog.options()["gpus_per_node"] == before["gpus_per_node"] - 1


def test_ctrl_z_in_a_job_field_undoes_the_document(opened, qtbot):
    from PySide6.QtCore import Qt

    window = opened
    window.job_dock.raise_()
    doc = window.qdoc.doc
    field = window.job_panel.editors["parallelism.tensor_model_parallel_size"]
    assert doc.spec.parallelism.tensor_model_parallel_size == 2
    click_into(qtbot, field)
    field.selectAll()
    qtbot.keyClicks(field, "4")
    qtbot.keyClick(field, Qt.Key_Return)  # the edit is committed: one undo step
    assert window.qdoc.doc.spec.parallelism.tensor_model_parallel_size == 4
    assert field.hasFocus()

    qtbot.keyClick(field, Qt.Key_Z, Qt.ControlModifier)
    assert window.qdoc.doc.spec.parallelism.tensor_model_parallel_size == 2
    assert field.text() == "2" and field.hasFocus()

    qtbot.keyClick(field, Qt.Key_Z, Qt.ControlModifier | Qt.ShiftModifier)  # redo
    assert window.qdoc.doc.spec.parallelism.tensor_model_parallel_size == 4 and field.text() == "4"

    # Typing not yet committed is the field's own: Ctrl+Z takes it back, the document stays.
    field.selectAll()
    qtbot.keyClicks(field, "8")
    qtbot.keyClick(field, Qt.Key_Z, Qt.ControlModifier)
    assert field.text() == "4" and window.qdoc.doc.spec.parallelism.tensor_model_parallel_size == 4
    qtbot.keyClick(field, Qt.Key_Z, Qt.ControlModifier)  # nothing left to take back: the document's turn
    assert window.qdoc.doc.spec.parallelism.tensor_model_parallel_size == 2


def test_ctrl_z_in_an_inspector_field_undoes_the_document(opened, qtbot):
    from PySide6.QtCore import Qt

    window = opened
    window.scene.select_ids(["node0"])
    field = window.inspector.editors["slowdown"]
    click_into(qtbot, field)
    field.selectAll()
    qtbot.keyClicks(field, "1.5")
    qtbot.keyClick(field, Qt.Key_Return)
    assert window.qdoc.doc.find("nodes", "node0").slowdown == 1.5
    qtbot.keyClick(field, Qt.Key_Z, Qt.ControlModifier)
    assert window.qdoc.doc.find("nodes", "node0").slowdown == 1.0


@pytest.mark.parametrize("key", ["quick_geglu", "qk_layernorm", "disable_bias_linear", "multi_latent_attention"])
def test_a_models_on_off_key_is_chosen_as_preset_on_or_off_and_saved(opened, qtbot, tmp_path, key):
    """Every on/off key of the model that a preset may set offers the preset's value, on and off (as
    swiglu does), not a text field; picking "true" is an undoable job edit the saved file keeps."""
    from PySide6.QtWidgets import QComboBox

    from designer.core.io import load_document

    window = opened
    combo = window.job_panel.editors[f"workload.{key}"]
    assert isinstance(combo, QComboBox)
    assert [combo.itemText(i) for i in range(combo.count())] == ["(preset)", "true", "false"]
    assert combo.currentText() == "(preset)"
    combo.setCurrentText("true")
    combo.activated.emit(combo.currentIndex())  # what a click on the item sends
    assert getattr(window.qdoc.doc.spec.workload, key) is True
    saved = tmp_path / "saved.yaml"
    window.qdoc.save(str(saved))
    assert getattr(load_document(saved).spec.workload, key) is True
