"""from_networkx against a reference built from ``G.edges()`` with Python sets.

The reference knows nothing of networkx's dicts nor of the kernels: it sorts the node labels in
Python (insertion order when they cannot be sorted), maps every edge of ``G.edges()`` (each
parallel edge of a multigraph, every self-loop) to sorted positions, and builds the simple
undirected graph from sets (``tests.graph.test_build_reference.reference``). ``from_networkx``
must give the same CSR arrays, node ids and report counts on random and adversarial graphs of
the four networkx classes, through both ways of reading networkx's dicts (CPython's tables
directly, and iterating them).
"""

from __future__ import annotations

import zlib
from typing import Any

import networkx as nx
import numpy as np
import pytest

from ldpgraph.graph import convert, from_networkx
from tests.graph.test_build_reference import reference

CLASSES = (nx.Graph, nx.DiGraph, nx.MultiGraph, nx.MultiDiGraph)
@pytest.fixture(params=["iterate"])
def read(request: pytest.FixtureRequest) -> str:
    """The route that reads the adjacency (one: by iteration of networkx's dicts)."""
    return request.param


def sorted_labels(g: nx.Graph) -> list[Any]:
    labels = list(g.nodes)
    try:
        return sorted(labels)
    except TypeError:
        return labels


def check(g: nx.Graph) -> None:
    out = from_networkx(g)
    labels = sorted_labels(g)
    index = {x: i for i, x in enumerate(labels)}
    pairs = [(index[u], index[v]) for u, v in g.edges()]
    ref = reference(pairs, len(labels))
    assert out.indptr.dtype == out.indices.dtype == np.int64
    assert out.node_ids.tolist() == labels
    assert all(type(a) is type(b) for a, b in zip(out.node_ids.tolist(), labels, strict=True))
    assert out.indptr.tolist() == ref["indptr"]
    assert out.indices.tolist() == ref["indices"]
    r = out.report
    assert (r.edges_read, r.n_nodes) == (len(pairs), len(labels))
    for field in ("self_loops_dropped", "duplicates_dropped", "reverse_duplicates_dropped", "edges_kept"):
        assert getattr(r, field) == ref[field], field
    assert r.relabelled == (labels != list(range(len(labels))))
    assert r.source == f"networkx.{type(g).__name__}" and r.source_directed is g.is_directed()
    assert out.node_ids.dtype == (np.int64 if all(type(x) is int and -2**63 <= x < 2**63 for x in labels)
                                  else object) or not labels


