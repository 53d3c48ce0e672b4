"""The live window's checker (design_check.DesignChecker) always returns check_document's list,
in its order, while redoing only the parts an edit can change."""
import dataclasses
import math
import random

import pytest

from designer.core.io import load_document
from designer.core.design_check import check_document
from designer.core.live_check import DesignChecker
from designer.core.model.document import COLLECTION_OF
from tests.conftest import EXAMPLES


def test_the_incremental_check_equals_the_full_check_edit_after_edit():
    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    checker = DesignChecker()
    assert checker.check(doc.snapshot()) == check_document(doc)
    switches = {s.id: s for s in doc.switches}
    uplink = next(l for l in doc.links if l.a.split(":")[0] in switches and l.b.split(":")[0] in switches)
    port = switches[uplink.a.split(":")[0]].port_gbps
    edits = [
        ("links", uplink.id, {"bandwidth_gbps": port * 2}),  # a warning appears on that link
        ("links", uplink.id, {"latency_us": 1.5}),
        ("links", uplink.id, {"bandwidth_gbps": math.inf}),  # NaN/inf: named by the NaN check
        ("links", uplink.id, {"bandwidth_gbps": port}),  # and gone again
        ("links", uplink.id, {"kind": "ethernet"}),  # a kind: redone at the cable's two switches
        ("links", uplink.id, {"kind": "infiniband"}),
        ("job", None, {"tensor_model_parallel_size": 3}),  # a plan error
        ("job", None, {"tensor_model_parallel_size": 8}),
    ]
    full_before = checker.full_checks
    for collection, element_id, change in edits:
        if collection == "job":
            doc.set_job(parallelism=dataclasses.replace(doc.spec.parallelism, **change))
        else:
            doc.update(element_id, **change)
        assert checker.check(doc.snapshot()) == check_document(doc), change
        if change.get("bandwidth_gbps") in (port * 2, math.inf):  # the edit did make a problem
            assert any(p.element == uplink.id for p in check_document(doc))
    assert checker.full_checks == full_before  # no edit needed the whole design


def test_a_new_design_gets_a_full_check():
    a = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    b = load_document(EXAMPLES / "h100-roce-2to1-ethernet.yaml")
    checker = DesignChecker()
    checker.check(a.snapshot())
    assert checker.check(b.snapshot()) == check_document(b)
    assert checker.full_checks == 2


def test_a_nan_typed_into_a_link_is_caught_by_the_edits_own_check():
    doc = load_document(EXAMPLES / "a100-1024gpu-rail-infiniband.yaml")
    checker = DesignChecker()
    checker.check(doc.snapshot())
    far, near = doc.links[5], doc.links[-7]
    doc.update(near.id, latency_us=math.nan)
    problems = checker.check(doc.snapshot())
    assert problems == check_document(doc)
    assert [p.path for p in problems if "not a finite number" in p.message] == [
        f"spec.links[{len(doc.links) - 7}].latency_us"]
    doc.update(far.id, slowdown=math.inf)  # a second one, before the first in the list
    doc.update(near.id, latency_us=0.5)  # and the first one mended
    problems = checker.check(doc.snapshot())
    assert problems == check_document(doc)
    assert [p.path for p in problems if "not a finite number" in p.message] == ["spec.links[5].slowdown"]
    assert checker.full_checks == 1


def test_an_edits_check_reads_the_edited_elements_not_the_whole_design():
    """A NaN put into a link behind the document's back (no edit announced it) is not seen by the
    check of a later edit of another link: that check reads the edited link, not every number of the
    design. The full check (saving, `designer validate`) finds it."""
    doc = load_document(EXAMPLES / "a100-1024gpu-rail-infiniband.yaml")
    checker = DesignChecker()
    checker.check(doc.snapshot())
    doc.links[100].bandwidth_gbps = math.nan  # in place: no change in the document's log
    doc.update(doc.links[2000].id, latency_us=2.0)
    assert not any("not a finite number" in p.message for p in checker.check(doc.snapshot()))
    assert [p.path for p in check_document(doc) if "not a finite number" in p.message] == [
        "spec.links[100].bandwidth_gbps"]


