"""A design held still (Document.held_still): its links' fields read once and shared by the check,
the engine and the link classes, as `designer evaluate` reads a design; the same answers as reading
each afresh, and an edit through the document seen at once."""
import gc
import math
import tracemalloc
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


def _read_keeping_link_fields(path):
    from designer.core.io import files
    from designer.core.io.files import LinkFieldsKept
    from designer.core.model.document import Document

    reader = LinkFieldsKept()
    kind, metadata, spec = files.parse(files.read_text(path), str(path), reader)
    return Document(spec, metadata, link_fields=reader.fields), reader.fields


def test_a_design_read_with_its_link_fields_is_held_still_on_the_readers_lists(monkeypatch):
    from designer.core.io import yaml_source

    monkeypatch.setattr(yaml_source, "RUN_CHARS", 50_000)  # read in several parts: the lists hold them all, in order
    doc, fields = _read_keeping_link_fields(RAIL_1K)
    with doc.held_still():
        for name in ("id", "a", "b", "kind", "bandwidth_gbps", "count", "slowdown", "state"):
            assert doc.link_values(name) is fields[name]  # not read back from the link objects
            assert fields[name] == [getattr(link, name) for link in doc.links]
        held = Engine().evaluate(doc)
        assert check_document(doc) == check_document(load_document(RAIL_1K))
    assert _numbers(held) == _numbers(Engine().evaluate(load_document(RAIL_1K)))
    with doc.held_still():  # a later block reads the links themselves
        assert doc.link_values("a") is not fields["a"] and doc.link_values("a") == fields["a"]


def test_an_edit_before_the_block_leaves_the_readers_lists_aside():
    doc, fields = _read_keeping_link_fields(RAIL_1K)
    link = doc.links[5]
    doc.update(link.id, bandwidth_gbps=link.bandwidth_gbps / 4)
    with doc.held_still():
        assert doc.link_values("bandwidth_gbps")[5] == fields["bandwidth_gbps"][5] / 4
    doc, fields = _read_keeping_link_fields(RAIL_1K)
    doc.spec.links = doc.links[:-1]  # another list of links
    with doc.held_still():
        assert doc.link_values("id") == [link.id for link in doc.links] and doc.link_values("id") is not fields["id"]


def _held_bytes(**options) -> tuple[int, int]:
    """(bytes a loaded design holds, its links): what stays allocated while it is open."""
    gc.collect()
    tracemalloc.start()
    try:
        doc = load_document(RAIL_1K, **options)
        gc.collect()
        return tracemalloc.get_traced_memory()[0], len(doc.links)
    finally:
        tracemalloc.stop()


def test_load_document_keeps_the_link_fields_only_when_asked():
    _held_bytes()  # the catalog's entries, read once, are not the design's
    (plain, links), (kept, _) = _held_bytes(), _held_bytes(keep_link_fields=True)
    assert kept - plain > 40 * links  # a design that stays open holds no second copy of its links' fields
    doc = load_document(RAIL_1K, keep_link_fields=True)
    with doc.held_still():
        assert doc.link_values("a") == [link.a for link in doc.links]


def test_evaluate_with_a_link_set_on_the_command_line_sees_the_new_value(capsys):
    """designer evaluate reads the links' fields once for its held block: a --set on a link (an edit
    through the document) must reach the engine, as evaluating the edited design afresh."""
    import json

    from designer.cli import main

    doc = load_document(RAIL_1K)
    busiest = doc.links[int(np.argmax(Engine().evaluate(doc).link_utilization_array))]
    link_id, slower = busiest.id, busiest.bandwidth_gbps / 8
    doc.update(link_id, bandwidth_gbps=slower)
    fresh = Engine().evaluate(doc).as_json()["step_time_s"]
    assert main(["evaluate", str(RAIL_1K), "--json", "--set", f"links[{link_id}].bandwidth_gbps={slower}"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["step_time_s"] == fresh
    assert out["step_time_s"] != Engine().evaluate(load_document(RAIL_1K)).as_json()["step_time_s"]
