"""A search can be stopped before its first plan is costed: its checkpoint is called while the space
and the lower bounds are worked out (seconds on a loaded machine), and what it raises stops it."""
import pytest

from designer.core.analysis.search import search
from designer.core.io.files import load_document
from tests.conftest import EXAMPLES


class Stop(Exception):
    pass


def test_a_checkpoint_that_raises_stops_the_search_before_any_plan_is_costed():
    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    costed = []

    def checkpoint():
        raise Stop

    with pytest.raises(Stop):
        search(doc, workers=1, progress=lambda done, total: costed.append(done), checkpoint=checkpoint)
    assert costed == []


def test_the_checkpoint_is_called_through_the_enumeration_and_the_bounds():
    from designer.core.analysis.space import SpaceOptions

    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    calls, at_first_progress = [0], []

    def progress(done, total):
        if not at_first_progress:
            at_first_progress.append(calls[0])

    def checkpoint():
        calls[0] += 1

    opts = SpaceOptions(tp=[1, 2], pp=[1, 2], cp=[1], micro_batch=[1])
    plain = search(doc, workers=1, opts=opts)
    watched = search(doc, workers=1, opts=opts, progress=progress, checkpoint=checkpoint)
    assert at_first_progress and at_first_progress[0] >= 4  # one per layout (TP, PP, CP, EP) at least
    assert [r["step_time_s"] for r in watched.top] == [r["step_time_s"] for r in plain.top]
