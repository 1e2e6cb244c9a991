"""networkx / igraph / edge array / file inputs all give the same Graph; load_graph dispatch."""

from __future__ import annotations

import igraph as ig
import networkx as nx
import numpy as np
import pytest

from ldpgraph.graph import (
    Graph,
    from_edge_array,
    from_igraph,
    from_networkx,
    from_scipy_sparse,
    load_graph,
    read_edgelist,
)


def same_graph(a: Graph, b: Graph) -> None:
    np.testing.assert_array_equal(a.indptr, b.indptr)
    np.testing.assert_array_equal(a.indices, b.indices)
    assert a.node_ids.tolist() == b.node_ids.tolist()
    assert a.report.edges_kept == b.report.edges_kept


@pytest.mark.parametrize("seed", range(3))
def test_four_inputs_agree(seed: int, tmp_path) -> None:
    rng = np.random.default_rng(seed)
    labels = np.sort(rng.choice(10**5, size=60, replace=False))
    idx = rng.integers(0, 60, size=(300, 2))
    idx = idx[idx[:, 0] != idx[:, 1]]
    pairs = labels[idx]
    path = tmp_path / "g.txt"
    path.write_text("".join(f"{a}\t{b}\n" for a, b in pairs.tolist()))
    from_file = read_edgelist(path)
    from_array = from_edge_array(pairs)
    nxg = nx.Graph(pairs.tolist())
    from_nx = from_networkx(nxg)
    present = sorted(nxg.nodes)
    pos = {lab: i for i, lab in enumerate(present)}
    igg = ig.Graph(n=len(present), edges=[(pos[a], pos[b]) for a, b in pairs.tolist()])
    igg.vs["name"] = present
    from_ig = from_igraph(igg)
    for other in (from_array, from_nx, from_ig, load_graph(path), load_graph(nxg),
                  load_graph(igg), load_graph(pairs)):
        same_graph(from_file, other)
    # file and array read each line; networkx already merged duplicates
    assert from_file.report.edges_read == from_array.report.edges_read == len(pairs)
    assert from_nx.report.edges_read == nxg.number_of_edges()
    assert from_ig.report.edges_read == len(pairs)  # igraph keeps multi-edges


def test_networkx_isolated_nodes_directed_and_multigraph() -> None:
    g = nx.MultiDiGraph()
    g.add_nodes_from([5, 1, 9, 3])
    g.add_edges_from([(1, 3), (3, 1), (1, 3), (9, 9), (3, 5)])
    out = from_networkx(g)
    assert out.node_ids.tolist() == [1, 3, 5, 9]
    assert out.degrees.tolist() == [1, 2, 1, 0]  # 9 only has a self-loop: kept, isolated
    r = out.report
    assert (r.edges_read, r.self_loops_dropped, r.duplicates_dropped) == (5, 1, 2)
    assert r.reverse_duplicates_dropped == 1 and r.source == "networkx.MultiDiGraph"
    assert r.source_directed is True and r.relabelled


def test_networkx_unsortable_and_string_labels() -> None:
    g = nx.Graph([("b", "a"), ("a", "c")])
    g.add_node("z")
    out = from_networkx(g)
    assert out.node_ids.dtype == object and out.node_ids.tolist() == ["a", "b", "c", "z"]
    assert out.degrees.tolist() == [2, 1, 1, 0]
    mixed = nx.Graph([(1, "x"), ((2, 3), 1)])
    out = from_networkx(mixed)  # incomparable labels: insertion order
    assert out.node_ids.tolist() == [1, "x", (2, 3)]
    assert out.degrees.tolist() == [2, 1, 1]
    assert out.report.source_directed is False


def test_networkx_range_labels_not_relabelled() -> None:
    out = from_networkx(nx.path_graph(4))
    assert not out.report.relabelled and out.node_ids.dtype == np.int64


def test_igraph_directed_names_and_isolated() -> None:
    g = ig.Graph(n=5, edges=[(0, 1), (1, 0), (1, 2), (1, 2), (3, 3)], directed=True)
    out = from_igraph(g)
    assert out.degrees.tolist() == [1, 2, 1, 0, 0]
    r = out.report
    assert (r.edges_read, r.self_loops_dropped, r.duplicates_dropped) == (5, 1, 2)
    assert r.reverse_duplicates_dropped == 1 and r.source_directed is True
    assert not r.relabelled and out.node_ids.tolist() == [0, 1, 2, 3, 4]
    g.vs["name"] = ["a", "b", "c", "d", "e"]
    named = from_igraph(g)
    assert named.node_ids.tolist() == ["a", "b", "c", "d", "e"] and named.report.relabelled


def test_type_errors() -> None:
    with pytest.raises(TypeError, match="networkx graph"):
        from_networkx(ig.Graph())
    with pytest.raises(TypeError, match="igraph.Graph"):
        from_igraph(nx.Graph())
    with pytest.raises(TypeError, match="source must be"):
        load_graph(3.5)
    with pytest.raises(ValueError, match="n_nodes applies to edge arrays only"):
        load_graph(nx.Graph(), n_nodes=3)


