"""The links' rules of the design check (model/link_rules.py): each rule's condition runs on whole
columns for the full check and on one link for the live check of an edit; the messages name the
link, its end and the fix, in the order of the links (a link's `a` end, its `b` end, its kind)."""
from __future__ import annotations

import pytest

from designer.core.design_check import check_document
from designer.core.live_check import DesignChecker
from designer.core.io import load_document, loads_document
from tests.conftest import EXAMPLES, SMALL


def edit(text, old, new):
    assert old in text
    return text.replace(old, new, 1)


def said(text: str) -> list[tuple[str, str]]:
    return [(p.path, p.message) for p in check_document(loads_document(text, "design.yaml"))]


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
def test_the_examples_links_are_sound(name):
    problems = check_document(load_document(EXAMPLES / name))
    assert not [p for p in problems if p.path.startswith("spec.links")]


def cut_off_n1(gpu: int, nic: str) -> tuple[str, str]:
    """The job's own problem when a broken link leaves n1 with a GPU whose NIC has no cable: the
    16-GPU job no longer fits on the servers it can reach (validate says what evaluate would)."""
    return ("spec.parallelism", f"the job needs 16 GPUs across servers but 8 are on servers it can reach "
                                f"(n1: GPU {gpu}'s NIC {nic} is not cabled)")


BROKEN = {
    "port used twice": (('b: "leaf0:p1"', 'b: "leaf0:p0"'),
                        [("spec.links[1].b", "port p0 of leaf0 is used by links l0 and l1")]),
    "port past the last": (('b: "leaf0:p3"', 'b: "leaf0:p9"'),
                           [("spec.links[3].b", "1 cable(s) from port p9 go past the last port of leaf0 (p7)")]),
    "not a port": (('a: "n0:nic1"', 'a: "n0:nik1"'),
                   [("spec.links[1].a", "port 'nik1' of n0 is not an infiniband port"),
                    ("spec.nodes[0]", "1 NIC(s) of n0 not connected (nic1)")]),
    "leading zero": (('a: "n0:nic1"', 'a: "n0:nic01"'),
                     [("spec.links[1].a", "port 'nic01' of n0 is not an infiniband port"),
                      ("spec.nodes[0]", "1 NIC(s) of n0 not connected (nic1)")]),
    "dangling": (('a: "n1:nic0"', 'a: "n9:nic0"'),
                 [("spec.links[2].a", "link l2 ends at 'n9', which does not exist (dangling)"),
                  ("spec.nodes[1]", "1 NIC(s) of n1 not connected (nic0)"),
                  cut_off_n1(0, "nic0")]),
    "wrong kind": (('b: "leaf0:p0", kind: infiniband', 'b: "leaf0:p0", kind: ethernet'),
                   [("spec.links[0].kind", "ethernet link l0 is plugged into an infiniband NIC of n0"),
                    ("spec.links[0].kind", "ethernet link l0 is plugged into infiniband switch leaf0")]),
    "faster than the ports": (('kind: infiniband, bandwidth_gbps: 400}\n    - {id: l3',
                               'kind: infiniband, bandwidth_gbps: 800}\n    - {id: l3'),
                              [("spec.links[2].bandwidth_gbps",
                                "link l2 at 800 Gb/s is faster than the 400 Gb/s ports of leaf0")]),
    "a free NIC": (('    - {id: l3, a: "n1:nic1", b: "leaf0:p3", kind: infiniband, bandwidth_gbps: 400}\n', ""),
                   [("spec.nodes[1]", "1 NIC(s) of n1 not connected (nic1)"), cut_off_n1(4, "nic1")]),
    "no port (sound)": (('a: "n1:nic1"', 'a: "n1"'), []),
    "two servers joined": (('b: "leaf0:p2"', 'b: "n0:nic5"'),
                           [("spec.links[2].b", "1 cable(s) from port nic5 go past the last port of n0 (nic1)"),
                            ("spec.links[2]", "infiniband link l2 joins two servers directly"),
                            cut_off_n1(0, "nic0")]),
    "non-ASCII digits (sound: int() reads them)": (('a: "n0:nic1"', 'a: "n0:nic\u0661"'), []),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_each_link_rule_names_the_link_its_end_and_the_fix(case):
    (old, new), expected = BROKEN[case]
    assert said(edit(SMALL, old, new)) == expected


def test_the_first_link_keeps_a_port_and_the_later_one_stops_at_it():
    """Three cables from n0's nic0 run into nic1, which l0 takes: l1 is named at nic1 and takes no
    further port, so its third NIC stays free; the ports of l1's other end are its own."""
    text = edit(SMALL, "nic_count: 2\n      rack: r0\n      slot: 0", "nic_count: 4\n      rack: r0\n      slot: 0")
    text = edit(text, 'a: "n0:nic0", b: "leaf0:p0"', 'a: "n0:nic1", b: "leaf0:p0"')
    text = edit(text, '{id: l1, a: "n0:nic1", b: "leaf0:p1"', '{id: l1, a: "n0:nic0", b: "leaf0:p4", count: 3')
    assert said(text) == [
        ("spec.links[1].a", "port nic1 of n0 is used by links l0 and l1"),
        ("spec.nodes[0]", "2 NIC(s) of n0 not connected (nic2, nic3)"),
    ]


def test_repeated_ids_mean_the_last_server_of_that_id():
    text = edit(SMALL, "    - id: n1\n      accelerator: H100\n      nic_count: 2",
                "    - id: n0\n      accelerator: H100\n      nic_count: 1")
    problems = said(text)
    assert problems[0] == ("spec.nodes[1].id", "duplicate id 'n0' (also spec.nodes[0])")
    # the ends of n0 mean the second n0, which has one NIC: nic1 is past its last port
    assert ("spec.links[1].a", "1 cable(s) from port nic1 go past the last port of n0 (nic0)") in problems


def test_an_edited_links_kind_rules_run_on_that_link_alone():
    doc = loads_document(SMALL, "small.yaml")
    checker = DesignChecker()
    checker.check(doc.snapshot())
    doc.update("l2", bandwidth_gbps=800.0)
    assert [(p.path, p.message) for p in checker.check(doc.snapshot())] == [
        ("spec.links[2].bandwidth_gbps", "link l2 at 800 Gb/s is faster than the 400 Gb/s ports of leaf0")]
    assert checker.full_checks == 1


def test_a_port_with_a_digit_that_is_no_number_is_named_not_a_crash(tmp_path, capsys):
    """'nic\u00b2' reads as digits to Python but as no number: `designer validate` names the port (it
    reported an internal error, ValueError, before)."""
    from designer.cli import main

    path = tmp_path / "superscript.yaml"
    path.write_text(edit(SMALL, 'a: "n0:nic1"', 'a: "n0:nic\u00b2"'), encoding="utf-8")
    assert main(["validate", str(path)]) != 0
    out = capsys.readouterr()
    assert "spec.links[1].a" in out.out + out.err and "is not an infiniband port" in out.out + out.err
    assert "Traceback" not in out.out + out.err
