r"""The experiment grid runner: graphs x statistics x epsilons x methods x trials, in parallel.

:func:`run_experiment` simulates, for every *cell* (graph, method, statistic, k, epsilon),
``n_trials`` independent runs of the protocol and records each run's estimate next to the
truth; :meth:`ExperimentResult.write` saves the tidy records (CSV), the per-cell summary
(CSV and a text table), the configuration (JSON) and log-log plots of relative RMSE vs epsilon.

Work and randomness
-------------------
The trials of a cell are cut into blocks of ``block_size`` consecutive trials. A block is one
task: one call of the method, vectorized over the block's trials, on its own random stream
``SeedSequence(entropy=seed, spawn_key=(cell key, block))``
(:mod:`ldpgraph.experiments.seeding`). The tasks run through joblib — processes (``loky``),
threads, or a Dask cluster (``scheduler=ADDRESS``) — and their results are put back in place
by index. Hence the records depend only on the seed, the grid and ``block_size``: **not** on
``n_jobs``, the backend, joblib's batching of tasks, the order in which tasks finish, or
which other cells share the grid. (``block_size`` fixes how the trials consume the streams;
``block_size=1`` gives every trial its own stream.)

By default (no backend, or ``"loky"``) ``n_jobs`` is a ceiling: the tasks run in the calling
process, first block first, until the measured cost of the blocks done says that the rest pays
for the start-up of worker processes (:func:`parallel_pays`; the start-up is measured once per
process); then the calling process works on beside ``n_jobs - 1`` loky workers (joblib's
reusable executor), so a small grid never waits for workers and a large one hides their start
behind its own work (:func:`run_adaptive`). The workers are reused across runs, and large
arrays (the degrees of a big graph) reach them memory-mapped instead of pickled. The other
backends (``"threading"``, Dask) run every task through ``joblib.Parallel``, which batches them.

The loky workers exit within a quarter second when the process that started them dies, even by
SIGKILL (a worker initializer; loky's own idle timeout is 300 s); on an error or Ctrl-C the
runner stops them. Not covered: on Windows the workers are left
to loky; Dask workers belong to their cluster.

Every cell is one unit: a registered method (:func:`ldpgraph.run.method.get_method`) and its
``estimate_trials``; a method whose simulation is vectorised (``vectorized``: the k-star and
degree methods) draws a block's trials in one call, the others one by one, timed (``costs.csv``).
Each method has its own cell and stream (``unbiased-dlap`` and ``naive-dlap`` draw independent
noise).
"""

from __future__ import annotations

import json
import math
import os
import platform
import re
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import chain, repeat
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._progress import Progress
from .._validation import check_epsilon, check_nonnegative_int
from ..dask_connect import SCHEDULER_TIMEOUT, dask_install_hint
from ..protocols.statistics import GRAPH_STATISTICS, get_statistic, statistic_names
from .inputs import GraphInput, resolve_graph_inputs
from .inputs import content_id as content_id  # re-exported: defined in .inputs
from .options import check_options, configure_methods
from .records import CellRecords, Records, write_records_csv
from .seeding import block_rng, cell_key, root_entropy
from .summary import SummaryRow, format_summary, summarize, write_summary_csv

__all__ = [
    "DEFAULT_METHODS",
    "DEFAULT_KS",
    "DEFAULT_N_JOBS",
    "GraphInput",
    "ExperimentResult",
    "run_experiment",
    "resolve_graph_inputs",
    "parse_statistics",
]

#: the k-star methods of the reproduction study (the two extra baselines are opt-in)
DEFAULT_METHODS: tuple[str, ...] = (
    "unbiased-dlap",
    "naive-dlap",
    "unbiased-laplace",
    "naive-laplace",
    "local-lap-kstars",
)
#: the star sizes of the reproduction study (CLI and API)
DEFAULT_KS: tuple[int, ...] = (2, 3)
#: processes: None = all cores, taken only when the measured first blocks say they pay (the threading
#: backend: all cores when the grid is large enough, else 1); results do not depend on it
DEFAULT_N_JOBS: int | None = None
# below this many (trials x nodes) simulated in all, the automatic n_jobs runs sequentially
_AUTO_PARALLEL_WORK = 2_000_000


def parse_statistics(statistics: Sequence[str] | str, ks: Sequence[int]) -> list[tuple[str, int | None]]:
    """Expand statistic names into ``(name, parameter)`` pairs.

    ``kstars`` and ``degree_moment`` take every value of ``ks`` as their parameter (star size,
    power); ``"name:p"`` pins one parameter; other statistics have none.

    >>> parse_statistics(["kstars", "edges", "degree_moment:3"], ks=[2, 3])
    [('kstars', 2), ('kstars', 3), ('edges', None), ('degree_moment', 3)]
    """
    if isinstance(statistics, str):
        statistics = [statistics]
    ks = [check_nonnegative_int(k, "k", minimum=1) for k in ks]
    out: list[tuple[str, int | None]] = []
    for item in statistics:
        if not isinstance(item, str):
            raise TypeError(f"statistics entries must be str, got {type(item).__name__} {item!r}")
        name, sep, param = item.strip().partition(":")
        name = name.strip()
        if name not in statistic_names() and name not in GRAPH_STATISTICS:
            choices = ", ".join([*statistic_names(), *GRAPH_STATISTICS])
            raise ValueError(f"unknown statistic {name!r}; choose from {choices}")
        takes_param = name == "kstars" or (
            name not in GRAPH_STATISTICS and get_statistic(name).parameter is not None
        )
        if sep:
            if not takes_param:
                raise ValueError(f"statistic {name!r} takes no parameter, got {item!r}")
            try:
                p = int(param)
            except ValueError:
                raise ValueError(f"parameter of {name!r} must be an integer >= 1, got {param!r}") from None
            pairs = [(name, check_nonnegative_int(p, f"parameter of {name!r}", minimum=1))]
        elif takes_param:
            if not ks:
                raise ValueError(f"statistic {name!r} needs at least one k")
            pairs = [(name, k) for k in ks]
        else:
            pairs = [(name, None)]
        for pair in pairs:
            if pair not in out:
                out.append(pair)
    if not out:
        raise ValueError("statistics must name at least one statistic")
    return out


