"""File > Compare With...: a side that does not fit makes the headline red and says why."""
import dataclasses

from tests.ui.test_compare_dialog import cells, compare  # noqa: F401  (the fixture)


def test_a_side_that_does_not_fit_turns_the_headline_red(compare, tmp_path):  # noqa: F811
    from PySide6.QtGui import QColor

    from designer.core.io import load_document, save_document
    from designer.ui.panels.plot_style import SLOWER

    window, run, one, four = compare
    doc = load_document(four)
    doc.spec.parallelism = dataclasses.replace(  # Llama 3 8B unsharded on one GPU each: 173 GiB of 80
        doc.spec.parallelism, tensor_model_parallel_size=1, pipeline_model_parallel_size=1,
        use_distributed_optimizer=False, zero_stage=0, recompute_granularity="none")
    heavy = tmp_path / "heavy.yaml"
    save_document(doc, heavy)
    dialog = run(heavy)
    assert dialog.error is None
    assert dialog.summary.text().startswith("NOT A VALID COMPARISON: B (heavy.yaml) does not fit")
    assert f"color: {SLOWER}" in dialog.summary.styleSheet()
    fits = cells(dialog, "fits in memory (with headroom)")
    assert fits[1] == "fits" and fits[2] == "does not fit"
    row = next(i for i in range(dialog.table.rowCount())
               if dialog.table.item(i, 0).text() == "fits in memory (with headroom)")
    assert dialog.table.item(row, 2).foreground().color() == QColor(SLOWER)
    memory = next(i for i in range(dialog.table.rowCount())
                  if dialog.table.item(i, 0).text() == "memory per GPU, peak (GiB)")
    assert dialog.table.item(memory, 3).foreground().color() != QColor("#16a34a")  # less memory is not green
