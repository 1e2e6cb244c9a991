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
