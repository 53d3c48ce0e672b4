"""The whole-list paths of loading (`designer evaluate` on 131k GPUs in seconds) give what
the item-by-item paths give, and hand every item they cannot prove plain back to them, so that each
problem is still reported at its place with the same message.
"""
from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from designer.core.io import loads_document, save_document
from designer.core.io.schema import build_document
from designer.core.io.yaml_source import YamlSyntaxError, parse_fast, parse_located
from designer.core.model.elements import Link, Node
from designer.core.model.endpoints import PORT_NIC, PORT_P, PORT_PCIE, PORT_PREFIXES, LinkEnds
from designer.core.model.non_finite import non_finite_problems
from designer.core.problems import DesignerError
from tests.conftest import EXAMPLES, ROOT, SMALL


def built(section: str, items: list) -> tuple[list, list[tuple[str, str]]]:
    """(the elements, [(path, message) of each problem]) of a design whose `section` lists `items`."""
    data = {"apiVersion": "designer/v1", "kind": "Cluster", "metadata": {"name": "x"}, "spec": {section: items}}
    _, _, spec, problems = build_document(data)
    return getattr(spec, section), [(p.path, p.message) for p in problems]


def parse(endpoints, node_ids, switch_ids):
    return LinkEnds().parse(list(endpoints), node_ids, switch_ids)  # a new one: no parse remembered


LINKS = [
    {"id": "l0", "a": "n0:nic0", "b": "leaf0:p0", "kind": "infiniband", "bandwidth_gbps": 400, "latency_us": 0.01},
    {"id": "l1", "a": "n0:nic1", "b": "leaf0:p1", "kind": "infiniband", "bandwidth_gbps": 400.5, "count": 2},
    {"a": "n1:nic0", "id": "l2", "b": "leaf0:p3", "kind": "ethernet", "bandwidth_gbps": 100, "state": "down",
     "note": "key order of its own", "slowdown": 2},
    {"id": "l3", "a": "n1", "b": "leaf0", "kind": "nvlink", "bandwidth_gbps": 0.1, "latency_us": 0},
]
# the same links built one by one through the model
LINK_OBJECTS = [
    Link(id="l0", a="n0:nic0", b="leaf0:p0", kind="infiniband", bandwidth_gbps=400.0, latency_us=0.01),
    Link(id="l1", a="n0:nic1", b="leaf0:p1", kind="infiniband", bandwidth_gbps=400.5, count=2),
    Link(id="l2", a="n1:nic0", b="leaf0:p3", kind="ethernet", bandwidth_gbps=100.0, state="down",
         note="key order of its own", slowdown=2.0),
    Link(id="l3", a="n1", b="leaf0", kind="nvlink", bandwidth_gbps=0.1, latency_us=0.0),
]


def test_a_list_of_plain_items_is_built_as_the_model_builds_each():
    links, problems = built("links", LINKS)
    assert problems == [] and links == LINK_OBJECTS
    assert [type(link.bandwidth_gbps) for link in links] == [float] * 4  # ints of float fields made floats
    assert type(links[2].slowdown) is float and type(links[3].latency_us) is float
    assert links[1].count == 2 and links[0].count == 1 and links[2].state == "down" and links[0].state == "up"


def test_defaults_that_are_lists_are_one_list_per_element():
    items = [{"id": f"n{i}", "accelerator": "H100"} for i in range(3)] + [
        {"id": "n3", "accelerator": "H100", "gpu_slowdown": [1, 1.5], "scale_up_gbps": 900, "slot": None}]
    nodes, problems = built("nodes", items)
    assert problems == [] and nodes == [Node(id=f"n{i}", accelerator="H100") for i in range(3)] + [
        Node(id="n3", accelerator="H100", gpu_slowdown=[1, 1.5], scale_up_gbps=900.0)]
    nodes[0].gpu_slowdown.append(2.0)  # an edit of one server's list is that server's alone
    assert nodes[1].gpu_slowdown == [] and nodes[3].gpu_slowdown == [1, 1.5]
    assert nodes[3].scale_up_gbps == 900.0 and type(nodes[3].scale_up_gbps) is float


