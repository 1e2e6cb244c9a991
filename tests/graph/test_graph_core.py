"""The Graph form, from_edge_array, relabelling and load-report counts."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from ldpgraph.graph import Graph, LoadReport, core, from_edge_array


def brute_report(pairs: list[tuple[int, int]]) -> dict[str, int]:
    """Counts of the load report from sets, independently of the implementation."""
    loops = sum(1 for a, b in pairs if a == b)
    undirected = {frozenset(p) for p in pairs if p[0] != p[1]}
    directed = {p for p in pairs if p[0] != p[1]}
    both = sum(1 for e in undirected if len(directed & {tuple(e), tuple(e)[::-1]}) == 2)
    return {
        "edges_read": len(pairs),
        "self_loops_dropped": loops,
        "duplicates_dropped": len(pairs) - loops - len(undirected),
        "reverse_duplicates_dropped": both,
        "edges_kept": len(undirected),
    }


def assert_matches_networkx(g: Graph, ref: nx.Graph, labels: list) -> None:
    """g (node i = labels[i]) has exactly the edges and nodes of ref."""
    assert g.n_nodes == ref.number_of_nodes() == len(labels)
    assert g.n_edges == ref.number_of_edges()
    assert g.node_ids.tolist() == labels
    for i, lab in enumerate(labels):
        nbrs = g.neighbors(i)
        assert [labels[j] for j in nbrs] == sorted(ref[lab], key=labels.index)
        assert g.degrees[i] == ref.degree(lab)
    assert int(g.indptr[-1]) == 2 * g.n_edges


@pytest.mark.parametrize("seed", range(5))
def test_random_multigraph_against_networkx_and_sets(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_ids = int(rng.integers(2, 40))
    ids = np.sort(rng.choice(10**6, size=n_ids, replace=False)) if seed % 2 else np.arange(n_ids)
    raw = rng.integers(0, n_ids, size=(int(rng.integers(0, 150)), 2))
    pairs = [(int(ids[a]), int(ids[b])) for a, b in raw]
    g = from_edge_array(np.array(pairs, dtype=np.int64).reshape(-1, 2))
    ref = nx.Graph()
    ref.add_edges_from(pairs)
    ref.remove_edges_from(list(nx.selfloop_edges(ref)))
    assert_matches_networkx(g, ref, sorted(ref.nodes))
    r = g.report
    for key, value in brute_report(pairs).items():
        assert getattr(r, key) == value, key
    assert r.n_nodes == g.n_nodes and r.source == "edge array"
    expected_relabel = g.n_nodes > 0 and g.node_ids.tolist() != list(range(g.n_nodes))
    assert r.relabelled == expected_relabel


def test_neighbours_sorted_and_edges_canonical() -> None:
    rng = np.random.default_rng(3)
    g = from_edge_array(rng.integers(0, 300, size=(3000, 2)))
    for v in range(g.n_nodes):
        assert (np.diff(g.neighbors(v)) > 0).all()
    e = g.edges()
    assert (e[:, 0] < e[:, 1]).all()
    assert e.shape == (g.n_edges, 2)
    keys = e[:, 0] * g.n_nodes + e[:, 1]
    assert (np.diff(keys) > 0).all()
    assert g.degrees.sum() == 2 * g.n_edges


@pytest.mark.parametrize(
    "ids",
    [
        np.array([[3, 8297], [8297, 5]]),  # sparse but small: dense lookup table
        np.array([[2**62, -5], [-5, 7], [7, 2**62]]),  # huge and negative: np.unique
        np.array([[0, 5 * 10**6], [1, 2]]),  # max id far above the count: np.unique
    ],
)
def test_relabelling_paths(ids: np.ndarray) -> None:
    g = from_edge_array(ids)
    labels = sorted(set(ids.ravel().tolist()))
    assert g.node_ids.tolist() == labels
    got = {(int(g.node_ids[a]), int(g.node_ids[b])) for a, b in g.edges()}
    want = {(min(a, b), max(a, b)) for a, b in ids.tolist()}
    assert got == want
    assert g.report.relabelled


def test_contiguous_ids_are_not_relabelled() -> None:
    g = from_edge_array([[2, 0], [1, 2]])
    assert not g.report.relabelled and g.node_ids.tolist() == [0, 1, 2]


def test_n_nodes_keeps_isolated_nodes_and_checks_range() -> None:
    g = from_edge_array(np.array([[1, 3]], dtype=np.uint16), n_nodes=6)
    assert g.degrees.tolist() == [0, 1, 0, 1, 0, 0]
    assert g.node_ids.tolist() == list(range(6)) and not g.report.relabelled
    assert from_edge_array(np.zeros((0, 2), dtype=np.int64), n_nodes=2).n_nodes == 2
    with pytest.raises(ValueError, match=r"edges\[1\] = \[2, 6\] has a node id outside"):
        from_edge_array([[0, 1], [2, 6]], n_nodes=6)
    with pytest.raises(ValueError, match="outside"):
        from_edge_array([[-1, 1]], n_nodes=6)


def test_empty_edge_array() -> None:
    for empty in ([], np.zeros((0, 2), dtype=np.int32), np.array([]), np.zeros((0, 2)), np.array([], dtype=object)):
        g = from_edge_array(empty)
        assert (g.n_nodes, g.n_edges) == (0, 0)
        assert g.indptr.tolist() == [0] and g.edges().shape == (0, 2)


@pytest.mark.parametrize(
    ("bad", "exc", "match"),
    [
        ([[0.5, 1.0]], TypeError, "edges must be an array of integers"),
        ([[True, False]], TypeError, "edges must be an array of integers"),
        ([0, 1, 2], ValueError, "edges must have 2 dimension"),
        ([[0, 1, 2]], ValueError, r"edges must have shape \(m, 2\)"),
        (np.array([[2**63, 1]], dtype=np.uint64), ValueError, "2\\*\\*63 - 1"),
        # empty but complex (accepted with a ComplexWarning before) or boolean
        (np.array([], dtype=np.complex128), TypeError, "edges must be an array of integers"),
        (np.zeros((0, 2), dtype=np.complex64), TypeError, "edges must be an array of integers"),
        (np.array([], dtype=bool), TypeError, "edges must be an array of integers"),
    ],
)
def test_from_edge_array_validation(bad, exc, match) -> None:
    with pytest.raises(exc, match=match):
        from_edge_array(bad)


def test_graph_is_read_only() -> None:
    g = from_edge_array([[0, 1], [1, 2]])
    for arr in (g.indptr, g.indices, g.degrees, g.node_ids):
        with pytest.raises(ValueError, match="read-only"):
            arr[0] = 5
    with pytest.raises(AttributeError):
        g.n_nodes = 3  # type: ignore[misc]
    with pytest.raises(AttributeError):
        g.extra = 1  # type: ignore[attr-defined]


def test_constructor_accepts_valid_csr_and_checks_everything() -> None:
    g = from_edge_array(np.random.default_rng(1).integers(0, 50, size=(200, 2)))
    ptr, idx = np.array(g.indptr), np.array(g.indices)
    h = Graph(ptr, idx, node_ids=np.arange(g.n_nodes) * 10)
    assert ptr.flags.writeable and idx.flags.writeable  # the caller's arrays are not frozen
    np.testing.assert_array_equal(h.indices, g.indices)
    assert h.node_ids[3] == 30 and h.report.source == "CSR arrays"
    cases = [
        (([1, 1], []), "start at 0"),
        (([0, 1], [0, 1]), "indptr\\[-1\\]"),
        (([0, 2, 1, 3], [1, 2, 0]), "non-decreasing"),
        (([0, 1, 2], [1, 2]), "indices must lie in"),
        (([0, 1, 1], [0]), "self-loops"),
        (([0, 1, 1, 2], [1, 0]), "symmetric"),
        (([0, 2, 3, 4], [2, 1, 0, 0]), "strictly increasing"),
        (([0, 2, 3, 4], [1, 1, 0, 0]), "strictly increasing"),
    ]
    for (ptr, idx), match in cases:
        with pytest.raises(ValueError, match=match):
            Graph(ptr, idx)
    with pytest.raises(ValueError, match="node_ids must have shape"):
        Graph([0, 1, 2], [1, 0], node_ids=[1, 2, 3])
    with pytest.raises(TypeError, match="report must be a LoadReport"):
        Graph([0, 1, 2], [1, 0], report="x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="indices must be an array of integers"):
        Graph([0, 1, 2], [1.0, 0.0])


def test_neighbors_validation() -> None:
    g = from_edge_array([[0, 1]])
    assert g.neighbors(np.int64(1)).tolist() == [0]
    with pytest.raises(ValueError, match=r"v must be a node index in \[0, 2\), got 2"):
        g.neighbors(2)
    with pytest.raises(TypeError, match="v must be an integer"):
        g.neighbors(1.0)  # type: ignore[arg-type]


def test_round_trip_to_networkx_and_igraph() -> None:
    pairs = np.array([[10, 20], [20, 30], [30, 10], [40, 10]])
    g = from_edge_array(pairs, n_nodes=45)
    h = g.to_networkx()
    assert h.number_of_nodes() == 45 and h.number_of_edges() == 4
    back = core.from_edge_array(np.array(list(h.edges())), n_nodes=45)
    np.testing.assert_array_equal(back.indices, g.indices)
    i = g.to_igraph()
    assert i.vcount() == 45 and i.ecount() == 4 and not i.is_directed()
    relab = from_edge_array(pairs)
    assert set(relab.to_networkx(original_labels=True).edges()) == set(
        nx.Graph(pairs.tolist()).edges()
    )


def test_report_is_frozen_and_repr() -> None:
    g = from_edge_array([[0, 1]])
    assert isinstance(g.report, LoadReport)
    with pytest.raises(AttributeError):
        g.report.edges_kept = 0  # type: ignore[misc]
    assert repr(g) == "Graph(n_nodes=2, n_edges=1, source='edge array')"


def test_build_without_self_loops_branch() -> None:
    # every edge given once and in order: nothing dropped
    g = from_edge_array([[0, 1], [0, 2], [1, 2]])
    r = g.report
    assert (r.self_loops_dropped, r.duplicates_dropped, r.edges_kept) == (0, 0, 3)
    assert r.lines_read is None and r.lines_skipped is None and r.source_directed is None
