"""Conversions from networkx and igraph graph objects into :class:`~ldpgraph.graph.Graph`.

networkx and igraph are imported lazily, inside the functions.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ldpgraph.graph.core import Graph, _build_graph

__all__ = ["from_networkx", "from_igraph"]


def from_networkx(graph: Any) -> Graph:
    """Build a :class:`~ldpgraph.graph.Graph` from any networkx graph.

    Every node is kept, isolated ones included. Directed graphs are symmetrised and
    multigraph parallel edges counted as duplicates; self-loops are dropped; all of it is
    counted in ``graph.report``.

    Parameters
    ----------
    graph : networkx.Graph, DiGraph, MultiGraph or MultiDiGraph

    Returns
    -------
    Graph
        Node ``i`` is the ``i``-th node label in sorted order (insertion order when the
        labels cannot be sorted); ``node_ids`` holds the labels (int64 when all are
        integers, else an object array).

    Examples
    --------
    >>> import networkx as nx
    >>> g = from_networkx(nx.DiGraph([(2, 1), (1, 2), (1, 3)]))
    >>> g.n_nodes, g.n_edges, g.report.reverse_duplicates_dropped, g.report.source_directed
    (3, 2, 1, True)
    """
    import networkx as nx

    if not isinstance(graph, nx.Graph):
        raise TypeError(f"graph must be a networkx graph, got {type(graph).__name__}")
    labels = list(graph.nodes)
    try:
        labels = sorted(labels)
    except TypeError:
        pass  # incomparable labels: keep insertion order
    index = {label: i for i, label in enumerate(labels)}
    m = graph.number_of_edges()
    flat = np.fromiter(
        (index[x] for edge in graph.edges() for x in edge), dtype=np.int64, count=2 * m
    )
    node_ids = _label_array(labels)
    pairs = flat.reshape(m, 2)
    return _build_graph(
        pairs[:, 0],
        pairs[:, 1],
        len(labels),
        node_ids,
        source=f"networkx.{type(graph).__name__}",
        relabelled=not _is_range(node_ids),
        source_directed=bool(graph.is_directed()),
    )


def from_igraph(graph: Any) -> Graph:
    """Build a :class:`~ldpgraph.graph.Graph` from an igraph graph.

    Vertex ``i`` of the igraph graph becomes node ``i``; every vertex is kept, isolated
    ones included. Directed graphs are symmetrised, multi-edges counted as duplicates,
    self-loops dropped (see ``graph.report``).

    Parameters
    ----------
    graph : igraph.Graph

    Returns
    -------
    Graph
        ``node_ids`` holds the vertex attribute ``"name"`` when there is one (int64 when all
        names are integers, else an object array), else ``0..n-1``.

    Examples
    --------
    >>> import igraph as ig
    >>> g = from_igraph(ig.Graph(n=4, edges=[(0, 1), (1, 2), (2, 2)]))
    >>> g.degrees.tolist(), g.report.self_loops_dropped
    ([1, 2, 1, 0], 1)
    """
    import igraph as ig

    if not isinstance(graph, ig.Graph):
        raise TypeError(f"graph must be an igraph.Graph, got {type(graph).__name__}")
    n = graph.vcount()
    pairs = np.array(graph.get_edgelist(), dtype=np.int64).reshape(-1, 2)
    if "name" in graph.vs.attribute_names():
        node_ids = _label_array(graph.vs["name"])
    else:
        node_ids = np.arange(n, dtype=np.int64)
    return _build_graph(
        pairs[:, 0],
        pairs[:, 1],
        n,
        node_ids,
        source="igraph.Graph",
        relabelled=not _is_range(node_ids),
        source_directed=bool(graph.is_directed()),
    )


def _label_array(labels: list[Any]) -> NDArray[Any]:
    """int64 array of the labels when all are integers that fit, else an object array."""
    ints = all(
        isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)) for x in labels
    )
    if ints and all(-(2**63) <= int(x) < 2**63 for x in labels):
        return np.array([int(x) for x in labels], dtype=np.int64)
    out = np.empty(len(labels), dtype=object)
    out[:] = labels
    return out


def _is_range(node_ids: NDArray[Any]) -> bool:
    return node_ids.dtype == np.int64 and np.array_equal(
        node_ids, np.arange(node_ids.size, dtype=np.int64)
    )
