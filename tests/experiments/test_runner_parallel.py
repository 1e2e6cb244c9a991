"""The runner through joblib: the same records for any n_jobs, backend and batching; plots."""

from __future__ import annotations

import numpy as np
import pytest

from ldpgraph.experiments import run_experiment
from ldpgraph.graph import Degrees

GRID = dict(epsilons=[0.5, 2.0], ks=[2, 3], methods=["unbiased-dlap", "naive-dlap"], n_trials=250,
            block_size=50, seed=3, quiet=True)
GRAPH = {"g": Degrees(np.arange(500) % 40)}


@pytest.fixture(scope="module")
def one():
    return run_experiment(GRAPH, n_jobs=1, **GRID)


@pytest.mark.parametrize("kw", [dict(n_jobs=2), dict(n_jobs=3, batch_size=1), dict(n_jobs=-1, batch_size=7),
                                dict(n_jobs=2, backend="threading")])
def test_same_records_for_any_workers_and_batching(one, kw):
    res = run_experiment(GRAPH, **kw, **GRID)
    assert res.records == one.records
    assert res.config["n_tasks"] == one.config["n_tasks"] == 2 * 2 * 2 * 5  # one task per block


def test_large_degrees_memory_mapped_give_the_same_records():
    """Degrees above joblib's max_nbytes (1 MB) reach the workers memory-mapped, read-only."""
    big = {"big": Degrees(np.random.default_rng(0).geometric(0.05, size=200_000))}
    grid = dict(epsilons=[1.0], ks=[2], methods=["unbiased-dlap"], n_trials=6, block_size=2, seed=5, quiet=True)
    a = run_experiment(big, n_jobs=1, **grid)
    b = run_experiment(big, n_jobs=2, batch_size=1, **grid)
    assert b.records == a.records


def test_plots_of_a_parallel_run_land_in_the_relative_out_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run_experiment("ba:n=300,m=3", epsilons=[1], ks=[2], n_trials=20, n_jobs=2, seed=0)  # workers start here
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    result = run_experiment("ba:n=300,m=3", epsilons=[1, 2], ks=[2], n_trials=20, n_jobs=2, seed=1,
                            preload_plots=True)
    paths = result.write("results")
    assert [p.name for p in paths["plots"]] == ["relative_rmse_ba_n_300_m_3_kstars_k2.png"]
    assert all(not p.is_absolute() and p.is_file() for p in paths["plots"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sub"]  # nothing written beside it
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == ["results"]


def test_parallel_and_serial_runs_write_the_same_files(one, tmp_path):
    three = run_experiment(GRAPH, n_jobs=3, **GRID)
    a = one.write(tmp_path / "one")
    b = three.write(tmp_path / "three")
    for key in ("records", "summary", "table"):
        assert a[key].read_bytes() == b[key].read_bytes()
    assert [p.name for p in a["plots"]] == [p.name for p in b["plots"]] != []
    for p, q in zip(a["plots"], b["plots"], strict=True):
        assert p.read_bytes() == q.read_bytes()

