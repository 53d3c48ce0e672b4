"""The canvas reads at every zoom: names never under ports or other names, cables on their ports,
cable labels only where they fit, link heat off until asked for, with a legend."""
import numpy as np
import pytest
from PySide6.QtCore import QRectF, QSettings
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGraphicsSimpleTextItem

from tests.conftest import run_cli


@pytest.fixture(scope="module")
def designs(tmp_path_factory):
    """Rail-optimized H100 fat-trees of 64 and 1,024 GPUs, from `designer generate` as a user makes them."""
    folder = tmp_path_factory.mktemp("canvas")
    out = {}
    for nodes in (8, 128):
        path = folder / f"g{nodes * 8}.yaml"
        code, _out, err = run_cli("generate", "fat-tree", "-o", path, "--nodes", nodes, "--gpu", "H100",
                                  "--gpus-per-node", 8, "--nics-per-node", 8, "--nic-gbps", 400)
        assert code == 0, err
        out[nodes * 8] = str(path)
    return out


def open_window(qtbot, tmp_path, path, settings=None):
    from designer.ui.window.main_window import MainWindow

    w = MainWindow(settings or QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat))
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    qtbot.waitExposed(w)
    w.open_file(path)
    w.settle()
    return w


def shown_labels(scene) -> list[QRectF]:
    """Scene rectangles of every name on screen, and of the cable labels of the last paint."""
    names = [item.sceneBoundingRect() for item in scene.items()
             if isinstance(item, QGraphicsSimpleTextItem) and item.isVisible()]
    names += [item.label.sceneBoundingRect() for item in scene.devices.values() if item.label.isVisible()]
    return names + list(scene.link_layer.label_boxes)


def shown_ports(scene) -> list[QRectF]:
    from designer.ui.canvas.items import port_rect

    rects = []
    for item in scene.devices.values():
        if item.ports.isVisible():
            rects += [item.mapRectToScene(port_rect(item.rect(), item.ports.count, i)) for i in range(item.ports.count)]
    return rects


def overlaps(a: QRectF, b: QRectF) -> bool:
    inter = a.intersected(b)
    return inter.width() > 1e-6 and inter.height() > 1e-6


def assert_readable(window) -> int:
    window.view.viewport().grab()  # a paint: the cable labels place themselves
    labels = shown_labels(window.scene)
    view_rect = window.view.mapToScene(window.view.viewport().rect()).boundingRect()
    labels = [r for r in labels if r.intersects(view_rect)]
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            assert not overlaps(a, b), f"labels overlap: {a} and {b}"
    ports = [p for p in shown_ports(window.scene) if p.intersects(view_rect)]
    for a in labels:
        for p in ports:
            assert not overlaps(a, p), f"a label {a} covers a port {p}"
    return len(labels)


def test_no_label_overlaps_another_or_a_port_from_fit_all_to_12x(qtbot, tmp_path, designs):
    w = open_window(qtbot, tmp_path, designs[1024])
    w.view.fit()
    assert assert_readable(w) > 0  # names show at fit-all on 1,024 GPUs (the servers')
    leaf = w.scene.item_for("leaf0")
    for zoom in (4.0, 12.0):
        w.view.zoom_to(zoom, leaf)
        qtbot.wait(10)
        assert w.scene.devices["leaf0"].label.isVisible()
        assert_readable(w)
    assert w.scene.devices["leaf0"].ports.isVisible()  # at 12x the switch shows its ports, its name below them


def test_cable_labels_only_where_they_fit(qtbot, tmp_path, designs):
    w = open_window(qtbot, tmp_path, designs[64])
    w.view.zoom_to(4.0, w.scene.item_for("leaf0"))
    assert_readable(w)
    boxes = w.scene.link_layer.label_boxes
    on_screen = len(w.scene.link_layer.visible_rows(w.view.mapToScene(w.view.viewport().rect()).boundingRect(),
                                                    w.scene.link_layer.lines))
    assert 0 < len(boxes) < on_screen  # some cables are labelled, not every one of the fan


def test_cable_ends_lie_on_their_ports_and_fan_out(qtbot, tmp_path, designs):
    from designer.ui.canvas.items import port_index, port_rect

    w = open_window(qtbot, tmp_path, designs[64])
    scene, layer = w.scene, w.scene.link_layer
    leaf = scene.devices["leaf0"]
    ends = {}
    for key in scene.cables.device_bundles["leaf0"]:
        row = layer.index[key]
        bundle = layer.bundles[row]
        side = 0 if key[0] == "leaf0" else 1
        end = (layer.lines.a if side == 0 else layer.lines.b)[row]
        port = bundle.ports[side]
        square = leaf.mapRectToScene(port_rect(leaf.rect(), leaf.ports.count, port))
        assert square.contains(end[0], end[1]), f"{key}: the cable ends at {end}, not on port p{port} {square}"
        ends[port] = (round(end[0], 3), round(end[1], 3))
    assert len(ends) == 9  # 8 servers and the spine, each on its own port
    assert len(set(ends.values())) == len(ends)  # different ports, different ends: the cables fan out
    link = next(l for l in w.qdoc.doc.links if l.a == "node3:nic0")
    assert link.b.startswith("leaf0:") and port_index(link.b.split(":")[1]) in ends


