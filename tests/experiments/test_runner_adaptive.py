"""Parallel trials that never lose (issue 34): the decision from measured costs, and the same
records whether the tasks ran in this process, in workers, or both."""

from __future__ import annotations

import numpy as np
import pytest

from ldpgraph.experiments import run_experiment, runner
from ldpgraph.experiments.runner import parallel_pays, run_adaptive
from ldpgraph.graph import Degrees

GRID = dict(epsilons=[0.5, 2.0], ks=[2, 3], methods=["unbiased-dlap", "naive-dlap"], n_trials=250,
            block_size=50, seed=3, quiet=True)
GRAPH = {"g": Degrees(np.arange(500) % 40)}


@pytest.mark.parametrize(("done_s", "done", "left", "procs", "startup", "expected"), [
    (0.01, 1, 100, 2, 1.5, False),   # ~1 s left, 1.5 s start-up: stay
    (0.03, 1, 100, 2, 1.5, False),   # 3 s left: saving 0.75 s < 1.5 + 0.3
    (0.05, 1, 100, 2, 1.5, False),   # 5 s left: saving 1.75 s < 1.5 + 0.5
    (0.06, 1, 100, 2, 1.5, True),    # 6 s left: saving 2.25 s >= 1.5 + 0.6
    (0.5, 1, 40, 2, 1.5, True),      # 20 s left
    (20.0, 1, 1, 2, 0.05, False),    # one task left: a worker cannot take it sooner
    (20.0, 1, 2, 2, 0.05, True),     # two long tasks left, workers already running
    (0.2, 1, 1, 2, 1.5, False),      # one short task left
    (10.0, 1, 100, 1, 0.0, False),   # one process: nothing to decide
    (1.0, 0, 100, 2, 0.0, False),    # nothing measured yet
    (0.0, 5, 0, 2, 0.0, False),      # nothing left
])
def test_parallel_pays_given_measured_costs(done_s, done, left, procs, startup, expected):
    assert parallel_pays(done_s, done, left, procs, startup) is expected