def resolve_methods(methods: Sequence[Any] | None) -> list[Any]:
    """The method objects an experiment runs: ``methods`` as :func:`run_experiment` takes it.

    None: :data:`DEFAULT_METHODS`; ``"all"``: every k-star method; a registered name or a method
    object (:class:`~ldpgraph.run.method.Method`), or a sequence of those. ValueError on an unknown
    or repeated name.

    >>> [m.name for m in resolve_methods(["naive-dlap", "rr-triangles"])]
    ['naive-dlap', 'rr-triangles']
    """
    if methods is None:
        methods = DEFAULT_METHODS
    elif isinstance(methods, str):
        methods = [methods]
    if any(isinstance(m, str) and m.strip() == "all" for m in methods):
        from ..run.method import method_names

        methods = method_names("kstars")
    out = []
    for m in methods:
        if isinstance(m, str):
            m = _registry_method(m.strip())
        elif not (hasattr(m, "name") and hasattr(m, "estimate_trials")):
            raise TypeError(f"methods entries must be method names or Method objects, got {m!r}")
        out.append(m)
    names = [m.name for m in out]
    dup = sorted({x for x in names if names.count(x) > 1})
    if dup:
        raise ValueError(f"method names must be distinct, got {dup} more than once")
    if not out:
        raise ValueError("methods must name at least one method")
    return out




def _registry_method(name: str) -> Any:
    from ..run.method import get_method, method_names

    if name not in method_names():
        raise ValueError(f"unknown method {name!r}; choose from {', '.join(method_names())}")
    return get_method(name)


def _check_epsilons(epsilons: Sequence[float] | float) -> list[float]:
    if isinstance(epsilons, (int, float)) and not isinstance(epsilons, bool):
        epsilons = [epsilons]
    out: list[float] = []
    for e in epsilons:
        e = check_epsilon(e, "epsilons entry")
        if e not in out:
            out.append(e)
    if not out:
        raise ValueError("epsilons must hold at least one value")
    return out


# ------------------------------------------------------------------------------------- units


@dataclass(frozen=True)
class _Unit:
    """What a task needs to simulate the trials of one cell."""

    graph: str
    statistic: str
    k: int | None
    epsilon: float
    methods: tuple[str, ...]  # the record label: the method's name
    key: int
    method: Any  # the method (its ``estimate_trials``)
    data: Any = None  # the Graph for a method that needs the adjacency; None: the graph's degrees


def _data(unit: _Unit, degrees: NDArray[np.int64]) -> Any:
    return degrees if unit.data is None else unit.data


def _run_block(unit: _Unit, degrees: NDArray[np.int64], seed: int, block: int, n: int, task: int):
    """Simulate ``n`` trials of one block; return ``(task, estimates of shape (rows, n), analytic)``,
    where ``analytic`` is the unit's closed-form RMSE (:func:`_analytic`) for its block 0 and None
    for the others: deterministic work, done by the workers beside the trials."""
    analytic = _analytic(unit, degrees) if block == 0 else None
    return task, _simulate_block(unit, degrees, block_rng(seed, unit.key, block), n), analytic


def _simulate_block(unit: _Unit, degrees: NDArray[np.int64], gen: np.random.Generator, n: int) -> NDArray:
    """The estimates of ``n`` trials of one block: row 0 the estimates, and for a method that is not
    vectorised row 1 the seconds of each trial."""
    m, data = unit.method, _data(unit, degrees)
    if m.vectorized:
        est = m.estimate_trials(data, unit.statistic, unit.k, unit.epsilon, n, rng=gen)
        return np.asarray(est, dtype=np.float64).reshape(1, n)
    out = np.empty((2, n), dtype=np.float64)
    m.prepare(data)  # per-graph precomputation, outside the timed trials
    for t in range(n):
        t0 = time.perf_counter()
        out[0, t] = m.estimate_trials(data, unit.statistic, unit.k, unit.epsilon, 1, rng=gen)[0]
        out[1, t] = time.perf_counter() - t0
    return out


def _adjacency(g: GraphInput, method: str) -> Any:
    """The graph's adjacency, or a TypeError saying ``method`` needs it."""
    from ..graph.core import Graph

    if isinstance(g.graph, Graph):
        return g.graph
    raise TypeError(f"method {method!r} needs the graph's adjacency (an ldpgraph Graph), got "
                    f"{type(g.degrees).__name__} (degrees only)")


def _build_units(
    graphs: list[GraphInput], stats: list[tuple[str, int | None]], epsilons: list[float], methods: list[Any]
) -> list[_Unit]:
    """One unit per cell: graph x statistic x epsilon x method that estimates the statistic."""
    units = []
    for g in graphs:
        for stat, k in stats:
            takers = [m for m in methods if m.supports(stat)]
            if not takers:
                from ..run.method import method_names

                raise ValueError(
                    f"statistic {stat!r} is estimated by {', '.join(method_names(stat))}; none is among the "
                    f"methods {[m.name for m in methods]}"
                )
            data = {m.name: None if m.needs == "degrees" else _adjacency(g, m.name) for m in takers}
            for eps in epsilons:
                units.extend(_Unit(g.label, stat, k, eps, (m.name,),
                                   cell_key(stat, g.stream_id or g.label, k, eps, m.name), m, data[m.name])
                             for m in takers)
    return units