def test_heat_is_off_by_default_the_view_action_turns_it_on_with_a_legend_and_remembers(qtbot, tmp_path, designs):
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)
    w = open_window(qtbot, tmp_path, designs[64], settings)
    legend = w.view.legend
    assert not w.act_heat.isChecked()
    assert legend.isVisible() and ("kind", "infiniband") in legend.rows()
    assert not any(what == "heat" for what, _t in legend.rows())
    w.act_heat.trigger()  # View > Link Heat
    assert w.act_heat.isChecked()
    assert any(what == "heat" for what, _t in legend.rows())
    assert legend.height() > 0 and w.view.viewport().geometry().contains(legend.geometry())
    w.close()
    again = open_window(qtbot, tmp_path, designs[64], settings)
    assert again.act_heat.isChecked()  # remembered
    assert any(what == "heat" for what, _t in again.view.legend.rows())


def test_overview_bundles_keep_the_heat_colours(qtbot, tmp_path, designs):
    """Zoomed out to rack-to-rack lines, a saturated fabric still shows red, not the kind blue."""
    from designer.ui.canvas import style

    w = open_window(qtbot, tmp_path, designs[1024])
    layer = w.scene.link_layer
    w.view.fit()
    w.view.zoom_by(0.15 / w.view.scale_factor())  # below the cable level of detail
    assert not layer.show_individual
    hot = style.heat_color(1.0)

    def reds(image) -> int:
        arr = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine())
        px = arr[:, : image.width() * 4].reshape(image.height(), image.width(), 4)  # BGRA
        close = (np.abs(px[..., 2].astype(int) - hot.red()) < 30) & (np.abs(px[..., 1].astype(int) - hot.green()) < 30) \
            & (np.abs(px[..., 0].astype(int) - hot.blue()) < 30)
        return int(close.sum())

    def picture():
        from PySide6.QtGui import QImage

        w.view.resetCachedContent()
        return w.view.viewport().grab().toImage().convertToFormat(QImage.Format_ARGB32)

    before = reds(picture())
    layer.heat = np.full(len(layer.bundles), 10, dtype=np.int64)  # every cable saturated
    layer.update()
    after = reds(picture())
    assert after > before + 200, (before, after)
    assert QColor(hot).red() > 200


def test_a_port_is_filled_while_a_cable_ends_on_it(qtbot, tmp_path, designs):
    """One layer draws every device's name and ports (items.DetailLayer): a cable deleted from the menu frees its
    port on screen at once, Edit > Undo fills it again. Read from what the window shows, not a re-render."""
    from PySide6.QtCore import QPoint
    from designer.ui.canvas import style
    from designer.ui.canvas.items import port_index, port_rect

    w = open_window(qtbot, tmp_path, designs[64])
    leaf = w.scene.devices["leaf0"]
    w.view.zoom_to(25.0, leaf)
    link = next(l for l in w.qdoc.doc.links if l.b.startswith("leaf0:") and l.a.startswith("node"))
    port = port_index(link.b.split(":")[1])
    assert leaf.ports.isVisible() and port in leaf.ports.used

    def shown_colour() -> QColor:
        qtbot.wait(50)  # the window's own repaint of what changed
        center = leaf.mapRectToScene(port_rect(leaf.rect(), leaf.ports.count, port)).center()
        pos = w.view.viewport().mapTo(w, w.view.mapFromScene(center))
        image = w.screen().grabWindow(w.winId()).toImage()
        ratio = image.devicePixelRatio()
        return image.pixelColor(QPoint(round(pos.x() * ratio), round(pos.y() * ratio)))

    assert shown_colour() == style.PORT_USED
    w.scene.select_ids([link.id])
    w.act_delete.trigger()
    assert w.qdoc.doc.find("links", link.id) is None and port not in leaf.ports.used
    assert shown_colour() == style.BACKGROUND
    w.act_undo.trigger()
    assert port in leaf.ports.used
    assert shown_colour() == style.PORT_USED


def test_an_exported_canvas_shows_the_names_and_ports_the_view_shows(qtbot, tmp_path, monkeypatch, designs):
    """File > Export Canvas pictures what the view shows, the detail layer's names and ports included
    (drawn inside scene.render too), and no wider than before the layer (it adds nothing to the extent)."""
    from PySide6.QtGui import QImage
    from PySide6.QtWidgets import QFileDialog

    from designer.ui.canvas import style
    from designer.ui.canvas.items import port_index, port_rect
    from designer.ui.common.export import default_source, png_size

    w = open_window(qtbot, tmp_path, designs[64])
    scene, leaf = w.scene, w.scene.devices["leaf0"]
    extent = default_source(scene)
    w.view.zoom_to(25.0, leaf)
    assert leaf.label.isVisible() and leaf.ports.isVisible()
    assert default_source(scene) == extent
    out = tmp_path / "canvas.png"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(out), "PNG image (*.png)")))
    w.act_export.trigger()  # File > Export Canvas..., PNG
    image = QImage(str(out))
    _size, scale = png_size(extent, 2.0)

    def pixel(x: float, y: float) -> QColor:
        return image.pixelColor(int((x - extent.left()) * scale), int((y - extent.top()) * scale))

    link = next(l for l in w.qdoc.doc.links if l.b.startswith("leaf0:"))
    port = leaf.mapRectToScene(port_rect(leaf.rect(), leaf.ports.count, port_index(link.b.split(":")[1]))).center()
    fill = leaf.brush().color()

    def distance(a: QColor, b: QColor) -> int:
        return abs(a.red() - b.red()) + abs(a.green() - b.green()) + abs(a.blue() - b.blue())

    shown = pixel(port.x(), port.y())  # a port of 2.4 pixels: its middle is mostly the port's blue
    assert distance(shown, style.PORT_USED) < distance(shown, fill)
    name = leaf.label.sceneBoundingRect()
    letters = sum(pixel(name.left() + name.width() * i / 40, name.center().y()) != fill for i in range(40))
    assert letters > 3  # the name's letters cross its middle line
