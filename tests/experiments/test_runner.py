from __future__ import annotations

import math

import numpy as np
import pytest

from ldpgraph.experiments import (
    read_records_csv,
    run_experiment,
    summarize,
    write_records_csv,
)
from ldpgraph.experiments.seeding import block_rng, cell_key
from ldpgraph.graph import Degrees
from ldpgraph.graph import kstar_counts as exact_kstars
from ldpgraph.run.method import get_method

DEG = np.random.default_rng(5).geometric(0.08, size=300).astype(np.int64)
GRAPHS = {"toy": Degrees(DEG)}
GRID = dict(epsilons=[0.5, 2.0], ks=[2, 3], methods=["unbiased-dlap", "naive-dlap", "local-lap-kstars"],
            n_trials=23, block_size=5, seed=11, quiet=True)


def _csv_bytes(result, path):
    return write_records_csv(result.records, path).read_bytes()


@pytest.fixture(scope="module")
def reference():
    return run_experiment(GRAPHS, n_jobs=1, **GRID)


def test_shape_and_truth(reference):
    rec = reference.records
    assert len(rec) == 2 * 2 * 3  # k x epsilon x method
    assert rec.n_rows == 12 * 23
    for cell in rec:
        assert cell.statistic == "kstars" and cell.n_trials == 23
        assert cell.truth == float(sum(math.comb(int(d), cell.k) for d in DEG))
        assert cell.seed == 11
        assert cell.spawn_keys[0].endswith("/0") and cell.spawn_keys[-1].endswith("/4")  # 23 trials, blocks of 5
    # grid order: graph, statistic (k), epsilon, method
    assert [(c.k, c.epsilon, c.method) for c in rec[:4]] == [
        (2, 0.5, "unbiased-dlap"), (2, 0.5, "naive-dlap"), (2, 0.5, "local-lap-kstars"), (2, 2.0, "unbiased-dlap")]


def test_every_trial_reproducible_from_its_recorded_stream(reference):
    cell = reference.records[4]  # k=2, eps=2, naive-dlap
    key = cell_key("kstars", "toy", cell.k, cell.epsilon, cell.method)
    assert cell.spawn_keys[12] == f"{key}/2"
    block = get_method(cell.method).estimate_trials(DEG, "kstars", cell.k, cell.epsilon, 5, rng=block_rng(11, key, 2))
    np.testing.assert_array_equal(cell.estimates[10:15], block)
    last = get_method(cell.method).estimate_trials(DEG, "kstars", cell.k, cell.epsilon, 3, rng=block_rng(11, key, 4))
    np.testing.assert_array_equal(cell.estimates[20:], last)


@pytest.mark.parametrize("kw", [dict(n_jobs=2), dict(n_jobs=2, backend="threading", batch_size=1),
                                dict(n_jobs=1, batch_size=3)])
def test_identical_csv_for_any_parallelism(reference, tmp_path, kw):
    other = run_experiment(GRAPHS, **kw, **GRID)
    assert _csv_bytes(other, tmp_path / "b.csv") == _csv_bytes(reference, tmp_path / "a.csv")


def test_cells_do_not_depend_on_the_rest_of_the_grid(reference):
    alone = run_experiment(GRAPHS, **{**GRID, "methods": ["naive-dlap"], "epsilons": [2.0], "ks": [3]})
    [cell] = alone.records
    match = [c for c in reference.records if c.key == cell.key]
    assert match == [cell]


def test_seed_and_block_size_change_the_draws(reference):
    other_seed = run_experiment(GRAPHS, **{**GRID, "seed": 12})
    other_block = run_experiment(GRAPHS, **{**GRID, "block_size": 7})
    for res in (other_seed, other_block):
        assert not np.array_equal(res.records[0].estimates, reference.records[0].estimates)
        assert res.records[0].truth == reference.records[0].truth


def test_summary_consistent_with_records(reference, tmp_path):
    back = read_records_csv(write_records_csv(reference.records, tmp_path / "r.csv"))
    again = summarize(back, reference.analytic_rmse)
    assert again == reference.summary
    for row, cell in zip(reference.summary, reference.records, strict=True):
        err = cell.estimates - cell.truth
        assert row.key == cell.key
        assert row.bias == pytest.approx(err.mean(), rel=1e-12, abs=1e-9)
        assert row.relative_rmse == pytest.approx(math.sqrt(np.mean(err**2)) / cell.truth, rel=1e-12)
        assert row.analytic_rmse == pytest.approx(get_method(cell.method).analytic_rmse(DEG, "kstars", cell.k, cell.epsilon))


def test_unbiased_mean_within_analytic_error():
    # seeded sanity check of the whole path: 400 trials, 4 standard errors of the mean
    res = run_experiment(GRAPHS, epsilons=[1.0], ks=[2], methods=["unbiased-dlap"], n_trials=400, seed=3,
                         block_size=100, quiet=True)
    row = res.summary[0]
    assert abs(row.bias) < 4 * row.analytic_rmse / math.sqrt(400)


