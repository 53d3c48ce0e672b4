"""The wait for the slowest GPU: the expected maximum of N GPUs' speeds (it grows with the ranks
a step synchronises), a burn-in screen that cuts it (an Advisor change with its price), and its
own bar in the timeline, never inside a communication bar."""
import pytest

from tests.conftest import EXAMPLES

H100 = EXAMPLES / "h100-64gpu-infiniband.yaml"


def test_the_wait_is_its_own_bar_in_the_timeline():
    from designer.core.engine.evaluate import Engine
    from designer.core.io.files import load_document

    result = Engine().evaluate(load_document(H100))
    device = 0
    waits = [e for e in result.events if e.device == device and e.kind == "imbalance_wait"
             and "slowest of" in e.label]
    assert len(waits) == 1
    wait = waits[0]
    assert wait.end_s - wait.start_s == pytest.approx(result.slowest_rank_wait_s, rel=1e-9)
    comm = [e for e in result.events if e.device == device and e.kind.endswith("_comm")]
    assert all(e.end_s <= wait.start_s + 1e-12 or e.start_s >= wait.end_s - 1e-12 for e in comm)
    assert max(e.end_s for e in result.events if e.device == device) == pytest.approx(result.step_time_s, rel=1e-12)
