"""The editor through its widgets: drops, drags, links, undo, copy/paste, files, recovery."""
import pytest
from PySide6.QtCore import QEvent, QMimeData, QPoint, QPointF, Qt
from PySide6.QtGui import QDropEvent, QMouseEvent
from PySide6.QtWidgets import QApplication
from PySide6.QtTest import QTest

from designer.core.io import dumps_document, load_document
from designer.core.model import Document, Link, Node, Rack, Switch
from designer.core.model.document import ClusterSpec
from designer.ui.document import commands
from designer.ui.canvas.view import MIME_PART
from tests.conftest import EXAMPLES


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("DESIGNER_RECOVERY_DIR", str(tmp_path / "recovery"))
    from PySide6.QtCore import QSettings

    from designer.ui.window.main_window import MainWindow

    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)
    w = MainWindow(settings)
    qtbot.addWidget(w)
    w.resize(1200, 800)
    w.show()
    qtbot.waitExposed(w)
    # A test must never block on the unsaved-changes prompt: answer it, and record that it was asked.
    from PySide6.QtWidgets import QMessageBox

    w.prompts = []
    monkeypatch.setattr(QMessageBox, "question", staticmethod(
        lambda *a, **k: (w.prompts.append(a[2] if len(a) > 2 else ""), QMessageBox.Discard)[1]))
    yield w


def small_design() -> Document:
    racks = [Rack(id="r0", x=0, y=0), Rack(id="net", x=120, y=0)]
    nodes = [Node(id=f"n{i}", accelerator="H100", nic_count=2, rack="r0", slot=4 * i) for i in range(2)]
    switches = [Switch(id="leaf0", fabric="infiniband", tier="leaf", radix=16, rack="net", slot=0),
                Switch(id="eth0", fabric="ethernet", tier="leaf", radix=16, rack="net", slot=2)]
    links = [Link(id=f"l{i}", a=f"n{i // 2}:nic{i % 2}", b=f"leaf0:p{i}", kind="infiniband", bandwidth_gbps=400)
             for i in range(4)]
    return Document(ClusterSpec(racks=racks, nodes=nodes, switches=switches, links=links))


def load(window, doc: Document, tmp_path):
    path = tmp_path / "design.yaml"
    from designer.core.io import save_document

    save_document(doc, path)
    window.open_file(str(path))
    window.settle()
    return path


def drop(window, part: str, scene_pos: QPointF) -> None:
    """What a drag from the palette delivers: enter, move, drop (QDrag.exec cannot run headless)."""
    from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent

    view = window.view
    data = QMimeData()
    data.setData(MIME_PART, part.encode())
    pos = view.mapFromScene(scene_pos)
    for event in (QDragEnterEvent(pos, Qt.CopyAction, data, Qt.LeftButton, Qt.NoModifier),
                  QDragMoveEvent(pos, Qt.CopyAction, data, Qt.LeftButton, Qt.NoModifier),
                  QDropEvent(QPointF(pos), Qt.CopyAction, data, Qt.LeftButton, Qt.NoModifier)):
        QApplication.sendEvent(view.viewport(), event)


def mouse(view, kind, scene_pos, buttons=Qt.LeftButton):
    pos = QPointF(view.mapFromScene(scene_pos))
    button = Qt.LeftButton if kind != QEvent.MouseMove else Qt.NoButton
    event = QMouseEvent(kind, pos, view.viewport().mapToGlobal(pos), button,
                        buttons if kind != QEvent.MouseButtonRelease else Qt.NoButton, Qt.NoModifier)
    QApplication.sendEvent(view.viewport(), event)


def test_palette_drop_creates_a_server_in_the_rack(window, tmp_path):
    load(window, small_design(), tmp_path)
    rack = window.scene.racks["r0"].sceneBoundingRect()
    before = len(window.qdoc.doc.nodes)
    drop(window, "server?accelerator=H200-SXM5-141GB&count=8&nic_gbps=400&nic_kind=infiniband",
         QPointF(rack.center().x(), rack.top() + 20))
    doc = window.qdoc.doc
    assert len(doc.nodes) == before + 1
    node = doc.nodes[-1]
    assert node.accelerator == "H200-SXM5-141GB" and node.rack == "r0" and node.slot is not None
    assert node.id in window.scene.devices
    window.qdoc.undo_stack.undo()
    assert len(doc.nodes) == before