def test_other_statistics_each_method_its_own_stream():
    from ldpgraph.protocols.randomizer import DegreeRandomizer

    res = run_experiment(GRAPHS, epsilons=[1.0], statistics=["edges", "degree_moment:2", "max_degree"],
                         methods=["unbiased-dlap", "naive-dlap", "local-lap-kstars"], n_trials=6, block_size=4,
                         seed=2, quiet=True)
    cells = {(c.statistic, c.method): c for c in res.records}
    assert set(cells) == {(s, m) for s in ("edges", "degree_moment", "max_degree")
                          for m in ("unbiased-dlap", "naive-dlap")}
    # each method its own cell and stream: independent noise (the plug-in of the edge count is unbiased too)
    assert not np.array_equal(cells["edges", "unbiased-dlap"].estimates, cells["edges", "naive-dlap"].estimates)
    assert cells["edges", "naive-dlap"].truth == DEG.sum() // 2
    assert cells["degree_moment", "naive-dlap"].k == 2
    # trial 5 = draw 1 of block 1 of the max_degree stream
    key = cell_key("max_degree", "toy", None, 1.0, "naive-dlap")
    gen = block_rng(2, key, 1)
    rand = DegreeRandomizer(epsilon=1.0)
    rand.randomize(DEG, rng=gen)
    y = rand.randomize(DEG, rng=gen).degrees.values
    assert cells["max_degree", "naive-dlap"].estimates[5] == y.max()
    assert res.analytic_rmse[("toy", "naive-dlap", "edges", None, 1.0)] == pytest.approx(
        res.analytic_rmse[("toy", "unbiased-dlap", "edges", None, 1.0)])
    assert res.analytic_rmse[("toy", "naive-dlap", "max_degree", None, 1.0)] is None


def test_kstar_truth_matches_exact_kstars_on_synthetic_spec():
    res = run_experiment("ba:n=200,m=3", epsilons=[1.0], ks=[3], methods=["unbiased-dlap"], n_trials=2, seed=0,
                         quiet=True)
    from ldpgraph.datasets import synthetic_graph

    g = synthetic_graph("ba:n=200,m=3", rng=0)  # graph_seed defaults to 0
    assert res.records[0].graph == "ba:n=200,m=3"
    assert res.records[0].truth == exact_kstars(g.degrees, 3)
    [cfg] = res.config["graphs"]
    assert {k: cfg[k] for k in ("label", "n_nodes", "n_edges", "origin", "synthetic")} == {
        "label": "ba:n=200,m=3", "n_nodes": 200, "n_edges": g.n_edges, "origin": "synthetic", "synthetic": True}


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        (dict(epsilons=[1.0, -1.0]), "epsilons entry"),
        (dict(epsilons=[]), "at least one"),
        (dict(methods=["nope"]), "unknown method 'nope'"),
        (dict(statistics=["nope"]), "unknown statistic 'nope'"),
        (dict(statistics=["edges:2"]), "takes no parameter"),
        (dict(statistics=["degree_entropy"], methods=["local-lap-kstars"]), "estimated by unbiased-dlap"),
        (dict(n_trials=0), "n_trials"),
        (dict(block_size=0), "block_size"),
        (dict(n_jobs=0), "n_jobs"),
        (dict(ks=[0]), "k must be"),
        (dict(methods=["naive-dlap", "naive-dlap"]), "distinct"),
    ],
)
def test_errors(kw, match):
    args = dict(epsilons=[1.0], n_trials=2, quiet=True)
    args.update(kw)
    with pytest.raises((ValueError, TypeError), match=match):
        run_experiment(GRAPHS, **args)


def test_graph_errors():
    with pytest.raises(ValueError, match="graph labels must be distinct"):
        run_experiment(["ba:n=50,m=2", "ba:n=50,m=2 "], epsilons=[1.0], n_trials=1)
    with pytest.raises(ValueError, match="graph_seed"):
        run_experiment(GRAPHS, epsilons=[1.0], n_trials=1, graph_seed=-1)
    with pytest.raises(ValueError, match="cannot resolve graph 'facebok'.*Did you mean 'facebook'"):
        run_experiment("facebok", epsilons=[1.0], n_trials=1)
    with pytest.raises(ValueError, match="at least one graph"):
        run_experiment({}, epsilons=[1.0], n_trials=1)


def test_write_files(reference, tmp_path):
    paths = reference.write(tmp_path / "out")
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == ["experiment.json", "manifest.json", "plots", "records.csv", "summary.csv", "summary.txt"]
    assert sorted(p.name for p in paths["plots"]) == [  # PNG only unless asked (each format costs a rendering)
        "relative_rmse_toy_kstars_k2.png", "relative_rmse_toy_kstars_k3.png"]
    assert read_records_csv(paths["records"]) == reference.records
    assert paths["table"].read_text().startswith("graph")
    import json

    cfg = json.loads(paths["config"].read_text())
    assert cfg["seed"] == 11 and cfg["block_size"] == 5 and cfg["n_trials"] == 23


def test_no_progress_output_when_not_a_terminal(capfd):
    run_experiment(GRAPHS, epsilons=[1.0], methods=["naive-dlap"], n_trials=3, seed=0, quiet=False)
    cap = capfd.readouterr()
    assert cap.out == "" and cap.err == ""
