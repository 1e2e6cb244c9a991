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

With loky (the default for ``n_jobs != 1``) the graphs' degrees are sent once per worker (a
worker initializer), consecutive blocks of a cell are grouped into one task, and the workers
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
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_epsilon, check_nonnegative_int
from .records import CellRecords, Records, write_records_csv
from .seeding import block_rng, cell_key, root_entropy
from .statistics import NAIVE_METHOD, UNBIASED_METHOD, get_statistic, statistic_names
from .summary import SummaryRow, format_summary, summarize, write_summary_csv

__all__ = [
    "DEFAULT_METHODS",
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


# ------------------------------------------------------------------------------------ inputs


@dataclass(frozen=True, eq=False)
class GraphInput:
    """A graph of the grid, reduced to what the protocols need: its label and degrees."""

    label: str
    degrees: NDArray[np.int64]
    n_edges: int

    @property
    def n_nodes(self) -> int:
        return int(self.degrees.size)


def _as_graph_input(label: str, obj: Any, graph_seed: int) -> GraphInput:
    from ..protocols.randomizer import as_degrees

    if isinstance(obj, (str, os.PathLike)):
        from ..datasets import resolve_graph

        obj = resolve_graph(obj, rng=graph_seed)
    d = as_degrees(obj, name=f"degrees of graph {label!r}")
    n_edges = getattr(obj, "n_edges", None)
    n_edges = int(n_edges) if n_edges is not None else int(d.sum()) // 2
    d.setflags(write=False)
    return GraphInput(label, d, n_edges)


def resolve_graph_inputs(graphs: Any, *, graph_seed: int = 0) -> list[GraphInput]:
    """Turn the ``graphs`` argument of :func:`run_experiment` into labelled degree sequences.

    Accepted: a dataset name, synthetic spec or edge-list path (str, resolved with
    :func:`ldpgraph.datasets.resolve_graph`; the string is the label); a graph object with a
    ``degrees`` attribute or an array of degrees (labelled by its ``name`` attribute, else
    ``graph<i>``); a mapping ``label -> any of those``; or a sequence of the above.

    Examples
    --------
    >>> [g.label for g in resolve_graph_inputs({"toy": [1, 2, 1]})]
    ['toy']
    >>> resolve_graph_inputs({"toy": [1, 2, 1]})[0].n_edges
    2
    """
    graph_seed = check_nonnegative_int(graph_seed, "graph_seed")
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
            else:
                label = getattr(obj, "name", None) or f"graph{i}"
            items.append((str(label), obj))
    if not items:
        raise ValueError("graphs must name at least one graph")
    labels = [label for label, _ in items]
    dup = sorted({x for x in labels if labels.count(x) > 1})
    if dup:
        raise ValueError(f"graph labels must be distinct, got {dup} more than once")
    return [_as_graph_input(label, obj, graph_seed) for label, obj in items]


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
        if name not in statistic_names():
            raise ValueError(f"unknown statistic {name!r}; choose from {', '.join(statistic_names())}")
        takes_param = name == "kstars" or get_statistic(name).parameter is not None
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
    out = []
    for m in methods:
        if isinstance(m, str):
            from ..baselines.methods import get_method

            m = get_method(m.strip())
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


def _run_block(unit: _Unit, degrees: NDArray[np.int64], seed: int, block: int, n: int, task: int):
    """Simulate ``n`` trials of one block; return ``(task, estimates of shape (n_methods, n))``."""
    gen = block_rng(seed, unit.key, block)
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


#: Degrees of the grid's graphs in a loky worker, by token: registered once per worker by
#: :func:`_init_worker`, so that a task names its graph instead of carrying its degrees.
_WORKER_GRAPHS: dict[str, NDArray[np.int64]] = {}

#: How often a worker checks that the process that started it is still alive (seconds).
_PARENT_POLL_SECONDS = 0.25

#: A task runs at most this many blocks of one cell (coarser tasks: less per-task overhead;
#: at least ~8 tasks per worker are kept for load balance).
_MAX_BLOCKS_PER_TASK = 16


def _run_blocks(unit: _Unit, degrees: NDArray[np.int64] | str, seed: int, blocks: tuple[tuple[int, int], ...],
                task: int):
    """Run consecutive blocks ``(block, n)`` of one unit; return ``(task, estimates (n_methods, sum n))``.

    ``degrees`` is the array, or the token of a graph registered in this worker.
    """
    d = _WORKER_GRAPHS[degrees] if isinstance(degrees, str) else degrees
    parts = [_run_block(unit, d, seed, b, n, task)[1] for b, n in blocks]
    return task, parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)


