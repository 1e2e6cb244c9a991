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

With loky (the default for ``n_jobs != 1``: the ``loky`` package, the process pool joblib's
own loky backend is built from, whose helper processes start without importing joblib) the
graphs' degrees are sent once per worker (a worker initializer), this process computes beside
``n_jobs - 1`` worker processes, consecutive blocks of a cell are grouped into one task, and the workers
exit within a quarter second when the process that started them dies, even by SIGKILL (loky's
own idle timeout is 300 s). Not covered: on Windows the workers are left to loky; Dask workers
belong to their cluster.

k-stars are estimated by the methods of :mod:`ldpgraph.baselines` (each method its own cell
and stream). The other curator statistics (:mod:`ldpgraph.experiments.statistics`) compare the
unbiased estimate (``unbiased-dlap``) and the naive plug-in (``naive-dlap``) on the *same*
noisy degrees: both share one stream.
"""

from __future__ import annotations

import hashlib
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
from dataclasses import dataclass, field, replace
from itertools import chain, repeat
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._cores import usable_cores as _usable_cores
from .._validation import check_epsilon, check_nonnegative_int
from .records import CellRecords, Records, write_records_csv
from .seeding import block_rng, cell_key, root_entropy
from .statistics import GRAPH_STATISTICS, NAIVE_METHOD, UNBIASED_METHOD, get_statistic, statistic_names
from .summary import SummaryRow, format_summary, summarize, write_summary_csv

__all__ = [
    "DEFAULT_METHODS",
    "DEFAULT_KS",
    "DEFAULT_N_JOBS",
    "GraphInput",
    "ExperimentResult",
    "run_experiment",
    "start_workers_early",
    "stop_workers",
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
#: workers: None = automatic (all cores when the grid is large enough, else 1; results do not
#: depend on it)
DEFAULT_N_JOBS: int | None = None
# below this many (trials x nodes) simulated in all, the automatic n_jobs runs sequentially
_AUTO_PARALLEL_WORK = 2_000_000


# ------------------------------------------------------------------------------------ inputs


@dataclass(frozen=True, eq=False)
class GraphInput:
    """A graph of the grid, reduced to what the protocols need: its label and degrees."""

    label: str
    degrees: NDArray[np.int64]
    n_edges: int
    #: what the random streams of the graph's cells are keyed on: ``"sha256:<digest>"`` of the
    #: degree sequence (the content: the same for a dataset name, a path or a copy elsewhere),
    #: or the label itself where it was given explicitly (a mapping key, ``--label``)
    stream_id: str = ""
    #: where the graph came from: ``"dataset"``, ``"synthetic"``, ``"file"`` or ``"object"``
    origin: str = "object"
    #: the graph itself (an ldpgraph Graph) where the input had one: for adjacency protocols
    graph: Any = None

    @property
    def n_nodes(self) -> int:
        return int(self.degrees.size)

    @property
    def synthetic(self) -> bool:
        """Whether the graph is a synthetic stand-in generated from a spec."""
        return self.origin == "synthetic"


def content_id(degrees: NDArray[np.int64]) -> str:
    """The content identity of a graph for seeding: SHA-256 of its degree sequence (int64, LE).

    Examples
    --------
    >>> content_id(np.array([1, 2, 1])) == content_id([1, 2, 1])
    True
    >>> content_id([1, 2, 1])[:7]
    'sha256:'
    """
    import hashlib

    d = np.ascontiguousarray(np.asarray(degrees, dtype="<i8"))
    return "sha256:" + hashlib.sha256(d.tobytes()).hexdigest()[:32]


def _origin(source: str | os.PathLike[str]) -> str:
    if isinstance(source, os.PathLike):
        return "file"
    from ..datasets import is_synthetic_spec, list_datasets

    if source.strip().lower() in list_datasets("graph"):
        return "dataset"
    return "synthetic" if is_synthetic_spec(source) else "file"


def _as_graph_input(
    label: str, obj: Any, graph_seed: int, explicit: bool = False, origin: str = "object"
) -> GraphInput:
    from ..protocols.randomizer import as_degrees

    if isinstance(obj, GraphInput):  # resolved already (the CLI reads files with its options)
        return replace(obj, label=label, stream_id=label) if explicit else obj
    if isinstance(obj, (str, os.PathLike)):
        from ..datasets import resolve_graph

        origin = _origin(obj)
        obj = resolve_graph(obj, rng=graph_seed)
    d = as_degrees(obj, name=f"degrees of graph {label!r}")
    n_edges = getattr(obj, "n_edges", None)
    n_edges = int(n_edges) if n_edges is not None else int(d.sum()) // 2
    if d.size == 0 or n_edges == 0:
        what = "no nodes" if d.size == 0 else f"{d.size:,} node{'' if d.size == 1 else 's'} but no edges"
        hint = "; check the file (are the edges commented out or in other columns?)"
        raise ValueError(f"graph {label!r} has {what}: every statistic is 0 and no relative error exists"
                         + (hint if origin == "file" else ""))
    d.setflags(write=False)
    from ..graph.core import Graph

    return GraphInput(label, d, n_edges, label if explicit else content_id(d), origin,
                      obj if isinstance(obj, Graph) else None)


def _file_label(path: str | os.PathLike[str]) -> str:
    """A short label for an edge-list file: its name without compression and text suffixes."""
    name = Path(os.fspath(path)).name
    for suffix in (".gz", ".bz2", ".xz", ".zst"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    for suffix in (".txt", ".csv", ".tsv", ".edges", ".edgelist", ".el", ".parquet"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return name or os.fspath(path)


def resolve_graph_inputs(graphs: Any, *, graph_seed: int = 0) -> list[GraphInput]:
    """Turn the ``graphs`` argument of :func:`run_experiment` into labelled degree sequences.

    Accepted: a dataset name, synthetic spec or edge-list path (str, resolved with
    :func:`ldpgraph.datasets.resolve_graph`; a name or spec is its own label, a file is labelled
    by its name without suffixes, e.g. ``edges`` for ``/data/edges.txt.gz``, or by its path where
    two files would share a name); a graph object with a ``degrees`` attribute or an array of
    degrees (labelled by its ``name`` attribute, else ``graph<i>``); a :class:`GraphInput`
    (kept as it is); a mapping ``label -> any of those``; or a sequence of the above.

    The random streams of a graph's cells are keyed on its content (:func:`content_id`), so the
    same seed gives the same numbers however the graph is named; a mapping's keys are explicit
    labels and key the streams themselves (as ``--label`` does on the command line).

    Examples
    --------
    >>> [g.label for g in resolve_graph_inputs({"toy": [1, 2, 1]})]
    ['toy']
    >>> resolve_graph_inputs({"toy": [1, 2, 1]})[0].n_edges
    2
    """
    graph_seed = check_nonnegative_int(graph_seed, "graph_seed")
    explicit = isinstance(graphs, Mapping)
    if isinstance(graphs, Mapping):
        items = [(str(label), obj) for label, obj in graphs.items()]
    else:
        if isinstance(graphs, (str, os.PathLike)) or hasattr(graphs, "degrees"):
            graphs = [graphs]
        elif isinstance(graphs, np.ndarray):
            graphs = [graphs] if graphs.ndim == 1 else list(graphs)
        items = []
        for i, obj in enumerate(graphs):
            if isinstance(obj, (str, os.PathLike)):
                label = os.fspath(obj).strip() if isinstance(obj, str) else os.fspath(obj)
                if _origin(obj) == "file":
                    label = _file_label(label)
            elif isinstance(obj, GraphInput):
                label = obj.label
            else:
                label = getattr(obj, "name", None) or f"graph{i}"
            items.append((str(label), obj))
        labels = [label for label, _ in items]
        items = [  # two files with the same name: label them by their paths
            (os.fspath(obj).strip() if labels.count(label) > 1 and isinstance(obj, (str, os.PathLike))
             and _origin(obj) == "file" else label, obj)
            for label, obj in items
        ]
    if not items:
        raise ValueError("graphs must name at least one graph")
    labels = [label for label, _ in items]
    dup = sorted({x for x in labels if labels.count(x) > 1})
    if dup:
        raise ValueError(f"graph labels must be distinct, got {dup} more than once")
    return [_as_graph_input(label, obj, graph_seed, explicit) for label, obj in items]


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


def _resolve_methods(methods: Sequence[Any] | None) -> list[Any]:
    if methods is None:
        methods = DEFAULT_METHODS
    elif isinstance(methods, str):
        methods = [methods]
    if any(isinstance(m, str) and m.strip() == "all" for m in methods):
        from ..baselines.methods import method_names

        methods = method_names()
    out = []
    for m in methods:
        if isinstance(m, str):
            from ..baselines.methods import METHODS, get_method

            # k-star methods keep their own objects; the other protocols come from the registry
            m = get_method(m.strip()) if m.strip() in METHODS else _registry_method(m.strip())
        elif not (hasattr(m, "name") and hasattr(m, "estimate_trials")):
            raise TypeError(f"methods entries must be method names or KStarMethod objects, got {m!r}")
        out.append(m)
    names = [m.name for m in out]
    dup = sorted({x for x in names if names.count(x) > 1})
    if dup:
        raise ValueError(f"method names must be distinct, got {dup} more than once")
    if not out:
        raise ValueError("methods must name at least one method")
    return out


def _registry_method(name: str) -> Any:
    from ..registry import get_method, method_names

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
    """What a task needs to simulate the trials of one cell (or of one shared-noise cell group)."""

    graph: str
    statistic: str
    k: int | None
    epsilon: float
    methods: tuple[str, ...]  # record labels
    key: int
    kstar_method: Any = None  # the KStarMethod object, for k-star units
    protocol: Any = None  # a Protocol of the layer, for adjacency statistics (per-trial units)
    data: Any = None  # what the protocol needs: the Graph


def _run_block(unit: _Unit, degrees: NDArray[np.int64], seed: int, block: int, n: int, task: int):
    """Simulate ``n`` trials of one block; return ``(task, estimates of shape (n_methods, n))``."""
    gen = block_rng(seed, unit.key, block)
    if unit.protocol is not None:
        return task, _run_protocol_block(unit, gen, n)
    if unit.kstar_method is not None:
        est = unit.kstar_method.estimate_trials(degrees, unit.k, unit.epsilon, n, rng=gen)
        return task, np.asarray(est, dtype=np.float64).reshape(1, n)
    from ..protocols.randomizer import DegreeRandomizer

    stat = get_statistic(unit.statistic)
    randomizer = DegreeRandomizer(epsilon=unit.epsilon)
    out = np.empty((len(unit.methods), n), dtype=np.float64)
    for t in range(n):
        reports = randomizer.randomize(degrees, rng=gen)
        y = reports.degrees.values
        for i, method in enumerate(unit.methods):
            if method == UNBIASED_METHOD:
                out[i, t] = float(stat.unbiased(reports, unit.k).value)
            else:
                out[i, t] = stat.naive(y, unit.k)
    return task, out


def _run_protocol_block(unit: _Unit, gen: np.random.Generator, n: int) -> NDArray[np.float64]:
    """Per-trial simulation of a protocol; row 0 the estimates, row 1 the seconds per trial."""
    out = np.empty((2, n), dtype=np.float64)
    unit.protocol.prepare(unit.data)  # per-graph precomputation, outside the timed trials
    for t in range(n):
        t0 = time.perf_counter()
        est = unit.protocol.estimate_trials(unit.data, unit.statistic, unit.k, unit.epsilon, 1, rng=gen)
        out[0, t] = est[0]
        out[1, t] = time.perf_counter() - t0
    return out


def _graph_units(g: GraphInput, stat: str, k: int | None, eps: float, methods: list[Any]) -> list[_Unit]:
    """Units of an adjacency statistic: one per method that estimates it (others skip it)."""
    from ..protocols.base import Protocol, require_graph

    protos = [m for m in methods if isinstance(m, Protocol) and m.supports(stat)]
    if not protos:
        from ..registry import method_names

        raise ValueError(
            f"statistic {stat!r} is estimated by {', '.join(method_names(stat))}; none is among the "
            f"methods {[m.name for m in methods]}"
        )
    graph = require_graph(g.graph if g.graph is not None else g.degrees, protos[0].name)
    return [
        _Unit(g.label, stat, k, eps, (m.name,), cell_key(stat, g.stream_id or g.label, k, eps, m.name),
              protocol=m, data=graph)
        for m in protos
    ]


#: Degrees of the grid's graphs in a loky worker, by token: read once per worker from the file
#: the parent wrote (:func:`_worker_degrees`), so that a task names its graph instead of carrying
#: its degrees. The most recent :data:`_WORKER_GRAPHS_KEPT` graphs are kept.
_WORKER_GRAPHS: dict[str, NDArray[np.int64]] = {}
_WORKER_GRAPHS_KEPT = 4

#: How often a worker checks that the process that started it is still alive (seconds).
_PARENT_POLL_SECONDS = 0.25

#: A task runs at most this many blocks of one cell (coarser tasks: less per-task overhead).
_MAX_BLOCKS_PER_TASK = 16

#: Tasks handed to each worker process ahead of time: enough to keep it busy while this process
#: runs a task of its own (the ones queued cannot be taken back).
_QUEUED_PER_PROCESS = 2


def _run_blocks(unit: _Unit, degrees: NDArray[np.int64] | tuple[str, str], seed: int,
                blocks: tuple[tuple[int, int], ...], task: int, between: Any = None):
    """Run consecutive blocks ``(block, n)`` of one unit; return ``(task, estimates (n_methods, sum n))``.

    ``degrees`` is the array, or ``(token, path)`` of a graph shared through a file;
    ``between()``, if given, is called after each block.
    """
    d = _worker_degrees(*degrees) if isinstance(degrees, tuple) else degrees
    parts = []
    for b, n in blocks:
        parts.append(_run_block(unit, d, seed, b, n, task)[1])
        if between is not None:
            between()
    return task, parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)


def _worker_degrees(token: str, path: str) -> NDArray[np.int64]:
    """The degrees of a shared graph in this worker: read from ``path`` on first use, then kept."""
    d = _WORKER_GRAPHS.get(token)
    if d is None:
        d = np.fromfile(path, dtype="<i8").astype(np.int64, copy=False)
        d.setflags(write=False)  # read-only, like GraphInput.degrees
        while len(_WORKER_GRAPHS) >= _WORKER_GRAPHS_KEPT:
            del _WORKER_GRAPHS[next(iter(_WORKER_GRAPHS))]
        _WORKER_GRAPHS[token] = d
    return d


def _graph_token(g: GraphInput) -> str:
    """Content token of a graph's degrees (a worker keeps equal graphs across runs)."""
    digest = hashlib.sha256(g.degrees.astype("<i8").tobytes()).hexdigest()[:24]
    return f"{g.label}#{digest}"


