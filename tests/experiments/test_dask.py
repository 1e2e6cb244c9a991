"""The runner on a Dask cluster (joblib's dask backend) gives the same CSV as n_jobs=1."""

from __future__ import annotations

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

from ldpgraph.experiments import run_experiment, write_records_csv  # noqa: E402
from ldpgraph.graph import Degrees  # noqa: E402

DEG = np.random.default_rng(9).geometric(0.1, size=200).astype(np.int64)
GRID = dict(epsilons=[0.5, 2.0], ks=[2, 3], methods=["unbiased-dlap", "naive-laplace", "local-lap-kstars-private"],
            n_trials=12, block_size=5, seed=4, quiet=True)


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, protocol="tcp://", host="127.0.0.1",
        dashboard_address=None,
        silence_logs=50,
    ) as c:
        yield c


def test_dask_scheduler_gives_identical_csv(cluster, tmp_path):
    ref = run_experiment({"toy": Degrees(DEG)}, n_jobs=1, **GRID)
    res = run_experiment({"toy": Degrees(DEG)}, n_jobs=-1, scheduler=cluster.scheduler_address, **GRID)
    assert res.config["backend"] == "dask"
    # the blocks really ran on the cluster, the degrees were scattered once
    prefixes = list(cluster.scheduler.task_prefixes)
    assert any("_run_block" in p for p in prefixes) and "ndarray" in prefixes
    a = write_records_csv(ref.records, tmp_path / "a.csv").read_bytes()
    b = write_records_csv(res.records, tmp_path / "b.csv").read_bytes()
    assert a == b


def test_dask_backend_with_the_default_client(cluster):
    ref = run_experiment({"toy": Degrees(DEG)}, n_jobs=1, **GRID)
    with distributed.Client(cluster) as _client:
        res = run_experiment({"toy": Degrees(DEG)}, n_jobs=2, backend="dask", **GRID)
    assert res.records == ref.records


def test_unreachable_scheduler_is_a_clear_error():
    import dask

    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}), pytest.raises((ConnectionError, OSError), match="127.0.0.1:9"):
        run_experiment({"toy": Degrees(DEG)}, scheduler="tcp://127.0.0.1:9", **{**GRID, "n_trials": 1})
