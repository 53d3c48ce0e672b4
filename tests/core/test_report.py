"""The PDF writer and the design-review report (`designer report`)."""
import json
import re
import shutil
import subprocess

import pytest

from designer import __version__
from designer.core.export.pdf import (
    PdfDocument, encode_text, page_count, text_items, text_lines, text_width, xref_offsets,
)
from designer.core.export.report import render_report
from designer.core.export.report_layout import TEXT_BOX
from tests.conftest import EXAMPLES, run_cli

H100 = EXAMPLES / "h100-64gpu-infiniband.yaml"
A100 = EXAMPLES / "a100-1024gpu-rail-infiniband.yaml"


def check_structure(data: bytes) -> int:
    """Header, trailer, every xref offset at its object; the page count."""
    assert data.startswith(b"%PDF-1.4\n")
    assert data.rstrip().endswith(b"%%EOF")
    offsets = xref_offsets(data)
    assert offsets, "empty xref"
    for number, at in offsets.items():
        assert data[at:].startswith(f"{number} 0 obj".encode()), number
    start = int(data[data.rindex(b"startxref") + 9:].split()[0])
    assert data[start:start + 4] == b"xref"
    size = int(re.search(rb"/Size (\d+)", data[data.rindex(b"trailer"):]).group(1))
    assert size == len(offsets) + 1
    pages = page_count(data)
    assert len(re.findall(rb"/Type /Page\b(?!s)", data)) == pages
    return pages


# ---- the writer -------------------------------------------------------------------------------

@pytest.mark.parametrize("compress", [True, False])
def test_writer_round_trip(compress):
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
    assert items[1].font == "Helvetica-Bold" and items[0].size == 12
    assert b"/Producer (designer " + __version__.encode() + b")" in data
    assert b"/Title (Test \\(1\\))" in data
    assert re.search(rb"/CreationDate \(D:\d{14}(Z|[+-]\d\d'\d\d')\)", data)


def test_text_width_uses_helvetica_metrics():
    assert text_width("Hello", 10) == pytest.approx(22.78)  # 722 + 556 + 222 + 222 + 556
    assert text_width("Hello", 10, "Helvetica-Bold") == pytest.approx(24.45)  # 722 + 556 + 278 + 278 + 611
    assert encode_text("a\u2192b\x01") == b"a->b?"


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

    doc = load_document(A100)
    result = Engine().evaluate(doc)
    pdf = render_report(doc, result, str(A100))
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


def test_overrides_and_warnings_reach_the_report(tmp_path):
    out = tmp_path / "r.pdf"
    code, _, err = run_cli("report", A100, "--set", "workload.precision=fp8",
                           "--set", "calibration.nvlink_efficiency=0.7", "-o", out)
    assert code == 0, err
    text = "\n".join(text_lines(out.read_bytes()))
    assert "no FP8 tensor cores" in text
    assert re.search(r"nvlink_efficiency 0\.7 0\.82 this design", text)
    assert "workload.precision=fp8" in text


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
