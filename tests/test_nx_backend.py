"""ldpgraph as a networkx backend, through networkx's own dispatch (issue 38, item 2).

The entry points exist only once the package is installed (``pip install ".[test]"``, as CI
does); from a bare checkout on PYTHONPATH they are absent and these tests skip, saying so.
Each dispatched call is checked against the protocol run directly (the same seed gives the same
bits: the backend adds nothing to the estimate), and on Facebook the estimate is within 4 of its
own standard errors of networkx's exact value (the coverage of these standard errors is the
protocols' own tests'); the standard errors are checked against loose bounds (measured: 0.035 and
0.024 at this budget), a guard against an estimate that is right only by having a huge error.
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest

from ldpgraph.graph import from_networkx
from ldpgraph.nx_backend import BackendInterface, EstimateDict, EstimateFloat
from ldpgraph.run import run_in_memory

installed = "ldpgraph" in nx.utils.backends.backend_info
pytestmark = pytest.mark.skipif(
    not installed, reason="the networkx.backends entry point of ldpgraph is not installed (pip install -e .)"
)



def karate():
    """A fresh graph per call: networkx caches a graph's conversion and warns when it reuses it."""
    return nx.karate_club_graph()


def test_entry_points_name_the_backend_and_its_functions():
    info = nx.utils.backends.backend_info["ldpgraph"]
    assert info["backend_name"] == "ldpgraph"
    assert {"average_clustering", "transitivity", "core_number", "triangles"} <= set(info["functions"])
    assert "ldpgraph" in nx.average_clustering.backends and "ldpgraph" in nx.core_number.backends
    assert "epsilon : float" in info["functions"]["transitivity"]["additional_parameters"]


def test_importing_networkx_does_not_import_ldpgraph():
    import subprocess
    import sys

    code = "import sys, networkx; print('ldpgraph' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(("func", "protocol", "statistic", "options"), [
    (nx.average_clustering, "adaptive-clustering", "avg_clustering", {}),
    (nx.transitivity, "two-round-triangles-dlap", "transitivity", {"private_bound": True}),
])
def test_a_dispatched_call_is_the_protocol_run(func, protocol, statistic, options):
    got = func(karate(), backend="ldpgraph", epsilon=2, seed=7)
    want = run_in_memory(protocol, from_networkx(karate()), 2.0, sampler=7, statistic=statistic, **options).estimate
    assert isinstance(got, float) and isinstance(got, EstimateFloat)
    assert float(got) == want.value and got.std_error == want.std_error
    assert got.interval(0.9) == want.interval(0.9)
    assert (got.method, got.epsilon) == (protocol, 2.0)
    assert math.isclose(sum(got.budget.values()), 2.0, rel_tol=1e-12)
    assert type(got + 1) is float


def test_method_and_options_are_backend_keywords():
    got = nx.average_clustering(karate(), backend="ldpgraph", epsilon=3, seed=1, method="avg-clustering",
                                private_bound=True)
    want = run_in_memory("avg-clustering", from_networkx(karate()), 3.0, sampler=1, private_bound=True).estimate
    assert float(got) == want.value and got.method == "avg-clustering"


def test_core_number_is_a_dict_by_node_label():
    G = nx.relabel_nodes(karate(), {v: f"member{v:02d}" for v in range(34)})  # the same sorted order
    got = nx.core_number(G, backend="ldpgraph", epsilon=4, seed=2)
    want = run_in_memory("kcore-hindex", from_networkx(karate()), 4.0, sampler=2).estimate.core_numbers
    assert isinstance(got, dict) and isinstance(got, EstimateDict)
    assert set(got) == set(G) and [got[f"member{v:02d}"] for v in range(34)] == want.tolist()
    assert got.std_error is None
    with pytest.raises(ValueError, match="no interval for core_numbers"):
        got.interval()
    pytest.importorskip("pandas")
    series = got.to_series()
    assert series.index.name == "node" and series["member05"] == want[5]


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({}, TypeError, r"needs epsilon="),
    ({"epsilon": 0}, ValueError, "epsilon"),
    ({"epsilon": "2"}, TypeError, "epsilon"),
    ({"epsilon": 2, "method": "rr-triangles"}, ValueError, "method for nx.average_clustering.* must be one of "
                                                            "avg-clustering, adaptive-clustering"),
    ({"epsilon": 2, "seed": 1.5}, TypeError, "seed"),
    ({"epsilon": 2, "d_max": 5}, TypeError, "adaptive-clustering has no option d_max"),
    ({"epsilon": 2, "method": "avg-clustering"}, ValueError, "would take d_max from the graph itself"),
    ({"epsilon": 2, "weight": "w"}, ValueError, "weight= and count_zeros=False are not supported"),
    ({"epsilon": 2, "count_zeros": False}, ValueError, "count_zeros=False are not supported"),
])
def test_bad_keywords_give_clear_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        nx.average_clustering(karate(), backend="ldpgraph", **kwargs)


def test_nodes_and_per_node_triangles_are_refused_not_answered_exactly():
    with pytest.raises(ValueError, match="nodes="):
        nx.average_clustering(karate(), [0, 1], backend="ldpgraph", epsilon=2)
    with pytest.raises(ValueError, match="ldpgraph estimates the graph's total"):
        nx.triangles(karate(), backend="ldpgraph", epsilon=2)


@pytest.mark.parametrize("kind", [nx.DiGraph, nx.MultiGraph])
def test_directed_and_multigraphs_are_refused(kind):
    with pytest.raises(TypeError, match=f"simple undirected graphs, got a {kind.__name__}: pass nx.Graph"):
        nx.transitivity(kind(karate()), backend="ldpgraph", epsilon=2)


def test_a_function_ldpgraph_does_not_estimate_is_refused():
    with pytest.raises(NotImplementedError, match="not implemented by 'ldpgraph'"):
        nx.pagerank(karate(), backend="ldpgraph", epsilon=2)


def test_without_backend_networkx_is_unchanged():
    assert nx.average_clustering(karate()) == nx.average_clustering(karate(), backend="networkx")
    assert BackendInterface.should_run("average_clustering", (karate(),), {}) is not True


@pytest.fixture(scope="module")
def facebook():
    from ldpgraph.datasets import resolve_graph

    g = resolve_graph("facebook")
    G = nx.Graph()
    G.add_edges_from(g.edges().tolist())
    return G


@pytest.mark.filterwarnings("ignore:Note. conversions to backend graphs are saved to cache:UserWarning")
def test_facebook_average_clustering_and_transitivity(facebook):
    """The done-when of issue 38: both run on Facebook as a networkx graph; the estimates are within
    4 of their own standard errors of the exact values (a fixed seed: deterministic)."""
    G = facebook
    c = nx.average_clustering(G, backend="ldpgraph", epsilon=2, seed=11)
    t = nx.transitivity(G, backend="ldpgraph", epsilon=2, seed=11)
    for est, exact, bound in ((c, nx.average_clustering(G), 0.06), (t, nx.transitivity(G), 0.05)):
        assert 0 < est.std_error < bound
        assert abs(float(est) - exact) < 4 * est.std_error
        low, high = est.interval(0.95)
        assert np.isclose(high - low, 2 * 1.959963984540054 * est.std_error)
