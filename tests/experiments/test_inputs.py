"""Every graph kind through the one conversion of the entry points (issue 38, item 1).

``estimate_once`` and ``run_experiment`` given karate as a networkx, igraph, scipy.sparse or
pandas graph, or as an edge-list file, see its 78 edges and 528 2-stars (counted here by brute
force from the edge list, independently of ldpgraph) and keep the caller's name for it. On the
old code (7443152) a networkx graph was read as the array of its node ids: 280 "edges".
A bare array is refused, naming the explicit spelling :class:`~ldpgraph.graph.Degrees`.
"""

from __future__ import annotations

from itertools import combinations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from ldpgraph.experiments import estimate_once, resolve_graph_inputs, run_experiment
from ldpgraph.graph import Degrees, graph_name, load_graph
from ldpgraph.protocols.randomizer import as_degrees

KARATE = nx.karate_club_graph()
EDGES = sorted(tuple(sorted(e)) for e in KARATE.edges())
ONE = dict(epsilon=1.0, statistic="kstars", k=2, methods=["unbiased-dlap"], seed=5)


def _two_stars(edges):
    """Brute force: the pairs of edges sharing an endpoint."""
    return sum(1 for a, b in combinations(edges, 2) if set(a) & set(b))


def _kinds(tmp_path):
    import igraph as ig
    import pandas as pd

    g_ig = ig.Graph(n=34, edges=EDGES)
    g_ig["name"] = "karate-igraph"
    df = pd.DataFrame(EDGES, columns=["source", "target"])
    df.attrs["name"] = "karate-table"
    path = tmp_path / "karate-file.txt.gz"
    import gzip

    with gzip.open(path, "wt") as fh:
        fh.writelines(f"{a} {b}\n" for a, b in EDGES)
    return {
        "networkx": (KARATE, "Zachary's Karate Club"),
        "igraph": (g_ig, "karate-igraph"),
        "scipy.sparse array": (sp.csr_array(nx.to_scipy_sparse_array(KARATE)), "graph0"),
        "scipy.sparse matrix": (sp.coo_matrix(nx.to_scipy_sparse_array(KARATE)), "graph0"),
        "DataFrame": (df, "karate-table"),
        "path": (str(path), "karate-file"),
        "Path": (path, "karate-file"),
    }


def test_brute_force_reference():
    assert len(EDGES) == 78 and _two_stars(EDGES) == 528


@pytest.mark.parametrize("kind", ["networkx", "igraph", "scipy.sparse array", "scipy.sparse matrix", "DataFrame",
                                  "path", "Path"])
def test_every_kind_gives_karates_edges_and_two_stars_under_its_name(kind, tmp_path):
    graph, name = _kinds(tmp_path)[kind]
    run = estimate_once(graph, **ONE)
    assert (run.graph, run.n_nodes, run.n_edges, run.truth) == (name, 34, 78, 528.0)
    keyed = estimate_once({"mine": graph}, **ONE)
    assert (keyed.graph, keyed.n_edges, keyed.truth) == ("mine", 78, 528.0)
    res = run_experiment({"mine": graph}, epsilons=[1.0], ks=[2], methods=["unbiased-dlap"], n_trials=2, seed=0,
                         quiet=True)
    assert [(r.graph, r.truth) for r in res.summary] == [("mine", 528.0)]
    assert res.config["graphs"][0]["n_edges"] == 78
    listed = run_experiment([graph], epsilons=[1.0], ks=[2], methods=["unbiased-dlap"], n_trials=2, seed=0,
                            quiet=True)
    assert [(r.graph, r.truth) for r in listed.summary] == [(name, 528.0)]


def test_the_same_graph_in_any_form_gives_the_same_numbers(tmp_path):
    """The streams are keyed on the content: one seed, one result, whatever the form."""
    runs = [estimate_once({"k": graph}, **ONE) for graph, _ in _kinds(tmp_path).values()]
    runs.append(estimate_once({"k": load_graph(np.array(EDGES))}, **ONE))
    assert len({r.estimates for r in runs}) == 1


def test_adjacency_statistics_run_on_a_networkx_graph():
    run = estimate_once(KARATE, epsilon=2.0, statistic="triangles", methods=["rr-triangles"], seed=0)
    assert run.truth == sum(nx.triangles(KARATE).values()) / 3 == 45
    res = run_experiment([KARATE], epsilons=[2.0], statistics=["transitivity"], methods=["two-round-triangles-dlap"],
                         n_trials=2, seed=0, quiet=True)
    assert [r.truth for r in res.summary] == [pytest.approx(nx.transitivity(KARATE), rel=1e-12)]


def test_two_graphs_keep_their_names_and_unnamed_ones_are_numbered():
    named = nx.path_graph(4)
    named.name = "path4"
    labels = [g.label for g in resolve_graph_inputs([KARATE, nx.star_graph(3), named])]
    assert labels == ["Zachary's Karate Club", "graph1", "path4"]