def random_graph(cls: type, labels: list[Any], m: int, rng: np.random.Generator, order: str) -> nx.Graph:
    """``m`` random edges (self-loops, repeats, both directions) on ``labels``, isolated nodes kept."""
    n = len(labels)
    g = cls()
    nodes = list(labels) if order == "given" else [labels[i] for i in rng.permutation(n)]
    if order == "edges-first":  # nodes enter through their edges, the isolated ones last
        nodes = []
    g.add_nodes_from(nodes)
    if n:
        e = rng.integers(0, n, size=(m, 2))
        e[: m // 10, 1] = e[: m // 10, 0]  # self-loops
        e = np.concatenate([e, e[: m // 4], e[: m // 4, ::-1]])  # repeats and reversed
        g.add_edges_from((labels[a], labels[b]) for a, b in e[rng.permutation(len(e))].tolist())
        if n > 5:  # deleted entries in the dicts: a node and some edges removed, then put back
            g.remove_nodes_from([labels[int(rng.integers(n))]])
            g.remove_edges_from(list(g.edges())[::7])
    g.add_nodes_from(labels)
    return g


def label_sets(rng: np.random.Generator, n: int) -> dict[str, list[Any]]:
    top = 2**63 - 1
    return {
        "range": list(range(n)),
        "sparse": sorted(rng.choice(10**12, size=n, replace=False).tolist()),
        "offset": list(range(-5, n - 5)),  # consecutive, negative start
        "gappy": sorted((rng.choice(3 * n, size=n, replace=False) - n).tolist()),  # dense tables
        "negative": sorted((-rng.choice(10**9, size=n, replace=False) - 1).tolist()),
        "near-2^63": sorted({top, top - 1, -top - 1, -top, 0, *rng.integers(-top, top, n).tolist()})[:n],
        "beyond-int64": [2**64 + i for i in range(n - 1)] + [-(2**70)],
        "str": [f"n{i}" for i in rng.permutation(n).tolist()],
        "mixed": [i if i % 2 else f"s{i}" for i in range(n)],  # incomparable: insertion order
        "tuples": [(i % 3, i) for i in range(n)],
    }


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("kind", ["range", "sparse", "offset", "gappy", "negative", "near-2^63", "beyond-int64", "str",
                                  "mixed", "tuples"])
@pytest.mark.parametrize("order", ["given", "shuffled", "edges-first"])
def test_random_graphs_equal_the_reference(cls: type, kind: str, order: str, read: str) -> None:
    rng = np.random.default_rng(zlib.crc32(f"{cls.__name__} {kind} {order}".encode()))
    for n, m in ((1, 3), (2, 4), (7, 20), (60, 150)):
        labels = label_sets(rng, n)[kind]
        check(random_graph(cls, labels, m, rng, order))


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_empty_one_node_and_loops_only(cls: type, read: str) -> None:
    check(cls())
    g = cls()
    g.add_node(7)
    check(g)
    g.add_edge(7, 7)
    g.add_edge(7, 7)
    check(g)
    out = from_networkx(g)
    assert (out.n_nodes, out.n_edges, out.report.self_loops_dropped) == (1, 0, 2 if g.is_multigraph() else 1)
    check(nx.relabel_nodes(nx.path_graph(5, create_using=cls), {i: 4 - i for i in range(5)}))


def test_digraph_reciprocal_edges_and_note() -> None:
    g = nx.DiGraph([(3, 1), (1, 3), (1, 2), (2, 2), (5, 1)])
    check(g)
    out = from_networkx(g)
    assert out.report.reverse_duplicates_dropped == 1 and out.report.duplicates_dropped == 1
    assert out.report.notes == ("directed input symmetrised: 5 directed edges -> 3 undirected edges "
                                "(1 given in both directions)",)


@pytest.mark.parametrize("seed", range(3))
def test_larger_graphs_all_routes(seed: int, read: str) -> None:
    # thousands of edges: the rank mapping, the searchsorted and offset relabellings, int32
    rng = np.random.default_rng(seed)
    base = nx.gnm_random_graph(3000, 12000, seed=seed)
    ids = rng.choice(10**15, size=3000, replace=False) - 10**14
    for mapping in (None, dict(enumerate(ids.tolist())), {i: f"{i:05d}" for i in range(3000)}):
        g = base if mapping is None else nx.relabel_nodes(base, mapping)
        check(g)
        check(g.to_directed())
        check(nx.MultiGraph(g))


def test_int64_positions(monkeypatch: pytest.MonkeyPatch) -> None:
    g = random_graph(nx.Graph, list(range(-3, 40)), 120, np.random.default_rng(5), "shuffled")
    small = from_networkx(g)
    monkeypatch.setattr(convert, "_INT32_LIMIT", 0)  # positions and entries in int64
    wide = from_networkx(g)
    np.testing.assert_array_equal(small.indices, wide.indices)
    np.testing.assert_array_equal(small.indptr, wide.indptr)
    assert small.report == wide.report
    check(g)
    check(g.to_directed())


class Equal:
    """A key equal to an integer label (same hash) that numpy cannot convert to an integer."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __hash__(self) -> int:
        return hash(self.value)

    def __eq__(self, other: object) -> bool:
        return other == self.value


def test_keys_equal_to_labels_but_not_integers(read: str) -> None:
    g = nx.Graph([(0, 1), (1, 2), (2, 3)])
    g.add_edge(Equal(2), 0)  # node 2 exists: the key Equal(2) is stored in adj[0]
    g.add_edge(1.0, 3)  # a float key in adj[3], converted exactly
    assert any(type(k) is Equal for k in g._adj[0]) and any(type(k) is float for k in g._adj[3])
    out = from_networkx(g)
    assert out.node_ids.tolist() == [0, 1, 2, 3]
    assert out.indices.tolist() == [1, 2, 0, 2, 3, 0, 1, 3, 1, 2]


def test_edited_adjacency_is_refused(read: str) -> None:
    g = nx.Graph([(0, 1), (1, 2)])
    del g._adj[1][0]  # one direction only
    with pytest.raises(ValueError, match="not symmetric"):
        from_networkx(g)
    for labels in ([0, 1, 2], ["a", "b", "c"], [0, 5, 9]):
        g = nx.Graph([(labels[0], labels[1]), (labels[1], labels[2])])
        g._adj[labels[0]][99] = {}  # a neighbour that is not a node
        with pytest.raises(ValueError, match="neighbour 99 that is not a node"):
            from_networkx(g)


@pytest.mark.parametrize("max_probes", [1, 2, 32])
def test_hash_index_finds_every_key(max_probes: int) -> None:
    rng = np.random.default_rng(max_probes)
    top = 2**63 - 1
    for keys in (np.array([], dtype=np.int64), np.array([0]), np.array([-1, 0, 1, top, -top - 1]),
                 rng.choice(10**6, 5000, replace=False), np.arange(0, 2**40, 2**30),  # colliding homes
                 rng.integers(-top - 1, top, 3000, endpoint=True)):
        keys = np.unique(keys).astype(np.int64)
        rng.shuffle(keys)
        index = convert._index_of(keys)
        assert convert._lookup(index, keys, max_probes).tolist() == list(range(keys.size))
        queries = np.concatenate([keys, keys[::-3], rng.integers(-top - 1, top, 500, endpoint=True), [0, -1, 1]])
        where = {k: i for i, k in enumerate(keys.tolist())}
        expect = [where.get(q, -1) for q in queries.tolist()]
        assert convert._lookup(index, queries.astype(np.int64), max_probes).tolist() == expect


def test_graph_subclass_with_other_dict_types(read: str) -> None:
    from collections import OrderedDict

    class Ordered(nx.Graph):
        node_dict_factory = OrderedDict
        adjlist_outer_dict_factory = OrderedDict
        adjlist_inner_dict_factory = OrderedDict

    g = Ordered()
    g.add_edges_from(nx.gnm_random_graph(40, 90, seed=4).edges())
    g.add_edge(3, 3)
    g.add_node(-7)
    check(g)
    check(nx.freeze(nx.Graph(g)))
