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
from designer.core.io.schema import _bulk_builder, _fast_builder, build_document
from designer.core.io.yaml_source import parse_fast, parse_located
from designer.core.model.elements import Link, Node, Rack, Switch
from designer.core.model.endpoints import PORT_NIC, PORT_P, PORT_PCIE, _parse, _port_codes
from designer.core.model.non_finite import non_finite_problems
from designer.core.problems import DesignerError
from tests.conftest import EXAMPLES, ROOT, SMALL


def one_by_one(cls, items):
    fast = _fast_builder(cls)
    return [fast(item) for item in items]


LINKS = [
    {"id": "l0", "a": "n0:nic0", "b": "leaf0:p0", "kind": "infiniband", "bandwidth_gbps": 400, "latency_us": 0.01},
    {"id": "l1", "a": "n0:nic1", "b": "leaf0:p1", "kind": "infiniband", "bandwidth_gbps": 400.5, "count": 2},
    {"a": "n1:nic0", "id": "l2", "b": "leaf0:p3", "kind": "ethernet", "bandwidth_gbps": 100, "state": "down",
     "note": "key order of its own", "slowdown": 2},
    {"id": "l3", "a": "n1", "b": "leaf0", "kind": "nvlink", "bandwidth_gbps": 0.1, "latency_us": 0},
]


def test_a_list_of_plain_items_is_built_whole_as_item_by_item():
    built = _bulk_builder(Link)(LINKS)
    assert built == one_by_one(Link, LINKS)
    assert [type(link.bandwidth_gbps) for link in built] == [float] * 4  # ints of float fields made floats
    assert type(built[2].slowdown) is float and type(built[3].latency_us) is float
    assert built[1].count == 2 and built[0].count == 1 and built[2].state == "down" and built[0].state == "up"


def test_defaults_that_are_lists_are_one_list_per_element():
    items = [{"id": f"n{i}", "accelerator": "H100"} for i in range(3)] + [
        {"id": "n3", "accelerator": "H100", "gpu_slowdown": [1, 1.5], "scale_up_gbps": 900, "slot": None}]
    built = _bulk_builder(Node)(items)
    assert built == one_by_one(Node, items)
    built[0].gpu_slowdown.append(2.0)  # an edit of one server's list is that server's alone
    assert built[1].gpu_slowdown == [] and built[3].gpu_slowdown == [1, 1.5]
    assert built[3].scale_up_gbps == 900.0 and type(built[3].scale_up_gbps) is float


def test_repeated_kinds_and_speeds_are_one_object_each_and_keep_their_values():
    # the reader makes an object per value; 295k links' copies of "infiniband", 400.0, 0.01 were ~31 MB
    items = [{"id": f"l{i}", "a": f"n{i}:nic0", "b": f"leaf0:p{i}", "kind": json.loads('"infiniband"'),
              "bandwidth_gbps": 400, "latency_us": json.loads("0.01")} for i in range(200)]
    items[7]["kind"], items[9]["bandwidth_gbps"] = "ethernet", 100.0
    built = _bulk_builder(Link)(items)
    assert built == one_by_one(Link, items)
    assert len({id(link.kind) for link in built}) == 2 and len({id(link.latency_us) for link in built}) == 1
    assert len({id(link.bandwidth_gbps) for link in built}) == 2 and built[9].bandwidth_gbps == 100.0
    assert len({id(link.a) for link in built}) == 200  # ends are not looked at: none repeats


def test_a_column_holding_zero_and_negative_zero_keeps_each_sign():
    items = [{"id": f"l{i}", "a": f"n{i}:nic0", "b": "leaf0", "kind": "infiniband", "bandwidth_gbps": 400,
              "latency_us": -0.0 if i % 2 else 0.0} for i in range(100)]
    built = _bulk_builder(Link)(items)
    assert [math.copysign(1, link.latency_us) for link in built[:4]] == [1, -1, 1, -1]


