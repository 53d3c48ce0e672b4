"""The canvas scene is composed of parts, each a plain object that owns its state; a drag of servers and
switches (the gestures part's MoveDrag) is one undo step per drag, to the nearest free slot or out of the racks."""
from PySide6.QtCore import QEvent, QPointF
from PySide6.QtWidgets import QGraphicsScene

from designer.core.io import dumps_document
from designer.ui.canvas.scene import CanvasScene
from tests.ui.test_editor import load, mouse, small_design, window  # noqa: F401


def test_the_scene_is_its_items_and_named_parts_not_mixins(window):
    assert CanvasScene.__bases__ == (QGraphicsScene,)
    for name in ("build", "cables", "detail", "heat", "gestures"):
        part = getattr(window.scene, name)
        assert type(part).__mro__ == (type(part), object), name  # a plain class, no Qt base, no mixin


def drag(window, item, delta: QPointF) -> None:
    start = item.sceneBoundingRect().center()
    mouse(window.view, QEvent.MouseButtonPress, start)
    for k in range(1, 11):
        mouse(window.view, QEvent.MouseMove, start + delta * (k / 10))
    mouse(window.view, QEvent.MouseButtonRelease, start + delta)


def test_dragging_a_server_or_switch_is_one_undo_step_to_a_free_slot_or_out_of_the_racks(window, tmp_path):
    load(window, small_design(), tmp_path)
    scene, stack, doc = window.scene, window.qdoc.undo_stack, window.qdoc.doc
    before, count = dumps_document(doc), stack.count()
    drag(window, scene.devices["n0"], QPointF(0, -40))  # up onto n1's slots: the nearest free one above
    assert (doc.find("nodes", "n0").rack, doc.find("nodes", "n0").slot) == ("r0", 8)
    drag(window, scene.devices["n1"], QPointF(120, 0))  # across into the switches' rack
    assert (doc.find("nodes", "n1").rack, doc.find("nodes", "n1").slot) == ("net", 4)
    eth0 = scene.devices["eth0"]
    drag(window, eth0, QPointF(400, 300))  # out of every rack: loose, where it was dropped
    assert doc.find("switches", "eth0").rack is None
    assert tuple(doc.spec.layout["positions"]["eth0"]) == (eth0.scenePos().x(), eth0.scenePos().y())
    assert [stack.text(i) for i in range(count, stack.count())] == ["Move 1 item"] * 3
    assert scene.gestures.drag is None  # let go on release
    for _ in range(3):
        stack.undo()
    assert dumps_document(doc) == before
