"""Cables added, removed, renamed and re-pointed (and those edits undone) are checked without the
full check, and the live check's list is the full check's after every edit; repeated ids and cable
ends at no device fall back to the full check and agree with it too."""
import dataclasses
import random

from designer.core.design_check import check_document
from designer.core.live_check import DesignChecker
from designer.core.generate.fat_tree import generate_fat_tree


def _design():
    return generate_fat_tree(nodes=128, gpu="H100")


def _check(checker, doc):
    live = checker.check(doc.snapshot())
    full = check_document(doc)
    assert live == full  # the same problems, in the same order, with the same paths
    return full


def test_cable_adds_removes_renames_and_re_points_keep_the_full_checks_list_without_a_full_check():
    doc = _design()
    checker = DesignChecker()
    _check(checker, doc)
    rng = random.Random(7)
    removed = []  # (position, link) to put back, as undo does
    seen = {"port used twice": 0, "nic free": 0, "faster": 0}
    before, changed = _check(checker, doc), 0
    for step in range(120):
        roll = rng.random()
        if roll < 0.3 or len(removed) < 2:
            link = rng.choice(doc.links)
            _, position, element = doc.remove(link.id)
            removed.append((position, element))
        elif roll < 0.5:
            position, element = removed.pop(rng.randrange(len(removed)))
            doc.add(element, min(position, len(doc.links)))  # undo: back where it was
        elif roll < 0.6:  # a copy under a new id, at the end: its ports are now used twice
            doc.add(dataclasses.replace(rng.choice(doc.links), id=f"copy{step}"))
        elif roll < 0.75:
            link = rng.choice(doc.links)
            doc.update(link.id, id=f"{link.id}-r{step}")
        elif roll < 0.9:  # one end moved onto another cable's end (a port taken twice, a NIC left free)
            link, other = rng.sample(doc.links, 2)
            doc.update(link.id, **{rng.choice("ab"): rng.choice([other.a, other.b])})
        else:
            link = rng.choice(doc.links)
            with doc.batch():  # one undo step: a cable renamed and made faster than its switch's ports
                doc.update(link.id, bandwidth_gbps=rng.choice([400.0, 10_000.0]))
                doc.update(link.id, id=f"{link.id}-b{step}")
        full = _check(checker, doc)
        seen["port used twice"] += any(" is used by links " in p.message for p in full)
        seen["nic free"] += any("not connected" in p.message for p in full)
        seen["faster"] += any("is faster than" in p.message for p in full)
        changed += full != before
        before = full
    assert all(seen.values()), seen
    assert changed > 80  # nearly every edit changed the list (problems, or their places)
    assert checker.full_checks == 1


def test_repeated_ids_get_the_full_check_and_ends_at_no_device_their_own_and_agree_with_it():
    doc = _design()
    checker = DesignChecker()
    _check(checker, doc)
    first, second, third = doc.links[3], doc.links[40], doc.links[77]
    first_id = first.id
    doc.update(first_id, id=second.id)  # a repeated id: which cable an edit means is the full check's call
    assert any(p.message.startswith("duplicate id") for p in _check(checker, doc))
    assert checker.full_checks == 2
    doc.update(third.id, bandwidth_gbps=100.0)  # while ids repeat: the full check
    _check(checker, doc)
    doc.remove(second.id)  # the repeat gone (the index names the first of a repeated id: `first`)
    assert not any(p.message.startswith("duplicate id") for p in _check(checker, doc))
    full_checks = checker.full_checks
    doc.add(dataclasses.replace(third, id="l-new"))  # no repeat: checked alone
    _check(checker, doc)
    assert checker.full_checks == full_checks
    doc.update(third.id, a="leaf-that-is-not:p1")  # an end at no device: its did-you-mean reads every name
    assert any("dangling" in p.message for p in _check(checker, doc))
    doc.update(third.id, a=doc.links[78].a)  # mended (onto a port in use: named)
    assert not any("dangling" in p.message for p in _check(checker, doc))
    assert checker.full_checks == full_checks
    doc.add(dataclasses.replace(doc.links[5], id=third.id))  # an added cable repeats an id: the full check
    assert any(p.message.startswith("duplicate id") for p in _check(checker, doc))


def test_servers_switches_and_racks_added_removed_renamed_or_resized_are_checked_without_the_full_check():
    doc = _design()
    checker = DesignChecker()
    _check(checker, doc)
    server, switch, rack = doc.nodes[5].id, doc.switches[2].id, doc.racks[1].id
    doc.update(server, id="renamed-server")  # its cables now end at no device
    assert any(f"{server!r}" in p.message and "dangling" in p.message for p in _check(checker, doc))
    doc.update("renamed-server", id=server)
    assert not any("dangling" in p.message for p in _check(checker, doc))
    with doc.batch():  # deleted as the window deletes: its cables first
        removed = [doc.remove(link.id) for link in doc.links_of(server)] + [doc.remove(server)]
    _check(checker, doc)
    with doc.batch():  # and undone
        for _, position, element in reversed(removed):
            doc.add(element, position)
    _check(checker, doc)
    doc.update(server, accelerator_count=4)  # resized
    _check(checker, doc)
    doc.update(switch, radix=8)  # too few ports for its cables
    assert any(p.element == switch for p in _check(checker, doc))
    doc.remove(switch)  # through the API alone: its cables stay, dangling
    assert any("dangling" in p.message for p in _check(checker, doc))
    doc.update(rack, id="renamed-rack")  # its servers name a rack that is gone
    assert any("does not exist" in p.message for p in _check(checker, doc))
    doc.update("renamed-rack", units=2)
    doc.add(dataclasses.replace(doc.nodes[0], id="another-server", rack="renamed-rack", slot=0))  # past its units
    assert any(p.element == "another-server" for p in _check(checker, doc))
    assert checker.full_checks == 1


def test_removing_an_element_whose_id_repeats_leaves_the_other_one_found():
    doc = _design()
    twin = dataclasses.replace(doc.links[10])  # the same id, later in the list
    doc.add(twin)
    assert doc.find("links", twin.id) is doc.links[10]  # the first of a repeated id
    _, position, removed = doc.remove(twin.id)
    assert position == 10 and removed is not twin
    assert doc.find("links", twin.id) is twin
    doc.remove(twin.id)
    assert doc.find("links", twin.id) is None
    assert [l.id for l in doc.links].count(twin.id) == 0