def test_repeated_kinds_and_speeds_are_one_object_each_and_keep_their_values():
    # the reader makes an object per value; 295k links' copies of "infiniband", 400.0, 0.01 were ~31 MB
    items = [{"id": f"l{i}", "a": f"n{i}:nic0", "b": f"leaf0:p{i}", "kind": json.loads('"infiniband"'),
              "bandwidth_gbps": 400, "latency_us": json.loads("0.01")} for i in range(200)]
    items[7]["kind"], items[9]["bandwidth_gbps"] = "ethernet", 100.0
    links, problems = built("links", items)
    assert problems == [] and links == [Link(id=f"l{i}", a=f"n{i}:nic0", b=f"leaf0:p{i}",
                                             kind="ethernet" if i == 7 else "infiniband",
                                             bandwidth_gbps=100.0 if i == 9 else 400.0, latency_us=0.01)
                                        for i in range(200)]
    assert len({id(link.kind) for link in links}) == 2 and len({id(link.latency_us) for link in links}) == 1
    assert len({id(link.bandwidth_gbps) for link in links}) == 2 and links[9].bandwidth_gbps == 100.0


def test_a_column_holding_zero_and_negative_zero_keeps_each_sign():
    items = [{"id": f"l{i}", "a": f"n{i}:nic0", "b": "leaf0", "kind": "infiniband", "bandwidth_gbps": 400,
              "latency_us": -0.0 if i % 2 else 0.0} for i in range(100)]
    links, _ = built("links", items)
    assert [math.copysign(1, link.latency_us) for link in links[:4]] == [1, -1, 1, -1]


