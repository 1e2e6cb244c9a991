"""``ExperimentResult.write`` hands records.csv (and the plots) to the run's idle workers.

The bytes must be those this process writes itself, and the manifest must list them; which
files went to a worker is seen through the runner's ``_submit``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from ldpgraph.experiments import run_experiment
from ldpgraph.experiments import runner as R
from ldpgraph.experiments.outputs import file_digest
from ldpgraph.experiments.records import write_records_csv

GRAPH = {"toy": np.arange(3000) % 40}


@pytest.mark.parametrize(("n_jobs", "plots", "offloaded"), [
    (2, False, ["write_records_csv"]),  # one worker, free for the records
    (2, True, ["_render_plots"]),  # one worker: it renders the plots, the records are written here
    (1, False, []),  # no worker
])
def test_records_written_by_a_worker_are_the_same_bytes(tmp_path, monkeypatch, n_jobs, plots, offloaded):
    monkeypatch.setattr(R, "_usable_cores", lambda: 2)
    res = run_experiment(GRAPH, epsilons=[0.5, 1.0], ks=[2], methods=["unbiased-dlap", "naive-dlap"],
                         n_trials=300, block_size=50, seed=4, n_jobs=n_jobs, quiet=True)
    assert res.config["worker_processes"] == n_jobs - 1
    submitted = []
    submit = R._submit
    monkeypatch.setattr(R, "_submit", lambda pool, fn, *a: submitted.append(fn.__name__) or submit(pool, fn, *a))
    paths = res.write(tmp_path / "out", plots=plots)
    assert submitted == offloaded
    want = write_records_csv(res.records, tmp_path / "here.csv").read_bytes()
    got = (tmp_path / "out" / "records.csv")
    assert paths["records"] == got and got.read_bytes() == want
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    entry = next(f for f in manifest["files"] if f["path"] == "records.csv")
    assert (entry["bytes"], entry["sha256"]) == file_digest(got)
    assert bool(paths["plots"]) == plots
