"""The protocol layer and the registry: names, explicit budgets, adapters unchanged in law."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from ldpgraph.graph import from_networkx, transitivity, triangle_count
from ldpgraph.graph import kstar_counts as exact_kstars
from ldpgraph.protocols.statistics import STATISTICS
from ldpgraph.run.method import Method, get_method, method_names, methods_for, statistic_names

KSTAR_NAMES = ["unbiased-dlap", "naive-dlap", "unbiased-laplace", "naive-laplace", "local-lap-kstars",
               "local-lap-kstars-private", "local-dlap-kstars", "local-dlap-kstars-private"]

G = from_networkx(nx.gnp_random_graph(40, 0.3, seed=1))
TRIANGLE_NAMES = [
    "rr-triangles",
    "two-round-triangles-laplace",
    "two-round-triangles-laplace-private",
    "two-round-triangles-dlap",
    "two-round-triangles-dlap-private",
    "arr-triangles",
    "edge-orient-triangles",
    "edge-orient-triangles-global",
    "edge-orient-reference",
]


def test_every_method_is_registered_under_its_name():
    names = method_names()
    assert set(KSTAR_NAMES) <= set(names)
    assert set(TRIANGLE_NAMES) <= set(names)
    for name in names:
        p = get_method(name)
        assert isinstance(p, Method) and p.name == name
    assert set(method_names("triangles")) == {*TRIANGLE_NAMES, "wshuffle-triangles", "wshuffle-triangles-rr",
                                              "wshuffle-triangles-ignore", "wshuffle-triangles-ignore-rr",
                                              "wlocal-triangles"}  # (the shuffle model: no transitivity)
    assert set(method_names("transitivity")) == set(TRIANGLE_NAMES)
    assert method_names("kstars") == KSTAR_NAMES
    assert set(method_names("edges")) == {"unbiased-dlap", "naive-dlap"}
    assert [p.name for p in methods_for("degree_entropy")] == ["unbiased-dlap", "naive-dlap"]
    with pytest.raises(ValueError, match="unknown method 'nope'"):
        get_method("nope")
    with pytest.raises(ValueError, match="unknown statistic"):
        method_names("wedges")


@pytest.mark.parametrize("name", method_names())
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_budget_split_is_explicit_and_sums_to_epsilon(name, eps):
    p = get_method(name)
    for stat in p.statistics:
        budget = p.budget(eps, stat)
        assert budget and all(e > 0 for e in budget.values())
        assert sum(budget.values()) == pytest.approx(eps, rel=1e-12)


@pytest.mark.parametrize("name", KSTAR_NAMES)
def test_kstar_methods_are_their_protocols_hooks(name):
    """A k-star method's trials are its protocol's ``simulate`` under the method's plan, its RMSE the
    ``moments``' closed form, its truth the k-star count."""
    d = G.degrees
    p = get_method(name)
    for k in (2, 3):
        plan = p.plan(1.0, d, "kstars")
        a = p.estimate_trials(d, "kstars", k, 1.0, 7, rng=5)
        assert np.array_equal(a, p.protocol.simulate(d, plan, "kstars", 7, np.random.default_rng(5), param=k))
        mean, var = p.protocol.moments(d, plan, "kstars", k)
        rmse = p.analytic_rmse(d, "kstars", k, 1.0)
        assert (rmse is None) == (mean is None)
        assert p.truth(G, "kstars", k) == float(exact_kstars(d, k))


def test_degree_statistics_through_the_layer():
    p = get_method("unbiased-dlap")
    assert set(STATISTICS) <= set(p.statistics)
    x = p.estimate_trials(G, "edges", None, 1.0, 400, rng=3)
    sd = p.analytic_rmse(G, "edges", None, 1.0)
    assert abs(x.mean() - G.n_edges) < 4 * sd / np.sqrt(400)
    assert p.truth(G.degrees, "edges", None) == G.n_edges


def test_adjacency_protocols_need_the_graph():
    p = get_method("rr-triangles")
    assert p.needs == "adjacency" and not p.vectorized
    with pytest.raises(TypeError, match="needs the graph's adjacency.*degrees only"):
        p.estimate_trials(G.degrees, "triangles", None, 1.0, 1, rng=0)
    with pytest.raises(ValueError, match="not statistic 'kstars'"):
        p.estimate_trials(G, "kstars", 2, 1.0)
    assert p.truth(G, "triangles", None) == triangle_count(G)
    assert p.truth(G, "transitivity", None) == pytest.approx(transitivity(G))


@pytest.mark.parametrize("name", TRIANGLE_NAMES)
def test_triangle_methods_monte_carlo(name):
    p = get_method(name)
    for stat in ("triangles", "transitivity"):
        x = p.estimate_trials(G, stat, None, 4.0, 300, rng=11)
        mean = p.analytic_mean(G, stat, None, 4.0)
        var = p.analytic_variance(G, stat, None, 4.0)
        if mean is None:  # arr-triangles with clipping: biased, tested in test_arr_triangles
            assert not p.unbiased and var is None and np.isfinite(x).all()
            continue
        slack = 0.0 if stat == "triangles" else 0.01 * abs(mean)  # delta method: O(1/n) bias
        assert abs(x.mean() - mean) <= 4 * np.sqrt(var / x.size) + slack
        up, down = p.communication(G, 4.0, stat)
        assert up >= (G.n_nodes - 1) / 2 and down >= 0


def test_registered_statistics():
    assert {"kstars", "edges", "triangles", "transitivity"} <= set(statistic_names())
