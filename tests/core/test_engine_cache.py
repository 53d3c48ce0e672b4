"""The engine's memos (engine/cache.py and the lru_caches of pure functions) never change an answer:
not across threads that each own an engine, not in another order of plans, and a result keeps
numbers, not the fabric and document it was costed on."""
import gc
import random
import sys
import types
import weakref
from concurrent.futures import ThreadPoolExecutor

import pytest

from designer.core.analysis import sweep
from designer.core.analysis.space import enumerate_space
from designer.core.engine.evaluate import Engine, resolve_job
from designer.core.engine.fabric import Fabric
from designer.core.engine.memory import stage_parameters
from designer.core.engine.schedule import StageTimes, simulate
from designer.core.engine.stages.layout import stage_layers
from designer.core.io import dumps_document, load_document
from designer.core.model.catalog import default_catalog
from designer.core.model.document import Document
from tests.conftest import EXAMPLES


def _plans(doc, count: int, seed: int = 1):
    catalog = default_catalog()
    job = resolve_job(doc, catalog)
    acc = catalog.accelerator(doc.nodes[0].accelerator)
    candidates, _ = enumerate_space(job.workload, job.shape, job.plan.num_gpus, doc.nodes[0].accelerator_count,
                                    acc.hbm_gib, doc.spec.calibration, None)
    return random.Random(seed).sample(sorted(candidates, key=lambda p: p.label()), count)


def _answers(rows):
    return [(r["point"].label(), r.get("step_time_s"), r.get("breakdown_s"), r.get("memory_gib"), r.get("error"))
            for r in rows]


@pytest.fixture
def forced_thread_switches():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def test_plans_on_four_threads_match_a_serial_run_under_forced_thread_switches(forced_thread_switches):
    """As a Dask worker with four threads costs a sweep: each thread its own document and engine,
    switched between every few bytecodes. A new pool each round, so the threads' documents,
    engines, shapes and layouts die and new ones take their addresses (a memo keyed by id() of an
    object that can die would hand a new plan an old plan's numbers)."""
    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    text = dumps_document(doc)
    plans = _plans(doc, 48)
    sweep._THREAD_STATE.state = None
    want = _answers(sweep.evaluate_points(text, plans))
    assert sum(row[1] is not None for row in want) > 24  # most plans run: the check has teeth
    for _ in range(12):
        with ThreadPoolExecutor(4) as pool:
            futures = [pool.submit(sweep.evaluate_points, text, plans[i:i + 3]) for i in range(0, len(plans), 3)]
            got = _answers([row for f in futures for row in f.result()])
        assert got == want


def test_an_engine_answers_every_plan_as_a_fresh_one_in_any_order():
    """The memos reused from earlier plans give each plan the numbers a new engine gives it."""
    doc = load_document(EXAMPLES / "h100-64gpu-infiniband.yaml")
    text = dumps_document(doc)
    plans = _plans(doc, 24, seed=2)
    fresh = {}
    for plan in plans:
        sweep._THREAD_STATE.state = None
        fresh[plan.label()] = _answers(sweep.evaluate_points(text, [plan]))[0]
    for seed in range(3):
        order = plans[:]
        random.Random(seed).shuffle(order)
        sweep._THREAD_STATE.state = None
        assert _answers(sweep.evaluate_points(text, order)) == [fresh[p.label()] for p in order]
    sweep._THREAD_STATE.state = None


def _reachable(root, kinds) -> list[str]:
    """Paths from `root` to any object of `kinds`, through containers, objects and closures."""
    seen, stack, found = set(), [(root, type(root).__name__)], []
    while stack:
        obj, path = stack.pop()
        if id(obj) in seen or isinstance(obj, (type, types.ModuleType)):
            continue
        seen.add(id(obj))
        if isinstance(obj, kinds):
            found.append(path)
            continue
        if isinstance(obj, types.FunctionType):  # what it closes over, not its module's globals
            refs = [*(obj.__closure__ or ()), *(obj.__defaults__ or ())]
        else:
            refs = gc.get_referents(obj)
        stack += [(ref, f"{path} > {type(ref).__name__}") for ref in refs]
    return found


@pytest.mark.parametrize("example", ["h100-64gpu-infiniband.yaml", "shared-roce-512gpu-3jobs.yaml"])
def test_a_result_keeps_no_fabric_nor_document(example):
    """A result (and every job's result in it) holds numbers: what it needs of the fabric and the
    document is copied out, so dropping the engine and the document frees them."""
    doc = load_document(EXAMPLES / example)
    result = Engine().evaluate(doc)
    assert len(result.jobs) == (3 if "3jobs" in example else 1)
    assert result.link_utilization and result.events  # the detail made on demand still comes
    assert _reachable(result, (Fabric, Document, Engine)) == []