def test_load_graph_passes_graph_through_and_n_nodes() -> None:
    g = from_edge_array([[0, 1]])
    assert load_graph(g) is g
    assert load_graph([[0, 1]], n_nodes=4).n_nodes == 4
    assert load_graph(((0, 1), (1, 2))).n_edges == 2


# -- fast conversion paths against the generic edge-array builder ---------------------------------


def edge_array_graph(pairs, n: int) -> Graph:
    return from_edge_array(np.asarray(pairs, dtype=np.int64).reshape(-1, 2), n_nodes=n)


@pytest.mark.parametrize("seed", range(4))
def test_igraph_simple_undirected_fast_path(seed: int) -> None:
    # a simple undirected graph: nothing dropped, no notes
    g = ig.Graph.Erdos_Renyi(n=120, m=500) if seed % 2 else ig.Graph.Barabasi(150, 3)
    g.add_vertices(3)  # isolated vertices
    assert g.is_simple()
    out = from_igraph(g)
    same_graph(out, edge_array_graph(g.get_edgelist(), g.vcount()))
    r = out.report
    assert (r.edges_read, r.edges_kept, r.duplicates_dropped) == (g.ecount(), g.ecount(), 0)
    assert r.source_directed is False and r.notes == ()


@pytest.mark.parametrize("seed", range(6))
def test_scipy_sparse_any_pattern(seed: int) -> None:
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    m = int(rng.integers(0, 120))
    r, c = rng.integers(0, n, m), rng.integers(0, n, m)
    w = rng.choice([0, 1, 2.5], m)  # explicit zeros are not edges; weights are ignored
    a = sp.coo_array((w, (r, c)), shape=(n, n))
    keep = w != 0
    ref = edge_array_graph(np.column_stack([r[keep], c[keep]]), n)
    for fmt in ("coo", "csr", "csc"):
        out = from_scipy_sparse(a.asformat(fmt))
        same_graph(out, ref)
        assert out.report.self_loops_dropped == len({(x, y) for x, y in zip(r[keep], c[keep], strict=True) if x == y})
    sym = sp.csr_array(a + a.T)
    sym.sum_duplicates()
    out = from_scipy_sparse(sym)
    assert out.report.source_directed is False and out.report.notes == ()
    same_graph(out, ref)
    assert out.report.edges_read == out.n_edges + out.report.self_loops_dropped


def test_scipy_sparse_directed_note_and_errors() -> None:
    import scipy.sparse as sp

    out = from_scipy_sparse(sp.csr_array(([1, 1, 1], ([0, 1, 2], [1, 0, 0])), shape=(3, 3)))
    assert out.report.source_directed is True
    assert out.degrees.tolist() == [2, 1, 1]
    assert out.report.notes == ("directed input symmetrised: 3 directed edges -> 2 undirected edges (1 given in both directions)",)
    assert load_graph(sp.csr_matrix(np.eye(3))).report.self_loops_dropped == 3
    with pytest.raises(ValueError, match="must be square"):
        from_scipy_sparse(sp.csr_array((2, 3)))
    with pytest.raises(TypeError, match="scipy.sparse"):
        from_scipy_sparse(np.eye(2))


def test_directed_networkx_note() -> None:
    out = from_networkx(nx.DiGraph([(1, 2), (2, 1), (2, 3)]))
    assert out.report.notes == ("directed input symmetrised: 3 directed edges -> 2 undirected edges (1 given in both directions)",)


@pytest.mark.parametrize("seed", range(8))
def test_scipy_directed_merge_equals_general_builder(seed: int) -> None:
    # the directed CSR route (A + A^T by scipy's merge) against the general builder: same arrays,
    # same report; includes self-loops, pairs given both ways, a directed cycle, halves of equal
    # sizes that are still asymmetric (the full symmetry check runs), and int64 indices
    import scipy.sparse as sp

    from ldpgraph.graph.core import _build_graph

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    m = int(rng.integers(0, 300))
    r, c = rng.integers(0, n, m), rng.integers(0, n, m)
    if seed == 0:  # a directed cycle: every row and column holds one entry
        r, c = np.arange(n), (np.arange(n) + 1) % n
    if seed == 1:  # as many entries above the diagonal as below, not symmetric
        n, r, c = 3, np.array([0, 2, 1]), np.array([2, 1, 1])
    for itype in (np.int32, np.int64):
        a = sp.csr_array((np.ones(r.size), (r, c)), shape=(n, n))
        a.sum_duplicates()
        a.indices, a.indptr = a.indices.astype(itype), a.indptr.astype(itype)
        out = from_scipy_sparse(a)
        ar, ac = a.nonzero()
        ref = _build_graph(ar.astype(np.int64), ac.astype(np.int64), n, np.arange(n, dtype=np.int64),
                           source="scipy.sparse.csr", relabelled=False,
                           source_directed=not bool((abs(a - a.T)).nnz == 0))
        same_graph(out, ref)
        assert out.report == ref.report
        assert out.indptr.dtype == out.indices.dtype == np.int64
