"""Non-Latin names in `designer report`: drawn in the embedded fallback font, readable as text.

A design named "集群-Ω" printed as "??-?" (Helvetica's WinAnsi has neither CJK nor Greek).
"""
import re
import shutil
import subprocess

import pytest
import yaml

from designer.core.export.pdf import PdfDocument, text_width
from tests.conftest import EXAMPLES, run_cli
from tests.pdf_text import text_items, text_lines

NAME = "集群-Ω"


@pytest.fixture
def named_design(tmp_path):
    data = yaml.safe_load((EXAMPLES / "h100-64gpu-infiniband.yaml").read_text())
    data["metadata"]["name"] = NAME
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def _report(tmp_path, design) -> bytes:
    out = tmp_path / "report.pdf"
    code, _, err = run_cli("report", design, "-o", out)
    assert code == 0, err
    return out.read_bytes()


def test_a_cjk_and_greek_name_reads_back_from_the_report(tmp_path, named_design):
    data = _report(tmp_path, named_design)
    lines = text_lines(data, page=0)
    assert any(NAME in line for line in lines), lines[:6]
    assert not any("??-?" in line for line in text_lines(data))
    # the glyphs are embedded (a subset, with a ToUnicode map), not left to the reader's fonts
    assert re.search(rb"/BaseFont /[A-Z]{6}\+WenQuanYiMicroHei ", data)
    assert b"/FontFile2" in data and b"/ToUnicode" in data
    assert max(_embedded_font_sizes(data)) < 200_000  # a subset, not the 4.6 MB font


def _embedded_font_sizes(data: bytes) -> list[int]:
    """The decompressed size of each embedded font file."""
    import io

    from pypdf import PdfReader

    sizes = []
    for page in PdfReader(io.BytesIO(data)).pages:
        for font in (page["/Resources"].get("/Font") or {}).values():
            descriptor = font.get_object().get("/FontDescriptor")
            if descriptor is not None and "/FontFile2" in descriptor.get_object():
                sizes.append(len(descriptor.get_object()["/FontFile2"].get_object().get_data()))
    return sizes


@pytest.mark.slow
def test_another_reader_finds_the_name(tmp_path, named_design):
    pypdf = pytest.importorskip("pypdf", reason="pypdf (a dev dependency) is not installed")
    data = _report(tmp_path, named_design)
    path = tmp_path / "report.pdf"
    text = pypdf.PdfReader(path).pages[0].extract_text()
    assert NAME in text, text[:300]
    assert data.startswith(b"%PDF-")


@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="pdftotext (poppler-utils) is not installed")
def test_poppler_extracts_the_name_and_renders_the_page(tmp_path, named_design):
    _report(tmp_path, named_design)
    out = subprocess.run(["pdftotext", "-f", "1", "-l", "1", str(tmp_path / "report.pdf"), "-"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and NAME in out.stdout, out.stderr
    fonts = subprocess.run(["pdffonts", str(tmp_path / "report.pdf")], capture_output=True, text=True, timeout=60)
    row = next(line for line in fonts.stdout.splitlines() if "WenQuanYiMicroHei" in line)
    assert row.split()[-5:-2] == ["yes", "yes", "yes"]  # embedded, subset, with a ToUnicode map
    shown = subprocess.run(["pdftoppm", "-png", "-r", "40", "-f", "1", "-l", "1", str(tmp_path / "report.pdf"),
                            str(tmp_path / "p")], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0 and "Error" not in shown.stderr, shown.stderr


def test_bold_and_width_of_fallback_text():
    pdf = PdfDocument(compress=False)
    run = pdf.text(50, 800, NAME, size=20, bold=True)
    pdf.text(300, 700, "right " + NAME, size=10, align="right")
    data = pdf.to_bytes()
    items = text_items(data)
    assert [(i.text, i.font) for i in items] == [(NAME, "WenQuanYiMicroHei"), ("right " + NAME, "WenQuanYiMicroHei")]
    assert run.width == pytest.approx(text_width(NAME, 20, "Helvetica-Bold")) and run.width > 40
    assert items[1].x == pytest.approx(300 - text_width("right " + NAME, 10), abs=1e-3)
    # bold: the outline stroked too, inside q/Q so that the text drawn after it is not outlined
    # (a stroked white "Design" label once vanished under the banner's bold name)
    assert re.search(rb"\nq\n[^\n]* w\nBT [^\n]* 2 Tr [^\n]* ET\nQ\n", data)
    assert data.count(b" Tr ") == 1


def test_a_character_no_font_has_is_a_question_mark():
    pdf = PdfDocument()
    pdf.text(50, 800, NAME + " \U0001F600")  # an emoji: in neither font
    assert text_lines(pdf.to_bytes()) == [NAME + " ?"]