def test_servers_marked_down_and_links_edited_keep_the_full_checks_list():
    doc = load_document(EXAMPLES / "gb200-nvl72-144gpu.yaml")
    checker = DesignChecker()
    assert checker.check(doc.snapshot()) == check_document(doc)
    nic_links = [l for l in doc.links if l.kind in ("infiniband", "ethernet")]
    edits = [(doc.nodes[3].id, {"state": "down"}), (nic_links[4].id, {"bandwidth_gbps": 10_000.0}),
             (doc.nodes[3].id, {"gpus_down": [1, 2]}), (nic_links[9].id, {"slowdown": math.nan}),
             (doc.switches[0].id, {"state": "down"}), (nic_links[4].id, {"bandwidth_gbps": 1.0}),
             (nic_links[9].id, {"slowdown": 1.0}), (doc.nodes[3].id, {"state": "up", "gpus_down": []})]
    for element_id, change in edits:
        doc.update(element_id, **change)
        assert checker.check(doc.snapshot()) == check_document(doc), change
    assert checker.full_checks == 1


def _random_edits(doc, rng, count):
    """Edits a user makes in the window without adding or removing anything: states of servers,
    switches and cables, GPUs down, a cable's speed, the job's TP."""
    network = [l for l in doc.links if l.kind in ("infiniband", "ethernet")]
    for _ in range(count):
        what = rng.randrange(6)
        if what == 0:
            yield rng.choice(network).id, {"state": rng.choice(["down", "up"])}
        elif what == 1:
            yield rng.choice(doc.switches).id, {"state": rng.choice(["down", "up", "up"])}
        elif what == 2:
            yield rng.choice(doc.nodes).id, {"state": rng.choice(["down", "up"])}
        elif what == 3:
            node = rng.choice(doc.nodes)
            yield node.id, {"gpus_down": rng.choice([0, 1, node.accelerator_count, node.accelerator_count + 1])}
        elif what == 4:
            yield rng.choice(network).id, {"bandwidth_gbps": rng.choice([100.0, 400.0, 800.0])}
        elif doc.spec.parallelism is not None:
            yield None, {"tensor_model_parallel_size": rng.choice([1, 2, 4, 8])}


@pytest.mark.parametrize("example", ["h100-64gpu-infiniband.yaml", "shared-roce-512gpu-3jobs.yaml",
                                     "gb200-nvl72-144gpu.yaml"])
def test_random_state_edits_keep_the_full_checks_list_without_a_full_check(example):
    """Servers, switches and cables marked down and up, GPUs down, speeds and the job's TP in random
    order: after each edit the live check's list is the full check's (the servers a job cannot reach,
    the GPUs up, the servers with more GPUs down than they have), and no edit re-checks the design."""
    doc = load_document(EXAMPLES / example)
    checker = DesignChecker()
    assert checker.check(doc.snapshot()) == check_document(doc)
    rng = random.Random(example)
    reached = 0
    for element_id, change in _random_edits(doc, rng, 60):
        if element_id is None:
            doc.set_job(parallelism=dataclasses.replace(doc.spec.parallelism, **change))
        else:
            doc.update(element_id, **change)
        full = check_document(doc)
        assert checker.check(doc.snapshot()) == full, change
        reached += any("cannot reach" in p.message or "servers it can reach" in p.message
                       or "servers they can reach" in p.message or "GPUs down but only" in p.message for p in full)
    assert reached  # the edits did make the jobs' reach and GPU problems come and go
    assert checker.full_checks == 1


