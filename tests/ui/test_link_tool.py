"""The link tool as a user drives it: the palette button, presses, moves and releases on the
canvas, Esc. Whatever ends the tool gives back the selection band, the button and the rubber
line; the document never gets a link of unknown kind, so a save always reopens."""
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QDockWidget, QGraphicsLineItem, QGraphicsView

from designer.core.io import load_document
from designer.core.model.elements import LINK_KINDS
from tests.ui.test_editor import load, small_design


@pytest.fixture
def window(empty_window, tmp_path):
    w = empty_window
    load(w, small_design(), tmp_path)
    w.findChild(QDockWidget, "Parts").raise_()  # the palette's tab in front, as a user would bring it
    w.view.fitInView(w.scene.itemsBoundingRect(), Qt.KeepAspectRatio)
    yield w


def at(window, device_id: str) -> QPoint:
    """The viewport point at the centre of a device."""
    return window.view.mapFromScene(window.scene.devices[device_id].sceneBoundingRect().center())


def turn_on(window, kind="infiniband"):
    button = window.palette.tool_buttons[kind]
    QTest.mouseClick(button, Qt.LeftButton)
    assert button.isChecked() and window.view.link_kind == kind
    assert window.view.dragMode() == QGraphicsView.NoDrag
    return button


def rubber_lines(window):
    return [i for i in window.scene.items() if isinstance(i, QGraphicsLineItem)]


def assert_tool_off(window, button):
    assert not button.isChecked()
    assert window.view.link_kind is None and window.view.interaction is None
    assert window.view.dragMode() == QGraphicsView.RubberBandDrag
    assert rubber_lines(window) == []


def drag(window, a: QPoint, b: QPoint, escape_midway=False):
    viewport = window.view.viewport()
    QTest.mousePress(viewport, Qt.LeftButton, Qt.NoModifier, a)
    QTest.mouseMove(viewport, (a + b) / 2)
    if escape_midway:
        QTest.keyClick(viewport, Qt.Key_Escape)
    QTest.mouseMove(viewport, b)
    QTest.mouseRelease(viewport, Qt.LeftButton, Qt.NoModifier, b)


def test_escape_while_drawing_adds_nothing_and_gives_everything_back(window, tmp_path):
    doc = window.qdoc.doc
    before = [link.id for link in doc.links]
    button = turn_on(window)
    drag(window, at(window, "n0"), at(window, "n1"), escape_midway=True)
    assert [link.id for link in doc.links] == before  # no link, of kind '' or any other
    assert_tool_off(window, button)
    assert window.qdoc.undo_stack.count() == 0
    # the selection band works again: a drag over both servers selects them
    rack = window.scene.racks["r0"].sceneBoundingRect()
    view = window.view
    corner_a = view.mapFromScene(rack.topLeft()) - QPoint(20, 20)
    corner_b = view.mapFromScene(rack.bottomRight()) + QPoint(20, 20)
    drag(window, corner_a, corner_b)
    assert {"n0", "n1"} <= set(window.scene.selected_ids())
    path = tmp_path / "after-escape.yaml"
    window.qdoc.save(str(path))
    assert load_document(path) == doc


def test_a_press_on_empty_canvas_ends_the_tool(window):
    button = turn_on(window)
    empty = window.view.mapFromScene(window.scene.racks["r0"].sceneBoundingRect().topLeft()) - QPoint(40, 40)
    QTest.mousePress(window.view.viewport(), Qt.LeftButton, Qt.NoModifier, empty)
    QTest.mouseRelease(window.view.viewport(), Qt.LeftButton, Qt.NoModifier, empty)
    assert_tool_off(window, button)


def test_switching_tools_hands_over_cleanly(window):
    ib = turn_on(window, "infiniband")
    eth = turn_on(window, "ethernet")
    assert not ib.isChecked() and eth.isChecked() and window.view.link_kind == "ethernet"
    QTest.mouseClick(eth, Qt.LeftButton)  # off again
    assert_tool_off(window, eth)
    assert not ib.isChecked()


def test_a_normal_drag_still_draws_a_valid_link_and_the_tool_stays_on(window, tmp_path):
    window.qdoc.doc.update("n1", nic_count=4)
    button = turn_on(window)
    count = len(window.qdoc.doc.links)
    drag(window, at(window, "n1"), at(window, "leaf0"))
    links = window.qdoc.doc.links
    assert len(links) == count + 1
    link = links[-1]
    assert link.kind == "infiniband" and link.kind in LINK_KINDS and link.a == "n1:nic2"
    assert button.isChecked() and window.view.link_kind == "infiniband" and rubber_lines(window) == []
    drag(window, at(window, "n1"), at(window, "leaf0"))  # a second cable with the same tool
    assert len(links) == count + 2 and links[-1].a == "n1:nic3"
    QTest.keyClick(window.view.viewport(), Qt.Key_Escape)
    assert_tool_off(window, button)
    path = tmp_path / "drawn.yaml"
    window.qdoc.save(str(path))
    assert load_document(path) == window.qdoc.doc


def test_opening_a_file_while_drawing_ends_the_tool(window, tmp_path):
    button = turn_on(window)
    viewport = window.view.viewport()
    a = at(window, "n0")
    QTest.mousePress(viewport, Qt.LeftButton, Qt.NoModifier, a)
    QTest.mouseMove(viewport, a + QPoint(30, 30))
    assert len(rubber_lines(window)) == 1
    load(window, small_design(), tmp_path)  # the scene is rebuilt under the half-drawn cable
    QTest.mouseRelease(viewport, Qt.LeftButton, Qt.NoModifier, at(window, "n1"))
    assert_tool_off(window, button)
    assert len(window.qdoc.doc.links) == 4


def test_the_window_refuses_a_link_of_unknown_kind(window):
    before = len(window.qdoc.doc.links)
    assert window.edits.request_link("n1", "leaf0", "") is False
    assert len(window.qdoc.doc.links) == before
    assert "not one of" in window.statusBar().currentMessage()