def test_a_name_column_is_not_the_tables_name():
    import pandas as pd

    df = pd.DataFrame({"source": [0, 1], "target": [1, 2], "name": ["x", "y"]})
    assert graph_name(df) is None
    assert [g.label for g in resolve_graph_inputs([df])] == ["graph0"]


@pytest.mark.parametrize("bare", [[3, 1, 2, 2], (3, 1, 2, 2), np.array([3, 1, 2, 2]), np.array(EDGES),
                                  [[3, 1, 2], [1, 1]]])
def test_bare_arrays_are_refused_naming_the_explicit_spelling(bare):
    for call in (lambda g: estimate_once(g, **ONE), lambda g: estimate_once({"toy": g}, **ONE),
                 lambda g: run_experiment(g, epsilons=[1.0], n_trials=1, quiet=True),
                 lambda g: run_experiment({"toy": g}, epsilons=[1.0], n_trials=1, quiet=True)):
        with pytest.raises(TypeError, match=r"is a bare \w+: say what it is, ldpgraph\.Degrees\(values\) if "
                                            r"these are degrees, or ldpgraph\.load_graph\(edges\)"):
            call(bare)


def test_degrees_said_explicitly():
    d = Degrees([3, 1, 2, 2], name="toy")
    assert (d.n_nodes, d.n_edges, d.name) == (4, 4, "toy")
    assert not d.degrees.flags.writeable
    run = estimate_once(d, **ONE)
    assert (run.graph, run.truth) == ("toy", 3 + 0 + 1 + 1)
    assert estimate_once(Degrees([3, 1, 2, 2]), **ONE).graph == "graph0"
    assert Degrees(d) == d and Degrees(d, name="other").name == "other"
    with pytest.raises(ValueError, match="must be non-negative"):
        Degrees([1, -1])
    with pytest.raises(ValueError, match="one-dimensional"):
        Degrees(np.array(EDGES))
    with pytest.raises(TypeError, match="name must be a str"):
        Degrees([1, 1], name=3)
    with pytest.raises(TypeError, match="needs the graph's adjacency"):
        estimate_once(d, epsilon=1.0, statistic="triangles", methods=["rr-triangles"], seed=0)


def test_other_objects_are_refused_with_the_accepted_kinds():
    with pytest.raises(TypeError, match="must be a dataset name, synthetic spec or edge-list path, a networkx"):
        estimate_once({"x": 3.5}, **ONE)


def test_as_degrees_reads_graph_objects():
    want = [d for _, d in sorted(KARATE.degree())]
    assert as_degrees(KARATE).tolist() == want
    assert as_degrees(nx.to_scipy_sparse_array(KARATE)).tolist() == want


def test_run_in_memory_takes_every_graph_kind(tmp_path):
    from ldpgraph.run import run_in_memory

    ref = run_in_memory("two-round-triangles-dlap", load_graph(np.array(EDGES)), 4.0, sampler=3).estimate
    for kind in ("networkx", "igraph", "scipy.sparse array", "DataFrame", "path"):
        graph, _ = _kinds(tmp_path)[kind]
        assert run_in_memory("two-round-triangles-dlap", graph, 4.0, sampler=3).estimate == ref
    with pytest.raises(TypeError, match="the protocol needs the adjacency"):
        run_in_memory("two-round-triangles-dlap", Degrees([1, 1]), 4.0, sampler=3)
    from ldpgraph.datasets import synthetic_graph

    spec = "ba:n=60,m=3"  # a spec is drawn with graph seed 0, as in the experiments
    assert (run_in_memory("two-round-triangles-dlap", spec, 4.0, sampler=3).estimate
            == run_in_memory("two-round-triangles-dlap", synthetic_graph(spec, rng=0), 4.0, sampler=3).estimate)


def test_per_node_core_numbers_come_by_the_users_labels():
    """Issue 38 item 7: a networkx graph's own labels, not node numbers. The labels below keep the
    sorted order, so both graphs are the same Graph and draw the same numbers."""
    named = nx.relabel_nodes(KARATE, {v: f"m{v:02d}" for v in KARATE})
    by_number = estimate_once(KARATE, epsilon=4.0, statistic="core_numbers", methods=["kcore-hindex"], seed=3)
    by_name = estimate_once(named, epsilon=4.0, statistic="core_numbers", methods=["kcore-hindex"], seed=3)
    [num], [nam] = by_number.estimates, by_name.estimates
    assert list(num.per_node) == list(range(34)) and list(nam.per_node) == [f"m{v:02d}" for v in range(34)]
    assert [nam.per_node[f"m{v:02d}"] for v in range(34)] == [num.per_node[v] for v in range(34)]
    assert "per_node" not in (nam.details or {}) and "per_node" not in by_name.to_dict()["estimates"][0]
    series = nam.per_node_series()
    assert series.name == "kcore-hindex" and series.index.name == "node" and series["m33"] == nam.per_node["m33"]
    assert max(nam.per_node.values()) == nam.details["degeneracy_estimate"]
    with pytest.raises(ValueError, match="estimates no per-node values"):
        estimate_once(KARATE, **ONE).estimates[0].per_node_series()