def _graph_token(g: GraphInput) -> str:
    """Content token of a graph's degrees (equal graphs share workers across runs)."""
    digest = hashlib.sha256(g.degrees.astype(np.int64).tobytes()).hexdigest()[:24]
    return f"{g.label}#{digest}"


def _init_worker(parent_pid: int, graphs: tuple[tuple[str, bytes], ...]) -> None:
    """loky worker initializer: register the graphs' degrees; exit when the parent process dies.

    loky workers do not watch their parent: killed (SIGKILL, SIGTERM), it would leave them
    running until their idle timeout (300 s). A daemon thread polls ``os.getppid()`` and ends
    the worker within ``_PARENT_POLL_SECONDS`` of the parent's death (POSIX: the worker is then
    re-parented).
    """
    for token, raw in graphs:
        _WORKER_GRAPHS[token] = np.frombuffer(raw, dtype=np.int64)  # read-only, like GraphInput.degrees
    if os.name == "posix":
        threading.Thread(target=_exit_with_parent, args=(parent_pid,), name="ldpgraph-parent-watch",
                         daemon=True).start()


def _exit_with_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(_PARENT_POLL_SECONDS)
    os._exit(1)


def _blocks_per_task(n_units: int, n_blocks: int, n_workers: int) -> int:
    """Blocks of a cell per task: up to a whole cell, keeping >= ~8 tasks per worker."""
    return max(1, min(n_blocks, _MAX_BLOCKS_PER_TASK, (n_units * n_blocks) // (8 * max(1, n_workers))))


def _build_units(
    graphs: list[GraphInput], stats: list[tuple[str, int | None]], epsilons: list[float], methods: list[Any]
) -> list[_Unit]:
    names = [m.name for m in methods]
    degree_methods = tuple(m for m in (UNBIASED_METHOD, NAIVE_METHOD) if m in names)
    units = []
    for g in graphs:
        for stat, k in stats:
            for eps in epsilons:
                if stat == "kstars":
                    for m in methods:
                        key = cell_key("kstars", g.label, k, eps, m.name)
                        units.append(_Unit(g.label, stat, k, eps, (m.name,), key, m))
                else:
                    if not degree_methods:
                        raise ValueError(
                            f"statistic {stat!r} is estimated by {UNBIASED_METHOD} and {NAIVE_METHOD} only; "
                            f"neither is among the methods {names}"
                        )
                    key = cell_key(stat, g.label, k, eps, "degree-reports")
                    units.append(_Unit(g.label, stat, k, eps, degree_methods, key))
    return units


def _truth(g: GraphInput, stat: str, k: int | None) -> float:
    if stat == "kstars":
        from ..baselines.methods import exact_kstars

        return float(exact_kstars(g.degrees, k))
    return float(get_statistic(stat).truth(g.degrees, k))


def _analytic(unit: _Unit, g: GraphInput) -> dict[str, float | None]:
    if unit.kstar_method is not None:
        fn = getattr(unit.kstar_method, "analytic_rmse", None)
        return {unit.methods[0]: None if fn is None else fn(g.degrees, unit.k, unit.epsilon)}
    stat = get_statistic(unit.statistic)
    sd = stat.analytic_sd(g.degrees, unit.k, unit.epsilon)
    return {
        m: sd if (m == UNBIASED_METHOD or stat.naive_is_unbiased) else None for m in unit.methods
    }


# ---------------------------------------------------------------------------------- backends


@contextmanager
def _parallel_context(
    backend: str | None, scheduler: str | None, scatter: list, loky_kwargs: dict[str, Any] | None = None
) -> Iterator[None]:
    import joblib

    if scheduler is None and backend != "dask":
        if loky_kwargs is not None:  # the loky pool, with the worker initializer
            with joblib.parallel_config(backend="loky", **loky_kwargs):
                yield
        elif backend is None:
            yield
        else:
            with joblib.parallel_config(backend=backend):
                yield
        return
    if backend not in (None, "dask"):
        raise ValueError(f"scheduler is given, so backend must be 'dask' or None, got {backend!r}")
    try:
        from distributed import Client
    except ImportError:
        raise ImportError(
            "the Dask backend needs dask.distributed; install it with: pip install 'ldpgraph[distributed]'"
        ) from None
    if scheduler is None:
        from distributed import get_client

        client = get_client()  # ValueError if no client is running
        with joblib.parallel_config(backend="dask", client=client, scatter=scatter):
            yield
        return
    try:
        client = Client(scheduler, set_as_default=False)  # timeout: dask config comm.timeouts.connect
    except OSError as exc:
        raise ConnectionError(f"cannot connect to the Dask scheduler at {scheduler}: {exc}") from None
    try:
        with joblib.parallel_config(backend="dask", client=client, scatter=scatter):
            yield
    finally:
        client.close()


def _backend_name(backend: str | None, scheduler: str | None, n_jobs: int) -> str:
    if scheduler is not None:
        return "dask"
    return backend or ("sequential" if n_jobs == 1 else "loky")


def _progress(total: int, quiet: bool):
    from tqdm.auto import tqdm

    disable = quiet or not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty())
    return tqdm(total=total, unit="trial", desc="trials", disable=disable, delay=1.0, file=sys.stderr,
                dynamic_ncols=True)


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

    def table(self) -> str:
        """The summary as a plain-text table."""
        return format_summary(self.summary)

    def write(self, out_dir: str | os.PathLike[str], *, plots: bool = True) -> dict[str, Any]:
        """Write ``records.csv``, ``summary.csv``, ``summary.txt``, ``experiment.json`` and plots.

        Returns
        -------
        dict
            ``{"records": path, "summary": path, "table": path, "config": path, "plots": [paths]}``.
        """
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths: dict[str, Any] = {
            "records": write_records_csv(self.records, out / "records.csv"),
            "summary": write_summary_csv(self.summary, out / "summary.csv"),
        }
        table = out / "summary.txt"
        table.write_text(self.table() + "\n", encoding="utf-8")
        paths["table"] = table
        cfg = out / "experiment.json"
        cfg.write_text(json.dumps(self.config, indent=2, default=str) + "\n", encoding="utf-8")
        paths["config"] = cfg
        if plots:
            from .plots import plot_relative_rmse

            paths["plots"] = plot_relative_rmse(self.summary, out / "plots")
        else:
            paths["plots"] = []
        return paths


# ------------------------------------------------------------------------------------ runner


def run_experiment(
    graphs: Any,
    *,
    epsilons: Sequence[float] | float,
    ks: Sequence[int] = (2,),
    methods: Sequence[Any] | None = None,
    statistics: Sequence[str] | str = ("kstars",),
    n_trials: int = 100,
    seed: int | np.random.SeedSequence | None = None,
    block_size: int = 100,
    n_jobs: int = 1,
    backend: str | None = None,
    scheduler: str | None = None,
    batch_size: int | str = "auto",
    quiet: bool = False,
    graph_seed: int = 0,
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
        Star sizes k >= 1 for ``kstars`` (and powers for ``degree_moment``).
    methods : sequence of str or KStarMethod, optional
        k-star methods by name (:func:`ldpgraph.baselines.methods.method_names`) or as
        objects; default :data:`DEFAULT_METHODS`. The other statistics are estimated by the
        ``unbiased-dlap`` and ``naive-dlap`` among them.
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
    n_jobs : int
        Parallel workers (joblib convention; -1 = all cores or all Dask workers).
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
    import joblib

    t0 = time.perf_counter()
    eps_list = _check_epsilons(epsilons)
    n_trials = check_nonnegative_int(n_trials, "n_trials", minimum=1)
    block_size = check_nonnegative_int(block_size, "block_size", minimum=1)
    if not (batch_size == "auto" or (isinstance(batch_size, int) and batch_size >= 1)):
        raise ValueError(f"batch_size must be 'auto' or an int >= 1, got {batch_size!r}")
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0:
        raise ValueError(f"n_jobs must be a non-zero int (-1 = all cores), got {n_jobs!r}")
    stats = parse_statistics(statistics, ks)
    method_objs = _resolve_methods(methods)
    entropy = root_entropy(seed)
    ginputs = resolve_graph_inputs(graphs, graph_seed=graph_seed)
    by_label = {g.label: g for g in ginputs}
    units = _build_units(ginputs, stats, eps_list, method_objs)

    truths = {(g.label, s, k): _truth(g, s, k) for g in ginputs for s, k in stats}

    # Work: the blocks of each unit; a task runs consecutive blocks of one unit (how they are
    # grouped does not enter the draws). With loky, the degrees travel once per worker (the
    # initializer) and a task names its graph by token; the workers exit with this process.
    starts = range(0, n_trials, block_size)
    cell_blocks = [(b, min(block_size, n_trials - start)) for b, start in enumerate(starts)]
    scatter = [g.degrees for g in ginputs]
    use_loky = scheduler is None and (backend == "loky" or (backend is None and n_jobs != 1))
    loky_kwargs = None
    if use_loky:
        tokens = {g.label: _graph_token(g) for g in ginputs}
        payload = tuple((tokens[g.label], g.degrees.astype(np.int64).tobytes()) for g in ginputs)
        loky_kwargs = {"initializer": _init_worker, "initargs": (os.getpid(), payload)}
    bar = _progress(len(units) * n_trials, quiet)
    try:
        with _parallel_context(backend, scheduler, scatter, loky_kwargs):
            n_workers = joblib.effective_n_jobs(n_jobs)
            per_task = _blocks_per_task(len(units), len(cell_blocks), n_workers)
            tasks = [(u, tuple(cell_blocks[i : i + per_task]))
                     for u in range(len(units)) for i in range(0, len(cell_blocks), per_task)]
            by_token = use_loky and n_workers > 1  # else the tasks run here or get no initializer
            jobs = (
                joblib.delayed(_run_blocks)(
                    units[u], tokens[units[u].graph] if by_token else by_label[units[u].graph].degrees,
                    entropy, blocks, i)
                for i, (u, blocks) in enumerate(tasks)
            )
            results: list[NDArray | None] = [None] * len(tasks)
            parallel = joblib.Parallel(n_jobs=n_jobs, batch_size=batch_size, return_as="generator_unordered")
            for i, est in parallel(jobs):
                results[i] = est
                bar.update(est.shape[1])
    finally:
        bar.close()
    t_sim = time.perf_counter() - t0

    # assemble the records cell by cell, trials in order
    per_unit: list[list[tuple[int, NDArray]]] = [[] for _ in units]
    for (u, blocks), est in zip(tasks, results, strict=True):
        per_unit[u].append((blocks[0][0], est))
    cells = []
    analytic: dict[tuple, float | None] = {}
    for u_index, unit in enumerate(units):
        parts = sorted(per_unit[u_index], key=lambda part: part[0])
        est_all = parts[0][1] if len(parts) == 1 else np.concatenate([est for _b, est in parts], axis=1)
        spawn = tuple(f"{unit.key}/{b}" for b, n in cell_blocks for _ in range(n))
        truth = truths[(unit.graph, unit.statistic, unit.k)]
        a = _analytic(unit, by_label[unit.graph])
        for i, method in enumerate(unit.methods):
            cell = CellRecords(unit.graph, method, unit.statistic, unit.k, unit.epsilon, truth,
                               np.ascontiguousarray(est_all[i]), entropy, spawn)
            cells.append(cell)
            rmse_a = a.get(method)
            analytic[cell.key] = None if rmse_a is None or not math.isfinite(rmse_a) else float(rmse_a)
    records = Records(cells)
    summary = summarize(records, analytic)

    import joblib as _jl

    from .. import __version__

    config = {
        "seed": entropy,
        "graphs": [{"label": g.label, "n_nodes": g.n_nodes, "n_edges": g.n_edges} for g in ginputs],
        "graph_seed": graph_seed,
        "statistics": [s if k is None else f"{s}:{k}" for s, k in stats],
        "methods": [m.name for m in method_objs],
        "epsilons": eps_list,
        "n_trials": n_trials,
        "block_size": block_size,
        "n_cells": len(cells),
        "n_tasks": len(tasks),
        "n_jobs": n_jobs,
        "backend": _backend_name(backend, scheduler, n_jobs),
        "scheduler": scheduler,
        "simulation_seconds": round(t_sim, 3),
        "total_seconds": round(time.perf_counter() - t0, 3),
        "versions": {
            "ldpgraph": __version__,
            "numpy": np.__version__,
            "joblib": _jl.__version__,
            "python": platform.python_version(),
        },
    }
    return ExperimentResult(records, summary, analytic, config)
