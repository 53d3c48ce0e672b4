"""The PDF writer and the design-review report (`designer report`)."""
import io
import json
import re
import shutil
import subprocess

import pytest

from designer import __version__
from designer.core.export.pdf import PdfDocument, encode_text, text_width
from designer.core.export.report import render_report
from designer.core.export.report_layout import TEXT_BOX
from tests.conftest import EXAMPLES, run_cli
from tests.pdf_text import page_count, text_items, text_lines

H100 = EXAMPLES / "h100-64gpu-infiniband.yaml"
A100 = EXAMPLES / "a100-1024gpu-rail-infiniband.yaml"


def check_structure(data: bytes) -> int:
    """A PDF 1.4 file that a strict reader (pypdf) opens whole; its page count."""
    from pypdf import PdfReader

    assert data.startswith(b"%PDF-1.4\n")
    assert data.rstrip().endswith(b"%%EOF")
    reader = PdfReader(io.BytesIO(data), strict=True)
    for page in reader.pages:
        page.extract_text()  # every content stream parses
    return len(reader.pages)


# ---- the writer -------------------------------------------------------------------------------

@pytest.mark.parametrize("compress", [True, False])
def test_writer_round_trip(compress):
    from pypdf import PdfReader

    pdf = PdfDocument(title="Test (1)", compress=compress)
    pdf.add_page()
    pdf.text(50, 800, r"a (b) c \ d", size=12)
    pdf.text(50, 780, "µs × 3 – ok", bold=True)
    pdf.text(50, 760, "日本 ≤ 5")
    pdf.rect(50, 700, 100, 20, fill=(1, 0, 0), stroke=(0, 0, 0))
    pdf.line(50, 690, 300, 690, dash=(2, 2))
    pdf.add_page()
    pdf.text(100, 100, "second page")
    pdf.add_page()
    data = pdf.to_bytes()
    assert check_structure(data) == 3
    assert text_lines(data) == [r"a (b) c \ d", "µs × 3 – ok", "日本 <= 5", "second page"]  # the fallback font
    items = text_items(data)
    assert [i.page for i in items] == [0, 0, 0, 1]
    assert items[1].font == "Helvetica-Bold" and items[0].size == 12 and items[2].font == "WenQuanYiMicroHei"
    info = PdfReader(io.BytesIO(data)).metadata
    assert info.title == "Test (1)" and info.producer == f"designer {__version__}"
    assert re.fullmatch(r"D:\d{14}(Z|[+-]\d\d'\d\d')", info["/CreationDate"])


def test_text_width_uses_helvetica_metrics():
    assert text_width("Hello", 10) == pytest.approx(22.78)  # 722 + 556 + 222 + 222 + 556
    assert text_width("Hello", 10, "Helvetica-Bold") == pytest.approx(24.45)  # 722 + 556 + 278 + 278 + 611
    assert encode_text("a\u2192b\x01") == b"a->b?"


def test_a_picture_is_placed_where_asked_and_anything_else_is_refused():
    from pypdf import PdfReader

    png = _png(40, 20)
    pdf = PdfDocument()
    pdf.image(png, 100, 500, 200, 100)
    reader = PdfReader(io.BytesIO(pdf.to_bytes()))
    [image] = reader.pages[0].images
    assert image.image.size == (40, 20)
    with pytest.raises(ValueError, match="not a PNG"):
        pdf.image(b"GIF89a....", 0, 0, 10, 10)


def _png(w: int, h: int) -> bytes:
    """A plain PNG of w x h pixels (pillow: a dependency of reportlab)."""
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (w, h), (40, 120, 200)).save(out, "PNG")
    return out.getvalue()


def test_save_is_atomic_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "out.pdf"
    target.write_bytes(b"old")
    pdf = PdfDocument(title="x")
    pdf.add_page()
    pdf.text(60, 700, "hello")
    pdf.save(target)
    assert target.read_bytes().startswith(b"%PDF-1.4")
    assert [p.name for p in tmp_path.iterdir()] == ["out.pdf"]


# ---- the report -------------------------------------------------------------------------------

def _evaluate_json(path, *extra):
    code, out, err = run_cli("evaluate", path, "--json", *extra)
    assert code == 0, err
    return json.loads(out)


