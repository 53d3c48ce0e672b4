"""The gradient reduction's precision and bucket size are set in the job panel like any plan key."""
from tests.conftest import EXAMPLES
from tests.ui.test_editor import window  # noqa: F401  (the fixture)
from tests.ui.test_job_panel import type_into


def test_bf16_gradients_and_the_bucket_size_from_the_job_panel(window):
    window.open_file(str(EXAMPLES / "h100-64gpu-infiniband.yaml"))
    window.settle()
    fp32 = window.result.breakdown_s["dp_comm"]
    panel = window.job_panel
    type_into(panel, "parallelism.grad_reduce_in_bf16", "true")
    assert window.qdoc.doc.spec.parallelism.grad_reduce_in_bf16 is True
    assert window.settle() and window.result.breakdown_s["dp_comm"] < fp32
    type_into(panel, "parallelism.ddp_bucket_size", "768000000")
    assert window.qdoc.doc.spec.parallelism.ddp_bucket_size == 768_000_000
    assert window.settle()
    window.qdoc.undo_stack.undo()
    window.qdoc.undo_stack.undo()
    assert window.qdoc.doc.spec.parallelism.grad_reduce_in_bf16 is None
    assert window.settle() and window.result.breakdown_s["dp_comm"] == fp32
