"""avg_clustering and degree_weighted_triangles through the protocol layer, the runner and the CLI."""

from __future__ import annotations

import json
import math

import networkx as nx
import numpy as np
import pytest
from conftest import data_file

from ldpgraph.cli import main
from ldpgraph.experiments import run_experiment
from ldpgraph.experiments.single import estimate_once
from ldpgraph.graph import from_networkx, read_edgelist
from ldpgraph.protocols.clustering import kernels as cl
from ldpgraph.protocols.randomized_response import expected_noisy_edges, noisy_graph_bits
from ldpgraph.run.method import get_method, method_names

KARATE = from_networkx(nx.karate_club_graph())
NAMES = ["avg-clustering-dlap", "avg-clustering-dlap-private"]
ADAPTIVE = ["adaptive-clustering", "adaptive-clustering-best"]  # avg_clustering only
STATS = ["avg_clustering", "degree_weighted_triangles"]


def _nx_avg(g):
    G = nx.Graph()
    G.add_nodes_from(range(g.n_nodes))
    G.add_edges_from(g.edges().tolist())
    return nx.average_clustering(G)


def test_registered_with_their_budget_and_statistics():
    assert method_names("avg_clustering") == NAMES + ADAPTIVE and NAMES == method_names("degree_weighted_triangles")
    p = get_method("avg-clustering-dlap")
    assert p.needs == "adjacency" and not p.vectorized and p.unbiased
    assert p.budget(2.0) == pytest.approx({"rr": 0.6, "degree": 0.8, "local-count": 0.6})
    q = get_method("avg-clustering-dlap-private")
    assert q.budget(2.0) == pytest.approx({"degree-bound": 0.2, "rr": 0.54, "degree": 0.72, "local-count": 0.54})
    assert q.plan(2.0).public == {"d_max": None, "projection": True, "private_bound": True}  # sensitivity 2(D-1)
    with pytest.raises(TypeError, match="needs the graph's adjacency"):
        p.estimate_trials(KARATE.degrees, "avg_clustering", None, 1.0)
    with pytest.raises(ValueError, match="not statistic 'triangles'"):
        p.estimate_trials(KARATE, "triangles", None, 1.0)
    with pytest.raises(ValueError, match="shares of avg-clustering: rr=F,degree=F,local_count=F"):
        p.with_options(shares={"rr": 0.5, "degree": 0.5})


def test_protocol_draws_are_those_of_the_release_with_the_same_stream():
    p = get_method("avg-clustering-dlap")
    got = p.estimate_trials(KARATE, "avg_clustering", None, 3.0, 2, rng=7)
    gen = np.random.default_rng(7)
    oriented = cl.oriented_graph(KARATE)  # the simulation's path: the hashed pair bits (issue 34)
    want = [
        cl.average_clustering(
            cl.release_clustering_reports(
                KARATE, epsilon_rr=0.9, epsilon_degree=1.2, epsilon_triangles=0.9, rng=gen, oriented=oriented
            ),
            variance=False,
        ).value
        for _ in range(2)
    ]
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_monte_carlo_mean_within_four_analytic_standard_errors(name):
    # the private bound's projection keeps both statistics unbiased; its variance has no
    # closed form, so it is checked against the sample standard error instead
    p = get_method(name)
    T, eps = 400, 20.0
    for stat in STATS:
        x = p.estimate_trials(KARATE, stat, None, eps, T, rng=3)
        var = p.analytic_variance(KARATE, stat, None, eps)
        sd = math.sqrt(var) if var is not None else x.std(ddof=1)
        assert abs(x.mean() - p.truth(KARATE, stat, None)) <= 4 * sd / math.sqrt(T)
        if var is not None:  # sample variance against the analytic one (SE from the 4th moment)
            dev = x - x.mean()
            se_var = math.sqrt(max(np.mean(dev**4) - np.mean(dev**2) ** 2, 0.0) / T)
            assert abs(x.var(ddof=1) - var) <= 4 * se_var and se_var < 0.25 * var
        else:
            assert name.endswith("-private")