def test_report_cli_matches_evaluate(tmp_path):
    out = tmp_path / "report.pdf"
    code, stdout, err = run_cli("report", H100, "-o", out)
    assert code == 0, err
    data = out.read_bytes()
    pages = check_structure(data)
    expected = _evaluate_json(H100)
    step = expected["step_time_s"]
    m = re.search(r"wrote (.+): (\d+) pages?, step ([0-9.]+) s", err)
    assert m and m.group(1) == str(out) and int(m.group(2)) == pages and m.group(3) == f"{step:.3f}"
    lines = text_lines(data)
    cells = [i.text for i in text_items(data)]
    # headline, formatted as the CLI's table
    assert f"{step:.3f} s" in cells
    assert f"{expected['mfu']:.1%}" in cells and f"{expected['hfu']:.1%}" in cells
    assert f"{expected['tokens_per_s']:.0f}" in cells
    assert f"{expected['model_tflops_per_gpu']:.1f}" in cells
    # every breakdown value and share, as `designer evaluate` prints them
    for key, value in expected["breakdown_s"].items():
        row = f"{key} {value:.3f} {value / step:.1%}"
        assert any(line.startswith(row) for line in lines), row
    assert any(line.startswith(f"step time {step:.3f} 100.0%") for line in lines)
    for key, value in expected["hidden_comm_s"].items():
        if value > 0:
            assert any(line.startswith(f"{key} ") and f" {value:.3f} " in line for line in lines), key
    mem = expected["memory_gib_per_gpu"]
    assert any(line.startswith(f"total {mem['total']:.1f} ") for line in lines)
    for b in expected["bottlenecks"]:
        assert any(b["resource"] in line and f"{b['exposed_s']:.3f}" in line for line in lines), b
    for key in expected["collectives"]:
        assert any(line.startswith(key + " ") for line in lines), key
    text = "\n".join(lines)
    for word in ("Llama", "llama3-8b", "H100-SXM5-80GB", "nvlink_efficiency", "infiniband_nic_efficiency",
                 "ethernet_nic_efficiency", "gemm_efficiency_best", "peak TFLOP/s bf16", "Warnings",
                 "leaf 1:1 (non-blocking)", "Rank order", "tp-cp-ep-dp-pp", "distributed optimizer"):
        assert word in text, word
    # a footer on every page
    for p in range(pages):
        page_lines = text_lines(data, page=p)
        assert f"page {p + 1} of {pages}" in page_lines[-1] and f"designer {__version__}" in page_lines[-1]


@pytest.mark.slow
def test_large_design_stays_inside_the_margins(tmp_path):
    out = tmp_path / "big.pdf"
    code, _, err = run_cli("report", A100, "-o", out)
    assert code == 0, err
    data = out.read_bytes()
    pages = check_structure(data)
    assert pages >= 3
    x0, y0, x1, y1 = TEXT_BOX
    # as parsed back from the file
    for item in text_items(data):
        assert x0 - 0.01 <= item.x and item.x + item.width <= x1 + 0.01, item
        assert y0 <= item.y - 0.21 * item.size and item.y + 0.72 * item.size <= y1, item
    # and as recorded by the writer
    from designer.core.engine.evaluate import Engine
    from designer.core.io import load_document

    from designer.ui.common.report_pictures import render_report_pictures

    doc = load_document(A100)
    result = Engine().evaluate(doc)
    pdf = render_report(doc, result, str(A100), pictures=render_report_pictures(doc, result, doc.metadata.name))
    assert len(pdf.pages) == pages
    for page in pdf.pages:
        assert page.texts
        for run in page.texts:
            assert x0 - 0.01 <= run.x and run.right <= x1 + 0.01, run
            assert y0 <= run.bottom and run.top <= y1, run
    lines = text_lines(data)
    assert any(line.startswith("stage ") for line in lines)  # pipeline stages table (PP 8)
    # the busiest 10 classes of links, each a row with its count (not 10 arbitrary members)
    assert sum(1 for line in lines if re.match(r"\d+ (rail|leaf-spine|spine-core) links ", line)) == 10


