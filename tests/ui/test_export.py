"""Scene export to PNG, SVG and PDF (Qt only, no pyqtgraph), atomic, without selection marks."""
import math
import re
import xml.etree.ElementTree as ET

import pytest



@pytest.fixture
def scene(qapp):
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QBrush, QColor, QPen
    from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene

    s = QGraphicsScene()
    rect = s.addRect(QRectF(0, 0, 120, 40), QPen(QColor("#1f2937"), 1), QBrush(QColor("#3b82f6")))
    rect.setFlag(QGraphicsItem.ItemIsSelectable)
    s.addRect(QRectF(200, 10, 60, 180), QPen(QColor("#9aa3af"), 1), QBrush(QColor("#f4f5f7")))
    s.addRect(QRectF(20, 100, 80, 30), QPen(QColor("#10b981"), 2))
    label = s.addSimpleText("leaf0")
    label.setPos(10, 150)
    rect.setSelected(True)
    yield s
    s.clear()


def _source(scene):
    return scene.itemsBoundingRect().adjusted(-20, -20, 20, 20)


def test_png(scene, tmp_path):
    from PySide6.QtGui import QImage

    from designer.ui.common.export import export_scene

    out = export_scene(scene, tmp_path / "fabric.png")
    assert out == tmp_path / "fabric.png"
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = QImage(str(out))
    src = _source(scene)
    assert (image.width(), image.height()) == (math.ceil(src.width() * 2), math.ceil(src.height() * 2))
    assert image.pixelColor(2, 2).name() == "#ffffff"  # the background is filled
    assert image.hasAlphaChannel()
    assert [p.name for p in tmp_path.iterdir()] == ["fabric.png"]  # no temporary file left behind


def test_png_exact_source_and_scale(scene, tmp_path):
    from PySide6.QtCore import QRectF, Qt
    from PySide6.QtGui import QImage

    from designer.ui.common.export import export_scene

    out = export_scene(scene, tmp_path / "part.PNG", scale=3.0, source=QRectF(0, 0, 100, 50), background=Qt.black)
    image = QImage(str(out))
    assert (image.width(), image.height()) == (300, 150)
    assert image.pixelColor(30, 145).name() == "#000000"


def test_png_is_capped():
    from PySide6.QtCore import QRectF

    from designer.ui.common.export import MAX_PNG_SIDE, png_size

    size, scale = png_size(QRectF(0, 0, 40000, 1000), 2.0)
    assert size.width() == MAX_PNG_SIDE and size.height() == math.ceil(1000 * MAX_PNG_SIDE / 40000)
    assert scale == pytest.approx(MAX_PNG_SIDE / 40000)


def test_selection_is_not_drawn_and_is_restored(scene, tmp_path):
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QImage

    from designer.ui.common.export import export_scene

    (rect,) = scene.selectedItems()
    area = QRectF(-10, -10, 140, 60)
    export_scene(scene, tmp_path / "selected.png", source=area)
    assert scene.selectedItems() == [rect]
    rect.setSelected(False)
    export_scene(scene, tmp_path / "plain.png", source=area)
    assert QImage(str(tmp_path / "selected.png")) == QImage(str(tmp_path / "plain.png"))


def test_svg(scene, tmp_path):
    from designer.ui.common.export import export_scene

    out = export_scene(scene, tmp_path / "fabric.svg", title="Pod A", description="two racks")
    root = ET.parse(out).getroot()
    assert root.tag.endswith("svg")
    src = _source(scene)
    view_box = [float(v) for v in root.get("viewBox").split()]
    assert view_box == pytest.approx([src.x(), src.y(), src.width(), src.height()])
    ns = root.tag[: -len("svg")]
    assert root.find(ns + "title").text == "Pod A"
    assert root.find(ns + "desc").text == "two racks"
    assert "leaf0" in out.read_text(encoding="utf-8")


def test_pdf(scene, tmp_path):
    from designer.ui.common.export import export_scene

    out = export_scene(scene, tmp_path / "fabric.pdf")
    data = out.read_bytes()
    assert data.startswith(b"%PDF")
    src = _source(scene)
    # One page with the content's aspect, at 96 scene units per inch (72 points).
    box = [float(v) for v in re.search(rb"/MediaBox \[([^\]]+)\]", data).group(1).split()]
    assert box[2] == pytest.approx(src.width() * 0.75, abs=1)
    assert box[3] == pytest.approx(src.height() * 0.75, abs=1)


def test_unknown_extension(scene, tmp_path):
    from designer.ui.common.export import export_scene

    with pytest.raises(ValueError, match=r"unknown extension '\.jpg'.*\.png, \.svg, \.pdf"):
        export_scene(scene, tmp_path / "fabric.jpg")
    with pytest.raises(ValueError, match="unknown extension"):
        export_scene(scene, tmp_path / "fabric")
    assert list(tmp_path.iterdir()) == []
    assert len(scene.selectedItems()) == 1


def test_replaces_an_existing_file(scene, tmp_path):
    from designer.ui.common.export import export_scene

    out = tmp_path / "fabric.svg"
    out.write_text("old")
    export_scene(scene, out)
    assert out.read_text(encoding="utf-8").startswith("<?xml")
    assert [p.name for p in tmp_path.iterdir()] == ["fabric.svg"]


# ---- File > Report (PDF): the report holds the window's pictures ----------------------------------

def test_file_report_holds_the_canvas_the_logical_view_and_the_gantt(empty_window, tmp_path, monkeypatch):
    import io

    from pypdf import PdfReader
    from PySide6.QtWidgets import QFileDialog

    from tests.conftest import EXAMPLES
    from tests.pdf_text import text_lines

    window = empty_window
    window.open_file(str(EXAMPLES / "h100-64gpu-infiniband.yaml"))
    assert window.settle() and window.result is not None
    target = tmp_path / "review.pdf"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), "")))
    window.act_report.trigger()
    data = target.read_bytes()
    pictures = [image for page in PdfReader(io.BytesIO(data)).pages for image in page.images]
    assert len(pictures) == 3
    assert all(p.image.width > 200 and p.image.height > 100 for p in pictures)
    text = "\n".join(text_lines(data))
    for title in ("Racks and cables", "Logical fabric", "Timeline of one step"):
        assert title in text, title
    assert "not included" not in text