def _run(graphs, **kw):
    base = dict(
        epsilons=[2.0, 8.0],
        methods=["avg-clustering-dlap", "two-round-triangles-dlap", "unbiased-dlap"],
        statistics=["avg_clustering", "degree_weighted_triangles", "triangles", "edges"],
        n_trials=4,
        seed=5,
        block_size=2,
        quiet=True,
    )
    base.update(kw)
    return run_experiment(graphs, **base)


def test_runner_cells_truths_analytic_rmse_and_costs(tmp_path):
    res = _run({"karate": KARATE})
    cells = {(c.method, c.statistic, c.epsilon): c for c in res.records}
    assert ("avg-clustering-dlap", "triangles", 2.0) not in cells
    assert ("two-round-triangles-dlap", "avg_clustering", 2.0) not in cells
    c = cells[("avg-clustering-dlap", "avg_clustering", 8.0)]
    assert c.truth == pytest.approx(nx.average_clustering(nx.karate_club_graph()), rel=1e-14)
    assert c.n_trials == 4 and np.isfinite(c.estimates).all()
    d = cells[("avg-clustering-dlap", "degree_weighted_triangles", 2.0)]
    t = np.array(list(nx.triangles(nx.karate_club_graph()).values()))
    assert d.truth == float((KARATE.degrees * t).sum())
    p = get_method("avg-clustering-dlap")
    for stat in STATS:
        key = ("karate", "avg-clustering-dlap", stat, None, 2.0)
        v = cl.average_clustering_variance(
            KARATE, epsilon_rr=0.6, epsilon_degree=0.8, epsilon_triangles=0.6, statistic=stat
        )
        assert res.analytic_rmse[key] == pytest.approx(math.sqrt(v), rel=1e-12)
        assert res.analytic_rmse[key] == pytest.approx(p.analytic_rmse(KARATE, stat, None, 2.0), rel=1e-12)
    costs = [x for x in res.config["cell_costs"] if x["method"] == "avg-clustering-dlap"]
    assert len(costs) == 4
    row = next(x for x in costs if x["statistic"] == "avg_clustering" and x["epsilon"] == 2.0)
    n = KARATE.n_nodes
    assert row["upload_bits_per_node"] == (n - 1) / 2 + 128
    # the noisy graph as the deployed broadcast carries it: packed pairs, shorter than the edge list here
    assert row["download_bits_per_node"] == pytest.approx(
        noisy_graph_bits(n, expected_noisy_edges(n, KARATE.n_edges, 0.6))) == n * (n - 1) / 2
    assert row["seconds_per_trial"] > 0 and row["budget"] == pytest.approx(p.budget(2.0))
    # block 0 of a cell is the cell's stream: the protocol's own draws
    from ldpgraph.experiments.seeding import block_rng, cell_key

    gen = block_rng(res.seed, cell_key("avg_clustering", "karate", None, 8.0, "avg-clustering-dlap"), 0)
    want = [p.estimate_trials(KARATE, "avg_clustering", None, 8.0, 1, rng=gen)[0] for _ in range(2)]
    assert np.array_equal(c.estimates[:2], want)
    text = res.write(tmp_path, plots=False)["costs"].read_text()
    assert "avg-clustering-dlap,avg_clustering" in text


def test_records_do_not_depend_on_jobs():
    a = _run({"karate": KARATE}, methods=["avg-clustering-dlap"], statistics=["avg_clustering"])
    b = _run({"karate": KARATE}, methods=["avg-clustering-dlap"], statistics=["avg_clustering"],
             n_jobs=2, backend="threading")
    assert a.records == b.records