def test_palette_drop_of_a_rack_and_an_accelerator(window, tmp_path):
    load(window, small_design(), tmp_path)
    drop(window, "rack", QPointF(600, 50))
    assert len(window.qdoc.doc.racks) == 3
    n0 = window.scene.devices["n0"].sceneBoundingRect().center()
    window.qdoc.doc.update("n0", accelerator_count=7)
    drop(window, "accelerator?accelerator=H100-SXM5-80GB", n0)
    assert window.qdoc.doc.find("nodes", "n0").accelerator_count == 8
    drop(window, "accelerator?accelerator=H100-SXM5-80GB", n0)  # the 9th is refused
    assert window.qdoc.doc.find("nodes", "n0").accelerator_count == 8
    assert "the most" in window.statusBar().currentMessage()


def test_a_drag_is_one_undo_step(window, tmp_path, qtbot):
    load(window, small_design(), tmp_path)
    view, scene = window.view, window.scene
    before = dumps_document(window.qdoc.doc)
    rack = scene.racks["r0"]
    start = rack.sceneBoundingRect().center() + QPointF(0, -60)  # the rack, above its servers
    count = window.qdoc.undo_stack.count()
    mouse(view, QEvent.MouseButtonPress, start)
    for k in range(1, 11):
        mouse(view, QEvent.MouseMove, start + QPointF(30 * k, 12 * k))
    mouse(view, QEvent.MouseButtonRelease, start + QPointF(300, 120))
    doc = window.qdoc.doc
    r0 = doc.find("racks", "r0")
    assert (r0.x, r0.y) != (0, 0) and r0.x % 12 == 0  # snapped to the grid
    assert window.qdoc.undo_stack.count() == count + 1
    # the cables followed the rack
    key = next(k for k in scene.cables.bundles if "n0" in k)
    row = scene.link_layer.index[key]
    assert max(scene.link_layer.lines.a[row][0], scene.link_layer.lines.b[row][0]) > 200
    window.qdoc.undo_stack.undo()
    assert dumps_document(doc) == before
    window.qdoc.undo_stack.redo()
    assert doc.find("racks", "r0").x == r0.x


def test_undo_then_redo_restores_the_exact_document(window, tmp_path):
    load(window, small_design(), tmp_path)
    doc = window.qdoc.doc
    texts = [dumps_document(doc)]
    window.qdoc.push(commands.SetFields(window.qdoc, {"n0": {"accelerator_count": 4, "nic_count": 3}}))
    texts.append(dumps_document(doc))
    window.scene.select_ids(["n1"])
    window.edits.delete_selection()
    texts.append(dumps_document(doc))
    assert len(doc.links) == 2  # n1's cables went with it
    assert window.edits.request_link("n0", "leaf0", "infiniband")
    texts.append(dumps_document(doc))
    assert window.qdoc.undo_stack.count() == 3
    stack = window.qdoc.undo_stack
    for expected in reversed(texts[:-1]):
        stack.undo()
        assert dumps_document(doc) == expected
    for expected in texts[1:]:
        stack.redo()
        assert dumps_document(doc) == expected


def test_link_validation_refuses_the_wrong_kind(window, tmp_path):
    load(window, small_design(), tmp_path)
    doc = window.qdoc.doc
    before = len(doc.links)
    assert window.edits.request_link("n0", "eth0", "infiniband") is False
    assert "cannot plug into ethernet switch eth0" in window.statusBar().currentMessage()
    assert window.edits.request_link("n0", "eth0", "ethernet") is False  # its NICs are InfiniBand
    assert "infiniband NICs" in window.statusBar().currentMessage()
    assert window.edits.request_link("n0", "leaf0", "infiniband") is False  # both NICs already cabled
    assert "no free NIC" in window.statusBar().currentMessage()
    assert len(doc.links) == before
    doc.update("n0", nic_count=3)
    assert window.edits.request_link("n0", "leaf0", "infiniband") is True
    link = doc.links[-1]
    assert link.a == "n0:nic2" and link.b == "leaf0:p4"  # the free ports were picked


