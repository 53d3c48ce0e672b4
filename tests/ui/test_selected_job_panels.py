"""Several jobs: every panel shows the job selected in the Jobs panel and says which; the change line
compares that job with its own previous result; the bundled shared-RoCE example shows who slows whom."""
import copy

import pytest

EXAMPLE = "shared-roce-256gpu-2jobs"  # two jobs that slow each other


def open_example(window, name: str = EXAMPLE) -> None:
    """File > Open Example > name."""
    act = next(a for a in window.files.example_menu.actions() if a.text() == name)
    act.trigger()
    assert window.settle() and window.result is not None


def select_job(window, row: int) -> None:
    window.jobs_panel.table.setCurrentCell(row, 0)  # the user clicks the job's row
    assert window.settle()


def test_open_example_shared_roce_shows_who_slows_whom(empty_window):
    window = empty_window
    open_example(window)
    rows = {r[0]: r for r in window.jobs_panel.row_texts()}
    moe, dense = rows["qwen3-30b-moe"], rows["llama3-8b-dp"]
    # each is slower than alone, and names the other on the leaves' up-links
    assert moe[4].startswith("llama3-8b-dp +") and "leaf up-links" in moe[4], moe
    assert dense[4].startswith("qwen3-30b-moe +") and "leaf up-links" in dense[4], dense
    first, second = window.result.jobs
    assert first.slowdown_vs_alone > 0.05 and second.slowdown_vs_alone > 0.05  # not a rounding: +12 % and +9 %
    assert first.interference[0]["job"] == "llama3-8b-dp" and second.interference[0]["job"] == "qwen3-30b-moe"
    tip = window.jobs_panel.table.item(0, 4).toolTip()
    assert "llama3-8b-dp: +" in tip and "leaf" in tip  # the share, the resource and the switches


def test_open_example_three_jobs_names_who_slows_the_moe_job(empty_window):
    window = empty_window
    open_example(window, "shared-roce-512gpu-3jobs")
    rows = {r[0]: r for r in window.jobs_panel.row_texts()}
    assert rows["qwen3-30b-moe"][4].startswith("llama3-8b +")
    tip = window.jobs_panel.table.item(2, 4).toolTip()
    assert "llama3-8b: +" in tip and "llama3-70b: +" in tip  # everyone who slows it, in the tooltip


@pytest.mark.slow
def test_every_panel_follows_the_selected_job(empty_window):
    from designer.ui.document.job_commands import SetJobs

    window = empty_window
    open_example(window)
    select_job(window, 1)
    second = window.result.jobs[1]
    assert second.name == "llama3-8b-dp"
    # Breakdown (with its memory bar), Timeline and Advisor: the second job's, titled so
    for dock, title in ((window.breakdown_dock, "Breakdown"), (window.timeline_dock, "Timeline"),
                        (window.advisor_dock, "Advisor")):
        assert dock.windowTitle() == f"{title}: llama3-8b-dp"
    panel = window.breakdown_panel
    assert panel.result is second.result and panel.job == "llama3-8b-dp"
    assert panel.plots.title.text.startswith("Job llama3-8b-dp: Step time"), panel.plots.title.text
    assert window.results.shown_result() is second.result
    assert "job llama3-8b-dp" in panel.plots.memory.plot.getAxis("bottom").labelText
    window.timeline_dock.raise_()
    assert window.settle()
    assert window.timeline_panel.result is second.result
    # the change line: the same job before and after an edit of it
    before = second.result.step_time_s
    jobs = copy.deepcopy(list(window.qdoc.doc.spec.jobs))
    jobs[1].workload.global_batch_size *= 2
    window.qdoc.push(SetJobs(window.qdoc, jobs, "double the batch of llama3-8b-dp"))
    assert window.settle()
    assert panel.job == "llama3-8b-dp" and panel.result is window.result.jobs[1].result
    assert panel.previous.job == "llama3-8b-dp" and panel.previous.step_time_s == pytest.approx(before)
    assert "of job llama3-8b-dp" in panel.diff_label.text()
    # another job selected: no change line across jobs
    select_job(window, 0)
    assert panel.job == "qwen3-30b-moe" and panel.previous is None
    assert "first evaluation of job qwen3-30b-moe" in panel.diff_label.text()
    # the Advisor analyses the selected job, alone
    select_job(window, 1)
    window.advisor_dock.raise_()
    advisor = window.advisor_panel
    advisor.analyse()
    assert advisor.wait_done(120)
    assert advisor.advice_state.error is None, advisor.advice_state.error
    assert advisor.advice_state.result["job_name"] == "llama3-8b-dp"
    assert "for job llama3-8b-dp alone" in advisor.controls.status_label.text()
