"""A design held still (Document.held_still): its links' fields read once and shared by the check,
the engine and the link classes, as `designer evaluate` reads a design; the same answers as reading
each afresh, and an edit through the document seen at once."""
import math
from pathlib import Path

import numpy as np

from designer.core.analysis.link_load import classes_json
from designer.core.design_check import check_document
from designer.core.engine.evaluate import Engine
from designer.core.io import load_document

EXAMPLES = Path(__file__).resolve().parents[2] / "resources" / "examples"
RAIL_1K = EXAMPLES / "a100-1024gpu-rail-infiniband.yaml"


def _numbers(result) -> dict:
    out = result.as_json()
    out.pop("engine_time_s", None)  # a timing
    return out


def test_a_design_held_still_checks_and_evaluates_as_one_read_afresh():
    doc = load_document(RAIL_1K)
    problems = check_document(doc)
    free = Engine().evaluate(doc)
    with doc.held_still():
        assert check_document(doc) == problems
        held = Engine().evaluate(doc)
        assert _numbers(held) == _numbers(free)
        assert classes_json(held, doc) == classes_json(free, doc)
        assert np.array_equal(held.link_utilization_array, free.link_utilization_array)


def test_an_edit_through_the_document_ends_the_shared_reading():
    doc = load_document(RAIL_1K)
    before = Engine().evaluate(doc).link_utilization_array
    busiest = int(np.argmax(before))
    link = doc.links[busiest]
    with doc.held_still():
        check_document(doc)  # the check reads every link's bandwidth into the shared reading
        doc.update(link.id, bandwidth_gbps=link.bandwidth_gbps / 4)
        held = Engine().evaluate(doc).link_utilization_array
    fresh = Engine().evaluate(doc).link_utilization_array
    assert held[busiest] > before[busiest]
    assert np.array_equal(held, fresh)


def test_the_shared_reading_ends_with_its_block():
    doc = load_document(RAIL_1K)
    with doc.held_still():
        assert doc.link_values("bandwidth_gbps") is doc.link_values("bandwidth_gbps")  # read once
    doc.links[0].bandwidth_gbps = 1.0  # in place, after the block: read afresh
    assert next(iter(doc.link_values("bandwidth_gbps"))) == 1.0


def test_the_check_of_a_design_held_still_names_a_number_that_is_not_finite():
    doc = load_document(RAIL_1K)
    doc.links[100].latency_us = math.nan  # before the block: its reading sees it
    with doc.held_still():
        doc.link_values("bandwidth_gbps")  # a field another reader asked for first
        paths = [p.path for p in check_document(doc) if "not a finite number" in p.message]
    assert paths == ["spec.links[100].latency_us"]
