"""The Advisor's analyses as small parts: one AnalysisState per analysis decides what a late answer
means (analysis_state.py), and the texts the CLI prints too come from one place (core/analysis/texts.py)."""
import pytest

from designer.ui.panels.analysis_state import AnalysisState, Answer
from tests.ui.test_advisor import raise_advisor, searched, small_space, window  # noqa: F401  (the fixture)


def test_a_stale_result_is_never_shown_as_current():
    state = AnalysisState("advise")
    request = state.start()  # asked at revision 0 ...
    answer = state.receive(request, 0, 1, {"ranked": []}, None)  # ... the design is at revision 1 when it comes
    assert answer is Answer.OUTDATED
    assert state.result is None and state.current(1) is None and not state.busy
    request = state.start()
    assert state.receive(request, 1, 1, "r1", None) is Answer.RESULT
    assert state.current(1) == "r1" and not state.stale(1)
    # an edit: the result stays (to be shown as stale) but is never the current one
    assert state.stale(2) and state.current(2) is None and not state.settled(2)


def test_only_the_newest_request_is_taken():
    state = AnalysisState("scale")
    first, second = state.start(), state.start()
    assert state.receive(first, 0, 0, "old", None) is Answer.SUPERSEDED
    assert state.busy and state.result is None  # still waiting for the newer one
    assert state.receive(second, 0, 0, "new", None) is Answer.RESULT and state.result == "new"


def test_an_error_clears_busy_and_the_result():
    state = AnalysisState("search")
    state.receive(state.start(), 0, 0, "plans", None)
    request = state.start()
    assert state.busy
    assert state.receive(request, 0, 0, None, "the design has no workload") is Answer.ERROR
    assert not state.busy and state.result is None and state.error == "the design has no workload"
    assert state.settled(0) and not state.settled(1)  # an error is an answer for its revision only
    state.receive(state.start(), 0, 0, "plans again", None)
    assert state.error is None


def test_a_cancelled_request_is_never_shown():
    state = AnalysisState("search")
    request = state.start()
    state.cancel()
    assert not state.busy
    assert state.receive(request, 0, 0, "late", None) is Answer.SUPERSEDED and state.result is None


def test_a_scaling_error_clears_the_busy_bar(window, qtbot):
    """The worker's answer is an error: the panel is no longer busy and says why under the plot."""
    panel = raise_advisor(window, qtbot)
    qtbot.waitUntil(lambda: not panel.running, timeout=60_000)
    panel.run_scale()
    assert panel.running and panel.controls.busy.isVisibleTo(panel)
    request = panel.scale_state.request
    panel.worker.scaled.emit(request, panel.revision, None, "cannot scale: no servers to add", 0.0)
    assert not panel.scale_state.busy and panel.scale_state.result is None
    assert panel.controls.scaling_view.verdict_label.text() == "cannot scale: no servers to add"


@pytest.mark.slow
def test_the_best_plans_counts_are_the_cli_words(window, qtbot):
    """The counts line of the Best plans page is the CLI's (`designer search`), runner aside; the
    page's old copy lacked the candidates."""
    from designer.core.analysis.texts import search_counts_text

    panel = raise_advisor(window, qtbot)
    panel.plan_search.options = small_space()
    searched(panel, qtbot)
    result = panel.plan_search.result
    line = search_counts_text(result, with_runner=False)
    assert f"{result.counts.candidates:,} candidates" in line
    assert line in panel.plan_search.page.counts.text()
    assert search_counts_text(result) == line + f" on {result.runner}"  # what `designer search` prints


@pytest.mark.slow
def test_cli_search_prints_the_shared_counts_line():
    from designer.core.analysis.texts import search_counts_text
    from tests.conftest import EXAMPLES, run_cli

    code, out, _err = run_cli("search", EXAMPLES / "h100-64gpu-infiniband.yaml", "--top", "2", "--workers", "1")
    assert code == 0
    first = out.splitlines()[0]
    assert " candidates; " in first and " cut by the lower bound; " in first

    class Counts:  # the shape of a SearchResult, for the failed plans the CLI did not print
        total, invalid, no_memory, dominated, candidates = 10, 1, 2, 3, 4

    class Result:
        counts, evaluated, cut_by_bound, failed, elapsed_s, runner = Counts, 3, 1, 2, 0.25, "1 process"

    assert search_counts_text(Result) == ("10 plans; 1 impossible, 2 out of memory, 3 dominated, 4 candidates; "
                                          "3 costed, 1 cut by the lower bound, 2 failed; 0.2 s on 1 process")