# each: a value the item-by-item path refuses, so the whole list goes back to it
REFUSED = {
    "true as a count": ("count", True),
    "a float count": ("count", 2.0),  # the full checker takes 2.0 as 2; the quick paths leave it to it
    "not a number": ("bandwidth_gbps", "fast"),
    "below the minimum": ("bandwidth_gbps", 0.01),
    "NaN": ("latency_us", math.nan),
    "infinity": ("latency_us", math.inf),
    "unknown kind": ("kind", "token-ring"),
    "null where none is allowed": ("kind", None),
    "unknown key": ("colour", "red"),
    "a list where a number goes": ("count", [1]),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_one_item_out_of_the_plain_sends_the_list_item_by_item(case):
    key, value = REFUSED[case]
    items = [dict(item) for item in LINKS]
    items[2][key] = value
    assert one_by_one(Link, items)[2] is None
    assert _bulk_builder(Link)(items) is None


def test_a_missing_required_key_or_a_stray_item_is_refused_whole():
    assert _bulk_builder(Link)([dict(LINKS[0]), {k: v for k, v in LINKS[1].items() if k != "kind"}]) is None
    assert _bulk_builder(Link)([dict(LINKS[0]), ["not", "a", "mapping"]]) is None
    assert _bulk_builder(Rack)([]) == []
    assert _bulk_builder(Switch)([{"id": "s", "fabric": "infiniband", "tier": "leaf", "rail": -1}]) is None


def test_a_bad_link_among_many_is_still_named_at_its_place():
    links = [dict(LINKS[0], id=f"l{i}", a=f"n{i}:nic0", b=f"leaf0:p{i}") for i in range(2000)]
    links[1234]["bandwidth_gbps"] = -5
    data = {"apiVersion": "designer/v1", "kind": "Cluster", "metadata": {"name": "x"}, "spec": {"links": links}}
    problems = build_document(data)[3]
    assert [(p.path, p.message) for p in problems] == [
        ("spec.links[1234].bandwidth_gbps", "-5 is below the minimum 0.1 (the range is from 0.1 to 100,000 Gb/s)")]


def big_links_text(tmp_path, n: int = 5000) -> str:
    """A saved design whose links section spans several of the reader's parts (RUN_LINES)."""
    doc = loads_document(SMALL)
    template = doc.links[0]
    doc.spec.links = [dataclasses.replace(template, id=f"x{i}") for i in range(n)]
    path = tmp_path / "big.yaml"
    save_document(doc, path)
    return path.read_text()


@pytest.mark.slow
def test_links_built_part_by_part_as_read_are_those_built_from_the_whole_list(tmp_path, monkeypatch):
    from designer.core.io import files
    from designer.core.io.yaml_source import RUN_LINES

    text = big_links_text(tmp_path)
    assert text.count('\n  - {"id": "x') > 2 * RUN_LINES
    parts = []
    real = files.prebuild_items
    monkeypatch.setattr(files, "prebuild_items", lambda section, items: parts.append((section, len(items)))
                        or real(section, items))
    read = files._parse(text, "big.yaml")[2]  # the reader builds each part's links as it reads them
    links_parts = [n for section, n in parts if section == "links"]
    assert len(links_parts) >= 3 and max(links_parts) <= RUN_LINES and sum(links_parts) == 5000
    whole = build_document(parse_located(text).data)[2]  # one list of mappings, built at once
    assert read.links == whole.links and all(type(link) is Link for link in read.links)


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


def test_a_run_read_as_one_array_still_proves_each_line_one_item():
    """_scan_run decodes a run as one JSON array: an item spread over two lines that swallows a
    separator, made up for by a line holding two items, is not taken for one item per line."""
    import json

    from designer.core.io.yaml_source import _reject_constant, _scan_run

    scan = json.JSONDecoder(parse_constant=_reject_constant).scan_once  # parse_fast's
    plain = ['  - {"id": "r0", "x": 1}', '  - {"id": "r1"}  ', '  - {"id": "r2", "row": "NaN"}']
    assert _scan_run(plain, scan) == [{"id": "r0", "x": 1}, {"id": "r1"}, {"id": "r2", "row": "NaN"}]
    assert _scan_run(plain[:2], scan) == [{"id": "r0", "x": 1}, {"id": "r1"}]
    spread = ['  - {"id": "r0", "x": [{}', '  - {}]}', '  - {"id": "r1"}, {"id": "r2"}']
    assert _scan_run(spread, scan) is None
    assert _scan_run(['  - {"id": "r0"}', '  - {"x": NaN}'], scan) is None  # no NaN in a design
    assert _scan_run(['  - {"id": "r0"}', '  - [1]'], scan) is None
    # with "null" in the text the separator is NaN: the same answers
    assert _scan_run(plain + ['  - {"rack": null}'], scan) == _scan_run(plain, scan) + [{"rack": None}]
    assert _scan_run(spread + ['  - {"rack": null}'], scan) is None
    assert _scan_run(['  - {"id": "r0"}, null, {"id": "r1"}', '  - {"rack": null}'], scan) is None
    assert _scan_run(['  - {"rack": null}', '  - {"x": Infinity}'], scan) is None
    # with no "[" in the text the separator is []: two items on a line, or none, still tell
    assert _scan_run(['  - {"id": "r0", "at": {"x": 1}}', '  - {"id": "r1"}'], scan) == [
        {"id": "r0", "at": {"x": 1}}, {"id": "r1"}]
    assert _scan_run(['  - {"id": "r0"}, {"id": "r1"}', '  - {"id": "r2"}'], scan) is None
    assert _scan_run(['  - {"id": "r0"}, {"id": "r1"}', '  - {"id": "r2"}]'], scan) is None
    assert _scan_run(['  - {"id": "r0", "at": {"x": 1}', '  - {"y": 2}}'], scan) is None


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


def test_port_names_are_read_from_their_characters():
    names = ["p0", "p17", "p07", "p", "pcie3", "nic0", "nic12", "nvl71", "x5", "nic\u0663", "p123456789",
             "p1234567890", "", "nic 1"]
    code, number = _port_codes(np.array(names))
    assert dict(zip(names, zip(code.tolist(), number.tolist()))) == {
        "p0": (PORT_P, 0), "p17": (PORT_P, 17), "p07": (-1, -1), "p": (-1, -1), "pcie3": (PORT_PCIE, 3),
        "nic0": (PORT_NIC, 0), "nic12": (PORT_NIC, 12), "nvl71": (2, 71), "x5": (-1, -1), "nic\u0663": (-1, -1),
        "p123456789": (PORT_P, 123456789), "p1234567890": (-1, -1), "": (-1, -1), "nic 1": (-1, -1)}


def test_endpoints_name_devices_and_nics_as_before():
    ends = _parse(["n0:nic1", "n0:nic007", "s0:p3", "s0", "zz:p1", "n1:nic\u0663", "dup:p0"],
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
    parsed = _parse(ends, nodes, switches)
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
def test_distinct_port_names_are_each_name_once(names):
    from designer.core.model.endpoints import _distinct

    distinct, position = _distinct(np.array(names))
    assert sorted(distinct.tolist()) == sorted(set(names)) and distinct[position].tolist() == names


def test_ids_of_any_length_are_found():
    """Ids of up to 9 ASCII characters are searched as integers, others as strings: both find the same."""
    ends = ["n0:nic1", "leaf12345:p1", "leaf123456789:p2", "leaf1234:p3", ":p4"]
    short = _parse(ends, ["n0"], ["leaf12345", "leaf1234"])
    assert short.kind.tolist() == [1, 2, 0, 2, 0] and short.index.tolist() == [0, 0, -1, 1, -1]
    long = _parse(ends, ["n0"], ["leaf12345", "leaf123456789", "leaf1234"])
    assert long.kind.tolist() == [1, 2, 2, 2, 0] and long.index.tolist() == [0, 0, 1, 2, -1]


def test_a_nic_number_past_32_bits_is_no_nic_of_the_server_and_no_crash():
    """The parse keeps 32-bit integers: a NIC written with 30 digits is past every server's NICs (no
    overflow), and the check names the link."""
    from designer.core.io.files import load_document
    from designer.core.design_check import check_document
    from designer.core.model.endpoints import NO_SUCH_NIC

    ends = _parse(["n0:nic" + "0" * 20 + "9" * 10, "n0:nic" + "9" * 30], ["n0"], [])
    assert ends.nic.tolist() == [NO_SUCH_NIC, NO_SUCH_NIC] and ends.nic.dtype == np.int32
    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    i, link = next((i, l) for i, l in enumerate(doc.links) if l.a.startswith("node0:nic"))
    link.a = "node0:nic" + "9" * 30
    problems = [p for p in check_document(doc) if p.severity == "error"]
    assert any(f"links[{i}]" in p.path for p in problems), [(p.path, p.message) for p in problems]


def test_endpoints_parsed_in_parts_are_those_parsed_at_once(monkeypatch):
    import dataclasses

    from designer.core.model import endpoints

    ends = ["n0:nic1", "n0:nic007", "s0:p3", "s0", "zz:p1", "n1:nic\u0663", "dup:p0", "s0:pcie12345"] * 3
    whole = _parse(ends, ["n0", "n1", "dup"], ["s0", "dup"])
    monkeypatch.setattr(endpoints, "PART_ENDPOINTS", 5)  # parts that split the list unevenly
    parts = endpoints._parse_in_parts(ends, ["n0", "n1", "dup"], ["s0", "dup"])
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


def test_a_long_run_is_decoded_in_parts_with_the_same_answers(monkeypatch):
    """A run longer than RUN_LINES is decoded part by part (one decode call holds the interpreter:
    a window waiting on it stalled); the items are the same, and a bad line in a later part still
    sends the whole run to the line-by-line reading."""
    import json

    from designer.core.io import yaml_source
    from designer.core.io.yaml_source import _reject_constant, _scan_run

    scan = json.JSONDecoder(parse_constant=_reject_constant).scan_once
    racks = ["null" if i % 7 else '"r1"' for i in range(50)]
    lines = [f'  - {{"id": "l{i}", "a": "n{i}:p1", "rack": {rack}}}' for i, rack in enumerate(racks)]
    whole = _scan_run(lines, scan)
    calls = []
    real = yaml_source._scan_joined, yaml_source._scan_joined_nan
    monkeypatch.setattr(yaml_source, "RUN_LINES", 8)
    monkeypatch.setattr(yaml_source, "_scan_joined_nan", lambda *a: calls.append(1) or real[1](*a))
    monkeypatch.setattr(yaml_source, "_scan_joined", lambda *a: calls.append(1) or real[0](*a))
    assert _scan_run(lines, scan) == whole and len(whole) == 50
    assert len(calls) == 7  # 50 lines in parts of 8
    spread = ['  - {"id": "r0", "x": [{}', '  - {}]}', '  - {"id": "r1"}, {"id": "r2"}']
    assert _scan_run(lines[:20] + spread + lines[20:], scan) is None