@contextmanager
def _shared_degrees(graphs: list[GraphInput]) -> Iterator[dict[str, tuple[str, str]]]:
    """Write each graph's degrees to a file once; yield ``label -> (token, path)`` for the tasks.

    The folder is removed on exit, and registered with loky's resource tracker, which removes
    it if this process dies first (even by SIGKILL).
    """
    import shutil
    import tempfile

    from loky.backend import resource_tracker

    folder = tempfile.mkdtemp(prefix="ldpgraph-degrees-")
    resource_tracker.register(folder, "folder")
    try:
        refs = {}
        for i, g in enumerate(graphs):
            path = os.path.join(folder, f"{i}.i8")
            g.degrees.astype("<i8").tofile(path)
            refs[g.label] = (_graph_token(g), path)
        yield refs
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        resource_tracker.unregister(folder, "folder")


def _init_worker(parent_pid: int) -> None:
    """loky worker initializer: exit when the parent process dies.

    loky workers do not watch their parent: killed (SIGKILL, SIGTERM), it would leave them
    running until their idle timeout (300 s). A daemon thread polls ``os.getppid()`` and ends
    the worker within ``_PARENT_POLL_SECONDS`` of the parent's death (POSIX: the worker is then
    re-parented).
    """
    if os.name == "posix":
        threading.Thread(target=_exit_with_parent, args=(parent_pid,), name="ldpgraph-parent-watch",
                         daemon=True).start()