def test_runner_on_facebook_truth_is_networkx():
    g = read_edgelist(data_file("facebook_combined.txt.gz"))
    res = _run({"facebook": g}, epsilons=[4.0], methods=["avg-clustering-dlap"],
               statistics=["avg_clustering"], n_trials=2)
    (c,) = res.records
    assert c.truth == pytest.approx(_nx_avg(g), rel=1e-12)
    assert np.isfinite(c.estimates).all()
    assert res.analytic_rmse[("facebook", "avg-clustering-dlap", "avg_clustering", None, 4.0)] > 0


def test_estimate_once_with_adjacency_statistics():
    run = estimate_once({"karate": KARATE}, epsilon=8.0, statistic="avg_clustering", seed=2)
    assert [e.method for e in run.estimates] == ADAPTIVE[:1]  # the recommended one (unbiased, exact SE)
    run = estimate_once({"karate": KARATE}, epsilon=8.0, statistic="avg_clustering", seed=2,
                        methods=NAMES + ADAPTIVE)
    assert run.truth == pytest.approx(cl.average_clustering_truth(KARATE))
    pub, priv = run.estimates[:2]
    # both from the reports (the deployed curator's conservative variance estimate)
    assert pub.std_error_kind == priv.std_error_kind == "conservative" and priv.std_error > 0
    p = get_method("avg-clustering-dlap")
    assert pub.analytic_sd == pytest.approx(math.sqrt(p.analytic_variance(KARATE, "avg_clustering", None, 8.0)))
    assert priv.analytic_sd is None  # no closed form at the truth: the noisy bound
    tri = estimate_once({"karate": KARATE}, epsilon=8.0, statistic="triangles", seed=2,
                        methods=["rr-triangles"])
    assert tri.truth == 45 and [e.method for e in tri.estimates] == ["rr-triangles"]


def test_cli_experiment_and_estimate(tmp_path, capsys):
    path = tmp_path / "karate.txt"
    path.write_text("".join(f"{u} {v}\n" for u, v in nx.karate_club_graph().edges()))
    out = tmp_path / "res"
    rc = main(["experiment", str(path), "--stat", "avg_clustering", "degree_weighted_triangles",
               "--epsilons", "4", "--trials", "2", "--seed", "1", "--no-plots", "--quiet", "-o", str(out),
               "--methods", "all"])
    assert rc == 0
    records = (out / "records.csv").read_text().splitlines()
    methods = {line.split(",")[1] for line in records[1:]}
    assert methods == set(NAMES + ADAPTIVE)  # 'all' has every clustering protocol
    assert len(records) == 1 + (4 + 2) * 2  # avg_clustering by 4 methods, the other by 2; 2 trials
    assert "avg-clustering-dlap" in (out / "costs.csv").read_text()
    capsys.readouterr()
    assert main(["estimate", str(path), "--stat", "avg_clustering", "--epsilon", "4", "--seed", "1",
                 "--json", "--methods", "all"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["statistic"] == "avg_clustering" and doc["truth"] == pytest.approx(0.5706384782076823)
    assert [e["method"] for e in doc["estimates"]] == NAMES + ADAPTIVE
    assert main(["estimate", str(path), "--stat", "degree_weighted_triangles", "--epsilon", "4",
                 "--methods", "avg-clustering-dlap", "--seed", "1"]) == 0
    text = capsys.readouterr().out
    assert "degree_weighted_triangles" in text and "avg-clustering-dlap " in text
    assert main(["estimate", str(path), "--stat", "clustering", "--epsilon", "4"]) == 2
    assert "avg_clustering, degree_weighted_triangles" in capsys.readouterr().err


def test_truth_of_the_grid_is_networkx_on_email_enron():
    from ldpgraph.protocols.statistics import graph_statistic_truth

    g = read_edgelist(data_file("Email-Enron.txt.gz"))  # networkx: ~6 s here
    assert graph_statistic_truth("avg_clustering", g) == pytest.approx(_nx_avg(g), rel=1e-12)
    with pytest.raises(ValueError, match="unknown adjacency statistic 'wedges'"):
        graph_statistic_truth("wedges", g)