def test_drawing_a_link_with_the_tool(window, tmp_path):
    load(window, small_design(), tmp_path)
    window.qdoc.doc.update("n1", nic_count=3)
    window.palette.tool_buttons["infiniband"].setChecked(True)
    view, scene = window.view, window.scene
    view.fitInView(scene.itemsBoundingRect())
    a = scene.devices["n1"].sceneBoundingRect().center()
    b = scene.devices["leaf0"].sceneBoundingRect().center()
    mouse(view, QEvent.MouseButtonPress, a)
    mouse(view, QEvent.MouseMove, (a + b) / 2)
    mouse(view, QEvent.MouseButtonRelease, b)
    assert window.qdoc.doc.links[-1].a == "n1:nic2"


def test_copy_paste_keeps_inner_links(window, tmp_path):
    doc = small_design()
    # a rack holding servers and their leaf: the cables are inside the copied set
    for s in doc.switches:
        s.rack, s.slot = "r0", 20 + doc.switches.index(s) * 2
    load(window, doc, tmp_path)
    window.scene.select_ids(["r0"])
    text = window.edits.copy()
    assert text and "leaf0" in text
    new_ids = window.edits.paste(text)
    d = window.qdoc.doc
    assert len(d.racks) == 3 and len(d.nodes) == 4 and len(d.links) == 8
    new_nodes = {i for i in new_ids if d.find("nodes", i)}
    new_links = [l for l in d.links if l.a.split(":")[0] in new_nodes]
    assert len(new_links) == 4 and all(l.b.split(":")[0] not in ("leaf0",) for l in new_links)
    assert set(window.scene.selected_ids()) >= set(new_ids) - {l.id for l in d.links}
    window.qdoc.undo_stack.undo()
    assert len(d.links) == 4


def test_duplicate_a_rack_16_times(window, tmp_path):
    doc = small_design()
    for s in doc.switches:
        s.rack, s.slot = "r0", 20 + doc.switches.index(s) * 2
    load(window, doc, tmp_path)
    window.scene.select_ids(["r0"])
    window.edits.duplicate(16)
    d = window.qdoc.doc
    assert len(d.racks) == 18 and len(d.nodes) == 34 and len(d.links) == 4 * 17
    xs = sorted(r.x for r in d.racks if r.id != "net")
    assert len(set(xs)) == 17  # side by side, not on top of each other
    from designer.core.design_check import check_document
    errors = [p for p in check_document(d) if p.severity == "error" and "overlap" not in p.message]
    # 17 islands (a leaf and its two servers each) and no spine: the check says each leaf needs
    # up-links, and nothing else is wrong with the copies (ids, ports, cables)
    assert errors and all("has no up-links" in p.message for p in errors), errors
    window.qdoc.undo_stack.undo()  # one step takes all 16 away
    assert len(d.racks) == 2


def test_save_and_open_round_trip(window, tmp_path, qtbot):
    path = load(window, load_document(EXAMPLES / "h100-64gpu-infiniband.yaml"), tmp_path)
    window.qdoc.push(commands.SetFields(window.qdoc, {"node0": {"slowdown": 1.2}}))
    assert window.isWindowModified()
    out = tmp_path / "saved.yaml"
    assert window.files.save_to(str(out))
    assert not window.isWindowModified() and "saved.yaml" in window.windowTitle()
    from designer.ui.window.main_window import MainWindow

    other = MainWindow(window.settings)
    qtbot.addWidget(other)
    other.open_file(str(out))
    assert other.qdoc.doc == window.qdoc.doc
    assert other.qdoc.doc.find("nodes", "node0").slowdown == 1.2
    assert str(out.resolve()) in window.files.recent()


def test_a_file_that_fails_to_open_loses_nothing(window, tmp_path):
    load(window, small_design(), tmp_path)
    window.qdoc.push(commands.SetFields(window.qdoc, {"n0": {"name": "kept"}}))
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: designer/v1\nkind: Cluster\nspec:\n  nodes: [{id: x, acelerator: H100}]\n")
    from designer.core.problems import DesignerError
    with pytest.raises(DesignerError) as exc:
        window.open_file(str(bad))
    assert "bad.yaml:4:" in str(exc.value) and "did you mean accelerator" in str(exc.value)
    assert window.qdoc.doc.find("nodes", "n0").name == "kept" and window.qdoc.dirty