# each: a value the item-by-item checker refuses (the problem it reports, at the item's place)
REFUSED = {
    "true as a count": ("count", True, "expected an integer, got true"),
    "not a number": ("bandwidth_gbps", "fast", "expected a number, got 'fast'"),
    "below the minimum": ("bandwidth_gbps", 0.01, "0.01 is below the minimum 0.1 (the range is from 0.1 to 100,000 Gb/s)"),
    "NaN": ("latency_us", math.nan, "nan is not a finite number (the range is from 0 to 1,000,000 us)"),
    "infinity": ("latency_us", math.inf, "inf is not a finite number (the range is from 0 to 1,000,000 us)"),
    "unknown kind": ("kind", "token-ring", "'token-ring' is not one of nvlink, pcie, ethernet, infiniband"),
    "null where none is allowed": ("kind", None, "expected a string, got null"),
    "unknown key": ("colour", "red", "unknown key (did you mean count?)"),
    "a list where a number goes": ("count", [1], "expected an integer, got a list"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_one_item_out_of_the_plain_is_named_at_its_place(case):
    key, value, message = REFUSED[case]
    items = [dict(item) for item in LINKS]
    items[2][key] = value
    assert built("links", items)[1] == [(f"spec.links[2].{key}", message)]


def test_a_float_count_is_taken_as_its_integer():
    items = [dict(item) for item in LINKS]
    items[2]["count"] = 2.0  # the full checker takes 2.0 as 2; the quick paths leave it to it
    links, problems = built("links", items)
    assert problems == [] and links[2].count == 2 and type(links[2].count) is int


def test_a_missing_required_key_or_a_stray_item_is_named_at_its_place():
    assert built("links", [dict(LINKS[0]), {k: v for k, v in LINKS[1].items() if k != "kind"}])[1] == [
        ("spec.links[1]", "missing required key kind")]
    assert [path for path, _ in built("links", [dict(LINKS[0]), ["not", "a", "mapping"]])[1]] == ["spec.links[1]"]
    assert built("racks", []) == ([], [])
    assert built("switches", [{"id": "s", "fabric": "infiniband", "tier": "leaf", "rail": -1}])[1] == [
        ("spec.switches[0].rail", "-1 is below the minimum 0 (the range is from 0 to 4,096)")]


def test_a_bad_link_among_many_is_still_named_at_its_place():
    links = [dict(LINKS[0], id=f"l{i}", a=f"n{i}:nic0", b=f"leaf0:p{i}") for i in range(2000)]
    links[1234]["bandwidth_gbps"] = -5
    data = {"apiVersion": "designer/v1", "kind": "Cluster", "metadata": {"name": "x"}, "spec": {"links": links}}
    problems = build_document(data)[3]
    assert [(p.path, p.message) for p in problems] == [
        ("spec.links[1234].bandwidth_gbps", "-5 is below the minimum 0.1 (the range is from 0.1 to 100,000 Gb/s)")]


def big_links_text(tmp_path, n: int = 6000) -> str:
    """A saved design whose links section spans several of the reader's parts (RUN_CHARS)."""
    doc = loads_document(SMALL)
    template = doc.links[0]
    doc.spec.links = [dataclasses.replace(template, id=f"x{i}") for i in range(n)]
    path = tmp_path / "big.yaml"
    save_document(doc, path)
    return path.read_text()


@pytest.mark.slow
def test_links_built_part_by_part_as_read_are_those_built_from_the_whole_list(tmp_path):
    from designer.core.io.yaml_source import RUN_CHARS

    text = big_links_text(tmp_path)
    links_chars = len(text) - text.index('\n  - {"id": "x')
    assert links_chars > 2 * RUN_CHARS  # the reader builds them in several parts
    read = loads_document(text, "big.yaml")
    whole = build_document(parse_located(text).data)[2]  # one list of mappings, built at once
    assert read.links == whole.links and all(type(link) is Link for link in read.links)
    assert [link.id for link in read.links] == [f"x{i}" for i in range(6000)]


def test_a_bad_link_in_a_later_part_is_named_at_its_line(tmp_path):
    text = big_links_text(tmp_path)
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if '"id": "x4321"' in line)
    lines[at] = lines[at].replace('"kind": "', '"kindd": "', 1)
    with pytest.raises(DesignerError) as caught:
        loads_document("\n".join(lines), "big.yaml")
    assert [(p.path, p.line, p.message) for p in caught.value.problems] == [
        ("spec.links[4321]", at + 1, "missing required key kind"),
        ("spec.links[4321].kindd", at + 1, "unknown key (did you mean kind?)")]


def saved_text(tmp_path) -> str:
    doc = loads_document(SMALL)
    path = tmp_path / "small.yaml"
    save_document(doc, path)
    return path.read_text()


def test_the_saved_layout_reads_the_same_by_runs_as_by_the_full_parser(tmp_path):
    text = saved_text(tmp_path)
    assert '\n  - {"id": ' in text  # one item per line: the runs path is taken
    assert parse_fast(text) == parse_located(text).data


def item_line(text: str) -> str:
    return next(line for line in text.split("\n") if line.startswith('  - {"id": "l'))


@pytest.mark.parametrize("tail", [', {"id": "extra"}', " # a comment", "  \t"])
def test_a_line_that_is_not_one_plain_item_is_read_as_before(tmp_path, tail):
    text = saved_text(tmp_path)
    line = item_line(text)
    edited = text.replace(line, line + tail, 1)
    data = parse_fast(edited)
    if tail.strip():  # text after the item: not the saved layout; the full parser decides
        assert data is None
    else:  # trailing white space: still one item
        assert data == parse_located(edited).data


def with_link_lines(text: str, lines: list[str]) -> str:
    """`text` (a saved design) with its links section's item lines replaced by `lines`."""
    kept = text.split("\n")
    start = kept.index("  links:") + 1
    end = next(i for i in range(start, len(kept)) if not kept[i].startswith("  - "))
    return "\n".join(kept[:start] + lines + kept[end:])


def read_as_the_full_parser(text: str, fast_path: bool) -> None:
    """parse_fast gives the full parser's data, or None (then the full parser reads the text)."""
    fast = parse_fast(text)
    try:
        full = parse_located(text).data
    except YamlSyntaxError:
        assert fast is None
        return
    assert fast == full if fast_path else fast in (None, full)
    if fast_path:
        assert fast is not None


def test_a_run_read_as_one_array_still_proves_each_line_one_item(tmp_path):
    """A run of item lines is decoded as one JSON array: an item spread over two lines that
    swallows a separator, made up for by a line holding two items, is not taken for one item per
    line; the texts the runs path takes read as the full parser reads them."""
    text = saved_text(tmp_path)
    plain = ['  - {"id": "r0", "x": 1}', '  - {"id": "r1"}  ', '  - {"id": "r2", "row": "NaN"}']
    spread = ['  - {"id": "r0", "x": [{}', '  - {}]}', '  - {"id": "r1"}, {"id": "r2"}']
    taken = [plain, plain[:2], plain + ['  - {"rack": null}'],  # with "null" in the text the separator is NaN
             ['  - {"id": "r0", "at": {"x": 1}}', '  - {"id": "r1"}']]  # with no "[" it is []
    left = [spread, ['  - {"id": "r0"}', '  - {"x": NaN}'], ['  - {"id": "r0"}', '  - [1]'],
            spread + ['  - {"rack": null}'], ['  - {"id": "r0"}, null, {"id": "r1"}', '  - {"rack": null}'],
            ['  - {"rack": null}', '  - {"x": Infinity}'], ['  - {"id": "r0"}, {"id": "r1"}', '  - {"id": "r2"}'],
            ['  - {"id": "r0"}, {"id": "r1"}', '  - {"id": "r2"}]'], ['  - {"id": "r0", "at": {"x": 1}', '  - {"y": 2}}']]
    for lines in taken:
        read_as_the_full_parser(with_link_lines(text, lines), fast_path=True)
    for lines in left:
        read_as_the_full_parser(with_link_lines(text, lines), fast_path=False)


def test_a_name_holding_nan_reads_the_same(tmp_path):
    text = saved_text(tmp_path)
    line = item_line(text)
    edited = text.replace(line, line[:-1] + ', "note": "NaN here"}', 1)
    assert parse_fast(edited) == parse_located(edited).data


def test_an_item_nested_past_the_bound_is_left_to_the_full_parser(tmp_path):
    text = saved_text(tmp_path)
    line = item_line(text)
    deep = line[:-1] + ', "note": ' + "[" * 70 + "]" * 70 + "}"
    assert parse_fast(text.replace(line, deep, 1)) is None
    with pytest.raises(DesignerError, match="nested more than 64 levels"):
        loads_document(text.replace(line, deep, 1))


def port_of(name: str) -> tuple[int, int]:
    """(prefix code, number) of a port written plainly (a prefix, then 1 to 9 ASCII digits with no
    leading zero), else (-1, -1): the reading of one name at a time."""
    for code, prefix in sorted(enumerate(PORT_PREFIXES), key=lambda p: -len(p[1])):
        digits = name[len(prefix):]
        if name.startswith(prefix) and 0 < len(digits) <= 9 and digits.isascii() and digits.isdigit() \
                and (digits == "0" or digits[0] != "0"):
            return code, int(digits)
    return -1, -1


def test_port_names_are_read_from_their_characters():
    names = ["p0", "p17", "p07", "p", "pcie3", "nic0", "nic12", "nvl71", "x5", "nic\u0663", "p123456789",
             "p1234567890", "", "nic 1"]
    ends = parse([f"s0:{name}" for name in names], [], ["s0"])
    read = dict(zip(names, zip(ends.port_code.tolist(), ends.port_number.tolist())))
    assert read == {
        "p0": (PORT_P, 0), "p17": (PORT_P, 17), "p07": (-1, -1), "p": (-1, -1), "pcie3": (PORT_PCIE, 3),
        "nic0": (PORT_NIC, 0), "nic12": (PORT_NIC, 12), "nvl71": (2, 71), "x5": (-1, -1), "nic\u0663": (-1, -1),
        "p123456789": (PORT_P, 123456789), "p1234567890": (-1, -1), "": (-1, -1), "nic 1": (-1, -1)}
    assert read == {name: port_of(name) for name in names}


def test_endpoints_name_devices_and_nics_as_before():
    ends = parse(["n0:nic1", "n0:nic007", "s0:p3", "s0", "zz:p1", "n1:nic\u0663", "dup:p0"],
                  ["n0", "n1", "dup"], ["s0", "dup"])
    assert ends.kind.tolist() == [1, 1, 2, 2, 0, 1, 1]  # a repeated id: its first element (servers first)
    assert ends.index.tolist() == [0, 0, 0, 0, -1, 1, 2]
    assert ends.nic.tolist() == [1, 7, -1, -1, -1, 3, -1]  # nic007 and Arabic-Indic 3: that NIC for the engine
    assert ends.has_port.tolist() == [True, True, True, False, True, True, True]


def test_endpoints_split_at_their_first_colon_whatever_their_characters():
    """The parse reads all the texts joined into one: a text with a line break of its own, several
    ':'s, none, no characters at all or characters past ASCII still splits as str.partition(":")."""
    nodes, switches = ["n0", "n\n1", "né", ""], ["s:0", "s0"]
    ends = ["n0:nic1", "n\n1:nic2", "n\n1", "né:nic3", ":nic4", "", "s0:p1:p2", "s0:", "s:0:p5", "n0:nic\n5"]
    parsed = parse(ends, nodes, switches)
    ids = {name: i for i, name in reversed(list(enumerate(nodes + switches)))}
    for end, kind, index, nic, has_port in zip(ends, parsed.kind.tolist(), parsed.index.tolist(),
                                               parsed.nic.tolist(), parsed.has_port.tolist()):
        device, sep, port = end.partition(":")
        which = ids.get(device, -1)
        assert (kind, has_port) == (0 if which < 0 else 1 if which < len(nodes) else 2, sep == ":"), end
        assert index == (which if kind == 1 else which - len(nodes) if kind == 2 else -1), end
        numbered_nic = kind == 1 and port.startswith("nic") and port[3:].isdigit()
        assert nic == (int(port[3:]) if numbered_nic else -1), end


@pytest.mark.parametrize("names", [["p1", "nic0", "p1", "", "pcie12", "nic0", "p10"],  # short ASCII: keyed
                                   ["p1", "nic\u0663", "p1", "nic\u0663"],  # past ASCII: as strings
                                   ["p1234567890", "p1", "p1234567890"]])  # past 9 characters
def test_repeated_port_names_are_each_read_as_their_name(names):
    ends = parse([f"s0:{name}" for name in names], [], ["s0"])
    assert list(zip(ends.port_code.tolist(), ends.port_number.tolist())) == [port_of(name) for name in names]


def test_ids_of_any_length_are_found():
    """Ids of up to 9 ASCII characters are searched as integers, others as strings: both find the same."""
    ends = ["n0:nic1", "leaf12345:p1", "leaf123456789:p2", "leaf1234:p3", ":p4"]
    short = parse(ends, ["n0"], ["leaf12345", "leaf1234"])
    assert short.kind.tolist() == [1, 2, 0, 2, 0] and short.index.tolist() == [0, 0, -1, 1, -1]
    long = parse(ends, ["n0"], ["leaf12345", "leaf123456789", "leaf1234"])
    assert long.kind.tolist() == [1, 2, 2, 2, 0] and long.index.tolist() == [0, 0, 1, 2, -1]


def test_a_nic_number_past_32_bits_is_no_nic_of_the_server_and_no_crash():
    """The parse keeps 32-bit integers: a NIC written with 30 digits is past every server's NICs (no
    overflow), and the check names the link."""
    from designer.core.io.files import load_document
    from designer.core.design_check import check_document
    from designer.core.model.endpoints import NO_SUCH_NIC

    ends = parse(["n0:nic" + "0" * 20 + "9" * 10, "n0:nic" + "9" * 30], ["n0"], [])
    assert ends.nic.tolist() == [NO_SUCH_NIC, NO_SUCH_NIC] and ends.nic.dtype == np.int32
    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    i, link = next((i, l) for i, l in enumerate(doc.links) if l.a.startswith("node0:nic"))
    link.a = "node0:nic" + "9" * 30
    problems = [p for p in check_document(doc) if p.severity == "error"]
    assert any(f"links[{i}]" in p.path for p in problems), [(p.path, p.message) for p in problems]


def test_endpoints_parsed_in_parts_are_those_parsed_at_once(monkeypatch):
    from designer.core.model import endpoints

    ends = ["n0:nic1", "n0:nic007", "s0:p3", "s0", "zz:p1", "n1:nic\u0663", "dup:p0", "s0:pcie12345"] * 3
    whole = parse(ends, ["n0", "n1", "dup"], ["s0", "dup"])
    monkeypatch.setattr(endpoints, "PART_ENDPOINTS", 5)  # parts that split the list unevenly
    parts = parse(ends, ["n0", "n1", "dup"], ["s0", "dup"])
    for field in dataclasses.fields(whole):
        assert getattr(parts, field.name).tolist() == getattr(whole, field.name).tolist(), field.name
        assert not getattr(parts, field.name).flags.writeable  # shared by every caller of the memo


def test_non_finite_numbers_in_lists_and_optional_fields_are_found(small_doc):
    node = small_doc.nodes[1]
    node.gpu_slowdown = [1.0] * 7 + [math.inf]
    node.scale_up_gbps = math.nan
    assert [p.path for p in non_finite_problems(small_doc)] == [
        "spec.nodes[1].gpu_slowdown[7]", "spec.nodes[1].scale_up_gbps"]
    node.gpu_slowdown, node.scale_up_gbps = [1.0] * 8, None
    assert non_finite_problems(small_doc) == []


def test_a_design_read_whole_then_edited_still_has_its_non_finite_numbers_found(tmp_path):
    """A command that reads a design whole holds it still at once: its elements' numbers are then as the
    reader took them (within bounds); an edit made first (through the API) is looked at all the same."""
    from designer.core.io import load_document

    path = tmp_path / "small.yaml"
    save_document(loads_document(SMALL), path)
    for edited in (False, True):
        doc = load_document(path, keep_link_fields=True)
        if edited:
            doc.update(doc.nodes[1].id, slowdown=math.nan)
            doc.update(doc.racks[0].id, x=math.inf)
        with doc.held_still():
            found = [p.path for p in non_finite_problems(doc)]
        assert found == (["spec.racks[0].x", "spec.nodes[1].slowdown"] if edited else [])


def test_the_program_ends_at_once_with_all_its_output(tmp_path):
    """As a program, `designer evaluate` leaves without freeing the design object by object; what
    it printed is all there, and its exit code is the command's."""
    example = EXAMPLES / "h100-64gpu-infiniband.yaml"
    cli = "import sys; from designer.cli import main; sys.exit(main())"
    done = subprocess.run([sys.executable, "-c", cli, "evaluate", str(example), "--json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["num_gpus"] == 64 and out["link_classes"]
    bad = tmp_path / "bad.yaml"
    bad.write_text(example.read_text().replace('"bandwidth_gbps": 400', '"bandwidth_gbps": -1', 1))
    done = subprocess.run([sys.executable, "-c", cli, "evaluate", str(bad), "--json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 65 and "bandwidth_gbps" in done.stderr and done.stdout == ""


def test_a_port_used_twice_is_found_by_the_table_and_by_the_sort():
    """Ports are counted in a table of every port of the design, or sorted when that table would be far
    larger than the ports in use (a switch of 4M ports): both find the port l0 and l1 share."""
    from designer.core.design_check import check_document

    for radix in (8, 1 << 22):
        doc = loads_document(SMALL.replace('b: "leaf0:p1"', 'b: "leaf0:p0"'), "twice.yaml")
        doc.switches[0].radix = radix  # past what a file may say: an edit through the API
        problems = [(p.path, p.message) for p in check_document(doc)]
        assert problems == [("spec.links[1].b", "port p0 of leaf0 is used by links l0 and l1")], radix


def test_a_long_run_is_decoded_in_parts_with_the_same_answers(tmp_path, monkeypatch):
    """A run longer than RUN_CHARS is decoded part by part (one decode call holds the interpreter:
    a window waiting on it stalled); the items are the same, and a bad line in a later part still
    sends the whole run to the line-by-line reading."""
    from designer.core.io import yaml_source

    text = saved_text(tmp_path)
    racks = ["null" if i % 7 else '"r1"' for i in range(50)]
    lines = [f'  - {{"id": "l{i}", "a": "n{i}:p1", "rack": {rack}}}' for i, rack in enumerate(racks)]
    spread = ['  - {"id": "r0", "x": [{}', '  - {}]}', '  - {"id": "r1"}, {"id": "r2"}']
    whole = parse_fast(with_link_lines(text, lines))
    monkeypatch.setattr(yaml_source, "RUN_CHARS", 300)  # 50 lines in parts of a few
    assert parse_fast(with_link_lines(text, lines)) == whole
    assert len(whole["spec"]["links"]) == 50
    read_as_the_full_parser(with_link_lines(text, lines), fast_path=True)
    read_as_the_full_parser(with_link_lines(text, lines[:20] + spread + lines[20:]), fast_path=False)


@pytest.mark.parametrize("part_chars", [20, 300])
def test_parts_cut_anywhere_read_the_same_as_the_full_parser(tmp_path, monkeypatch, part_chars):
    """The reader takes a run's parts as slices of the text, each ending at a line break: a line longer
    than a part is read whole, and a run that ends the file (with or without a last line break, with
    Windows line breaks), or that a blank line, a comment or an item written otherwise interrupts,
    reads as the full parser reads it."""
    from designer.core.io import yaml_source

    text = saved_text(tmp_path)
    lines = text.split("\n")
    start = lines.index("  links:") + 1
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("  - "))
    links_last = "\n".join(lines[:start - 1] + lines[end:] + lines[start - 1:end])
    assert links_last.endswith("}")
    monkeypatch.setattr(yaml_source, "RUN_CHARS", part_chars)
    middle = lines[(start + end) // 2]
    interrupted = [text.replace(middle, middle + tail, 1) for tail in ("\n", "\n  # a comment", "\n# a comment")]
    spaced = text.replace(middle, middle.replace("  - {", "  -  {", 1), 1)  # YAML's item, not save's line
    for variant in (text, links_last, links_last + "\n", text.replace("\n", "\r\n"), *interrupted, spaced):
        read_as_the_full_parser(variant, fast_path=variant is not spaced)
        assert loads_document(variant).links == loads_document(text).links