def test_collective_groups_and_job_views_are_kept_in_the_cache_and_go_with_their_fabric():
    """The groups and the jobs' views of the fabric are memos of the engine's one cache: reused by
    the next evaluation of the design, and forgotten when the fabric is built again."""
    engine = Engine()
    engine.evaluate(load_document(EXAMPLES / "shared-roce-256gpu-2jobs.yaml"))
    groups, views = dict(engine.cache.groups), dict(engine.cache.job_views)
    assert groups and views
    old = [engine.built_fabric, *views.values()]  # held: their ids stay theirs
    engine.evaluate(load_document(EXAMPLES / "shared-roce-256gpu-2jobs.yaml"))  # another document: rebuilt
    fabric, views = engine.built_fabric, list(engine.cache.job_views.values())
    assert views and not any(new is o for new in [fabric, *views] for o in old)  # no view of the old fabric
    on = {id(view) for view in views} | {id(fabric)}
    assert all(id(model.fabric) in on for model in engine.cache.groups.values())  # none on the old fabric
    assert engine.cache.groups_in_use is None  # outside an evaluation nothing is pinned


@pytest.mark.parametrize("example", ["h100-64gpu-infiniband.yaml", "shared-roce-512gpu-3jobs.yaml"])
def test_dropping_the_document_and_engine_frees_them_and_their_fabric_while_the_result_lives(example):
    """A result holds numbers: once the caller lets go of the document and the engine, the
    document and the fabric are freed although the result is kept, and the detail it makes
    on demand (the busiest links, the per-device events) still comes afterwards."""
    doc = load_document(EXAMPLES / example)
    engine = Engine()
    result = engine.evaluate(doc)
    fabrics = [weakref.ref(engine.built_fabric), *(weakref.ref(view) for view in engine.cache.job_views.values())]
    document = weakref.ref(doc)
    del doc, engine
    gc.collect()
    assert document() is None
    assert [ref() for ref in fabrics] == [None] * len(fabrics)
    assert result.step_time_s > 0 and result.link_utilization and result.events
    assert all(job.result.step_time_s > 0 for job in result.jobs)


def _shared_memo_answers(start: int) -> list:
    """Stage layers, pipeline schedules and stage parameters of more shapes than their process-wide
    memos keep (256 stage layers, 96 schedules), from `start` on, so every call also evicts."""
    shape = resolve_job(load_document(EXAMPLES / "h100-64gpu-infiniband.yaml"), default_catalog()).shape
    layer_counts = [(start + i) % 600 + 1 for i in range(600)]
    sizes = [(p, m) for p in range(1, 9) for m in range(1, 17)]
    sizes = sizes[start % len(sizes):] + sizes[:start % len(sizes)]
    answers = [stage_layers(types.SimpleNamespace(layers=n), 1, 1) for n in layer_counts]
    for p, m in sizes:
        times = [StageTimes([1.0 + s], [2.0 + s], [0.0]) for s in range(p)]
        answers.append((p, m, simulate("1f1b", p, m, 1, times, 0.25).stage_end))
        answers.append(stage_parameters(shape, 1, 1, 1, p, 0, tuple(range(m))))
    return sorted(answers, key=repr)


def test_the_process_wide_memos_answer_four_threads_alike_while_they_evict(forced_thread_switches):
    """The memos shared by every engine in a process (pure functions of values) stay right when
    four threads fill them past their bound at once, switched between every few bytecodes: a
    hand-made shared dict evicting the same oldest entry from two threads raised KeyError here."""
    want = _shared_memo_answers(0)
    for _ in range(4):  # the old dict failed about one such round in two
        with ThreadPoolExecutor(4) as pool:
            got = list(pool.map(_shared_memo_answers, [0, 151, 302, 453]))
        assert got == [want] * 4


def test_a_fabric_built_again_is_built_after_the_old_one_and_its_views_are_let_go(monkeypatch):
    """A cable's delete changes the network's shape: the fabric is built again, and the old one with
    the jobs' views of it is let go first, not held beside the new one while it is built (~17 MB
    less at the peak of a delete at 131k GPUs)."""
    import designer.core.engine.evaluate as evaluate

    doc = load_document(EXAMPLES / "shared-roce-256gpu-2jobs.yaml")
    engine = Engine()
    engine.evaluate(doc)
    old = [weakref.ref(engine.built_fabric), *(weakref.ref(view) for view in engine.cache.job_views.values())]
    alive_while_building = []
    build = evaluate.build_fabric
    monkeypatch.setattr(evaluate, "build_fabric",
                        lambda *a: alive_while_building.append(sum(r() is not None for r in old)) or build(*a))
    switches = {s.id for s in doc.switches}
    cable = next(link for link in doc.links if {link.a.split(":")[0], link.b.split(":")[0]} <= switches)
    doc.remove(cable.id)
    result = engine.evaluate(doc)
    assert alive_while_building == [0]
    assert result.step_time_s == Engine().evaluate(doc.copy()).step_time_s  # as a new engine costs it