def _exit_with_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(_PARENT_POLL_SECONDS)
    os._exit(1)


def _warm_up(plots: bool = False) -> int:
    """A first task for a fresh worker: its start-up (imports; matplotlib's too with ``plots``)
    runs while the parent loads the graphs."""
    if plots:
        from .plots import import_matplotlib

        import_matplotlib()
    return os.getpid()


def _render_plots(
    rows: list[SummaryRow], folder: Path, formats: tuple[str, ...], synthetic: set[str]
) -> list[Path]:
    """Write the plots of ``rows`` into ``folder`` (a task: a worker renders them)."""
    from .plots import plot_relative_rmse

    return plot_relative_rmse(rows, folder, synthetic=synthetic, formats=formats)


def _submit(pool: Any, fn: Any, *args: Any) -> Any:
    """``pool.submit(fn, *args)``, or None if the pool was shut down meanwhile."""
    try:
        return pool.submit(fn, *args)
    except RuntimeError:
        return None


def _live_pool() -> Any:
    """The loky executor of the last parallel run if it is still usable, else None."""
    pool = _POOL
    if pool is None or pool._flags.broken is not None or pool._flags.shutdown:
        return None
    return pool


def _loky_processes(n_jobs: int) -> int:
    """Worker processes for ``n_jobs`` with loky: one fewer than the workers, since this process
    computes too (0 = run here)."""
    joblib = sys.modules.get("joblib")
    if joblib is not None:  # joblib in use here: its configuration (nesting) decides
        with joblib.parallel_config(backend="loky"):
            return joblib.effective_n_jobs(n_jobs) - 1
    # joblib's rule for loky without importing it (0.03 s before the grid starts): no joblib
    # configuration can be active in a process that never imported it
    import multiprocessing

    from loky import cpu_count

    if multiprocessing.current_process().daemon:
        return 0
    return (n_jobs if n_jobs > 0 else max(cpu_count() + 1 + n_jobs, 1)) - 1