def test_the_rule_is_its_formula():
    """Saving (R - S)(1 - 1/p) >= S + R/10, R estimated from the mean of the tasks done."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        done_s, done, left = rng.uniform(0, 5), int(rng.integers(1, 20)), int(rng.integers(1, 200))
        procs, startup = int(rng.integers(2, 9)), rng.uniform(0, 4)
        r = done_s / done * left
        p = min(procs, left)
        assert parallel_pays(done_s, done, left, procs, startup) is ((r - startup) * (1 - 1 / p)
                                                                      >= startup + r / 10)


def test_start_up_estimate_prior_then_measured(monkeypatch):
    monkeypatch.setattr(runner, "_live_workers", lambda: 0)
    monkeypatch.setattr(runner, "_startup_measured", None)
    assert runner.startup_estimate(1) == runner.STARTUP_PRIOR_SECONDS
    monkeypatch.setattr(runner, "_startup_measured", 0.7)
    assert runner.startup_estimate(1) == 0.7
    monkeypatch.setattr(runner, "_live_workers", lambda: 2)  # the reusable pool is running
    assert runner.startup_estimate(2) == runner.STARTUP_WARM_SECONDS
    assert runner.startup_estimate(3) == 0.7  # a third worker would have to start


def _square(x):
    return x * x


def test_run_adaptive_decides_after_each_measured_task():
    """In this process until ``decide`` says yes; every result given once, in any order."""
    seen = {}
    calls = []

    def decide(done_s, done, left, procs, startup):
        calls.append((done, left, procs))
        return False

    rep = run_adaptive(_square, [(i,) for i in range(6)], 2, lambda i, out: seen.setdefault(i, out),
                       decide=decide)
    assert seen == {i: i * i for i in range(6)}
    assert rep["processes"] == 1 and rep["in_process_tasks"] == 6
    # after every task from the third on but the last, the longest task left out of the measure
    assert calls == [(k - 1, 6 - k, 2) for k in range(3, 6)]


def test_one_slow_task_does_not_decide():
    """A one-off pause in the first task (the longest is left out) does not start workers."""
    import time

    def task(i):
        if i == 0:
            time.sleep(0.3)  # 0.3 s x 99 would be 30 s of estimated work
        return i

    decided = []
    rep = run_adaptive(task, [(i,) for i in range(100)], 2, lambda i, out: None,
                       decide=lambda *a: decided.append(a) or parallel_pays(*a))
    assert rep["processes"] == 1
    assert decided and all(a[0] < 0.3 for a in decided)


def test_one_task_as_long_as_the_start_up_decides_at_once(monkeypatch):
    calls = []
    monkeypatch.setattr(runner, "startup_estimate", lambda w: 1.5)
    run_adaptive(_square, [(i,) for i in range(4)], 2, lambda i, out: None,
                 decide=lambda *a: calls.append(a) or False)
    assert [c[1] for c in calls] == [2]  # from the third task only
    monkeypatch.setattr(runner, "startup_estimate", lambda w: 0.0)  # any task lasts as long
    calls.clear()
    run_adaptive(_square, [(i,) for i in range(4)], 2, lambda i, out: None,
                 decide=lambda *a: calls.append(a) or False)
    assert [c[1] for c in calls] == [1, 2, 2]


def test_run_adaptive_with_workers_gives_every_result_once():
    seen: dict[int, int] = {}

    def once(i, out):
        assert i not in seen
        seen[i] = out

    rep = run_adaptive(_square, [(i,) for i in range(40)], 2, once, decide=lambda *a: True)
    assert seen == {i: i * i for i in range(40)}
    assert rep["processes"] == 2 and rep["decided_after"] == 3
    assert 1 <= rep["in_process_tasks"] <= 40


def _fail_at_seven(x):
    if x == 7:
        raise ValueError("seven")
    return x


def test_run_adaptive_raises_a_task_error_wherever_it_ran():
    with pytest.raises(ValueError, match="seven"):
        run_adaptive(_fail_at_seven, [(i,) for i in range(30)], 2, lambda i, out: None, decide=lambda *a: True)


@pytest.fixture(scope="module")
def one():
    return run_experiment(GRAPH, n_jobs=1, **GRID)


def test_small_grid_at_two_jobs_stays_in_process(one, monkeypatch):
    monkeypatch.setattr(runner, "_live_workers", lambda: 0)
    monkeypatch.setattr(runner, "_startup_measured", None)
    res = run_experiment(GRAPH, n_jobs=2, **GRID)  # ~0.05 s of work against a 1.5 s start-up
    assert res.config["parallel"]["processes"] == 1
    assert res.config["backend"] == "sequential"
    assert res.records == one.records


@pytest.mark.parametrize("n_jobs", [2, 3, -1])
def test_same_records_when_workers_take_part(one, monkeypatch, n_jobs):
    """Forced parallel after the first block: the same records as one process."""
    monkeypatch.setattr(runner, "parallel_pays", lambda *a: True)
    res = run_experiment(GRAPH, n_jobs=n_jobs, **GRID)
    p = res.config["parallel"]
    assert p["decided_after"] == 3 and p["processes"] >= 2
    assert res.config["backend"] == "loky"
    assert res.records == one.records
    assert [r.rmse for r in res.summary] == [r.rmse for r in one.summary]


def test_same_records_for_adjacency_methods_in_workers(monkeypatch):
    grid = dict(epsilons=[1.0, 2.0], statistics=["triangles"], methods=["arr-triangles"], n_trials=4,
                block_size=1, seed=5, quiet=True)
    a = run_experiment("ba:n=300,m=3", n_jobs=1, **grid)
    monkeypatch.setattr(runner, "parallel_pays", lambda *a: True)
    b = run_experiment("ba:n=300,m=3", n_jobs=2, **grid)
    assert b.config["parallel"]["processes"] == 2
    assert b.records == a.records


def test_large_degrees_reach_workers_memory_mapped_and_the_files_go(monkeypatch):
    """Degrees above joblib's 1 MB reach the workers memory-mapped; the run removes its files."""
    import glob
    import os
    import sys

    big = {"big": Degrees(np.random.default_rng(0).geometric(0.05, size=200_000))}
    grid = dict(epsilons=[1.0], ks=[2], methods=["unbiased-dlap"], n_trials=12, block_size=2, seed=5, quiet=True)
    a = run_experiment(big, n_jobs=1, **grid)
    monkeypatch.setattr(runner, "parallel_pays", lambda *a: True)
    b = run_experiment(big, n_jobs=2, **grid)
    assert b.config["parallel"]["processes"] == 2
    assert b.records == a.records
    if sys.platform.startswith("linux"):
        assert glob.glob(f"/dev/shm/joblib_memmapping_folder_{os.getpid()}_*/*") == []