@pytest.mark.slow
def test_autosave_and_recovery_after_a_crash(window, tmp_path, qtbot):
    from designer.ui.app import _start_autosave, recover
    from designer.ui.document.autosave import pending_recoveries
    from designer.ui.window.main_window import MainWindow

    load(window, small_design(), tmp_path)
    _start_autosave(window)
    window.qdoc.push(commands.SetFields(window.qdoc, {"n0": {"accelerator_count": 6}}))
    assert window.autosaver.write_now() is not None
    edited = dumps_document(window.qdoc.doc)
    # the process dies here; a new window finds the recovery file
    fresh = MainWindow(window.settings)
    qtbot.addWidget(fresh)
    _start_autosave(fresh)
    pending = pending_recoveries()
    assert len(pending) == 1
    assert recover(fresh, pending[0])
    assert dumps_document(fresh.qdoc.doc) == edited and fresh.qdoc.dirty
    assert len(pending_recoveries()) == 1  # kept until the recovered design is saved
    assert fresh.files.save() and not fresh.qdoc.dirty
    assert pending_recoveries() == []


def test_generator_run_is_one_undoable_step(window, tmp_path):
    load(window, small_design(), tmp_path)
    from designer.core.generate import generate_fat_tree
    before = dumps_document(window.qdoc.doc)
    window.qdoc.push(commands.ReplaceDocument(window.qdoc, generate_fat_tree(nodes=16, gpu="H100"), "Generate"))
    assert window.qdoc.doc.num_gpus() == 128 and len(window.scene.devices) == 16 + len(window.qdoc.doc.switches)
    window.qdoc.undo_stack.undo()
    assert dumps_document(window.qdoc.doc) == before and len(window.scene.devices) == 4


def test_inspector_edits_are_undoable_and_checked(window, tmp_path):
    load(window, small_design(), tmp_path)
    window.scene.select_ids(["n0"])
    editor = window.inspector.editors["nic_gbps"]
    editor.setText("fast")
    editor.editingFinished.emit()
    assert "expected a number" in window.inspector.error.text()
    editor.setText("200")
    editor.editingFinished.emit()
    assert window.qdoc.doc.find("nodes", "n0").nic_gbps == 200.0
    rename = window.inspector.editors["id"]
    rename.setText("gpu-box-0")
    rename.editingFinished.emit()
    d = window.qdoc.doc
    assert d.find("nodes", "gpu-box-0") is not None
    assert all(not l.a.startswith("n0:") for l in d.links) and any(l.a.startswith("gpu-box-0:") for l in d.links)
    window.qdoc.undo_stack.undo()
    assert d.find("nodes", "n0") is not None and any(l.a.startswith("n0:") for l in d.links)


def test_problems_are_listed_and_jump_to_the_element(window, tmp_path):
    doc = small_design()
    doc.links[0].b = "leaf9:p0"
    load(window, doc, tmp_path)
    assert window.problems_button.text().startswith("1 error")
    window.problems_button.click()
    popup = window.problems_popup
    assert popup.isVisible()
    row = next(i for i, text in enumerate(popup.texts()) if "dangling" in text)
    popup.click(row)
    assert not popup.isVisible()
    assert window.scene.selected_ids() == ["n0"]  # the dangling link's end that exists


def test_find_by_id_or_name_and_the_overview(window, tmp_path, qtbot):
    doc = small_design()
    doc.nodes[1].name = "gpu-box"
    load(window, doc, tmp_path)
    assert window.edits.find_element("gpu-box") == "n1" and window.scene.selected_ids() == ["n1"]
    assert window.edits.find_element("LEAF0") == "leaf0"
    assert window.edits.find_element("nothing") is None and "no element" in window.statusBar().currentMessage()
    window.minimap.render_overview()
    assert window.minimap.image is not None and not window.minimap.image.isNull()
    window.view.zoom_by(4.0)
    before = window.view.mapToScene(window.view.viewport().rect().center())
    QTest.mouseClick(window.minimap, Qt.LeftButton, Qt.NoModifier, QPoint(5, 5))  # a click in the overview's corner
    after = window.view.mapToScene(window.view.viewport().rect().center())
    assert after != before