def _cannot_run(unit: _Unit, degrees: NDArray[np.int64]) -> str | None:
    """Why ``unit`` cannot run (one probe trial on a throw-away stream raises), or None.

    The methods refuse parameters they cannot handle before drawing anything (LocalLapKStars at
    large k: C(d_max, k) overflows int64; DLap noise whose scale overflows), so one trial tells.
    The adjacency protocols refuse a trial whose noisy graph would not fit in memory
    (``MemoryError`` naming the protocols that fit): that cell is skipped, not the whole grid.
    """
    try:
        _simulate_block(unit, degrees, block_rng(0, unit.key, 0), 1)
    except (ValueError, OverflowError, FloatingPointError, ArithmeticError, MemoryError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def _truth(g: GraphInput, stat: str, k: int | None) -> float:
    from ..protocols.statistics import statistic_truth

    return statistic_truth(_adjacency(g, stat) if stat in GRAPH_STATISTICS else g.degrees, stat, k)


def _analytic(unit: _Unit, degrees: NDArray[np.int64]) -> dict[str, float | None]:
    """The closed-form RMSE of the unit's method (None where there is none)."""
    rmse = unit.method.analytic_rmse(_data(unit, degrees), unit.statistic, unit.k, unit.epsilon)
    return {unit.methods[0]: rmse}


def _cell_costs(unit: _Unit, data: Any, seconds: NDArray[np.float64]) -> dict[str, Any]:
    """Communication (mean bits per node) and wall time per trial of a per-trial cell."""
    m = unit.method
    up, down = m.communication(data, unit.epsilon, unit.statistic)
    return {
        "graph": unit.graph, "method": unit.methods[0], "statistic": unit.statistic, "k": unit.k,
        "epsilon": unit.epsilon, "upload_bits_per_node": float(up),
        "download_bits_per_node": float(down), "seconds_per_trial": float(np.mean(seconds)),
        "budget": m.budget(unit.epsilon, unit.statistic),
        # a method's guarantee beyond its per-node ε (the shuffle model's central (ε, δ) and local ε₀)
        "privacy": m.privacy(data, unit.epsilon) if hasattr(m, "privacy") else None,
    }


# ---------------------------------------------------------------------------------- backends


#: How often a loky worker checks that the process that started it is still alive (seconds).
_PARENT_POLL_SECONDS = 0.25


def _exit_with_parent(parent_pid: int) -> None:
    """loky worker initializer: end the worker once the process that started it is gone.

    loky's workers do not watch their parent: after a SIGKILLed (or SIGTERMed) run they would
    wait for their idle timeout (300 s). A daemon thread polls ``os.getppid()`` (POSIX: the
    worker is re-parented when its parent dies).
    """
    if os.name == "posix":
        threading.Thread(target=_watch_parent, args=(parent_pid,), name="ldpgraph-parent-watch",
                         daemon=True).start()


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(_PARENT_POLL_SECONDS)
    os._exit(1)


@contextmanager
def _parallel_context(
    backend: str | None, scheduler: str | None, scatter: list
) -> Iterator[None]:
    import joblib

    if scheduler is None and backend in (None, "loky"):
        with joblib.parallel_config(backend="loky", initializer=_exit_with_parent, initargs=(os.getpid(),)):
            yield
        return
    if scheduler is None and backend != "dask":
        with joblib.parallel_config(backend=backend):
            yield
        return
    if backend not in (None, "dask"):
        raise ValueError(f"scheduler is given, so backend must be 'dask' or None, got {backend!r}")
    if scheduler is not None:
        check_scheduler_address(scheduler)
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise ImportError(f"the Dask backend needs dask.distributed; {dask_install_hint()}") from None
    if scheduler is None:
        from distributed import get_client

        client = get_client()  # ValueError if no client is running
        with joblib.parallel_config(backend="dask", client=client, scatter=scatter):
            yield
        return
    from ..dask_connect import connect

    client = connect(scheduler)  # one timeout and one message, as curate's
    try:
        with joblib.parallel_config(backend="dask", client=client, scatter=scatter):
            yield
    finally:
        client.close()


# --------------------------------------------------------------------- adaptive parallelism
#
# With the default process backend, ``n_jobs`` is a ceiling, not an order: the tasks run in
# this process, first block first, and after each one the measured cost decides whether the
# rest is worth the start-up of worker processes (:func:`parallel_pays`). When it is, this
# process keeps working as one of the ``n_jobs`` processes while ``n_jobs - 1`` loky workers
# start beside it and take tasks as they come (their start-up overlaps its work). Every task
# draws from its own stream wherever it runs, so the records are the same either way.

#: start-up of fresh loky workers, in seconds of one free core (the time to the first result,
#: beyond the task's own time, divided by this process's slowdown), assumed until one is measured
#: in this process: a worker's interpreter, numpy and ldpgraph imports take 0.4-0.5 s of CPU, and
#: loky's own start and the first calls' lazy imports and caches add to it (issue 34: the main
#: job lost with a 0.8 s prior)
STARTUP_PRIOR_SECONDS = 1.5
#: start-up of workers that are already running (the reusable executor of an earlier run)
STARTUP_WARM_SECONDS = 0.05
_startup_measured: float | None = None  # this process's measurement of a fresh start-up


def parallel_pays(done_seconds: float, done_tasks: int, remaining_tasks: int, processes: int,
                  startup_seconds: float) -> bool:
    """Whether handing the remaining tasks to ``processes`` processes (this one and
    ``processes - 1`` workers that start in ``startup_seconds``) beats finishing them here.

    The remaining work is estimated from the tasks done so far, ``R = done_seconds / done_tasks x
    remaining_tasks``. This process does ``startup_seconds`` of it while the workers start; the
    rest is split over ``p = min(processes, remaining_tasks)`` processes, so the saving is
    ``(R - startup) (1 - 1/p)`` (one task left: none). It pays when the saving is at least the
    start-up plus a tenth of ``R`` (the margin for a wrong estimate and for the workers' share of
    a loaded machine): for two processes, when ``R >= 3.75 x startup``.

    >>> parallel_pays(0.01, 1, 100, 2, 1.5)   # 1 s left: stay
    False
    >>> parallel_pays(0.05, 1, 100, 2, 1.5)   # 5 s left: stay
    False
    >>> parallel_pays(0.5, 1, 40, 2, 1.5)     # 20 s left: go
    True
    """
    if processes < 2 or remaining_tasks < 1 or done_tasks < 1:
        return False
    remaining = done_seconds / done_tasks * remaining_tasks
    p = min(processes, remaining_tasks)  # the processes that get a task
    saving = (remaining - startup_seconds) * (1.0 - 1.0 / p)
    return saving >= startup_seconds + 0.1 * remaining


def _live_workers() -> int:
    """Worker processes of loky's reusable executor alive in this process (0 if none)."""
    try:
        from joblib.externals.loky import reusable_executor
    except ImportError:  # pragma: no cover
        return 0
    ex = reusable_executor._executor
    if ex is None or getattr(ex, "_broken", False) or getattr(ex, "_shutdown_thread", False):
        return 0
    return len(getattr(ex, "_processes", None) or ())


def startup_estimate(workers: int) -> float:
    """Seconds of one free core until ``workers`` loky workers return a first result, beyond the
    task's own time: small when they are already running, else this process's measurement, else
    :data:`STARTUP_PRIOR_SECONDS`."""
    if _live_workers() >= workers:
        return STARTUP_WARM_SECONDS
    return STARTUP_PRIOR_SECONDS if _startup_measured is None else _startup_measured


def _n_processes(n_jobs: int | None) -> int:
    """Processes the adaptive path may use: ``n_jobs`` by joblib's convention (None: all cores)."""
    import multiprocessing

    if multiprocessing.current_process().daemon:  # a daemonic process cannot have children
        return 1
    cores = os.cpu_count() or 1
    if n_jobs is None:
        return cores
    return n_jobs if n_jobs > 0 else max(cores + 1 + n_jobs, 1)


def _worker_env(processes: int) -> dict[str, str]:
    """Thread limits for the workers' numeric libraries (as joblib's loky backend sets them)."""
    try:
        from joblib._parallel_backends import LokyBackend

        names = LokyBackend.MAX_NUM_THREADS_VARS
    except (ImportError, AttributeError):  # pragma: no cover
        names = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
    default = str(max((os.cpu_count() or 1) // processes, 1))
    return {v: os.environ.get(v, default) for v in names}


def _timed_task(func: Any, args: tuple) -> tuple[float, float, Any]:
    """``func(*args)``, its wall seconds and its CPU seconds (this thread's: not those of another
    thread of the process, such as the plots' matplotlib import)."""
    t0, c0 = time.perf_counter(), time.thread_time()
    out = func(*args)
    return time.perf_counter() - t0, time.thread_time() - c0, out


def _timed_batch(func: Any, batch: Sequence[tuple]) -> tuple[float, list[Any]]:
    """A worker's call: ``func`` on each arguments of ``batch``, and the seconds it took."""
    t0 = time.perf_counter()
    out = [func(*a) for a in batch]
    return time.perf_counter() - t0, out


#: tasks timed before the decision (unless one alone lasts as long as the workers' start-up)
MIN_TASKS_MEASURED = 3

#: seconds of estimated work per submission to a worker (tasks are batched up to it, so that the
#: round trip of a submission, ~1 ms, stays small beside the work it carries)
BATCH_SECONDS = 0.05


def run_adaptive(func: Any, args: Sequence[tuple], processes: int, on_result: Any, *,
                 decide: Any = None) -> dict[str, Any]:
    """Call ``func(*args[i])`` for every i, giving each result to ``on_result(i, result)``.

    The calls run in this process, in order, until ``decide(done_seconds, done_tasks,
    remaining_tasks, processes, startup_estimate(processes - 1))`` (default :func:`parallel_pays`;
    seconds of CPU, so that the load of a shared machine, which slows the calls and the workers'
    start alike, does not change the decision) says the rest pays for worker processes (asked
    after each call from the :data:`MIN_TASKS_MEASURED`-th on, the longest call done left out of
    the measure; before that, only when the calls done took as long as the start-up); from then on
    this process and ``processes - 1`` loky workers (joblib's reusable executor: large arrays
    memory-mapped, workers end with this process) take the remaining calls, this process one at a
    time, a worker in batches of about :data:`BATCH_SECONDS` of the measured work (one per worker
    until they have started, then one running and one queued each). ``on_result`` is called in
    this process, under a lock, in no set order.
    Returns what was decided: ``{"processes", "in_process_tasks", "decided_after", "estimated_seconds",
    "startup_seconds"}`` (``processes`` 1: everything ran here) and, when workers took part, the
    ``batch`` of tasks per submission.
    """
    n = len(args)
    decide = parallel_pays if decide is None else decide
    report: dict[str, Any] = {"processes": 1, "in_process_tasks": n, "decided_after": None,
                              "estimated_seconds": None, "startup_seconds": None}
    # the work is measured in CPU seconds, so that the decision does not change with the load of
    # a shared machine (which slows the tasks and the workers' start alike); wall / CPU is the
    # slowdown, by which a start-up measured in wall seconds is divided
    done_s, done_wall, longest, i = 0.0, 0.0, 0.0, 0
    startup = 0.0
    while i < n:
        wall, secs, out = _timed_task(func, args[i])
        on_result(i, out)
        done_s += secs
        done_wall += wall
        longest = max(longest, secs)
        i += 1
        if i < n and processes > 1:
            startup = startup_estimate(processes - 1)
            # robust to one slow task (a first call's one-off cost, a pause on a loaded machine):
            # from the third task on, the longest is left out; before, only a task as long as
            # the start-up decides
            if i >= MIN_TASKS_MEASURED:
                measured, tasks_measured = done_s - longest, i - 1
            elif done_s >= startup:
                measured, tasks_measured = done_s, i
            else:
                continue
            if decide(measured, tasks_measured, n - i, processes, startup):
                break
    if i >= n:
        return report

    import queue

    from joblib.executor import get_memmapping_executor

    fresh = _live_workers() == 0  # (a resized pool's first result may come from an old worker)
    context = f"ldpgraph-{os.getpid()}-{time.monotonic_ns()}"  # this run's memory-mapped arrays
    executor = get_memmapping_executor(processes - 1, timeout=300, initializer=_exit_with_parent,
                                       initargs=(os.getpid(),), env=_worker_env(processes),
                                       context_id=context)
    try:  # this run's arrays go to this context's folder, removed at the end (as joblib.Parallel does)
        executor._temp_folder_manager.set_current_context(context)
    except AttributeError:  # pragma: no cover (another joblib)
        pass
    report.update(processes=processes, decided_after=i, estimated_seconds=round(done_s / i * (n - i), 3),
                  startup_seconds=round(startup, 3))  # (CPU seconds)
    lock = threading.Lock()
    arrivals: queue.Queue = queue.Queue()
    state = {"next": i, "in_flight": 0, "error": None, "here": i}

    per_task = done_wall / i
    slowdown = max(done_wall / done_s, 1.0) if done_s > 0 else 1.0
    batch = max(1, min(int(BATCH_SECONDS / per_task) if per_task > 0 else n, (n - i) // (4 * processes)))
    report["batch"] = batch

    def claim(k: int = 1) -> range | None:
        with lock:
            if state["next"] >= n or state["error"] is not None:
                return None
            j = state["next"]
            state["next"] = min(j + k, n)
            return range(j, state["next"])

    def submit() -> bool:
        js = claim(batch)
        if js is None:
            return False
        with lock:
            state["in_flight"] += 1
        t_sub = time.perf_counter()
        fut = executor.submit(_timed_batch, func, [args[j] for j in js])
        fut.add_done_callback(lambda f, js=js, t_sub=t_sub: arrivals.put((js, t_sub, f)))
        return True

    first = [True]

    def feed() -> None:  # in a thread: take each worker result, give its worker the next task
        global _startup_measured
        while True:
            item = arrivals.get()
            if item is None:
                return
            js, t_sub, fut = item
            try:
                secs, outs = fut.result()
                if first[0]:
                    first[0] = False
                    if fresh:
                        _startup_measured = max((time.perf_counter() - t_sub - secs) / slowdown,
                                                STARTUP_WARM_SECONDS)
                with lock:
                    for j, out in zip(js, outs, strict=True):
                        on_result(j, out)
            except BaseException as exc:  # noqa: BLE001 (re-raised in the calling thread)
                with lock:
                    state["error"] = state["error"] or exc
            finally:
                with lock:
                    state["in_flight"] -= 1
            while state["in_flight"] < 2 * (processes - 1) and submit():  # one running, one queued
                pass

    for _ in range(processes - 1):  # one task per worker until the workers have started
        submit()
    feeder = threading.Thread(target=feed, name="ldpgraph-feeder", daemon=True)
    feeder.start()
    try:
        while (js := claim()) is not None:
            j = js[0]
            out = func(*args[j])
            with lock:
                on_result(j, out)
                state["here"] += 1
        while True:
            with lock:
                if state["in_flight"] == 0:
                    break
            time.sleep(0.005)
    except BaseException:
        with lock:
            state["error"] = state["error"] or KeyboardInterrupt()
        executor.terminate(kill_workers=True)  # (removes the memory-mapped arrays too)
        raise
    finally:
        arrivals.put(None)
        feeder.join()
    try:  # the workers stay for the next run; this run's memory-mapped arrays go
        executor._temp_folder_manager._clean_temporary_resources(context_id=context, force=False)
    except AttributeError:  # pragma: no cover (another joblib)
        pass
    if state["error"] is not None:
        raise state["error"]
    report["in_process_tasks"] = state["here"]
    return report


#: seconds to wait for a Dask scheduler to answer (:data:`ldpgraph.dask_connect.SCHEDULER_TIMEOUT`)
SCHEDULER_CONNECT_TIMEOUT = SCHEDULER_TIMEOUT

_SCHEDULER_RE = re.compile(
    r"^(?:(tcp|tls|ws|wss|ucx)://)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})/?$|^inproc://\S+$"
)


def check_scheduler_address(address: str) -> str:
    """Check a Dask scheduler address: ``[tcp|tls|ws|wss|inproc|ucx://]host:port``; return it.

    Examples
    --------
    >>> check_scheduler_address("tcp://10.0.0.1:8786")
    'tcp://10.0.0.1:8786'
    >>> check_scheduler_address("nonsense")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: scheduler must be a Dask scheduler address such as tcp://HOST:8786, got 'nonsense'...
    """
    if not isinstance(address, str):
        raise TypeError(f"scheduler must be a str, got {type(address).__name__} {address!r}")
    m = _SCHEDULER_RE.match(address.strip())
    if m is None or (m.group(3) is not None and not 0 < int(m.group(3)) < 65536):
        raise ValueError(
            f"scheduler must be a Dask scheduler address such as tcp://HOST:8786, got {address!r} "
            "(start one with `dask scheduler`; its address is printed at start-up)"
        )
    return address.strip()


def _auto_n_jobs(n_jobs: int | None, work: int) -> int:
    """The number of workers: ``n_jobs`` as given, or for None all cores when there is enough work."""
    if n_jobs is not None:
        return n_jobs
    return -1 if work >= _AUTO_PARALLEL_WORK else 1


def _backend_name(backend: str | None, scheduler: str | None, n_jobs: int) -> str:
    if scheduler is not None:
        return "dask"
    return backend or ("sequential" if n_jobs == 1 else "loky")


# ------------------------------------------------------------------------------------ result


@dataclass
class ExperimentResult:
    """What :func:`run_experiment` returns.

    Attributes
    ----------
    records : Records
        One :class:`~ldpgraph.experiments.records.CellRecords` per cell, trials in order.
    summary : list of SummaryRow
        Per-cell accuracy (:func:`~ldpgraph.experiments.summary.summarize`).
    analytic_rmse : dict
        ``(graph, method, statistic, k, epsilon) -> closed-form RMSE or None``.
    config : dict
        The grid, seed, block size, backend, versions and timing (JSON-serialisable).
    """

    records: Records
    summary: list[SummaryRow]
    analytic_rmse: dict[tuple, float | None]
    config: dict[str, Any] = field(default_factory=dict)

    @property
    def seed(self) -> int:
        """Root entropy of the run (pass it as ``seed`` to repeat the run)."""
        return int(self.config["seed"])

    @property
    def notes(self) -> list[str]:
        """One line per cell that could not run (skipped, with the reason)."""
        return [
            f"skipped {s['method']} on {s['graph']}, {s['statistic']}"
            + ("" if s["k"] is None else f" k={s['k']}") + f", epsilon {s['epsilon']:g}: {s['reason']}"
            for s in self.config.get("skipped", [])
        ]

    def table(self) -> str:
        """The summary as a plain-text table (with a note per skipped cell)."""
        return format_summary(self.summary, notes=self.notes)

    def _table_columns(self, table: str) -> dict[str, list[Any]]:
        from dataclasses import astuple

        from .summary import SUMMARY_COLUMNS

        if table == "summary":
            rows = [astuple(r) for r in self.summary]
            return {c: [r[i] for r in rows] for i, c in enumerate(SUMMARY_COLUMNS)}
        if table == "costs":
            costs = self.config.get("cell_costs", [])
            return {c: [x[c] for x in costs] for c in _COSTS_COLUMNS}
        raise ValueError(f"table must be 'summary', 'records' or 'costs', got {table!r}")

    def to_pandas(self, table: str = "summary") -> Any:
        """One table of the result as a pandas DataFrame, with the columns of its CSV file:
        ``"summary"`` (``summary.csv``), ``"records"`` (``records.csv``, as
        ``records.to_pandas()``) or ``"costs"`` (``costs.csv``); ``k`` is nullable ``Int64``.
        pandas is imported only here.

        >>> from ldpgraph.graph import Degrees
        >>> res = run_experiment({"toy": Degrees([3, 1, 2, 2])}, epsilons=[1.0], ks=[2],
        ...                      methods=["unbiased-dlap"], n_trials=4, seed=0, quiet=True)
        >>> res.to_pandas()[["method", "k", "epsilon", "trials"]].to_dict("records")
        [{'method': 'unbiased-dlap', 'k': 2, 'epsilon': 1.0, 'trials': 4}]
        >>> res.to_pandas("records").shape
        (4, 10)
        """
        if table == "records":
            return self.records.to_pandas()
        from ..tables import to_frame

        return to_frame(self._table_columns(table), integers=("k",))

    def _repr_html_(self) -> str:
        from ..tables import html_table

        cfg = self.config
        caption = (f"{cfg.get('n_cells', len(self.summary))} cells x {cfg.get('n_trials', '?')} trials; seed "
                   f"{cfg.get('seed', '?')} (to_pandas('summary' | 'records' | 'costs'))")
        return html_table(self._table_columns("summary"), caption=caption)

    def write(
        self, out_dir: str | os.PathLike[str], *, plots: bool = True, plot_formats: Sequence[str] = ("png",)
    ) -> dict[str, Any]:
        """Write ``records.csv``, ``summary.csv``, ``summary.txt``, ``experiment.json``,
        ``manifest.json`` and plots into ``out_dir``, atomically.

        Everything is written into a temporary folder beside ``out_dir`` and then moved into
        place, so ``out_dir`` never holds a half-written result: a run killed while writing
        leaves the previous results (or nothing), never a mix. The files of an earlier run that
        this run does not write (stale plots of other graphs or statistics) are removed; other
        files in ``out_dir`` are left alone. ``manifest.json`` lists every file written with its
        size and SHA-256 and the run's configuration. Plots are rendered in ``plot_formats``
        only (each format costs one rendering of every figure).

        Returns
        -------
        dict
            ``{"records": path, "summary": path, "table": path, "config": path,
            "manifest": path, "plots": [paths]}``, and ``"costs"`` (``costs.csv``: bits per node
            and seconds per trial of the per-trial protocols) when the grid has adjacency
            statistics.
        """
        from .outputs import write_atomically

        synthetic = {g["label"] for g in self.config.get("graphs", []) if g.get("synthetic")}
        formats = tuple(plot_formats)

        def produce(tmp: Path) -> dict[str, Any]:
            from .plots import plot_relative_rmse

            paths: dict[str, Any] = {
                "records": write_records_csv(self.records, tmp / "records.csv"),
                "summary": write_summary_csv(self.summary, tmp / "summary.csv"),
            }
            table = tmp / "summary.txt"
            table.write_text(self.table() + "\n", encoding="utf-8")
            paths["table"] = table
            if self.config.get("cell_costs"):
                paths["costs"] = _write_costs_csv(self.config["cell_costs"], tmp / "costs.csv")
            cfg = tmp / "experiment.json"
            cfg.write_text(json.dumps(self.config, indent=2, default=str) + "\n", encoding="utf-8")
            paths["config"] = cfg
            paths["plots"] = []
            if plots:
                paths["plots"] = plot_relative_rmse(self.summary, tmp / "plots", synthetic=synthetic,
                                                    formats=formats)
            return paths

        return write_atomically(out_dir, produce, config=self.config)


#: columns of costs.csv
_COSTS_COLUMNS = ("graph", "method", "statistic", "k", "epsilon", "upload_bits_per_node",
                  "download_bits_per_node", "seconds_per_trial", "budget", "privacy")


def _write_costs_csv(costs: list[dict[str, Any]], path: Path) -> Path:
    """Per-cell communication and time of the per-trial protocols (one row per cell)."""
    import csv

    cols = _COSTS_COLUMNS
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(cols)
        for c in costs:
            w.writerow(["" if c.get(x) is None else (json.dumps(c[x]) if x in ("budget", "privacy") else c[x])
                        for x in cols])
    return path


# ------------------------------------------------------------------------------------ runner


def run_experiment(
    graphs: Any,
    *,
    epsilons: Sequence[float] | float,
    ks: Sequence[int] = DEFAULT_KS,
    methods: Sequence[Any] | None = None,
    statistics: Sequence[str] | str = ("kstars",),
    n_trials: int = 100,
    seed: int | np.random.SeedSequence | None = None,
    block_size: int = 100,
    n_jobs: int | None = DEFAULT_N_JOBS,
    backend: str | None = None,
    scheduler: str | None = None,
    batch_size: int | str = "auto",
    quiet: bool = False,
    graph_seed: int = 0,
    preload_plots: bool = False,
    options: Mapping[str, Any] | None = None,
) -> ExperimentResult:
    r"""Run the grid graphs x statistics x epsilons x methods, ``n_trials`` trials per cell.

    Parameters
    ----------
    graphs
        Dataset name, synthetic spec (``"ba:n=1000,m=10"``), edge-list path, networkx or
        igraph graph, scipy.sparse adjacency matrix, pandas edge table, ldpgraph Graph, a degree
        sequence said explicitly (:class:`~ldpgraph.graph.Degrees`), a mapping ``label ->
        graph``, or a sequence of these; see :func:`resolve_graph_inputs`. Labels are the
        mapping's keys, else the user's names (``G.name``, the file's name, ...).
    epsilons : sequence of float
        Privacy budgets per node, each in (0, inf).
    ks : sequence of int
        Star sizes k >= 1 for ``kstars`` (and powers for ``degree_moment``); default
        :data:`DEFAULT_KS` = (2, 3), as on the command line.
    methods : sequence of str or Method, optional
        Registered methods by name (:func:`ldpgraph.run.method.method_names`) or as objects
        (:class:`~ldpgraph.run.method.Method`), or ``"all"`` (every k-star method); default
        :data:`DEFAULT_METHODS` plus, for each statistic of the graph's adjacency, its recommended
        method of each model
        (:func:`ldpgraph.run.method.recommended_methods`), as on the command line. The degree
        statistics are estimated by the ``unbiased-dlap`` and ``naive-dlap`` among them.
        A cell a method cannot run (LocalLapKStars at large k: its sensitivity overflows) is
        skipped, with a note in ``result.notes`` and ``config["skipped"]``.
    statistics : sequence of str
        From :func:`~ldpgraph.protocols.statistics.statistic_names`; ``"name:p"`` pins a
        parameter. Default ``("kstars",)``.
    n_trials : int
        Trials per cell, >= 1.
    seed : int, SeedSequence or None
        Root seed; None draws fresh entropy, recorded in ``result.config["seed"]``.
    block_size : int
        Trials per random stream and per task (vectorized together). Part of the experiment's
        definition: changing it changes the draws.
    n_jobs : int or None
        Parallel processes (joblib convention; -1 = all cores or all Dask workers); None (the
        default, as on the command line): all cores. With the default backend it is a ceiling:
        the first blocks run in this process and are timed, and the run goes parallel (this
        process beside ``n_jobs - 1`` loky workers) only when the measured work left pays for the
        workers' start-up (:func:`parallel_pays`; ``config["parallel"]`` records the decision).
        With ``backend="threading"``, None is all cores when the grid simulates at least
        2,000,000 node values in all, else 1. Results do not depend on it.
    backend : str, optional
        joblib backend (``"loky"`` default for n_jobs != 1, ``"threading"``, ``"dask"``).
    scheduler : str, optional
        Address of a Dask scheduler (``"tcp://host:8786"``): run the tasks on that cluster
        through joblib's Dask backend (needs ``ldpgraph[distributed]``).
    batch_size : int or "auto"
        joblib's number of tasks per dispatch for the threading and Dask backends (scheduling
        only; does not change results).
    quiet : bool
        No progress on stderr (otherwise a tqdm bar on a terminal, after one second, and a line
        every ~10 s elsewhere: :mod:`ldpgraph._progress`).
    graph_seed : int
        Seed of synthetic graphs given by spec, so that runs with different ``seed`` see the
        same graph.
    preload_plots : bool
        Import matplotlib in a background thread while the grid runs, for a ``write`` with
        plots (its import is then off the serial end of the run).
    options : mapping, optional
        Public protocol options by name (``{"d_max": 8}``: ``--d-max 8`` of ``ldpgraph node`` /
        ``curate``), applied to every method whose simulation takes them
        (:func:`~ldpgraph.experiments.options.configure_methods`); recorded in
        ``config["options"]``. ValueError on an option no selected method takes.

    Returns
    -------
    ExperimentResult

    Notes
    -----
    Trial t of a cell is draw number t mod B of the stream of block floor(t / B) (B =
    ``block_size``) of that cell; the stream is ``SeedSequence(entropy=seed, spawn_key=(key,
    floor(t/B)))`` with key a SHA-256 hash of the cell's identity. Nothing else enters the
    draws, so results are identical for any ``n_jobs``, ``backend`` and ``batch_size``.

    Examples
    --------
    >>> from ldpgraph.graph import Degrees
    >>> res = run_experiment({"toy": Degrees([3, 1, 2, 2])}, epsilons=[1.0], ks=[2],
    ...                      methods=["unbiased-dlap", "naive-dlap"], n_trials=5, seed=1)
    >>> [(r.method, r.trials, r.truth) for r in res.summary]
    [('unbiased-dlap', 5, 5.0), ('naive-dlap', 5, 5.0)]
    >>> res.records.n_rows, res.records[0].spawn_keys[0].endswith("/0")
    (10, True)
    """
    t0 = time.perf_counter()
    eps_list = _check_epsilons(epsilons)
    n_trials = check_nonnegative_int(n_trials, "n_trials", minimum=1)
    block_size = check_nonnegative_int(block_size, "block_size", minimum=1)
    if not (batch_size == "auto" or (isinstance(batch_size, int) and batch_size >= 1)):
        raise ValueError(f"batch_size must be 'auto' or an int >= 1, got {batch_size!r}")
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0):
        raise ValueError(
            f"n_jobs must be a non-zero int (-1 = all cores) or None (automatic), got {n_jobs!r}")
    if scheduler is not None:
        scheduler = check_scheduler_address(scheduler)
    stats = parse_statistics(statistics, ks)
    opts = check_options(options)
    if methods is None:  # as on the command line: the recommended protocols join the k-star defaults
        from ..run.method import method_names, recommended_methods

        graph_stats = dict.fromkeys(s for s, _ in stats if s in GRAPH_STATISTICS)
        extra = [m for st in graph_stats for m in (list(recommended_methods(st)) or method_names(st))]
        methods = list(dict.fromkeys([*DEFAULT_METHODS, *extra]))
    method_objs = configure_methods(resolve_methods(methods), opts)
    entropy = root_entropy(seed)
    if preload_plots:
        from .plots import preload_matplotlib

        preload_matplotlib()
    ginputs = resolve_graph_inputs(graphs, graph_seed=graph_seed)
    by_label = {g.label: g for g in ginputs}
    units = _build_units(ginputs, stats, eps_list, method_objs)
    skipped = []
    runnable = []
    for unit in units:
        reason = _cannot_run(unit, by_label[unit.graph].degrees)
        if reason is None:
            runnable.append(unit)
        else:
            skipped.extend({"graph": unit.graph, "method": m, "statistic": unit.statistic, "k": unit.k,
                            "epsilon": unit.epsilon, "reason": reason} for m in unit.methods)
    if not runnable:
        raise ValueError("no cell of the grid can run: " + "; ".join(
            f"{s['method']} k={s['k']} epsilon={s['epsilon']:g}: {s['reason']}" for s in skipped[:3]))
    units = runnable
    adaptive = scheduler is None and backend in (None, "loky")
    if adaptive:
        n_jobs = _n_processes(n_jobs)
    elif scheduler is None and backend != "dask":
        n_jobs = _auto_n_jobs(n_jobs, len(units) * n_trials * max(g.n_nodes for g in ginputs))
    elif n_jobs is None:
        n_jobs = -1

    truths = {(g.label, s, k): _truth(g, s, k) for g in ginputs for s, k in stats}

    # One task per block of a unit, in joblib (which batches them); results come back in any
    # order and are put in place by index.
    starts = range(0, n_trials, block_size)
    cell_blocks = [(b, min(block_size, n_trials - start)) for b, start in enumerate(starts)]
    tasks = [(u, b, n) for u in range(len(units)) for b, n in cell_blocks]
    results: list[NDArray | None] = [None] * len(tasks)
    analytic_of_unit: list[dict[str, float | None]] = [{} for _ in units]  # from each unit's block 0
    bar = Progress(len(units) * n_trials, unit="trial", quiet=quiet)  # results arriving, in this process
    parallel_report = None

    def place(i: int, out: tuple) -> None:
        _, est, closed_form = out
        results[i] = est
        if closed_form is not None:
            analytic_of_unit[tasks[i][0]] = closed_form
        bar.update(est.shape[1])

    try:
        import joblib

        if adaptive:  # in this process until the measured cost says workers pay (run_adaptive)
            args = [(units[u], by_label[units[u].graph].degrees, entropy, b, n, i)
                    for i, (u, b, n) in enumerate(tasks)]
            parallel_report = run_adaptive(_run_block, args, min(n_jobs, len(tasks)), place)
        else:
            with _parallel_context(backend, scheduler, [g.degrees for g in ginputs]):
                parallel = joblib.Parallel(n_jobs=n_jobs, batch_size=batch_size,
                                           return_as="generator_unordered")
                for out in parallel(
                    joblib.delayed(_run_block)(units[u], by_label[units[u].graph].degrees, entropy, b, n, i)
                    for i, (u, b, n) in enumerate(tasks)
                ):
                    place(out[0], out)
    except BaseException:
        bar.close(failed=True)
        raise
    bar.close()
    t_sim = time.perf_counter() - t0

    # assemble the records cell by cell, trials in order
    cells = []
    costs: list[dict[str, Any]] = []
    analytic: dict[tuple, float | None] = {}
    n_blocks = len(cell_blocks)
    for u_index, unit in enumerate(units):
        parts = results[u_index * n_blocks:(u_index + 1) * n_blocks]
        est_all = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)
        spawn = tuple(chain.from_iterable(repeat(f"{unit.key}/{b}", n) for b, n in cell_blocks))
        truth = truths[(unit.graph, unit.statistic, unit.k)]
        a = analytic_of_unit[u_index]
        for i, method in enumerate(unit.methods):
            cell = CellRecords(unit.graph, method, unit.statistic, unit.k, unit.epsilon, truth,
                               np.ascontiguousarray(est_all[i]), entropy, spawn)
            if not unit.method.vectorized:
                costs.append(_cell_costs(unit, _data(unit, by_label[unit.graph].degrees), est_all[1]))
            cells.append(cell)
            rmse_a = a.get(method)
            analytic[cell.key] = None if rmse_a is None or not math.isfinite(rmse_a) else float(rmse_a)
    records = Records(cells)
    summary = summarize(records, analytic)

    from .._version import __version__

    versions = {"ldpgraph": __version__, "numpy": np.__version__}
    backend_name = _backend_name(backend, scheduler, n_jobs)
    if parallel_report is not None:
        backend_name = "sequential" if parallel_report["processes"] == 1 else "loky"
    versions["joblib"] = joblib.__version__  # the library that ran the tasks
    if backend_name == "dask":
        versions["distributed"] = sys.modules["distributed"].__version__
    versions["python"] = platform.python_version()

    config = {
        "seed": entropy,
        "graphs": [{"label": g.label, "n_nodes": g.n_nodes, "n_edges": g.n_edges, "stream_id": g.stream_id,
                    "origin": g.origin, "synthetic": g.synthetic} for g in ginputs],
        "graph_seed": graph_seed,
        "statistics": [s if k is None else f"{s}:{k}" for s, k in stats],
        "methods": [m.name for m in method_objs],
        **({"options": opts} if opts else {}),
        "epsilons": eps_list,
        "n_trials": n_trials,
        "block_size": block_size,
        "n_cells": len(cells),
        "n_tasks": len(tasks),
        "n_jobs": n_jobs,
        "backend": backend_name,
        **({"parallel": parallel_report} if parallel_report is not None else {}),
        "scheduler": scheduler,
        "cell_costs": costs,
        "skipped": skipped,
        "simulation_seconds": round(t_sim, 3),
        "total_seconds": round(time.perf_counter() - t0, 3),
        "versions": versions,
    }
    return ExperimentResult(records, summary, analytic, config)
