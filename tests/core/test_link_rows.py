"""Links read from their saved lines by one regular expression (io/link_rows.py) are the links the JSON
reader makes of the same lines; every line in another form is left to the JSON reader, which keeps its
messages and places."""
from __future__ import annotations

import dataclasses

import pytest

from designer.core.io import files, loads_document, save_document
from designer.core.io.link_rows import FIELDS
from designer.core.io.schema import prebuild_items, prebuild_lines
from designer.core.model.elements import Link
from designer.core.problems import DesignerError
from tests.conftest import SMALL


def saved_text(tmp_path, links: list[Link] | None = None) -> str:
    doc = loads_document(SMALL)
    if links is not None:
        doc.spec.links = links
    path = tmp_path / "small.yaml"
    save_document(doc, path)
    return path.read_text()


def link_lines(text: str) -> list[str]:
    """The item lines of the links section."""
    lines = text.split("\n")
    start = lines.index("  links:") + 1
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("  - "))
    return lines[start:end]


def with_line(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


def read(text: str, by_lines: bool):
    """(the links, None) or (None, the problems as (path, line, column, message)), read with the lines
    path (as `designer` reads) or by the JSON reader alone."""
    try:
        if by_lines:
            spec = files.parse(text, "x.yaml")[2]
        else:
            spec = files.parse(text, "x.yaml", build_items=prebuild_items)[2]
    except DesignerError as exc:
        return None, [(p.path, p.line, p.column, p.message) for p in exc.problems]
    return spec.links, None


def test_the_fields_read_are_the_links_fields_in_their_order():
    assert tuple(name for name, _, _ in FIELDS) == tuple(f.name for f in dataclasses.fields(Link))


def test_saved_links_of_every_field_read_from_their_lines_as_json_reads_them(tmp_path):
    links = [
        Link(id="l0", a="n0:nic0", b="leaf0:p0", kind="infiniband", bandwidth_gbps=400.0, latency_us=0.01),
        Link(id="l1", a="n0:nic1", b="leaf0:p1", kind="infiniband", bandwidth_gbps=400.5, count=2),
        Link(id="l2", a="n1:nic0", b="leaf0:p3", kind="ethernet", bandwidth_gbps=100.0, state="down",
             note="a note, with \"quotes\"? no: commas, colons: and ünïcode", slowdown=2.5),
        Link(id="l3", a="n1", b="leaf0", kind="nvlink", bandwidth_gbps=0.1, latency_us=1e-05),
        Link(id="l4", a="n1:nic1", b="leaf0:p4", kind="infiniband", bandwidth_gbps=1e3, latency_us=0.0,
             count=3, slowdown=1.0, note="", state="up"),
        Link(id="l5", a="n1:nic2", b="leaf0:p5", kind="ethernet", bandwidth_gbps=200.0, count=2, slowdown=1.5,
             note="degraded: trained at 4xSDR (10 Gb/s), below the fabric's 4xFDR", state="down"),
        Link(id="l6", a="n1:nic3", b="leaf0:p6", kind="ethernet", bandwidth_gbps=200.0, note="ünïcode, ∑"),
    ]
    text = saved_text(tmp_path, links)
    rows = link_lines(text)
    assert len(rows) == len(links) and "1.0e-05" in text
    plain_rows = [row for row in rows if '\\"' not in row]  # the note with quotes is escaped
    plain_links = [link for link in links if '"' not in link.note]
    assert prebuild_lines("links", "\n".join(plain_rows)) == plain_links  # read from their lines
    by_lines, by_json = read(text, True), read(text, False)
    assert by_lines == by_json and by_lines[0] == links
    plain_text = with_line(text, rows[2] + "\n", "")  # no escape left: every line read from its text
    assert read(plain_text, True) == read(plain_text, False) == (plain_links, None)
    kept = files.LinkFieldsKept()
    built = kept.lines("links", "\n".join(plain_rows))
    assert built == plain_links
    assert kept.fields["bandwidth_gbps"] == [link.bandwidth_gbps for link in built]
    assert [type(link.bandwidth_gbps) for link in built] == [float] * len(built)
    assert [type(link.count) for link in built] == [int] * len(built)


ODD_LINES = [
    '  - {"id": "l0", "a": "n0:nic0", "b": "leaf0:p0", "kind": "infin\\u0069band", "bandwidth_gbps": 400}',  # escape
    '  - {"id": "l0", "a": "n0:\tnic0", "b": "leaf0:p0", "kind": "infiniband", "bandwidth_gbps": 400}',  # tab
    '  - {"id": "l0", "a": "n0:nic0", "b": "leaf0:p0", "kind": "infiniband", "bandwidth_gbps": 400, "count": 04}',
    '  - {"id": "l0", "a": "n0:nic0", "b": "leaf0:p0", "kind": "infiniband", "bandwidth_gbps": 400, "count": 2.0}',
    '  - {"id": "l0", "a": "n0:nic0", "b": "leaf0:p0", "kind": "infiniband", "bandwidth_gbps": 400, "latency_us": -0}',
    '  - {"id": "l0", "a": "n0:nic0", "b": "leaf0:p0", "kind": "infiniband", "bandwidth_gbps": 4.}',
    '  - {"id": "l0", "a": "n0:nic0", "b": "leaf0:p0", "kind": "infiniband", "bandwidth_gbps": 1e999}',
    '  - {"id": "l0", "b": "leaf0:p0", "a": "n0:nic0", "kind": "infiniband", "bandwidth_gbps": 400}',  # order
    '  - {"id":"l0","a":"n0:nic0","b":"leaf0:p0","kind":"infiniband","bandwidth_gbps":400}',  # compact
    '  - {"id": "l0", "a": "n0:nic0", "b": "leaf0:p0", "kind": "infiniband", "bandwidth_gbps": 400}  ',
    '  - {"id": "l0", "a": "n0:nic0", "b": "leaf0:p0", "kind": "infiniband", "bandwidth_gbps": 400, "x": 1}',
    '  - {"id": "l0", "a": "n0:nic0", "b": "leaf0:p0", "kind": "infiniband", "bandwidth_gbps": 0}',  # range
    '  - {"id": "l0", "a": "n0:nic0", "b": "leaf0:p0", "kind": "fibre", "bandwidth_gbps": 400}',  # choice
    '  - {"id": "l0", "a": "n0:nic0", "b": "leaf0:p0", "kind": "infiniband"}',  # a required field left out
]


@pytest.mark.parametrize("odd", ODD_LINES)
def test_a_line_in_another_form_is_read_by_the_json_reader_with_its_messages(tmp_path, odd):
    text = saved_text(tmp_path)
    first = link_lines(text)[0]
    edited = with_line(text, first, odd)
    assert prebuild_lines("links", "\n".join(link_lines(edited))) is None  # left to the JSON reader
    by_lines = read(edited, True)
    assert by_lines == read(edited, False)


def test_an_integer_of_more_digits_than_int_reads_is_left_to_the_json_reader():
    line = ('  - {"id": "l0", "a": "n0:nic0", "b": "leaf0:p0", "kind": "infiniband", "bandwidth_gbps": 400, '
            '"count": ' + "9" * 5000 + "}")
    assert prebuild_lines("links", line) is None


def test_one_odd_line_in_a_run_leaves_only_its_part_to_the_json_reader(tmp_path, monkeypatch):
    from designer.core.io import yaml_source

    monkeypatch.setattr(yaml_source, "RUN_CHARS", 100_000)  # ~1,000 lines a part: the line is in the third
    doc = loads_document(SMALL)
    template = doc.links[0]
    links = [dataclasses.replace(template, id=f"x{i}") for i in range(4106)]
    text = saved_text(tmp_path, links)
    at = next(line for line in link_lines(text) if '"id": "x2100"' in line)
    edited = with_line(text, at, at.replace('"kind": "', '"kind":  "'))  # two spaces: valid JSON
    assert read(edited, True) == read(edited, False)
    assert read(edited, True)[0] == links
    bad = with_line(text, at, at.replace('"bandwidth_gbps": ', '"bandwidth_gbps": -'))
    links_read, problems = read(bad, True)
    assert links_read is None and problems == read(bad, False)[1]
    line = bad.split("\n").index(at.replace('"bandwidth_gbps": ', '"bandwidth_gbps": -')) + 1
    assert [(path, where) for path, where, _, _ in problems] == [("spec.links[2100].bandwidth_gbps", line)]
