"""A sweep on a Dask worker with several threads costs every plan as a serial run does.

The threads of one Dask worker run tasks at the same time; costing a plan rewrites the
document's job, so a document shared between threads gave one plan another's step time
(a search on a thread pool answers as a serial one). A tiny switch interval forces thread switches inside every evaluation.
"""
import json
import sys

import pytest

from designer.core.analysis.sweep import SerialRunner, make_runner
from designer.core.generate.fat_tree import generate_fat_tree
from designer.core.io import dumps_document, load_document, save_document
from designer.core.io.overrides import apply_overrides
from tests.conftest import EXAMPLES, local_dask_cluster, run_cli
from tests.core.test_engine_cache import _plans

distributed = pytest.importorskip("distributed", reason="the Dask extra (distributed) is not installed")


@pytest.fixture
def forced_thread_switches():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


@pytest.mark.slow
def test_every_plan_on_a_four_thread_worker_matches_a_serial_evaluation(forced_thread_switches):
    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    text = dumps_document(doc)
    plans = _plans(doc, 96)
    expected = SerialRunner(text).submit(plans).result()
    assert sum("step_time_s" in r for r in expected) > 48  # most plans run: the check has teeth
    with local_dask_cluster(n_workers=1, threads_per_worker=4, processes=False) as cluster:
        runner = make_runner(text, scheduler=cluster.scheduler_address)
        try:
            assert runner.workers == 1  # one process, whatever its threads
            assert "1 worker process, 4 threads" in runner.name
            assert any("--nthreads 1 --nworkers N" in w for w in runner.warnings)
            for _ in range(3):  # the old shared document went wrong in 2 of 3 such rounds
                futures = [runner.submit(plans[i:i + 4]) for i in range(0, len(plans), 4)]
                rows = [r for f in futures for r in f.result()]
                got = [(r["point"].label(), r.get("step_time_s"), r.get("error")) for r in rows]
                want = [(r["point"].label(), r.get("step_time_s"), r.get("error")) for r in expected]
                assert got == want
        finally:
            runner.close()


@pytest.mark.slow
def test_search_on_workers_with_several_threads_warns_and_agrees_with_local(tmp_path):
    doc = generate_fat_tree(nodes=2, gpu="H100")
    apply_overrides(doc, ["workload.preset=llama3-8b", "workload.global_batch_size=64", "workload.micro_batch_size=1"])
    path = tmp_path / "two-servers.yaml"
    save_document(doc, path)
    with local_dask_cluster(n_workers=1, threads_per_worker=4, processes=False) as cluster:
        code, out, err = run_cli("search", path, "--top", "5", "--scheduler", cluster.scheduler_address, "--json")
    assert code == 0, err
    assert "dask worker --nthreads 1 --nworkers N" in err
    dask = json.loads(out)
    assert dask["runner"].endswith("(1 worker process, 4 threads)")
    code, out, err = run_cli("search", path, "--top", "5", "--workers", "1", "--json")
    local = json.loads(out)
    assert [(r["plan"], r["step_time_s"]) for r in dask["top"]] == [(r["plan"], r["step_time_s"])
                                                                   for r in local["top"]]
