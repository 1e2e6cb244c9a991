"""The runner's parallel machinery: task plans, degrees shared through files, plots in a worker."""

from __future__ import annotations

import os

import numpy as np
import pytest

from ldpgraph.experiments import run_experiment
from ldpgraph.experiments import runner as R


@pytest.mark.parametrize("n_units,n_blocks,n_workers", [(1, 1, 2), (3, 10, 2), (60, 10, 2), (5, 40, 3), (7, 3, 1),
                                                        (2, 17, 8), (1, 100, 2)])
def test_task_plan_covers_every_block_once_in_order(n_units, n_blocks, n_workers):
    tasks = R._make_tasks(n_units, n_blocks, n_workers)
    covered = [(u, b) for u, lo, hi in tasks for b in range(lo, hi)]
    assert covered == [(u, b) for u in range(n_units) for b in range(n_blocks)]
    assert all(1 <= hi - lo <= R._MAX_BLOCKS_PER_TASK or n_workers == 1 for _u, lo, hi in tasks)
    if n_workers > 1 and n_units * n_blocks >= 2 * n_workers:
        # the tail is one block per task, so that the workers finish together
        assert all(hi - lo == 1 for _u, lo, hi in tasks[-2 * n_workers:])


def test_parallel_guess_before_loading():
    fb = 4039  # the recorded node count of the facebook dataset
    assert R._likely_parallel("facebook", R._AUTO_PARALLEL_WORK // fb + 1)
    assert not R._likely_parallel("facebook", R._AUTO_PARALLEL_WORK // fb - 1)
    assert R._likely_parallel(["ba:n=1000000,m=3"], 2)
    assert not R._likely_parallel({"toy": np.arange(10)}, 1000)
    assert R._likely_parallel({"big": np.zeros(10**6, dtype=np.int64)}, 2)
    assert not R._likely_parallel(object(), 10**9)


def test_worker_degrees_read_once_and_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(R, "_WORKER_GRAPHS", {})
    paths = []
    for i in range(R._WORKER_GRAPHS_KEPT + 2):
        p = tmp_path / f"{i}.i8"
        np.arange(i, i + 5, dtype="<i8").tofile(p)
        paths.append(str(p))
    d0 = R._worker_degrees("t0", paths[0])
    assert d0.tolist() == [0, 1, 2, 3, 4] and not d0.flags.writeable
    os.remove(paths[0])
    assert R._worker_degrees("t0", paths[0]) is d0  # kept: the file is not read again
    for i in range(1, len(paths)):
        R._worker_degrees(f"t{i}", paths[i])
    assert len(R._WORKER_GRAPHS) == R._WORKER_GRAPHS_KEPT and "t0" not in R._WORKER_GRAPHS


def test_shared_degree_files_are_removed(tmp_path):
    g = R.resolve_graph_inputs({"a": [1, 2, 1], "b": [2, 2, 2]})
    with R._shared_degrees(g) as refs:
        files = [path for _token, path in refs.values()]
        assert [np.fromfile(f, dtype="<i8").tolist() for f in files] == [[1, 2, 1], [2, 2, 2]]
    assert not any(os.path.exists(f) for f in files)
    assert not os.path.exists(os.path.dirname(files[0]))


def test_three_workers_same_records_and_plots_rendered_in_a_worker_are_the_same_files(tmp_path, monkeypatch):
    from ldpgraph.experiments import plots

    calls = []
    local = plots.plot_relative_rmse
    monkeypatch.setattr(plots, "plot_relative_rmse", lambda *a, **kw: calls.append(1) or local(*a, **kw))
    grid = dict(epsilons=[0.5, 2.0], ks=[2, 3], methods=["unbiased-dlap", "naive-dlap"], n_trials=250,
                block_size=50, seed=3, quiet=True)
    graph = {"g": np.arange(500) % 40}
    one = run_experiment(graph, n_jobs=1, **grid)
    three = run_experiment(graph, n_jobs=3, preload_plots=True, **grid)
    assert three.config["worker_processes"] == 2
    assert three.records == one.records
    assert R._live_pool() is not None
    in_worker = three.write(tmp_path / "worker")
    assert calls == []  # not rendered in this process
    R._live_pool().shutdown(wait=True)
    assert R._live_pool() is None
    here = three.write(tmp_path / "here")  # rendered in this process
    assert calls == [1]
    assert [p.name for p in in_worker["plots"]] == [p.name for p in here["plots"]] != []
    for a, b in zip(in_worker["plots"], here["plots"], strict=True):
        assert a.read_bytes() == b.read_bytes()


def test_plots_rendered_in_a_worker_land_in_the_relative_out_dir(tmp_path, monkeypatch):
    """A worker keeps the working directory it started in: a relative --out must still get its plots."""
    from ldpgraph.experiments import run_experiment

    monkeypatch.chdir(tmp_path)
    run_experiment("ba:n=300,m=3", epsilons=[1], ks=[2], n_trials=20, n_jobs=2, seed=0)  # pool starts here
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    result = run_experiment("ba:n=300,m=3", epsilons=[1, 2], ks=[2], n_trials=20, n_jobs=2, seed=1)
    paths = result.write("results")
    assert [p.name for p in paths["plots"]] == ["relative_rmse_ba_n_300_m_3_kstars_k2.png"]
    assert all(not p.is_absolute() and p.is_file() for p in paths["plots"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sub"]  # nothing written beside it
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == ["results"]


def test_workers_started_early_are_the_ones_the_run_uses():
    """start_workers_early (the CLI calls it before loading the graphs) starts the pool that
    run_experiment then computes in: no second start, same records as one process."""
    if R._live_pool() is not None:  # another test's pool
        R._live_pool().shutdown(wait=True)
    grid = dict(epsilons=[1.0], ks=[2], methods=["unbiased-dlap"], n_trials=40, block_size=10, seed=2, quiet=True)
    assert R.start_workers_early("facebook", n_jobs=1, work_per_node=10**6) is None  # one process: no pool
    assert R.start_workers_early("facebook", n_jobs=None, work_per_node=1) is None  # too little work
    pool = R.start_workers_early(["ba:n=400,m=3"], n_jobs=2, work_per_node=40)
    assert pool is not None and R._live_pool() is pool and pool._max_workers == 1
    assert R.start_workers_early(["ba:n=400,m=3"], n_jobs=2, work_per_node=40) is pool  # reused, not restarted
    two = run_experiment("ba:n=400,m=3", n_jobs=2, **grid)
    assert R._live_pool() is pool and two.config["worker_processes"] == 1
    assert two.records == run_experiment("ba:n=400,m=3", n_jobs=1, **grid).records
    # a pool without matplotlib is not reused for a run that renders plots in it
    assert R._reuse_pool(1, plots=True) is None
    pool.shutdown(wait=True)


def test_stop_workers_ends_the_pool_without_waiting():
    pool = R.start_workers_early(["ba:n=400,m=3"], n_jobs=2, work_per_node=40)
    pid = pool.submit(os.getpid).result()
    R.stop_workers()
    assert R._live_pool() is None
    import time

    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:  # killed: gone within moments
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.02)
    else:
        pytest.fail(f"worker {pid} still alive 5 s after stop_workers")
    R.stop_workers()  # no pool: nothing to do
    # a later run starts a fresh pool
    res = run_experiment("ba:n=400,m=3", epsilons=[1.0], ks=[2], methods=["unbiased-dlap"], n_trials=20,
                         block_size=10, n_jobs=2, seed=0, quiet=True)
    assert res.config["worker_processes"] == 1
    R.stop_workers()


def test_a_serial_run_renders_its_plots_in_a_worker_on_an_idle_core(tmp_path, monkeypatch):
    from ldpgraph.experiments import plots

    R.stop_workers()
    calls = []
    local = plots.plot_relative_rmse
    monkeypatch.setattr(plots, "plot_relative_rmse", lambda *a, **kw: calls.append(1) or local(*a, **kw))
    grid = dict(epsilons=[0.5, 2.0], ks=[2], methods=["unbiased-dlap", "naive-dlap"], n_trials=30, seed=4,
                quiet=True, n_jobs=1, preload_plots=True)
    monkeypatch.setattr(R, "_usable_cores", lambda: 2)
    res = run_experiment({"g": np.arange(300) % 17}, **grid)
    assert res.config["worker_processes"] == 0 and res.config["plot_worker"] is True
    in_worker = res.write(tmp_path / "worker")
    assert calls == []  # rendered by the plot worker
    R.stop_workers()
    monkeypatch.setattr(R, "_usable_cores", lambda: 1)  # one core: no second process
    one = run_experiment({"g": np.arange(300) % 17}, **grid)
    assert one.config["plot_worker"] is False and R._live_pool() is None
    here = one.write(tmp_path / "here")
    assert calls == [1]
    assert one.records == res.records
    assert [p.name for p in in_worker["plots"]] == [p.name for p in here["plots"]] != []
    for a, b in zip(in_worker["plots"], here["plots"], strict=True):
        assert a.read_bytes() == b.read_bytes()