def test_an_edits_check_does_not_look_for_unreachable_servers_again_unless_a_state_changed():
    """The servers a job across servers cannot reach follow from states and cables: an edit of a cable's
    speed keeps the last answer, and an edit of a cable's state finds it again from that one state. A
    cable cut behind the document's back (no edit announced it) stays unseen by both: the edits' checks
    read the edited elements, not every cable. The full check sees it."""
    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    assert doc.spec.parallelism.num_gpus in (0, None, doc.num_gpus())  # the job needs every GPU
    checker = DesignChecker()
    assert checker.check(doc.snapshot()) == check_document(doc)
    nic_cables = [l for l in doc.links if l.kind == "infiniband" and any(
        end.split(":")[0] in {n.id for n in doc.nodes} for end in (l.a, l.b))]
    nic_cables[0].state = "down"  # in place: no edit in the document's log
    doc.update(nic_cables[5].id, bandwidth_gbps=200.0)

    def reach(problems):
        return [p for p in problems if "servers it can reach" in p.message]

    assert not reach(checker.check(doc.snapshot()))
    assert reach(check_document(doc))
    doc.update(nic_cables[9].id, state="down")  # an announced state edit: the answer is found again
    [live] = [p.message for p in reach(checker.check(doc.snapshot()))]
    [full] = [p.message for p in reach(check_document(doc))]
    assert f"its cable {nic_cables[9].id} " in live and f"its cable {nic_cables[0].id} " not in live
    assert f"its cable {nic_cables[9].id} " in full and f"its cable {nic_cables[0].id} " in full



NUMBER_FIELDS = {"links": ("bandwidth_gbps", "latency_us", "slowdown"), "nodes": ("nic_gbps", "slowdown"),
                 "switches": ("port_gbps", "latency_us")}
FINITE = {"bandwidth_gbps": 400.0, "nic_gbps": 400.0, "port_gbps": 400.0, "latency_us": 0.5, "slowdown": 1.0}


def _apply_an_edit_that_breaks_or_mends(doc, rng) -> str:
    """One random edit: NaN / infinity typed into a server's, switch's or cable's number, or a
    finite number back; a cable renamed to another's id (a duplicate) or renamed away from it; a
    server or switch copied under its own id (a duplicate) and the first of them removed."""
    roll = rng.random()
    if roll < 0.08:
        a, b = rng.sample(doc.links, 2)
        doc.update(a.id, id=b.id)  # (the index names the first of a repeated id: a is renamed)
        return "duplicate"
    if roll < 0.12:
        name = rng.choice(["nodes", "switches"])
        doc.add(dataclasses.replace(rng.choice(getattr(doc, name))))
        return "duplicate"
    if roll < 0.5:
        ids = [e.id for name in ("links", "nodes", "switches") for e in getattr(doc, name)]
        seen, repeated = set(), []
        for element_id in ids:
            (repeated.append if element_id in seen else seen.add)(element_id)
        if repeated:
            element_id = rng.choice(repeated)
            if doc.find("links", element_id) is not None:
                doc.update(element_id, id=f"{element_id}-renamed-{rng.randrange(10**9)}")
            else:
                doc.remove(element_id)
            return "mended"
    if roll < 0.6:  # a number of an element whose id another has too: which one is meant is the full check's call
        ids = [e.id for name in ("links", "nodes", "switches") for e in getattr(doc, name)]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            element = doc.get(rng.choice(repeated))
            field = rng.choice(NUMBER_FIELDS[COLLECTION_OF[type(element)]])
            doc.update(element.id, **{field: rng.choice([math.nan, FINITE[field]])})
            return "not finite"
    broken = [(e, field) for name, fields in NUMBER_FIELDS.items() for e in getattr(doc, name) for field in fields
              if not math.isfinite(getattr(e, field)) and doc.get(e.id) is e]
    if broken and rng.random() < 0.5:
        element, field = rng.choice(broken)
        doc.update(element.id, **{field: FINITE[field]})
        return "finite"
    name = rng.choice(["links", "links", "nodes", "switches"])
    element = rng.choice(getattr(doc, name))
    doc.update(element.id, **{rng.choice(NUMBER_FIELDS[name]): rng.choice([math.nan, math.inf, -math.inf])})
    return "not finite"


