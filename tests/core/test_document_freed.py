"""A design nobody holds any more is freed at once by its reference counts, not left in a cycle for
the collector (whose walk over a 131k-GPU design's objects costs a few tenths of a second)."""
import gc
import weakref

from designer.core.design_check import check_document
from designer.core.engine.evaluate import Engine
from designer.core.io import load_document
from tests.conftest import EXAMPLES


def test_a_dropped_design_and_its_evaluation_are_freed_without_the_collector():
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
        doc.update(doc.nodes[0].id, name="edited")  # an edit: the change log holds a change
        assert doc.revision == 1 and doc.changes_since(0)
        check_document(doc)
        result = Engine().evaluate(doc)
        gone = weakref.ref(doc)
        del doc, result
        assert gone() is None
    finally:
        if was_enabled:
            gc.enable()


def test_the_parse_of_a_dropped_designs_link_ends_goes_with_it():
    """The check and the fabric share one parse of the links' ends; the design owns it, so a design
    that is closed takes its parse along (a 131k-GPU design's is ~10 MB) instead of leaving it behind
    for as long as a few other designs have not replaced it."""
    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    check_document(doc.snapshot())  # the live window checks a snapshot; the engine reads the same parse
    a_ends, _ = doc.link_ends.sides(doc)
    Engine().evaluate(doc)
    assert doc.link_ends.sides(doc)[0] is a_ends  # parsed once for the check, the engine and the caller
    gone = weakref.ref(a_ends.kind)
    del doc, a_ends
    assert gone() is None