@pytest.mark.slow
def test_overrides_and_warnings_reach_the_report(tmp_path):
    out = tmp_path / "r.pdf"
    code, _, err = run_cli("report", A100, "--set", "workload.precision=fp8",
                           "--set", "calibration.nvlink_efficiency=0.7", "-o", out)
    assert code == 0, err
    text = "\n".join(text_lines(out.read_bytes()))
    assert "no FP8 tensor cores" in text
    assert re.search(r"nvlink_efficiency 0\.7 0\.82 this design", text)
    assert "workload.precision=fp8" in text


def _pictures(data: bytes) -> list:
    from pypdf import PdfReader

    return [image for page in PdfReader(io.BytesIO(data)).pages for image in page.images]


def test_the_report_shows_the_canvas_the_logical_view_and_the_gantt(tmp_path):
    out = tmp_path / "review.pdf"
    code, _, err = run_cli("report", H100, "-o", out)
    assert code == 0, err
    data = out.read_bytes()
    pictures = _pictures(data)
    assert len(pictures) == 3 and all(p.image.width > 200 for p in pictures)
    text = "\n".join(text_lines(data))
    for title in ("Racks and cables", "Logical fabric", "Timeline of one step"):
        assert title in text, title
    # each picture in its section: the canvas and the logical view under Cluster, the Gantt under the breakdown
    assert text.index("2  Cluster") < text.index("Racks and cables") < text.index("3  Job")
    assert text.index("Step-time breakdown") < text.index("Timeline of one step") < text.index("Memory per GPU")


def test_without_the_apps_drawing_code_the_report_says_so_and_is_written(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "designer.ui.common.report_pictures", None)  # as if Qt were not installed
    out = tmp_path / "review.pdf"
    code, _, err = run_cli("report", H100, "-o", out)
    assert code == 0, err
    assert "warning: the report has no pictures" in err
    data = out.read_bytes()
    assert _pictures(data) == []
    text = " ".join(text_lines(data))
    assert "Picture of the canvas, logical fabric view not included" in text
    assert "Picture of the timeline not included" in text


def test_bad_input_exits_65(tmp_path):
    out = tmp_path / "r.pdf"
    code, _, err = run_cli("report", H100, "--set", "parallelism.no_such_key=1", "-o", out)
    assert code == 65, err
    assert "no_such_key" in err
    assert not out.exists()


def test_unwritable_output_fails_cleanly(tmp_path):
    code, _, err = run_cli("report", H100, "-o", tmp_path / "missing" / "r.pdf")
    assert code == 1 and "cannot write" in err


@pytest.mark.skipif(shutil.which("pdftoppm") is None, reason="pdftoppm (poppler-utils) not installed")
def test_pdftoppm_renders_page_one(tmp_path):
    out = tmp_path / "report.pdf"
    code, _, err = run_cli("report", H100, "-o", out)
    assert code == 0, err
    result = subprocess.run(["pdftoppm", "-png", "-r", "40", "-f", "1", "-l", "1", str(out), str(tmp_path / "p")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "Error" not in result.stderr, result.stderr
    pngs = list(tmp_path.glob("p*.png"))
    assert len(pngs) == 1 and pngs[0].read_bytes().startswith(b"\x89PNG")


@pytest.mark.slow
def test_long_text_wraps_and_flows_over_pages():
    from designer.core.engine.evaluate import Engine
    from designer.core.export.report_layout import BOTTOM
    from designer.core.io import load_document

    doc = load_document(H100)
    doc.metadata.name = "Überlange-Bezeichnung-" * 12 + " 日本"
    doc.metadata.description = "Eine lange Beschreibung mit Umlauten äöü und Symbolen ≤ → " * 300 + "x" * 900
    pdf = render_report(doc, Engine().evaluate(doc), "/a/long/path/" * 30 + "file.yaml")
    data = pdf.to_bytes()
    assert check_structure(data) == len(pdf.pages) > 5
    x0, y0, x1, y1 = TEXT_BOX
    for i, page in enumerate(pdf.pages):
        for run in page.texts:
            assert x0 - 0.01 <= run.x and run.right <= x1 + 0.01, run
            assert y0 <= run.bottom and run.top <= y1, run
            footer = run.text.startswith(("designer ", "page ")) or run.y < 45
            assert footer or run.bottom >= BOTTOM - 3, (i, run)
