"""Where a sweep's evaluations run: this process, a local process pool, or a Dask cluster.

Every backend runs the same function, `evaluate_points(text, points)`: each worker thread
parses the design once (cached by the text's hash) and costs each plan with its own engine,
whose fabric, placement and routes carry over from one plan to the next. The cache is per
thread, not per process: costing a plan rewrites the document's job, so two threads of one
Dask worker sharing a document would cost each other's plans. A pool is started once per
sweep; its workers are spawned, not forked, so a sweep started from the desktop app never
copies Qt's threads into a child.
"""
from __future__ import annotations

import hashlib
import multiprocessing
import os
import threading
from concurrent.futures import Future, ProcessPoolExecutor

from ..problems import DesignerError, Problem

# Per thread: (text hash, document, engine, base workload, base parallelism). A Dask worker runs
# several tasks at once in its threads; each thread needs its own document to edit.
_THREAD_STATE = threading.local()


def _state(text: str):
    state = getattr(_THREAD_STATE, "state", None)
    if state is not None and state[-1] is text:  # the same text object: no need to hash megabytes again
        return state[1:-1]
    key = hashlib.sha1(text.encode()).hexdigest()
    if state is None or state[0] != key:
        from ..engine.evaluate import Engine
        from ..io import loads_document

        doc = loads_document(text)
        state = (key, doc, Engine(detail=False, schedule_max_ops=1024), doc.spec.workload, doc.spec.parallelism)
    _THREAD_STATE.state = state[:5] + (text,)
    return state[1:5]


def evaluate_points(text: str, points: list) -> list[dict | None]:
    """Cost each plan on the design `text`: a row per plan, or None when it cannot run."""
    doc, engine, workload, parallelism = _state(text)
    rows = []
    for point in points:
        doc.replace_job(point.workload(workload), point.parallelism(parallelism))
        try:
            r = engine.evaluate(doc)
        except DesignerError as exc:
            rows.append({"point": point, "error": "; ".join(p.message for p in exc.problems)})
            continue
        rows.append({"point": point, "step_time_s": r.step_time_s, "mfu": r.mfu, "tokens_per_s": r.tokens_per_s,
                     "fits_in_memory": r.fits_in_memory, "fits_with_headroom": r.fits_with_headroom,
                     "memory_gib": r.memory_gib_per_gpu["total"], "breakdown_s": dict(r.breakdown_s)})
    return rows


# A pool worker's design, parsed once by the pool's initializer: chunks then carry only plans
# (the text of a 16k-GPU design is 5 MB; pickled with every chunk it cost more than the chunk).
_WORKER_TEXT: str | None = None


def _init_worker(text: str) -> None:
    global _WORKER_TEXT
    _WORKER_TEXT = text
    _state(text)


def _evaluate_in_worker(points: list) -> list[dict | None]:
    """`evaluate_points` on the design the pool's initializer handed this worker."""
    if _WORKER_TEXT is None:  # pragma: no cover - the pool always runs the initializer first
        raise RuntimeError("pool worker without a design")
    return evaluate_points(_WORKER_TEXT, points)


class SerialRunner:
    """In this process: for small sweeps, the desktop app's worker thread and tests."""

    name = "this process"
    workers = 1
    warnings: tuple[str, ...] = ()

    def __init__(self, text: str):
        self.text = text

    def submit(self, points: list) -> Future:
        f: Future = Future()
        try:
            f.set_result(evaluate_points(self.text, points))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller through the future
            f.set_exception(exc)
        return f

    def close(self) -> None:
        pass


class PoolRunner:
    """A local process pool (the default): one worker per core."""

    def __init__(self, text: str, workers: int | None = None):
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.name = f"{self.workers} local processes"
        self.warnings: list[str] = []
        self.text = text
        ctx = multiprocessing.get_context("spawn")
        self.pool = ProcessPoolExecutor(self.workers, mp_context=ctx, initializer=_init_worker, initargs=(text,))

    def submit(self, points: list) -> Future:
        return self.pool.submit(_evaluate_in_worker, points)

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


class DaskRunner:
    """A Dask cluster (`--scheduler tcp://HOST:PORT`): the design is scattered once to every
    worker; each chunk of plans is one task. Needs the optional extra `designer[dask]`."""

    def __init__(self, text: str, address: str):
        try:
            from distributed import Client
        except ImportError as exc:
            raise DesignerError([Problem(
                "--scheduler needs dask.distributed, which is not installed", "--scheduler",
                fix='pip install "designer[dask]" (or pip install distributed), or leave --scheduler out '
                    "to use local processes")]) from exc
        try:
            self.client = Client(address, timeout="10s")
        except ValueError as exc:  # not an address at all
            raise DesignerError([Problem(f"{address!r} is not a scheduler address: {exc}", "--scheduler",
                                         fix="use tcp://HOST:PORT, e.g. tcp://10.0.0.5:8786")]) from exc
        except (OSError, TimeoutError) as exc:
            raise DesignerError([Problem(f"cannot reach the Dask scheduler at {address}: {exc}", "--scheduler",
                                         fix="check the address (tcp://HOST:PORT) and that `dask scheduler` runs")]) \
                from exc
        # The engine is pure Python: the threads of one worker share its GIL, so the work in
        # flight is sized by worker processes, not threads (`dask worker --nthreads 1 --nworkers N`).
        workers = _worker_threads(self.client)
        self.workers = max(1, len(workers))
        threads = sum(workers)
        self.name = (f"Dask at {address} ({self.workers} worker process{'es' if self.workers != 1 else ''}"
                     + (f", {threads} threads" if threads != self.workers else "") + ")")
        self.warnings = []
        if threads > self.workers:
            self.warnings.append(
                f"the Dask workers run {threads} threads in {self.workers} processes; threads of one process "
                "share one core for this pure-Python engine: start workers with "
                "`dask worker --nthreads 1 --nworkers N` for N cores")
        self.text = self.client.scatter(text, broadcast=True)

    def submit(self, points: list) -> Future:
        return self.client.submit(evaluate_points, self.text, points, pure=False)

    def close(self) -> None:
        self.client.close()


def _worker_threads(client) -> list[int]:
    """The thread count of each worker process the scheduler knows."""
    try:
        info = client.scheduler_info(n_workers=-1)  # some releases list only the first 5 by default
    except TypeError:  # releases before the argument list every worker
        info = client.scheduler_info()
    return [int(w.get("nthreads", 1)) for w in info.get("workers", {}).values()]


def make_runner(text: str, workers: int | None = None, scheduler: str | None = None):
    if scheduler:
        return DaskRunner(text, scheduler)
    if workers == 1:
        return SerialRunner(text)
    return PoolRunner(text, workers)