#: The loky executor of the last parallel run: :meth:`ExperimentResult.write` renders the plots
#: in one of its workers while this process writes the other files.
_POOL: Any = None
#: The first task of each of its workers: done once the worker has started (its imports).
_WARM_UPS: list[Any] = []
#: Whether its workers imported matplotlib as they started.
_POOL_PLOTS = False


def _start_pool(n_processes: int, plots: bool = False) -> Any:
    """The reusable loky executor with ``n_processes`` workers, started now (returns it).

    Its arguments do not depend on the grid, so a later run in this process reuses the workers.
    With ``plots`` the workers import matplotlib while they start.
    """
    global _POOL, _POOL_PLOTS
    from loky import get_reusable_executor

    threads = str(max(1, (os.cpu_count() or 1) // (n_processes + 1)))
    env = {v: threads for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    executor = get_reusable_executor(max_workers=n_processes, timeout=300, initializer=_init_worker,
                                     initargs=(os.getpid(),), env=env)
    _WARM_UPS[:] = [executor.submit(_warm_up, plots) for _ in range(n_processes)]
    _POOL = executor
    _POOL_PLOTS = plots
    return executor


def stop_workers() -> None:
    """Stop the worker processes of earlier runs now: killed, not asked to finish (~0.01 s).

    The workers are kept between runs (a later :func:`run_experiment` reuses them); a program
    with no further run for them (the command line, once its files are written) saves their
    orderly shutdown at exit, which waits ~0.05–0.1 s for them. The call returns once loky's
    manager thread has released the pool (it joins it: ~0.01 s). loky's resource tracker may
    still warn at exit, now and then (a few runs in a hundred here), of a "leaked" semaphore
    that it then finds already removed: a known, harmless race inside loky. Harmless without
    workers.

    >>> stop_workers()
    """
    pool = _live_pool()
    if pool is not None:
        pool.shutdown(wait=True, kill_workers=True)


def _reuse_pool(n_processes: int, plots: bool) -> Any:
    """The live pool of an earlier start if it has ``n_processes`` workers (and imported
    matplotlib when ``plots``), else None."""
    pool = _live_pool()
    if pool is None or pool._max_workers != n_processes or (plots and not _POOL_PLOTS):
        return None
    return pool


def start_workers_early(
    graphs: Any, *, n_jobs: int | None, work_per_node: int, preload_plots: bool = False
) -> Any:
    """Start the loky worker processes of a coming :func:`run_experiment` now (returns the pool or None).

    A fresh worker (a Python importing numpy and ldpgraph) takes ~0.3–0.4 s to start; started
    before the graphs are loaded, it is ready when the grid starts. ``graphs`` are the graph
    specifications as given (dataset names and synthetic specs tell their size without
    loading; see :func:`_likely_parallel`); ``work_per_node`` is the number of simulated runs of
    every node (trials x statistics x epsilons x methods). Nothing starts for ``n_jobs=1``, or
    for ``n_jobs=None`` when the grid will likely run in this process. ``run_experiment``
    reuses the pool when it has the number of workers it wants; a wrong guess costs only idle
    workers (or a start later). The results never depend on it.

    >>> start_workers_early("facebook", n_jobs=1, work_per_node=1000) is None
    True
    """
    serial = n_jobs == 1 or (n_jobs is None and not _likely_parallel(graphs, work_per_node))
    n_proc = 0 if serial else _loky_processes(-1 if n_jobs is None else n_jobs)
    if n_proc <= 0:
        return _start_plot_worker() if preload_plots else None
    return _reuse_pool(n_proc, preload_plots) or _start_pool(n_proc, preload_plots)


def _start_plot_worker() -> Any:
    """For a run that simulates in this process only: one worker that imports matplotlib and
    renders the plots on a core the run leaves idle (None on a single core, where a thread
    imports it instead: a second process would only share that core)."""
    if _usable_cores() < 2:
        return None
    return _reuse_pool(1, True) or _start_pool(1, plots=True)


def _make_tasks(n_units: int, n_blocks: int, n_workers: int) -> list[tuple[int, int, int]]:
    """``(unit, first block, stop block)`` of each task.

    With several workers, a task runs up to a whole cell (at most ``_MAX_BLOCKS_PER_TASK``
    blocks), and the last ``2 * n_workers`` tasks' worth of blocks go one block per task, so
    that the workers finish together (the last task is short).
    """
    if n_workers <= 1:
        return [(u, 0, n_blocks) for u in range(n_units)]
    per = max(1, min(n_blocks, _MAX_BLOCKS_PER_TASK))
    coarse = [(u, b, min(b + per, n_blocks)) for u in range(n_units) for b in range(0, n_blocks, per)]
    cut = max(0, len(coarse) - 2 * n_workers)
    return coarse[:cut] + [(u, b, b + 1) for u, lo, hi in coarse[cut:] for b in range(lo, hi)]


def _run_here_and_in_pool(
    executor: Any, n_processes: int, n_tasks: int, submit_args, run_here, on_result, *, first_here=None
) -> None:
    """Run tasks ``0 .. n_tasks - 1`` in order, in the pool and in this process.

    The pool is kept ``_QUEUED_PER_PROCESS`` tasks ahead per worker that has started (its first
    task, in ``_WARM_UPS``, is done: a task queued behind a worker's start-up would wait for
    it). This process runs the next task in order whenever the pool is full, and after each
    of its blocks collects the results and tops the pool up, so that a worker is never left
    idle while this process computes (a grid smaller than the workers' start-up runs here
    entirely). ``submit_args(i)`` gives the pool's arguments of task i, ``run_here(i, between)``
    runs it here calling ``between()`` after each block; ``on_result((i, est))`` receives every
    result. ``first_here(between)``, if given, runs here once the pool has its first tasks,
    before this process's first task (calling ``between()`` between its steps). On an error
    or an interrupt the tasks not started are cancelled (on an interrupt the workers are
    stopped).
    """
    from concurrent.futures import FIRST_COMPLETED, wait

    nxt = 0  # the first task not handed out yet
    inflight: set = set()

    def service() -> bool:
        """Collect finished pool tasks and top the pool up; whether any had finished."""
        nonlocal nxt
        done = {f for f in inflight if f.done()}
        for f in done:
            inflight.discard(f)
            on_result(f.result())
        started = min(n_processes, sum(f.done() for f in _WARM_UPS)) if _WARM_UPS else n_processes
        while nxt < n_tasks and len(inflight) < _QUEUED_PER_PROCESS * started:
            inflight.add(executor.submit(_run_blocks, *submit_args(nxt)))
            nxt += 1
        return bool(done)

    try:
        if first_here is not None:
            service()
            first_here(service)
        while nxt < n_tasks or inflight:
            service()
            if nxt < n_tasks:
                nxt += 1
                on_result(run_here(nxt - 1, service))
            elif inflight:
                wait(inflight, return_when=FIRST_COMPLETED)
    except BaseException as exc:
        for f in inflight:
            f.cancel()
        if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit: stop the workers too
            executor.shutdown(wait=False, kill_workers=True)
        raise


def _build_units(
    graphs: list[GraphInput], stats: list[tuple[str, int | None]], epsilons: list[float], methods: list[Any]
) -> list[_Unit]:
    from ..protocols.base import Protocol

    names = [m.name for m in methods]
    degree_methods = tuple(m for m in (UNBIASED_METHOD, NAIVE_METHOD) if m in names)
    units = []
    for g in graphs:
        for stat, k in stats:
            for eps in epsilons:
                if stat in GRAPH_STATISTICS:
                    units.extend(_graph_units(g, stat, k, eps, methods))
                elif stat == "kstars":
                    for m in methods:
                        if isinstance(m, Protocol) and not m.supports("kstars"):
                            continue
                        key = cell_key("kstars", g.stream_id or g.label, k, eps, m.name)
                        units.append(_Unit(g.label, stat, k, eps, (m.name,), key, m))
                else:
                    if not degree_methods:
                        raise ValueError(
                            f"statistic {stat!r} is estimated by {UNBIASED_METHOD} and {NAIVE_METHOD} only; "
                            f"neither is among the methods {names}"
                        )
                    key = cell_key(stat, g.stream_id or g.label, k, eps, "degree-reports")
                    units.append(_Unit(g.label, stat, k, eps, degree_methods, key))
    return units


def _cannot_run(unit: _Unit, degrees: NDArray[np.int64]) -> str | None:
    """Why ``unit`` cannot run (one probe trial on a throw-away stream raises), or None.

    The methods refuse parameters they cannot handle before drawing anything (LocalLapKStars at
    large k: C(d_max, k) overflows int64; DLap noise whose scale overflows), so one trial tells.
    The adjacency protocols refuse a trial whose noisy graph would not fit in memory
    (``MemoryError`` naming the protocols that fit): that cell is skipped, not the whole grid.
    """
    try:
        _run_block(unit, degrees, 0, 0, 1, 0)
    except (ValueError, OverflowError, FloatingPointError, ArithmeticError, MemoryError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def _truth(g: GraphInput, stat: str, k: int | None) -> float:
    if stat in GRAPH_STATISTICS:
        from ..protocols.base import require_graph
        from .statistics import graph_statistic_truth

        graph = require_graph(g.graph if g.graph is not None else g.degrees, stat)
        return graph_statistic_truth(stat, graph)
    if stat == "kstars":
        from ..baselines.methods import exact_kstars

        return float(exact_kstars(g.degrees, k))
    return float(get_statistic(stat).truth(g.degrees, k))


def _analytic(unit: _Unit, g: GraphInput) -> dict[str, float | None]:
    if unit.protocol is not None:
        return {unit.methods[0]: unit.protocol.analytic_rmse(unit.data, unit.statistic, unit.k, unit.epsilon)}
    if unit.kstar_method is not None:
        fn = getattr(unit.kstar_method, "analytic_rmse", None)
        return {unit.methods[0]: None if fn is None else fn(g.degrees, unit.k, unit.epsilon)}
    stat = get_statistic(unit.statistic)
    sd = stat.analytic_sd(g.degrees, unit.k, unit.epsilon)
    return {
        m: sd if (m == UNBIASED_METHOD or stat.naive_is_unbiased) else None for m in unit.methods
    }


def _cell_costs(unit: _Unit, seconds: NDArray[np.float64]) -> dict[str, Any]:
    """Communication (mean bits per node) and wall time per trial of a protocol cell."""
    up, down = unit.protocol.communication(unit.data, unit.epsilon, unit.statistic)
    return {
        "graph": unit.graph, "method": unit.methods[0], "statistic": unit.statistic, "k": unit.k,
        "epsilon": unit.epsilon, "upload_bits_per_node": float(up),
        "download_bits_per_node": float(down), "seconds_per_trial": float(np.mean(seconds)),
        "budget": unit.protocol.budget(unit.epsilon, unit.statistic),
    }


# ---------------------------------------------------------------------------------- backends


@contextmanager
def _parallel_context(
    backend: str | None, scheduler: str | None, scatter: list
) -> Iterator[None]:
    import joblib

    if scheduler is None and backend != "dask":
        if backend is None:
            yield
        else:
            with joblib.parallel_config(backend=backend):
                yield
        return
    if backend not in (None, "dask"):
        raise ValueError(f"scheduler is given, so backend must be 'dask' or None, got {backend!r}")
    if scheduler is not None:
        check_scheduler_address(scheduler)
    try:
        from distributed import Client
    except ImportError:
        raise ImportError(f"the Dask backend needs dask.distributed; {dask_install_hint()}") from None
    if scheduler is None:
        from distributed import get_client

        client = get_client()  # ValueError if no client is running
        with joblib.parallel_config(backend="dask", client=client, scatter=scatter):
            yield
        return
    try:
        client = Client(scheduler, set_as_default=False, timeout=SCHEDULER_CONNECT_TIMEOUT)
    except (OSError, TimeoutError) as exc:
        raise ConnectionError(f"cannot connect to the Dask scheduler at {scheduler}: {exc}") from None
    try:
        with joblib.parallel_config(backend="dask", client=client, scatter=scatter):
            yield
    finally:
        client.close()


#: seconds to wait for a Dask scheduler to answer
SCHEDULER_CONNECT_TIMEOUT = 10.0

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


def dask_install_hint() -> str:
    """How to install the Dask extra: from PyPI, or from a source checkout when running from one."""
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file() and (root / "ldpgraph").is_dir():
        return (f"install it with: pip install -e '{root}[distributed]' (this source checkout), "
                "or pip install 'dask[distributed]'")
    return "install it with: pip install 'ldpgraph[distributed]' (or pip install 'dask[distributed]')"


def _auto_n_jobs(n_jobs: int | None, work: int) -> int:
    """The number of workers: ``n_jobs`` as given, or for None all cores when there is enough work."""
    if n_jobs is not None:
        return n_jobs
    return -1 if work >= _AUTO_PARALLEL_WORK else 1


def _likely_parallel(graphs: Any, work_per_node: int) -> bool:
    """Whether the automatic ``n_jobs`` will likely go parallel, judged before loading the graphs.

    Node counts known without loading: dataset names (their recorded size), ``n=`` in a
    synthetic spec, arrays and graph objects; anything else counts 0. A wrong guess costs only
    idle workers started early (or started later): the decision itself is :func:`_auto_n_jobs`'s.
    """
    if isinstance(graphs, Mapping):
        items = list(graphs.values())
    elif isinstance(graphs, (str, os.PathLike, np.ndarray)) or hasattr(graphs, "degrees"):
        items = [graphs]
    else:
        try:
            items = list(graphs)
        except TypeError:
            return False
    nodes = 0
    for obj in items:
        n = 0
        if isinstance(obj, str):
            from ..datasets import dataset_info, list_datasets

            name = obj.strip().lower()
            if name in list_datasets("graph"):
                n = int(dataset_info(name).stats.get("nodes", 0))
            elif (m := re.search(r"(?:^|[:,])\s*n\s*=\s*(\d{1,12})", obj)) is not None:
                n = int(m.group(1))
        elif hasattr(obj, "degrees") or isinstance(obj, np.ndarray):
            n = int(np.size(getattr(obj, "degrees", obj)))
        nodes = max(nodes, n)
    return nodes * work_per_node >= _AUTO_PARALLEL_WORK


def _backend_name(backend: str | None, scheduler: str | None, n_jobs: int) -> str:
    if scheduler is not None:
        return "dask"
    return backend or ("sequential" if n_jobs == 1 else "loky")


class _NoProgress:
    """The progress bar of a quiet run, or of one whose stderr is not a terminal (tqdm, ~0.03-0.05 s
    to import, is then not imported)."""

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(total: int, quiet: bool):
    if quiet or not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty()):
        return _NoProgress()
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="trial", desc="trials", delay=1.0, file=sys.stderr, dynamic_ncols=True)


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
            # The plots are rendered by a worker process of the run, if one is alive, while this
            # process writes the other files; records.csv too (0.04 s for 60,000 rows) when a
            # worker is free for it. Absolute paths: a worker's working directory is the one it
            # started in.
            n_workers = self.config.get("worker_processes") or 0
            wanted = n_workers or self.config.get("plot_worker")
            pool = _live_pool() if wanted else None
            plot_job = records_job = None
            if pool is not None and plots:
                plot_job = _submit(pool, _render_plots, self.summary, (tmp / "plots").absolute(), formats,
                                   synthetic)
            if pool is not None and n_workers > (plot_job is not None):
                records_job = _submit(pool, write_records_csv, self.records, (tmp / "records.csv").absolute())
            paths: dict[str, Any] = {
                "records": records_job or write_records_csv(self.records, tmp / "records.csv"),
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
            base = tmp.absolute()
            if records_job is not None:
                paths["records"] = tmp / Path(records_job.result()).relative_to(base)
            if plot_job is not None:
                paths["plots"] = [tmp / Path(p).relative_to(base) for p in plot_job.result()]
            elif plots:
                paths["plots"] = _render_plots(self.summary, tmp / "plots", formats, synthetic)
            else:
                paths["plots"] = []
            return paths

        return write_atomically(out_dir, produce, config=self.config)


def _write_costs_csv(costs: list[dict[str, Any]], path: Path) -> Path:
    """Per-cell communication and time of the per-trial protocols (one row per cell)."""
    import csv

    cols = ["graph", "method", "statistic", "k", "epsilon", "upload_bits_per_node",
            "download_bits_per_node", "seconds_per_trial", "budget"]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(cols)
        for c in costs:
            w.writerow(["" if c[x] is None else (json.dumps(c[x]) if x == "budget" else c[x]) for x in cols])
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
) -> ExperimentResult:
    r"""Run the grid graphs x statistics x epsilons x methods, ``n_trials`` trials per cell.

    Parameters
    ----------
    graphs
        Dataset name, synthetic spec (``"ba:n=1000,m=10"``), edge-list path, graph object,
        degree array, a mapping ``label -> graph``, or a sequence of these; see
        :func:`resolve_graph_inputs`.
    epsilons : sequence of float
        Privacy budgets per node, each in (0, inf).
    ks : sequence of int
        Star sizes k >= 1 for ``kstars`` (and powers for ``degree_moment``); default
        :data:`DEFAULT_KS` = (2, 3), as on the command line.
    methods : sequence of str or KStarMethod, optional
        k-star methods by name (:func:`ldpgraph.baselines.methods.method_names`) or as
        objects, or ``"all"``; default :data:`DEFAULT_METHODS` (as on the command line). The
        other statistics are estimated by the ``unbiased-dlap`` and ``naive-dlap`` among them.
        A cell a method cannot run (LocalLapKStars at large k: its sensitivity overflows) is
        skipped, with a note in ``result.notes`` and ``config["skipped"]``.
    statistics : sequence of str
        From :func:`~ldpgraph.experiments.statistics.statistic_names`; ``"name:p"`` pins a
        parameter. Default ``("kstars",)``.
    n_trials : int
        Trials per cell, >= 1.
    seed : int, SeedSequence or None
        Root seed; None draws fresh entropy, recorded in ``result.config["seed"]``.
    block_size : int
        Trials per random stream and per task (vectorized together). Part of the experiment's
        definition: changing it changes the draws.
    n_jobs : int or None
        Parallel workers (joblib convention; -1 = all cores or all Dask workers). None (the
        default, as on the command line): all cores when the grid simulates at least
        2,000,000 node values in all, else 1. Results do not depend on it.
    backend : str, optional
        joblib backend (``"loky"`` default for n_jobs != 1, ``"threading"``, ``"dask"``).
    scheduler : str, optional
        Address of a Dask scheduler (``"tcp://host:8786"``): run the tasks on that cluster
        through joblib's Dask backend (needs ``ldpgraph[distributed]``).
    batch_size : int or "auto"
        joblib's number of tasks per dispatch (scheduling only; does not change results).
    quiet : bool
        No progress bar (it is shown only on a terminal anyway, after one second).
    graph_seed : int
        Seed of synthetic graphs given by spec, so that runs with different ``seed`` see the
        same graph.
    preload_plots : bool
        Import matplotlib while the grid runs, for a ``write`` with plots: in the worker
        processes as they start (one of them renders the plots); a grid that runs in this
        process only gets one worker for the plots, on a core it leaves idle (with a single
        usable core, or another backend, a thread of this process imports matplotlib instead).

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
    >>> res = run_experiment({"toy": [3, 1, 2, 2]}, epsilons=[1.0], ks=[2],
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
    method_objs = _resolve_methods(methods)
    entropy = root_entropy(seed)
    # With loky, start the worker processes now (when the grid will use them): their start-up,
    # a fresh Python importing numpy and ldpgraph, then runs while this process loads the graphs.
    use_loky = scheduler is None and backend in (None, "loky")
    pool = None
    if use_loky:
        pool = start_workers_early(graphs, n_jobs=n_jobs, work_per_node=n_trials * len(stats) * len(eps_list)
                                   * len(method_objs), preload_plots=preload_plots)
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
    if scheduler is None and backend != "dask":
        n_jobs = _auto_n_jobs(n_jobs, len(units) * n_trials * max(g.n_nodes for g in ginputs))
    elif n_jobs is None:
        n_jobs = -1

    truths = {(g.label, s, k): _truth(g, s, k) for g in ginputs for s, k in stats}

    # Work: the blocks of each unit; a task runs consecutive blocks of one unit (how they are
    # grouped does not enter the draws). With loky, this process computes too, beside n_jobs - 1
    # worker processes; the degrees travel once per worker (a file each reads on first use) and
    # a task names its graph by token; the workers exit with this process.
    starts = range(0, n_trials, block_size)
    cell_blocks = [(b, min(block_size, n_trials - start)) for b, start in enumerate(starts)]
    n_proc = _loky_processes(n_jobs) if use_loky and n_jobs != 1 else 0
    if n_proc > 0:
        pool = _reuse_pool(n_proc, preload_plots) or _start_pool(n_proc, preload_plots)
    plot_worker = False
    if n_proc == 0 and preload_plots:  # the plots render in a worker on an idle core, else here
        plot_worker = use_loky and _start_plot_worker() is not None
        if not plot_worker:
            from .plots import preload_matplotlib

            preload_matplotlib()
    # The analytic RMSEs are computed while the workers run tasks (where after the grid they
    # would idle): by this process once the pool has its first tasks, or after the first
    # result of another backend.
    analytic_of_unit: list[dict[str, float | None]] = []

    def compute_analytic(between: Any = None) -> None:
        for unit in units[len(analytic_of_unit):]:
            analytic_of_unit.append(_analytic(unit, by_label[unit.graph]))
            if between is not None:
                between()

    tasks: list[tuple[int, int, int]] = []
    results: list[NDArray | None] = []

    def args_of(i: int, refs: Mapping[str, Any] | None = None) -> tuple:
        u, lo, hi = tasks[i]
        d = by_label[units[u].graph].degrees if refs is None else refs[units[u].graph]
        return units[u], d, entropy, tuple(cell_blocks[lo:hi]), i

    def on_result(res: tuple[int, NDArray]) -> None:
        results[res[0]] = res[1]
        bar.update(res[1].shape[1])

    def plan(n_workers: int) -> None:
        tasks[:] = _make_tasks(len(units), len(cell_blocks), n_workers)
        results[:] = [None] * len(tasks)

    bar = _progress(len(units) * n_trials, quiet)
    try:
        if n_proc > 0:
            plan(n_proc + 1)
            with _shared_degrees(ginputs) as refs:
                _run_here_and_in_pool(pool, n_proc, len(tasks), lambda i: args_of(i, refs),
                                      lambda i, between: _run_blocks(*args_of(i), between), on_result,
                                      first_here=compute_analytic)
        elif use_loky:  # one worker: this process
            plan(1)
            for i in range(len(tasks)):
                on_result(_run_blocks(*args_of(i)))
        else:
            import joblib

            with _parallel_context(backend, scheduler, [g.degrees for g in ginputs]):
                plan(joblib.effective_n_jobs(n_jobs))
                parallel = joblib.Parallel(n_jobs=n_jobs, batch_size=batch_size,
                                           return_as="generator_unordered")
                for res in parallel(joblib.delayed(_run_blocks)(*args_of(i)) for i in range(len(tasks))):
                    on_result(res)
                    compute_analytic()  # once: the workers have their tasks
    finally:
        bar.close()
    compute_analytic()  # a serial grid (or one with no task)
    t_sim = time.perf_counter() - t0

    # assemble the records cell by cell, trials in order
    per_unit: list[list[tuple[int, NDArray]]] = [[] for _ in units]
    for (u, lo, _hi), est in zip(tasks, results, strict=True):
        per_unit[u].append((lo, est))
    cells = []
    costs: list[dict[str, Any]] = []
    analytic: dict[tuple, float | None] = {}
    for u_index, unit in enumerate(units):
        parts = sorted(per_unit[u_index], key=lambda part: part[0])
        est_all = parts[0][1] if len(parts) == 1 else np.concatenate([est for _b, est in parts], axis=1)
        spawn = tuple(chain.from_iterable(repeat(f"{unit.key}/{b}", n) for b, n in cell_blocks))
        truth = truths[(unit.graph, unit.statistic, unit.k)]
        a = analytic_of_unit[u_index]
        for i, method in enumerate(unit.methods):
            cell = CellRecords(unit.graph, method, unit.statistic, unit.k, unit.epsilon, truth,
                               np.ascontiguousarray(est_all[i]), entropy, spawn)
            if unit.protocol is not None:
                costs.append(_cell_costs(unit, est_all[1]))
            cells.append(cell)
            rmse_a = a.get(method)
            analytic[cell.key] = None if rmse_a is None or not math.isfinite(rmse_a) else float(rmse_a)
    records = Records(cells)
    summary = summarize(records, analytic)

    from .. import __version__

    versions = {"ldpgraph": __version__, "numpy": np.__version__}
    for name in ("joblib", "loky"):  # the libraries that ran the tasks
        if name in sys.modules:
            versions[name] = sys.modules[name].__version__
    versions["python"] = platform.python_version()

    config = {
        "seed": entropy,
        "graphs": [{"label": g.label, "n_nodes": g.n_nodes, "n_edges": g.n_edges, "stream_id": g.stream_id,
                    "origin": g.origin, "synthetic": g.synthetic} for g in ginputs],
        "graph_seed": graph_seed,
        "statistics": [s if k is None else f"{s}:{k}" for s, k in stats],
        "methods": [m.name for m in method_objs],
        "epsilons": eps_list,
        "n_trials": n_trials,
        "block_size": block_size,
        "n_cells": len(cells),
        "n_tasks": len(tasks),
        "n_jobs": n_jobs,
        "worker_processes": n_proc,
        "plot_worker": plot_worker,
        "backend": _backend_name(backend, scheduler, n_jobs),
        "scheduler": scheduler,
        "cell_costs": costs,
        "skipped": skipped,
        "simulation_seconds": round(t_sim, 3),
        "total_seconds": round(time.perf_counter() - t0, 3),
        "versions": versions,
    }
    return ExperimentResult(records, summary, analytic, config)