@pytest.mark.parametrize("example", ["h100-64gpu-infiniband.yaml", "gb200-nvl72-144gpu.yaml"])
def test_random_duplicate_ids_and_non_finite_numbers_keep_the_full_checks_list(example):
    """Duplicate ids and NaN / infinity put in and taken out in random order: after each edit the
    live check's list is the full check's, and the problems did come and go."""
    doc = load_document(EXAMPLES / example)
    checker = DesignChecker()
    assert checker.check(doc.snapshot()) == check_document(doc)
    rng = random.Random(example)
    seen = {"duplicate": 0, "not finite": 0}
    for _ in range(80):
        what = _apply_an_edit_that_breaks_or_mends(doc, rng)
        full = check_document(doc)
        assert checker.check(doc.snapshot()) == full, what
        seen["duplicate"] += any(p.message.startswith("duplicate id") for p in full)
        seen["not finite"] += any("not a finite number" in p.message for p in full)
    assert 0 < seen["duplicate"] < 80 and 0 < seen["not finite"] < 80  # they came and went
    assert checker.full_checks < 60  # most cables' numbers were checked by the edit's own check


def test_a_full_check_finds_the_link_id_index_again_when_the_ids_are_the_same():
    """The links' id index (295k ids at 131k GPUs, ~45 ms to make) is made once: a cable removed and
    put back, then a full check (a server renamed to a taken id, then marked down: which of the two
    the edit meant is the full check's call), leaves the link ids as they were, so the next cable
    edit's check finds the index made before rather than indexing them again."""
    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    checker = DesignChecker()
    checker.check(doc.snapshot())
    cable = doc.links[4]
    doc.update(cable.id, bandwidth_gbps=cable.bandwidth_gbps)  # a cable found by id: its index made
    assert checker.check(doc.snapshot()) == check_document(doc)
    index = doc.link_id_index.of(doc.link_list("id"), doc.link_ids_version)
    _, position, removed = doc.remove(cable.id)
    doc.add(removed, position)  # another version of the same ids
    assert checker.check(doc.snapshot()) == check_document(doc)
    server, taken = doc.nodes[0].id, doc.nodes[1].id
    doc.update(server, id=taken)
    full_checks = checker.full_checks
    assert checker.check(doc.snapshot()) == check_document(doc)
    assert checker.full_checks == full_checks  # (the repeat followed)
    doc.update(taken, state="down")
    assert checker.check(doc.snapshot()) == check_document(doc)
    assert checker.full_checks == full_checks + 1  # (a full check: its look-ups start afresh)
    doc.update(cable.id, bandwidth_gbps=cable.bandwidth_gbps / 2)
    assert checker.check(doc.snapshot()) == check_document(doc)
    assert doc.link_id_index.of(doc.link_list("id"), doc.link_ids_version) is index


def test_a_cable_put_back_is_found_through_the_index_of_the_ids_before_it_went():
    """The check finds a cable put back (an undo) through the document's index of the links' ids as they
    were before the cable went (kept by the link-load analysis), moved by the edits since, rather than
    indexing the ids again (295k ids at 131k GPUs, ~45 ms) once the design without it was indexed."""
    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    checker = DesignChecker()
    checker.check(doc.snapshot())
    shared = doc.link_id_index
    shared.of(doc.link_list("id"), doc.link_ids_version)  # the link-load analysis of the design opened
    cable = doc.links[4]
    _, position, removed = doc.remove(cable.id)
    checker.check(doc.snapshot())
    shared.of(doc.link_list("id"), doc.link_ids_version)  # and of the design without the cable
    made = shared.made
    doc.add(removed, position)
    problems = checker.check(doc.snapshot())
    assert shared.made == made
    assert problems == check_document(doc)
    doc.update(cable.id, bandwidth_gbps=cable.bandwidth_gbps / 2)  # the cable put back, found by its id
    assert checker.check(doc.snapshot()) == check_document(doc)
